"""The simulated Aurora's robot: FSMs, control groups, base, faults; no DDS (standard library).

What it obeys (seed 003's numbers, ``wire.config``):

- ``whole_body_fsm_state_change_cmd``: 0..11; 11 (upper-body user command) only while
  ``allow_upper_body_override``; refused while a raised FSM 9 is not cleared;
- ``upper_body_fsm_state_change_cmd``: 0, 1, 2, 4; ``velocity_source_cmd``: 0, 1, 2;
- ``robot_control_group_cmd``: only in FSM 10 (every group) or 11 (every group but the legs);
  per group, ``group_motion_state`` 2 holds the group where it is (state 2), anything else
  (the vendor's client sends 0, the seed says 1) moves each joint toward ``position`` at
  ``speed`` rad/s (state 1 while moving, 0 when there); a wrong length or a non-finite value
  is refused; a group in error (3) takes nothing;
- ``velocity_cmd``: only in FSM 3 (locomotion) with source 2 (navigation); the base moves at
  it for ``duration`` s (the seed's VelocityCmd has none: 1 s, the vendor client's default);
  leaving FSM 3 or the source zeroes it;
- ``robot_motor_cfg_group_cmd``: gains stored per group (reported on
  ``robot_motor_cfg_group_state``); ``robot_stand_pose_cmd`` in FSM 2 only.

FSM 9 (security protection), raised by a fault or commanded, freezes every group where it is
(state 2), zeroes the base velocity and refuses group and velocity commands.

The joints: the firmware moves each group's setpoint (``sp``) toward its command at
``speed`` rad/s, and the joints follow it. Without a body they are the setpoint; with one
(``body``: ``sim.body.SimBody``, the GR-3's model in MuJoCo) the physics moves them (PD at
the group's gains under a compensated gravity), and ``q``, ``dq`` are what it measured.
A group is done (state 0) when its setpoint has arrived; freezing a group (a hold, FSM 9,
an error) puts its setpoint and command where the joints are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from executive.robots.aurora.wire.config import (
    FSM_LOCOMOTION,
    FSM_PD_STAND,
    FSM_SECURITY_PROTECTION,
    FSM_UPPER_BODY_USER_CMD,
    FSM_USER_CMD,
    GROUP_ERROR,
    GROUP_IDLE,
    GROUP_MOVING,
    GROUP_STOPPED,
    SOURCE_NAVIGATION,
    UPPER_FSMS,
)

if TYPE_CHECKING:
    from executive.robots.simkit.physics import ContactEvent

LEGS = frozenset({"left_leg", "right_leg"})
DEFAULT_VELOCITY_DURATION = 1.0  # s: the vendor client's default; the seed's VelocityCmd has none


@dataclass
class Group:
    q: list[float]  # measured (the setpoint itself without a body)
    target: list[float]  # the last position commanded
    motion: int = GROUP_IDLE
    gains: dict[str, Any] = field(default_factory=dict)
    sp: list[float] = field(default_factory=list)  # the firmware's setpoint, toward target
    dq: list[float] = field(default_factory=list)
    stops: int = 0  # freezes so far: a body brakes the joints at each (they stop dead)

    def __post_init__(self) -> None:
        self.sp = list(self.sp or self.q)
        self.dq = list(self.dq or [0.0] * len(self.q))

    def freeze(self) -> None:
        """Stop dead where the joints are: setpoint and command both there."""
        self.target = list(self.q)
        self.sp = list(self.q)
        self.stops += 1


class Body(Protocol):
    """What moves the joints of the groups it models (``sim.body.SimBody``)."""

    modelled: frozenset[str]  # the groups it moves; the others' joints are their setpoints

    def step(self, dt: float, groups: Mapping[str, Group]) -> list[ContactEvent]:
        """Follow each modelled group's ``sp`` for ``dt`` s, writing its ``q`` and ``dq``;
        the contacts that began or ended."""
        ...

    def culprit(self, event: ContactEvent) -> str | None:
        """The joint a firmware would blame for a contact (``Physics.culprit``)."""
        ...


@dataclass
class Base:
    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0
    v: tuple[float, float, float] = (0.0, 0.0, 0.0)  # vx, vy (body frame), yaw rate
    until: float = 0.0  # monotonic time the velocity command expires


class AuroraModel:
    """The robot's state, advanced by ``step`` and changed by ``command`` and the faults."""

    def __init__(
        self,
        groups: Mapping[str, int],
        *,
        speed: float = 1.0,
        fsm: int = FSM_PD_STAND,
        allow_override: bool = True,
        body: Body | None = None,
    ) -> None:
        self.groups = {name: Group([0.0] * n, [0.0] * n) for name, n in groups.items()}
        self.body = body
        self.contacts: dict[tuple[str, str], dict[str, Any]] = {}  # in contact now
        self.contact_events = 0  # contacts begun since start
        self.speed = speed
        self.whole = fsm
        self.upper = 0
        self.source = 0
        self.allow_override = allow_override
        self.base = Base()
        self.stand = (0.0, 0.0, 0.0)
        self.fsm9_latched = False

    # -- commands ------------------------------------------------------------------------

    def command(self, topic: str, f: Mapping[str, Any], now: float) -> str:
        """Apply a command (its fields as a mapping); what was done, for the record."""
        handler = getattr(self, "_" + topic, None)
        if handler is None:
            return "recorded"
        result: str = handler(f, now)
        return result

    def _whole_body_fsm_state_change_cmd(self, f: Mapping[str, Any], now: float) -> str:
        desired = int(f["desired_state"])
        if not 0 <= desired <= 11:
            return "out_of_range"
        if self.fsm9_latched:
            return "refused_fault"
        if desired == FSM_UPPER_BODY_USER_CMD and not self.allow_override:
            return "refused_override"
        self.set_whole(desired)
        return "applied"

    def _upper_body_fsm_state_change_cmd(self, f: Mapping[str, Any], now: float) -> str:
        desired = int(f["desired_state"])
        if desired not in UPPER_FSMS:
            return "out_of_range"
        self.upper = desired
        return "applied"

    def _velocity_source_cmd(self, f: Mapping[str, Any], now: float) -> str:
        desired = int(f["desired_source"])
        if desired not in (0, 1, 2):
            return "out_of_range"
        self.source = desired
        if desired != SOURCE_NAVIGATION:
            self.base.v = (0.0, 0.0, 0.0)
        return "applied"

    def _velocity_cmd(self, f: Mapping[str, Any], now: float) -> str:
        if self.whole != FSM_LOCOMOTION or self.source != SOURCE_NAVIGATION:
            return "ignored_fsm"
        v = (float(f["vx"]), float(f["vy"]), float(f["yaw"]))
        if not all(math.isfinite(x) for x in v):
            return "non_finite"
        duration = float(f.get("duration", 0.0))
        if not math.isfinite(duration) or duration <= 0.0:
            duration = DEFAULT_VELOCITY_DURATION
        self.base.v = v
        self.base.until = now + duration
        return "applied"

    def _robot_control_group_cmd(self, f: Mapping[str, Any], now: float) -> str:
        if self.whole not in (FSM_USER_CMD, FSM_UPPER_BODY_USER_CMD):
            return "ignored_fsm"
        results = [self._group(c) for c in f["group_cmd"]]
        return ",".join(results) if results else "empty"

    def _group(self, c: Mapping[str, Any]) -> str:
        name = str(c["group_name"])
        group = self.groups.get(name)
        if group is None:
            return f"{name}:unknown"
        if self.whole == FSM_UPPER_BODY_USER_CMD and name in LEGS:
            return f"{name}:refused"
        if group.motion == GROUP_ERROR:
            return f"{name}:error"
        if int(c["group_motion_state"]) == GROUP_STOPPED:
            group.freeze()
            group.motion = GROUP_STOPPED
            return f"{name}:held"
        position: Sequence[float] = c["position"]
        if len(position) != len(group.q):
            return f"{name}:bad_size"
        if not all(math.isfinite(x) for x in position):
            return f"{name}:non_finite"
        group.target = [float(x) for x in position]
        group.motion = GROUP_MOVING
        return f"{name}:moving"

    def _robot_motor_cfg_group_cmd(self, f: Mapping[str, Any], now: float) -> str:
        results = []
        for c in f["group_cmd"]:
            group = self.groups.get(str(c["group_name"]))
            if group is None:
                results.append(f"{c['group_name']}:unknown")
                continue
            group.gains = {k: v for k, v in c.items() if k != "group_name"}
            results.append(f"{c['group_name']}:stored")
        return ",".join(results) if results else "empty"

    def _robot_stand_pose_cmd(self, f: Mapping[str, Any], now: float) -> str:
        if self.whole != FSM_PD_STAND:
            return "ignored_fsm"
        self.stand = (float(f["delta_z"]), float(f["delta_pitch"]), float(f["delta_yaw"]))
        return "applied"

    def set_whole(self, fsm: int) -> None:
        self.whole = fsm
        if fsm != FSM_LOCOMOTION:
            self.base.v = (0.0, 0.0, 0.0)
        if fsm == FSM_SECURITY_PROTECTION:
            for group in self.groups.values():
                group.freeze()
                if group.motion != GROUP_ERROR:
                    group.motion = GROUP_STOPPED

    # -- faults --------------------------------------------------------------------------

    def raise_fsm9(self) -> None:
        self.fsm9_latched = True
        self.set_whole(FSM_SECURITY_PROTECTION)

    def raise_group_error(self, name: str) -> None:
        group = self.groups[name]
        group.freeze()
        group.motion = GROUP_ERROR

    def clear(self) -> None:
        """Clear the faults: FSM commands are taken again, groups in error become idle (the
        FSM stays where it is: 9 until commanded out)."""
        self.fsm9_latched = False
        for group in self.groups.values():
            if group.motion == GROUP_ERROR:
                group.motion = GROUP_IDLE

    # -- time ----------------------------------------------------------------------------

    def step(self, dt: float, now: float) -> list[ContactEvent]:
        """Advance ``dt`` s: setpoints toward their targets at ``speed``, the joints after
        them, the base at its velocity; the body's contacts that began or ended."""
        if self.whole != FSM_SECURITY_PROTECTION:
            limit = self.speed * dt
            for group in self.groups.values():
                if group.motion == GROUP_ERROR:
                    continue
                for i, (q, t) in enumerate(zip(group.sp, group.target, strict=True)):
                    group.sp[i] = q + max(-limit, min(limit, t - q))
                if group.motion == GROUP_MOVING and group.sp == group.target:
                    group.motion = GROUP_IDLE
        events = self.body.step(dt, self.groups) if self.body is not None else []
        modelled = self.body.modelled if self.body is not None else frozenset()
        for name, group in self.groups.items():
            if name not in modelled:
                group.q[:] = group.sp  # no model of them: the joints are the setpoint
        for event in events:
            key = (event.a, event.b)
            if event.action == "begin":
                self.contacts[key] = event.as_dict()
                self.contact_events += 1
            else:
                self.contacts.pop(key, None)
        if self.base.v != (0.0, 0.0, 0.0) and now >= self.base.until:
            self.base.v = (0.0, 0.0, 0.0)
        vx, vy, wz = self.base.v
        c, s = math.cos(self.base.yaw), math.sin(self.base.yaw)
        self.base.x += (c * vx - s * vy) * dt
        self.base.y += (s * vx + c * vy) * dt
        self.base.yaw += wz * dt
        return events

    def status(self) -> dict[str, Any]:
        """The robot as JSON (the control socket's answer)."""
        return {
            "whole_body_fsm_state": self.whole,
            "upper_body_fsm_state": self.upper,
            "velocity_command_source": self.source,
            "allow_upper_body_override": self.allow_override,
            "fsm9_latched": self.fsm9_latched,
            "groups": {
                name: {"q": list(g.q), "target": list(g.target), "motion": g.motion}
                for name, g in self.groups.items()
            },
            "base": {"x": self.base.x, "y": self.base.y, "yaw": self.base.yaw, "v": self.base.v},
            "contacts": list(self.contacts.values()),
            "contact_events": self.contact_events,
        }
