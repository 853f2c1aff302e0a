"""Status as data: one versioned JSON document, and its DDS sample published on change
and as a heartbeat.

``status_document`` builds the document (schema ``atom-executive/status`` version 1,
``executive/resources/status.schema.json``): state, mission, run id (the last run's,
with its result, once it has ended), the active node, every node with its feedback and
progress (fraction, elapsed, time left), the safety condition with every cause, the
counters, the robot's telemetry from its robot-neutral snapshot (so every robot shows the
same fields: the base's pose where the robot reports one, each joint stream's measured
positions by joint name, which ``pose teach`` reads) with the age of each source, the
interface variant, profile, robot (and the profile's description of it), version, and when it
was produced. ``atom-executive status --json`` prints it.

The truth about motion (``telemetry.motion``): whatever the robot itself reports about moving
(``RobotAdapter.motion``: the firmware task and whether it drives the robot, the velocity last
sent and last seen, the base's task and speed, joint speeds) and which joint streams this
executive is publishing. A robot that moves while no mission of ours runs is one of the
``problems``. ``recovery`` is the look at start for what a previous instance left
(executive/service/recovery.py).

The DDS ``Status_`` carries it whole in ``document`` (JSON), beside the structured fields
existing clients read (``watch`` renders the tree's, now with per-node progress). One
JSON string rather than mirroring every field in IDL: the document is versioned by its
own ``schema``/``version`` and checked by its JSON Schema, so a field added later does
not change the DDS type (a ``@final`` struct: every reader and writer must agree on it).
Version 1 grows by optional fields only and its schema allows properties it does not name,
so a version-1 client keeps working when a later 1.x adds one (it must ignore them); a
field removed, renamed or changed in meaning is version 2. The tests hold the executive's
own documents to exactly the named properties.

The topic is reliable and transient-local with a history of one, so a client that
joins late (``atom-executive status``, ``cyclonedds subscribe``) gets the latest
status at once.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from typing import Any, cast

import py_trees
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic

from behaviours.base import RobotLeaf
from behaviours.state import SNAPSHOT_KEY
from behaviours.state import snapshot as read_snapshot
from executive import __version__
from executive.core.tree import ExecState, Executive, MissionRun, Paused, node_path
from executive.seam.ports import Motion, RobotSnapshot, Stamped
from executive.service.protocol import STATUS_QOS, STATUS_TOPIC
from executive.text import json_finite
from executive.wire.gen.own.atom_executive.msg import NodeStatus_, SourceStatus_, Status_

FEED_LINES = 20
SCHEMA = "atom-executive/status"
VERSION = 1
DIGITS = 3  # seconds and fractions to the millisecond: enough to show, short to send
POSITION_DIGITS = 4  # rad: measured joints to 0.1 mrad (a taught pose keeps them within 1 mrad)
TICK_FRESH_S = 0.25  # s: a tick's snapshot older than this is not the state now (a stalled loop)


def schema() -> dict[str, Any]:
    """The JSON Schema of the status document (shipped in ``executive/resources``)."""
    text = resources.files("executive").joinpath("resources/status.schema.json").read_text()
    return cast(dict[str, Any], json.loads(text))


class RunningSince:
    """When each node last started RUNNING, for elapsed times (composites have no clock
    of their own; a robot leaf's ``started_at`` is exact and wins). ``update`` after every
    tick: a node first seen RUNNING one tick late is at most one tick off."""

    def __init__(self) -> None:
        self.since: dict[Any, float] = {}

    def update(
        self,
        root: py_trees.behaviour.Behaviour,
        now: float,
        nodes: Iterable[py_trees.behaviour.Behaviour] | None = None,
    ) -> None:
        """``nodes``: the tree's nodes, walked already (``Executive.nodes``)."""
        running = set()
        for node in root.iterate() if nodes is None else nodes:
            if node.status is py_trees.common.Status.RUNNING:
                running.add(node.id)
                self.since.setdefault(node.id, now)
        for gone in self.since.keys() - running:
            del self.since[gone]


def _round(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, DIGITS)


def node_progress(
    node: py_trees.behaviour.Behaviour, now: float, since: Mapping[Any, float]
) -> tuple[float | None, float | None, float | None]:
    """(progress 0..1, elapsed s, time left s) of a RUNNING node; None where unknown.
    A leaf's ``progress()`` that raises reports nothing rather than stop the status."""
    if node.status is not py_trees.common.Status.RUNNING:
        return None, None, None
    if isinstance(node, RobotLeaf) and node.context is not None:
        try:
            elapsed: float | None = node.elapsed()
            fraction, left = node.progress()
        except Exception:  # noqa: BLE001 - a leaf's bug must not silence the status
            return None, None, None
        if fraction is not None:
            fraction = min(1.0, max(0.0, fraction))
        if left is not None:
            left = max(0.0, left)
        return _round(fraction), _round(elapsed), _round(left)
    started = since.get(node.id)
    return None, None if started is None else _round(max(0.0, now - started)), None


def tree_document(
    root: py_trees.behaviour.Behaviour, now: float, since: Mapping[Any, float]
) -> list[dict[str, Any]]:
    """Every node of the tree, depth-first: path, kind, status, feedback, depth, progress."""
    out: list[dict[str, Any]] = []
    # depth-first with a stack, not a nested function calling itself: that is a reference
    # cycle (function -> closure cell -> function) holding ``out``, left for the cyclic
    # collector at every status publish (issue 25, 8)
    todo: list[tuple[py_trees.behaviour.Behaviour, int]] = [(root, 0)]
    while todo:
        node, depth = todo.pop()
        fraction, elapsed, left = node_progress(node, now, since)
        out.append(
            {
                "path": node_path(node),
                "kind": type(node).__name__,
                "status": node.status.value,
                "feedback": node.feedback_message,
                "depth": depth,
                "progress": fraction,
                "elapsed_s": elapsed,
                "time_left_s": left,
            }
        )
        todo.extend((child, depth + 1) for child in reversed(node.children))
    return out


def _stamped(
    value: Stamped[Any] | None, now: float, **fields: Callable[[Any], Any]
) -> dict[str, Any] | None:
    if value is None:
        return None
    out = {name: get(value.sample) for name, get in fields.items()}
    out["age_s"] = _round(now - value.received)
    return out


def telemetry(snap: RobotSnapshot, max_age: Mapping[str, float], now: float) -> dict[str, Any]:
    """The robot's state as every robot reports it (``None``: this robot does not report
    it, or has not yet), each value with its age, and every state source's health."""
    positions = _positions(snap)
    sources = []
    for key in [*snap.sources, *(k for k in max_age if k not in snap.sources)]:
        source = snap.sources.get(key)
        received = None if source is None else source.received
        limit = max_age.get(key)
        age = None if received is None else now - received
        health = None if source is None else source.health
        sources.append(
            {
                "key": key,
                "name": key if source is None else source.name,
                "age_s": _round(age),
                "max_age_s": limit,
                "silent": limit is not None and (age is None or age > limit),
                "decode_errors": health.errors if health else 0,
                "callback_errors": health.callback_errors if health else 0,
                "last_error": health.last_error if health else "",
                "undecodable": bool(health and health.undecodable),
            }
        )
    return {
        "battery": _stamped(snap.battery, now, percent=lambda v: _round(float(v))),
        "fsm": _stamped(snap.fsm, now, id=int),
        "control": _stamped(snap.control, now, held=bool),
        "estop": _stamped(snap.estop, now, on=list, any=bool),
        "alarms": _stamped(snap.alarms, now, active=list),
        "servo_errors": _stamped(snap.servo_errors, now, errors=list),
        "base": _stamped(
            snap.base,
            now,
            tasking=lambda b: b.tasking,
            status=lambda b: b.status.name,
            task_id=lambda b: b.task_id,
            estop_pressed=lambda b: b.estop_pressed,
            busy=lambda b: b.busy,
            pose=lambda b: _pose(b.pose),
        ),
        "buttons": _stamped(snap.buttons, now, held=sorted),
        "task": _stamped(snap.task, now, id=lambda t: int(t[0]), in_process=lambda t: bool(t[1])),
        "joints": {
            stream: {
                "count": len(q.sample),
                "age_s": _round(now - q.received),
                "position": positions.get(stream, {}),
            }
            for stream, q in snap.joints.items()
        },
        "sources": sources,
    }


def _positions(snap: RobotSnapshot) -> dict[str, dict[str, float | None]]:
    """Each stream's measured joints by the profile's names (rad, to 0.1 mrad): what
    ``pose teach`` takes from a running executive (no second reader of the robot)."""
    out: dict[str, dict[str, float | None]] = {}
    for name, (stream, i) in snap.layout.items():
        q = snap.joints.get(stream)
        if q is not None and i < len(q.sample):
            value = float(q.sample[i])
            out.setdefault(stream, {})[name] = (
                round(value, POSITION_DIGITS) if math.isfinite(value) else None
            )
    return out


VELOCITY: dict[str, Callable[[Any], Any]] = {  # a ports.Velocity's rates, rounded
    "forward": lambda v: _round(v.forward),
    "lateral": lambda v: _round(v.lateral),
    "yaw": lambda v: _round(v.yaw),
}


def motion_document(motion: Motion, engaged: list[str], now: float) -> dict[str, Any]:
    """``telemetry.motion``: what the robot reports about moving (``None``: not reported),
    each value with its age, and the joint streams this executive publishes now."""

    return {
        "moving": motion.moving,
        "reasons": list(motion.reasons),
        "task": _stamped(
            motion.task,
            now,
            id=lambda t: t.id,
            name=lambda t: t.name,
            in_process=lambda t: t.in_process,
            drives=lambda t: t.drives,
        ),
        "velocity_sent": _stamped(motion.velocity_sent, now, **VELOCITY),
        "velocity_seen": _stamped(motion.velocity_seen, now, **VELOCITY),
        "base_task": _stamped(motion.base_task, now, id=int),
        "base_speed": _stamped(
            motion.base_speed,
            now,
            linear=lambda v: _round(v[0]),
            angular=lambda v: _round(v[1]),
        ),
        "joint_speed": {
            stream: {"max": _round(v.sample), "age_s": _round(now - v.received)}
            for stream, v in motion.joint_speed.items()
        },
        "streams_engaged": sorted(engaged),
    }


def _motion(executive: Executive, now: float) -> tuple[dict[str, Any] | None, list[str]]:
    """The motion document and the problems it makes: a robot that moves while no mission
    of ours runs. An adapter that fails to say is a problem, never a silent status."""
    ex = executive
    try:
        motion = ex.adapter.motion()
    except Exception as e:  # noqa: BLE001 - a robot adapter's bug must not silence the status
        return None, [f"motion: the robot adapter could not say ({type(e).__name__}: {e})"]
    problems = []
    if motion.moving and ex.run is None:
        problems.append(
            f"the robot moves while no mission runs ({ex.state.value}): "
            + "; ".join(motion.reasons)
        )
    return motion_document(motion, ex.streamer.engaged(), now), problems


def _pose(pose: tuple[float, float, float] | None) -> dict[str, float | None] | None:
    """The base's pose (x, y m; yaw rad) to the millimetre; None where the robot reports
    none (a non-finite value is already None in the snapshot, and ``json_finite`` besides)."""
    if pose is None:
        return None
    x, y, yaw = pose
    return {"x": _round(x), "y": _round(y), "yaw": _round(yaw)}


def _run(run: MissionRun | None, now: float) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "id": run.run_id,
        "mission": run.name,
        "result": run.result.value if run.result else None,
        "reason": run.reason,
        "elapsed_s": _round(now - run.started_at) if run.result is None else None,
    }


def _iso(unix: float) -> str:
    return (
        datetime.datetime.fromtimestamp(unix, datetime.UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def _paused(paused: Paused, now: float) -> dict[str, Any]:
    """What a pause holds and since when (the document's optional ``paused``): asked at
    ``since``; ``held_since`` once every held joint was measured at rest (null while the
    robot is still coming to rest), with the largest distance a joint has moved since."""
    rest = paused.rest
    held = paused.held_since_unix
    return {
        "since": _iso(paused.since_unix),
        "for_s": _round(max(0.0, now - paused.since)),
        "by": paused.by,
        "what": list(paused.what),
        "held_since": None if held is None else _iso(held),
        "rest_after_s": None if rest.rest_at is None else _round(rest.rest_at - paused.since),
        "drift_mrad": None if rest.rest_at is None else round(rest.drift * 1e3, 3),
    }


def status_document(
    executive: Executive,
    *,
    interface_variant: str | None = None,
    profile: str = "",
    executive_id: str = "",
    seq: int = 0,
    counters: tuple[int, int] | None = None,
    problems: list[str] | None = None,
    running_since: Mapping[Any, float] | None = None,
    recovery: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The status document (schema ``atom-executive/status``, version 1) of ``executive``
    now. Call it on the tick thread (it reads the tree). ``counters``: (ticks, overruns)
    from the runtime, which counts overruns; ``running_since``: a ``RunningSince``'s map
    for the composites' elapsed times; ``recovery``: the look at start for what a previous
    instance left (``PreviousInstance.document``), None before the service has one."""
    ex = executive
    wall = time.time()
    mono = time.monotonic()
    clock = ex.clock()
    snap = ex.state_now()
    run, last = ex.run, ex.last_run
    ticks, overruns = counters if counters else (ex.counters.ticks, ex.counters.overruns)
    causes = ex.monitor.reasons
    kept = run or last
    tree = tree_document(ex.tree.root, clock, running_since or {})
    robot = telemetry(snap, ex.monitor.max_age, mono)
    motion, moving = _motion(ex, mono)
    robot["motion"] = motion
    doc = {
        "schema": SCHEMA,
        "version": VERSION,
        "produced_at": {
            "wall": datetime.datetime.fromtimestamp(wall, datetime.UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "monotonic": round(mono, 6),
        },
        "executive_id": executive_id,
        "seq": seq,
        "state": ex.state.value,
        "mission": run.name if run else None,
        "run_id": kept.run_id if kept else None,
        "run": _run(run, clock),
        "last_run": _run(last, clock),
        "active_node": (active_node(ex.tree.root) or None) if run else None,
        "tree": tree,
        "feed": [m for _, m in ex.context.feed[-FEED_LINES:]],
        "safety": {
            "condition": "SAFE_STOP" if causes else "CLEAR",
            "latched": ex.monitor.latched,
            "causes": [{"code": c.code, "message": c.message} for c in causes],
        },
        "not_ready": ex.blockers(),
        "problems": list(problems or ()) + moving,
        "counters": {
            "ticks": ticks,
            "overruns": overruns,
            "tick_errors": ex.counters.tick_errors,
            "decode_errors": sum(s["decode_errors"] for s in robot["sources"]),
            "runs": ex.counters.runs,
        },
        "robot": ex.adapter.name,
        "robot_description": ex.context.profile.description or ex.context.profile.name,
        "interface_variant": ex.adapter.interface_name
        if interface_variant is None
        else interface_variant,
        "profile": profile or ex.context.profile.name,
        "executive_version": __version__,
        "telemetry": robot,
    }
    if recovery is not None:
        doc["recovery"] = dict(recovery)
    if ex.paused is not None:
        doc["paused"] = _paused(ex.paused, clock)
    return cast(dict[str, Any], json_finite(doc))


def tree_nodes(doc: Mapping[str, Any]) -> list[NodeStatus_]:
    """The document's nodes as ``NodeStatus_`` (-1: no progress, elapsed or time left)."""
    return [
        NodeStatus_(
            path=n["path"],
            kind=n["kind"],
            status=n["status"],
            feedback=n["feedback"],
            depth=n["depth"],
            progress=-1.0 if n["progress"] is None else n["progress"],
            elapsed_s=-1.0 if n["elapsed_s"] is None else n["elapsed_s"],
            time_left_s=-1.0 if n["time_left_s"] is None else n["time_left_s"],
        )
        for n in doc["tree"]
    ]


def sources(doc: Mapping[str, Any]) -> list[SourceStatus_]:
    """The document's safety sources (those with a maximum age) as ``SourceStatus_``."""
    return [
        SourceStatus_(
            topic=s["name"],
            age_s=-1.0 if s["age_s"] is None else s["age_s"],
            max_age_s=s["max_age_s"],
            decode_errors=s["decode_errors"],
            last_error=s["last_error"],
            undecodable=s["undecodable"],
        )
        for s in doc["telemetry"]["sources"]
        if s["max_age_s"] is not None
    ]


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
        self._bb = py_trees.blackboard.Client(name="Status Publisher")
        self._bb.register_key(SNAPSHOT_KEY, access=py_trees.common.Access.READ)
        self.problems: Callable[[], list[str]] = list  # conditions to report (run records ...)
        self.running = RunningSince()  # when each node started RUNNING (elapsed times)
        # the look at start for what a previous instance left (PreviousInstance.document)
        self.recovery: Callable[[], Mapping[str, Any] | None] = lambda: None

    def document(self) -> dict[str, Any]:
        """The status document now (a new ``seq``)."""
        self.seq += 1
        return status_document(
            self.executive,
            interface_variant=self.interface_variant,
            profile=self.profile,
            executive_id=self.executive_id,
            seq=self.seq,
            counters=self.counters() if self.counters else None,
            problems=self.problems(),
            running_since=self.running.since,
            recovery=self.recovery(),
        )

    def snapshot(self) -> Status_:
        doc = self.document()
        run, last = doc["run"], doc["last_run"]
        safety = doc["safety"]
        counters = doc["counters"]
        return Status_(
            executive_id=self.executive_id,
            seq=doc["seq"],
            stamp_ns=time.time_ns(),
            state=doc["state"],
            mission=doc["mission"] or "",
            run_id=run["id"] if run else "",
            active_node=doc["active_node"] or "",
            safety=safety["condition"],
            safety_reason="; ".join(f"{c['code']}: {c['message']}" for c in safety["causes"]),
            last_result=last["result"] or "" if last else "",
            last_reason=last["reason"] if last else "",
            tree=cast(Any, tree_nodes(doc)),
            feed=cast(Any, doc["feed"]),
            ticks=counters["ticks"],
            overruns=counters["overruns"],
            tick_errors=counters["tick_errors"],
            runs=counters["runs"],
            interface_variant=doc["interface_variant"],
            profile=doc["profile"],
            version=doc["executive_version"],
            sources=cast(Any, sources(doc)),
            not_ready="; ".join(doc["not_ready"]),
            problems=cast(Any, doc["problems"]),
            document=json.dumps(doc, separators=(",", ":"), allow_nan=False),
        )

    def _key(self) -> Any:
        ex = self.executive
        return (
            ex.state,
            ex.run.run_id if ex.run else None,
            ex.paused is not None,
            ex.paused is not None and ex.paused.rest.at_rest,
            # the nodes themselves (compared by identity), not their ids: a UUID compare
            # costs more than the rest (issue 31)
            tuple((n, n.status, n.feedback_message) for n in ex.nodes()),
            len(ex.context.feed),
            tuple(ex.monitor.reasons),
            # which sources are silent, not their ages: those change every tick
            tuple((x.topic, x.age is None) for x in ex.monitor.silent(self._judged())),
            ex.interface_mismatches,
            ex.conflicts,
            tuple(self.problems()),
        )

    def _judged(self) -> RobotSnapshot:
        """The snapshot the last tick gathered (the blackboard's) while ticks run: no second
        read of the robot's readers after each tick (issue 22). The robot's state now when
        that one is older than ``TICK_FRESH_S``: the loop stalled, and this runs from the
        supervisor."""
        snap = read_snapshot(self._bb)
        if snap.taken and 0.0 <= self.clock() - snap.taken < TICK_FRESH_S:
            return snap
        return self.executive.state_now()

    def maybe_publish(self) -> bool:
        """Publish if anything changed or the heartbeat is due; True if it published."""
        with self._lock:
            now = self.clock()
            ex = self.executive
            self.running.update(ex.tree.root, ex.clock(), ex.nodes())
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
        paused = "" if ex.paused is None else " PAUSED" if ex.paused.rest.at_rest else " PAUSING"
        return f"RUNNING{paused} {ex.run.name} ({ex.run.run_id})"
    last = ex.last_run
    tail = f" (last: {last.name} {last.result.value})" if last and last.result else ""
    return f"{ex.state.value}{tail}"
