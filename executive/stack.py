"""The simulated Atom and the service as separate processes on a leased loopback domain.

What the demo, the fault matrix, the soak and the benchmarks all need: a DDS domain no
other run uses, a work directory with a key file and a config, ``atom-executive sim``
and ``atom-executive run`` started as their own processes (logs in the work directory),
and clients of both on one participant. ``close()`` ends every process it started,
whatever happened, and releases the domain.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cyclonedds.domain import DomainParticipant

from executive import dds
from executive.auth import write_key_file
from executive.client import ExecutiveClient
from executive.sim.client import SimClient

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK_URI = (ROOT / "executive" / "resources" / "cyclonedds-loopback.xml").as_uri()


@dataclass
class Stack:
    """A work directory, a leased domain, the processes started in it and their clients."""

    workdir: Path
    domain: int
    key: bytes = field(default_factory=lambda: os.urandom(32))
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    participant: DomainParticipant | None = None
    _client: ExecutiveClient | None = None
    _sim: SimClient | None = None

    @property
    def config_path(self) -> Path:
        return self.workdir / "config.yaml"

    @property
    def data_dir(self) -> Path:
        return self.workdir / "data"

    def env(self) -> dict[str, str]:
        """The environment every process of the stack runs with: its domain, loopback DDS."""
        return {
            **os.environ,
            dds.DOMAIN_ENV: str(self.domain),
            "CYCLONEDDS_URI": os.environ.get("CYCLONEDDS_URI", LOOPBACK_URI),
        }

    def write_config(self, **overrides: Any) -> Path:
        """The service config: signed commands, this stack's data dir, shipped missions."""
        write_key_file(self.workdir / "keys.yaml", {"operator": self.key})
        config: dict[str, Any] = {
            "keys_file": str(self.workdir / "keys.yaml"),
            "data_dir": str(self.data_dir),
            "missions_dir": str(ROOT / "missions"),
            **overrides,
        }
        self.config_path.write_text(yaml.safe_dump(config))
        return self.config_path

    def spawn(
        self, name: str, *args: str, env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """Start ``atom-executive ARGS`` as its own process, output to ``<name>.log``."""
        self.stop(name)
        with (self.workdir / f"{name}.log").open("ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "executive.cli", *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**self.env(), **(env or {})},
            )
        self.procs[name] = proc
        return proc

    def start_sim(self, *args: str) -> subprocess.Popen[bytes]:
        proc = self.spawn("sim", "sim", *args)
        self.sim.wait_ready(30)
        return proc

    def start_service(
        self, *args: str, env: Mapping[str, str] | None = None, wait: bool = True
    ) -> subprocess.Popen[bytes]:
        """Start the service on this stack's config; wait until its own status is seen."""
        if not self.config_path.exists():
            self.write_config()
        proc = self.spawn("executive", "run", "--config", str(self.config_path), *args, env=env)
        if wait:
            status = self.client.wait_status(lambda s: s.executive_id.endswith(f":{proc.pid}"), 30)
            if status is None:
                raise TimeoutError(f"the service did not come up; see {self.workdir}/executive.log")
        return proc

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int | None:
        """Stop one process (SIGTERM, then SIGKILL after ``timeout``); its exit code."""
        proc = self.procs.pop(name, None)
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)
        return proc.returncode

    @property
    def dds(self) -> DomainParticipant:
        if self.participant is None:
            self.participant = dds.make_participant(self.domain)
        return self.participant

    @property
    def client(self) -> ExecutiveClient:
        """A signed operator client of the service."""
        if self._client is None:
            self._client = ExecutiveClient(self.dds, key=self.key)
        return self._client

    @property
    def sim(self) -> SimClient:
        if self._sim is None:
            self._sim = SimClient(self.dds, timeout=15)
        return self._sim

    def close(self) -> None:
        for name in list(self.procs):
            self.stop(name)
        if self.participant is not None:
            dds.close_participant(self.participant)
            self.participant = None
            self._client = self._sim = None


@contextmanager
def running_stack(workdir: Path | None = None, *, keep: bool = False) -> Iterator[Stack]:
    """A ``Stack`` on a freshly leased domain; its processes end when the block does.

    With ``workdir`` None a temporary directory is used and removed afterwards unless
    ``keep`` (logs and run records are worth a look after a failure).
    """
    lease = dds.lease_domain()
    tmp = None
    if workdir is None:
        tmp = Path(tempfile.mkdtemp(prefix="atom-stack-"))
    work = workdir or tmp
    assert work is not None
    work.mkdir(parents=True, exist_ok=True)
    stack = Stack(work, lease.domain)
    try:
        yield stack
    finally:
        stack.close()
        lease.release()
        if tmp is not None and not keep:
            shutil.rmtree(tmp, ignore_errors=True)
