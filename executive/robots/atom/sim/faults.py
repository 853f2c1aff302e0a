"""Faults the simulated Atom can be told to have, and the book of those currently active.

(The operator's gamepad travels the same way: a held button or a deflected stick is a
"fault" of kind ``button``/``stick`` with a target and a duration.)

A fault is a kind (e-stop flag, BMS alarm, servo error, ...), a target (which battery,
which servo, which topic), a value (alarm bits, error code, battery percent) and an
optional duration after which it clears itself. The same description arrives from the
command line (``--fault bms-alarm:lower=4``), from the DDS topic ``atom_sim/fault``
(``Fault_`` in ``idl/atom_executive/sim_fault.idl``) or from ``SimClient``; this module
parses and validates it once for all three, so a typo is an error naming what is valid,
never a fault silently not injected.

Spec syntax: ``KIND[:TARGET][=VALUE][@SECONDS]``, e.g. ``estop-soft``,
``bms-alarm:lower=4``, ``servo-error:left_elbow_pitch=0x2310``, ``dropout:upper_state@3``,
``battery=12``, ``refuse-upper-control``, ``refuse-fsm``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from executive.robots.atom.gamepad import BUTTONS, STICKS
from executive.robots.profile import STATE_TOPICS
from executive.wire.robot_io import TOPICS

# CLI name -> IDL FaultKind member name, in the IDL's order.
KINDS: dict[str, str] = {
    "estop-soft": "ESTOP_SOFT",
    "estop-hard": "ESTOP_HARD",
    "estop-amr": "ESTOP_AMR",
    "estop-di": "ESTOP_DI",
    "bms-alarm": "BMS_ALARM",
    "servo-error": "SERVO_ERROR",
    "amr-failure": "AMR_FAILURE",
    "amr-estop": "AMR_ESTOP",
    "state-dropout": "STATE_DROPOUT",
    "refuse-upper-control": "REFUSE_UPPER_CONTROL",
    "revoke-upper-control": "REVOKE_UPPER_CONTROL",
    "battery-level": "BATTERY_LEVEL",
    "button": "BUTTON",
    "stick": "STICK",
    "refuse-fsm": "REFUSE_FSM",
}
ALIASES = {"dropout": "state-dropout", "battery": "battery-level"}
ESTOP_FLAGS: dict[str, str] = {  # kind -> EmergencyState_ field
    "estop-soft": "soft_emergency_triggered",
    "estop-hard": "hard_emergency_triggered",
    "estop-amr": "amr_emergency_triggered",
    "estop-di": "di_emergency_triggered",
}
BMS_TARGETS = ("upper", "lower")
# Kinds whose value 0 means "the default non-zero code" (an alarm or error of 0 is no fault).
_DEFAULT_CODE = {"bms-alarm": 1.0, "servo-error": 1.0}
_UINT16_CODE = {"servo-error"}
_UINT32_CODE = {"bms-alarm"}

HELP = """\
fault spec: KIND[:TARGET][=VALUE][@SECONDS]  (@SECONDS: clears itself after that long)
  estop-soft | estop-hard | estop-amr | estop-di   an EmergencyState_ flag (estop-di needs a
                                                  four-flag interface, e.g. sdk-1.1.0)
  bms-alarm[:upper|:lower][=BITS]                 bms_alarms != 0 (default both, bits 1)
  servo-error:AXIS[=CODE]                         error_code in rt/main/nodes/state; AXIS is a
                                                  joint (left_elbow_pitch) or a node
                                                  (left_arm[3], waist, ecat2can[0]); cleared
                                                  by rt/clear/errors too
  amr-failure                                     the AMR task (and every new one) FAILED
  amr-estop                                       amr_event.emergency_stop_pressed; base halts
  dropout[:TOPIC]                                 stop publishing a state topic (upper_state or
                                                  rt/upper/state; none: all), e.g. dropout:upper_state@3
  refuse-upper-control                            requests for upper-body control are refused
  revoke-upper-control                            control is taken away now and refused
  refuse-fsm                                      FSM switches (rt/set/fsm/id) are refused:
                                                  fsm_id stays where it is
  battery=PERCENT                                 the battery reads PERCENT
operator input (same syntax, in wireless_remote):
  button:NAME[@SECONDS]                           hold a gamepad button (A B X Y LB RB LT RT
                                                  SELECT START UP DOWN LEFT RIGHT); with
                                                  @SECONDS a press, e.g. button:A@0.5
  stick:AXIS=VALUE                                a stick axis (LX RX RY LY) at -1..1
"""


class FaultError(ValueError):
    """A fault spec that cannot be injected; the message says what is valid."""


@dataclass(frozen=True)
class FaultSpec:
    """One fault as injected: ``kind`` is a CLI name (``estop-soft``), never an alias."""

    kind: str
    target: str = ""
    value: float = 0.0
    duration: float = 0.0  # seconds; 0 = until cleared

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.target)

    def describe(self) -> str:
        text = self.kind + (f":{self.target}" if self.target else "")
        if self.value:
            text += f"={self.value:g}"
        return text + (f"@{self.duration:g}" if self.duration else "")


def canonical_kind(kind: str) -> str:
    """The CLI name for a CLI name, alias or IDL name (``ESTOP_SOFT``); FaultError if unknown."""
    text = kind.strip()
    if text in KINDS.values():
        return next(k for k, v in KINDS.items() if v == text)
    text = ALIASES.get(text, text)
    if text not in KINDS:
        raise FaultError(f"unknown fault kind {kind!r}; known: {', '.join(KINDS)}")
    return text


def _number(text: str, what: str) -> float:
    try:
        return float(int(text, 0)) if text.strip().lower().startswith("0x") else float(text)
    except ValueError:
        raise FaultError(f"{what} {text!r} is not a number") from None


def parse_fault(spec: str) -> FaultSpec:
    """Parse ``KIND[:TARGET][=VALUE][@SECONDS]`` (syntax only; see ``validate`` for meaning)."""
    rest, at, seconds = spec.partition("@")
    rest, eq, value = rest.partition("=")
    kind, _, target = rest.partition(":")
    return FaultSpec(
        kind=canonical_kind(kind),
        target=target.strip(),
        value=_number(value, f"fault {spec!r}: value") if eq else 0.0,
        duration=_number(seconds, f"fault {spec!r}: duration") if at else 0.0,
    )


def state_topic_key(text: str) -> str:
    """``upper_state`` for ``upper_state`` or ``rt/upper/state``; FaultError otherwise."""
    if text in STATE_TOPICS:
        return text
    for key in STATE_TOPICS:
        if TOPICS[key].name == text:
            return key
    raise FaultError(
        f"unknown state topic {text!r}; known: {', '.join(STATE_TOPICS)} or their rt/ names"
    )


def validate(spec: FaultSpec, *, four_flags: bool, axes: Mapping[str, str]) -> FaultSpec:
    """The spec with its target normalised and value defaulted, or FaultError saying why not.

    ``four_flags``: the interface's EmergencyState_ has ``di_emergency_triggered``;
    ``axes``: valid servo targets (joint or node names) -> the node name they mean.
    """
    kind = canonical_kind(spec.kind)
    spec = replace(spec, kind=kind)
    if not (math.isfinite(spec.value) and math.isfinite(spec.duration)) or spec.duration < 0:
        raise FaultError(f"{spec.describe()}: value and duration must be finite, duration >= 0")
    if kind == "estop-di" and not four_flags:
        raise FaultError("estop-di needs an interface whose EmergencyState_ has four flags")
    spec = replace(spec, target=normalise_target(kind, spec.target, axes))
    if kind in _DEFAULT_CODE and spec.value == 0:
        spec = replace(spec, value=_DEFAULT_CODE[kind])
    limit = 0xFFFF if kind in _UINT16_CODE else 0xFFFFFFFF if kind in _UINT32_CODE else None
    if limit is not None and not (0 < spec.value <= limit and spec.value == int(spec.value)):
        raise FaultError(f"{kind} value must be an integer code 1..{limit:#x}, got {spec.value:g}")
    if kind == "battery-level" and not 0 <= spec.value <= 100:
        raise FaultError(f"battery-level must be 0..100 percent, got {spec.value:g}")
    if kind == "stick" and not -1.0 <= spec.value <= 1.0:
        raise FaultError(f"stick value must be -1..1, got {spec.value:g}")
    return spec


def normalise_target(kind: str, target: str, axes: Mapping[str, str]) -> str:
    """The canonical target of a fault of ``kind`` (also for clearing); FaultError if invalid."""
    if kind == "bms-alarm":
        if target not in ("", *BMS_TARGETS, "both"):
            raise FaultError(f"bms-alarm target must be upper, lower or both, not {target!r}")
        return "" if target == "both" else target
    if kind == "servo-error":
        if target not in axes:
            raise FaultError(
                f"servo-error needs a known axis (a joint, or a node like left_arm[3]), not {target!r}"
            )
        return axes[target]
    if kind == "state-dropout":
        return state_topic_key(target) if target else ""
    names: list[str] | None = {"button": list(BUTTONS), "stick": list(STICKS)}.get(kind)
    if names is not None:
        if target.upper() not in names:
            raise FaultError(f"{kind} needs one of {', '.join(names)}, not {target!r}")
        return target.upper()
    if target:
        raise FaultError(f"{kind} takes no target (got {target!r})")
    return ""


@dataclass(frozen=True)
class ActiveFault:
    spec: FaultSpec
    since: float
    until: float | None  # monotonic time it clears itself; None = until cleared

    def remaining(self, now: float) -> float:
        return 0.0 if self.until is None else max(0.0, self.until - now)


class FaultBook:
    """The active faults, keyed by (kind, target); setting a key again replaces it."""

    def __init__(self) -> None:
        self._active: dict[tuple[str, str], ActiveFault] = {}
        self.version = 0  # bumped on every change, so publishers know when to refresh

    def set(self, spec: FaultSpec, now: float) -> None:
        until = now + spec.duration if spec.duration > 0 else None
        self._active[spec.key] = ActiveFault(spec, now, until)
        self.version += 1

    def clear(self, kind: str, target: str = "") -> list[FaultSpec]:
        """Clear (kind, target), or every fault of ``kind`` when target is empty."""
        kind = canonical_kind(kind)
        gone = [k for k in self._active if k[0] == kind and (not target or k[1] == target)]
        return self._remove(gone)

    def clear_all(self) -> list[FaultSpec]:
        return self._remove(list(self._active))

    def expire(self, now: float) -> list[FaultSpec]:
        """Remove the faults whose duration has run out; returns them."""
        gone = [k for k, f in self._active.items() if f.until is not None and now >= f.until]
        return self._remove(gone) if gone else []

    def _remove(self, keys: list[tuple[str, str]]) -> list[FaultSpec]:
        removed = [self._active.pop(k).spec for k in keys]
        if removed:
            self.version += 1
        return removed

    def has(self, kind: str, target: str | None = None) -> bool:
        """Whether a fault of ``kind`` is active (on ``target``, when given)."""
        return any(k[0] == kind and (target is None or k[1] == target) for k in self._active)

    def get(self, kind: str, target: str = "") -> FaultSpec | None:
        fault = self._active.get((kind, target))
        return None if fault is None else fault.spec

    def of_kind(self, kind: str) -> list[FaultSpec]:
        return [f.spec for k, f in self._active.items() if k[0] == kind]

    def active(self) -> list[ActiveFault]:
        return list(self._active.values())
