"""A stop signal is acted on wherever the main thread is in its wait (the SIGUSR1 hang).

Python runs a signal handler on the main thread between two bytecodes. The service's
handler set a ``threading.Event`` that the main thread waits on (``_supervise``:
``while not signals.stop.wait(0.5)``), and ``Event.set`` takes the lock that ``Event.wait``
holds for a few bytecodes on its way in and out of its timed wait: a signal handled at one
of them deadlocked the main thread (it waited for its own lock), the stop was never acted
on and the mission streamed on until the harness's SIGKILL 20 s later (one CI run of
tests/integration/test_signals.py). Rare because the window is a few bytecodes per 0.5 s;
this test forces the signal at each bytecode of the wait in turn (a trace function sends
it), so every window is tried on every run, in a child process with its own watchdog.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import faulthandler, os, signal, sys, threading, time
    from executive.service.run import Signals
    from executive.service.signalflag import SignalFlag

    faulthandler.dump_traceback_later(10, exit=True)  # a deadlock: where, then exit 1
    if sys.argv[1] == "service":  # _supervise: while not signals.stop.wait(0.5)
        signals = Signals()
        flag, timeout = signals.stop, 0.002
    else:  # the router: one stop.wait() with no timeout, set by its handler
        flag, timeout = SignalFlag(), None
        signal.signal(signal.SIGUSR1, lambda *_: flag.set())
    position = 0
    while True:
        position += 1
        seen, sent = [0], [0.0]

        def opcodes(frame, event, arg):
            seen[0] += 1
            if seen[0] == position:  # the handler runs at the next bytecode boundary
                sent[0] = time.monotonic()
                os.kill(os.getpid(), signal.SIGUSR1)
            return opcodes

        def calls(frame, event, arg):
            frame.f_trace_opcodes = True
            return opcodes(frame, event, arg)

        flag.clear()
        timer = threading.Timer(0.2, flag.set)  # past the wait's last bytecode no signal
        if timeout is None:  # comes: end the wait
            timer.start()
        print("position", position, flush=True)
        sys.settrace(calls)
        stopped = flag.wait(timeout)
        sys.settrace(None)
        timer.cancel()
        if seen[0] < position:  # past the wait's last bytecode: every one was tried
            break
        # seen by this wait, or (handled after it read the flag) by the next, at once
        stopped = stopped or flag.wait(0)
        took = time.monotonic() - sent[0]
        assert stopped, position
        assert took < 0.1, (position, took)  # woken by the signal, not a timeout
        if timeout is not None:
            assert signals.received == signal.SIGUSR1
            signals.received = 0
    print("tried", position - 1, "positions", flush=True)
    """
)


@pytest.mark.parametrize("waiter", ["service", "router"])
def test_a_stop_signal_at_any_bytecode_of_the_wait_is_acted_on(waiter: str) -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, waiter],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        pytest.fail(f"the child hung; last lines: {out.splitlines()[-3:]}")
    last = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    assert done.returncode == 0, (
        f"the main thread did not act on the signal at {last}:\n{done.stderr[-3000:]}"
    )
    tried = int(last[0].split()[1])
    assert tried >= 5, done.stdout  # the trace saw the wait's bytecodes (not a vacuous pass)
