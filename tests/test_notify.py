"""sd_notify glue against a real AF_UNIX datagram socket, as systemd provides it."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.service import notify


@pytest.fixture
def notify_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(5.0)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield sock
    sock.close()


def test_ready_status_watchdog_stopping(notify_socket: socket.socket) -> None:
    assert notify.ready("idle; 6 missions")
    assert notify_socket.recv(4096).decode() == "READY=1\nSTATUS=idle; 6 missions"
    assert notify.watchdog()
    assert notify_socket.recv(4096) == b"WATCHDOG=1"
    assert notify.status("RUNNING delivery")
    assert notify_socket.recv(4096) == b"STATUS=RUNNING delivery"
    assert notify.stopping()
    assert notify_socket.recv(4096) == b"STOPPING=1\nSTATUS=stopping"


def test_outside_systemd_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert not notify.ready("x") and not notify.watchdog()


def test_watchdog_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "4000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert notify.watchdog_interval() == 2.0
    monkeypatch.setenv("WATCHDOG_PID", "1")
    assert notify.watchdog_interval() is None
    monkeypatch.delenv("WATCHDOG_USEC")
    assert notify.watchdog_interval() is None
