"""The robot's body in a run's channels: its model and where its links are, for Foxglove.

With a profile that has a body model (``body:``, ``executive.seam.body``), each run's
MCAP file (and the live view) carries two more channels, so Foxglove's 3D panel shows the
robot moving through the run with no setup (open the file, add a 3D panel, pick the
root link, e.g. ``pelvis``, as the display frame):

- ``/robot/transforms`` (``foxglove.FrameTransforms``): every link's transform from its
  parent link, one frame per link named as the model names it, rooted at the model's
  root link (the base frame the profile's points and a pose's intents are in), computed
  by forward kinematics from the *measured* joints at most ``TRANSFORMS_HZ``. Joints not
  yet measured, and joints the model has that the profile does not drive, are at the
  profile's rest (``body.rest``).
- ``/robot/model`` (``foxglove.SceneUpdate``): the model's collision primitives (the
  Atom's boxes; the GR-3's cylinders, spheres and boxes), one entity per link,
  ``frame_locked`` to its link's frame, so they move with the transforms. Left links
  blue, right links red, the rest grey (by where the link is at the model's zero pose).
  The model does not change during a run: every file starts with it (``Channel.static``).

Why a scene of primitives, not the URDF as a robot description: the vendors' URDFs name
meshes we neither ship nor install (the Atom's are not in the project, the GR-3's are in
the 83 MB package only as STL files Foxglove cannot reach from a file), and Foxglove's
URDF layer reads a URL, a file or a ROS parameter, not a recorded channel. The primitives
are exactly what validation checks and the simulator collides, so the picture shows the
body the project reasons about.

Both messages are JSON with Foxglove's own schema (``executive.records.foxglove_schemas``).
A profile without a body (the PND Adam: no licensed model; the GRX: none described) gets
neither channel, and ``RunChannels`` says so once in the log. Robot-neutral: nothing here
names a link; the model and the profile say everything.

Threads: the forward kinematics runs on ``RunChannels``' encoder thread, which owns its
own ``Body`` (a MuJoCo model is not thread-safe); the tick loop only queues the measured
joints, as it does for ``/robot/joints/<stream>``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import structlog

from executive.seam import bodyframes
from executive.seam.body import EMPTY_SCENE, Body, BodyError, BodySpec, FloatArray, NoBody
from executive.seam.profile import RobotProfile

log = structlog.get_logger(__name__)

TRANSFORMS = "/robot/transforms"
MODEL = "/robot/model"
TRANSFORMS_HZ = 50.0  # as /robot/joints: a tenth of the Atom's 500 Hz state
DIGITS = 5  # 10 um, 1e-5 of a unit quaternion: far below what a picture shows
SIDE = 0.02  # m off the mid-plane at the zero pose: a left or a right link
_LEFT = {"r": 0.2, "g": 0.478, "b": 0.718, "a": 0.85}  # pose preview's blue
_RIGHT = {"r": 0.851, "g": 0.325, "b": 0.31, "a": 0.85}  # and red
_CENTRE = {"r": 0.55, "g": 0.55, "b": 0.55, "a": 0.85}


def why_none(profile: RobotProfile) -> str | None:
    """Why a profile's runs carry no model (None: they do)."""
    spec = profile.body
    if isinstance(spec, NoBody):
        return f"profile {profile.name}: no body model ({spec.why})"
    if spec is None:
        return f"profile {profile.name}: no body model (the profile has no body:)"
    problem = _scene_or_problem(spec)[1]
    if problem:
        return f"profile {profile.name}: body model not loaded: {problem}"
    return None


def model_scene(profile: RobotProfile) -> bytes | None:
    """The ``/robot/model`` message of the profile's model (None: it has none)."""
    spec = profile.body
    if not isinstance(spec, BodySpec):
        return None
    return _scene_or_problem(spec)[0]


_SCENES: dict[str, tuple[bytes | None, str]] = {}  # by model: every catalogue asks


def _scene_or_problem(spec: BodySpec) -> tuple[bytes | None, str]:
    """The model's scene, built (or refused, and logged) once per model, or why not."""
    if spec.model not in _SCENES:
        try:
            body = Body(spec, (), EMPTY_SCENE)  # the shapes are the model's: no joints needed
            _SCENES[spec.model] = (_json(scene(body)), "")
        except BodyError as e:
            log.error("run channels: the body model did not load", model=spec.model, error=str(e))
            _SCENES[spec.model] = (None, str(e))
    return _SCENES[spec.model]


def _v3(v: Sequence[float] | FloatArray) -> dict[str, float]:
    return {
        "x": round(float(v[0]), DIGITS),
        "y": round(float(v[1]), DIGITS),
        "z": round(float(v[2]), DIGITS),
    }


def _quat(wxyz: Sequence[float] | FloatArray) -> dict[str, float]:
    w, x, y, z = (round(float(c), DIGITS) for c in wxyz)
    return {"x": x, "y": y, "z": z, "w": w}


def _time(ns: int) -> dict[str, int]:
    return {"sec": ns // 1_000_000_000, "nsec": ns % 1_000_000_000}


def scene(body: Body) -> dict[str, Any]:
    """A ``foxglove.SceneUpdate`` of the body's collision primitives, an entity per link
    locked to the link's frame (timestamp 0: it holds for the whole file)."""
    body.set_qpos(np.array(body.model.qpos0))
    shapes: dict[str, list[bodyframes.Shape]] = {}
    for shape in bodyframes.shapes(body):
        shapes.setdefault(shape.link, []).append(shape)
    entities = []
    for link, items in shapes.items():
        y = float(body.link_pose(link)[0][1])
        colour = _LEFT if y > SIDE else _RIGHT if y < -SIDE else _CENTRE
        entity: dict[str, Any] = {
            "timestamp": _time(0),
            "frame_id": link,
            "id": link,
            "lifetime": _time(0),  # forever
            "frame_locked": True,
            "metadata": [{"key": "link", "value": link}],
            "arrows": [],
            "cubes": [],
            "spheres": [],
            "cylinders": [],
            "lines": [],
            "triangles": [],
            "texts": [],
            "models": [],
        }
        for s in items:
            _primitive(entity, s, colour)
        entities.append(entity)
    return {"deletions": [], "entities": entities}


def _primitive(entity: dict[str, Any], s: bodyframes.Shape, colour: dict[str, float]) -> None:
    pose = {"position": _v3(s.position), "orientation": _quat(s.rotation)}
    size = _v3(s.size)
    if s.kind == "box":
        entity["cubes"].append({"pose": pose, "size": size, "color": colour})
    elif s.kind in ("sphere", "ellipsoid"):
        entity["spheres"].append({"pose": pose, "size": size, "color": colour})
    else:  # a cylinder; a capsule is its cylinder and a sphere at each end
        entity["cylinders"].append(
            {"pose": pose, "size": size, "bottom_scale": 1.0, "top_scale": 1.0, "color": colour}
        )
        if s.kind == "capsule":
            w, x, y, z = s.rotation
            axis = np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])
            for end in (-1.0, 1.0):
                centre = np.asarray(s.position) + axis * end * s.size[2] / 2
                ball = {"position": _v3(centre), "orientation": _quat(s.rotation)}
                diameter = _v3((s.size[0], s.size[0], s.size[0]))
                entity["spheres"].append({"pose": ball, "size": diameter, "color": colour})


def _json(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


class Frames:
    """Forward kinematics of the measured joints, as ``foxglove.FrameTransforms``; used
    by the encoder thread only (it builds its own ``Body`` on first use)."""

    def __init__(self, profile: RobotProfile) -> None:
        self.profile = profile
        self.joints: dict[str, float] = {}
        self._body: Body | None = None
        self._tree: bodyframes.LinkTree | None = None
        self._names: list[tuple[str, str]] = []  # (parent, child) per transform
        # the last pose's joints and its rounded frames: a robot at rest (an idle service
        # records the pre-roll at 50 Hz) costs no forward kinematics (issue 22)
        self._posed: tuple[float, ...] | None = None
        self._frames: tuple[list[Any], list[Any]] = ([], [])
        self._rendered: tuple[Any, list[str]] | None = None  # frames -> each transform's JSON

    def _loaded(self) -> Body:
        if self._body is None:
            from executive.seam.body import load

            self._body = load(self.profile)
            self._tree = bodyframes.tree(self._body)
            self._names = [(link.parent, link.name) for link in self._tree.links]
        return self._body

    def measured(self, names: Sequence[str], values: Any) -> None:
        """The newest measured positions of a joint stream (profile names, in order)."""
        for name, q in zip(names, np.asarray(values, dtype=np.float64).tolist(), strict=False):
            if np.isfinite(q):  # a sensor gone bad keeps the last good value
                self.joints[name] = q

    def message_json(self, stamp_ns: int) -> bytes | None:
        """``message`` as compact JSON (``json.dumps``'s, byte for byte), each transform
        rendered once per pose and only the stamps new; None where a value is not finite
        (the caller encodes ``message`` then, with its nulls)."""
        self._posed_frames()
        frames = self._frames
        if self._rendered is None or self._rendered[0] is not frames:
            bodies = self.message(0)["transforms"]
            try:
                rests = [
                    json.dumps(
                        {k: v for k, v in b.items() if k != "timestamp"},
                        separators=(",", ":"),
                        allow_nan=False,
                    )
                    for b in bodies
                ]
            except ValueError:
                return None
            self._rendered = (frames, rests)
        stamp = '{"timestamp":' + json.dumps(_time(stamp_ns), separators=(",", ":")) + ","
        items = ",".join(stamp + rest[1:] for rest in self._rendered[1])
        return ('{"transforms":[' + items + "]}").encode()

    def _posed_frames(self) -> None:
        """Pose the body if the joints changed since the last pose (bit for bit)."""
        body = self._loaded()
        assert self._tree is not None  # loaded with the body
        posed = tuple(self.joints.values())
        if posed != self._posed:  # (the same joints, in the order first measured)
            body.pose(self.joints)
            translation, rotation = bodyframes.local_frames(body, self._tree)
            t = np.round(translation, DIGITS).tolist()  # rounded at once: 30 links at 50 Hz
            q = np.round(rotation[:, [1, 2, 3, 0]], DIGITS).tolist()  # x y z w, as Foxglove
            self._posed, self._frames = posed, (t, q)

    def message(self, stamp_ns: int) -> dict[str, Any]:
        """Every link's transform from its parent for the joints measured so far."""
        self._posed_frames()
        t, q = self._frames
        stamp = _time(stamp_ns)
        return {
            "transforms": [
                {
                    "timestamp": stamp,
                    "parent_frame_id": parent,
                    "child_frame_id": child,
                    "translation": {"x": tx, "y": ty, "z": tz},
                    "rotation": {"x": qx, "y": qy, "z": qz, "w": qw},
                }
                for (parent, child), (tx, ty, tz), (qx, qy, qz, qw) in zip(
                    self._names, t, q, strict=True
                )
            ]
        }
