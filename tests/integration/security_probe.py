"""One DDS participant with whatever identity its CYCLONEDDS_URI gives it, and what it could do.

tests/integration/test_dds_security.py runs it as a process of its own, once for each
identity: DDS Security is enforced between processes (CycloneDDS matches the readers and
writers of one process locally, without the security plugins). For ``--for`` seconds it
reads the executive's status, sends one unsigned read-only ``status`` request (no HMAC
needed, so what stops it can only be DDS Security) and, with ``--fake-status ID``, writes
forged status samples. Then it prints one JSON object:

  statuses       executive ids of the status samples it read, in order of arrival
  status_reader  "ok", or why its status reader could not be created
  client         "ok", or why its request writer could not be created
  reply          code and message of the reply to its request, or null
  request        "replied", or why there was no reply
  fake_writer    "ok" or why the forged status writer could not be created (--fake-status)
  sim_seen       whether it read the simulated Atom's status (atom_sim/status, left open):
                 the proof that it is on the domain and discovered, whatever else it was denied
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, cast

from cyclonedds.core import DDSException, Listener
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.robots.atom.sim.client import SimClient
from executive.service.client import ExecutiveClient, NoExecutiveError
from executive.service.protocol import STATUS_QOS, STATUS_TOPIC
from executive.wire import dds
from executive.wire.gen.own.atom_executive.msg import Status_


def probe(seconds: float, fake_status: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {"statuses": [], "status_reader": "ok", "client": "ok"}
    result.update(reply=None, request="not sent")
    seen: list[str] = result["statuses"]

    def on_status(reader: DataReader[Status_]) -> None:
        for sample in reader.take(N=64):
            if isinstance(sample, Status_) and sample.executive_id not in seen:
                seen.append(sample.executive_id)

    with dds.open_participant() as participant:
        deadline = time.monotonic() + seconds
        sim = SimClient(participant)
        readers = []  # held: a reader nobody refers to is deleted
        try:
            readers.append(
                DataReader(
                    participant,
                    Topic(participant, STATUS_TOPIC, Status_),
                    qos=STATUS_QOS,
                    listener=Listener(on_data_available=on_status),  # type: ignore[no-untyped-call]
                )
            )
        except DDSException as e:
            result["status_reader"] = f"refused: {e}"
        fake: DataWriter[Status_] | None = None
        if fake_status is not None:
            try:
                fake = DataWriter(
                    participant, Topic(participant, STATUS_TOPIC, Status_), qos=STATUS_QOS
                )
                result["fake_writer"] = "ok"
            except DDSException as e:
                result["fake_writer"] = f"refused: {e}"
        client = ExecutiveClient(participant, client_id="probe")  # reads status only
        try:
            client.writer  # noqa: B018 - the request writer, made on first use
        except DDSException as e:
            result["client"] = f"refused: {e}"
        else:
            try:
                reply = client.request("status", timeout=max(0.1, deadline - time.monotonic()))
                result["reply"] = {"code": reply.code, "message": reply.message}
                result["request"] = "replied"
            except NoExecutiveError as e:
                result["request"] = str(e)
        seq = 0
        while time.monotonic() < deadline:
            if fake is not None:
                seq += 1
                fake.write(_forged(fake_status or "", seq))
            time.sleep(0.2)
        result["sim_seen"] = sim.status() is not None
    return result


def _forged(executive_id: str, seq: int) -> Status_:
    """A status that says all is well, from someone who is not the executive."""
    return Status_(
        executive_id=executive_id,
        seq=seq,
        stamp_ns=time.time_ns(),
        state="IDLE",
        mission="",
        run_id="",
        active_node="",
        safety="CLEAR",
        safety_reason="",
        last_result="",
        last_reason="",
        tree=cast(Any, []),
        feed=cast(Any, []),
        ticks=0,
        overruns=0,
        tick_errors=0,
        runs=0,
        interface_variant="",
        profile="",
        version="",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="security_probe", description=__doc__)
    parser.add_argument("--for", dest="seconds", type=float, default=5.0)
    parser.add_argument("--fake-status", metavar="ID", help="write forged status samples as ID")
    args = parser.parse_args(argv)
    print(json.dumps(probe(args.seconds, args.fake_status)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
