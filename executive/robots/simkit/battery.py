"""The battery: one pack, which each robot's sim reports in its own fields.

It drains slowly (so a long demo shows a falling level and battery logic can be tried
without waiting hours, set ``drain_per_min``), charges on the charger, and can be forced
to a level by the BATTERY_LEVEL fault without losing the simulated level underneath.
"""

from __future__ import annotations

from dataclasses import dataclass

CELLS = 16
CELL_EMPTY_MV = 3300
CELL_FULL_MV = 4150


@dataclass
class Battery:
    level: float = 85.0  # percent
    drain_per_min: float = 0.5
    charge_per_min: float = 30.0
    override: float | None = None  # the BATTERY_LEVEL fault

    def step(self, dt: float, *, charging: bool) -> None:
        rate = self.charge_per_min if charging else -self.drain_per_min
        self.level = min(100.0, max(0.0, self.level + rate * dt / 60.0))

    @property
    def reading(self) -> float:
        """The level the robot reports, percent."""
        return self.level if self.override is None else self.override

    @property
    def cell_mv(self) -> int:
        return int(CELL_EMPTY_MV + (CELL_FULL_MV - CELL_EMPTY_MV) * self.reading / 100.0)

    @property
    def pack_voltage(self) -> float:
        return CELLS * self.cell_mv / 1000.0
