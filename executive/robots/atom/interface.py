"""Wire types of the Dobot Atom, selected by interface variant.

The vendor's own material shows at least three generations of the interface (DESIGN.md
3.1). A variant is a choice along four independent axes; presets name the combinations
seen in vendor releases. Everything else in the executive asks this module for the type
classes instead of importing generated code, so one config key switches the whole wire.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

# axis -> choice -> generated package holding that axis's types (None: the default package)
AXES: dict[str, dict[str, str | None]] = {
    "upper_state": {"with_imu": None, "no_imu": "upper_state_no_imu"},
    "set_fsm_id": {"with_action": None, "id_only": "set_fsm_id_only"},
    "emergency_state": {"three_flags": None, "four_flags": "emergency_state_di"},
    "amr_command_type": {"seed": None, "move_to_charge": "amr_cmd_move_to_charge"},
}
# which wire types each axis replaces
_AXIS_TYPES: dict[str, tuple[str, ...]] = {
    "upper_state": ("UpperState_",),
    "set_fsm_id": ("SetFsmId_",),
    "emergency_state": ("EmergencyState_",),
    "amr_command_type": ("AMRCommandType", "AMRCommand_"),
}
PRESETS: dict[str, dict[str, str]] = {
    # DESIGN.md's default: the seed documents as corrected there.
    "seed": {
        "upper_state": "with_imu",
        "set_fsm_id": "with_action",
        "emergency_state": "three_flags",
        "amr_command_type": "seed",
    },
    # Dobot-Arm/dobot_atom_sdk 1.0.1 headers.
    "sdk-1.0.1": {
        "upper_state": "no_imu",
        "set_fsm_id": "id_only",
        "emergency_state": "three_flags",
        "amr_command_type": "seed",
    },
    # Dobot-Arm/dobot_atom_sdk 1.1.0.0-rc1 headers.
    "sdk-1.1.0": {
        "upper_state": "no_imu",
        "set_fsm_id": "with_action",
        "emergency_state": "four_flags",
        "amr_command_type": "seed",
    },
}
DEFAULT_PRESET = "seed"


class VariantError(ValueError):
    """An unknown preset, axis or choice; the message names it and the valid ones."""


@dataclass(frozen=True)
class Variant:
    """A resolved interface variant: a preset plus per-axis overrides."""

    preset: str = DEFAULT_PRESET
    overrides: tuple[tuple[str, str], ...] = ()
    choices: dict[str, str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise VariantError(
                f"unknown interface preset {self.preset!r}; known: {sorted(PRESETS)}"
            )
        choices = dict(PRESETS[self.preset])
        for axis, choice in self.overrides:
            if axis not in AXES:
                raise VariantError(f"unknown interface axis {axis!r}; known: {sorted(AXES)}")
            if choice not in AXES[axis]:
                raise VariantError(
                    f"unknown choice {choice!r} for interface axis {axis!r}; known: {sorted(AXES[axis])}"
                )
            choices[axis] = choice
        object.__setattr__(self, "choices", choices)

    @property
    def name(self) -> str:
        """A stable human-readable name, e.g. ``seed`` or ``sdk-1.1.0+amr_command_type=move_to_charge``."""
        extra = [f"{a}={c}" for a, c in self.overrides if PRESETS[self.preset][a] != c]
        return "+".join([self.preset, *extra])

    @classmethod
    def parse(cls, text: str) -> Variant:
        """Parse ``preset[+axis=choice...]``."""
        preset, *rest = text.strip().split("+")
        overrides = []
        for item in rest:
            axis, sep, choice = item.partition("=")
            if not sep:
                raise VariantError(f"interface override {item!r} must be axis=choice")
            overrides.append((axis.strip(), choice.strip()))
        return cls(preset.strip() or DEFAULT_PRESET, tuple(overrides))


def _dds_module(package: str) -> ModuleType:
    return importlib.import_module(f"executive.wire.gen.{package}.dobot_atom.msg.dds_")


class Interface:
    """The type classes of one variant, as attributes named like the IDL types.

    ``Interface(Variant()).UpperCmd_`` is the class to write to ``rt/upper/cmd``.
    """

    def __init__(self, variant: Variant | None = None) -> None:
        self.variant = variant or Variant()
        default = _dds_module("default")
        self._types: dict[str, Any] = {n: getattr(default, n) for n in default.__all__}
        for axis, choice in self.variant.choices.items():
            package = AXES[axis][choice]
            if package is not None:
                module = _dds_module(package)
                for type_name in _AXIS_TYPES[axis]:
                    self._types[type_name] = getattr(module, type_name)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_types"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def type_names(self) -> list[str]:
        return sorted(self._types)
