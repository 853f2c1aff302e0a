"""Our side of the exchange test: the wire module (cyclonedds 11) against a vendor-built robot.

Run under .venv-aurora::

    .venv-aurora/bin/python tests/aurora/exchange_peer.py --domain 42 --commands cmds.json

Reads every state topic until one valid sample of each has arrived, waits until every command
writer has matched the robot's reader, writes each command of ``--commands`` (JSON: topic ->
fields) once, waits for the acknowledgements, and prints one JSON line: ``{"states": {topic:
fields}, "discovery_s": s}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from cyclonedds.util import duration

from executive.robots.aurora.wire.config import WireConfig
from executive.robots.aurora.wire.convert import build, plain
from executive.robots.aurora.wire.node import AuroraNode, is_valid
from executive.robots.aurora.wire.topics import STATE, type_for


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--namespace", default="")
    parser.add_argument("--ros", action="store_true")
    parser.add_argument("--commands", required=True)
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()
    config = WireConfig(domain=args.domain, namespace=args.namespace, ros_compatible=args.ros)
    commands: dict[str, Any] = json.loads(Path(args.commands).read_text())
    node = AuroraNode(config)
    t0 = time.monotonic()
    readers = {topic: node.reader(topic) for topic in STATE}
    writers = {topic: node.writer(topic) for topic in commands}
    states: dict[str, Any] = {}
    deadline = t0 + args.timeout
    while time.monotonic() < deadline:
        for topic, reader in readers.items():
            for sample in reader.take(N=8):
                if is_valid(sample) and topic not in states:
                    states[topic] = plain(sample)
        matched = all(w.get_matched_subscriptions() for w in writers.values())
        if matched and len(states) == len(readers):
            break
        time.sleep(0.01)
    else:
        missing = [t for t in readers if t not in states]
        unmatched = [t for t, w in writers.items() if not w.get_matched_subscriptions()]
        print(json.dumps({"error": "timeout", "no_state": missing, "unmatched": unmatched}))
        return 1
    discovery = time.monotonic() - t0
    for topic, fields in commands.items():
        writers[topic].write(build(type_for(config, topic), fields))
    for writer in writers.values():
        writer.wait_for_acks(duration(seconds=5))
    print(json.dumps({"states": states, "discovery_s": discovery}))
    node.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
