"""A run as Foxglove channels: robot state, every command sent, the tree and events.

The same channels feed two sinks: the MCAP file of each run (``executive.records.mcaprecord``)
and, when enabled, the live Foxglove WebSocket view (``executive.records.foxglove_live``). Every
channel is JSON with a JSON Schema, which Foxglove reads without plugins; joints are
keyed by their profile name, so a plot path reads ``/robot/joints/upper.position.
right_elbow_pitch`` rather than an index that differs between the two upper-body orders.

Channels (``catalogue``):

The robot's channels come from the robot-neutral snapshot each tick gathers (the
blackboard's ``executive.seam.ports.RobotSnapshot``, not a second read of the robot's
readers), so an Atom, an Adam and a GRX record the same channels; joint streams are the
profile's (``profile.topics``: ``upper``, ``lower``, ``hands`` on the Atom, ``body`` ... on
others):

- ``/robot/joints/<stream>``: measured position by joint name, at most ``STATE_HZ`` (the
  500 Hz state is decimated at the tick).
- ``/robot/status``: FSM id, control, battery percent, BMS alarms, servo errors, the
  firmware task; ``null`` where the robot does not report it. At most ``STATUS_HZ``.
- ``/robot/emergency``: the e-stop inputs that are on, and ``any`` (every change, else at
  most ``STATUS_HZ``).
- ``/robot/base``: navigation status by name, tasking, busy, task id, the base's own
  e-stop, and its pose as ``position`` x, y (m), yaw (rad), each null where the robot
  reports no pose (the Adam, the GRX). At most ``STATE_HZ``.
- ``/robot/sources``: every state source's age, maximum age and decode errors, at most
  ``STATUS_HZ``.
- ``/cmd/joints/<stream>``: the streamer's targets by joint name and whether it holds, at
  most ``COMMAND_HZ`` (every change of ``held`` is kept whatever the rate).
- ``/cmd/oneshot``: every one-shot command in full (control, FSM, clear errors, base).
- ``/executive/tree``: the whole tree (path, kind, status, feedback, depth) when a status
  changes, and at most every ``FEEDBACK_S`` when only feedback does.
- ``/executive/events``: state changes (with the result, reason and safety causes at a
  run's end) and safety latches and clears with every cause.
- ``/executive/log``: the same events as ``foxglove.Log`` lines, for the Log panel.
- ``/robot/transforms`` and ``/robot/model``, where the profile has a body model: every
  link's transform (``foxglove.FrameTransforms``, forward kinematics of the measured
  joints, at most ``bodychannels.TRANSFORMS_HZ``) and the model's collision shapes
  (``foxglove.SceneUpdate``), so Foxglove's 3D panel shows the robot moving
  (``executive.records.bodychannels``). A profile without one gets neither, said once in
  the log.

Threads. The hooks run where things happen: ``on_tick``/``on_change`` on the tick thread,
the publish tap on the motion streamer's thread, the command tap wherever a command is
sent (the e-stop fast path's cancel: CycloneDDS's receive thread). They only take
references and stamps and put them on a bounded queue, never waiting; an encoder thread
turns them into JSON and hands them to the sinks, whose own ``write`` never waits either
(the MCAP sink queues for its writer thread). A full queue drops the item and counts it;
``problems()`` says so, as ``RunRecorder`` does for the JSON-lines record. While no sink
wants messages (no run's file open, no viewer subscribed: ``Sink.wants``) the encoder
encodes nothing: it keeps the last pre-roll of raw items and encodes them at the next
run's begin, so an idle service pays for references, not JSON and transforms.

Times are wall-clock nanoseconds (what Foxglove shows and a person correlates with the
journal): ``log_time`` when the hook saw it, never decreasing along the stream (items
from several threads may reach the queue a few microseconds out of order: the encoder
lifts such a stamp to the previous one), and ``publish_time`` when the sample arrived
from the robot (its reader's receive time) or the command left. On a simulated clock
(``clock=``, an ``executive.clock.SimClock``: a mission's test) both are its wall clock.
"""

from __future__ import annotations

import collections
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import py_trees
import structlog

from behaviours.state import SNAPSHOT_KEY
from behaviours.state import snapshot as read_snapshot
from executive import __version__
from executive.core.taps import CommandTap, chain_publish
from executive.core.tree import Executive, MissionRun
from executive.logs import RateLimitedLog
from executive.motion.streamer import MotionStreamer
from executive.motion.trajectory import FloatArray
from executive.records import bodychannels
from executive.records.batches import Batches
from executive.seam.ports import BaseState, RobotSnapshot, Stamped
from executive.seam.profile import RobotProfile
from executive.text import json_finite

log = structlog.get_logger(__name__)

STATE_HZ = 50.0  # measured joints: a tenth of the 500 Hz state topics
STATUS_HZ = 10.0  # FSM, control, battery, alarms, sources' ages: slow by nature
COMMAND_HZ = 50.0  # joint targets: a tenth of the 500 Hz streams
FEEDBACK_S = 0.5  # a tree whose statuses did not change is sent again at most this often
QUEUE_ITEMS = 8192  # ~10 s of a busy run's items
ENCODE_PERIOD_S = 0.02  # the encoder's batches: what the live view lags by, at most
LOG_INTERVAL = 10.0  # s between repeated log lines about dropped items
DIGITS = 5  # rad to 10 urad: the JSON stays short and nothing a plot shows is lost

# foxglove.Log's JSON Schema (Foxglove's own schema, trimmed to the fields we send)
_LOG_LEVELS = {"debug": 1, "info": 2, "warning": 3, "error": 4, "fatal": 5}
_LOG_SCHEMA = {
    "title": "foxglove.Log",
    "type": "object",
    "properties": {
        "timestamp": {
            "type": "object",
            "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}},
        },
        "level": {"type": "integer", "description": "1 debug, 2 info, 3 warning, 4 error, 5 fatal"},
        "message": {"type": "string"},
        "name": {"type": "string"},
        "file": {"type": "string"},
        "line": {"type": "integer"},
    },
}


@dataclass(frozen=True)
class Channel:
    """A topic with its JSON Schema (encoding ``json``, schema encoding ``jsonschema``).

    ``static``: a message (JSON) that holds for a whole run, which every run file starts
    with and the live view sends at each run's start (the robot's model); empty: none."""

    topic: str
    schema_name: str
    schema: dict[str, Any]
    static: bytes = b""

    @property
    def schema_data(self) -> bytes:
        return json.dumps(self.schema, sort_keys=True).encode()


@dataclass(frozen=True)
class Message:
    topic: str
    log_ns: int
    publish_ns: int
    data: bytes  # JSON


class Sink(Protocol):
    """Where encoded messages go; every call comes from the encoder thread and must not
    wait for a disk or a network (queue, or hand over to a library that does).

    ``wants(log_ns)``: whether it needs a message of that time now (a run's file open or in
    its tail, a viewer subscribed). While no sink does, the encoder keeps the raw items of
    the last ``preroll_ns`` (the most any sink asks for) and encodes them at the next run's
    begin, in order, before the begin: an idle service encodes nothing (issue 22)."""

    preroll_ns: int  # how much before a run's begin it records

    def wants(self, log_ns: int) -> bool: ...
    def begin(self, run_id: str, info: dict[str, str], log_ns: int) -> None: ...
    def end(self, run_id: str, info: dict[str, str], log_ns: int) -> None: ...
    def write(self, message: Message) -> None: ...
    def problems(self) -> list[str]: ...
    def close(self) -> None: ...


def _obj(properties: dict[str, Any], title: str = "", **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if title:
        schema["title"] = title
    return schema


def _numbers(names: Iterable[str], unit: str) -> dict[str, Any]:
    return _obj({n: {"type": ["number", "null"], "description": unit} for n in names})


def catalogue(profile: RobotProfile) -> dict[str, Channel]:
    """Every channel of a run, by topic, for this profile (any robot: the joint streams
    are the profile's, the rest is the robot-neutral snapshot's)."""
    channels: list[Channel] = []
    for topic, names in profile.topics.items():
        channels.append(
            Channel(
                f"/robot/joints/{topic}",
                f"atom_executive.MeasuredJoints.{topic}",
                _obj(
                    {"position": _numbers(names, "rad")},
                    f"Measured {topic} joints, by profile joint name",
                ),
            )
        )
        channels.append(
            Channel(
                f"/cmd/joints/{topic}",
                f"atom_executive.JointTargets.{topic}",
                _obj(
                    {
                        "position": _numbers(names, "rad"),
                        "held": {
                            "type": "boolean",
                            "description": "the streamer holds (safety): no new motion",
                        },
                    },
                    f"Joint targets the executive sent on the {topic} stream",
                ),
            )
        )
    texts = {"type": ["array", "null"], "items": {"type": "string"}}
    channels.append(
        Channel(
            "/robot/status",
            "atom_executive.RobotStatus",
            _obj(
                {
                    "fsm_id": {"type": ["integer", "null"]},
                    "control": {"type": ["boolean", "null"], "description": "control held"},
                    "battery_percent": {"type": ["number", "null"]},
                    "alarms": {**texts, "description": "battery-management alarms"},
                    "servo_errors": {**texts, "description": "``left_arm[2]=0x0010`` ..."},
                    "task": _obj(
                        {"id": {"type": "integer"}, "in_process": {"type": "boolean"}},
                        type=["object", "null"],
                    ),
                },
                "The robot's state besides joints (null: this robot does not report it)",
            ),
        )
    )
    channels.append(
        Channel(
            "/robot/emergency",
            "atom_executive.Emergency",
            _obj(
                {
                    "on": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the e-stop inputs that are on",
                    },
                    "any": {"type": "boolean"},
                },
                "The robot's e-stop inputs",
            ),
        )
    )
    channels.append(
        Channel(
            "/robot/base",
            "atom_executive.Base",
            _obj(
                {
                    "status": {"type": "string"},
                    "tasking": {"type": "boolean"},
                    "busy": {"type": "boolean"},
                    "task_id": {"type": "integer"},
                    "estop_pressed": {"type": "boolean", "description": "the base's own"},
                    "position": _obj(
                        {
                            "x": {"type": ["number", "null"], "description": "m"},
                            "y": {"type": ["number", "null"], "description": "m"},
                            "yaw": {"type": ["number", "null"], "description": "rad"},
                        },
                        description="the base's pose in its map frame; null: this robot "
                        "reports none",
                        required=["x", "y", "yaw"],
                    ),
                },
                "The base's navigation",
            ),
        )
    )
    source = _obj(
        {
            "key": {"type": "string"},
            "name": {"type": "string", "description": "on the wire"},
            "age_s": {"type": ["number", "null"], "description": "null: never received"},
            "max_age_s": {"type": ["number", "null"], "description": "null: not safety"},
            "decode_errors": {"type": "integer"},
            "undecodable": {"type": "boolean"},
        }
    )
    channels.append(
        Channel(
            "/robot/sources",
            "atom_executive.Sources",
            _obj(
                {"sources": {"type": "array", "items": source}},
                "Every state source: its age and decode errors",
            ),
        )
    )
    channels.append(
        Channel(
            "/cmd/oneshot",
            "atom_executive.OneShotCommand",
            _obj(
                {
                    "command": {
                        "type": "string",
                        "enum": [
                            "request_control",
                            "set_fsm",
                            "clear_faults",
                            "go_to_tag",
                            "cancel_base",
                            "set_velocity",
                            "run_task",
                            "safe_stop",
                        ],
                    },
                    "args": _obj({}, additionalProperties=True),
                    "id": {
                        "type": ["integer", "null"],
                        "description": "the id the robot gave the command, if any",
                    },
                },
                "A one-shot command the executive sent, in full",
            ),
        )
    )
    node = _obj(
        {
            "path": {"type": "string"},
            "kind": {"type": "string"},
            "status": {"type": "string", "enum": ["INVALID", "RUNNING", "SUCCESS", "FAILURE"]},
            "feedback": {"type": "string"},
            "depth": {"type": "integer"},
        }
    )
    channels.append(
        Channel(
            "/executive/tree",
            "atom_executive.Tree",
            _obj(
                {
                    "state": {"type": "string"},
                    "mission": {"type": "string"},
                    "run_id": {"type": "string"},
                    "nodes": {"type": "array", "items": node},
                },
                "The behaviour tree, depth-first, on change",
            ),
        )
    )
    cause = _obj({"code": {"type": "string"}, "message": {"type": "string"}})
    channels.append(
        Channel(
            "/executive/events",
            "atom_executive.Event",
            _obj(
                {
                    "event": {"type": "string", "enum": ["state", "safety"]},
                    "state": {"type": "string"},
                    "mission": {"type": "string"},
                    "run_id": {"type": "string"},
                    "result": {"type": "string"},
                    "reason": {"type": "string"},
                    "latched": {"type": "boolean"},
                    "causes": {"type": "array", "items": cause},
                },
                "State changes and safety latches and clears",
            ),
        )
    )
    channels.append(Channel("/executive/log", "foxglove.Log", _LOG_SCHEMA))
    model = bodychannels.model_scene(profile)
    if model is not None:  # the robot's body: where its links are, and their shapes
        from executive.records.foxglove_schemas import json_schema

        channels.append(
            Channel(
                bodychannels.TRANSFORMS,
                "foxglove.FrameTransforms",
                json_schema("FrameTransforms"),
            )
        )
        channels.append(
            Channel(bodychannels.MODEL, "foxglove.SceneUpdate", json_schema("SceneUpdate"), model)
        )
    return {c.topic: c for c in channels}


def _json(payload: dict[str, Any]) -> bytes:
    """Compact JSON; a non-finite number (a sensor gone bad) becomes null, not ``NaN``,
    which JSON (and so Foxglove) does not accept."""
    try:
        return json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()
    except ValueError:
        return json.dumps(json_finite(payload), separators=(",", ":")).encode()


def _by_name(names: Sequence[str], values: Any) -> dict[str, float]:
    return dict(
        zip(names, np.round(np.asarray(values, dtype=np.float64), DIGITS).tolist(), strict=False)
    )


def _pose(pose: tuple[float, float, float] | None) -> dict[str, float | None]:
    """A base pose as ``/robot/base``'s ``position`` (x, y m; yaw rad), null where none."""
    if pose is None:
        return {"x": None, "y": None, "yaw": None}
    x, y, yaw = (round(float(v), DIGITS) for v in pose)
    return {"x": x, "y": y, "yaw": yaw}


def _wall_ns(monotonic: float) -> int:
    """A ``time.monotonic()`` stamp on the wall clock, in ns."""
    return time.time_ns() - time.monotonic_ns() + int(monotonic * 1e9)


class RunChannels:
    """Hooks on the executive that feed the run's channels to sinks, off the hot threads."""

    def __init__(
        self,
        executive: Executive,
        profile: RobotProfile,
        sinks: Sequence[Sink],
        *,
        queue_items: int = QUEUE_ITEMS,
        state_hz: float = STATE_HZ,
        command_hz: float = COMMAND_HZ,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.executive = executive
        self._clock = clock  # the executive's; a simulated one says its wall clock too
        self._now_ns: Callable[[], int] = getattr(clock, "wall_ns", time.time_ns)
        offset = getattr(clock, "wall_offset", None)
        self._wall_ns: Callable[[float], int] = (
            _wall_ns if offset is None else lambda m: round((offset() + m) * 1e9)
        )
        self.profile = profile
        self.sinks = list(sinks)
        self.channels = catalogue(profile)
        self.notes: list[str] = []  # problems found when it was set up (a live view refused)
        self._names = dict(profile.topics)
        self._frames: bodychannels.Frames | None = None  # the encoder thread's
        if bodychannels.TRANSFORMS in self.channels:
            self._frames = bodychannels.Frames(profile)
        else:
            log.info(
                "run channels: no robot model or transforms", why=bodychannels.why_none(profile)
            )
        self._frames_gap = 0.8e9 / bodychannels.TRANSFORMS_HZ  # ns, as the joints' gap
        self._frames_at = 0  # log_ns of the last transforms sent
        self._joints_json: dict[str, tuple[list[float], bytes]] = {}  # by stream: values, JSON
        # producers' state: each touched by one thread only (see the hooks)
        self._state_gap = 0.8 / state_hz  # 0.8: a tick's jitter must not halve the rate
        self._command_gap = 0.95 / command_hz  # 500 Hz publishes: a 2 ms grid, no jitter
        self._status_gap = 0.8 / STATUS_HZ
        self._sent_at: dict[str, float] = {}  # by joint stream, "status", "base": received
        self._estop: tuple[str, ...] | None = None
        self._cmd_last: dict[str, tuple[float, bool]] = {}
        self._statuses: tuple[Any, ...] = ()
        self._feedback: tuple[str, ...] = ()
        self._tree_at = -math.inf
        self._causes: tuple[Any, ...] = ()
        self._run_id = ""
        # the encoder's
        self._last_ns = 0
        self.dropped = 0
        self.failed = 0
        self.last_error = ""
        self._errors = RateLimitedLog(log, LOG_INTERVAL)  # the first at once, then one a while
        self._closed = False
        self._bb = py_trees.blackboard.Client(name="Run Channels")
        self._bb.register_key(SNAPSHOT_KEY, access=py_trees.common.Access.READ)
        # the encoder's: raw items no sink wanted yet, the last ``_keep_ns`` of them
        self._kept: collections.deque[tuple[Any, ...]] = collections.deque()
        self._keep_ns = max((sink.preroll_ns for sink in self.sinks), default=0)
        self.kept = 0  # items kept and never encoded (no run followed in time)
        self._box: Batches[tuple[Any, ...]] = Batches(
            self._encode,
            name="run-channels",
            period=ENCODE_PERIOD_S,
            limit=queue_items,
            on_error=self._encode_failed,
        )

    # -- wiring --------------------------------------------------------------------------

    def attach(self, streamer: MotionStreamer) -> None:
        """Tap the streamer's publishes and, if the context's commands are a
        ``CommandTap`` (as ``Runtime.build`` makes them), every one-shot command."""
        chain_publish(streamer, self._on_publish)
        commands = self.executive.context.commands
        if isinstance(commands, CommandTap):
            commands.listeners.append(self._on_command)

    # -- producers: queue and return ---------------------------------------------------

    def _put(self, item: tuple[Any, ...]) -> None:
        if not self._box.put(item):
            self.dropped += 1
            self._problem(f"queue full ({self._box.limit} items): the encoder is not keeping up")

    def on_tick(self, ex: Executive) -> None:
        """After each tick (tick thread): new state samples, the tree if it changed, and
        the safety causes if they changed."""
        now_ns = self._now_ns()
        snap = self._tick_snapshot(ex)
        for stream, stamped in snap.joints.items():
            if self._due(stream, stamped.received, self._state_gap):
                self._put(("joints", now_ns, stream, stamped))
        estop = snap.estop
        if estop is not None:
            due = self._due("estop", estop.received, self._status_gap)
            if due or estop.sample != self._estop:  # every change whatever the rate
                self._estop = estop.sample
                self._put(("estop", now_ns, estop))
        if snap.base is not None and self._due("base", snap.base.received, self._state_gap):
            self._put(("base", now_ns, snap.base))
        if self._due("status", snap.taken, self._status_gap):
            self._put(("status", now_ns, snap, _sources(snap, ex.monitor.max_age)))
        self._tree(ex, now_ns)
        causes = tuple(ex.monitor.reasons)
        if causes != self._causes:
            self._causes = causes
            self._put(("safety", now_ns, ex.monitor.latched, causes, self._run_id))

    def _tick_snapshot(self, ex: Executive) -> RobotSnapshot:
        """What this tick gathered and the watchdog judged (the blackboard's snapshot): the
        recording is fed from the tick, not from a second read of the robot's readers
        (issue 22). Another executive-like object, or before the first gather: its
        ``state_now()``."""
        if isinstance(ex, Executive):
            snap = read_snapshot(self._bb)
            if snap.taken:
                return snap
        return ex.state_now()

    def _due(self, key: str, received: float, gap: float) -> bool:
        """Whether a sample received at ``received`` is new and ``gap`` after the last
        one sent under ``key`` (a snapshot repeats a sample until a newer one arrives)."""
        if received - self._sent_at.get(key, -math.inf) < gap:
            return False
        self._sent_at[key] = received
        return True

    def _tree(self, ex: Executive, now_ns: int, ended: MissionRun | None = None) -> None:
        """The tree, if a status changed (or only feedback, at most every FEEDBACK_S).
        Every tick compares identities and statuses only: no strings are built unless
        something is sent (a UUID compare, ``node.id``, cost more than the rest).

        ``ended``: a run that has just ended, whose subtree the executive has already
        pruned; its final statuses are sent grafted under the slot, once (the next
        tick then sends the tree without it)."""
        nodes: list[Any] = []  # node, status, node, status...
        stack = [ex.tree.root]
        while stack:
            node = stack.pop()
            nodes += (node, node.status)
            stack.extend(reversed(node.children))
        statuses = tuple(nodes)
        feedback = tuple(n.feedback_message for n in nodes[::2])
        now = self._clock()
        if ended is None:
            if statuses == self._statuses and (
                feedback == self._feedback or now - self._tree_at < FEEDBACK_S
            ):
                return
            self._statuses, self._feedback, self._tree_at = statuses, feedback, now
        snapshot: list[tuple[str, str, str, str, int]] = []
        # depth-first with a stack: a nested function that calls itself is a reference
        # cycle (function -> closure cell -> function) that kept the snapshot and ``ended``
        # (the whole run's tree) alive until the next full collection (issue 25, 8)
        todo: list[tuple[py_trees.behaviour.Behaviour, str, int]] = [
            (ex.tree.root, ex.tree.root.name, 0)
        ]
        while todo:
            node, path, depth = todo.pop()
            snapshot.append(
                (path, type(node).__name__, node.status.value, node.feedback_message, depth)
            )
            children = node.children
            if ended is not None and node is ex.slot and not children:
                children = [ended.root]
            todo.extend((c, f"{path}/{c.name}", depth + 1) for c in reversed(children))
        run = ex.run or ended
        mission = run.name if run else ""
        self._put(("tree", now_ns, ex.state.value, mission, run.run_id if run else "", snapshot))

    def on_change(self, ex: Executive) -> None:
        """On each executive state change (tick thread): the event, and a run's begin
        or end for the sinks."""
        now_ns = self._now_ns()
        run = ex.run or ex.last_run
        event: dict[str, Any] = {
            "event": "state",
            "state": ex.state.value,
            "mission": run.name if run else "",
            "run_id": run.run_id if run else "",
        }
        if ex.run is not None and ex.run.run_id != self._run_id:
            self._run_id = ex.run.run_id
            info = {"run_id": ex.run.run_id, "mission": ex.run.name}
            self._put(("begin", now_ns, ex.run.run_id, info))
        elif ex.run is None and run is not None and run.run_id == self._run_id:
            self._run_id = ""
            self._tree(ex, now_ns, ended=run)  # its final statuses, as the JSON-lines record
            event["result"] = run.result.value if run.result else ""
            event["reason"] = run.reason
            event["causes"] = [_cause(c) for c in ex.monitor.reasons]
            self._put(("event", now_ns, event))
            info = {"result": event["result"], "reason": run.reason}
            self._put(("end", now_ns, run.run_id, info))
            return
        self._put(("event", now_ns, event))

    def _on_publish(self, topic: str, q: FloatArray, held: bool) -> None:
        """The streamer published ``q`` (its thread, under its lock): keep one in
        ``command_gap``, and every change of ``held``."""
        now = self._clock()
        last = self._cmd_last.get(topic)
        if last is not None and last[1] == held and now - last[0] < self._command_gap:
            return
        self._cmd_last[topic] = (now, held)
        self._put(("joints_cmd", self._now_ns(), topic, q, held))

    def _on_command(self, command: str, args: dict[str, Any], result: int | None) -> None:
        self._put(("oneshot", self._now_ns(), command, args, result))

    # -- the encoder thread ------------------------------------------------------------

    def _encode_failed(self, e: BaseException) -> None:
        self.failed += 1
        self._problem(f"{type(e).__name__}: {e}")

    def _stamp(self, log_ns: int) -> int:
        self._last_ns = max(self._last_ns, log_ns)
        return self._last_ns

    def _emit(self, topic: str, log_ns: int, payload: dict[str, Any], publish_ns: int = 0) -> None:
        self._emit_data(topic, log_ns, _json(payload), publish_ns)

    def _emit_data(self, topic: str, log_ns: int, data: bytes, publish_ns: int = 0) -> None:
        message = Message(topic, log_ns, publish_ns or log_ns, data)
        for sink in self.sinks:
            try:
                sink.write(message)
            except Exception as e:  # noqa: BLE001 - the other sinks still get it
                self.failed += 1
                self._problem(f"{type(sink).__name__}: {type(e).__name__}: {e}")

    def _encode(self, item: tuple[Any, ...]) -> None:
        """Encode ``item`` if a sink wants it now (or it begins a run: first what was
        kept, in order); else keep it, the last ``_keep_ns`` of such items."""
        if item[0] != "begin" and not any(sink.wants(item[1]) for sink in self.sinks):
            self._kept.append(item)
            while self._kept[0][1] < item[1] - self._keep_ns:
                self._kept.popleft()
                self.kept += 1
            return
        while self._kept:
            self._encode_now(self._kept.popleft())
        self._encode_now(item)

    def _encode_now(self, item: tuple[Any, ...]) -> None:
        kind, log_ns, args = item[0], self._stamp(item[1]), item[2:]
        getattr(self, f"_encode_{kind}")(log_ns, *args)

    def _encode_joints_cmd(self, log_ns: int, topic: str, q: FloatArray, held: bool) -> None:
        payload = {"position": _by_name(self._names[topic], q), "held": bool(held)}
        self._emit(f"/cmd/joints/{topic}", log_ns, payload)

    def _encode_oneshot(
        self, log_ns: int, command: str, args: dict[str, Any], result: int | None
    ) -> None:
        self._emit("/cmd/oneshot", log_ns, {"command": command, "args": args, "id": result})
        self._log_line(log_ns, "info", f"command {command} {_args_text(args)}".rstrip())

    def _encode_tree(
        self,
        log_ns: int,
        state: str,
        mission: str,
        run_id: str,
        snapshot: list[tuple[str, str, str, str, int]],
    ) -> None:
        nodes = [
            {"path": p, "kind": k, "status": s, "feedback": f, "depth": d}
            for p, k, s, f, d in snapshot
        ]
        payload = {"state": state, "mission": mission, "run_id": run_id, "nodes": nodes}
        self._emit("/executive/tree", log_ns, payload)

    def _encode_event(self, log_ns: int, event: dict[str, Any]) -> None:
        self._emit("/executive/events", log_ns, event)
        text = f"{event['state']} {event['mission']}".rstrip()
        if event.get("reason"):
            text += f": {event['reason']}"
        level = "info" if event["state"] in ("RUNNING", "SUCCEEDED", "IDLE") else "warning"
        self._log_line(log_ns, level, text)

    def _encode_safety(
        self, log_ns: int, latched: bool, causes: tuple[Any, ...], run_id: str
    ) -> None:
        event = {
            "event": "safety",
            "latched": bool(latched),
            "run_id": run_id,
            "causes": [_cause(c) for c in causes],
        }
        self._emit("/executive/events", log_ns, event)
        if causes:
            self._log_line(log_ns, "error", "SAFE-STOP: " + "; ".join(str(c) for c in causes))
        else:
            self._log_line(log_ns, "info", "safety clear")

    def _encode_begin(self, log_ns: int, run_id: str, info: dict[str, str]) -> None:
        self._run_edge("begin", log_ns, run_id, info)

    def _encode_end(self, log_ns: int, run_id: str, info: dict[str, str]) -> None:
        self._run_edge("end", log_ns, run_id, info)

    def _run_edge(self, edge: str, log_ns: int, run_id: str, info: dict[str, str]) -> None:
        meta = {**info, "version": __version__, "profile": self.profile.name}
        for sink in self.sinks:
            try:
                (sink.begin if edge == "begin" else sink.end)(run_id, meta, log_ns)
            except Exception as e:  # noqa: BLE001 - the other sinks still get it
                self.failed += 1
                self._problem(f"{type(sink).__name__}: {type(e).__name__}: {e}")

    def _log_line(self, log_ns: int, level: str, message: str) -> None:
        payload = {
            "timestamp": {"sec": log_ns // 1_000_000_000, "nsec": log_ns % 1_000_000_000},
            "level": _LOG_LEVELS[level],
            "message": message,
            "name": "atom-executive",
            "file": "",
            "line": 0,
        }
        self._emit("/executive/log", log_ns, payload)

    # state encoders (encoder thread): a snapshot's (frozen) values in, a channel's JSON out

    def _encode_joints(self, log_ns: int, stream: str, stamped: Stamped[FloatArray]) -> None:
        names = self._names.get(stream)
        if names is None:  # a stream the profile does not name: nothing to key it by
            return
        # the same rounded positions as last time (a robot at rest): the same JSON
        values = np.round(np.asarray(stamped.sample, dtype=np.float64), DIGITS).tolist()
        last = self._joints_json.get(stream)
        if last is None or last[0] != values:
            last = (values, _json({"position": dict(zip(names, values, strict=False))}))
            self._joints_json[stream] = last
        received_ns = self._wall_ns(stamped.received)
        self._emit_data(f"/robot/joints/{stream}", log_ns, last[1], received_ns)
        if self._frames is not None:
            self._frames.measured(names, stamped.sample)
            if log_ns - self._frames_at >= self._frames_gap:
                self._frames_at = log_ns
                data = self._frames.message_json(received_ns)
                if data is None:  # a value that is not finite: nulls, as _json writes them
                    data = _json(self._frames.message(received_ns))
                self._emit_data(bodychannels.TRANSFORMS, log_ns, data, received_ns)

    def _encode_estop(self, log_ns: int, stamped: Stamped[tuple[str, ...]]) -> None:
        payload = {"on": list(stamped.sample), "any": bool(stamped.sample)}
        self._emit("/robot/emergency", log_ns, payload, self._wall_ns(stamped.received))

    def _encode_base(self, log_ns: int, stamped: Stamped[BaseState]) -> None:
        b = stamped.sample
        payload = {
            "status": b.status.name,
            "tasking": b.tasking,
            "busy": b.busy,
            "task_id": b.task_id,
            "estop_pressed": b.estop_pressed,
            "position": _pose(b.pose),
        }
        self._emit("/robot/base", log_ns, payload, self._wall_ns(stamped.received))

    def _encode_status(
        self, log_ns: int, snap: RobotSnapshot, sources: list[dict[str, Any]]
    ) -> None:
        def value(stamped: Stamped[Any] | None) -> Any:
            return None if stamped is None else stamped.sample

        battery, task = value(snap.battery), value(snap.task)
        alarms, servo = value(snap.alarms), value(snap.servo_errors)
        payload = {
            "fsm_id": value(snap.fsm),
            "control": value(snap.control),
            "battery_percent": None if battery is None else round(float(battery), 2),
            "alarms": None if alarms is None else list(alarms),
            "servo_errors": None if servo is None else list(servo),
            "task": None if task is None else {"id": int(task[0]), "in_process": bool(task[1])},
        }
        self._emit("/robot/status", log_ns, payload, self._wall_ns(snap.taken))
        self._emit("/robot/sources", log_ns, {"sources": sources}, self._wall_ns(snap.taken))

    # -- reports -------------------------------------------------------------------------

    def _problem(self, what: str) -> None:
        self.last_error = what
        self._errors.log(
            "error",
            "run channels: items lost",
            error=what,
            dropped=self.dropped,
            failed=self.failed,
        )

    def problems(self) -> list[str]:
        """What the status should say about the recording ([] while nothing is lost)."""
        out = list(self.notes)
        if self.dropped or self.failed:
            out.append(
                f"run channels: {self.dropped} items dropped, {self.failed} failed; "
                f"last: {self.last_error}"
            )
        for sink in self.sinks:
            out += sink.problems()
        return out

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued item was encoded and handed to the sinks."""
        return self._box.flush(timeout)

    def close(self, timeout: float = 2.0) -> None:
        """Encode what is queued, then close every sink (an open run file is finished)."""
        if self._closed:
            return
        self._closed = True
        self._box.close(timeout)
        for sink in self.sinks:
            try:
                sink.close()
            except Exception as e:  # noqa: BLE001 - closing must reach every sink
                log.error(
                    "run channels: a sink did not close", sink=type(sink).__name__, error=repr(e)
                )


def _cause(cause: Any) -> dict[str, str]:
    return {
        "code": str(getattr(cause, "code", "")),
        "message": str(getattr(cause, "message", cause)),
    }


def _args_text(args: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in args.items())


def _sources(snap: RobotSnapshot, max_age: dict[str, float]) -> list[dict[str, Any]]:
    """Every state source of the snapshot: age (at the snapshot), limit, decode errors."""
    return [
        {
            "key": key,
            "name": source.name,
            "age_s": None if source.received is None else round(snap.taken - source.received, 4),
            "max_age_s": max_age.get(key),
            "decode_errors": source.health.errors,
            "undecodable": source.health.undecodable,
        }
        for key, source in snap.sources.items()
    ]
