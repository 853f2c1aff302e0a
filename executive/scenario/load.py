"""Scenario files in, a checked ``Scenario`` or every problem out (``file:line:col: path: ...``).

A scenario is checked against everything it names before anything runs, as a mission is
by the validator (and with its located YAML, ``executive.language.yaml_source``): its keys
and their types; its mission (found and loaded with the scenario's parameters, for the
scenario's robot profile); every node it names, in an event or an expectation, against
the nodes of the mission's tree (``executive.scenario.nodes``: a name, or a path); every
fault spec against the robot's simulator; ``world:`` against the simulator's settings; a
button against the robot's buttons; a pose against the mission directory's library and a
body point against the profile's. A typo is refused with where it is and what was meant,
never found out halfway through a run.

The mission is ``mission: NAME`` in the missions directory (``missions: DIR`` relative to
the file, else the caller's, else the nearest directory above the file with ``poses/`` or
``gestures/``, as the validator finds it), or ``file: PATH`` relative to the file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from executive.language.diagnostics import Diagnostic, Diagnostics, Location
from executive.language.yaml_source import (
    SourceError,
    YMap,
    YNode,
    YScalar,
    YSeq,
    describe,
    parse,
    plain,
    read_file,
)
from executive.mission.build import BuildError, build
from executive.mission.builders import BUILDERS
from executive.mission.loader import MissionLoader, find_root
from executive.scenario import nodes
from executive.scenario.model import (
    ACTIONS,
    DEFAULT_STILL_WITHIN_S,
    DEFAULT_TAIL_S,
    DEFAULT_TIMEOUT_S,
    REQUESTS,
    RESULTS,
    WHENS,
    BodyCheck,
    End,
    Event,
    Expect,
    Scenario,
    Still,
)
from executive.seam.lockstep import LockstepPart
from executive.seam.profile import DEFAULT_PROFILE, ProfileError, RobotProfile, load_profile
from executive.seam.registry import part
from executive.suggest import did_you_mean, not_found

SUFFIX = ".test.yaml"
TOP = {
    "test": "what the scenario shows, one line (its name in reports)",
    "mission": "a mission of the missions directory, by name",
    "file": "a mission file, relative to this file (instead of mission:)",
    "missions": "the missions directory, relative to this file",
    "profile": f"the robot profile (default {DEFAULT_PROFILE})",
    "params": "the mission's parameters",
    "world": "the simulated robot's world at start (battery, seed, ...)",
    "events": "what happens during the run: faults, buttons, operator requests",
    "expect": "what must come of the run",
    "timeout": f"simulated seconds before the scenario is ended and failed ({DEFAULT_TIMEOUT_S:g})",
    "tail": f"seconds the scenario goes on after its run ended ({DEFAULT_TAIL_S:g})",
}
EVENT_KEYS = dict.fromkeys((*WHENS, "after", *ACTIONS), "")
EXPECT = {
    "result": f"how the run ends: {' | '.join(RESULTS)}",
    "causes": "the codes of the SAFE_STOP's causes (estop, servo_error, ...), or a failure's",
    "ran": "nodes that ran, in this order (names or paths)",
    "never_ran": "nodes that never ran",
    "failed_at": "the node whose failure ended the run",
    "no_motion_after": "an event's index, or {event: I, within: S, until: J}: no motion from S after it",
    "end": "where the robot is at the end: {pose: P, within: RAD} or {hand: {point, at, within}}",
    "body": "where the robot is when a node starts or ends: [{on_end: NODE, pose: P, hand: ...}]",
}


class _Checker:
    """One file's checks, every problem collected (``Diagnostics``)."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.diags = Diagnostics()

    def error(self, where: Location, path: str, message: str) -> None:
        self.diags.error(where, path, message)

    def keys(self, node: YMap, path: str, known: Iterable[str]) -> None:
        known = tuple(known)
        for key, entry in node.entries.items():
            if key not in known:
                where = f"{path}." if path else ""
                self.error(
                    entry.key_where,
                    f"{where}{key}",
                    f"unknown key{did_you_mean(key, known)}; known: {', '.join(known)}",
                )

    def text(self, node: YNode | None, path: str, *, required: bool = False) -> str | None:
        if node is None:
            return None
        if isinstance(node, YScalar) and isinstance(node.value, str) and node.value.strip():
            return node.value
        if isinstance(node, YScalar) and isinstance(node.value, int | float) and required:
            return str(node.value)
        self.error(node.where, path, f"expected text, got {describe(node)}")
        return None

    def number(
        self, node: YNode | None, path: str, *, low: float = 0.0, strict: bool = False
    ) -> float | None:
        if node is None:
            return None
        value = node.value if isinstance(node, YScalar) else None
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and (value > low if strict else value >= low)
        ):
            return float(value)
        bound = f"> {low:g}" if strict else f">= {low:g}"
        self.error(node.where, path, f"expected a number {bound}, got {describe(node)}")
        return None

    def mapping(self, node: YNode | None, path: str) -> YMap | None:
        if node is None:
            return None
        if isinstance(node, YMap):
            return node
        if isinstance(node, YScalar) and node.value is None:  # "params:" with nothing under
            return YMap({}, node.where)
        self.error(node.where, path, f"expected a mapping, got {describe(node)}")
        return None

    def names(self, node: YNode | None, path: str) -> list[tuple[str, Location]]:
        """A list of node references (or one, written alone)."""
        if node is None:
            return []
        items = node.items if isinstance(node, YSeq) else (node,)
        out = []
        for i, item in enumerate(items):
            name = self.text(item, f"{path}[{i}]" if isinstance(node, YSeq) else path)
            if name is not None:
                out.append((name, item.where))
        return out


def _entry(node: YMap, key: str) -> YNode | None:
    entry = node.entries.get(key)
    return None if entry is None else entry.value


def find_scenarios(paths: list[Path]) -> list[Path]:
    """The scenario files of ``paths``: files as given, directories' ``*.test.yaml``
    (recursively), sorted."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(path.rglob(f"*{SUFFIX}"))
        else:
            out.append(path)
    return out


def load_scenario(
    path: Path, missions_dir: Path | None = None
) -> tuple[Scenario | None, tuple[Diagnostic, ...]]:
    """``path`` checked (see the module); the scenario, or None and every problem."""
    display = str(path)
    check = _Checker(display)
    try:
        tree, problems = parse(read_file(path, display), display)
    except SourceError as e:
        return None, (e.diagnostic,)
    check.diags.extend(problems)
    top = check.mapping(tree, "")
    if top is None:
        return None, check.diags.items()
    check.keys(top, "", TOP)
    test = check.text(_entry(top, "test"), "test", required=True)
    if "test" not in top.entries:
        check.error(top.where, "test", "required: what the scenario shows, one line")
    profile_text, profile = _profile(check, top)
    loaded = _mission(check, top, path, missions_dir, profile)
    robot = _lockstep(check, top, profile) if profile is not None else None
    world = _world(check, top, robot, path.parent)
    timeout = check.number(_entry(top, "timeout"), "timeout", strict=True)
    tail = check.number(_entry(top, "tail"), "tail")
    # without the mission's tree no node can be checked (its own problems are reported)
    refs = _Refs(check, loaded[4] if loaded else None, loaded[0] if loaded else "")
    events = _events(check, _entry(top, "events"), refs, robot, world)
    root = loaded[2] if loaded else None
    expect = _expect(check, _entry(top, "expect"), top, refs, events, profile, root)
    if check.diags.has_errors or expect is None or loaded is None or test is None:
        return None, check.diags.items()
    assert profile is not None
    name, mission_file, missions_root, params, _ = loaded
    return (
        Scenario(
            file=path,
            test=test,
            mission=name,
            mission_file=mission_file,
            missions_dir=missions_root,
            profile=profile_text,
            params=params,
            world=world,
            events=tuple(events),
            expect=expect,
            timeout=DEFAULT_TIMEOUT_S if timeout is None else timeout,
            tail=DEFAULT_TAIL_S if tail is None else tail,
            where=top.entries["test"].key_where,
        ),
        check.diags.items(),
    )


def _profile(check: _Checker, top: YMap) -> tuple[str, RobotProfile | None]:
    """The profile as the scenario names it (a built-in name, or a path), and loaded."""
    node = _entry(top, "profile")
    name = check.text(node, "profile") if node is not None else DEFAULT_PROFILE
    if name is None:
        return "", None
    try:
        return name, load_profile(name)
    except ProfileError as e:
        check.error(node.where if node is not None else top.where, "profile", str(e))
        return name, None


def _lockstep(check: _Checker, top: YMap, profile: RobotProfile) -> LockstepPart | None:
    found = part(profile.robot, "lockstep")
    if found is None:
        where = top.entries["profile"].value.where if "profile" in top.entries else top.where
        check.error(
            where,
            "profile",
            f"robot {profile.robot!r} cannot run scenarios yet: its spec names no "
            "lockstep part (executive/seam/lockstep.py says what it is)",
        )
        return None
    robot: LockstepPart = found  # type: ignore[assignment]  # an object, not a callable
    return robot


def _mission(
    check: _Checker,
    top: YMap,
    path: Path,
    missions_dir: Path | None,
    profile: RobotProfile | None,
) -> tuple[str, Path, Path, dict[str, Any], list[str]] | None:
    """The mission: its name, file, directory (root), parameters and node paths."""
    found = _mission_file(check, top, path, missions_dir)
    params_node = check.mapping(_entry(top, "params"), "params")
    params = {} if params_node is None else dict(plain(params_node))  # type: ignore[call-overload]
    if found is None or profile is None:
        return None
    file, root, where = found
    loader = MissionLoader(profile, root)
    result = loader.check(file, args=params)
    for d in result.errors:
        if d.path.startswith("params") and params_node is not None:  # the scenario's values
            check.error(params_node.where, "params", f"{file.name}: {d.message}")
        else:
            check.diags.extend([d])
    if (
        result.mission is None
        and params
        and all(d.path.startswith("params") for d in result.errors)
    ):
        result = loader.check(file)  # its defaults: the nodes can still be checked
    mission = result.mission
    if mission is None or not result.ok:
        if not result.errors:
            check.error(where, "mission", f"{file} is not a mission")
        return None
    if mission.kind != "mission":
        check.error(where, "mission", f"{file} is a {mission.kind}: only a mission can run")
        return None
    try:
        tree = build(mission, BUILDERS)
    except BuildError as e:
        check.error(where, "mission", str(e))
        return None
    return mission.name, file, root, params, nodes.tree_paths(tree)


def _mission_file(
    check: _Checker, top: YMap, path: Path, missions_dir: Path | None
) -> tuple[Path, Path, Location] | None:
    """The mission's file, its directory, and where the scenario names it."""
    by_name, by_file = _entry(top, "mission"), _entry(top, "file")
    if (by_name is None) == (by_file is None):
        check.error(top.where, "mission", "one of mission: NAME or file: PATH is required")
        return None
    base = path.parent
    if (given := _entry(top, "missions")) is not None:
        folder = check.text(given, "missions")
        if folder is None:
            return None
        missions_dir = base / folder
        if not missions_dir.is_dir():
            check.error(given.where, "missions", f"no directory {missions_dir}")
            return None
    if by_name is not None:
        name = check.text(by_name, "mission")
        if name is None:
            return None
        root = (missions_dir or find_root(path)).resolve()
        file = root / f"{name}.yaml"
        if not file.is_file():
            known = [p.stem for p in root.glob("*.yaml")]
            check.error(by_name.where, "mission", f"{not_found('mission', name, known)} in {root}")
            return None
        return file, root, by_name.where
    assert by_file is not None
    text = check.text(by_file, "file")
    if text is None:
        return None
    file = (base / text).resolve()
    if not file.is_file():
        check.error(by_file.where, "file", f"no mission file {base / text}")
        return None
    return file, (missions_dir or find_root(file)).resolve(), by_file.where


class _Refs:
    """Checks node references against the mission's node paths."""

    def __init__(self, check: _Checker, node_paths: list[str] | None, mission: str) -> None:
        self.check = check
        self.paths = node_paths  # None: the mission did not load (nothing to check against)
        self.mission = mission

    def __call__(self, ref: str, where: Location, path: str) -> bool:
        if self.paths is None or any(nodes.matches(ref, p) for p in self.paths):
            return True
        known = nodes.names(self.paths) + self.paths
        self.check.error(where, path, f"{not_found('node', ref, known)} in {self.mission}")
        return False


def _world(check: _Checker, top: YMap, robot: LockstepPart | None, base: Path) -> dict[str, Any]:
    node = check.mapping(_entry(top, "world"), "world")
    if node is None or robot is None:
        return {}
    world: dict[str, Any] = dict(plain(node))  # type: ignore[call-overload]
    unknown = [
        (k, f"not a world key of {robot.simulator}") for k in world if k not in robot.world_keys
    ]
    valued = {k: v for k, v in world.items() if k in robot.world_keys}
    for key, message in [*robot.check_world(valued, base), *unknown]:
        entry = node.entries.get(key)
        where = node.where if entry is None else entry.value.where
        if entry is not None and key not in robot.world_keys:  # a name: said at the name
            where = entry.key_where
        known = (
            ""
            if key in robot.world_keys
            else f"{did_you_mean(key, robot.world_keys)}; known: {', '.join(robot.world_keys)}"
        )
        check.error(where, f"world.{key}", message + known)
    return world


def _events(
    check: _Checker,
    node: YNode | None,
    refs: _Refs,
    robot: LockstepPart | None,
    world: Mapping[str, Any],
) -> list[Event]:
    if node is None:
        return []
    if not isinstance(node, YSeq):
        check.error(node.where, "events", f"expected a list of events, got {describe(node)}")
        return []
    out = []
    for i, item in enumerate(node.items):
        event = _event(check, i, item, refs, robot, world)
        if event is not None:
            out.append(event)
    return out


def _event(
    check: _Checker,
    i: int,
    item: YNode,
    refs: _Refs,
    robot: LockstepPart | None,
    world: Mapping[str, Any],
) -> Event | None:
    """``events[i]``: exactly one when (``at``, ``on_start``, ``on_end``; ``after``
    with a node's), exactly one action."""
    path = f"events[{i}]"
    event = check.mapping(item, path)
    if event is None:
        return None
    check.keys(event, path, EVENT_KEYS)
    whens = [w for w in WHENS if w in event.entries]
    actions = [a for a in ACTIONS if a in event.entries]
    if len(whens) != 1 or len(actions) != 1:
        needs = (
            f"one of {', '.join(WHENS)}" if len(whens) != 1 else f"one action: {', '.join(ACTIONS)}"
        )
        check.error(event.where, path, f"needs exactly {needs}")
        return None
    when, action = whens[0], actions[0]
    when_node = event.entries[when].value
    node_ref = ""
    after = _entry(event, "after")
    if when == "at":
        seconds = check.number(when_node, f"{path}.at")
        if after is not None:
            check.error(
                event.entries["after"].key_where, f"{path}.after", "only with on_start or on_end"
            )
    else:
        node_ref = check.text(when_node, f"{path}.{when}") or ""
        if node_ref:
            refs(node_ref, when_node.where, f"{path}.{when}")
        seconds = 0.0 if after is None else check.number(after, f"{path}.after")
    value_node = event.entries[action].value
    value = check.text(value_node, f"{path}.{action}", required=True)
    if value is None or seconds is None:
        return None
    _action(check, action, value, value_node.where, f"{path}.{action}", robot, world)
    return Event(i, when, node_ref, seconds, action, value, event.where)


def _action(
    check: _Checker,
    action: str,
    value: str,
    where: Location,
    path: str,
    robot: LockstepPart | None,
    world: Mapping[str, Any],
) -> None:
    if action == "request" and value not in REQUESTS:
        check.error(where, path, f"{not_found('request', value, REQUESTS)}")
    elif action == "press" and robot is not None and value not in robot.buttons:
        check.error(where, path, not_found("button", value, robot.buttons))
    elif action in ("fault", "clear") and robot is not None:
        spec = value if action == "fault" else value.partition("=")[0].partition("@")[0]
        why = robot.check_fault(spec, world)
        if why is not None:
            check.error(where, path, why)


def _expect(
    check: _Checker,
    node: YNode | None,
    top: YMap,
    refs: _Refs,
    events: list[Event],
    profile: RobotProfile | None,
    root: Path | None,
) -> Expect | None:
    if node is None:
        check.error(top.where, "expect", "required: what must come of the run (result: ...)")
        return None
    expect = check.mapping(node, "expect")
    if expect is None:
        return None
    check.keys(expect, "expect", EXPECT)
    where = {key: entry.key_where for key, entry in expect.entries.items()}
    result = check.text(_entry(expect, "result"), "expect.result")
    if result is not None and result not in RESULTS:
        check.error(
            expect.entries["result"].value.where,
            "expect.result",
            not_found("result", result, RESULTS),
        )
    causes_node = _entry(expect, "causes")
    causes = None
    if causes_node is not None:
        causes = tuple(name for name, _ in check.names(causes_node, "expect.causes"))
    ran = _refs(check, refs, _entry(expect, "ran"), "expect.ran")
    never = _refs(check, refs, _entry(expect, "never_ran"), "expect.never_ran")
    failed_at = None
    if (failed := _entry(expect, "failed_at")) is not None:
        found = _refs(check, refs, failed, "expect.failed_at")
        failed_at = found[0] if found else None
    still = _still(check, _entry(expect, "no_motion_after"), events)
    end = _end(check, _entry(expect, "end"), profile, root, "expect.end")
    body = _body(check, _entry(expect, "body"), refs, profile, root)
    return Expect(result, causes, ran, never, failed_at, still, end, body, where)


def _body(
    check: _Checker,
    node: YNode | None,
    refs: _Refs,
    profile: RobotProfile | None,
    root: Path | None,
) -> tuple[BodyCheck, ...]:
    if node is None:
        return ()
    if not isinstance(node, YSeq):
        check.error(node.where, "expect.body", f"expected a list, got {describe(node)}")
        return ()
    out = []
    for i, item in enumerate(node.items):
        path = f"expect.body[{i}]"
        entry = check.mapping(item, path)
        if entry is None:
            continue
        whens = [w for w in ("on_start", "on_end") if w in entry.entries]
        if len(whens) != 1:
            check.error(entry.where, path, "needs exactly one of on_start, on_end")
            continue
        ref_node = entry.entries[whens[0]].value
        ref = check.text(ref_node, f"{path}.{whens[0]}")
        if ref is None or not refs(ref, ref_node.where, f"{path}.{whens[0]}"):
            continue
        rest = YMap({k: v for k, v in entry.entries.items() if k not in whens}, entry.where)
        end = _end(check, rest, profile, root, path)
        if end is not None:
            out.append(BodyCheck(i, whens[0], ref, end, entry.where))
    return tuple(out)


def _refs(check: _Checker, refs: _Refs, node: YNode | None, path: str) -> tuple[str, ...]:
    out = []
    for i, (name, where) in enumerate(check.names(node, path)):
        if refs(name, where, f"{path}[{i}]" if isinstance(node, YSeq) else path):
            out.append(name)
    return tuple(out)


def _still(check: _Checker, node: YNode | None, events: list[Event]) -> Still | None:
    if node is None:
        return None
    path = "expect.no_motion_after"
    within: float | None = DEFAULT_STILL_WITHIN_S
    until = None
    if isinstance(node, YMap):
        check.keys(node, path, ("event", "within", "until"))
        index_node = _entry(node, "event")
        if _entry(node, "within") is not None:
            within = check.number(_entry(node, "within"), f"{path}.within", strict=True)
        if (until_node := _entry(node, "until")) is not None:
            until = _event_index(check, until_node, f"{path}.until", events)
    else:
        index_node = node
    if index_node is None:
        check.error(node.where, path, "which event: no_motion_after: I or {event: I, within: S}")
        return None
    index = _event_index(check, index_node, path, events)
    if index is None or within is None:
        return None
    if until is not None and until <= index:
        check.error(node.where, f"{path}.until", "must be a later event than event")
        return None
    return Still(index, within, until)


def _event_index(check: _Checker, node: YNode, path: str, events: list[Event]) -> int | None:
    index = node.value if isinstance(node, YScalar) else None
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(events):
        check.error(
            node.where,
            path,
            f"expected the index of an event (0..{len(events) - 1}), got {describe(node)}"
            if events
            else "the scenario has no events",
        )
        return None
    return index


def _end(
    check: _Checker,
    node: YNode | None,
    profile: RobotProfile | None,
    root: Path | None,
    path: str,
) -> End | None:
    if node is None:
        return None
    end = check.mapping(node, path)
    if end is None:
        return None
    check.keys(end, path, ("pose", "within", "hand", "base"))
    if not {"pose", "hand", "base"} & set(end.entries):
        check.error(
            end.where,
            path,
            "needs pose: NAME, hand: {point, at, within} and/or base: {at: [x, y], within}",
        )
        return None
    pose = ""
    if (pose_node := _entry(end, "pose")) is not None:
        pose = check.text(pose_node, f"{path}.pose") or ""
        known = {} if profile is None or root is None else _poses(profile, root)
        if pose and known and pose not in known:
            check.error(pose_node.where, f"{path}.pose", not_found("pose", pose, known))
    within = check.number(_entry(end, "within"), f"{path}.within", strict=True)
    point, at, point_within = "", (0.0, 0.0, 0.0), 0.05
    hand = check.mapping(_entry(end, "hand"), f"{path}.hand")
    if hand is not None:
        check.keys(hand, f"{path}.hand", ("point", "at", "within"))
        point = check.text(_entry(hand, "point"), f"{path}.hand.point") or ""
        points = getattr(profile.body, "points", {}) if profile is not None else {}
        if point and profile is not None and point not in points:
            check.error(hand.where, f"{path}.hand.point", not_found("body point", point, points))
        at_node = _entry(hand, "at")
        xyz = plain(at_node) if at_node is not None else None
        if (
            not isinstance(xyz, list)
            or len(xyz) != 3
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in xyz)
        ):
            check.error(hand.where, f"{path}.hand.at", "expected [x, y, z] in m (base frame)")
        else:
            at = (float(xyz[0]), float(xyz[1]), float(xyz[2]))
        w = check.number(_entry(hand, "within"), f"{path}.hand.within", strict=True)
        point_within = 0.05 if w is None else w
    base = _base(check, _entry(end, "base"), profile, f"{path}.base")
    return End(pose, 0.02 if within is None else within, point, at, point_within, **base)


def _base(
    check: _Checker, node: YNode | None, profile: RobotProfile | None, path: str
) -> dict[str, Any]:
    """``End``'s base fields from ``base: {at: [x, y], within, heading, heading_within}``;
    only a robot that reports its base's pose (navigation) has them."""
    base = check.mapping(node, path)
    if node is None or base is None:
        return {}
    check.keys(base, path, ("at", "within", "heading", "heading_within"))
    if profile is not None and "navigation" not in profile.capabilities:
        check.error(
            base.where,
            path,
            f"profile {profile.name!r} reports no base pose (a robot with navigation does)",
        )
        return {}
    out: dict[str, Any] = {}
    at_node = _entry(base, "at")
    xy = plain(at_node) if at_node is not None else None
    if (
        not isinstance(xy, list)
        or len(xy) != 2
        or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in xy
        )
    ):
        where = base.where if at_node is None else at_node.where
        check.error(where, f"{path}.at", "expected [x, y] in m (the base's map frame)")
    else:
        out["base"] = (float(xy[0]), float(xy[1]))
    for key, field_ in (("within", "base_within"), ("heading_within", "heading_within")):
        if (bound := check.number(_entry(base, key), f"{path}.{key}", strict=True)) is not None:
            out[field_] = bound
    if (heading := _entry(base, "heading")) is not None:
        rad = heading.value if isinstance(heading, YScalar) else None
        if isinstance(rad, int | float) and not isinstance(rad, bool) and math.isfinite(rad):
            out["heading"] = float(rad)
        else:
            check.error(heading.where, f"{path}.heading", f"expected rad, got {describe(heading)}")
    return out


def _poses(profile: RobotProfile, root: Path) -> Mapping[str, Any]:
    """The poses of the mission directory ``root``'s library, and its gestures (a hand's
    pose: a hand-only mission ends at one)."""
    library = MissionLoader(profile, root).library(root)
    return {**library.gestures, **library.poses}
