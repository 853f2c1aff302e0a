"""Faults the simulated Atom can be told to have: every kind of the kit, checked for an Atom.

(The operator's gamepad travels the same way: a held button or a deflected stick is a
"fault" of kind ``button``/``stick`` with a target and a duration.)

A fault is a kind (e-stop flag, BMS alarm, servo error, ...), a target (which battery,
which servo, which topic), a value (alarm bits, error code, battery percent) and an
optional duration after which it clears itself. The same description arrives from the
command line (``--fault bms-alarm:lower=4``), from the DDS topic ``atom_sim/fault``
(``Fault_`` in ``idl/atom_executive/sim_fault.idl``) or from ``SimClient``. The syntax, the
parser and the book of active faults are the kit's (``executive.robots.simkit.faults``);
this module validates a spec against what an Atom can have, once for all three sources,
so a typo is an error naming what is valid, never a fault silently not injected.

Spec syntax: ``KIND[:TARGET][=VALUE][@SECONDS]``, e.g. ``estop-soft``,
``bms-alarm:lower=4``, ``servo-error:left_elbow_pitch=0x2310``, ``dropout:upper_state@3``,
``battery=12``, ``refuse-upper-control``, ``refuse-fsm``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from executive.robots.atom.gamepad import BUTTONS, STICKS
from executive.robots.atom.topics import STATE_TOPICS, TOPICS
from executive.robots.simkit.faults import FaultError, FaultSpec, canonical_kind

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
