"""The simulated Aurora's fault and status control: JSON datagrams on a loopback UDP port.

A UDP socket on 127.0.0.1 works from any environment (the tests in ``.venv``, the sim in
``.venv-aurora``: no cyclonedds on the test's side, no generation to match). The sim prints
its port on its ready line (``{"ready": true, "control_port": N, ...}``). One request per
datagram, one JSON answer back to the sender: ``{"ok": true, "status": {...}}`` or
``{"ok": false, "error": "..."}``. Requests:

- ``{"fault": "fsm9"}``: security protection (FSM 9) raised; FSM commands refused until clear;
- ``{"fault": "group_error", "group": "left_manipulator"}``: that group's state 3;
- ``{"fault": "silence", "topics": [...], "duration": s}``: those state topics (all when
  omitted) stop being published, for ``duration`` s or until clear;
- ``{"fault": "undecodable", "topic": "aurora_state", "count": n}``: the next ``n`` (1)
  samples of that topic carry invalid UTF-8 in ``header.frame_id``: DDS delivers them, a
  Python reader's deserialization raises;
- ``{"clear": true}``: every fault cleared (the FSM stays 9 until commanded out);
- ``{"status": true}``: only the status.

``request(port, message)`` is the client (standard library; ``python -m
executive.robots.aurora.sim.control PORT '{"fault": "fsm9"}'`` from a shell).
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any

HOST = "127.0.0.1"


def request(port: int, message: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """Send ``message`` to the sim's control port; its answer (TimeoutError if none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.sendto(json.dumps(message).encode(), (HOST, port))
        data, _ = sock.recvfrom(1 << 20)
    answer: dict[str, Any] = json.loads(data)
    return answer


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m executive.robots.aurora.sim.control PORT JSON", file=sys.stderr)  # noqa: T201
        return 2
    answer = request(int(args[0]), json.loads(args[1]))
    print(json.dumps(answer))  # noqa: T201 - a command line
    return 0 if answer.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
