"""The simulated GRX in simulated time: the GRX's part of ``executive.scenario``.

``PART`` (``RobotSpec.lockstep``) is what the scenario engine asks of the GRX
(``executive.seam.lockstep``): the simulator's own ``GrxSim`` and ``GrxModel`` on the
in-process zenoh (``executive.wire.zenoh_loop``), which the adapter opens its session on
too. What a process would run on a thread at a fixed rate, the simulator's 50 Hz
publisher and the adapter's joystick stream, runs as a job of one ``simkit`` scheduler on
the simulated clock, stepped by the engine in lockstep with the tick. So a scenario
exercises the GRX's adapter (its msgpack maps, its state, the task protocol, the
joystick's dead man and latch) and the simulator's model as the service does on zenoh.

A scenario's ``world:`` is the simulator's start-up (its options, ``_`` for ``-``); a
fault is one of the simulator's own fault commands (``model.HELP``: ``error 0x2310``,
``silence task``, ``heartbeat off``, ``refuse on``, ``estop on`` with the m4 schema...),
and ``clear:`` names the fault it clears as it was set. The GRX has no operator buttons.

What moves the robot (``motion_after``): non-zero axes on the virtual joystick (the base
walks), and non-zero axes it still holds (the GRX walks on the last axes it received
until told otherwise), and a component started (the natural arm swing). A task request
is a change of mode, judged by the nodes that ran: the safe stop itself sends the safe
task.

``--realtime`` meets the simulator process on zenoh (``real_wire``): the sim listens on a
free loopback port, the service connects to it (its ``zenoh_config``), and faults go to
the sim as zenoh queries on its command key, as ``atom-executive sim --profile grx fault``
sends them.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any, TextIO

import zenoh

from executive.clock import SimClock
from executive.robots.grx import interface as wire
from executive.robots.grx.settings import GrxSettings, settings_of
from executive.robots.grx.sim import COMMAND_KEY, GARBAGE, GrxSim
from executive.robots.grx.sim.body import MODES, SimBody
from executive.robots.grx.sim.model import CommandError, GrxModel
from executive.robots.grx.sim.process import free_port
from executive.robots.simkit.scheduler import Scheduler
from executive.seam.profile import RobotProfile, load_profile
from executive.wire.zenoh_loop import ZenohLoop
from executive.wire.zenoh_session import close_session, load_config, open_session

TASK_SECONDS = 0.5  # the simulator's default (--task-seconds)
READY_S = 30.0  # --realtime: seconds the simulator process has to answer
# the faults a scenario may set: the simulator's commands, less those that are not faults
NOT_FAULTS = ("status", "quit", "resume", "clear-error")
# clear: a fault that is a switch (its verb: how it was set, the command that undoes it)
SWITCHES = {
    "heartbeat": ("off", "heartbeat on"),
    "estop": ("on", "estop off"),
    "refuse": ("on", "refuse off"),
}

# world key -> (what it is, the sim's option)
WORLD: dict[str, tuple[str, str]] = {
    "interface": (
        f"the User API schema both ends speak ({' or '.join(wire.SCHEMAS)}; default: the "
        "profile's grx.schema)",
        "--interface",
    ),
    "task_seconds": (
        f"number > 0: how long a task is in process, s (default {TASK_SECONDS:g})",
        "--task-seconds",
    ),
    "physics": (
        "mujoco (the GR-1 T2's joints held under gravity, as the sim process does by default) "
        "or kinematic",
        "--physics",
    ),
}


def _settings(profile: RobotProfile, world: Mapping[str, Any]) -> GrxSettings:
    settings = settings_of(profile)
    if "interface" in world:
        settings = replace(settings, schema=str(world["interface"]))
    return settings


@cache
def _default_settings() -> GrxSettings:
    """The shipped profile's settings: a fault is checked before a scenario's profile is
    at hand (``check_fault`` takes the world alone)."""
    return settings_of(load_profile("grx"))


def undo(spec: str) -> str:
    """The simulator's command that clears the fault ``spec`` (as it was set); ValueError
    if there is nothing to clear."""
    words = spec.split()
    verb = words[0] if words else ""
    if verb == "error" and len(words) >= 2:
        return " ".join(["error", "0", *words[2:3]])
    if verb == "silence":
        return " ".join(["resume", *words[1:2]])
    if verb in SWITCHES and words[1:] == [SWITCHES[verb][0]]:
        return SWITCHES[verb][1]
    raise ValueError(f"{spec!r}: nothing to clear (clear takes a fault as it was set)")


class GrxLockstep:
    """``GrxSim`` on a ``ZenohLoop``: the ``LockstepRobot`` the engine steps."""

    def __init__(
        self, profile: RobotProfile, clock: SimClock, world: Mapping[str, Any], record: Path
    ) -> None:
        self.clock = clock
        self.scheduler = Scheduler(clock=clock)
        self.participant = ZenohLoop(clock, self.scheduler.add)
        settings = _settings(profile, world)
        self.interface = world.get("interface")
        model = GrxModel(
            wire.schema(settings.schema),
            {name: s.id for name, s in profile.fsm.items()},
            settings,
            task_seconds=float(world.get("task_seconds", TASK_SECONDS)),
            # the sim process's default: the joints stepped in MuJoCo
            body=SimBody(profile, str(world.get("physics", "mujoco"))) if profile.topics else None,
        )
        self._path = record
        self._record: TextIO = record.open("w", encoding="utf-8")
        session: Any = self.participant.open()  # what of zenoh.Session the sim uses
        self.sim = GrxSim(model, session, record=self._record, clock=clock)
        self.scheduler.add("grx-sim", 1.0 / self.sim.period, self._publish)

    def _publish(self, now: float, periods: int) -> None:
        """One period of ``GrxSim.run``: the model stepped, the four server maps put."""
        sim = self.sim
        with sim.lock:
            contacts = sim.model.step(sim.period)
            maps = sim.model.server_maps()
            garbage, sim.model.garbage = sim.model.garbage, set()
        body = sim.model.body
        for event in contacts:  # recorded as the sim process records them, on this clock
            info = {**event.as_dict(), "joint": body.culprit(event) if body else None}
            self._record.write(json.dumps({"t": now, "contact": info}) + "\n")
        for category, fields in maps.items():
            payload = GARBAGE if category in garbage else wire.encode(fields)
            sim.publishers[category].put(payload)

    def due(self) -> float:
        return self.scheduler.due()

    def run_due(self, now: float) -> None:
        self.scheduler.run_due(now)

    def _command(self, line: str) -> None:
        answer = self.sim.command(line)
        if not answer.get("ok", False):
            raise ValueError(str(answer.get("error", answer)))

    def fault(self, spec: str, now: float) -> None:
        self._command(spec)

    def clear(self, spec: str, now: float) -> None:
        self._command(undo(spec))

    def press(self, button: str, now: float) -> None:
        raise ValueError("the GRX has no operator buttons")

    def record(self) -> Path:
        if not self._record.closed:
            self._record.flush()
        return self._path

    def close(self) -> None:
        close_session(self.sim.session)
        self._record.close()


class _QueryClient:
    """``--realtime``: faults into the simulator process, as zenoh queries on its command
    key (what ``atom-executive sim --profile grx fault`` sends)."""

    def __init__(self, session: zenoh.Session) -> None:
        self.session = session

    def request(self, line: str, timeout: float = 2.0) -> dict[str, Any] | None:
        """The simulator's answer to ``line``; None if none came within ``timeout``."""
        for reply in self.session.get(COMMAND_KEY, payload=line.encode(), timeout=timeout):
            if reply.ok is not None:
                answer = json.loads(reply.ok.payload.to_bytes())
                return answer if isinstance(answer, dict) else {"ok": False, "error": answer}
        return None

    def _command(self, line: str) -> None:
        answer = self.request(line)
        if answer is None:
            raise RuntimeError(f"the simulated GRX did not answer {line!r}")
        if not answer.get("ok", False):
            raise ValueError(str(answer.get("error", answer)))

    def fault(self, spec: str) -> None:
        self._command(spec)

    def clear(self, spec: str) -> None:
        self._command(undo(spec))

    def press(self, button: str) -> None:
        raise ValueError("the GRX has no operator buttons")


class _ZenohWire:
    """``--realtime`` on zenoh: the simulator listens on a free loopback port, the service
    (its ``zenoh_config``, a file in ``workdir``) and the fault client connect to it."""

    def __init__(self, workdir: Path) -> None:
        sim = f'["tcp/127.0.0.1:{free_port()}"]'
        self.sim_args = ["--cfg", f"listen/endpoints:{sim}", "--cfg", "connect/endpoints:[]"]
        peer = {"listen/endpoints": "[]", "connect/endpoints": sim}  # the shipped one, moved
        path = workdir / "zenoh.json5"
        path.write_text(str(load_config(None, peer)), encoding="utf-8")  # JSON is JSON5
        self.service_config = {"zenoh_config": str(path)}
        self._session = open_session(load_config(None, peer))
        self._client = _QueryClient(self._session)

    def sim_ready(self, stack: Any, pid: int) -> bool:
        """Whether the simulator process answers its status query within ``READY_S`` (no
        as soon as it has exited)."""
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline and stack.pid("sim") == pid:
            if self._client.request("status", timeout=1.0) is not None:
                return True
            time.sleep(0.1)
        return False

    def fault_client(self) -> _QueryClient:
        return self._client

    def close(self) -> None:
        close_session(self._session)


class _Part:
    """The GRX's ``LockstepPart`` (``executive.seam.lockstep``)."""

    world_keys: Mapping[str, str] = {k: what for k, (what, _) in WORLD.items()}
    simulator = "the simulated GRX"
    buttons: tuple[str, ...] = ()

    def check_world(self, world: Mapping[str, Any], base: Path) -> list[tuple[str, str]]:
        problems = []
        for key, value in world.items():
            if key == "interface" and value not in wire.SCHEMAS:
                problems.append((key, f"must be one of {', '.join(wire.SCHEMAS)}"))
            elif key == "task_seconds" and not (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and value > 0
            ):
                problems.append((key, "must be a number > 0"))
            elif key == "physics" and value not in MODES:
                problems.append((key, f"must be one of {', '.join(MODES)}"))
        return problems

    def check_fault(self, spec: str, world: Mapping[str, Any]) -> str | None:
        """The simulator's own check: the command run on a model of the world's schema."""
        verb = spec.split()[0] if spec.split() else ""
        if verb in NOT_FAULTS:
            return (
                f"{spec!r} is not a fault of the simulated GRX (its faults: error, "
                "heartbeat, silence, garbage, estop, battery, refuse)"
            )
        settings = _default_settings()
        name = str(world.get("interface", settings.schema))
        if name not in wire.SCHEMAS:
            return None  # the world's own problem, said there
        model = GrxModel(wire.schema(name), {}, settings)
        try:
            model.command(spec)
        except CommandError as e:
            return str(e).splitlines()[0]
        return None

    def open(
        self,
        profile: RobotProfile,
        clock: SimClock,
        world: Mapping[str, Any],
        base: Path,
        record: Path,
    ) -> GrxLockstep:
        return GrxLockstep(profile, clock, world, record)

    def motion_after(self, record: Path, after: float, before: float = math.inf) -> list[str]:
        """What in ``record`` moves the robot in (``after``, ``before``], one line each,
        oldest first: non-zero axes it still held at ``after`` (it walks on them), each
        map of non-zero axes, each component's update flag."""
        out: list[str] = []
        held = {wire.AXIS_LEFT: [0.0, 0.0], wire.AXIS_RIGHT: [0.0, 0.0]}
        held_at = -math.inf  # when the axes held were put
        component: int | None = None
        judged = False  # the axes held at ``after``

        def holding() -> None:
            if any(any(v) for v in held.values()):
                out.append(f"axes {list(held.values())} held since {held_at:.3f} s")

        for line in record.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            fields, t = entry.get("fields"), entry.get("t")
            if not isinstance(fields, dict) or not isinstance(t, int | float):
                continue  # not a client map (a contact of the body...)
            if t > before:
                break
            if t > after and not judged:
                judged = True
                holding()
            sticks = {k: fields[k] for k in held if isinstance(fields.get(k), list)}
            if sticks:
                held.update(sticks)
                held_at = t
            if wire.COMPONENT_COMMAND in fields:
                component = fields[wire.COMPONENT_COMMAND]
            if t <= after:
                continue
            if any(any(v) for v in sticks.values()):
                out.append(f"{entry['key']} at {t:.3f} s: axes {list(sticks.values())}")
            if fields.get(wire.COMPONENT_UPDATE) is True and component is not None:
                out.append(f"{entry['key']} at {t:.3f} s: component {component} started")
        if not judged and after < before:
            holding()
        return out

    def sim_argv(self, profile: RobotProfile, world: Mapping[str, Any], base: Path) -> list[str]:
        argv = ["--profile", profile.name]
        for key, value in world.items():
            argv += [WORLD[key][1], str(value)]
        return argv

    def fault_client(self, participant: Any) -> _QueryClient:
        """Faults over zenoh (``participant``: a zenoh session that reaches the sim)."""
        return _QueryClient(participant)

    def real_wire(self, workdir: Path) -> _ZenohWire:
        return _ZenohWire(workdir)


PART = _Part()
