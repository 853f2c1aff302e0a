"""The robot's body in a run's MCAP file (executive/records/bodychannels.py): the
transforms of the measured joints and the model, each valid against Foxglove's own
schema, and the transforms put the links where the vendor's model says.

The snapshots are real ``RobotSnapshot``s fed through the real hooks, encoder and MCAP
writer; the whole service against the simulated Atom: tests/integration/test_run_channels.py.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extra
import numpy as np
import py_trees
import pytest
import structlog
from mcap.reader import make_reader

from executive.records import bodychannels
from executive.records.foxglove_schemas import json_schema
from executive.records.mcaprecord import McapRecorder
from executive.records.runchannels import RunChannels, catalogue
from executive.seam import body, bodyframes
from executive.seam.body import FloatArray
from executive.seam.ports import RobotSnapshot, Stamped
from executive.seam.profile import PROFILES_DIR, RobotProfile, load_profile

ATOM = load_profile("atom-sdk")


class JointsExecutive:
    """What ``RunChannels.on_tick`` reads of an executive: a snapshot of measured joints."""

    def __init__(self, profile: RobotProfile) -> None:
        self.profile = profile
        self.monitor = SimpleNamespace(max_age={}, reasons=[], latched=False)
        self.tree = SimpleNamespace(root=py_trees.behaviours.Success("root"))
        self.run, self.last_run, self.state = None, None, SimpleNamespace(value="IDLE")
        self.snapshot = RobotSnapshot(taken=time.monotonic())

    def measure(self, joints: dict[str, float], received: float) -> None:
        streams = {
            topic: Stamped(np.array([joints.get(n, 0.0) for n in names]), received)
            for topic, names in self.profile.topics.items()
        }
        self.snapshot = RobotSnapshot(taken=received, joints=streams)

    def state_now(self) -> RobotSnapshot:
        return self.snapshot


def _record(tmp_path: Path, profile: RobotProfile, poses: list[dict[str, float]]) -> Path:
    """A run of ``poses``, 0.1 s apart, through the real hooks into an MCAP file."""
    ex = JointsExecutive(profile)
    files = McapRecorder(tmp_path, catalogue(profile).values())
    channels = RunChannels(ex, profile, [files])  # type: ignore[arg-type]  # a test double
    try:
        t0 = time.monotonic()
        for i, joints in enumerate(poses):
            ex.measure(joints, t0 + 0.1 * i)
            channels.on_tick(ex)  # type: ignore[arg-type]
            if i == 0:
                channels._put(("begin", time.time_ns(), "r1", {"run_id": "r1"}))
            time.sleep(0.025)  # the transforms' gap is in log time
        channels._put(("end", time.time_ns(), "r1", {"result": "SUCCEEDED"}))
        assert channels.flush()
        assert files.flush()
    finally:
        channels.close()
    assert channels.problems() == []
    return files.path("r1")


def _read(path: Path) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    with path.open("rb") as f:
        reader = make_reader(f)
        summary = reader.get_summary()
        assert summary is not None
        schemas = {
            c.topic: json.loads(summary.schemas[c.schema_id].data)
            for c in summary.channels.values()
        }
        messages = [(c.topic, json.loads(m.data)) for _, c, m in reader.iter_messages()]
    return schemas, messages


def _world(message: dict[str, Any], root: str) -> dict[str, FloatArray]:
    """Every frame's origin in the root frame, by composing the recorded transforms."""
    frames: dict[str, tuple[FloatArray, FloatArray]] = {root: (np.zeros(3), np.eye(3))}
    for t in message["transforms"]:  # parents first, as recorded
        p, r = frames[t["parent_frame_id"]]
        q = t["rotation"]
        w, x, y, z = q["w"], q["x"], q["y"], q["z"]
        rot = np.array(
            [
                [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
            ]
        )
        v = t["translation"]
        frames[t["child_frame_id"]] = (p + r @ np.array([v["x"], v["y"], v["z"]]), r @ rot)
    return {name: pose[0] for name, pose in frames.items()}


def test_the_schemas_are_foxglove_s_own() -> None:
    """Built from foxglove-sdk's descriptor, with Foxglove's titles and fields."""
    schema = json_schema("FrameTransforms")
    assert schema["title"] == "foxglove.FrameTransforms"
    item = schema["properties"]["transforms"]["items"]
    assert item["title"] == "foxglove.FrameTransform"
    assert item["required"] == [
        "timestamp",
        "parent_frame_id",
        "child_frame_id",
        "translation",
        "rotation",
    ]
    assert set(item["properties"]["timestamp"]["properties"]) == {"sec", "nsec"}
    assert item["properties"]["rotation"]["title"] == "foxglove.Quaternion"
    entity = json_schema("SceneUpdate")["properties"]["entities"]["items"]
    assert entity["title"] == "foxglove.SceneEntity"
    assert {"cubes", "cylinders", "spheres", "frame_locked"} <= set(entity["properties"])
    jsonschema.Draft7Validator.check_schema(schema)
    with pytest.raises(ValueError, match="no message 'Nonesuch'"):
        json_schema("Nonesuch")


def test_a_run_file_moves_the_robot_where_its_model_says(tmp_path: Path) -> None:
    """elbow_pitch 0 with the shoulder at 0 is the forearm straight forward (the Atom's
    convention: shared/reference/atom-arms.md): the right hand's point is in front of
    the body at about the elbow's height; 1.3 (nearly straight) hangs it down."""
    forward = {"right_shoulder_pitch": 0.0, "right_elbow_pitch": 0.0}
    down = {"right_shoulder_pitch": 0.0, "right_elbow_pitch": 1.3}
    path = _record(tmp_path, ATOM, [forward] * 3 + [down] * 3)
    schemas, messages = _read(path)

    assert schemas[bodychannels.TRANSFORMS]["title"] == "foxglove.FrameTransforms"
    transforms = [m for t, m in messages if t == bodychannels.TRANSFORMS]
    models = [m for t, m in messages if t == bodychannels.MODEL]
    assert len(transforms) >= 4 and len(models) == 1
    assert messages[0][0] == bodychannels.MODEL  # the file starts with the model
    for m in transforms:
        jsonschema.validate(m, schemas[bodychannels.TRANSFORMS])
    jsonschema.validate(models[0], schemas[bodychannels.MODEL])

    b = body.load(ATOM)
    root = bodyframes.root(b)
    frames = {t["child_frame_id"] for t in transforms[0]["transforms"]}
    assert frames == {link.name for link in bodyframes.links(b)}
    # the model's shapes hang on those frames
    assert {e["frame_id"] for e in models[0]["entities"]} <= frames | {root}
    assert all(e["frame_locked"] for e in models[0]["entities"])

    hand = ATOM.body.points["right_hand"]  # type: ignore[union-attr]  # the Atom has a body
    first, last = _world(transforms[0], root), _world(transforms[-1], root)
    b.pose({n: forward.get(n, 0.0) for n in ATOM.joints})  # every joint measured: 0 but these
    np.testing.assert_allclose(first[hand.link], b.link_pose(hand.link)[0], atol=1e-4)
    wrist_fwd, elbow = first[hand.link], first["right_elbow_pitch_link"]
    assert wrist_fwd[0] > elbow[0] + 0.2  # forward of the elbow: the forearm points ahead
    assert abs(wrist_fwd[2] - elbow[2]) < 0.05  # level with it
    wrist_down = last[hand.link]
    assert wrist_down[2] < elbow[2] - 0.15  # nearly straight: the hand hangs below
    assert wrist_down[1] < -0.1  # the right side, all along


def test_a_profile_without_a_body_gets_no_transforms_and_says_so(tmp_path: Path) -> None:
    adam = load_profile("adam-pro")
    assert isinstance(adam.body, body.NoBody)
    channels = catalogue(adam)
    assert bodychannels.TRANSFORMS not in channels and bodychannels.MODEL not in channels
    with structlog.testing.capture_logs() as logs:
        tap = RunChannels(JointsExecutive(adam), adam, [])  # type: ignore[arg-type]
        tap.close()
    said = [e for e in logs if "no robot model" in e["event"]]
    assert len(said) == 1 and "no licensed model" in said[0]["why"], logs
    bare = tmp_path / "bare.yaml"  # the GRX's profile without its body: section
    bare.write_text(f"extends: {PROFILES_DIR / 'grx.yaml'}\nname: bare\nbody: null\n")
    assert bodychannels.why_none(load_profile(bare)) == (
        "profile bare: no body model (the profile has no body:)"
    )
    assert bodychannels.TRANSFORMS in catalogue(load_profile("grx"))  # the GR-1 T2's model


def test_a_robot_at_rest_costs_no_forward_kinematics(monkeypatch: pytest.MonkeyPatch) -> None:
    """The idle service records the pre-roll's transforms at 50 Hz: the same joints, bit for
    bit, reuse the last frames (new stamps, same transforms); a joint that moved is posed
    again (issue 22)."""
    frames = bodychannels.Frames(ATOM)
    calls = []
    real = bodyframes.local_frames

    def counted(*args: Any) -> Any:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(bodyframes, "local_frames", counted)
    names = ATOM.topics["upper"]
    frames.measured(names, np.zeros(len(names)))
    first = frames.message(1_000_000_000)
    again = frames.message(2_000_000_000)
    assert len(calls) == 1
    strip = [{k: v for k, v in t.items() if k != "timestamp"} for t in first["transforms"]]
    assert strip == [{k: v for k, v in t.items() if k != "timestamp"} for t in again["transforms"]]
    assert again["transforms"][0]["timestamp"] == {"sec": 2, "nsec": 0}
    q = np.zeros(len(names))
    q[3] = 0.5
    frames.measured(names, q)
    moved = frames.message(3_000_000_000)
    assert len(calls) == 2 and moved["transforms"] != again["transforms"]


def test_the_transforms_json_is_json_dumps_byte_for_byte() -> None:
    """``message_json`` renders each transform once per pose and only the stamps anew: the
    same bytes ``json.dumps`` makes of ``message``, at rest and after a move."""
    frames = bodychannels.Frames(ATOM)
    names = ATOM.topics["upper"]
    q = np.linspace(-0.3, 0.3, len(names))
    for k, stamp in enumerate((1_000_000_001, 2_000_000_002, 3_500_000_000)):
        if k == 2:
            q[0] += 0.25
        frames.measured(names, q)
        expected = json.dumps(frames.message(stamp), separators=(",", ":")).encode()
        assert frames.message_json(stamp) == expected
