"""A bounded hand-over from the executive's hot threads to one worker, drained in batches.

The recording of a run (``executive.records.runchannels``, ``executive.records.mcaprecord``) is fed from
the tick thread, the motion streamer's 500 Hz thread and CycloneDDS's receive thread.
A ``queue.Queue`` wakes its consumer on every ``put``; under CPython the woken thread
then takes the GIL, and the producer, when it next needs it, waits for it. Measured on
the simulated Atom (head_scan, 2 shared cores): the streamer's publish hook took 32 us
a publish on a ``queue.Queue``, 3 to 4 us on this hand-over; the tick thread's hook
370 us on average (wall clock), 250 to 290 us here, of which 50 us its own CPU time
(the rest is waiting for the GIL, which the DDS listeners and the streamer also want).

Here a producer appends to a ``collections.deque`` (atomic under the GIL: no lock, no
wake-up) and returns; the worker wakes every ``period`` seconds, or at once on
``close``, and handles everything there is. Bounded by ``limit``: past it ``put``
refuses (returns False) and the caller counts the drop; the bound is checked without a
lock, so it may be passed by the few items that race it, never by more.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Batches(Generic[T]):
    """``put`` from any thread; ``handle`` runs on the worker thread, item by item."""

    def __init__(
        self,
        handle: Callable[[T], None],
        *,
        name: str,
        period: float,
        limit: int,
        on_error: Callable[[BaseException], None],
        idle: Callable[[], None] | None = None,
        final: Callable[[], None] | None = None,
    ) -> None:
        self._handle = handle
        self._on_error = on_error
        self._idle = idle  # after every drain (a deadline to keep without traffic)
        self._final = final  # once, on the worker, after the last drain
        self.period = period
        self.limit = limit
        self._items: collections.deque[T] = collections.deque()
        self._stop = threading.Event()
        self._cycles = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, item: T) -> bool:
        """Hand ``item`` over; False (nothing done) when ``limit`` items are waiting."""
        if len(self._items) >= self.limit:
            return False
        self._items.append(item)
        return True

    def _run(self) -> None:
        while True:
            stopping = self._stop.wait(self.period)
            self._drain()
            if self._idle is not None:
                self._guard(self._idle)
            self._cycles += 1
            if stopping:
                if self._final is not None:
                    self._guard(self._final)
                return

    def _drain(self) -> None:
        while True:
            try:
                item = self._items.popleft()
            except IndexError:
                return
            try:
                self._handle(item)
            except Exception as e:  # noqa: BLE001 - one bad item must not end the worker
                self._on_error(e)

    def _guard(self, call: Callable[[], None]) -> None:
        try:
            call()
        except Exception as e:  # noqa: BLE001 - the worker must outlive any one failure
            self._on_error(e)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until what was put before this call has been handled; False on timeout."""
        deadline = time.monotonic() + timeout
        start = self._cycles
        while self._cycles < start + 2 or self._items:  # one whole drain after the call
            if time.monotonic() >= deadline or not self._thread.is_alive():
                return not self._items and self._cycles >= start + 2
            time.sleep(min(0.01, self.period))
        return True

    def close(self, timeout: float = 2.0) -> bool:
        """Handle what is waiting, run ``final`` and stop; False if that took too long."""
        self._stop.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def __len__(self) -> int:
        return len(self._items)
