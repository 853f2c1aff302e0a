"""``atom-executive pose preview NAME -o FILE.png``: a pose or gesture drawn on the robot.

An author sees what ``right_reach_forward`` looks like before the robot moves. The pose
comes from the mission directory's library (``missions/poses/*.yaml``, checked against
the profile's limits as a mission would load it), the kinematics from the robot's
vendor model as the profile names it (``body:``; ``executive.seam.body``: the Atom's
shipped URDF, the GR-3's from its package), loaded into MuJoCo as validation loads it.
The figure is a stick figure, one segment from each moving link's parent to the link
(children of a branching link, the hips, the shoulders, the neck, hang off its axis: a
spine, not an X), with the model's collision shapes drawn thin around it (what
validation checks for self-collision) and the profile's points (the hands, the gaze)
as stubs, in three views (front, side, three-quarter). Any robot whose profile has a
body is drawn; one without (the PND Adam: no licensed model) is refused with the
profile's reason. The profile maps its joint names to the model's: nothing here names a
robot's joint or link.

A pose may name only some joints ("the others keep their targets"): the others are drawn
at the library's ``home`` pose (the start of every shipped mission), or at the profile's
rest (``body.rest``: how the robot stands when handed over) without one, and that
starting pose is drawn faint behind the pose, so the motion shows too.

Gestures move the fingers, which the models do not carry: a gesture is drawn as the arm
at ``home`` with that hand's point highlighted, beside a schematic of the hand in which
each finger curls by the share of its range the gesture asks for (the joint values are
motor angles, not phalanx angles; the schematic says so).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from executive.operator import poseteach
from executive.seam import bodyframes
from executive.seam.body import Body, BodyError, BodySpec, FloatArray, NoBody, load
from executive.seam.profile import DEFAULT_PROFILE, RobotProfile, load_profile

HOME = "home"
HAND_STUB = 0.09  # m beyond the Atom's wrist frame: its profile's hand points (body.points)
STUB_MAX = 0.2  # m: a point further from its link (the gaze) is drawn dotted, not a limb
SIDE = 0.02  # m off the mid-plane at the model's zero pose: a left or a right link
LEFT, RIGHT, CENTRE = "#337ab7", "#d9534f", "#444444"
FINGERS = ("index", "middle", "ring", "little")
# the library is read from ./missions unless told: said wherever a directory has none
MISSIONS_HINT = "give the mission directory with --missions DIR (default: ./missions)"


class PreviewError(ValueError):
    """The name is not in the library, the library has errors, or the robot no model."""


@dataclass(frozen=True)
class Preview:
    name: str
    kind: str  # "pose" or "gesture"
    description: str
    joints: Mapping[str, float]  # what the pose or gesture sets, by profile joint name
    start: Mapping[str, float]  # where the others are (the library's home)


def find(missions_dir: Path, profile: RobotProfile, name: str, kind: str | None = None) -> Preview:
    """``name`` from the library of ``missions_dir`` (poses first, then gestures)."""
    from executive.mission.loader import MissionLoader
    from executive.suggest import not_found

    root = missions_dir.resolve()
    if not ((root / "poses").is_dir() or (root / "gestures").is_dir()):
        raise PreviewError(f"{root} has no poses/ or gestures/: {MISSIONS_HINT}")
    library = MissionLoader(profile, root).library(root)
    errors = [d for d in library.diagnostics if d.is_error]
    if name in library.broken:
        raise PreviewError(f"{name}: " + "; ".join(str(d) for d in errors))
    home = library.poses.get(HOME)
    start = dict(home.joints) if home is not None else {}
    found = []
    if kind in (None, "pose") and name in library.poses:
        found.append(("pose", library.poses[name]))
    if kind in (None, "gesture") and name in library.gestures:
        found.append(("gesture", library.gestures[name]))
    if not found:
        known = {*library.poses, *library.gestures}
        what = {"pose": "pose", "gesture": "gesture"}.get(kind or "", "pose or gesture")
        raise PreviewError(
            f"{not_found(what, name, known)} in {root} (`atom-executive poses`/`gestures` list them)"
        )
    if len(found) > 1:
        raise PreviewError(f"{name} is both a pose and a gesture: say which with --kind")
    found_kind, target = found[0]
    return Preview(name, found_kind, target.description, dict(target.joints), start)


def body_of(profile: RobotProfile) -> Body:
    """The profile's body model, or a PreviewError saying why there is none."""
    spec = profile.body
    if isinstance(spec, NoBody):
        raise PreviewError(f"profile {profile.name} has no body model to draw: {spec.why}")
    if not isinstance(spec, BodySpec):
        raise PreviewError(f"profile {profile.name} has no body model to draw (no body: key)")
    try:
        return load(profile)
    except BodyError as e:
        raise PreviewError(f"profile {profile.name}: {e}") from None


class Robot:
    """The profile's body model: link frames for a configuration by profile joint names."""

    def __init__(self, profile: RobotProfile) -> None:
        self.profile = profile
        self.body = body_of(profile)
        self.root = bodyframes.root(self.body)
        self.links = bodyframes.links(self.body)
        self.shapes = bodyframes.shapes(self.body)
        m = self.body.model
        self.moving = {link.name for link in self.links if int(m.body_jntnum[link.id]) > 0}
        children: dict[str, int] = {}
        for link in self.links:
            children[link.parent] = children.get(link.parent, 0) + 1
        self.branching = {name for name, n in children.items() if n > 1}
        self.body.set_qpos(np.array(m.qpos0))  # which side a link is on: at the zero pose
        self.side = {
            name: _colour(float(self.body.link_pose(name)[0][1]))
            for name in [self.root, *(link.name for link in self.links)]
        }

    def frames(self, joints: Mapping[str, float]) -> dict[str, FloatArray]:
        """Every link's 4x4 transform in the base frame (the model's root link) for
        ``joints`` (profile names; the others at the profile's rest)."""
        self.body.pose(joints)
        out = {}
        for name in [self.root, *(link.name for link in self.links)]:
            position, rotation = self.body.link_pose(name)
            t = np.eye(4)
            t[:3, :3], t[:3, 3] = rotation, position
            out[name] = t
        return out

    def segments(self, joints: Mapping[str, float]) -> list[tuple[Any, Any, str]]:
        """(from, to, colour) of the stick figure: each moving link's parent to the link
        (from a branching parent by way of its axis), plus each point's stub."""
        frames = self.frames(joints)
        out = []
        for link in self.links:
            if link.name not in self.moving:
                continue  # a sensor's or an end's fixed frame: not the body's shape
            parent = frames[link.parent]
            a, child = parent[:3, 3], frames[link.name][:3, 3]
            if link.parent in self.branching:
                local = np.linalg.inv(parent) @ np.append(child, 1.0)
                up = parent @ np.array([0.0, 0.0, local[2], 1.0])
                out.append((a, up[:3], self.side[link.parent]))
                a = up[:3]
            if not np.allclose(a, child):
                out.append((a, child, self.side[link.name]))
        for name in self.body.point_bodies:
            point = self.body.point(name)
            on = self.body.spec.points[name].link
            origin = frames[on][:3, 3]
            if np.linalg.norm(point - origin) <= STUB_MAX:
                out.append((origin, point, self.side[on]))
        return out

    def outlines(self, joints: Mapping[str, float]) -> list[tuple[FloatArray, str]]:
        """The collision shapes as polylines (n, 3) in the base frame, with colours."""
        frames = self.frames(joints)
        out = []
        for shape in self.shapes:
            frame = frames[shape.link]
            local = np.eye(4)
            local[:3, :3] = _matrix(shape.rotation)
            local[:3, 3] = shape.position
            world = frame @ local
            for line in _outline(shape):
                pts = (world[:3, :3] @ line.T).T + world[:3, 3]
                out.append((pts, self.side[shape.link]))
        return out

    def dotted(self, joints: Mapping[str, float]) -> list[tuple[Any, Any, str]]:
        """The points too far from their links for a stub (the gaze): drawn dotted."""
        self.body.pose(joints)
        out = []
        for name in self.body.point_bodies:
            link = self.body.spec.points[name].link
            origin = self.body.link_pose(link)[0]
            point = self.body.point(name)
            if np.linalg.norm(point - origin) > STUB_MAX:
                out.append((origin, point, self.side[link]))
        return out

    def extent(self) -> tuple[float, float, float]:
        """What the views show (m): half the width, the lowest and the highest z, from
        the links at rest and an arm's reach around them (any robot's size)."""
        frames = self.frames({})
        origins = np.array([t[:3, 3] for t in frames.values()])
        half_y = max(0.5, float(np.max(np.abs(origins[:, 1]))) + 0.3)
        return half_y, float(np.min(origins[:, 2])) - 0.1, float(np.max(origins[:, 2])) + 0.4

    def point(self, name: str, joints: Mapping[str, float]) -> FloatArray | None:
        """A named point of the profile (``right_hand``) for ``joints``; None: not named."""
        if name not in self.body.point_bodies:
            return None
        self.body.pose(joints)
        return self.body.point(name)


def _colour(y: float) -> str:
    return LEFT if y > SIDE else RIGHT if y < -SIDE else CENTRE


def _matrix(wxyz: tuple[float, float, float, float]) -> FloatArray:
    w, x, y, z = wxyz
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _outline(shape: bodyframes.Shape) -> list[FloatArray]:
    """A shape's outline in its own frame: a box's 12 edges, a cylinder's end circles and
    four sides, a sphere's three great circles."""
    sx, sy, sz = (v / 2 for v in shape.size)
    if shape.kind == "box":
        c = np.array([[x, y, z] for x in (-sx, sx) for y in (-sy, sy) for z in (-sz, sz)])
        edges = [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7)]
        edges += [(0, 4), (1, 5), (2, 6), (3, 7)]
        return [c[[a, b]] for a, b in edges]
    angle = np.linspace(0, 2 * math.pi, 25)
    ring = np.stack([np.cos(angle), np.sin(angle), np.zeros_like(angle)], axis=1)
    if shape.kind in ("sphere", "ellipsoid"):
        scale = np.array([sx, sy, sz])
        return [ring[:, order] * scale for order in ([0, 1, 2], [0, 2, 1], [2, 0, 1])]
    lines = [ring * [sx, sy, 0] + [0, 0, end] for end in (-sz, sz)]
    for k in range(4):
        x, y = sx * math.cos(k * math.pi / 2), sy * math.sin(k * math.pi / 2)
        lines.append(np.array([[x, y, -sz], [x, y, sz]]))
    return lines


VIEWS = (("front", 8, 0), ("side (from the right)", 8, -90), ("three-quarter", 18, -50))


def draw(preview: Preview, profile: RobotProfile, out: Path, robot: Robot | None = None) -> Path:
    """Draw ``preview`` as a PNG at ``out``; the path written."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, whatever the environment says
    import matplotlib.pyplot as plt

    robot = robot or Robot(profile)
    pose = {**preview.start, **preview.joints} if preview.kind == "pose" else dict(preview.start)
    start = robot.segments(preview.start)
    now = robot.segments(pose)
    outlines = robot.outlines(pose)
    dotted = robot.dotted(pose)
    limits = robot.extent()
    hand = None
    if preview.kind == "gesture":
        side = "left" if any(n.startswith("left") for n in preview.joints) else "right"
        hand = robot.point(f"{side}_hand", pose), LEFT if side == "left" else RIGHT
    columns = len(VIEWS) + (1 if preview.kind == "gesture" else 0)
    fig = plt.figure(figsize=(4.2 * columns, 6.8))
    for i, (title, elev, azim) in enumerate(VIEWS):
        ax = fig.add_subplot(1, columns, i + 1, projection="3d")
        for a, b, _ in start:
            ax.plot(*zip(a, b, strict=True), color="#cccccc", lw=2.0)
        for line, colour in outlines:
            ax.plot(*line.T, color=colour, lw=0.6, alpha=0.55)
        for a, b, colour in now:
            ax.plot(*zip(a, b, strict=True), color=colour, lw=2.8, solid_capstyle="round")
        for a, b, colour in dotted:
            ax.plot(*zip(a, b, strict=True), color=colour, lw=1.0, ls=":")
        if hand is not None and hand[0] is not None:
            ax.scatter(*hand[0], s=220, color=hand[1], alpha=0.5)
        _frame(ax, title, elev, azim, limits)
    if preview.kind == "gesture":
        _hand(fig.add_subplot(1, columns, columns), preview, profile)
    moved = ", ".join(f"{n} {q:+.2f}" for n, q in preview.joints.items())
    points = "; ".join(
        f"{name} ({p[0]:+.2f}, {p[1]:+.2f}, {p[2]:+.2f})"
        for name in robot.body.point_bodies
        if (p := robot.point(name, pose)) is not None
    )
    model = robot.body.spec.model.rsplit("/", 1)[-1]
    fig.suptitle(
        f"{preview.kind} {preview.name}: {preview.description}", fontsize=12, x=0.01, ha="left"
    )
    fig.text(
        0.01,
        0.015,
        _wrap(f"sets (rad): {moved}", 170)
        + f"\npoints (m, base frame {robot.root}: x forward, y left, z up): {points}"
        + f"\nfaint: the start ({HOME if preview.start else 'rest'}); blue left, red right"
        + f"; thin: the collision shapes; from the vendor's model ({model})",
        fontsize=7.5,
        color="dimgrey",
        va="bottom",
    )
    fig.subplots_adjust(left=0.0, right=1.0, top=0.92, bottom=0.15, wspace=0.0)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def _frame(
    ax: Any, title: str, elev: float, azim: float, limits: tuple[float, float, float]
) -> None:
    half_y, low, high = limits
    ax.set_xlim(-0.4, 0.6)  # a reach goes forward
    ax.set_ylim(-half_y, half_y)
    ax.set_zlim(low, high)
    ax.set_box_aspect((1.0, 2 * half_y, high - low), zoom=1.15)
    ax.view_init(elev=elev, azim=azim)
    ax.set_title(title, fontsize=10)
    ax.tick_params(labelsize=6)
    if azim == 0:  # looking along x: its ticks would be a smudge
        ax.set_xticks([])
        ax.set_ylabel("y (left) m", fontsize=7)
    elif azim == -90:
        ax.set_yticks([])
        ax.set_xlabel("x (forward) m", fontsize=7)
    else:
        ax.set_xlabel("x (forward)", fontsize=7)
        ax.set_ylabel("y (left)", fontsize=7)


def _hand(ax: Any, preview: Preview, profile: RobotProfile) -> None:
    """A schematic hand seen from the palm: each finger curls by the share of its range it
    is asked for, its phalanges foreshortened (curled over, a finger ends below its knuckle).
    """
    from matplotlib.patches import FancyBboxPatch

    side = "left" if any(n.startswith("left") for n in preview.joints) else "right"
    colour = LEFT if side == "left" else RIGHT
    outward = 1.0 if side == "right" else -1.0  # the thumb's side, as drawn

    def share(finger: str) -> float:
        name = f"{side}_{finger}"
        if name not in preview.joints:
            return 0.0
        joint = profile.joints[name]
        return (preview.joints[name] - joint.lower) / (joint.upper - joint.lower)

    palm = FancyBboxPatch((-1.0, -1.6), 2.0, 1.6, boxstyle="round,pad=0.1", alpha=0.25)
    palm.set_color(colour)
    ax.add_patch(palm)
    for i, finger in enumerate(FINGERS):
        x0 = -outward * 0.75 + outward * i * 0.5
        curl = share(finger)
        _finger(ax, (x0, 0.0), math.pi / 2, (0.6, 0.45, 0.35), curl, colour)
        ax.text(x0, 1.55, f"{finger}\n{curl:.0%}", ha="center", fontsize=7, va="bottom")
    # the thumb: rotate swings it from beside the hand (0) across the palm (1); bend curls it
    rotate, bend = share("thumb_rotate"), share("thumb_bend")
    angle = math.radians(35 + 115 * rotate)
    base = (outward * 0.95, -1.2)
    direction = angle if side == "right" else math.pi - angle
    _finger(ax, base, direction, (0.55, 0.45), bend, colour)
    ax.text(
        0.0,
        -1.95,
        f"thumb: bend {bend:.0%}, rotate {rotate:.0%}",
        ha="center",
        fontsize=7,
        va="top",
    )
    ax.set_xlim(-2.3, 2.3)
    ax.set_ylim(-2.4, 2.0)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"{side} hand, palm view (schematic: curl = share of range)", fontsize=10)


def _finger(
    ax: Any,
    base: tuple[float, float],
    direction: float,
    lengths: tuple[float, ...],
    curl: float,
    colour: str,
) -> None:
    """A finger of ``lengths`` phalanges from ``base`` along ``direction``, seen from the
    palm: each joint bends ``curl`` x 80 deg, so a phalanx shows cos(its angle) of itself."""
    x, y = base
    bent = 0.0
    points = [(x, y)]
    for length in lengths:
        bent += curl * math.radians(80)
        step = length * math.cos(bent)
        x += step * math.cos(direction)
        y += step * math.sin(direction)
        points.append((x, y))
    ax.plot(*zip(*points, strict=True), "-o", color=colour, lw=6, ms=5, solid_capstyle="round")


def _wrap(text: str, width: int) -> str:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join([*lines, line])


# -- the command ---------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    pose = sub.add_parser("pose")
    verbs = pose.add_subparsers(dest="pose_command", required=True, metavar="VERB")
    p = verbs.add_parser(
        "preview", help="draw a pose or gesture on the robot (from its vendor model) as a PNG"
    )
    p.add_argument("name", metavar="NAME", help="a pose (missions/poses) or gesture name")
    p.add_argument("-o", "--output", type=Path, help="the PNG to write (default: NAME.png)")
    p.add_argument(
        "--missions",
        type=Path,
        default=Path("missions"),
        help="mission directory, its poses/ and gestures/ (default: ./missions)",
    )
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="robot profile name or path")
    p.add_argument("--kind", choices=("pose", "gesture"), help="when a name is both")
    p.set_defaults(handler=command)
    s = verbs.add_parser(
        "solve",
        help="a pose given by where it goes (solve: GROUP): its joints, residual and clearance",
    )
    s.add_argument("name", metavar="NAME", help="a pose of the library (missions/poses)")
    s.add_argument(
        "--missions",
        type=Path,
        default=Path("missions"),
        help="mission directory, its poses/ (default: ./missions)",
    )
    s.add_argument("--profile", default=DEFAULT_PROFILE, help="robot profile name or path")
    s.set_defaults(handler=solve_command)
    t = verbs.add_parser(
        "teach",
        help="a pose taken from where the robot is: its measured joints and their intent",
    )
    poseteach.add_arguments(t)
    t.set_defaults(handler=poseteach.command)


def solve_command(args: argparse.Namespace) -> int:
    """``pose solve NAME``: what the library solved for a pose (or why it could not)."""
    from executive.mission.loader import MissionLoader
    from executive.seam.profile import ProfileError
    from executive.suggest import not_found

    try:
        profile = load_profile(args.profile)
    except ProfileError as e:
        print(f"atom-executive pose solve: {e}", file=sys.stderr)  # noqa: T201 - the answer
        return 1
    root = args.missions.resolve()
    library = MissionLoader(profile, root).library(root)
    pose = library.poses.get(args.name)
    if pose is None:
        missing = not_found("pose", args.name, library.poses)
        print(f"atom-executive pose solve: {missing}", file=sys.stderr)  # noqa: T201
        return 1
    if args.name in library.broken:
        for d in library.diagnostics:
            if d.is_error and f"poses.{args.name}" in d.path:
                print(d, file=sys.stderr)  # noqa: T201 - the refusal, at its file:line
        return 1
    solution = pose.solution
    if solution is None:
        where = f"{pose.where.file}:{pose.where.line}"
        print(f"{args.name}: gives its joints, nothing solved ({where})")  # noqa: T201
        return 1
    lines = [
        f"{args.name}: {pose.solve} solved for its intent ({pose.where.file}:{pose.where.line})"
    ]
    lines += [f"  {joint}: {q:+.4f}" for joint, q in pose.joints.items()]
    for point, miss in solution.residuals.items():
        x, y, z = solution.points[point]
        lines.append(
            f"  {point} at ({x:+.3f}, {y:+.3f}, {z:+.3f}) m, residual {miss * 1000:.1f} mm"
        )
    if solution.closest is not None:
        lines.append(f"  closest to the body: {solution.closest.describe()}")
    lines.append(f"  {solution.iterations} iterations")
    print("\n".join(lines))  # noqa: T201 - the answer
    return 0


def command(args: argparse.Namespace) -> int:
    from executive.seam.profile import ProfileError

    try:
        profile = load_profile(args.profile)
        robot = Robot(profile)  # first: a robot without a model is told so, whatever the name
        preview = find(args.missions, profile, args.name, args.kind)
    except (PreviewError, ProfileError) as e:
        print(f"atom-executive pose preview: {e}", file=sys.stderr)  # noqa: T201 - the answer
        return 1
    out = draw(preview, profile, args.output or Path(f"{args.name}.png"), robot)
    print(out)  # noqa: T201 - where the picture is
    return 0
