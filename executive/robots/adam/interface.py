"""Wire types of the PND Adam, selected by interface variant (idl/pnd_adam, robots.md 1.1).

The vendor's SDK history shows two generations of the DDS interface:

- ``seed``: the seed document (vendor docs v1.0.3): ``LowCmd_ { motor_cmd; reserve }``,
  ``LowState_ { imu_state; motor_state; short wireless_remote[40]; reserve }``, ``MotorCmd_``
  without ``ki``.
- ``sdk-1.2`` (default): pndbotics/pnd_sdk_python v1.2.0, pnd_sdk_cpp: ``mode_pr`` in both,
  ``tick``, ``float wireless_remote[19]`` and ``BatteryData_ battery_data`` (with a string)
  in ``LowState_``, ``ki`` in ``MotorCmd_``.

Both share ``IMUState_``, ``MotorState_``, ``HandCmd_`` and ``HandState_``. The motor
sequences' length is the model's (``MOTOR_COUNTS``), fixed per robot, not per variant.
Everything else asks ``AdamInterface`` for the classes instead of importing generated code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from executive.wire.codec import Codec

# variant name -> generated package (executive/wire/gen/<package>, from idl/pnd_adam/<folder>)
VARIANTS: dict[str, str] = {"sdk-1.2": "adam_sdk12", "seed": "adam_seed"}
DEFAULT_VARIANT = "sdk-1.2"

# Topic -> IDL type name. Type names on the wire: pnd_adam::msg::dds_::<Name>.
TOPICS: dict[str, str] = {
    "rt/lowcmd": "LowCmd_",
    "rt/lowstate": "LowState_",
    "rt/handcmd": "HandCmd_",
    "rt/handstate": "HandState_",
}
# model -> length of LowCmd_.motor_cmd and LowState_.motor_state (seed 002; SP = Standard)
MOTOR_COUNTS: dict[str, int] = {"pro": 31, "standard": 29, "lite": 23}
HAND_POSITIONS = 12  # HandCmd_/HandState_.position: 0 (closed) .. 1000 (open)
HAND_RANGE = (0, 1000)
# the motor sequence of each type that has one
SEQUENCES: dict[str, str] = {"LowCmd_": "motor_cmd", "LowState_": "motor_state"}
# bytes kept of sdk-1.2's free-text LowState_.battery_data.status; a longer one does not
# decode (executive.wire.codec: strings are never cut silently)
STATUS_CAPACITY = 256


class AdamVariantError(ValueError):
    """An unknown Adam interface variant; the message names the known ones."""


def wire_type_name(name: str) -> str:
    """The DDS type name of IDL type ``name``: ``pnd_adam::msg::dds_::LowCmd_``."""
    return f"pnd_adam::msg::dds_::{name}"


class AdamInterface:
    """The type classes of one Adam interface variant, as attributes named like the IDL types.

    ``AdamInterface("seed").LowCmd_`` is the class to write to ``rt/lowcmd`` on a robot
    speaking the seed's interface; ``AdamInterface().variant`` is ``"sdk-1.2"``.
    """

    def __init__(self, variant: str = DEFAULT_VARIANT) -> None:
        variant = variant.strip()
        if variant not in VARIANTS:
            raise AdamVariantError(
                f"unknown PND Adam interface variant {variant!r}; known: {sorted(VARIANTS)}"
            )
        self.variant: str = variant
        self.package: str = VARIANTS[variant]
        module = importlib.import_module(f"executive.wire.gen.{self.package}.pnd_adam.msg.dds_")
        self._types: dict[str, Any] = {n: getattr(module, n) for n in module.__all__}

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_types"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return f"AdamInterface({self.variant!r})"

    @property
    def name(self) -> str:
        """The variant's name, as configured (``sdk-1.2`` or ``seed``)."""
        return self.variant

    @property
    def type_names(self) -> list[str]:
        return sorted(self._types)

    def topic_type(self, topic: str) -> Any:
        """The class carried on ``topic`` (``rt/lowcmd`` ...)."""
        try:
            return self._types[TOPICS[topic]]
        except KeyError:
            raise KeyError(f"{topic!r} is no PND Adam topic; known: {sorted(TOPICS)}") from None

    def codec(
        self, name: str, motors: int | None = None, max_string: int = STATUS_CAPACITY
    ) -> Codec:
        """The numpy codec of type ``name``; ``motors`` (the model's motor count,
        ``MOTOR_COUNTS``) is required for ``LowCmd_`` and ``LowState_``."""
        from executive.wire.codec import Codec

        lengths: dict[str, int] = {}
        if name in SEQUENCES:
            if motors is None:
                raise ValueError(f"{name} needs the motor count (e.g. {MOTOR_COUNTS})")
            lengths[SEQUENCES[name]] = motors
        return Codec(getattr(self, name), sequence_lengths=lengths, max_string=max_string)


def wire_words() -> set[str]:
    """The Adam's wire as words: its topics and every field of every type (the current SDK's
    variant, the Pro's motors): what nothing above the seam may name (tests/test_seam.py)."""

    def fields(dtype: Any) -> set[str]:
        found: set[str] = set()
        for name in getattr(dtype, "names", None) or ():
            found |= {name} | fields(dtype[name].base)
        return found

    adam = AdamInterface()
    words = set(TOPICS)
    for type_name in TOPICS.values():
        words |= fields(adam.codec(type_name, MOTOR_COUNTS["pro"]).dtype)
    return words
