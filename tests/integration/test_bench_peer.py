"""The e-stop bench's C arrival peer (bench/floor_c/peer.c) reports what the Python one
(bench/estop_peer.py) reports, on the same traffic: the same markers on the same streams,
each once, and every AMR command by the same name; and ``floor.build`` makes it the
default of every later ``bench.episode.Peer``."""

from __future__ import annotations

import ctypes
import os
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cyclonedds.internal import DDS, dds_c_t

from bench import floor
from bench.episode import STREAM_NAMES, Peer
from bench.robot import marker_table
from executive.robots.atom.interface import Interface
from executive.robots.atom.streams import STREAMS
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.seam.profile import load_profile
from executive.wire.robot_io import Side

# markers per stream, none shared, so a peer that reads one stream's table for another's
# or the wrong joints reports the wrong k (or none)
SENT = {"upper": (0, 1234, 1999), "lower": (7, 500), "hands": (42, 1998)}
PEERS = 2  # each writer's readers: the C peer and the Python one


@pytest.fixture
def floors(tmp_path: Path) -> Iterator[floor.Floors]:
    built = floor.build(tmp_path)
    try:
        yield built
    finally:
        Peer.use_c(None)  # later tests' Peers: Python again


def _matched(writer: Any, count: int, timeout: float = 30) -> None:
    """Wait until ``writer`` has ``count`` readers, so nothing is written before discovery."""
    status = dds_c_t.publication_matched_status()
    get = DDS._dll_handle.dds_get_publication_matched_status
    get.argtypes = [dds_c_t.entity, ctypes.POINTER(dds_c_t.publication_matched_status)]
    deadline = time.monotonic() + timeout
    while get(writer._ref, ctypes.byref(status)) == 0 and status.current_count < count:
        assert time.monotonic() < deadline, f"{writer} matched {status.current_count} readers"
        time.sleep(0.02)


def _reported(peer: Peer) -> set[tuple[str, int]]:
    with peer._cond:
        return {(s, k) for k, streams in peer.holds.items() for s in streams}


def _covers(peer: Peer, expected: set[tuple[str, int]]) -> bool:
    return _reported(peer) >= expected


def _counted(peer: Peer, n: int) -> bool:
    return len(peer.amr) >= n


@pytest.mark.dds
def test_the_c_peer_reports_the_python_peers_lines(
    floors: floor.Floors, dds_domain: int, participant: Any
) -> None:
    env = dict(os.environ)
    peers = {
        "C": (Peer(env, "holds"), Peer(env, "amr")),  # floor.build made C the default
        "Python": (Peer(env, "holds", c=False), Peer(env, "amr", c=False)),
    }
    try:
        assert [p.kind for p in peers["C"]] == ["C", "C"]
        profile, interface = load_profile(), Interface()
        keys = [STREAMS[s][0] for s in STREAM_NAMES]
        io = AtomIO(
            participant,
            interface,
            side=Side.CONTROLLER,
            topics={k: TOPICS[k] for k in (*keys, "amr_cmd")},
            records=(*keys, "amr_cmd"),
        )
        for writer in io.writers.values():
            _matched(writer, PEERS)

        def write(topic: str, q: np.ndarray[Any, Any]) -> None:
            cmd_key, _, field, _ = STREAMS[topic]
            rec = io.codec(cmd_key).zeros()
            rec[field]["q"] = q
            io.write_record(cmd_key, rec)

        expected = set()
        for topic in STREAM_NAMES:
            by_k = {k: q for q, k in marker_table(profile, interface, topic).items()}
            q_dtype = io.codec(STREAMS[topic][0]).dtype[STREAMS[topic][2]].base["q"]
            for k in SENT[topic]:
                q = np.frombuffer(by_k[k], dtype=q_dtype).copy()
                near = q.copy()
                near[-1] = np.nextafter(near[-1], np.inf, dtype=q_dtype.base)
                write(topic, near)  # one ulp off in the last joint: no marker
                write(topic, np.zeros_like(q))  # the stream's background
                write(topic, q)
                expected.add((topic, k))
        amr = io.codec("amr_cmd")
        names = [t.name for t in interface.AMRCommandType]
        for name in (*names, "CANCEL_TASK"):
            rec = amr.zeros()
            rec["command_type"] = interface.AMRCommandType[name].value
            io.write_record("amr_cmd", rec)

        for kind, (holds, amrs) in peers.items():
            assert holds.wait(partial(_covers, holds, expected), 10), (kind, holds.holds)
            assert amrs.wait(partial(_counted, amrs, len(names) + 1), 10), (kind, amrs.amr)
        first = {kind: {k: dict(s) for k, s in h.holds.items()} for kind, (h, _) in peers.items()}
        after = time.monotonic_ns()
        for topic in STREAM_NAMES:  # again: the first command at a marker is the hold
            by_k = {k: q for q, k in marker_table(profile, interface, topic).items()}
            q_dtype = io.codec(STREAMS[topic][0]).dtype[STREAMS[topic][2]].base["q"]
            for k in SENT[topic]:
                write(topic, np.frombuffer(by_k[k], dtype=q_dtype))
        time.sleep(0.5)  # anything more either peer would say

        c_holds, c_amr = peers["C"]
        py_holds, py_amr = peers["Python"]
        assert _reported(c_holds) == _reported(py_holds) == expected
        assert [n for _, n in c_amr.amr] == [n for _, n in py_amr.amr] == [*names, "CANCEL_TASK"]
        for kind, (holds, _) in peers.items():
            assert holds.holds == first[kind], f"{kind}: a marker reported twice"
            stamps = [t for s in holds.holds.values() for t in s.values()]
            assert all(0 < t < after for t in stamps), kind  # CLOCK_MONOTONIC, ns
        assert all(0 < t < after for t, _ in c_amr.amr)
    finally:
        for pair in peers.values():
            for p in pair:
                p.close()


def test_a_peer_is_python_without_a_c_build_for_the_relay_and_once_the_build_is_gone(
    tmp_path: Path,
) -> None:
    Peer.use_c(None)
    with pytest.raises(RuntimeError, match="bench.floor.build"):
        Peer({}, "holds", c=True)
    program = tmp_path / "peer"
    program.touch()
    Peer.use_c(program, ())
    try:
        with pytest.raises(RuntimeError, match="no C peer for 'relay'"):
            Peer({}, "relay", c=True)
        program.unlink()  # bench/parts/reflex.py removes its build directory when its run ends
        with pytest.raises(RuntimeError, match="no C peer for 'amr'"):
            Peer({}, "amr", c=True)
    finally:
        Peer.use_c(None)
