"""A robot in simulated time: what a robot gives ``executive.scenario`` to test missions.

A mission's scenario (``atom-executive test``) runs in simulated time: the service's own
assembly (``executive.core.runtime.Runtime`` on a ``SimClock``) against the robot's own
simulator, both in one process, over the robot's in-process wire, stepped in lockstep
with the tick. The engine is robot-neutral; what is the robot's is one module of its own,
named by its spec (``RobotSpec.lockstep``: ``".lockstep:PART"``), which holds a
``LockstepPart``:

- ``open``: the simulator on that wire (``executive.wire.loop.LoopBus``, or the robot's
  own stand-in for its middleware), whose participant the executive's adapter opens on;
- the world a scenario may set (``world:``: the simulator's start-up settings, checked
  before anything runs) and the faults it may inject (the simulator's own fault specs);
- for ``--realtime``, the same scenario against the real processes: the simulator's
  command line and a client that injects faults into it over its real wire (and, if its
  status is not the simulated Atom's, ``sim_ready(stack, pid) -> bool``: whether the
  simulator process ``pid`` is up, as ``Stack.start_sim`` takes it); a robot whose wire is
  not the service's DDS domain (the GRX's zenoh) also has ``real_wire`` (``RealWire``:
  where the processes meet on it).

The Dobot Atom's is ``executive/robots/atom/lockstep.py``: the model to follow.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol


class LockstepRobot(Protocol):
    """A simulated robot stepped by the scenario engine, on its in-process wire."""

    participant: Any  # what the executive's adapter opens on (``open_adapter(participant=)``)
    interface: Any  # the interface variant the executive must speak (None: the default)

    def due(self) -> float:
        """The simulated time of the simulator's next work (its jobs' next deadline)."""
        ...

    def run_due(self, now: float) -> None:
        """Run what is due by ``now``: the commands received since, then its jobs."""
        ...

    def fault(self, spec: str, now: float) -> None:
        """Set a fault (the simulator's spec, ``estop-soft``); ValueError saying why not."""
        ...

    def clear(self, spec: str, now: float) -> None:
        """Clear a fault (``KIND[:TARGET]``); ValueError saying why not."""
        ...

    def press(self, button: str, now: float) -> None:
        """A fresh press of an operator button (the Atom's gamepad)."""
        ...

    def record(self) -> Path:
        """The simulator's record of every command it received (``simkit.record``), up to now."""
        ...

    def close(self) -> None: ...


class FaultClient(Protocol):
    """``--realtime``: faults and buttons into the simulator process, over its real wire."""

    def fault(self, spec: str) -> None: ...
    def clear(self, spec: str) -> None: ...
    def press(self, button: str) -> None: ...


class RealWire(Protocol):
    """``--realtime`` on a wire of the robot's own (the GRX's zenoh), from the optional
    ``real_wire(workdir)`` of a part: what makes the service, the simulator process and
    the fault client meet on it. Without it, the service's DDS domain is the wire."""

    service_config: Mapping[str, Any]  # more keys of the service's config (zenoh_config)
    sim_args: Sequence[str]  # more arguments of ``atom-executive sim`` (its endpoints)

    def sim_ready(self, stack: Any, pid: int) -> bool:
        """Whether the simulator process (``pid``) came up (``Stack.start_sim``'s)."""
        ...

    def fault_client(self) -> FaultClient: ...
    def close(self) -> None: ...


class LockstepPart(Protocol):
    """What a robot's ``lockstep`` module offers (``RobotSpec.lockstep``)."""

    # the ``world:`` keys a scenario may set, each with what it means (for messages, docs);
    # the engine refuses any other key, naming ``simulator`` ("the simulated Atom")
    world_keys: Mapping[str, str]
    simulator: str
    # the buttons ``press:`` takes (empty: the robot has none)
    buttons: tuple[str, ...]

    def check_world(self, world: Mapping[str, Any], base: Path) -> list[tuple[str, str]]:
        """Problems with ``world``'s values (its keys are ``world_keys``; relative paths
        from ``base``): (key, message) each."""
        ...

    def check_fault(self, spec: str, world: Mapping[str, Any]) -> str | None:
        """Why ``spec`` is not a fault this robot's simulator takes in ``world`` (None if
        it is)."""
        ...

    def motion_after(self, record: Path, after: float, before: float = ...) -> list[str]:
        """The commands in the simulator's ``record`` taken after ``after`` (and up to
        ``before``) that move the robot, one line each: its joints (not a hold) or its
        base. The simulator's clock: simulated time, or ``time.monotonic()``."""
        ...

    def open(
        self,
        profile: Any,
        clock: Any,
        world: Mapping[str, Any],
        base: Path,
        record: Path,
    ) -> LockstepRobot:
        """The simulator in simulated time on ``clock``, recording to ``record``."""
        ...

    def sim_argv(self, profile: Any, world: Mapping[str, Any], base: Path) -> list[str]:
        """``--realtime``: the arguments of ``atom-executive sim`` for this world."""
        ...

    def fault_client(self, participant: Any) -> FaultClient:
        """``--realtime``: faults and buttons into the running simulator process."""
        ...
