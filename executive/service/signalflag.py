"""A flag that a signal handler may set, and a wait that wakes when it is set.

Python runs a signal handler on the main thread between two bytecodes, wherever the main
thread is, so a handler must not take a lock the main thread may hold at that bytecode.
``threading.Event`` does: ``set`` takes the event's lock (not reentrant), which ``wait``
holds for several bytecodes on its way in and out of its timed wait. A stop signal handled
there deadlocked the service's main thread for good (a SIGUSR1 mid-mission: the stop never
acted on, the head streamed on until SIGKILL; tests/test_signal_flag.py forces it).
"""

from __future__ import annotations

import contextlib
import os
import select


class SignalFlag:
    """A ``threading.Event`` that a signal handler may set: no lock, a flag and a pipe.

    ``set`` writes a byte that wakes ``wait``'s ``select`` at once, whether the handler ran
    before it (the byte is already there) or during it (``select`` is retried after the
    handler, PEP 475, and finds the byte). Any thread may read or wait; the service's
    main thread is the one that waits.
    """

    def __init__(self) -> None:
        self._flag = False
        self._r, self._w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    def set(self) -> None:
        self._flag = True
        with contextlib.suppress(BlockingIOError):  # the pipe is full: readable already
            os.write(self._w, b"\0")

    def is_set(self) -> bool:
        return self._flag

    def clear(self) -> None:
        self._flag = False
        try:
            while os.read(self._r, 512):
                pass
        except BlockingIOError:  # drained
            pass

    def wait(self, timeout: float | None = None) -> bool:
        """As ``Event.wait``: True once set, False when ``timeout`` s passed before."""
        if not self._flag:
            select.select([self._r], [], [], timeout)
        return self._flag
