"""The e-stop benchmark's other processes: the independent subscriber, and a plain relay.

    python -m bench.estop_peer holds   # stamps each stream's hold command, one line each
    python -m bench.estop_peer amr     # stamps every AMR command
    python -m bench.estop_peer relay   # e-stop in, a marked UpperCmd_ out: the baseline

Both join the domain in ``ATOM_DDS_DOMAIN`` on the loopback config, print ``ready``
once their entities exist, and run until their standard input closes.

``holds`` listens to ``rt/upper/cmd``, ``rt/lower/cmd`` and ``rt/hands/cmd``, ``amr`` to
``rt/amr/cmd``: two processes, so the stamp of the AMR command never waits for this
side's handling of the holds sent just before it (a process's DDS samples are delivered
one after another on its receive thread). Each listener call first takes
``time.monotonic_ns()`` (CLOCK_MONOTONIC is system-wide, so it compares with the
publisher's stamp), then matches the samples, and hands its line to a printing thread:

    H <stream> <k> <t_ns>     the first command on <stream> carrying marker k (a hold)
    A <command_type> <t_ns>   every AMR command (the bench pairs CANCEL_TASKs to e-stops)

``bench/floor_c/peer.c`` speaks this protocol in C, and ``bench.episode.Peer`` runs it
instead once ``bench.floor.build`` has built it (``tests/integration/test_bench_peer``:
the same lines on the same traffic).

``relay`` is the executive's receive path and nothing else: the same ``RobotIO`` reader
with the precompiled codec and a callback on CycloneDDS's listener thread, which for the
n-th e-stop sample writes an ``UpperCmd_`` whose positions are marker n (counted from 0)
through the same raw writer the motion streamer uses. Publisher -> relay -> subscriber
is then the two-hop latency of DDS and the Python listener path alone.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from typing import Any

from cyclonedds.core import Listener
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from bench.harness import setup
from bench.robot import MARKERS, marker, marker_table
from executive.robots.atom.interface import Interface
from executive.robots.atom.streams import STREAMS
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.seam.profile import load_profile
from executive.wire import dds
from executive.wire.codec import Codec, raw_take
from executive.wire.robot_io import Side

_lines: queue.SimpleQueue[str] = queue.SimpleQueue()


def emit(line: str) -> None:
    """Queue a line for the printing thread (a listener must not wait on a pipe)."""
    _lines.put(line)


def _printer() -> None:
    while True:
        line = _lines.get()
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def holds(participant: Any, interface: Interface) -> list[Any]:
    profile = load_profile()
    entities: list[Any] = []
    for topic, (cmd_key, _, cmd_field, _) in STREAMS.items():
        spec = TOPICS[cmd_key]
        codec = Codec(getattr(interface, spec.type_name))
        table = marker_table(profile, interface, topic)
        seen: set[int] = set()

        def on_data(
            reader: Any,
            topic: str = topic,
            codec: Codec = codec,
            table: dict[bytes, int] = table,
            seen: set[int] = seen,
            field: str = cmd_field,
        ) -> None:
            t = time.monotonic_ns()
            if reader is None:
                return
            for data in raw_take(reader, 256):
                k = table.get(codec.decode(data)[field]["q"].tobytes())
                if k is not None and k not in seen:
                    seen.add(k)
                    emit(f"H {topic} {k} {t}")

        t = Topic(participant, spec.name, getattr(interface, spec.type_name))
        entities.append(
            DataReader(
                participant,
                t,
                qos=dds.EVENT_READER_QOS,
                listener=Listener(on_data_available=on_data),  # type: ignore[no-untyped-call]
            )
        )

    return entities


def amr(participant: Any, interface: Interface) -> list[Any]:
    def on_amr(reader: Any) -> None:
        t = time.monotonic_ns()
        if reader is None:
            return
        for sample in reader.take(N=64):
            if isinstance(sample, interface.AMRCommand_):
                kind = getattr(sample.command_type, "name", str(sample.command_type))
                emit(f"A {kind} {t}")

    spec = TOPICS["amr_cmd"]
    topic = Topic(participant, spec.name, getattr(interface, spec.type_name))
    return [
        DataReader(
            participant,
            topic,
            qos=dds.EVENT_READER_QOS,
            listener=Listener(on_data_available=on_amr),  # type: ignore[no-untyped-call]
        )
    ]


def relay(participant: Any, interface: Interface) -> list[Any]:
    profile = load_profile()
    io = AtomIO(
        participant,
        interface,
        side=Side.CONTROLLER,
        topics={k: TOPICS[k] for k in ("emergency_state", "upper_cmd")},
        records=("emergency_state", "upper_cmd"),
    )
    record = io.codec("upper_cmd").zeros()
    motors = record["motor_cmd"]
    motors["kp"], motors["kd"] = profile.gains("upper")
    count = [0]

    def on_estop(sample: Any) -> None:
        if not any(bool(sample[n]) for n in sample.dtype.names):
            return
        motors["q"] = marker(profile, "upper", count[0] % MARKERS)
        io.write_record("upper_cmd", record)
        count[0] += 1

    io.readers["emergency_state"].add_callback(on_estop)
    return [io]


def main(argv: list[str]) -> int:
    setup()
    roles = {"holds": holds, "amr": amr, "relay": relay}
    if len(argv) != 1 or argv[0] not in roles:
        print(__doc__, file=sys.stderr)
        return 2
    threading.Thread(target=_printer, name="printer", daemon=True).start()
    participant = dds.make_participant()
    try:
        entities = roles[argv[0]](participant, Interface())
        emit("ready")
        sys.stdin.read()  # until the bench closes our stdin
        del entities
    finally:
        dds.close_participant(participant)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
