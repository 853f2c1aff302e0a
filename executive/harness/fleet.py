"""The fleet plane on loopback, for tests, the fleet demo and the bench (issue 24).

A router (``atom-executive router`` as its own process, listening on a free port of
127.0.0.1), client configs pointed at it (copies of the shipped loopback client config,
scouting off as shipped), the ``fleet:`` mapping a robot's service config takes, and a
``FleetClient`` of the operator's. Nothing leaves 127.0.0.1.

A ``Site`` (``secure_site``) is the same over TLS with mutual authentication and access
control: the layout ``atom-executive fleet-site`` makes (executive/service/fleet_site.py)
in a work directory, certificates made there, the router and every client on
tls/127.0.0.1.
"""

from __future__ import annotations

import re
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from executive.harness.stack import ROOT, Stack, running_stack
from executive.operator.fleet import LOOPBACK_CLIENT, FleetClient
from executive.robots.grx.sim.process import free_port
from executive.service.fleet_site import Layout, make_site, parse_roster
from executive.wire.zenoh_session import load_config

__all__ = [
    "KINDS",
    "Site",
    "client_config_file",
    "fleet_client",
    "fleet_mapping",
    "free_port",
    "secure_site",
    "start_router",
    "three_robots",
]

KINDS = {"atom-1": "atom", "adam-1": "adam", "grx-1": "grx"}  # three_robots' ids and kinds


def client_config_file(path: Path, port: int) -> Path:
    """A copy of the shipped loopback client config at ``path``, connecting to the router
    on 127.0.0.1:``port``."""
    text = LOOPBACK_CLIENT.read_text(encoding="utf-8")
    text, n = re.subn(r'"tcp/127\.0\.0\.1:\d+"', f'"tcp/127.0.0.1:{port}"', text)
    if n != 1:
        raise ValueError(f"{LOOPBACK_CLIENT}: expected one connect endpoint")
    path.write_text(text, encoding="utf-8")
    return path


@dataclass
class Site:
    """A secure site on loopback: its layout (certificates, configs), roster and port."""

    layout: Layout
    roster: Path
    port: int

    def config(self, role: str, name: str) -> Path:
        """The zenoh client config of ``role`` ``name`` (robot, operator, monitor)."""
        return self.layout.client(role, name)


def secure_site(
    directory: Path,
    port: int,
    robots: tuple[str, ...] = tuple(KINDS),
    *,
    name: str = "site",
    operators: tuple[str, ...] = ("operator",),
    monitors: tuple[str, ...] = ("monitor",),
    routers: tuple[str, ...] = (),
    connect: tuple[int, ...] = (),
) -> Site:
    """The layout of ``atom-executive fleet-site`` in ``directory`` (its CA kept if
    there: two sites made in one directory share it), the router on tls/127.0.0.1:PORT
    (connecting to the routers on ``connect`` ports)."""
    raw = {
        "site": name,
        "robots": list(robots),
        "operators": list(operators),
        "monitors": list(monitors),
        "routers": list(routers),
    }
    directory.mkdir(parents=True, exist_ok=True)
    roster = directory / f"roster.{name}.yaml"
    roster.write_text(yaml.safe_dump(raw), encoding="utf-8")
    layout = make_site(
        parse_roster(raw, str(roster)),
        directory,
        port=port,
        connect=[f"tls/127.0.0.1:{p}" for p in connect],
    )
    return Site(layout, roster, port)


def fleet_mapping(
    stack: Stack, robot_id: str, port: int, prefix: str = "fleet", *, site: Site | None = None
) -> dict[str, Any]:
    """The ``fleet`` config of a robot's service on ``stack``: its id, a client config in
    the stack's work directory connecting to the router on ``port`` (``site``: the
    robot's own TLS config of that site)."""
    if site is not None:
        config = site.config("robot", robot_id)
    else:
        config = client_config_file(stack.workdir / "zenoh-fleet.json5", port)
    return {"robot_id": robot_id, "zenoh_config": str(config), "prefix": prefix}


def start_router(
    stack: Stack,
    port: int,
    name: str = "router",
    *,
    connect: int | None = None,
    site: Site | None = None,
    roster: Path | None = None,
) -> subprocess.Popen[bytes]:
    """``atom-executive router --listen tcp/127.0.0.1:PORT`` as a process of ``stack``
    (with ``connect``: connecting to the router on that port too, as one site's router
    connects to another's; ``site``: the site's TLS router config and its roster
    instead); waits for its "up" line (its log: ``<workdir>/<name>.log``)."""
    log = stack.log_path(name)
    start = log.stat().st_size if log.exists() else 0
    if site is not None:
        args: tuple[str, ...] = ("--zenoh-config", str(site.layout.router))
        roster = roster or site.roster
    else:
        args = ("--listen", f"tcp/127.0.0.1:{port}")
        if connect is not None:
            args += ("--connect", f"tcp/127.0.0.1:{connect}")
    if roster is not None:
        args += ("--roster", str(roster))
    proc = stack.spawn(name, "router", *args)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if log.exists() and " up; " in log.read_text(errors="replace")[start:]:
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    raise TimeoutError(f"the router did not come up; see {log}")


def fleet_client(
    workdir: Path,
    port: int,
    *,
    key: bytes | None = None,
    client_id: str = "operator",
    site: Site | None = None,
    role: tuple[str, str] = ("operator", "operator"),
    **kwargs: Any,
) -> FleetClient:
    """An operator's fleet client connected to the router on ``port`` (``site``: with
    the certificate of ``role`` (role, name) of that site)."""
    if site is not None:
        config = site.config(*role)
    else:
        config = client_config_file(workdir / f"zenoh-fleet-client-{port}.json5", port)
    return FleetClient(load_config(config), key=key, client_id=client_id, **kwargs)


def three_robots(
    scope: ExitStack,
    work: Path,
    port: int,
    key: bytes,
    *,
    safety: dict[str, Any] | None = None,
    site: Site | None = None,
) -> dict[str, Stack]:
    """The simulated Atom, Adam and GRX, each with its executive on its own leased domain
    (``KINDS``: atom-1, adam-1, grx-1), each on the fleet plane through the router on
    ``port``, each with ``key`` as its operator's; all end with ``scope``. ``safety``: the
    services' ``safety`` config (a test on a loaded machine relaxes the silence limit);
    ``site``: on that secure site, each robot with its own certificate."""
    from executive.harness.grx import start as start_grx
    from executive.robots.adam.sim.client import client_for

    extra: dict[str, Any] = {} if safety is None else {"safety": safety}
    stacks = {r: scope.enter_context(running_stack(work / r)) for r in KINDS}
    for stack in stacks.values():
        stack.key = key
    atom, adam, grx = stacks["atom-1"], stacks["adam-1"], stacks["grx-1"]
    atom.write_config(fleet=fleet_mapping(atom, "atom-1", port, site=site), **extra)
    atom.start_sim("--physics", "kinematic", "--amr-speed", "0.5", "--seed", "3")
    atom.start_service()
    adam.write_config(
        profile="adam-pro",
        interface="sdk-1.2",
        missions_dir=str(ROOT / "missions" / "adam"),
        fleet=fleet_mapping(adam, "adam-1", port, site=site),
        **extra,
    )
    adam.start_sim(
        *("--profile", "adam-pro", "--interface", "sdk-1.2", "--seed", "2"),
        sim_ready=lambda st, pid: client_for(st.dds).wait_status(lambda s: s.pid == pid, 30)
        is not None,
    )
    adam.start_service()
    sim = start_grx(
        grx, task_seconds=0.2, fleet=fleet_mapping(grx, "grx-1", port, site=site), **extra
    )
    scope.callback(sim.close)
    return stacks
