"""``make demo PROFILE=grx``: the executive walking the simulated Fourier GRX over zenoh.

Everything runs for real on loopback, as separate processes: the simulated GRX
(``python -m executive.robots.grx.sim``, a zenoh peer listening on a free port of
127.0.0.1) and the service (``atom-executive run``, ``profile: grx``, ``zenoh_config:`` a
copy of the shipped loopback config pointed at that port; its operator requests and status
on loopback DDS as always). The demo runs ``walk_square`` to SUCCEEDED, then walks again
and sets an error code in the sim mid-walk: the service must SAFE_STOP, the sim must be
sent zero axes and stand still, and a reset (once the error is cleared) must bring it back
to IDLE. Exit 0 only if every check held.

``start``, ``zenoh_config_file`` and ``Watcher`` (a plain zenoh + msgpack peer on the
client keys) are the harness the integration tests and the bench share; the sim process
itself is ``executive.robots.grx.sim.process.SimProcess``.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]  # no stubs; pyproject pins it
import zenoh

from executive.harness.stack import ROOT, Stack, running_stack
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


def say(text: str) -> None:
    print(f"\n=== {text}", flush=True)  # noqa: T201 - the demo talks to a person


def main(profile: str = "grx") -> int:
    checks: list[tuple[str, bool]] = []

    def check(what: str, ok: bool) -> bool:
        checks.append((what, ok))
        print(f"  [{'ok' if ok else 'FAILED'}] {what}", flush=True)  # noqa: T201
        return ok

    if profile != "grx":
        print(f"the GRX demo runs profile grx, not {profile!r}", file=sys.stderr)  # noqa: T201
        return 2
    with running_stack() as stack:
        say("starting the simulated GRX (zenoh, loopback) and the executive")
        sim = start(stack)
        try:
            run(stack, sim, check)
        finally:
            sim.close()
    failed = [what for what, ok in checks if not ok]
    say(f"{len(checks) - len(failed)} of {len(checks)} checks held")
    return 1 if failed or not checks else 0


def run(stack: Stack, sim: SimProcess, check: Callable[[str, bool], bool]) -> None:
    client = stack.client

    def start_mission(name: str, **params: Any) -> bool:
        reply = client.request("start", {"mission": name, "params": params})
        return check(f"{name} started", reply.code == 0)

    def wait_state(state: str, timeout: float) -> Any:
        return client.wait_status(lambda s: s.state == state, timeout)

    say("walk_square: servo_on, ready, walk; four legs and quarter turns; ready")
    if start_mission("walk_square", leg_seconds=1.0, turn_seconds=1.96):
        done = client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), 60)
        check("walk_square SUCCEEDED", done is not None and done.state == "SUCCEEDED")
        status = sim.cmd("status")
        x, y, heading = status["pose"]
        check(
            f"the sim accepted servo_on, ready, walk, ready: {status['accepted']}",
            status["accepted"] == [35, 960, 965, 960],
        )
        check(
            f"the sim walked a closed square (pose {x:.2f}, {y:.2f}, {heading:.2f})",
            abs(x) < 0.2 and abs(y) < 0.2 and heading > 6.0,
        )
        check("the sim stands with zero axes", status["axes"] == [[0.0, 0.0], [0.0, 0.0]])

    say("walking again; an error code in the sim mid-walk")
    if start_mission("walk_square", leg_seconds=20.0):
        walking = stack.wait_for(lambda: sim.cmd("status")["nonzero_axes_received"] > 0, 10)
        check("the sim receives non-zero axes", walking)
        sim.cmd("error 0x2310")
        stopped = wait_state("SAFE_STOP", 5)
        check("SAFE_STOP on the error code", stopped is not None)
        if stopped is not None:
            check(f"cause: {stopped.safety_reason}", "servo_error" in stopped.safety_reason)
        time.sleep(0.3)
        status = sim.cmd("status")
        pose = status["pose"]
        time.sleep(0.3)
        check(
            "the sim was sent zero axes and stands still",
            status["axes"] == [[0.0, 0.0], [0.0, 0.0]] and sim.cmd("status")["pose"] == pose,
        )
        sim.cmd("clear-error")
        deadline = time.monotonic() + 5
        reply = client.request("reset")
        while reply.code != 0 and time.monotonic() < deadline:
            time.sleep(0.2)
            reply = client.request("reset")
        check("reset accepted once the error cleared", reply.code == 0)
        check("IDLE after the reset", wait_state("IDLE", 5) is not None)


if __name__ == "__main__":
    sys.exit(main())
