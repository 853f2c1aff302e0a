"""Faults a simulated robot can be told to have: the spec syntax and the book of active ones.

A fault is a kind (servo error, state dropout, battery level, ...), a target (which servo,
which topic), a value (error code, battery percent) and an optional duration after which
it clears itself. The same description arrives from the command line (``--fault
servo-error:left_elbow=0x21``), from a sim's DDS fault topic (``Fault_`` in
``idl/atom_executive/sim_fault.idl``, see ``topics``) or from a client (``client``); this
module parses it once for all of them, and each robot's sim then validates it against
what that robot can have (its own list of kinds, its joints, its topics), so a typo is an
error naming what is valid, never a fault silently not injected.

Spec syntax: ``KIND[:TARGET][=VALUE][@SECONDS]``, e.g. ``servo-error:left_elbow=0x21``,
``dropout:upper_state@3``, ``battery=12``.
"""

from __future__ import annotations

from dataclasses import dataclass

# CLI name -> FaultKind member name, in the IDL's order: every kind the shared Fault_ type
# can carry. A robot's sim accepts its own subset and refuses the rest by name.
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
    """Parse ``KIND[:TARGET][=VALUE][@SECONDS]`` (syntax only; each robot validates meaning)."""
    rest, at, seconds = spec.partition("@")
    rest, eq, value = rest.partition("=")
    kind, _, target = rest.partition(":")
    return FaultSpec(
        kind=canonical_kind(kind),
        target=target.strip(),
        value=_number(value, f"fault {spec!r}: value") if eq else 0.0,
        duration=_number(seconds, f"fault {spec!r}: duration") if at else 0.0,
    )


def parse_clear(text: str) -> FaultSpec:
    """``KIND[:TARGET]`` of a spec to clear (a value or duration in ``text`` is ignored)."""
    kind, _, target = text.partition("=")[0].partition("@")[0].partition(":")
    return FaultSpec(canonical_kind(kind), target.strip())


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
