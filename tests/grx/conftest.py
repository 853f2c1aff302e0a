"""GRX test fixtures: every test gets its own loopback ports; the simulated GRX as a process.

zenoh here is peer to peer on tcp/127.0.0.1 with multicast and gossip scouting off (the
shipped executive/resources/zenoh-loopback.json5), its endpoints moved to ports this test
alone holds, so runs never meet and nothing leaves loopback.
"""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from executive.robots import grx
from executive.robots.profile import load_profile

PROFILE = load_profile("grx")


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def endpoint(port: int) -> str:
    return f"tcp/127.0.0.1:{port}"


def connect_to(port: int) -> dict[str, str]:
    """Overrides for a peer that listens nowhere and connects to ``port``."""
    return {"listen/endpoints": "[]", "connect/endpoints": json.dumps([endpoint(port)])}


def wait_for(check: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class SimProcess:
    """``python -m executive.robots.grx.sim`` listening on ``port``; commands on its stdin."""

    def __init__(self, port: int, *args: str) -> None:
        self.port = port
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "executive.robots.grx.sim",
                "--profile",
                "grx",
                "--cfg",
                f'listen/endpoints:["{endpoint(port)}"]',
                "--cfg",
                "connect/endpoints:[]",
                *args,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()
        ready = self.lines.get(timeout=10)
        assert ready.get("ready"), ready

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            msg = json.loads(line)
            if "event" in msg:
                self.events.append(msg)
            else:
                self.lines.put(msg)

    def cmd(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.lines.get(timeout=5)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.cmd("quit")
                self.proc.wait(timeout=5)
            except (OSError, queue.Empty, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def sim(port: int) -> Iterator[SimProcess]:
    s = SimProcess(port, "--task-seconds", "0.2")
    yield s
    s.close()


@pytest.fixture
def open_adapter() -> Iterator[Callable[..., grx.GrxAdapter]]:
    """Open GRX adapters connected to a port; each closed at the end of the test."""
    opened: list[grx.GrxAdapter] = []

    def make(port: int, **settings: Any) -> grx.GrxAdapter:
        adapter = grx.open(
            PROFILE,
            zenoh_overrides=connect_to(port),
            settings=replace(grx.settings_of(PROFILE), **settings),
        )
        opened.append(adapter)
        return adapter

    yield make
    for adapter in opened:
        adapter.close()
