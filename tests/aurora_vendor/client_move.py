"""The vendor's own ``AuroraClient`` drives a robot: connect, take FSM 11, move an arm.

Run under .venv-aurora-vendor with FASTDDS_BUILTIN_TRANSPORTS=NONE (loopback only)::

    FASTDDS_BUILTIN_TRANSPORTS=NONE .venv-aurora-vendor/bin/python \
        tests/aurora_vendor/client_move.py --domain 42

Only the vendor's code: ``AuroraClient(domain, qos, robot_name, namespace)`` with the
loopback participant profile, then its own setters and getters. Prints one JSON object:
``connect_s`` (the client's constructor: every subscriber and publisher matched), the FSM
it read back, the target it sent to ``--group`` and the positions it read back, and
``reached`` (every joint within 1e-3 rad of the target before ``--timeout``). Exit 0 when
reached.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common
from fourier_aurora_client import AuroraClient


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domain", type=int, default=123)
    parser.add_argument("--namespace", default="")
    parser.add_argument("--group", default="left_manipulator")
    parser.add_argument(
        "--offset",
        default="0.3,0.3,0.3,-0.3,0.3,0.3,0.3",
        help="rad added to each joint: one value for all, or one per joint (default: 0.3, the "
        "left elbow -0.3: the GR-3's elbow bends one way only, 0.07 rad past straight)",
    )
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    out: dict[str, object] = {}
    t0 = time.monotonic()
    client = AuroraClient.get_instance(
        args.domain, common.participant_qos(), None, args.namespace or None
    )
    if client is None:
        print(json.dumps({"error": "AuroraClient refused the robot"}))
        return 1
    out["connect_s"] = time.monotonic() - t0
    try:
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:
            try:
                start = client.get_group_state(args.group, "position")
                client.get_fsm_state()
                break
            except KeyError:
                time.sleep(0.02)
        else:
            print(json.dumps({**out, "error": "no state read"}))
            return 1
        out["start"] = list(start)
        client.set_fsm_state(11)
        while time.monotonic() < deadline and client.get_fsm_state() != 11:
            time.sleep(0.02)
        out["fsm"] = client.get_fsm_state()
        offsets = [float(x) for x in args.offset.split(",")]
        if len(offsets) == 1:
            offsets *= len(start)
        target = [q + d for q, d in zip(start, offsets, strict=True)]
        out["target"] = target
        reached = False
        while time.monotonic() < deadline:
            client.set_group_cmd({args.group: target})  # the vendor's way: resend the goal
            time.sleep(0.02)
            now = client.get_group_state(args.group, "position")
            if all(abs(a - b) < 1e-3 for a, b in zip(now, target, strict=True)):
                reached = True
                break
        out["reached"] = reached
        out["final"] = list(client.get_group_state(args.group, "position"))
        out["move_s"] = time.monotonic() - t0 - float(out["connect_s"])  # type: ignore[arg-type]
        print(json.dumps(out))
        return 0 if reached else 1
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main())
