"""The simulated Atom in simulated time: the Atom's part of ``executive.scenario``.

``PART`` (``RobotSpec.lockstep``) is what the scenario engine asks of the Atom
(``executive.seam.lockstep``): ``SimAtom`` itself, unchanged, on the in-process wire
(``executive.wire.loop``) and a simulated clock, its scheduler's jobs run by the engine in
lockstep with the tick (``Scheduler.run_due``); the adapter opens on the same wire. So a
scenario exercises the Atom's adapter, its codecs, its state and commands, and the
simulator's models (MuJoCo, the base, the battery, the faults) as the service does on
the robot's real wire, in a fraction of the time.

A scenario's ``world:`` is the simulator's start-up (``SimConfig``, ``atom-executive sim``'s
options: the same names, ``_`` for ``-``); a fault is the simulator's spec
(``executive.robots.atom.sim.faults``); ``press: A`` is a gamepad button held for
``PRESS_S`` (a fresh press: ``wait_for_button`` does not count a held one).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from executive.clock import SimClock
from executive.robots.atom.gamepad import BUTTONS
from executive.robots.atom.interface import DEFAULT_PRESET, Interface, Variant, VariantError
from executive.robots.atom.sim.config import SimConfig
from executive.robots.atom.sim.faults import validate
from executive.robots.atom.sim.record import Recording
from executive.robots.atom.sim.servos import axis_targets
from executive.robots.simkit.faults import FaultError, FaultSpec, parse_fault
from executive.robots.simkit.lockstep import NodeFaultClient, NodeLockstep
from executive.robots.simkit.physics import load_scene
from executive.seam.profile import RobotProfile
from executive.wire.loop import LoopBus

PRESS_S = 0.3  # a button press: held this long, then let go
# base commands that make the base move (AMRCommandType names; REMOTE_CONTROL: when not 0)
BASE_MOVES = frozenset({"MOVE_TO_TAG", "ROTATE", "MOVE_TO_CHARGE", "RESUME_TASK", "START_REMOTE"})

# world key -> (what it is, the sim's option)
WORLD: dict[str, tuple[str, str]] = {
    "seed": ("integer: the seed of every random choice the simulator makes", "--seed"),
    "battery": ("number 0..100: the battery at start, %", "--battery"),
    "battery_drain": ("number >= 0: the battery's drain, % per minute", "--battery-drain"),
    "amr_speed": ("number > 0: the base's driving speed, m/s", "--amr-speed"),
    "amr_turn_rate": ("number > 0: the base's turning rate, rad/s", "--amr-turn-rate"),
    "physics": ("mujoco | kinematic: how joints move", "--physics"),
    "scene": ("a scene YAML (relative to the scenario file)", "--scene"),
    "tags": ("a tag map YAML (relative to the scenario file)", "--tags"),
    "contact_fault": ("boolean: a contact raises a servo error", "--contact-fault"),
    "noise": ("number >= 0: joint measurement noise, rad std", "--noise"),
    "joint_speed_scale": (
        "number > 0: joint speed limit / the profile's cap",
        "--joint-speed-scale",
    ),
    "fsm": ("the FSM state at start, a name or an id", "--fsm"),
    "interface": (
        f"the interface variant both ends speak (default {DEFAULT_PRESET})",
        "--interface",
    ),
    "faults": ("a list of fault specs active from the start", "--fault"),
}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _in(low: float, high: float = math.inf, *, above: bool = False) -> Check:
    def check(value: object, base: Path, world: Mapping[str, Any]) -> str | None:
        n = _number(value)
        ok = n is not None and (n > low if above else n >= low) and n <= high
        bound = (
            f"> {low:g}" if above else f"{low:g}..{high:g}" if high < math.inf else f">= {low:g}"
        )
        return None if ok else f"must be a number {bound}"

    return check


def _seed(value: object, base: Path, world: Mapping[str, Any]) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**32
    return None if ok else "must be an integer 0..2^32-1"


def _file(value: object, base: Path, world: Mapping[str, Any]) -> str | None:
    if not isinstance(value, str):
        return "must be a file name"
    return None if (base / value).is_file() else f"no file {base / value}"


def _scene(value: object, base: Path, world: Mapping[str, Any]) -> str | None:
    """A scene file as the simulator reads it at start (its obstacles, their keys)."""
    if (why := _file(value, base, world)) is not None:
        return why
    try:
        load_scene(base / str(value))
    except ValueError as e:
        return str(e)
    return None


def _interface(value: object, base: Path, world: Mapping[str, Any]) -> str | None:
    if not isinstance(value, str):
        return "must be an interface variant, e.g. sdk-1.1.0"
    try:
        Variant.parse(value)
    except VariantError as e:
        return str(e)
    return None


def _faults(value: object, base: Path, world: Mapping[str, Any]) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "must be a list of fault specs"
    return next((w for spec in value if (w := PART.check_fault(spec, world))), None)


def _one_of(*choices: object, said: str) -> Check:
    def check(value: object, base: Path, world: Mapping[str, Any]) -> str | None:
        return None if value in choices else said

    return check


def _fsm(value: object, base: Path, world: Mapping[str, Any]) -> str | None:
    ok = isinstance(value, str | int) and not isinstance(value, bool)
    return None if ok else "must be an FSM state's name or id"


Check = Callable[[object, Path, Mapping[str, Any]], str | None]
CHECKS: dict[str, Check] = {
    "seed": _seed,
    "battery": _in(0.0, 100.0),
    "battery_drain": _in(0.0),
    "noise": _in(0.0),
    "amr_speed": _in(0.0, above=True),
    "amr_turn_rate": _in(0.0, above=True),
    "joint_speed_scale": _in(0.0, above=True),
    "physics": _one_of("mujoco", "kinematic", said="must be mujoco or kinematic"),
    "scene": _scene,
    "tags": _file,
    "contact_fault": lambda v, b, w: None if isinstance(v, bool) else "must be true or false",
    "fsm": _fsm,
    "interface": _interface,
    "faults": _faults,
}


def _four_flags(world: Mapping[str, Any]) -> bool:
    """Whether the world's interface's ``EmergencyState_`` has the fourth flag (estop-di)."""
    try:
        interface = Interface(Variant.parse(str(world.get("interface", DEFAULT_PRESET))))
    except VariantError:
        return False
    return "di_emergency_triggered" in interface.EmergencyState_.__dataclass_fields__


def _config(profile: RobotProfile, world: Mapping[str, Any], base: Path, record: Path) -> SimConfig:
    fields: dict[str, Any] = {"profile": profile.name, "record": record}
    for key, value in world.items():
        if key in ("scene", "tags"):
            fields[key] = base / value
        elif key == "faults":
            fields[key] = tuple(parse_fault(s) for s in value)  # the sim validates them
        elif key == "joint_speed_scale":
            fields["speed_scale"] = float(value)
        elif key == "fsm":
            fields[key] = str(value)
        else:
            fields[key] = value
    return SimConfig(**fields)


class AtomLockstep(NodeLockstep):
    """``SimAtom`` on a ``LoopBus``: the ``LockstepRobot`` the engine steps."""

    def __init__(self, profile: RobotProfile, clock: SimClock, config: SimConfig) -> None:
        from executive.robots.atom.sim.node import SimAtom  # MuJoCo: only when a scenario runs

        participant = LoopBus(clock)
        sim = SimAtom(participant, config, clock=clock)
        super().__init__(clock, participant, sim, config.interface, config.record)

    def press(self, button: str, now: float) -> None:
        self.sim.apply_fault("set", FaultSpec("button", button, 0.0, PRESS_S), now, "scenario")


class _SimClient(NodeFaultClient):
    """``--realtime``: the Atom's ``SimClient`` as the engine's ``FaultClient``."""

    def press(self, button: str) -> None:
        self.client.inject("button", button, duration=PRESS_S)


class _Part:
    """The Atom's ``LockstepPart`` (``executive.seam.lockstep``)."""

    world_keys: Mapping[str, str] = {k: what for k, (what, _) in WORLD.items()}
    simulator = "the simulated Atom"
    buttons: tuple[str, ...] = tuple(BUTTONS)

    def check_world(self, world: Mapping[str, Any], base: Path) -> list[tuple[str, str]]:
        return [(k, why) for k, v in world.items() if (why := CHECKS[k](v, base, world))]

    def check_fault(self, spec: str, world: Mapping[str, Any]) -> str | None:
        try:
            validate(parse_fault(spec), four_flags=_four_flags(world), axes=axis_targets())
        except FaultError as e:
            return str(e)
        return None

    def open(
        self,
        profile: RobotProfile,
        clock: SimClock,
        world: Mapping[str, Any],
        base: Path,
        record: Path,
    ) -> AtomLockstep:
        return AtomLockstep(profile, clock, _config(profile, world, base, record))

    def motion_after(self, record: Path, after: float, before: float = math.inf) -> list[str]:
        """Every command in ``record`` taken in (``after``, ``before``] that moves the robot:
        a joint command that is not a hold (``Recording.motion_commands``) and a base
        command that starts or goes on driving; one line each, oldest first."""
        recording = Recording.load(record)
        out = [
            (c.t, f"{c.topic} at {c.t:.3f} s: change {c.change:.4f} rad, pull {c.dev:.4f} rad")
            for c in recording.motion_commands(after, before=before, clock="t")
        ]
        for e in recording.event_commands("amr_cmd", after=after):
            kind = str(e.fields.get("command_type", ""))
            moving = kind in BASE_MOVES or (
                kind == "REMOTE_CONTROL"
                and (e.fields.get("linear_vel") or e.fields.get("angular_vel"))
            )
            if moving and e.t <= before:
                out.append((e.t, f"amr_cmd {kind} at {e.t:.3f} s ({e.result})"))
        return [line for _, line in sorted(out)]

    def sim_argv(self, profile: RobotProfile, world: Mapping[str, Any], base: Path) -> list[str]:
        argv = ["--profile", profile.name]
        for key, value in world.items():
            flag = WORLD[key][1]
            if key == "faults":
                for spec in value:
                    argv += [flag, spec]
            elif key == "contact_fault":
                argv += [flag] if value else []
            elif key in ("scene", "tags"):
                argv += [flag, str(base / value)]
            else:
                argv += [flag, str(value)]
        return argv

    def fault_client(self, participant: Any) -> _SimClient:
        from executive.robots.atom.sim.client import SimClient

        return _SimClient(SimClient(participant, timeout=10.0))


PART = _Part()
