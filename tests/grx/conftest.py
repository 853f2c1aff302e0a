"""GRX test fixtures: every test gets its own loopback ports; the simulated GRX as a process
(``executive.robots.grx.sim.process.SimProcess``, its stdout events kept in ``sim.events``).

zenoh here is peer to peer on tcp/127.0.0.1 with multicast and gossip scouting off (the
shipped executive/resources/zenoh-loopback.json5), its endpoints moved to ports this test
alone holds, so runs never meet and nothing leaves loopback.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
import zenoh

from executive.robots.grx import adapter as grx
from executive.robots.grx.settings import settings_of
from executive.robots.grx.sim.process import SimProcess, free_port
from executive.seam.profile import load_profile

__all__ = [
    "PROFILE",
    "SimProcess",
    "connect_to",
    "endpoint",
    "free_port",
    "plain_peer",
    "wait_for",
]

PROFILE = load_profile("grx")


def endpoint(port: int) -> str:
    return f"tcp/127.0.0.1:{port}"


def plain_peer(port: int) -> zenoh.Config:
    """A bare zenoh peer's config (no project code) that connects to ``port`` on loopback,
    listens nowhere, and scouts nothing."""
    config = zenoh.Config()
    config.insert_json5("mode", '"peer"')
    config.insert_json5("listen/endpoints", "[]")
    config.insert_json5("connect/endpoints", f'["{endpoint(port)}"]')
    config.insert_json5("scouting/multicast/enabled", "false")
    config.insert_json5("scouting/gossip/enabled", "false")
    return config


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


@pytest.fixture(autouse=True)
def _middleware_only_when_marked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make test-fast`` (``-m "not dds"``) opens no middleware and starts no process: a
    test here that opens a zenoh session or starts the sim fails unless it is marked
    ``dds`` (the audit of issue 13 found such tests unmarked, so test-fast ran them)."""
    if request.node.get_closest_marker("dds") is not None:
        return

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(
            f"{request.node.nodeid} opens a zenoh session or starts a process: mark it dds"
        )

    monkeypatch.setattr(zenoh, "open", refused)
    monkeypatch.setattr(subprocess, "Popen", refused)


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
            settings=replace(settings_of(PROFILE), **settings),
        )
        opened.append(adapter)
        return adapter

    yield make
    for adapter in opened:
        adapter.close()
