"""``atom-executive pose teach NAME --group GROUP``: a pose taken from where the robot is.

An author moves the arm where it should be (by hand in a compliant mode, or with a
mission) and keeps it as a library pose, instead of reading angles off a display and
typing them. What is written is what a solved pose carries: the group's joints, and
an ``intent`` (where each point of the body the group moves is, by forward kinematics of
the vendor's model, ``executive.seam.body``) that validation checks wherever a mission
reaches the pose (``executive/mission/body_checks.py``).

Where the joints come from:

- a running executive: its status (``telemetry.joints.STREAM.position``, by joint name,
  to 0.1 mrad). The executive holds the robot's connection, and a second reader of the
  robot through an adapter would also open the robot's command topics, which the
  executive's peer watch rightly calls another controller (``executive/service/peers.py``);
- no executive (none answers within ``--timeout``): the robot's state topics, read
  through the robot's own adapter (``executive.seam.registry.open_adapter``, as the
  service opens it), so nothing here decodes a robot's wire.

Either way the joints are read twice (two statuses, or two snapshots ``SETTLE_S`` apart)
and must agree within ``STILL`` rad: an arm still moving is refused, since its pose would
not be the one the author sees.

Refused in one line, with the library untouched: a group the profile lacks (or joints
its model does not carry), a name that is not a pose name, a name the library already
has (``--force`` replaces it where it is), a joint outside the profile's limits, and a
body that collides as measured (two links closer than the profile's margin, or a link in
the profile's scene: validation's body check, on the links the group moves).

The library file keeps its comments, key order and number formatting: ruamel.yaml's
round trip rewrites only the entry taught (each shipped library file round-trips byte
for byte, ``tests/test_pose_teach.py``). The file is replaced atomically, and read back
through the mission loader: the pose taught must load without a problem, or the old
file is put back.
"""

from __future__ import annotations

import argparse
import datetime
import io
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from executive.language.library import NAME_RE, limits_message
from executive.seam.body import Body, BodySpec, NoBody
from executive.seam.profile import RobotProfile

STILL = 1e-3  # rad: two readings of a joint further apart than this: the arm moves
SETTLE_S = 0.2  # s between the robot's two readings (the status': its next heartbeat)
DIGITS = 4  # rad: joints written to 0.1 mrad, as ``pose solve`` rounds them
POINT_DIGITS = 3  # m: intents to the millimetre, as the shipped libraries write them
WITHIN = 0.02  # m: a taught intent's tolerance, as a solved pose's default (``ik.Goal``)
STATE_AGE_S = 1.0  # s: joints in a status older than this are not where the robot is
DEFAULT_FILE = "taught.yaml"  # under the mission directory's poses/
HEADER = """\
# Poses taught from the robot (`atom-executive pose teach NAME --group GROUP`): the
# measured joints (rad), and where they put the body's points by forward kinematics of
# the vendor's model (intent: m, base frame, x forward, y left, z up), which validation
# checks wherever a mission reaches the pose.
poses: {}
"""
EXIT_REFUSED, EXIT_NO_STATE = 1, 3


class TeachError(ValueError):
    """Why a pose is not taught: one line, the library untouched."""


class NoStateError(TeachError):
    """Nothing measured the joints: no executive and no robot state within the timeout."""


@dataclass(frozen=True)
class Taught:
    """A pose as it is written: the group's ``joints`` (rad, rounded) and where they put
    each point of the body the group moves (``points``, m, base frame, rounded)."""

    group: str
    joints: Mapping[str, float]
    points: Mapping[str, tuple[float, float, float]]


# -- the pose --------------------------------------------------------------------------


def group_joints(profile: RobotProfile, group: str) -> list[str]:
    """The joints of a profile group, joint set or joint; TeachError when the profile has
    none by that name."""
    from executive.seam.profile import GROUPS
    from executive.suggest import did_you_mean

    try:
        return profile.expand([group])
    except KeyError:
        known = sorted({*profile.joint_sets, *(g for g in GROUPS if _has_group(profile, g))})
        hint = did_you_mean(group, known) or f" (its groups and sets: {', '.join(known)})"
        raise TeachError(
            f"profile {profile.name!r} has no joint group, set or joint {group!r}{hint}"
        ) from None


def _has_group(profile: RobotProfile, group: str) -> bool:
    return any(j.group == group for j in profile.joints.values())


def body_of(profile: RobotProfile) -> Body:
    """The profile's body (its scene included); TeachError for a profile without one: a
    taught pose could be checked neither for collisions nor for where it goes."""
    from executive.seam import body as bodies

    spec = profile.body
    if not isinstance(spec, BodySpec):
        why = f": {spec.why}" if isinstance(spec, NoBody) else ""
        raise TeachError(f"profile {profile.name!r} has no body model to check a pose on{why}")
    return bodies.load(profile)


def teach(
    profile: RobotProfile, body: Body, group: str, measured: Mapping[str, float | None]
) -> Taught:
    """The pose of ``group`` at the ``measured`` joints (profile names, rad; the joints
    outside the group as measured too, for the body check), or TeachError."""
    joints = group_joints(profile, group)
    unmodelled = [j for j in joints if j not in body.qpos_of]
    if unmodelled:
        raise TeachError(
            f"{group} has joints the body model does not carry ({', '.join(unmodelled)}): "
            "a pose of the model's joints only (fingers are gestures)"
        )
    missing = [j for j in joints if measured.get(j) is None]
    if missing:
        raise TeachError(f"no measured position for {', '.join(missing)}")
    taught: dict[str, float] = {}
    for name in joints:
        joint = profile.joints[name]
        q = round(float(measured[name] or 0.0), DIGITS) + 0.0  # no -0.0 in a file
        if not joint.within(q):
            if min(abs(q - joint.lower), abs(q - joint.upper)) > 10**-DIGITS:
                raise TeachError(f"measured {limits_message(name, q, joint.lower, joint.upper)}")
            q = joint.clamp(q)  # at the limit but for the rounding
        taught[name] = q
    body.pose({**{j: float(v) for j, v in measured.items() if v is not None}, **taught})
    moved = body.moved_by(joints)
    hits = body.collisions(only=moved) + body.scene_hits(only=moved)
    if hits:
        worst = min(hits, key=lambda c: c.distance)
        what = "is in the scene" if worst.b in body.scene.names else "collides"
        raise TeachError(
            f"the body as measured {what}: {worst.describe()} "
            f"(margin {body.spec.margin * 1000:.0f} mm): move {group} clear and teach again"
        )
    points = {}
    for point in moved_points(body, joints):
        p = body.point(point)
        x, y, z = (round(float(v), POINT_DIGITS) + 0.0 for v in p)
        points[point] = (x, y, z)
    return Taught(group, taught, points)


def moved_points(body: Body, joints: list[str]) -> list[str]:
    """The profile's points (a hand, the gaze) that any of ``joints`` moves."""
    m = body.model
    adr = {body.qpos_of[j] for j in joints}
    out = []
    for point, (bid, _) in body.point_bodies.items():
        b = bid
        while b != 0:
            first, count = int(m.body_jntadr[b]), int(m.body_jntnum[b])
            if any(int(m.jnt_qposadr[j]) in adr for j in range(first, first + count)):
                out.append(point)
                break
            b = int(m.body_parentid[b])
    return out


# -- the library file ------------------------------------------------------------------


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML()  # round trip: comments, key order and the numbers as written stay
    yaml.width = 4096  # a long line is the author's; never folded
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def entry(taught: Taught, description: str) -> Any:
    """The library entry of ``taught``: description, joints (a block), intent (a flow
    mapping a point, as the shipped libraries write them)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    joints = CommentedMap(taught.joints)
    intent = CommentedMap()
    for point, xyz in taught.points.items():
        at = CommentedSeq(xyz)
        at.fa.set_flow_style()
        goal = CommentedMap({"at": at, "within": WITHIN})
        goal.fa.set_flow_style()
        intent[point] = goal
    out = CommentedMap({"description": description, "joints": joints})
    if intent:
        out["intent"] = intent
    return out


def write(path: Path, name: str, value: Any, *, force: bool, keep_description: bool = False) -> str:
    """Put pose ``name`` in the library file ``path`` (made with a header when missing),
    keeping everything else of it as written (with ``keep_description``, a replaced
    pose's description too); the text it held before ("" when new)."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    yaml = _yaml()
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        data = yaml.load(old or HEADER)
    except YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise TeachError(f"{path}{line}: not YAML the library can read: {_first_line(e)}") from None
    poses = data.get("poses") if isinstance(data, CommentedMap) else None
    if poses is None and isinstance(data, CommentedMap) and "poses" in data:
        poses = data["poses"] = CommentedMap()
    if not isinstance(poses, CommentedMap):
        raise TeachError(f"{path}: not a pose library (a mapping with 'poses:')")
    if name in poses and not force:
        line = poses.lc.key(name)[0] + 1
        raise TeachError(f"pose {name!r} exists ({path}:{line}): --force replaces it")
    if name in poses and keep_description and isinstance(poses[name], Mapping):
        kept = poses[name].get("description")
        if isinstance(kept, str):
            value["description"] = kept
    if not poses:
        poses.fa.set_block_style()
    poses[name] = value  # a name already there keeps its place
    out = io.StringIO()
    yaml.dump(data, out)
    _replace(path, out.getvalue())
    return old


def _first_line(e: Exception) -> str:
    return " ".join(str(e).split())[:200]


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a file beside it, renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def where_defined(profile: RobotProfile, missions: Path, name: str) -> tuple[Path, int] | None:
    """The library file and line of pose ``name`` in the mission directory, or None."""
    from executive.mission.loader import MissionLoader

    root = missions.resolve()
    pose = MissionLoader(profile, root).library(root).poses.get(name)
    if pose is None:
        return None
    return root / "poses" / Path(pose.where.file).name, pose.where.line


def check_written(profile: RobotProfile, missions: Path, path: Path, name: str) -> None:
    """TeachError unless pose ``name`` loads from the library without a problem (the
    library of ``missions``, or of the folder above ``path`` when it is not in it)."""
    from executive.mission.loader import MissionLoader

    root = missions.resolve()
    if path.resolve().parent != root / "poses":
        root = path.resolve().parent.parent
    library = MissionLoader(profile, root).library(root)
    problems = [d for d in library.diagnostics if d.is_error and f"poses.{name}" in d.path]
    if name not in library.poses or problems:
        said = problems[0] if problems else f"pose {name!r} is not in the library read back"
        raise TeachError(f"the pose written does not load: {said}")


# -- the measured joints ---------------------------------------------------------------


def from_status(client: Any, timeout: float) -> tuple[dict[str, float | None], str] | None:
    """The joints a running executive measured, by name, and its profile's name; None
    when no executive answers within ``timeout``. Two statuses must agree (``STILL``)."""
    from executive.operator.lines import status_document
    from executive.service.client import NoExecutiveError

    try:
        first = client.status(timeout)
    except NoExecutiveError:
        return None
    docs = []
    for status in (first, client.wait_status(lambda s: s.seq != first.seq, timeout)):
        if status is None:
            raise NoStateError(f"the executive's status stopped within {timeout} s")
        doc = status_document(status)
        if doc is None:
            raise TeachError("the executive's status carries no status document (an older one?)")
        docs.append(doc)
    before, now = (_status_joints(d) for d in docs)
    _still(before, now)
    return now, str(docs[1].get("profile") or "")


def _status_joints(doc: Mapping[str, Any]) -> dict[str, float | None]:
    streams = (doc.get("telemetry") or {}).get("joints") or {}
    out: dict[str, float | None] = {}
    for stream, state in streams.items():
        if "position" not in state:
            raise TeachError("the executive's status carries no measured joints (an older one?)")
        age = state.get("age_s")
        if age is None or age > STATE_AGE_S:
            raise NoStateError(
                f"the executive's {stream} joint state is {age} s old (the robot is silent?)"
            )
        out.update(state["position"])
    if not out:
        raise NoStateError("the executive has no joint state from the robot yet")
    return out


def from_robot(
    profile: RobotProfile, participant: Any, interface: str | None, timeout: float
) -> dict[str, float | None]:
    """The joints measured on the robot's state topics, read through its adapter; two
    snapshots ``SETTLE_S`` apart must agree (``STILL``)."""
    from executive.seam.ports import AdapterError
    from executive.seam.registry import RobotError, open_adapter

    try:
        adapter = open_adapter(profile, participant=participant, interface=interface)
    except (AdapterError, RobotError) as e:
        raise TeachError(f"the {profile.name} adapter did not open: {e}") from None
    try:
        names = list(profile.joints)
        first = _snapshot(adapter, names, timeout, after=None)
        if first is None:
            raise NoStateError(
                f"no executive and no joint state from the robot within {timeout} s "
                f"(is the robot, or its sim, on this domain?)"
            )
        second = _snapshot(adapter, names, timeout, after=first[1] + SETTLE_S)
        if second is None:
            raise NoStateError(f"the robot's joint state stopped within {timeout} s")
        _still(first[0], second[0])
        return second[0]
    finally:
        adapter.close()


def _snapshot(
    adapter: Any, names: list[str], timeout: float, after: float | None
) -> tuple[dict[str, float | None], float] | None:
    """The joints of the robot's first snapshot with state for every joint stream, received
    after ``after`` (monotonic), and the oldest stream's time; None after ``timeout``."""
    deadline = time.monotonic() + timeout + (0.0 if after is None else SETTLE_S)
    while time.monotonic() < deadline:
        snap = adapter.snapshot()
        streams = {s for s, _ in snap.layout.values()}
        if streams and streams <= set(snap.joints):
            oldest = min(snap.joints[s].received for s in streams)
            if after is None or oldest > after:
                return {n: v for n, v in snap.positions(names).items()}, oldest
        time.sleep(0.02)
    return None


def _still(a: Mapping[str, float | None], b: Mapping[str, float | None]) -> None:
    moved = {
        n: abs(b[n] - v)  # type: ignore[operator]
        for n, v in a.items()
        if v is not None and b.get(n) is not None
    }
    worst = max(moved, key=moved.__getitem__, default=None)
    if worst is not None and moved[worst] > STILL:
        raise TeachError(
            f"the robot moves ({worst} by {moved[worst] * 1000:.1f} mrad between two "
            f"readings): hold it still and teach again"
        )


# -- the command -----------------------------------------------------------------------


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the pose's name (lower_case, digits and _)")
    p.add_argument(
        "--group",
        required=True,
        help="the joints taught: a group or joint set of the profile (right_arm, arms, head...)",
    )
    p.add_argument(
        "--library",
        type=Path,
        help=f"the pose file to write (default: the file that defines NAME, else "
        f"MISSIONS/poses/{DEFAULT_FILE})",
    )
    p.add_argument(
        "--missions",
        type=Path,
        default=Path("missions"),
        help="mission directory whose library NAME must not be in (default: ./missions)",
    )
    p.add_argument("--force", action="store_true", help="replace a pose of that name")
    p.add_argument("--description", help="the pose's description (default: when and what)")
    p.add_argument(
        "--profile",
        help="robot profile name or path (default: the running executive's, else atom-sdk)",
    )
    p.add_argument(
        "--interface",
        help="the robot's interface variant when no executive runs (default: the adapter's)",
    )
    p.add_argument("--domain", type=int, help="DDS domain (default: $ATOM_DDS_DOMAIN, else 0)")
    p.add_argument(
        "--timeout",
        type=float,
        default=3.0,
        help="seconds to wait for the executive's status, then for the robot's state",
    )


def command(args: argparse.Namespace) -> int:
    try:
        said = run(args)
    except NoStateError as e:
        _fail(e)
        return EXIT_NO_STATE
    except TeachError as e:
        _fail(e)
        return EXIT_REFUSED
    print(said)  # noqa: T201 - the answer
    return 0


def _fail(e: Exception) -> None:
    from executive.text import printable

    print(f"atom-executive pose teach: {printable(e)}", file=sys.stderr)  # noqa: T201


def run(args: argparse.Namespace, clock: Callable[[], float] = time.time) -> str:
    """Teach the pose ``args`` ask for; what was written, for the terminal."""
    from executive.seam.profile import DEFAULT_PROFILE, ProfileError, load_profile
    from executive.wire import dds

    if not NAME_RE.match(args.name):
        raise TeachError(f"{args.name!r}: a pose name is lower_case letters, digits and _")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise TeachError(f"--timeout {args.timeout}: a number of seconds above 0")
    try:
        given = load_profile(args.profile) if args.profile else None
        domain = dds.domain_id_from_env() if args.domain is None else args.domain
    except (ProfileError, ValueError) as e:
        raise TeachError(str(e)) from None
    # what can be refused without the robot is refused first: nothing is read for it
    early = given or load_profile(DEFAULT_PROFILE)
    if given is not None:  # else the group is the running executive's profile's
        group_joints(given, args.group)
    path = _library_path(early, args, args.name)
    profile, measured, source = measure(args, given, early, domain)
    if profile is not early:
        path = _library_path(profile, args, args.name)
    taught = teach(profile, body_of(profile), args.group, measured)
    when = datetime.datetime.fromtimestamp(clock(), datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    value = entry(taught, args.description or f"Taught from the robot ({args.group}, {when}).")
    old = write(path, args.name, value, force=args.force, keep_description=not args.description)
    try:
        check_written(profile, args.missions, path, args.name)
    except TeachError:
        if old:
            _replace(path, old)
        else:
            path.unlink(missing_ok=True)
        raise
    lines = [f"{args.name}: {args.group} taught from {source} into {path}"]
    lines += [f"  {j}: {q:+.4f}" for j, q in taught.joints.items()]
    lines += [
        f"  {p} at ({x:+.3f}, {y:+.3f}, {z:+.3f}) m" for p, (x, y, z) in taught.points.items()
    ]
    return "\n".join(lines)


def measure(
    args: argparse.Namespace, given: RobotProfile | None, early: RobotProfile, domain: int
) -> tuple[RobotProfile, dict[str, float | None], str]:
    """The profile, the measured joints and where they came from: the running executive's
    status, else the robot's state topics (``from_status``, ``from_robot``)."""
    from executive.seam.profile import DEFAULT_PROFILE, ProfileError, load_profile
    from executive.service.client import ExecutiveClient
    from executive.wire import dds

    with dds.open_participant(domain) as participant:
        client = ExecutiveClient(participant)
        try:
            found = from_status(client, args.timeout)
        finally:
            client.close()
        if found is None:
            measured = from_robot(early, participant, args.interface, args.timeout)
            return early, measured, "the robot's state topics (no executive answered)"
    measured, running = found
    if given is not None and running and given.name != running:
        raise TeachError(
            f"the executive runs profile {running!r}, not {given.name!r}: give --profile {running}"
        )
    try:
        profile = given or load_profile(running or DEFAULT_PROFILE)
    except ProfileError as e:
        raise TeachError(f"the executive's profile: {e}; give --profile") from None
    return profile, measured, "the executive's status"


def _library_path(profile: RobotProfile, args: argparse.Namespace, name: str) -> Path:
    """The file to write: ``--library``, else the file that defines ``name``, else the
    mission directory's ``poses/taught.yaml``. A name defined in another file than
    ``--library`` is refused: the library would hold it twice."""
    found = where_defined(profile, args.missions, name)
    if found and args.library is not None and found[0].resolve() != args.library.resolve():
        raise TeachError(
            f"pose {name!r} is defined at {found[0]}:{found[1]}: teach it there "
            f"(--library {found[0]} --force) or choose another name"
        )
    if found and not args.force:
        raise TeachError(f"pose {name!r} exists ({found[0]}:{found[1]}): --force replaces it")
    if args.library is not None:
        return Path(args.library)
    return found[0] if found else args.missions / "poses" / DEFAULT_FILE
