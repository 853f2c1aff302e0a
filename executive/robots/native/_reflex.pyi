"""Types of the C extension ``_reflex`` (the native core: ``reflex.h``); see ``__init__.py``."""

from collections.abc import Callable, Sequence
from typing import Any

WHY_FLAGS: int
WHY_SHORT: int
WHY_ENCAPSULATION: int
MAX_SAMPLE: int
MAX_STREAMS: int

class Core:
    def __init__(
        self,
        participant: int,
        estop_topic: int,
        estop_qos_from: int,
        nflags: int,
        stream_writers: Sequence[int],
        cancel_writer: int,
        cancel: bytes,
        cancel_id_at: int,
        cancel_stamp_at: int,
        cancel_id: int,
        on_trip: Callable[[], None] | None,
        rt_priority: int = ...,
        on_thread: Callable[[str, int, int, str], None] | None = ...,
    ) -> None: ...
    def divert(
        self, reader: int, callback: Callable[[Any], None] | None, reader_obj: Any, /
    ) -> None: ...
    def measure(
        self,
        slot: int,
        reader: int,
        max_age_s: float,
        min_size: int,
        state_at: Sequence[int],
        cmd_at: Sequence[int],
        lower: Sequence[float],
        upper: Sequence[float],
        /,
    ) -> None: ...
    def publish(self, slot: int, data: bytes, seen_trips: int, /) -> int: ...
    def store_hold(self, slot: int, data: bytes | None, fresh: bool = ..., /) -> None: ...
    def load_hold(self, slot: int, /) -> bytes | None: ...
    def fired(self, slot: int, /) -> bytes | None: ...
    def tripped(self) -> bool: ...
    def trips(self) -> int: ...
    def reset(self) -> None: ...
    def last_trip(self) -> dict[str, Any] | None: ...
    def stats(self) -> dict[str, int] | None: ...
    def close(self, restore: bool = ...) -> None: ...

def seqlock_selftest(seconds: float, stall: bool, /) -> dict[str, int]: ...
