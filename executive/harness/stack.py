"""The simulated Atom and the service as separate processes on a leased loopback domain.

What the demo, the fault matrix, the soak and the benchmarks all need: a DDS domain no
other run uses, a work directory with a key file and a config, ``atom-executive sim``
and ``atom-executive run`` started as their own processes (logs in the work directory),
and clients of both on one participant. ``close()`` ends every process it started,
whatever happened, and releases the domain.

Also what a run observes from outside: the sim's command record (``record_path``), the
processes' JSON-lines logs (``LogTail``), their memory (``rss_kib``), the time a loaded
machine kept them from a CPU (``cpu_wait_s``, ``service_time``), and systemd's side
of ``sd_notify`` (``NotifySocket``: READY, WATCHDOG and STATUS as the service sends them,
on a real datagram socket, so a test can see the watchdog pings stop).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from cyclonedds.domain import DomainParticipant

from executive.cli import PARENT_ENV
from executive.clock import wall_to_monotonic
from executive.robots.atom.sim.client import SimClient
from executive.service.auth import write_key_file
from executive.service.client import ExecutiveClient
from executive.wire import dds

ROOT = Path(__file__).resolve().parents[2]
UP_S = 30.0  # seconds a process has to come up
LOOPBACK_URI = (ROOT / "executive" / "resources" / "cyclonedds-loopback.xml").as_uri()


def alive(pid: int) -> bool:
    """Whether process ``pid`` is alive: it exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def log_time(event: Mapping[str, Any]) -> float | None:
    """When a JSON log line was written, on ``time.monotonic()``'s clock (None if unstamped).

    The service stamps ``ts``, the sim ``timestamp``: ISO 8601 in UTC, microseconds."""
    text = event.get("ts") or event.get("timestamp")
    if not isinstance(text, str):
        return None
    try:
        return wall_to_monotonic(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


class LogTail:
    """The JSON lines a process has added to its log since the last ``read`` (other lines,
    such as a traceback, are kept as ``{"text": ...}``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def skip(self) -> None:
        """Start from the end: only lines written from now on will be read."""
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        with self.path.open("rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # an unfinished last line waits for the next read
        self.offset += end
        events: list[dict[str, Any]] = []
        for raw in data[:end].decode("utf-8", errors="replace").splitlines():
            try:
                event = json.loads(raw)
            except json.JSONDecodeError:
                event = None
            events.append(event if isinstance(event, dict) else {"text": raw})
        return events


class NotifySocket:
    """systemd's end of ``sd_notify``: a datagram socket whose messages are kept with the
    ``time.monotonic()`` they arrived at. ``env()`` is what to start the service with."""

    def __init__(self, path: Path, *, watchdog_s: float | None = None) -> None:
        self.path = path
        self.watchdog_s = watchdog_s
        path.unlink(missing_ok=True)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sock.bind(str(path))
        self._sock.settimeout(0.2)
        self._cond = threading.Condition()
        self.messages: list[tuple[float, str]] = []
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="notify-socket", daemon=True)
        self._thread.start()

    def env(self) -> dict[str, str]:
        env = {"NOTIFY_SOCKET": str(self.path)}
        if self.watchdog_s is not None:
            env["WATCHDOG_USEC"] = str(round(self.watchdog_s * 1e6))
        return env

    def _run(self) -> None:
        while not self._closed:
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            now = time.monotonic()
            with self._cond:
                self.messages.extend((now, line) for line in data.decode().splitlines())
                self._cond.notify_all()

    def since(self, t: float, prefix: str = "") -> list[tuple[float, str]]:
        """Messages (lines) that arrived after ``t`` and start with ``prefix``."""
        with self._cond:
            return [(at, m) for at, m in self.messages if at > t and m.startswith(prefix)]

    def wait_for(self, prefix: str, *, after: float = 0.0, timeout: float = 10.0) -> float | None:
        """Arrival time of the first line starting with ``prefix`` after ``after``, or None."""

        def found() -> float | None:
            return next(
                (at for at, m in self.messages if at > after and m.startswith(prefix)), None
            )

        with self._cond:
            self._cond.wait_for(lambda: found() is not None, timeout)
            return found()

    def close(self) -> None:
        self._closed = True
        self._thread.join(1.0)
        self._sock.close()
        self.path.unlink(missing_ok=True)


def rss_kib(pid: int) -> int:
    """Resident memory of a process, KiB (``VmRSS`` in /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ProcessLookupError(f"no VmRSS for pid {pid}")


def cpu_wait_s(pid: int) -> float | None:
    """Seconds the process's main thread has spent runnable but waiting for a CPU since it
    started (the scheduler's run-queue delay: the second field of /proc/PID/schedstat): the
    time a loaded machine took from it. None where the kernel does not report it."""
    try:
        fields = Path(f"/proc/{pid}/schedstat").read_text().split()
        return int(fields[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def service_time(spawned: float, started: float, at: float, cpu_wait: float | None) -> float:
    """Of the time from a process's first line of our code (``started``: ``executive.STARTED``)
    to ``at``, the part the process itself took: less the time its main thread waited for a
    CPU (``cpu_wait_s`` read at ``at``; the main thread runs the whole start-up, where a
    loaded machine costs most). Of that wait, as much as may have come before the first line
    (``started - spawned``, the whole time from the spawn) is not taken off: a wait before
    it never shortens the answer."""
    wall = at - started
    if cpu_wait is None:
        return wall
    return wall - max(0.0, cpu_wait - max(0.0, started - spawned))


@dataclass
class Stack:
    """A work directory, a leased domain, the processes started in it and their clients."""

    workdir: Path
    domain: int
    key: bytes = field(default_factory=lambda: os.urandom(32))
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    participant: DomainParticipant | None = None
    notify: NotifySocket | None = None
    _client: ExecutiveClient | None = None
    _sim: SimClient | None = None

    @property
    def config_path(self) -> Path:
        return self.workdir / "config.yaml"

    @property
    def data_dir(self) -> Path:
        return self.workdir / "data"

    @property
    def record_path(self) -> Path:
        """Where ``start_sim(record=True)`` has the sim record every command it receives."""
        return self.workdir / "sim-record.jsonl"

    def log_path(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def pid(self, name: str) -> int | None:
        """The pid of a process of the stack while it runs, else None."""
        proc = self.procs.get(name)
        return proc.pid if proc is not None and proc.poll() is None else None

    def rss_kib(self, name: str) -> int:
        pid = self.pid(name)
        if pid is None:
            raise ProcessLookupError(f"{name} is not running")
        return rss_kib(pid)

    def notify_socket(self, watchdog_s: float | None = None) -> NotifySocket:
        """A notify socket in the work directory (one per stack); pass ``.env()`` to
        ``start_service`` to run the service as systemd would with ``WatchdogSec``."""
        if self.notify is None:
            self.notify = NotifySocket(self.workdir / "notify.sock", watchdog_s=watchdog_s)
        return self.notify

    def env(self) -> dict[str, str]:
        """The environment every process of the stack runs with: its domain, loopback DDS."""
        return {
            **os.environ,
            dds.DOMAIN_ENV: str(self.domain),
            "CYCLONEDDS_URI": os.environ.get("CYCLONEDDS_URI", LOOPBACK_URI),
            # the processes die with this one (executive.cli): a crashed test run must not
            # leave a sim and a service loading the machine (a segfaulting run left nine)
            PARENT_ENV: str(os.getpid()),
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
        with self.log_path(name).open("ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "executive.cli", *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**self.env(), **(env or {})},
            )
        self.procs[name] = proc
        return proc

    def start_sim(
        self,
        *args: str,
        record: bool = False,
        sim_ready: Callable[[Stack, int], bool] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start the sim (with ``record``: recording to ``record_path``); wait for its
        status from this process (a status left over from a previous sim does not count).
        The simulated Atom runs its default physics, its body in MuJoCo (PD at the
        commanded gains under gravity, contacts as sim events); ``"--physics",
        "kinematic"`` in ``args`` gives the first-order lag.

        ``sim_ready(stack, pid)``: how to see that status when the sim is another robot's
        (``sim --profile adam-pro``: the simulated Adam's own status topic); it returns
        whether that sim's status arrived. None: the simulated Atom's ``SimClient``."""
        if record:
            args = (*args, "--record", str(self.record_path))
        proc = self.spawn("sim", "sim", *args)
        if sim_ready is not None:
            if not sim_ready(self, proc.pid):  # (the hook gives up when the process exits)
                self._not_up("sim", proc)
            return proc
        self._wait_up("sim", proc, lambda t: self.sim.wait_status(lambda s: s.pid == proc.pid, t))
        return proc

    def _wait_up(
        self, name: str, proc: subprocess.Popen[bytes], seen: Callable[[float], Any]
    ) -> Any:
        """What ``seen(timeout)`` saw (not None) within ``UP_S``, asked in short slices so
        that a process that exits meanwhile is said at once (``_not_up``)."""
        deadline = time.monotonic() + UP_S
        while (got := seen(min(0.5, max(0.0, deadline - time.monotonic())))) is None:
            if proc.poll() is not None or time.monotonic() >= deadline:
                self._not_up(name, proc)
        return got

    def _not_up(self, name: str, proc: subprocess.Popen[bytes]) -> None:
        """Raise why process ``name`` did not come up: ChildProcessError if it exited (its
        code and its log's last line), TimeoutError if it runs but was not seen."""
        log = self.log_path(name)
        lines = log.read_text(errors="replace").splitlines() if log.is_file() else []
        last = next((ln.strip()[:300] for ln in reversed(lines) if ln.strip()), "nothing")
        what = "the service" if name == "executive" else f"the {name}"
        if proc.poll() is not None:
            raise ChildProcessError(
                f"{what} exited ({proc.returncode}) before it came up; its log's last line: "
                f"{last}; see {log}"
            )
        raise TimeoutError(f"{what} did not come up within {UP_S:g} s; see {log}")

    def start_service(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        wait: bool = True,
        ready: bool | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start the service on this stack's config; wait until its own status is seen and,
        with ``ready`` (default: when the sim runs), until it has heard every safety source:
        it refuses missions before that."""
        if not self.config_path.exists():
            self.write_config()
        proc = self.spawn("executive", "run", "--config", str(self.config_path), *args, env=env)
        if wait:
            own = f":{proc.pid}"
            status = self._wait_up(
                "executive",
                proc,
                lambda t: self.client.wait_status(lambda s: s.executive_id.endswith(own), t),
            )
            sim = self.procs.get("sim")
            if ready or (ready is None and sim is not None and sim.poll() is None):
                heard = self.client.wait_status(
                    lambda s: s.executive_id.endswith(own) and not s.not_ready, 30
                )
                if heard is None:
                    raise TimeoutError(f"the service never heard the robot: {status.not_ready}")
        return proc

    def wait_for(self, predicate: Callable[[], bool], timeout: float, every: float = 0.02) -> bool:
        """Poll ``predicate`` until it holds (True) or ``timeout`` s have passed (False)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                return False
            time.sleep(every)
        return True

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
            # our own participant stays on loopback like the processes' (see env())
            os.environ.setdefault("CYCLONEDDS_URI", LOOPBACK_URI)
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
        if self.notify is not None:
            self.notify.close()
            self.notify = None
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
