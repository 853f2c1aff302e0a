"""The fleet plane on loopback, for tests, the fleet demo and the bench (issue 24).

A router (``atom-executive router`` as its own process, listening on a free port of
127.0.0.1), client configs pointed at it (copies of the shipped loopback client config,
scouting off as shipped), the ``fleet:`` mapping a robot's service config takes, and a
``FleetClient`` of the operator's. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any

from executive.harness.stack import Stack
from executive.operator.fleet import LOOPBACK_CLIENT, FleetClient
from executive.robots.grx.session import load_config
from executive.robots.grx.sim.process import free_port

__all__ = ["client_config_file", "fleet_client", "fleet_mapping", "free_port", "start_router"]


def client_config_file(path: Path, port: int) -> Path:
    """A copy of the shipped loopback client config at ``path``, connecting to the router
    on 127.0.0.1:``port``."""
    text = LOOPBACK_CLIENT.read_text(encoding="utf-8")
    text, n = re.subn(r'"tcp/127\.0\.0\.1:\d+"', f'"tcp/127.0.0.1:{port}"', text)
    if n != 1:
        raise ValueError(f"{LOOPBACK_CLIENT}: expected one connect endpoint")
    path.write_text(text, encoding="utf-8")
    return path


def fleet_mapping(stack: Stack, robot_id: str, port: int, prefix: str = "fleet") -> dict[str, Any]:
    """The ``fleet`` config of a robot's service on ``stack``: its id, a client config in
    the stack's work directory connecting to the router on ``port``."""
    config = client_config_file(stack.workdir / "zenoh-fleet.json5", port)
    return {"robot_id": robot_id, "zenoh_config": str(config), "prefix": prefix}


def start_router(stack: Stack, port: int, name: str = "router") -> subprocess.Popen[bytes]:
    """``atom-executive router --listen tcp/127.0.0.1:PORT`` as a process of ``stack``;
    waits for its "up" line (its log: ``<workdir>/<name>.log``)."""
    log = stack.log_path(name)
    start = log.stat().st_size if log.exists() else 0
    proc = stack.spawn(name, "router", "--listen", f"tcp/127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log.exists() and " up; " in log.read_text(errors="replace")[start:]:
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise TimeoutError(f"the router did not come up; see {log}")


def fleet_client(
    workdir: Path, port: int, *, key: bytes | None = None, client_id: str = "operator"
) -> FleetClient:
    """An operator's fleet client connected to the router on ``port``."""
    config = client_config_file(workdir / f"zenoh-fleet-client-{port}.json5", port)
    return FleetClient(load_config(config), key=key, client_id=client_id)
