"""The simulated Fourier GRX and its executive as processes, for the demo, the integration tests
and the bench: start (the sim on a free loopback port, the service's zenoh config pointed
at it), zenoh_config_file and Watcher (a plain zenoh + msgpack peer on the client
keys). The sim process itself is executive.robots.grx.sim.process.SimProcess.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]  # no stubs; pyproject pins it
import zenoh

from executive.harness.stack import ROOT, Stack
from executive.robots.grx.sim.process import SimProcess, free_port
from executive.wire.zenoh_session import LOOPBACK_CONFIG

MISSIONS = ROOT / "missions" / "grx"


def zenoh_config_file(path: Path, connect: int, listen: int | None = None) -> Path:
    """A copy of the shipped loopback config at ``path``: connecting to 127.0.0.1:``connect``
    and listening on ``listen`` (a free port if None), scouting off as shipped."""
    text = LOOPBACK_CONFIG.read_text(encoding="utf-8")
    ports = iter((listen if listen is not None else free_port(), connect))

    def endpoint(m: re.Match[str]) -> str:
        return f'{m.group(1)}"tcp/127.0.0.1:{next(ports)}"'

    text, n = re.subn(r'(endpoints:\s*\[)"tcp/127\.0\.0\.1:\d+"', endpoint, text)
    if n != 2:
        raise ValueError(f"{LOOPBACK_CONFIG}: expected a listen and a connect endpoint")
    path.write_text(text, encoding="utf-8")
    return path


class Watcher:
    """A plain zenoh peer keeping every map put on the GRX's client keys, decoded by msgpack
    alone: no project code between the wire and what it saw (the key expression written
    out, no schema, no adapter), so tests and the bench judge the service from outside.

    Connects to 127.0.0.1:``port``, a service's listening port (``start()`` sets
    ``sim.service_port``): zenoh peers do not route for each other with gossip off. A
    payload that is not a map with string keys goes to ``malformed``, not ``seen``.
    """

    KEYS = "fourier-grx/dynalink_interface/*/client"

    def __init__(self, port: int) -> None:
        config = zenoh.Config()
        config.insert_json5("mode", '"peer"')
        config.insert_json5("listen/endpoints", "[]")
        config.insert_json5("connect/endpoints", f'["tcp/127.0.0.1:{port}"]')
        config.insert_json5("scouting/multicast/enabled", "false")
        config.insert_json5("scouting/gossip/enabled", "false")
        self.lock = threading.Lock()
        self.seen: list[tuple[float, str, dict[str, Any]]] = []  # (monotonic, category, map)
        self.malformed: list[tuple[float, str, str]] = []  # (monotonic, category, why)
        self.session = zenoh.open(config)
        self.sub = self.session.declare_subscriber(self.KEYS, self._on)

    def _on(self, sample: zenoh.Sample) -> None:
        t = time.monotonic()
        category = str(sample.key_expr).split("/")[-2]
        try:
            fields = msgpack.unpackb(sample.payload.to_bytes(), raw=False)
        except Exception as e:  # noqa: BLE001 - whatever msgpack raises, the map is malformed
            with self.lock:
                self.malformed.append((t, category, f"{type(e).__name__}: {e}"))
            return
        with self.lock:
            if isinstance(fields, dict) and all(isinstance(k, str) for k in fields):
                self.seen.append((t, category, fields))
            else:
                self.malformed.append((t, category, repr(fields)[:200]))

    def since(self, t: float, category: str) -> list[tuple[float, dict[str, Any]]]:
        """(arrival, map) on ``category``'s client key from monotonic time ``t`` on."""
        with self.lock:
            return [(at, f) for at, c, f in self.seen if at >= t and c == category]

    def maps(self, t: float, category: str) -> list[dict[str, Any]]:
        """The maps of ``since``, without their arrival times."""
        return [f for _, f in self.since(t, category)]

    def close(self) -> None:
        self.session.close()  # type: ignore[no-untyped-call]


def start(
    stack: Stack, task_seconds: float = 0.3, interface: str | None = None, **more: Any
) -> SimProcess:
    """The sim, then the service on ``stack`` (profile grx, missions/grx), ready; both speak
    the User API schema ``interface`` (None: the profile's). zenoh peers do not route for
    each other with gossip off: a third peer that wants the service's puts (``Watcher``)
    connects to ``sim.service_port``. ``more``: more service config keys (the fleet
    demo's ``fleet``)."""
    args = ["--task-seconds", str(task_seconds)]
    if interface is not None:
        args += ["--interface", interface]
    sim = SimProcess(free_port(), *args, log=stack.log_path("sim"))
    try:
        sim.service_port = free_port()
        name = "zenoh.json5" if interface is None else f"zenoh-{interface}.json5"
        config = zenoh_config_file(stack.workdir / name, connect=sim.port, listen=sim.service_port)
        extra = dict(more) if interface is None else {"interface": interface, **more}
        stack.write_config(
            profile="grx", zenoh_config=str(config), missions_dir=str(MISSIONS), **extra
        )
        stack.start_service(ready=True)
    except BaseException:
        sim.close()
        raise
    return sim
