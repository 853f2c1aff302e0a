"""Status over DDS: a snapshot of the executive, published on change and as a heartbeat.

The topic is reliable and transient-local with a history of one, so a client that
joins late (``atom-executive status``, ``cyclonedds subscribe``) gets the latest
status at once. A snapshot carries the whole tree (path, kind, status, feedback of
every node, depth-first), so a client can render it without knowing the mission.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, cast

import py_trees
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic

from executive import __version__
from executive.core import ExecState, Executive, node_path
from executive.wire.gen.own.atom_executive.msg import NodeStatus_, SourceStatus_, Status_

STATUS_TOPIC = "atom/executive/status"
STATUS_QOS = Qos(
    Policy.Reliability.Reliable(0),
    Policy.Durability.TransientLocal,
    Policy.History.KeepLast(1),
)
FEED_LINES = 20


def tree_nodes(root: py_trees.behaviour.Behaviour) -> list[NodeStatus_]:
    """Every node of the tree, depth-first, with its path, kind, status and feedback."""
    out = []

    def visit(node: py_trees.behaviour.Behaviour, depth: int) -> None:
        out.append(
            NodeStatus_(
                node_path(node),
                type(node).__name__,
                node.status.value,
                node.feedback_message,
                depth,
            )
        )
        for child in node.children:
            visit(child, depth + 1)

    visit(root, 0)
    return out


def sources(executive: Executive, now: float) -> list[SourceStatus_]:
    """Every safety source: its age, its limit and what could not be decoded on it."""
    out = []
    snap = executive.state_now()
    for topic, limit in executive.monitor.max_age.items():
        source = snap.sources.get(topic)
        received = None if source is None else source.received
        health = None if source is None else source.health
        out.append(
            SourceStatus_(
                topic=topic if source is None else source.name,
                age_s=-1.0 if received is None else round(now - received, 4),
                max_age_s=limit,
                decode_errors=health.errors if health else 0,
                last_error=health.last_error if health else "",
                undecodable=bool(health and health.undecodable),
            )
        )
    return out


def active_node(root: py_trees.behaviour.Behaviour) -> str:
    """Path of the deepest RUNNING node under the mission slot ('' when none)."""
    tip = root.tip()
    return (
        node_path(tip) if tip is not None and tip.status is py_trees.common.Status.RUNNING else ""
    )


class StatusPublisher:
    """Builds and writes ``Status_`` samples; call ``maybe_publish`` after every tick."""

    def __init__(
        self,
        participant: DomainParticipant,
        executive: Executive,
        *,
        interface_variant: str,
        profile: str,
        heartbeat_hz: float = 2.0,
        counters: Callable[[], tuple[int, int]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.executive = executive
        self.writer: DataWriter[Status_] = DataWriter(
            participant, Topic(participant, STATUS_TOPIC, Status_), qos=STATUS_QOS
        )
        self.interface_variant = interface_variant
        self.profile = profile
        self.heartbeat = 1.0 / heartbeat_hz
        self.counters = counters
        self.clock = clock
        self.executive_id = f"{socket.gethostname()}:{os.getpid()}"
        self.seq = 0
        self._last_key: Any = None
        self._last_sent = -1e9
        # the tick thread publishes after each tick; the runtime's supervisor while it stalls
        self._lock = threading.Lock()
        self.problems: Callable[[], list[str]] = list  # conditions to report (run records ...)

    def snapshot(self) -> Status_:
        ex = self.executive
        run, last = ex.run, ex.last_run
        ticks, overruns = (
            self.counters() if self.counters else (ex.counters.ticks, ex.counters.overruns)
        )
        reasons = ex.monitor.reasons
        self.seq += 1
        return Status_(
            executive_id=self.executive_id,
            seq=self.seq,
            stamp_ns=time.time_ns(),
            state=ex.state.value,
            mission=run.name if run else "",
            run_id=run.run_id if run else "",
            active_node=active_node(ex.tree.root) if run else "",
            safety="SAFE_STOP" if reasons else "CLEAR",
            safety_reason="; ".join(map(str, reasons)),
            last_result=last.result.value if last and last.result else "",
            last_reason=last.reason if last else "",
            tree=cast(Any, tree_nodes(ex.tree.root)),
            feed=cast(Any, [m for _, m in ex.context.feed[-FEED_LINES:]]),
            ticks=ticks,
            overruns=overruns,
            tick_errors=ex.counters.tick_errors,
            runs=ex.counters.runs,
            interface_variant=self.interface_variant,
            profile=self.profile,
            version=__version__,
            sources=cast(Any, sources(ex, time.monotonic())),
            not_ready="; ".join(ex.blockers()),
            problems=cast(Any, self.problems()),
        )

    def _key(self) -> Any:
        ex = self.executive
        return (
            ex.state,
            ex.run.run_id if ex.run else None,
            tuple((n.id, n.status, n.feedback_message) for n in ex.tree.root.iterate()),
            len(ex.context.feed),
            tuple(ex.monitor.reasons),
            # which sources are silent, not their ages: those change every tick
            tuple((x.topic, x.age is None) for x in ex.monitor.silent(ex.state_now())),
            ex.interface_mismatches,
            ex.conflicts,
            tuple(self.problems()),
        )

    def maybe_publish(self) -> bool:
        """Publish if anything changed or the heartbeat is due; True if it published."""
        with self._lock:
            now = self.clock()
            key = self._key()
            if key == self._last_key and now - self._last_sent < self.heartbeat:
                return False
            self._last_key, self._last_sent = key, now
            self.writer.write(self.snapshot())
            return True


def state_line(executive: Executive) -> str:
    """One line for systemd's STATUS=: state, mission and safety."""
    ex = executive
    if ex.state is ExecState.SAFE_STOP:
        return "SAFE_STOP: " + "; ".join(map(str, ex.monitor.reasons))
    if ex.run is not None:
        return f"RUNNING {ex.run.name} ({ex.run.run_id})"
    last = ex.last_run
    tail = f" (last: {last.name} {last.result.value})" if last and last.result else ""
    return f"{ex.state.value}{tail}"
