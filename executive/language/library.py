"""Pose and gesture libraries: named joint targets shared by every mission of a directory.

``<root>/poses/*.yaml`` hold ``poses:`` and ``<root>/gestures/*.yaml`` hold ``gestures:``,
each entry a name with a description and targets by joint name (never by index):

    poses:
      home:
        description: Arms relaxed at the sides, head level.
        joints: {left_shoulder_pitch: 0.0, ...}

    gestures:
      right_grasp_cup:
        fingers: {right_index: 1.6, ...}

Poses may name any profile joint; gestures only hand joints (``right_index``...). Every
value is checked against the profile's limits when the library loads, so a mission
that names a pose can trust it. A name defined twice is an error.

A pose may say where it goes instead of how: ``intent`` (where points of the body go)
and ``solve: GROUP`` (a joint group or set of the profile: ``right_arm``, ``arms``,
``head``...), with ``joints`` optional as the seed. The group's joints are then solved
by inverse kinematics on the profile's body model when the library loads
(``executive.reach.ik``), and the pose is the solution (with the seed's joints outside
the group as given). An intent the solver cannot reach is refused at its file:line,
saying how far the best solution stays and what stops it:

    poses:
      cup_grasp:
        description: Right hand at the cup on the counter.
        solve: right_arm
        intent:
          right_hand: {at: [0.45, -0.20, 0.10], within: 0.02}
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from executive.language.diagnostics import Diagnostic, Diagnostics, Location
from executive.language.kinds import Field, FieldType
from executive.language.values import check_value, suggest
from executive.language.yaml_source import (
    ReadTree,
    YEntry,
    YMap,
    YNode,
    YScalar,
    describe,
    plain,
)
from executive.reach import ik
from executive.seam.body import BodySpec, NoBody
from executive.seam.profile import RobotProfile

NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_NUMBER = Field("value", FieldType.NUMBER, "")


@dataclass(frozen=True)
class Intent:
    """Where a pose means a point of the body to be: ``at`` (m, the robot's base frame:
    x forward, y left, z up; ``None`` for an axis the pose leaves free, such as a lift
    that raises the hand from wherever it grasped) within ``within`` m. Checked by forward kinematics of the
    vendor's model wherever a mission reaches the pose (executive/mission/body_checks.py),
    so a pose whose numbers are fine but whose body is not (a mirrored elbow) is refused."""

    point: str
    at: tuple[float | None, float | None, float | None]
    within: float
    where: Location


@dataclass(frozen=True)
class Target:
    """A named pose or gesture: joint name -> rad, all inside the profile's limits. A
    solved pose (``solve``: the group solved for its intent) keeps its ``solution``."""

    name: str
    joints: Mapping[str, float]
    description: str
    where: Location
    intent: Mapping[str, Intent] = field(default_factory=lambda: MappingProxyType({}))
    solve: str = ""
    solution: ik.Solution | None = None


@dataclass(frozen=True)
class Library:
    """The poses and gestures of one mission directory. ``broken`` names entries that had
    errors (already reported): a mission naming one is not valid, but gets no second error."""

    poses: Mapping[str, Target]
    gestures: Mapping[str, Target]
    diagnostics: tuple[Diagnostic, ...]
    broken: frozenset[str]
    files: tuple[str, ...]


EMPTY = Library(MappingProxyType({}), MappingProxyType({}), (), frozenset(), ())


def library_files(root: Path) -> dict[str, list[Path]]:
    """The library files under ``root``, by section, in name order."""
    out: dict[str, list[Path]] = {}
    for section in ("poses", "gestures"):
        folder = root / section
        out[section] = (
            sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
            if folder.is_dir()
            else []
        )
    return out


def load_library(root: Path, display_root: str, profile: RobotProfile, read: ReadTree) -> Library:
    """Read and check every library file under ``root``; problems go in ``diagnostics``."""
    diags = Diagnostics()
    sections: dict[str, dict[str, Target]] = {"poses": {}, "gestures": {}}
    broken: set[str] = set()
    files: list[str] = []
    for section, paths in library_files(root).items():
        for path in paths:
            display = str(Path(display_root) / section / path.name)
            files.append(display)
            tree, problems = read(path, display)
            diags.extend(problems)
            if tree is not None:
                _file(tree, section, profile, sections[section], broken, diags)
    return Library(
        MappingProxyType(sections["poses"]),
        MappingProxyType(sections["gestures"]),
        diags.items(),
        frozenset(broken),
        tuple(files),
    )


def _file(
    tree: YNode,
    section: str,
    profile: RobotProfile,
    out: dict[str, Target],
    broken: set[str],
    diags: Diagnostics,
) -> None:
    if not isinstance(tree, YMap):
        diags.error(tree.where, "", f"expected a mapping with '{section}:', got {describe(tree)}")
        return
    for key, entry in tree.entries.items():
        if key not in (section, "description"):
            diags.error(
                entry.key_where,
                key,
                f"unknown key (a file in {section}/ holds 'description' and '{section}')",
            )
    body = tree.entries.get(section)
    if body is None:
        diags.error(tree.where, "", f"missing '{section}:'")
        return
    if not isinstance(body.value, YMap):
        diags.error(
            body.value.where, section, f"expected a mapping of names, got {describe(body.value)}"
        )
        return
    for name, entry in body.value.entries.items():
        path = f"{section}.{name}"
        if not NAME_RE.match(name):
            diags.error(entry.key_where, path, "names are lower_case letters, digits and _")
        if name in out:
            first = out[name].where
            diags.error(
                entry.key_where, path, f"{section[:-1]} {name!r} is also defined at {first}"
            )
            continue
        target, ok = _entry(entry.value, section, path, profile, diags)
        intent = _intent(entry.value, path, profile, diags) if section == "poses" else {}
        group, solution = "", None
        solve = entry.value.entries.get("solve") if isinstance(entry.value, YMap) else None
        if solve is not None and section == "poses":
            before = diags.error_count()
            group, solution = _solve(solve, path, target, intent, profile, diags)
            ok = ok and diags.error_count() == before
            if solution is not None:
                target = MappingProxyType(
                    {
                        **{j: q for j, q in target.items() if j not in solution.joints},
                        **solution.joints,
                    }
                )
        out[name] = Target(
            name,
            target,
            _description(entry.value),
            entry.key_where,
            MappingProxyType(intent),
            group,
            solution,
        )
        if not ok:
            broken.add(name)


def _description(node: YNode) -> str:
    if isinstance(node, YMap) and "description" in node.entries:
        value = node.entries["description"].value
        if isinstance(value, YScalar) and isinstance(value.value, str):
            return value.value
    return ""


def _entry(
    node: YNode, section: str, path: str, profile: RobotProfile, diags: Diagnostics
) -> tuple[Mapping[str, float], bool]:
    field = "joints" if section == "poses" else "fingers"
    known = (
        ("description", field, "intent", "solve") if section == "poses" else ("description", field)
    )
    before = diags.error_count()
    if not isinstance(node, YMap):
        diags.error(node.where, path, f"expected a mapping with '{field}:', got {describe(node)}")
        return MappingProxyType({}), False
    for key, entry in node.entries.items():
        if key not in known:
            diags.error(
                entry.key_where, f"{path}.{key}", f"unknown key (known: {', '.join(known)})"
            )
        elif key == "description" and not (
            isinstance(entry.value, YScalar) and isinstance(entry.value.value, str)
        ):
            diags.error(entry.value.where, f"{path}.{key}", "expected text")
    targets: dict[str, float] = {}
    body = node.entries.get(field)
    if body is None and "solve" in node.entries:
        pass  # a solved pose: its joints come from the solver, the seed is the rest
    elif body is None:
        diags.error(node.where, path, f"missing '{field}:' (or 'solve:' and 'intent:')")
    elif not isinstance(body.value, YMap) or not body.value.entries:
        diags.error(
            body.value.where,
            f"{path}.{field}",
            f"expected a mapping of joint name to rad, got {describe(body.value)}",
        )
    else:
        for joint_name, item in body.value.entries.items():
            q = joint_value(
                joint_name,
                item.key_where,
                item.value,
                f"{path}.{field}.{joint_name}",
                profile,
                diags,
                fingers=section == "gestures",
            )
            if q is not None:
                targets[joint_name] = q
    return MappingProxyType(targets), diags.error_count() == before


def _intent(node: YNode, path: str, profile: RobotProfile, diags: Diagnostics) -> dict[str, Intent]:
    """A pose's ``intent: {point: {at: [x, y, z], within: m}}``; the points are the
    profile body's (``right_hand``, ``gaze``...)."""
    if not isinstance(node, YMap) or "intent" not in node.entries:
        return {}
    entry = node.entries["intent"]
    ipath = f"{path}.intent"
    if not isinstance(entry.value, YMap) or not entry.value.entries:
        diags.error(entry.value.where, ipath, "expected {point: {at: [x, y, z], within: m}}")
        return {}
    body = profile.body
    points = body.points if isinstance(body, BodySpec) else {}
    if not isinstance(body, BodySpec):
        diags.warning(
            entry.key_where, ipath, f"profile {profile.name!r} has no body model: not checked"
        )
    out: dict[str, Intent] = {}
    for point, item in entry.value.entries.items():
        where, here = item.key_where, f"{ipath}.{point}"
        if isinstance(body, BodySpec) and point not in points:
            diags.error(where, here, f"not a point of the body{suggest(point, points, 'points')}")
            continue
        raw = plain(item.value)
        at, within = (raw.get(k) if isinstance(raw, dict) else None for k in ("at", "within"))
        xyz = _axes(at)
        if not isinstance(raw, dict) or set(raw) != {"at", "within"} or xyz is None:
            diags.error(
                where,
                here,
                "expected {at: [x, y, z] (m, base frame; null for an axis left free), within: m}",
            )
            continue
        if not (isinstance(within, int | float) and not isinstance(within, bool)) or not (
            0 < within <= 0.5
        ):
            diags.error(where, f"{here}.within", f"must be a distance in m, 0..0.5, got {within!r}")
            continue
        out[point] = Intent(point, xyz, float(within), where)
    return out


def _solve(
    entry: YEntry,
    path: str,
    seed: Mapping[str, float],
    intent: Mapping[str, Intent],
    profile: RobotProfile,
    diags: Diagnostics,
) -> tuple[str, ik.Solution | None]:
    """A pose's ``solve: GROUP``: the group's joints solved for the pose's intent, from
    the pose's ``joints`` as the seed (the body's rest for the joints it does not give)."""
    spath = f"{path}.solve"
    group = entry.value.value if isinstance(entry.value, YScalar) else None
    if not isinstance(group, str) or not group:
        diags.error(entry.value.where, spath, "expected a joint group or set (right_arm, head...)")
        return "", None
    body = profile.body
    if not isinstance(body, BodySpec):
        why = f": {body.why}" if isinstance(body, NoBody) else ""
        diags.error(
            entry.key_where, spath, f"profile {profile.name!r} has no body model to solve on{why}"
        )
        return group, None
    if not intent:
        diags.error(
            entry.key_where,
            spath,
            "solve needs an intent (where the points go): intent: {point: {at: [x, y, z], within: m}}",
        )
        return group, None
    try:
        solver = ik.solver_for(profile)
        joints = solver.joints_of(group)
    except ik.ReachError as e:
        diags.error(
            entry.value.where,
            spath,
            f"{e}{suggest(group, [*profile.joint_sets, 'arms', 'head', 'torso', 'legs'], 'groups')}",
        )
        return group, None
    goals = []
    for item in intent.values():
        goal = ik.Goal(item.point, item.at, item.within)
        try:
            solver.check_goal(goal, joints)
        except ik.ReachError as e:
            diags.error(item.where, f"{path}.intent.{item.point}", str(e))
            return group, None
        goals.append(goal)
    solution = solver.solve(goals, joints, seed)
    if not solution.ok:
        item = intent.get(solution.about) or next(iter(intent.values()))
        diags.error(
            item.where,
            f"{path}.intent.{item.point}",
            f"no solution for {group} ({entry.key_where.file}:{entry.key_where.line}): "
            f"{solution.problem}",
        )
        return group, None
    return group, solution


def _axes(raw: object) -> tuple[float | None, float | None, float | None] | None:
    """``[x, y, z]`` with ``null`` for an axis the intent leaves free (at least one set)."""
    if not isinstance(raw, list) or len(raw) != 3:
        return None
    out: list[float | None] = []
    for v in raw:
        if v is None:
            out.append(None)
        elif isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            out.append(float(v))
        else:
            return None
    if all(v is None for v in out):
        return None
    return (out[0], out[1], out[2])


def joint_value(
    joint_name: str,
    key_where: Location,
    node: YNode,
    path: str,
    profile: RobotProfile,
    diags: Diagnostics,
    *,
    fingers: bool,
) -> float | None:
    """A library joint target checked against the profile (name, hand-ness, limits)."""
    joint = profile.joints.get(joint_name)
    if joint is None:
        diags.error(
            key_where, path, f"unknown joint{suggest(joint_name, profile.joints, 'joints')}"
        )
        return None
    if fingers and joint.group != "hands":
        diags.error(
            key_where, path, f"{joint_name} is not a finger joint (gestures move hands only)"
        )
        return None
    if not isinstance(node, YScalar):
        diags.error(node.where, path, f"expected a number, got {describe(node)}")
        return None
    if isinstance(node.value, str) and "${" in node.value:
        diags.error(node.where, path, "parameters cannot be used in a library")
        return None
    if node.bad:
        return None
    q, problem = check_value(node.value, _NUMBER, _NO_NAMES)
    if problem is not None:
        diags.error(node.where, path, problem)
        return None
    if not joint.within(q):
        diags.error(node.where, path, limits_message(joint_name, q, joint.lower, joint.upper))
        return None
    return float(q)


def limits_message(joint: str, q: float, lower: float, upper: float) -> str:
    return f"{q:g} rad is outside {joint}'s limits [{lower:g}, {upper:g}]"


class _NoNames:
    poses: tuple[str, ...] = ()
    gestures: tuple[str, ...] = ()
    fsm_states: tuple[str, ...] = ()


_NO_NAMES = _NoNames()
