"""The status document without DDS: idle, running and SAFE_STOP documents built from a real
``Executive`` over a robot-neutral snapshot, validated against the shipped JSON Schema; the
leaves' progress; and what ``watch`` reads of it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extra
import numpy as np
import py_trees
import pytest

from behaviours.actions.basic import Log, Wait
from behaviours.actions.motion import MoveJoints
from behaviours.conditions.robot import WaitForButton
from behaviours.context import RobotContext
from executive.core.safety import Cause, SafetyMonitor
from executive.core.tree import Executive
from executive.motion.streamer import MotionStreamer
from executive.operator.lines import robot_lines
from executive.operator.watch import motion_line, progress_of
from executive.robots.atom.interface import Interface
from executive.robots.atom.state import AtomState
from executive.seam.ports import (
    BaseState,
    Motion,
    NavStatus,
    NoCommands,
    ReaderHealth,
    RobotSnapshot,
    Source,
    Stamped,
    TaskMotion,
    Velocity,
)
from executive.seam.profile import load_profile
from executive.service.status import RunningSince, schema, status_document, tree_nodes
from executive.wire.codec import Codec

PROFILE = load_profile()


def strict(node: Any) -> Any:
    """The shipped schema with no unknown property allowed anywhere. The shipped one allows
    them (a client of version 1 must ignore what a later 1.x adds); the executive's own
    documents are held to exactly what the schema names, so a misspelt key fails here."""
    if isinstance(node, dict):
        node = {k: strict(v) for k, v in node.items()}
        if "properties" in node:
            node.setdefault("additionalProperties", False)
        return node
    if isinstance(node, list):
        return [strict(v) for v in node]
    return node


VALIDATOR = jsonschema.Draft202012Validator(
    strict(schema()), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)


def amr_base(now: float, position: tuple[float, float, float]) -> Stamped[BaseState] | None:
    """The Atom adapter's base from a decoded ``AMRState_`` (task 7 COMPLETED, at
    ``position``): the pose in the document is the wire's, not one made up here."""
    iface = Interface()
    codec = Codec(iface.AMRState_)
    record = codec.zeros()
    record["navigation_status"] = iface.NavigationStatus_.COMPLETED.value
    record["task_id"] = 7
    record["position"][:] = position
    atom = AtomState(iface, {}, {}, ("amr_state",))
    return atom.build({"amr_state": Stamped(codec.decode(codec.encode(record)), now)}, {}, now).base


class FakeAdapter:
    """A robot behind the seam whose snapshot the test sets (no DDS, no streams)."""

    name = "atom"
    capabilities = frozenset({"battery", "buttons"})
    streams: list[Any] = []
    commands = NoCommands()
    interface_name = "seed"
    command_topics: frozenset[str] = frozenset()

    def __init__(self) -> None:
        now = time.monotonic()
        self.snap = RobotSnapshot(
            taken=now,
            joints={"upper": Stamped(np.zeros(3), now)},
            control=Stamped(False, now),
            fsm=Stamped(3, now),
            estop=Stamped((), now),
            battery=Stamped(float("nan"), now),  # a sensor gone bad: null, not NaN
            alarms=Stamped((), now),
            servo_errors=Stamped((), now),
            base=amr_base(now, (1.25, -0.5, 1.5)),
            sources={
                key: Source(key, f"rt/{key}", now, ReaderHealth(f"rt/{key}"))
                for key in PROFILE.safety_sources
            },
        )
        self.moves = Motion(False)

    def snapshot(self) -> RobotSnapshot:
        return replace(self.snap, taken=time.monotonic())

    def motion(self) -> Motion:
        return self.moves

    def leftovers(self) -> tuple[str, ...] | None:
        return ()

    def make_safe_now(self) -> tuple[str, ...]:
        return ()

    def make_safe(self) -> tuple[str, ...]:
        return ()

    def wire_mismatches(self) -> list[str] | None:
        return None

    def on_safety_event(self, callback: Callable[[str, str], None]) -> None:
        pass

    def safe_stop(self) -> None:
        pass

    def install_reflex(self, streamer: Any, on_trip: Any) -> None:
        return None

    def close(self) -> None:
        pass


def executive() -> tuple[Executive, FakeAdapter]:
    adapter = FakeAdapter()
    streamer = MotionStreamer([], PROFILE)
    ex = Executive(
        adapter,  # type: ignore[arg-type]  # the protocol's attributes, as a test double
        RobotContext(PROFILE, adapter.commands, streamer),
        streamer,
        SafetyMonitor(max_age=PROFILE.safety_sources),
    )
    return ex, adapter


def valid(doc: dict[str, Any]) -> dict[str, Any]:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
    assert not errors, errors
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc  # plain JSON, no NaN
    return doc


def test_version_1_clients_ignore_what_a_later_1x_adds() -> None:
    """The shipped schema takes a property it does not name (a later 1.x's), at the top and
    inside the telemetry; the executive's own documents may not carry one (``strict``)."""
    ex, _ = executive()
    ex.tick()
    doc = status_document(ex, profile="atom-sdk")
    doc["added_later"] = {"x": 1}
    doc["telemetry"]["base"]["added_later"] = True
    shipped = jsonschema.Draft202012Validator(schema())
    assert not list(shipped.iter_errors(doc))
    assert len(list(VALIDATOR.iter_errors(doc))) == 2
    assert "version 2" in schema()["description"]


def test_idle_running_and_safe_stop_documents_match_the_schema() -> None:
    ex, adapter = executive()
    ex.tick()
    idle = valid(status_document(ex, profile="atom-sdk"))
    assert (idle["schema"], idle["version"], idle["state"]) == ("atom-executive/status", 1, "IDLE")
    assert idle["run_id"] is None and idle["mission"] is None and idle["active_node"] is None
    assert idle["produced_at"]["wall"].endswith("Z")
    t = idle["telemetry"]
    assert t["battery"] == {"percent": None, "age_s": t["battery"]["age_s"]}
    assert t["fsm"]["id"] == 3 and t["control"]["held"] is False
    assert t["base"]["status"] == "COMPLETED" and t["buttons"] is None  # not reported
    assert t["base"]["task_id"] == 7 and not t["base"]["busy"]
    assert t["base"]["pose"] == {"x": 1.25, "y": -0.5, "yaw": 1.5}  # AMRState_.position
    assert t["servo_errors"]["errors"] == [] and t["alarms"]["active"] == []
    assert {s["key"] for s in t["sources"]} == set(PROFILE.safety_sources)
    assert all(s["max_age_s"] and not s["silent"] for s in t["sources"])
    assert idle["robot"] == "atom" and idle["interface_variant"] == "seed"

    running = RunningSince()
    mission = py_trees.composites.Sequence(
        "greet", memory=True, children=[Log("hello operator"), Wait(10)]
    )
    ok, run_id = ex.start_mission("greet", mission)
    assert ok
    ex.tick()
    running.update(ex.tree.root, ex.clock())
    doc = valid(status_document(ex, running_since=running.since, counters=(41, 2)))
    assert doc["state"] == "RUNNING" and doc["run_id"] == run_id and doc["run"]["id"] == run_id
    assert doc["active_node"].endswith("greet/Wait 10 s") and doc["feed"] == ["hello operator"]
    assert doc["counters"]["ticks"] == 41 and doc["counters"]["overruns"] == 2
    nodes = {n["path"].rsplit("/", 1)[-1]: n for n in doc["tree"]}
    wait = nodes["Wait 10 s"]
    assert wait["status"] == "RUNNING" and 0.0 <= wait["progress"] < 0.1
    assert 9.0 < wait["time_left_s"] <= 10.0 and wait["elapsed_s"] >= 0.0
    assert nodes["greet"]["elapsed_s"] is not None and nodes["greet"]["progress"] is None
    assert nodes["Log"]["progress"] is None and nodes["Log"]["elapsed_s"] is None  # done
    # watch reads the same through the DDS node fields (-1: unknown)
    dds_wait = next(n for n in tree_nodes(doc) if n.path.endswith("Wait 10 s"))
    seen = progress_of(dds_wait)
    assert seen is not None and seen.time_left is not None and seen.time_left > 9.0
    dds_log = next(n for n in tree_nodes(doc) if n.path.endswith("/Log"))
    assert progress_of(dds_log) is None

    ex.monitor.trip([Cause("estop", "soft e-stop pressed"), Cause("battery", "battery at 4 %")])
    adapter.snap = replace(adapter.snap, estop=Stamped(("soft",), time.monotonic()))
    ex.tick()
    stopped = valid(status_document(ex))
    assert stopped["state"] == "SAFE_STOP" and stopped["mission"] is None
    assert stopped["safety"]["condition"] == "SAFE_STOP" and stopped["safety"]["latched"]
    assert [c["code"] for c in stopped["safety"]["causes"]] == ["estop", "battery"]
    assert stopped["run_id"] == run_id  # kept after the run ended, with its result
    assert stopped["last_run"]["result"] == "SAFE_STOP" and stopped["run"] is None
    assert stopped["telemetry"]["estop"]["on"] == ["soft"]


def test_a_base_without_a_pose_is_null_and_a_nan_position_is_no_pose() -> None:
    """A robot whose base reports no pose (the GRX's User API) and an Atom whose
    ``AMRState_.position`` is NaN: ``pose`` null, the document still valid JSON."""
    ex, adapter = executive()
    now = time.monotonic()
    adapter.snap = replace(adapter.snap, base=amr_base(now, (float("nan"), 0.0, 0.0)))
    ex.tick()
    base = valid(status_document(ex))["telemetry"]["base"]
    assert base["status"] == "COMPLETED" and base["pose"] is None
    adapter.snap = replace(
        adapter.snap, base=Stamped(BaseState(True, NavStatus.RUNNING, 3), time.monotonic())
    )
    ex.tick()
    base = valid(status_document(ex))["telemetry"]["base"]
    assert base["status"] == "RUNNING" and base["busy"] and base["pose"] is None
    adapter.snap = replace(adapter.snap, base=None)  # the Adam: no base at all
    ex.tick()
    assert valid(status_document(ex))["telemetry"]["base"] is None


def test_a_leaf_reports_progress_robot_neutrally() -> None:
    clock = [100.0]
    context = RobotContext(PROFILE, NoCommands(), MotionStreamer([], PROFILE), lambda: clock[0])
    move = MoveJoints({"head_yaw": 0.3}, timeout=10.0)
    button = WaitForButton("A", timeout=60.0)
    for leaf in (move, button):
        leaf.setup(context=context)
        leaf.started_at = 100.0
    assert move.progress() == (None, 10.0)  # nothing planned: the timeout's time left
    move.planned = (100.0, 4.0)
    clock[0] = 101.0
    assert move.progress() == (0.25, 3.0)
    clock[0] = 106.0
    assert move.progress() == (1.0, 0.0)  # the move is over; the joints settle
    assert button.progress() == (None, 54.0)
    clock[0] = 200.0
    assert button.progress() == (None, 0.0)


@pytest.mark.parametrize("value", [-1.0, float("nan")])
def test_watch_reads_no_progress_from_the_unknown_markers(value: float) -> None:
    node = {"path": "a", "status": "RUNNING", "progress": value, "time_left_s": value}
    assert progress_of(node) is None


def test_a_robot_that_moves_while_idle_is_a_problem_and_motion_is_in_the_document() -> None:
    """Issue 25, 4: a GRX walking with non-zero axes read IDLE / CLEAR. What the robot
    reports about moving is in ``telemetry.motion``; moving with no mission is a problem."""
    ex, adapter = executive()
    ex.tick()
    still = valid(status_document(ex))
    assert still["telemetry"]["motion"]["moving"] is False and still["problems"] == []
    now = time.monotonic()
    walk = "task walk (965) in process, axes forward +0.50 lateral +0.00 yaw +0.00"
    adapter.moves = Motion(
        True,
        (walk,),
        task=Stamped(TaskMotion(965, "walk", True, True), now),
        velocity_seen=Stamped(Velocity(0.5, 0.0, 0.0), now),
        base_speed=Stamped((0.25, 0.0), now),
        joint_speed={"upper": Stamped(0.3, now)},
    )
    doc = valid(
        status_document(
            ex,
            recovery={
                "policy": "release",
                "outcome": "made_safe",
                "found": [walk],
                "sent": ["zero axes"],
                "after_s": 1.6,
                "first_sent_s": 0.9,
                "started": 1234.5,
            },
        )
    )
    motion = doc["telemetry"]["motion"]
    assert motion["task"]["name"] == "walk" and motion["task"]["drives"]
    assert motion["velocity_seen"]["forward"] == 0.5 and motion["velocity_sent"] is None
    assert motion["base_speed"]["linear"] == 0.25 and motion["joint_speed"]["upper"]["max"] == 0.3
    assert doc["problems"] == [f"the robot moves while no mission runs (IDLE): {walk}"]
    assert doc["recovery"]["outcome"] == "made_safe"
    assert doc["robot_description"] == PROFILE.description

    line = motion_line(doc)
    assert line is not None and line.plain == (
        f"motion: MOVING ({walk}) · task walk (965) in process · axes seen +0.50/+0.00/+0.00"
        " · base 0.25 m/s 0.00 rad/s · joints up to 0.30/s (upper) · streams none"
    )
    sample = SimpleNamespace(document=json.dumps(doc))
    assert robot_lines(sample).splitlines()[1:] == [  # type: ignore[arg-type]
        f"robot: atom ({PROFILE.description})",
        line.plain,
    ]
    assert motion_line(still).plain.startswith("motion: still · ")  # type: ignore[union-attr]

    def broken() -> Motion:
        raise RuntimeError("adapter bug")

    adapter.motion = broken  # type: ignore[method-assign]
    failed = valid(status_document(ex))
    assert failed["telemetry"]["motion"] is None
    assert "adapter bug" in failed["problems"][0]
