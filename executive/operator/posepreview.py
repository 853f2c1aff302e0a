"""``atom-executive pose preview NAME -o FILE.png``: a pose or gesture drawn on the robot.

An author sees what ``right_reach_forward`` looks like before the robot moves. The pose
comes from the mission directory's library (``missions/poses/*.yaml``, checked against
the profile's limits as a mission would load it), the kinematics from the vendor's URDF
(``executive/resources/atom.urdf``, Apache-2.0, Dobot-Arm/dobot_atom_ros2) through
``yourdfpy``, loaded without meshes: the figure is a stick figure, one segment per URDF
joint from parent to child frame, in three views (front, side, three-quarter).

A pose may name only some joints ("the others keep their targets"): the others are drawn
at the library's ``home`` pose (the start of every shipped mission), or zero without one,
and that starting pose is drawn faint behind the pose, so the motion shows too.

Gestures move the fingers, which the URDF does not model: a gesture is drawn as the arm
at ``home`` with that hand highlighted, beside a schematic of the hand in which each
finger curls by the share of its range the gesture asks for (the joint values are motor
angles, not phalanx angles; the schematic says so).

The profile names joints as the executive does, the URDF as the vendor's exporter did:
``URDF_JOINTS`` maps one to the other (legs are ``leg_l1..6`` in the URDF, the wrist's
roll is its ``wrist_yaw``), and a test holds the map to the URDF's joints and limits.
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

from executive.robots.profile import DEFAULT_PROFILE, RobotProfile, load_profile

URDF_PATH = Path(__file__).resolve().parents[1] / "resources" / "atom.urdf"
HOME = "home"

# profile joint -> URDF joint, where the names differ; every other profile joint that is
# not a finger is ``<name>_joint`` in the URDF. The leg order is the SDK's (hip pitch,
# roll, yaw, knee, ankle pitch, roll), which the URDF's limits confirm joint by joint.
_LEGS = ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch", "ankle_roll")
URDF_JOINTS: dict[str, str] = {
    **{f"left_{j}": f"leg_l{i}_joint" for i, j in enumerate(_LEGS, 1)},
    **{f"right_{j}": f"leg_r{i}_joint" for i, j in enumerate(_LEGS, 1)},
    "left_wrist_roll": "left_wrist_yaw_joint",
    "right_wrist_roll": "right_wrist_yaw_joint",
}
HAND_STUB = 0.09  # m beyond the wrist frame along its x: the URDF ends at the wrist
HEAD_STUB = 0.12  # m: the gaze along the head frame's x, so yaw and pitch show
HEAD_ABOVE = 0.11  # m: the head's centre above its pitch joint (the URDF's frame is the neck)
FOOT_STUB = 0.12
TRUNK = ("pelvis", "torso_link")  # links whose children hang off a spine, hips, shoulders
STUBS = {  # link -> m along its x: what the URDF ends before (hands) or does not draw
    "left_wrist_yaw_link": HAND_STUB,
    "right_wrist_yaw_link": HAND_STUB,
    "leg_l6_link": FOOT_STUB,
    "leg_r6_link": FOOT_STUB,
}
LEFT, RIGHT, CENTRE = "#337ab7", "#d9534f", "#444444"
FINGERS = ("index", "middle", "ring", "little")


class PreviewError(ValueError):
    """The name is not in the library, or the library has errors."""


def urdf_joint(profile: RobotProfile, name: str) -> str | None:
    """The URDF joint of a profile joint (None for fingers: the URDF has no hands)."""
    if profile.joints[name].group == "hands":
        return None
    return URDF_JOINTS.get(name, f"{name}_joint")


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
    from executive.operator.authoring import not_found

    root = missions_dir.resolve()
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


class Robot:
    """The URDF's kinematics: link frames for a configuration by profile joint names."""

    def __init__(self, profile: RobotProfile, urdf_path: Path = URDF_PATH) -> None:
        import yourdfpy

        self.profile = profile
        self.urdf = yourdfpy.URDF.load(
            str(urdf_path),
            load_meshes=False,
            build_collision_scene_graph=False,
            load_collision_meshes=False,
        )

    def frames(self, joints: Mapping[str, float]) -> dict[str, Any]:
        """Every link's 4x4 transform from the base (pelvis) for ``joints`` (others 0)."""
        cfg = {}
        for name, q in joints.items():
            urdf_name = urdf_joint(self.profile, name)
            if urdf_name is not None:
                cfg[urdf_name] = q
        full = [cfg.get(j, 0.0) for j in self.urdf.actuated_joint_names]
        self.urdf.update_cfg(np.array(full))
        return {link: self.urdf.get_transform(link) for link in self.urdf.link_map}

    def segments(self, joints: Mapping[str, float]) -> list[tuple[Any, Any, str]]:
        """(from, to, colour) of the stick figure: each moving URDF joint's parent to child
        origin (from the trunk by way of its axis: a spine, shoulders and hips, not an X),
        plus the head, the hands' and the feet's stubs."""
        frames = self.frames(joints)
        out = []
        for joint in self.urdf.robot.joints:
            if joint.type == "fixed":  # the IMU: not part of the body's shape
                continue
            parent = frames[joint.parent]
            child = frames[joint.child][:3, 3]
            a = parent[:3, 3]
            if joint.parent in TRUNK:
                up = parent @ np.array([0.0, 0.0, joint.origin[2, 3], 1.0])
                out.append((a, up[:3], CENTRE))
                a = up[:3]
            if not np.allclose(a, child):
                out.append((a, child, _side(joint.child)))
        for link, length in STUBS.items():
            if link in frames:
                t = frames[link]
                out.append((t[:3, 3], t[:3, 3] + t[:3, 0] * length, _side(link)))
        head = frames["head_pitch_link"]
        centre = (head @ np.array([0.0, 0.0, HEAD_ABOVE, 1.0]))[:3]
        out.append((head[:3, 3], centre, CENTRE))  # the neck
        out.append((centre, centre + head[:3, 0] * HEAD_STUB, CENTRE))  # the gaze
        return out

    def head(self, joints: Mapping[str, float]) -> Any:
        """The head's centre, for a circle around it."""
        head = self.frames(joints)["head_pitch_link"]
        return (head @ np.array([0.0, 0.0, HEAD_ABOVE, 1.0]))[:3]


def _side(link: str) -> str:
    if link.startswith(("left", "leg_l")):
        return LEFT
    if link.startswith(("right", "leg_r")):
        return RIGHT
    return CENTRE


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
    columns = len(VIEWS) + (1 if preview.kind == "gesture" else 0)
    fig = plt.figure(figsize=(4.2 * columns, 6.8))
    for i, (title, elev, azim) in enumerate(VIEWS):
        ax = fig.add_subplot(1, columns, i + 1, projection="3d")
        for a, b, _ in start:
            ax.plot(*zip(a, b, strict=True), color="#cccccc", lw=2.0)
        for a, b, colour in now:
            ax.plot(*zip(a, b, strict=True), color=colour, lw=2.8, solid_capstyle="round")
        ax.scatter(*robot.head(pose), s=900, color=CENTRE, alpha=0.25)
        if preview.kind == "gesture":
            side = "left" if any(n.startswith("left") for n in preview.joints) else "right"
            wrist = robot.frames(pose)[f"{side}_wrist_yaw_link"][:3, 3]
            ax.scatter(*wrist, s=220, color=LEFT if side == "left" else RIGHT, alpha=0.5)
        _frame(ax, title, elev, azim)
    if preview.kind == "gesture":
        _hand(fig.add_subplot(1, columns, columns), preview, profile)
    moved = ", ".join(f"{n} {q:+.2f}" for n, q in preview.joints.items())
    fig.suptitle(
        f"{preview.kind} {preview.name}: {preview.description}", fontsize=12, x=0.01, ha="left"
    )
    fig.text(
        0.01,
        0.015,
        _wrap(f"sets (rad): {moved}", 170)
        + f"\nfaint: the start ({HOME if preview.start else 'zero'}); blue left, red right"
        "; from the vendor URDF (no meshes)",
        fontsize=7.5,
        color="dimgrey",
        va="bottom",
    )
    fig.subplots_adjust(left=0.0, right=1.0, top=0.92, bottom=0.15, wspace=0.0)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def _frame(ax: Any, title: str, elev: float, azim: float) -> None:
    ax.set_xlim(-0.4, 0.6)  # a reach goes forward
    ax.set_ylim(-0.5, 0.5)
    ax.set_zlim(-1.0, 0.8)
    ax.set_box_aspect((1.0, 1.0, 1.8), zoom=1.15)
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
    pose = sub.add_parser("pose", help="poses of the library: preview")
    verbs = pose.add_subparsers(dest="pose_command", required=True, metavar="VERB")
    p = verbs.add_parser(
        "preview", help="draw a pose or gesture on the robot (from its URDF) as a PNG"
    )
    p.add_argument("name", metavar="NAME", help="a pose (missions/poses) or gesture name")
    p.add_argument("-o", "--output", type=Path, help="the PNG to write (default: NAME.png)")
    p.add_argument(
        "--missions", type=Path, default=Path("missions"), help="mission directory (its library)"
    )
    p.add_argument("--profile", default=DEFAULT_PROFILE, help="robot profile name or path")
    p.add_argument("--kind", choices=("pose", "gesture"), help="when a name is both")
    p.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    try:
        import yourdfpy  # noqa: F401 - only to say how to get it
    except ImportError:
        print(  # noqa: T201 - the user's answer
            "atom-executive pose preview: needs the 'preview' extra: "
            "pip install 'atom-executive[preview]'",
            file=sys.stderr,
        )
        return 1
    from executive.robots.profile import ProfileError

    try:
        profile = load_profile(args.profile)
        if profile.robot != "atom":  # the only URDF shipped is the Atom's
            raise PreviewError(
                f"profile {profile.name} is for the robot {profile.robot!r}: pose preview draws the Dobot "
                "Atom (its vendor URDF) only"
            )
        preview = find(args.missions, profile, args.name, args.kind)
    except (PreviewError, ProfileError) as e:
        print(f"atom-executive pose preview: {e}", file=sys.stderr)  # noqa: T201 - the answer
        return 1
    out = draw(preview, profile, args.output or Path(f"{args.name}.png"))
    print(out)  # noqa: T201 - where the picture is
    return 0
