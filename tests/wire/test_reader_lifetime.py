"""A latest-sample reader dropped while samples arrive must not take the process with it.

cyclonedds-python 0.10.2 deletes a reader in ``__del__`` only while its weak registry still
holds it; the garbage collector clears weak references before it finalizes a reference
cycle, so a reader whose callbacks reach back to it (a client's bound method, a lambda) was
never deleted in C and the receive thread called its freed listener: a segfault (the
simulated Adam's client did it in a test). ``LatestReader`` now deletes its DDS reader through
a finalizer that does not depend on that registry, and its listener holds it weakly.

The loop runs in a child process, so a crash fails this test instead of killing pytest.
Without the fix it crashed 3 of 3 runs within 100 iterations.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.dds

CHILD = textwrap.dedent(
    """
    import gc, sys, threading, time
    from dataclasses import dataclass

    from cyclonedds.core import DDSException
    from cyclonedds.idl import IdlStruct
    from cyclonedds.pub import DataWriter
    from cyclonedds.topic import Topic

    from executive.wire import dds
    from executive.wire.robot_io import LatestReader

    @dataclass
    class Ping(IdlStruct, typename="lifetime.Ping"):
        n: int = 0

    mode, rounds = sys.argv[1], int(sys.argv[2])
    participant = dds.make_participant()
    topic = Topic(participant, "lifetime/ping", Ping)
    writer = DataWriter(participant, topic, qos=dds.STATE_WRITER_QOS)
    stop = threading.Event()

    def pump() -> None:  # samples keep arriving while readers come and go
        n = 0
        while not stop.is_set():
            writer.write(Ping(n))
            n += 1
            time.sleep(0.0002)

    threading.Thread(target=pump, daemon=True).start()
    heard = 0
    for _ in range(rounds if mode == "in-callback" else 0):
        # the last reference goes with a callback's, on the listener's thread
        r = LatestReader(participant, topic, dds.STATE_READER_QOS)
        inside, go = threading.Event(), threading.Event()
        r.add_callback(lambda s, inside=inside, go=go: (inside.set(), go.wait(2.0)))
        assert inside.wait(2.0), "no callback"
        reader = r.reader
        del r
        gc.collect()
        go.set()
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            try:
                reader.take()
            except DDSException:
                heard += 1  # deleted, after the callback
                break
            time.sleep(0.005)
    for _ in range(0 if mode == "in-callback" else rounds):
        r = LatestReader(participant, topic, dds.STATE_READER_QOS)
        r.add_callback(lambda s, r=r: r.count)  # the callback keeps its reader: a cycle
        heard += r.wait_for(lambda s: True, 2.0) is not None
        if mode == "close":
            r.close()
            r.close()  # idempotent
        del r
        gc.collect()  # the cycle goes now, with samples in flight
        time.sleep(0.005)
    stop.set()
    dds.close_participant(participant)
    print("heard", heard, "of", rounds)
    """
)


@pytest.mark.parametrize("mode", ["dropped", "close", "in-callback"])
def test_a_reader_dropped_while_samples_arrive_does_not_crash(dds_domain: int, mode: str) -> None:
    """``in-callback``: the reader's last reference is dropped inside its own callback, so
    its finalizer runs on CycloneDDS's listener thread, where deleting it waited for the
    callback in flight, itself: the process hung (a CI worker, in dds_delete). Now the
    deletion is handed to a thread of its own and happens once the callback returns."""
    rounds = 20 if mode == "in-callback" else 100
    try:
        done = subprocess.run(
            [sys.executable, "-X", "faulthandler", "-c", CHILD, mode, str(rounds)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{mode}: the child hung (deadlocked deleting a reader): {e.stderr!r:.2000}")
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr[-3000:]}"
    assert done.stdout.split() == ["heard", str(rounds), "of", str(rounds)], done.stdout
