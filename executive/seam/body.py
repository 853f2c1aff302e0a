"""A robot's body from its vendor's model: where each joint value puts the links.

A joint value is a place in space. The profile's ``body:`` names the vendor's model (the
Atom's URDF, shipped; a model an installed package ships), maps the profile's joint
names onto the model's, and names the points an author cares about (a hand, the gaze).
This module loads that model into MuJoCo, the field's physics library, with its
collision geometry only (the vendors' meshes are neither shipped nor needed: the Atom's
URDF carries boxes for the torso, the upper arms, the forearms, the legs and the head),
and answers three questions for a set of joint values:

- where a named point is, in the robot's base frame (x forward, y left, z up, at the
  model's root link: the Atom's pelvis);
- which two links that are not neighbours come closer than a margin (self-collision);
- which link or point enters the scene (a table, a shelf, the floor) an author declared.

The same compiled model is what the simulated robot steps with physics, so validation,
the simulator and the pictures agree on the body by construction.

"Neighbours" are links whose collision geometry the kinematic chain joins through links
with none (the torso and an upper arm, across the shoulder's pitch link): their boxes
touch at the joint by design, so they are never checked against each other. A profile
may allow more pairs (``allowed_pairs``), saying why.

Robot-neutral: nothing here names a robot; everything robot-specific is profile data.
"""

from __future__ import annotations

import importlib.resources
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
SITE = "point:"  # a named point's site in the compiled model: "point:right_hand"
FloatArray = npt.NDArray[np.float64]


class BodyError(ValueError):
    """The model cannot be found or loaded, or the profile's body does not fit it."""


@dataclass(frozen=True)
class Point:
    """A named point on a link: ``offset`` (m) in the link's frame."""

    link: str
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Box:
    """An axis-aligned box in the base frame: ``center`` and full ``size`` (m)."""

    name: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]

    def inside(self, p: FloatArray, margin: float = 0.0) -> bool:
        half = np.asarray(self.size) / 2 + margin
        return bool(np.all(np.abs(p - np.asarray(self.center)) < half))


@dataclass(frozen=True)
class Plane:
    """A half-space boundary: points with ``z < height`` (base frame) are below it."""

    name: str
    height: float

    def below(self, p: FloatArray, margin: float = 0.0) -> bool:
        return bool(p[2] < self.height + margin)


Obstacle = Box | Plane


@dataclass(frozen=True)
class Scene:
    """What is around the robot, declared once (by the profile or a mission)."""

    boxes: tuple[Box, ...] = ()
    planes: tuple[Plane, ...] = ()

    def __add__(self, other: Scene) -> Scene:
        return Scene(self.boxes + other.boxes, self.planes + other.planes)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.boxes) + tuple(p.name for p in self.planes)


EMPTY_SCENE = Scene()


@dataclass(frozen=True)
class BodySpec:
    """The profile's ``body:``: which model, how its joints are named, what to check.

    ``model`` is a file name under ``executive/resources`` or ``package:MODULE/PATH`` for a
    model an installed package ships. ``joints`` maps profile joints to model joints where
    the names differ; every other profile joint outside ``unmodelled`` groups is
    ``joint_pattern.format(name)``. ``rest`` is where joints no step of a mission has set
    are assumed to be (the robot as it stands when handed over).
    """

    model: str
    joints: Mapping[str, str] = field(default_factory=dict)
    joint_pattern: str = "{}"
    unmodelled: frozenset[str] = frozenset()  # joint groups the model has no joints for
    points: Mapping[str, Point] = field(default_factory=dict)
    margin: float = 0.02  # m: closer than this is a collision
    allowed_pairs: frozenset[frozenset[str]] = frozenset()
    rest: Mapping[str, float] = field(default_factory=dict)
    scene: Scene = EMPTY_SCENE
    license: str = ""
    # joint streams whose commands carry the model's gravity torque as feed-forward
    # (``Gravity``), and the most any one joint is given (N m)
    feedforward: frozenset[str] = frozenset()
    feedforward_max: float = 0.0


@dataclass(frozen=True)
class NoBody:
    """A profile whose robot has no model we may ship or install, and why."""

    why: str


def model_path(model: str) -> Path:
    """Where the model file is: a shipped resource or a file of an installed package."""
    if model.startswith("package:"):
        module, _, rel = model.removeprefix("package:").partition("/")
        try:
            root = importlib.resources.files(module)
        except ModuleNotFoundError:
            raise BodyError(
                f"model {model!r}: the package {module!r} is not installed "
                f"(pip install the robot's description package)"
            ) from None
        path = Path(str(root.joinpath(rel)))
    else:
        path = RESOURCES / model
    if not path.is_file():
        raise BodyError(f"model {model!r}: no file at {path}")
    return path


def _collision_urdf(path: Path) -> str:
    """The URDF as MuJoCo should read it: no visuals, no meshes (not shipped), boxes,
    cylinders and spheres kept, every link kept (fusestatic off) so links keep names; a
    geom name used twice kept by its first."""
    try:
        root = ET.parse(path).getroot()  # noqa: S314 - a vendor model shipped with us
    except (OSError, ET.ParseError) as e:
        raise BodyError(f"{path}: cannot read the model: {e}") from None
    named: set[str] = set()
    for link in root.iter("link"):
        for visual in link.findall("visual"):
            link.remove(visual)
        for collision in link.findall("collision"):
            if collision.find("geometry/mesh") is not None:
                link.remove(collision)
            elif (name := collision.get("name")) is not None:
                if name in named:  # unnamed, as MuJoCo would make it, without its warning
                    del collision.attrib["name"]  # (the GR-3's feet: cylinder_foot_1 twice)
                named.add(name)
    extension = ET.SubElement(root, "mujoco")
    ET.SubElement(extension, "compiler", fusestatic="false", discardvisual="true")
    return ET.tostring(root, encoding="unicode")


@cache
def _model_xml(model: str) -> str:
    return _collision_urdf(model_path(model))


class Body:
    """One robot's model, compiled with a scene; cheap to query, not thread-safe (each
    thread that needs one builds its own with :func:`load`)."""

    def __init__(
        self, spec: BodySpec, profile_joints: Iterable[tuple[str, str]], scene: Scene
    ) -> None:
        import mujoco  # the field's physics library; imported here so profiles load without it

        self.mujoco = mujoco
        self.spec = spec
        self.scene = scene
        mj_spec = mujoco.MjSpec.from_string(_model_xml(spec.model))
        for box in scene.boxes:
            mj_spec.worldbody.add_geom(
                name=f"scene:{box.name}",
                type=mujoco.mjtGeom.mjGEOM_BOX,
                size=[s / 2 for s in box.size],
                pos=list(box.center),
            )
        for pname, point in spec.points.items():  # a frame a solver can name (executive.reach)
            link = mj_spec.body(point.link)
            if link is not None:  # else refused by _points below, naming the point
                link.add_site(name=f"{SITE}{pname}", pos=list(point.offset))
        try:
            self.model = mj_spec.compile()
        except ValueError as e:  # what MuJoCo's compiler raises
            raise BodyError(f"model {spec.model!r}: MuJoCo cannot compile it: {e}") from None
        self.data = mujoco.MjData(self.model)
        self.qpos_of = self._joints(profile_joints)  # profile joint -> qpos address
        self._index_geoms()
        self.point_bodies = self._points()
        self.pairs = self._checked_pairs()
        self.rest = np.array(self.model.qpos0)
        for name, q in spec.rest.items():
            if name in self.qpos_of:
                self.rest[self.qpos_of[name]] = q
        self._fromto = np.zeros(6)
        self._moved_by = self._ancestor_joints()
        self.pose({})  # at rest, so a query before any pose() answers for a real pose

    def _ancestor_joints(self) -> dict[int, frozenset[str]]:
        """Per robot geom, the profile joints that move it (those between it and the root)."""
        m = self.model
        joint_of_adr = {adr: name for name, adr in self.qpos_of.items()}
        out = {}
        for g in self.link_of_geom:
            names: set[str] = set()
            b = int(m.geom_bodyid[g])
            while b != 0:
                for j in range(int(m.body_jntadr[b]), int(m.body_jntadr[b] + m.body_jntnum[b])):
                    name = joint_of_adr.get(int(m.jnt_qposadr[j]))
                    if name is not None:
                        names.add(name)
                b = int(m.body_parentid[b])
            out[g] = frozenset(names)
        return out

    def moved_by(self, joints: Iterable[str]) -> frozenset[int]:
        """The robot geoms that any of ``joints`` moves: only pairs with one of them can
        change distance when those joints move (validation checks just those)."""
        names = set(joints)
        return frozenset(g for g, by in self._moved_by.items() if by & names)

    def _joints(self, profile_joints: Iterable[tuple[str, str]]) -> dict[str, int]:
        m, spec, mujoco = self.model, self.spec, self.mujoco
        out: dict[str, int] = {}
        missing = []
        for name, group in profile_joints:
            if group in spec.unmodelled:
                continue
            model_joint = spec.joints.get(name, spec.joint_pattern.format(name))
            jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, model_joint)
            if jid < 0:
                missing.append(f"{name} -> {model_joint}")
                continue
            out[name] = int(m.jnt_qposadr[jid])
        if missing:
            raise BodyError(f"model {spec.model!r} has no joint for {', '.join(missing)}")
        return out

    def _index_geoms(self) -> None:
        m, mujoco = self.model, self.mujoco
        obj = mujoco.mjtObj
        self.link_of_geom: dict[int, str] = {}
        self.scene_geoms: dict[int, str] = {}
        for g in range(m.ngeom):
            name = mujoco.mj_id2name(m, obj.mjOBJ_GEOM, g) or ""
            if name.startswith("scene:"):
                self.scene_geoms[g] = name.removeprefix("scene:")
            else:
                self.link_of_geom[g] = mujoco.mj_id2name(m, obj.mjOBJ_BODY, m.geom_bodyid[g])

    def _points(self) -> dict[str, tuple[int, FloatArray]]:
        m, mujoco = self.model, self.mujoco
        out = {}
        for pname, point in self.spec.points.items():
            bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, point.link)
            if bid < 0:
                raise BodyError(f"body.points.{pname}: the model has no link {point.link!r}")
            out[pname] = (bid, np.asarray(point.offset, dtype=np.float64))
        for pair in self.spec.allowed_pairs:
            for link in pair:
                if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, link) < 0:
                    raise BodyError(f"body.allowed_pairs: the model has no link {link!r}")
        return out

    def _checked_pairs(self) -> list[tuple[int, int]]:
        """Pairs of robot geoms on links that are not neighbours and not allowed."""
        m = self.model
        has_geom = {int(m.geom_bodyid[g]) for g in self.link_of_geom}

        def geom_parent(b: int) -> int:
            """The nearest ancestor link with collision geometry (0: the world)."""
            b = int(m.body_parentid[b])
            while b != 0 and b not in has_geom:
                b = int(m.body_parentid[b])
            return b

        parent = {b: geom_parent(b) for b in has_geom}
        out = []
        geoms = sorted(self.link_of_geom)
        for i, a in enumerate(geoms):
            for b in geoms[i + 1 :]:
                ba, bb = int(m.geom_bodyid[a]), int(m.geom_bodyid[b])
                if ba == bb or parent[ba] == bb or parent[bb] == ba:
                    continue
                if parent[ba] == parent[bb] == 0:
                    continue  # both hang off a link without geometry at the root (hips)
                pair = frozenset({self.link_of_geom[a], self.link_of_geom[b]})
                if pair in self.spec.allowed_pairs:
                    continue
                out.append((a, b))
        return out

    # -- queries --------------------------------------------------------------------------

    def pose(self, joints: Mapping[str, float], base: FloatArray | None = None) -> None:
        """Put the body at ``joints`` (profile names; others at ``base``, else rest)."""
        self.set_qpos(self.qpos(joints, base))

    def qpos(self, joints: Mapping[str, float], base: FloatArray | None = None) -> FloatArray:
        """The model's joint vector for ``joints`` over ``base`` (else rest)."""
        q = np.array(self.rest if base is None else base)
        for name, value in joints.items():
            adr = self.qpos_of.get(name)
            if adr is not None:
                q[adr] = value
        return q

    def set_qpos(self, q: FloatArray) -> None:
        self.data.qpos[:] = q
        self.mujoco.mj_kinematics(self.model, self.data)

    def point(self, name: str) -> FloatArray:
        """Where the named point is now (base frame, m)."""
        bid, offset = self.point_bodies[name]
        rot = self.data.xmat[bid].reshape(3, 3)
        return np.asarray(self.data.xpos[bid] + rot @ offset, dtype=np.float64)

    def link_pose(self, link: str) -> tuple[FloatArray, FloatArray]:
        """A link's position and rotation matrix now (base frame)."""
        bid = self.mujoco.mj_name2id(self.model, self.mujoco.mjtObj.mjOBJ_BODY, link)
        return np.array(self.data.xpos[bid]), np.array(self.data.xmat[bid]).reshape(3, 3)

    def collisions(
        self, margin: float | None = None, only: frozenset[int] | None = None
    ) -> list[Contact]:
        """Every checked pair of links closer than ``margin`` (default: the profile's);
        with ``only``, the pairs with at least one of those geoms (``moved_by``)."""
        limit = self.spec.margin if margin is None else margin
        out = []
        for a, b in self.pairs:
            if only is not None and a not in only and b not in only:
                continue
            d = self.mujoco.mj_geomDistance(self.model, self.data, a, b, limit + 0.05, self._fromto)
            if d < limit:
                out.append(Contact(self.link_of_geom[a], self.link_of_geom[b], float(d)))
        return out

    def scene_hits(
        self, margin: float | None = None, only: frozenset[int] | None = None
    ) -> list[Contact]:
        """Every link closer than ``margin`` to a scene box, and every named point inside
        a box or below a plane of the scene; with ``only``, those geoms' links alone."""
        limit = self.spec.margin if margin is None else margin
        out = []
        for s, obstacle in self.scene_geoms.items():
            for g, link in self.link_of_geom.items():
                if only is not None and g not in only:
                    continue
                d = self.mujoco.mj_geomDistance(
                    self.model, self.data, g, s, limit + 0.05, self._fromto
                )
                if d < limit:
                    out.append(Contact(link, obstacle, float(d)))
        for pname in self.point_bodies:
            p = self.point(pname)
            for plane in self.scene.planes:
                if plane.below(p, limit):
                    out.append(Contact(pname, plane.name, float(p[2] - plane.height)))
            for box in self.scene.boxes:
                if box.inside(p):
                    out.append(Contact(pname, box.name, 0.0))
        return out


@dataclass(frozen=True)
class Contact:
    """Two things closer than the margin: links, a point and an obstacle; ``distance`` in
    m (negative: they overlap by that much)."""

    a: str
    b: str
    distance: float

    def describe(self) -> str:
        if self.distance < 0:
            return f"{self.a} and {self.b} overlap by {-self.distance * 1000:.0f} mm"
        return f"{self.a} and {self.b} are {self.distance * 1000:.0f} mm apart"


def load(profile: Any, scene: Scene = EMPTY_SCENE) -> Body:
    """The body of a profile (``profile.body`` must be a :class:`BodySpec`) with the
    profile's scene plus ``scene``."""
    spec = profile.body
    if not isinstance(spec, BodySpec):
        raise BodyError(f"profile {profile.name!r} has no body model")
    joints = [(name, j.group) for name, j in profile.joints.items()]
    return Body(spec, joints, spec.scene + scene)


def path_samples(
    start: Mapping[str, float], end: Mapping[str, float], step: float = 0.05
) -> list[dict[str, float]]:
    """Joint values along a straight line in joint space from ``start`` to ``end`` (how a
    minimum-jerk move runs: every joint on the same time law), no joint moving more than
    ``step`` rad between samples; ``end`` last, ``start`` not included."""
    delta = max((abs(end[j] - start.get(j, end[j])) for j in end), default=0.0)
    n = max(1, math.ceil(delta / step))
    out = []
    for k in range(1, n + 1):
        s = k / n
        out.append({j: start.get(j, q) + (q - start.get(j, q)) * s for j, q in end.items()})
    return out


# -- the profile's ``body:`` ----------------------------------------------------------------

_BODY_KEYS = {
    "model",
    "license",
    "joints",
    "joint_pattern",
    "unmodelled",
    "points",
    "margin",
    "allowed_pairs",
    "rest",
    "scene",
    "none",
    "gravity_feedforward",
}


def _vector(raw: object) -> tuple[float, float, float] | None:
    if (
        isinstance(raw, list)
        and len(raw) == 3
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in raw)
        and all(math.isfinite(v) for v in raw)
    ):
        return (float(raw[0]), float(raw[1]), float(raw[2]))
    return None


def parse_scene(raw: object, key: str, bad: Any) -> Scene:
    """``{name: {box: {center: [x, y, z], size: [x, y, z]}} | {plane: {z: h}}}`` (m, base
    frame): a profile's or a mission's scene. ``bad(key, message)`` collects problems."""
    if raw is None:
        return EMPTY_SCENE
    if not isinstance(raw, dict):
        bad(key, "must be a mapping of obstacle name to {box: ...} or {plane: ...}")
        return EMPTY_SCENE
    boxes: list[Box] = []
    planes: list[Plane] = []
    for name, item in raw.items():
        where = f"{key}.{name}"
        if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) not in ("box", "plane"):
            bad(where, "must be {box: {center: [x, y, z], size: [x, y, z]}} or {plane: {z: m}}")
            continue
        kind, body = next(iter(item.items()))
        if not isinstance(body, dict):
            bad(f"{where}.{kind}", "must be a mapping")
        elif kind == "box":
            box = _box(str(name), body, f"{where}.box", bad)
            if box is not None:
                boxes.append(box)
        else:
            z = body.get("z")
            if set(body) != {"z"} or not _number(z) or not math.isfinite(z):  # type: ignore[arg-type]
                bad(f"{where}.plane", "must be {z: m} (the height of a horizontal plane)")
            else:
                planes.append(Plane(str(name), float(z)))  # type: ignore[arg-type]
    return Scene(tuple(boxes), tuple(planes))


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _box(name: str, body: Mapping[str, Any], where: str, bad: Any) -> Box | None:
    center, size = _vector(body.get("center")), _vector(body.get("size"))
    if set(body) - {"center", "size"}:
        bad(where, f"unknown keys {sorted(set(body) - {'center', 'size'})}")
    if center is None:
        bad(f"{where}.center", "must be [x, y, z] in m")
    if size is None or min(size) <= 0:
        bad(f"{where}.size", "must be [x, y, z], each > 0 m")
    if center is None or size is None or min(size) <= 0:
        return None
    return Box(name, center, size)


def parse_spec(raw: object, joints: Mapping[str, Any], bad: Any) -> BodySpec | NoBody | None:
    """The profile's ``body:`` (None where the profile says nothing)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        bad("body", "must be a mapping ({model: ...} or {none: why})")
        return None
    for key in sorted(set(raw) - _BODY_KEYS):
        bad(f"body.{key}", f"unknown key (known: {', '.join(sorted(_BODY_KEYS))})")
    if "none" in raw:
        why = raw["none"]
        if not isinstance(why, str) or not why.strip() or len(raw) != 1:
            bad("body.none", "must be the only key, saying why the robot has no model")
            return None
        return NoBody(why.strip())
    model = raw.get("model")
    if not isinstance(model, str) or not model:
        bad("body.model", "must name the model file (under executive/resources, or package:...)")
        return None
    mapped = _mapped_joints(raw.get("joints"), joints, bad)
    pattern = raw.get("joint_pattern", "{}")
    if not isinstance(pattern, str) or pattern.count("{}") != 1:
        bad("body.joint_pattern", "must contain {} once (the profile joint's name)")
        pattern = "{}"
    unmodelled = raw.get("unmodelled") or []
    if not isinstance(unmodelled, list) or not all(isinstance(g, str) for g in unmodelled):
        bad("body.unmodelled", "must be a list of joint groups the model has no joints for")
        unmodelled = []
    margin = raw.get("margin", 0.02)
    if not _number(margin) or not 0 <= margin <= 0.2:
        bad("body.margin", f"must be a distance in m, 0..0.2, got {margin!r}")
        margin = 0.02
    scene = parse_scene(raw.get("scene"), "body.scene", bad)
    feedforward, feedforward_max = _feedforward(raw.get("gravity_feedforward"), joints, bad)
    return BodySpec(
        model=model,
        joints=mapped,
        joint_pattern=pattern,
        unmodelled=frozenset(unmodelled),
        points=_points(raw.get("points"), bad),
        margin=float(margin),
        allowed_pairs=_pairs(raw.get("allowed_pairs"), bad),
        rest=_rest(raw.get("rest"), joints, bad),
        scene=scene,
        license=str(raw.get("license", "")),
        feedforward=feedforward,
        feedforward_max=feedforward_max,
    )


def _feedforward(raw: object, joints: Mapping[str, Any], bad: Any) -> tuple[frozenset[str], float]:
    """``gravity_feedforward: {streams: [upper], max_nm: 30}``."""
    if raw is None:
        return frozenset(), 0.0
    streams = raw.get("streams") if isinstance(raw, dict) else None
    limit = raw.get("max_nm") if isinstance(raw, dict) else None
    if (
        not isinstance(raw, dict)
        or set(raw) != {"streams", "max_nm"}
        or not isinstance(streams, list)
        or not all(isinstance(x, str) for x in streams)
    ):
        bad("body.gravity_feedforward", "must be {streams: [stream, ...], max_nm: N m}")
        return frozenset(), 0.0
    if not _number(limit) or not 0 < limit <= 500:  # type: ignore[operator]
        bad("body.gravity_feedforward.max_nm", f"must be a torque in N m, 0..500, got {limit!r}")
        return frozenset(), 0.0
    return frozenset(streams), float(limit)  # type: ignore[arg-type]


def _mapped_joints(raw: object, joints: Mapping[str, Any], bad: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        bad("body.joints", "must map profile joint names to model joint names")
        return {}
    for name in raw:
        if name not in joints:
            bad(f"body.joints.{name}", "not a joint of this profile")
    return {str(k): v for k, v in raw.items()}


def _points(raw: object, bad: Any) -> dict[str, Point]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        bad("body.points", "must map point names to {link: NAME, offset: [x, y, z]}")
        return {}
    points: dict[str, Point] = {}
    for pname, p in raw.items():
        if not isinstance(p, dict) or not isinstance(p.get("link"), str):
            bad(f"body.points.{pname}", "must be {link: NAME, offset: [x, y, z]}")
            continue
        offset = _vector(p.get("offset", [0.0, 0.0, 0.0]))
        if offset is None:
            bad(f"body.points.{pname}.offset", "must be [x, y, z] in m")
            continue
        points[str(pname)] = Point(p["link"], offset)
    return points


def _pairs(raw: object, bad: Any) -> frozenset[frozenset[str]]:
    pairs: set[frozenset[str]] = set()
    for i, pair in enumerate(raw if isinstance(raw, list) else []):
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(x, str) for x in pair)
        ):
            bad(f"body.allowed_pairs[{i}]", "must be [link, link]")
            continue
        pairs.add(frozenset(pair))
    if raw is not None and not isinstance(raw, list):
        bad("body.allowed_pairs", "must be a list of [link, link]")
    return frozenset(pairs)


def _rest(raw: object, joints: Mapping[str, Any], bad: Any) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        bad("body.rest", "must map joint names to positions")
        return {}
    rest: dict[str, float] = {}
    for name, q in raw.items():
        joint = joints.get(name)
        if joint is None:
            bad(f"body.rest.{name}", "not a joint of this profile")
        elif not _number(q) or not joint.within(float(q)):
            bad(f"body.rest.{name}", f"must be a number within the joint's limits, got {q!r}")
        else:
            rest[str(name)] = float(q)
    return rest


# -- the body for physics (the simulated robot) ------------------------------------------------


def physics_model(
    body: Body, *, timestep: float = 0.002, armature: float = 0.01, gravcomp: bool = False
) -> Any:
    """The ``body``'s model compiled for stepping: one MIT-mode actuator per profile joint,
    contacts between exactly the pairs validation checks, and the same scene.

    Actuators: the firmware's joint loop (MotorCmd_ mode 11) is
    ``tau = kp (q* - q) + kd (dq* - dq) + tau_ff``. A MuJoCo ``general`` actuator with a
    fixed gain ``kp`` on ``ctrl = q*`` and an affine bias ``kd dq* + tau_ff - kp q - kd dq``
    is that law exactly, and it lets the ``implicitfast`` integrator treat ``kd`` implicitly:
    computed in Python and applied as an external force, ``kd`` 1 on a wrist whose inertia
    is 0.6 g m^2 diverges at a 2 ms step (kd dt / I = 3.4 > 2). The simulator rewrites
    ``actuator_gainprm``/``biasprm`` when a command brings new gains; the actuators start at
    the profile's. Actuator ``i`` drives ``body.qpos_of``'s ``i``-th joint (its name is the
    profile joint's).

    ``armature`` (kg m^2, added to every actuated joint): the rotor inertia a geared motor
    reflects onto its joint. The URDF carries none; the Atom's value is not published; a
    geared servo of this size reflects about 0.01-0.05 kg m^2, and 0.01 keeps the wrist's
    position loop (kp 200) well inside the explicit stiffness limit (omega dt 0.27).

    Contacts: the URDF import would collide every pair of geoms, including the neighbours
    whose boxes overlap at a joint by design (the torso and an upper arm); here no geom
    collides by default and each pair of ``body.pairs`` (links that are not neighbours, not
    allowed) and each robot geom against each scene box is an explicit contact pair, so the
    physics pushes back exactly where validation would refuse. Geom ids are the ``body``'s.

    ``gravcomp``: every link's weight compensated (MuJoCo's ``gravcomp``), for a robot
    whose firmware owns the torques and holds a commanded position under load (the
    Aurora's whole-body controller): its commands carry positions, not the feed-forward
    the Atom's MIT-mode commands bring.
    """
    mujoco = body.mujoco
    spec = mujoco.MjSpec.from_string(_model_xml(body.spec.model))
    for box in body.scene.boxes:  # as Body adds them: the same geom ids
        spec.worldbody.add_geom(
            name=f"scene:{box.name}",
            type=mujoco.mjtGeom.mjGEOM_BOX,
            size=[s / 2 for s in box.size],
            pos=list(box.center),
        )
    spec.option.timestep = timestep
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    if gravcomp:
        for link in spec.bodies:
            link.gravcomp = 1.0
    m = body.model
    geoms = spec.geoms
    if len(geoms) != m.ngeom:
        raise BodyError(f"model {body.spec.model!r}: {len(geoms)} geoms for physics, {m.ngeom}")
    for g, geom in enumerate(geoms):
        geom.contype = 0
        geom.conaffinity = 0
        if not geom.name:
            geom.name = f"geom:{g}"
    names = [geom.name for geom in geoms]
    for a, b in body.pairs:
        spec.add_pair(geomname1=names[a], geomname2=names[b])
    for s in body.scene_geoms:
        for g in body.link_of_geom:
            spec.add_pair(geomname1=names[g], geomname2=names[s])
    obj = mujoco.mjtObj
    for name, adr in body.qpos_of.items():
        jid = int(np.flatnonzero(m.jnt_qposadr == adr)[0])
        joint = mujoco.mj_id2name(m, obj.mjOBJ_JOINT, jid)
        spec.joint(joint).armature = armature
        spec.add_actuator(
            name=name,
            target=joint,
            trntype=mujoco.mjtTrn.mjTRN_JOINT,
            gaintype=mujoco.mjtGain.mjGAIN_FIXED,
            biastype=mujoco.mjtBias.mjBIAS_AFFINE,
            gainprm=[0.0] * 10,
            biasprm=[0.0] * 10,
        )
    try:
        model = spec.compile()
    except ValueError as e:
        raise BodyError(f"model {body.spec.model!r}: MuJoCo cannot compile it: {e}") from None
    if not np.array_equal(model.geom_bodyid, m.geom_bodyid):
        raise BodyError(f"model {body.spec.model!r}: geoms compiled in another order")
    return model


class Gravity:
    """The torque gravity puts on a joint stream's joints at a commanded ``q``: what the
    stream's MIT-mode command carries as feed-forward (``tau_ff``), so the joints arrive
    where they are sent instead of sagging ``tau_gravity / kp`` below it (an Atom arm
    held out sideways at the vendor's kp 200: 0.05-0.07 rad, more than a move's
    tolerance).

    The torque is the vendor model's (its links' masses and centres of mass) with the
    other streams' joints at the body's rest pose (the legs standing), each joint's
    value clipped to ``feedforward_max``: a wrong model can lean on a joint by no more
    than that. Joints the model lacks (fingers) get none. One per stream, called on the
    streamer's thread only (a MuJoCo data record is not shared).
    """

    def __init__(self, profile: Any, joints: Iterable[str]) -> None:
        spec = profile.body
        if not isinstance(spec, BodySpec):
            raise BodyError(f"profile {profile.name!r} has no body model")
        self.body = load(profile)
        self.limit = spec.feedforward_max
        names = list(joints)
        m = self.body.model
        self.adr = np.array([self.body.qpos_of.get(n, -1) for n in names], dtype=np.intp)
        self.modelled = self.adr >= 0
        # the dof of a hinge joint is its qpos address on a fixed-base model; hold to it
        self.dof = np.array(
            [int(m.jnt_dofadr[self._joint_of(a)]) if a >= 0 else -1 for a in self.adr],
            dtype=np.intp,
        )
        self._bias = np.zeros(m.nv)
        self._q = np.array(self.body.rest)

    def _joint_of(self, qpos_adr: int) -> int:
        m = self.body.model
        return int(np.flatnonzero(m.jnt_qposadr == qpos_adr)[0])

    def __call__(self, q: FloatArray) -> FloatArray:
        body, mujoco = self.body, self.body.mujoco
        m, d = body.model, body.data
        qpos = self._q
        qpos[self.adr[self.modelled]] = np.asarray(q, dtype=np.float64)[self.modelled]
        d.qpos[:] = qpos
        d.qvel[:] = 0.0
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_rne(m, d, 0, self._bias)  # at rest: gravity alone
        tau = np.zeros(len(self.adr))
        tau[self.modelled] = self._bias[self.dof[self.modelled]]
        return np.clip(tau, -self.limit, self.limit)
