"""The link between the Aurora adapter and its bridge (executive/robots/aurora/ipc.py), on a
real socket pair: order, EOF, and what a broken stream says."""

from __future__ import annotations

import math
import struct
import threading
import time

import pytest

from executive.robots.aurora import ipc


def test_messages_arrive_whole_and_in_order_from_two_threads() -> None:
    ours, theirs = ipc.pair()
    a, b = ipc.Channel(ours), ipc.Channel(theirs)
    q = [0.1 * i for i in range(7)]

    def burst(tag: str) -> None:
        for i in range(500):
            a.send({"t": ipc.GROUP, "g": tag, "i": i, "q": q})

    threads = [threading.Thread(target=burst, args=(tag,)) for tag in ("x", "y")]
    for t in threads:
        t.start()
    got: dict[str, list[int]] = {"x": [], "y": []}
    for _ in range(1000):
        m = b.recv()
        assert m is not None
        assert m["q"] == q  # floats round-trip exactly (repr)
        got[m["g"]].append(m["i"])
    for t in threads:
        t.join()
    assert got == {"x": list(range(500)), "y": list(range(500))}
    a.close()
    assert b.recv() is None  # EOF: the other end is gone


def test_a_frame_cut_short_is_eof() -> None:
    ours, theirs = ipc.pair()
    ours.sendall(ipc.encode({"t": ipc.PING})[:-2])
    ours.close()
    assert ipc.Channel(theirs).recv() is None


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (struct.pack(">I", ipc.MAX_FRAME + 1), "frame of"),
        (struct.pack(">I", 3) + b"\xff\xfe\xfd", "not a JSON frame"),
        (struct.pack(">I", 2) + b"[]", "not a message"),
        (struct.pack(">I", 8) + b'{"x": 1}', "not a message"),
    ],
)
def test_a_broken_stream_says_why(raw: bytes, why: str) -> None:
    ours, theirs = ipc.pair()
    ours.sendall(raw)
    with pytest.raises(ipc.FrameError, match=why):
        ipc.Channel(theirs).recv()


def test_a_non_finite_number_never_leaves() -> None:
    with pytest.raises(ValueError):
        ipc.encode({"t": ipc.GROUP, "q": [math.nan]})


def test_a_bounded_send_to_a_peer_that_reads_nothing_gives_up() -> None:
    ours, theirs = ipc.pair()
    a = ipc.Channel(ours)
    frame = ipc.encode({"t": ipc.GROUP, "g": "left_manipulator", "q": [0.0] * 7})
    t = time.monotonic()
    with pytest.raises(TimeoutError):
        for _ in range(1_000_000):  # the socket's buffer fills, then the bound ends it
            a.send_frame(frame, timeout=0.05)
    assert time.monotonic() - t < 10
    theirs.close()
