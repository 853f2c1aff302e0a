"""The simulated PND Adam in simulated time: the Adam's part of ``executive.scenario``.

``PART`` (``RobotSpec.lockstep``) is what the scenario engine asks of the Adam
(``executive.seam.lockstep``): ``SimAdam`` itself on the in-process wire
(``executive.wire.loop``; the Adam speaks CycloneDDS 0.10 as the Atom does) and a simulated
clock, its scheduler's jobs run by the engine in lockstep with the tick; the adapter opens
on the same wire. So a scenario exercises the Adam's adapter, its whole-body ``LowCmd_``
and hand codecs, its state and the simulator's joints, hands and faults as the service does
over DDS.

A scenario's ``world:`` is the simulator's start-up (``AdamSimConfig``, ``atom-executive
sim --profile adam-*``'s options: the same names, ``_`` for ``-``); a fault is the
simulator's spec (``executive.robots.adam.sim.faults``: a servo error, a dropout, the
battery). The Adam has no e-stop, base or buttons on DDS: ``press:`` has nothing to press.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from executive.clock import SimClock
from executive.robots.adam.interface import DEFAULT_VARIANT, VARIANTS
from executive.robots.adam.sim.faults import validate
from executive.robots.adam.sim.node import AdamSimConfig, SimAdam
from executive.robots.adam.sim.record import Recording
from executive.robots.simkit.faults import FaultError, parse_fault
from executive.robots.simkit.lockstep import NodeFaultClient, NodeLockstep
from executive.seam.profile import RobotProfile, builtin_profiles, load_profile
from executive.wire.loop import LoopBus

NO_BUTTONS = "the PND Adam has no buttons on DDS"

# world key -> (what it is, the sim's option)
WORLD: dict[str, tuple[str, str]] = {
    "seed": ("integer: the seed of every random choice the simulator makes", "--seed"),
    "interface": (
        f"the interface variant both ends speak: {', '.join(sorted(VARIANTS))} "
        f"(default {DEFAULT_VARIANT})",
        "--interface",
    ),
    "battery": ("number 0..100: the battery at start, %", "--battery"),
    "battery_drain": ("number >= 0: the battery's drain, % per minute", "--battery-drain"),
    "noise": ("number >= 0: joint measurement noise, rad std", "--noise"),
    "joint_speed_scale": (
        "number > 0: joint and finger speed limit / the profile's cap",
        "--joint-speed-scale",
    ),
    "faults": ("a list of fault specs active from the start", "--fault"),
}

Check = Callable[[object, Mapping[str, Any]], str | None]


def _number(low: float, high: float = math.inf, *, above: bool = False) -> Check:
    def check(value: object, world: Mapping[str, Any]) -> str | None:
        ok = (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and (value > low if above else value >= low)
            and value <= high
        )
        bound = (
            f"> {low:g}" if above else f"{low:g}..{high:g}" if high < math.inf else f">= {low:g}"
        )
        return None if ok else f"must be a number {bound}"

    return check


def _seed(value: object, world: Mapping[str, Any]) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**32
    return None if ok else "must be an integer 0..2^32-1"


def _interface(value: object, world: Mapping[str, Any]) -> str | None:
    return None if value in VARIANTS else f"must be one of {', '.join(sorted(VARIANTS))}"


def _faults(value: object, world: Mapping[str, Any]) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "must be a list of fault specs"
    return next((w for spec in value if (w := PART.check_fault(spec, world))), None)


CHECKS: dict[str, Check] = {
    "seed": _seed,
    "interface": _interface,
    "battery": _number(0.0, 100.0),
    "battery_drain": _number(0.0),
    "noise": _number(0.0),
    "joint_speed_scale": _number(0.0, above=True),
    "faults": _faults,
}


@functools.cache
def _body_joints() -> tuple[str, ...]:
    """Every body joint of the built-in Adam profiles (Pro, Standard, Lite), Pro's first:
    what a scenario's ``servo-error:JOINT`` may name (``check_fault`` is not told the
    profile; a joint the scenario's model lacks is refused by its simulator at the run)."""
    names: list[str] = []
    for name in sorted(builtin_profiles(), key=lambda n: n != "adam-pro"):
        profile = load_profile(name)
        if profile.robot == "adam":
            names += [j for j in profile.topics["body"] if j not in names]
    return tuple(names)


def _config(world: Mapping[str, Any], profile: RobotProfile, record: Path) -> AdamSimConfig:
    fields: dict[str, Any] = {"profile": profile.name, "record": record}
    for key, value in world.items():
        if key == "faults":
            fields[key] = tuple(parse_fault(s) for s in value)  # the sim validates them
        elif key == "joint_speed_scale":
            fields["speed_scale"] = float(value)
        else:
            fields[key] = value
    return AdamSimConfig(**fields)


class AdamLockstep(NodeLockstep):
    """``SimAdam`` on a ``LoopBus``: the ``LockstepRobot`` the engine steps."""

    no_buttons = NO_BUTTONS

    def __init__(self, clock: SimClock, config: AdamSimConfig) -> None:
        participant = LoopBus(clock)
        sim = SimAdam(participant, config, clock=clock)
        super().__init__(clock, participant, sim, config.interface, config.record)


class _SimClient(NodeFaultClient):
    """``--realtime``: the Adam's ``AdamSimClient`` as the engine's ``FaultClient``."""

    no_buttons = NO_BUTTONS


class _Part:
    """The Adam's ``LockstepPart`` (``executive.seam.lockstep``)."""

    world_keys: Mapping[str, str] = {k: what for k, (what, _) in WORLD.items()}
    simulator = "the simulated Adam"
    buttons: tuple[str, ...] = ()

    def check_world(self, world: Mapping[str, Any], base: Path) -> list[tuple[str, str]]:
        return [(k, why) for k, v in world.items() if (why := CHECKS[k](v, world))]

    def check_fault(self, spec: str, world: Mapping[str, Any]) -> str | None:
        battery = world.get("interface", DEFAULT_VARIANT) == "sdk-1.2"  # has battery_data
        try:
            validate(parse_fault(spec), joints=_body_joints(), battery=battery)
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
    ) -> AdamLockstep:
        return AdamLockstep(clock, _config(world, profile, record))

    def motion_after(self, record: Path, after: float, before: float = math.inf) -> list[str]:
        """Every joint or finger command in ``record`` taken in (``after``, ``before``]
        that is not a hold (``Recording.motion_commands``), one line each, oldest first.
        The Adam has no base."""
        return [
            f"{c.topic} at {c.t:.3f} s: change {c.change:.4f}, pull {c.dev:.4f} (rad or counts)"
            for c in Recording.load(record).motion_commands(after, before=before, clock="t")
        ]

    def sim_argv(self, profile: RobotProfile, world: Mapping[str, Any], base: Path) -> list[str]:
        argv = ["--profile", profile.name]
        for key, value in world.items():
            flag = WORLD[key][1]
            if key == "faults":
                for spec in value:
                    argv += [flag, spec]
            else:
                argv += [flag, str(value)]
        return argv

    def sim_ready(self, stack: Any, pid: int) -> bool:
        """``--realtime``: the simulated Adam's own status from process ``pid``
        (``Stack.start_sim``'s hook; the Atom's status is not the Adam's)."""
        from executive.robots.adam.sim.client import client_for

        client = client_for(stack.dds)
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline and stack.pid("sim") == pid:  # no once it exited
            if client.wait_status(lambda s: s.pid == pid, 0.5) is not None:
                return True
        return False

    def fault_client(self, participant: Any) -> _SimClient:
        from executive.robots.adam.sim.client import client_for

        return _SimClient(client_for(participant, timeout=10.0))


PART = _Part()
