"""The gate every joint command passes on its way out (``executive.robots.native`` is one).

The motion streamer publishes only through a ``Gate``. With a robot's e-stop reflex
installed the gate refuses a command computed before a trip the streamer has not seen
yet, and keeps each stream's hold for the reflex to write; without one, ``PythonGate``
writes every command and never trips.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol


class Gate(Protocol):
    """What the motion streamer asks of the reflex (``PythonGate`` when there is none)."""

    def publish(self, slot: int, data: bytes, seen: int) -> bool:
        """Write one joint command; False (nothing written) if the reflex tripped after the
        ``seen``-th trip: the command was computed before the streamer knew."""
        ...

    def store_hold(self, slot: int, data: bytes | None, fresh: bool = False) -> None:
        """The stream's hold as the reflex would write it now (None: not engaged);
        ``fresh``: frozen at a measurement, which a newer one may replace at the trip
        (not a hold already being sent: a hold does not move)."""
        ...

    def fired(self, slot: int) -> bytes | None:
        """While tripped, the hold the reflex wrote for the stream (None: none)."""
        ...

    def tripped(self) -> bool: ...

    def trips(self) -> int: ...


class PythonGate:
    """No reflex: every command is written by its stream as it comes; nothing ever trips.

    ``keeps_holds`` False: it has no use for the holds, so the streamer does not compute
    them (a stream's measured position, encoded, every period: half a Python period's
    cost; issue 31)."""

    keeps_holds = False

    def __init__(self, writers: Sequence[Callable[[bytes], None]]) -> None:
        self._writers = list(writers)

    def publish(self, slot: int, data: bytes, seen: int) -> bool:
        self._writers[slot](data)
        return True

    def store_hold(self, slot: int, data: bytes | None, fresh: bool = False) -> None:
        pass

    def fired(self, slot: int) -> bytes | None:
        return None

    def tripped(self) -> bool:
        return False

    def trips(self) -> int:
        return 0
