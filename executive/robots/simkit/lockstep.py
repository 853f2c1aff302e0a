"""A ``SimNode`` simulator stepped by the scenario engine (``executive.seam.lockstep``).

The Atom's and the Adam's simulators are both ``SimNode``s: a scheduler of jobs, simkit's
fault specs and a command record. What stepping one in simulated time takes is the same for
both, so it is here; each robot's ``lockstep.py`` builds its sim on a ``LoopBus`` and adds
what is its own (the Atom's buttons).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from executive.clock import SimClock
from executive.robots.simkit.faults import parse_clear, parse_fault
from executive.robots.simkit.node import SimNode
from executive.wire.loop import LoopBus


class NodeLockstep:
    """``sim`` on ``participant`` (a ``LoopBus``): the ``LockstepRobot`` the engine steps."""

    no_buttons = "this robot has no buttons"  # ``press``'s answer where it has none

    def __init__(
        self, clock: SimClock, participant: LoopBus, sim: SimNode, interface: Any, record: Any
    ) -> None:
        self.participant = participant
        self.clock = clock
        self.sim = sim
        self.interface = interface
        self._record = record
        self._scheduler = sim.scheduler

    def due(self) -> float:
        return self._scheduler.due()

    def run_due(self, now: float) -> None:
        self._scheduler.run_due(now)

    def fault(self, spec: str, now: float) -> None:
        self.sim.apply_fault("set", parse_fault(spec), now, source="scenario")

    def clear(self, spec: str, now: float) -> None:
        self.sim.apply_fault("clear", parse_clear(spec), now, source="scenario")

    def press(self, button: str, now: float) -> None:
        raise ValueError(self.no_buttons)

    def record(self) -> Path:
        if self.sim.recorder is not None:
            self.sim.recorder.flush()
        assert self._record is not None
        return Path(self._record)

    def close(self) -> None:
        self.sim.close()


@dataclass
class NodeFaultClient:
    """``--realtime``: a simkit ``SimClient`` as the engine's ``FaultClient``."""

    client: Any
    no_buttons = "this robot has no buttons"

    def fault(self, spec: str) -> None:
        self.client.inject_spec(spec)

    def clear(self, spec: str) -> None:
        self.client.request("clear", parse_clear(spec))

    def press(self, button: str) -> None:
        raise ValueError(self.no_buttons)
