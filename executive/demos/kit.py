"""What every demo is made of: the checks and the live tree (``Demo``), ``say``, ``accepted``
and the service's real-time report.

Each robot's demo (``executive/demos/<robot>.py``) and the fleet's
(``executive/demos/fleet.py``) build on these; ``executive.demos`` only
chooses which demo ``make demo`` runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from executive.harness.stack import LogTail, Stack
from executive.operator.lines import render_tree, summary
from executive.service.client import ExecutiveClient


def say(text: str) -> None:
    print(f"\n=== {text}", flush=True)  # noqa: T201 - the demo talks to a person


class Demo:
    """The checks an operator would make, and the live tree as the status changes."""

    def __init__(self) -> None:
        self.checks: list[tuple[str, bool]] = []
        self.last_tree = ""

    def check(self, what: str, ok: bool) -> bool:
        self.checks.append((what, ok))
        print(f"  [{'ok' if ok else 'FAILED'}] {what}", flush=True)  # noqa: T201
        return ok

    def reset_to_idle(self, client: ExecutiveClient) -> None:
        """The operator's reset once the cause has cleared: accepted, IDLE, and a second
        later still IDLE with no mission (nothing resumes on its own)."""
        reply = client.request("reset")
        self.check(f"reset accepted: {reply.message}", reply.code == 0)
        idle = client.wait_status(lambda s: s.state == "IDLE", 5)
        time.sleep(1.0)
        still = client.status()
        self.check(
            "idle after reset, nothing resumed",
            idle is not None and still.state == "IDLE" and not still.mission,
        )

    def summary(self, started: float) -> int:
        """The last lines: how many checks passed and in how long, each failed one; the
        exit code (1 if any failed)."""
        failed = [what for what, ok in self.checks if not ok]
        elapsed = time.monotonic() - started
        say(
            f"summary: {len(self.checks) - len(failed)}/{len(self.checks)} checks passed in {elapsed:.0f} s"
        )
        for what in failed:
            print(f"  FAILED: {what}")  # noqa: T201
        return 1 if failed else 0

    def show(self, client: ExecutiveClient) -> None:
        status = client.status()
        tree = render_tree(status)
        if tree != self.last_tree:
            self.last_tree = tree
            print(summary(status) + "\n" + tree + "\n", flush=True)  # noqa: T201

    def follow(
        self,
        client: ExecutiveClient,
        until: Callable[[Any], bool],
        timeout: float,
        every: float = 1.0,
    ) -> Any:
        """Print the tree as it changes (at most every ``every`` s) until ``until(status)``."""
        deadline = time.monotonic() + timeout
        next_show = 0.0
        while time.monotonic() < deadline:
            status = client.wait_status(until, 0.2)
            if time.monotonic() >= next_show:
                self.show(client)
                next_show = time.monotonic() + every
            if status is not None:
                self.show(client)
                return status
        return None


def realtime_report(stack: Stack) -> list[str]:
    """What the service got, from its log: the streamer's scheduling (SCHED_FIFO by default,
    normal priority where refused) and whether the e-stop reflex is armed."""
    found: dict[str, str] = {}
    deadline = time.monotonic() + 5
    log = LogTail(stack.log_path("executive"))
    while len(found) < 2 and time.monotonic() < deadline:
        for e in log.read():
            event = str(e.get("event", ""))
            if event in ("motion streamer scheduling", "motion streamer runs at normal priority"):
                refused = f" (wanted {e.get('wanted')}: {e.get('reason')})" if "reason" in e else ""
                found["streamer"] = f"motion streamer: {e.get('policy')}{refused}"
            elif event.startswith("e-stop reflex"):
                found["reflex"] = event
        time.sleep(0.05)
    return list(found.values())


def accepted(client: ExecutiveClient, reply: Any) -> bool:
    """The start was accepted and the status shows its run (the last status seen before
    the reply may still be the previous one: what follows must not judge by that)."""
    run_id = reply.message
    return reply.code == 0 and client.wait_status(lambda s: s.run_id == run_id, 10) is not None


def groot2_port(preferred: int = 1667) -> int:
    """Groot2's default port when it and the next are free here, else a free pair: the
    port the demo's service serves its tree on (``groot2:`` in its config)."""
    import socket

    for port in (preferred, *range(21667, 21767, 2)):
        with socket.socket() as a, socket.socket() as b:
            try:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return int(port)
    raise RuntimeError("no free pair of ports for the Groot2 publisher")


def groot2_tree(port: int, timeout_s: float = 3.0) -> str:
    """The tree the service serves to Groot2 (a ``T`` request, BehaviorTree.CPP's Groot2
    protocol); "" when it does not answer."""
    import zmq

    s = zmq.Context.instance().socket(zmq.REQ)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVTIMEO, int(timeout_s * 1000))
    s.connect(f"tcp://127.0.0.1:{port}")
    try:
        s.send(bytes((2, ord("T"), 1, 0, 0, 0)))
        reply = s.recv_multipart()
    except zmq.Again:
        return ""
    finally:
        s.close(linger=0)
    return reply[1].decode() if len(reply) == 2 and reply[0] != b"error" else ""


def groot2_hints(demo: Demo, port: int, mission: str) -> None:
    """Check that the service serves the running mission to Groot2 clients, and say how to
    watch it (btview, Groot2)."""
    tree = groot2_tree(port)
    demo.check(
        f"Groot2 publisher on 127.0.0.1:{port} serves the running tree ({mission} in its slot)",
        f'ID="{mission}"' in tree and "TreeNodesModel" in tree,
    )
    print(  # noqa: T201 - the demo talks to a person
        f"  watch it live: btview tui -p {port}   (or once: btview snapshot -p {port})\n"
        f"  in Groot2 (where installed): Monitor mode, Connect to localhost, port {port}",
        flush=True,
    )
