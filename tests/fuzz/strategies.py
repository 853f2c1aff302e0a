"""Hypothesis strategies for the fuzz runs: mission file sets and DDS requests.

Missions are generated *valid* first, from the language's own registry (node kinds and
their fields, ranges and defaults), the robot profile (joint names and limits, speed
caps, FSM states, joint sets) and the pose and gesture libraries, with parameters,
includes of shipped and generated subtrees and generated library files. A valid set
must load; that keeps most inputs deep inside validation. Then they are broken:

- ``mutate`` makes one located mistake in the main file (unknown field or kind, wrong
  type, out of range, missing field, unknown joint or parameter, a misindented leaf,
  includes that are missing, escape the directory, cycle, hold a NUL or another control
  character, or name a FIFO or a directory) and says which field path the error must
  name and where in the text it must point;
- ``yaml_trap`` puts a YAML-level trap (alias, anchor, tag, octal, base-60, date) in
  place of one value, again with the expected location;
- ``junk`` edits the rendered bytes blindly: non-UTF-8, BOMs, odd line breaks, NULs,
  truncation, deep brackets, huge lines and strings, duplicated and swapped lines.

Start arguments as the command line gives them (``--param NAME=VALUE``): ``param_items``
draws valid values of every parameter type and everything that is no value at all
(broken YAML, tags, dates, huge numbers, NaN, control characters, undecodable bytes).

Generated moves keep to the speed caps from wherever they may start (validation's
``pacing``): a ``duration`` is at least what the caps need from the worst start within
the joints' limits, and a shipped subtree (whose timed moves expect the arm at rest, as
the shipped missions leave it) is included after a paced move to ``home``.

Requests are ``RequestSpec``: what to send, decided before sending (timestamps, nonces
and signatures are made at send time from the spec, so a case means the same whenever
it runs): every verb and unknown ones, args as valid objects, JSON that is not an
object, broken or hostile JSON, oversized fields, every way a signature can be wrong,
stale and future timestamps, replayed and empty nonces, and fields that are not UTF-8
on the wire.
"""

from __future__ import annotations

import json
import math
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from executive.mission.params import NAME_RE
from executive.mission.registry import (
    BUTTONS,
    KINDS,
    LEAVES,
    MAX_FSM_ID,
    MAX_TAG,
    MAX_TIMEOUT,
    Category,
    Field,
    FieldType,
    NodeKind,
)
from executive.motion.trajectory import MIN_JERK_PEAK
from executive.seam.profile import RAD_TOLERANCE, load_profile
from executive.service.auth import WINDOW_NS
from executive.service.requests import MAX_FIELD, VERBS

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "missions"
PROFILE = load_profile()
MAIN = "fuzz.yaml"  # the file every generated set is checked through

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _shipped_library(section: str, field_name: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for path in sorted((SHIPPED / section).glob("*.yaml")):
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
        # a pose solved for its intent (solve:) gives no joints in the file: left out here
        out.update({n: dict(e[field_name]) for n, e in doc[section].items() if field_name in e})
    return out


SHIPPED_POSES = _shipped_library("poses", "joints")
SHIPPED_GESTURES = _shipped_library("gestures", "fingers")
JOINTS = tuple(PROFILE.joints)
# What a valid mission may ask of a joint: near the body's rest pose (within CLEAR_RAD, and
# the joint's limits), where no combination of generated targets puts a limb through
# another. The whole range is not valid: validation poses every move on the vendor's model
# (executive.mission.body_checks), and a hip pitched to its 3.02 rad limit puts the thigh
# through the torso, and both hips rolled inwards by ~0.09 rad each bring the feet within
# the 20 mm margin. Invalid targets (outside the limits) are drawn elsewhere.
CLEAR_RAD = 0.04
_REST = dict(getattr(PROFILE.body, "rest", {}) or {})


def clear_range(name: str) -> tuple[float, float]:
    """The generator's valid band for a joint: its rest position +- CLEAR_RAD, in limits."""
    j = PROFILE.joints[name]
    rest = min(max(_REST.get(name, 0.0), j.lower), j.upper)
    return max(j.lower, rest - CLEAR_RAD), min(j.upper, rest + CLEAR_RAD)


FINGERS = tuple(n for n, j in PROFILE.joints.items() if j.group == "hands")
FSM_STATES = tuple(PROFILE.fsm)
# the leaf kinds the fuzzed profile's robot can run (the others are refused by capability),
# but checkpoints: valid only on a chain of memory sequences from the root (mission/
# checkpoints.py; tests/mission/test_checkpoints.py covers where they may and may not sit),
# and reach, whose point and group are names of the body a random string is not (its
# fields are checked in tests/mission and tests/behaviours/test_reach.py)
LEAF_KINDS = tuple(
    k.name
    for k in LEAVES
    if (k.requires is None or k.requires in PROFILE.capabilities)
    and k.name not in ("checkpoint", "reach")
)
# leaves that drive nothing a parallel sibling could fight over (tree_checks.resources)
FREE_LEAVES = ("wait", "log", "check_battery", "clear_errors", "wait_for_button")

# Text people write, without "$" (references are placed deliberately) and without
# surrogates (not encodable); YAML escapes the rest.
_TEXT = st.characters(exclude_categories=("Cs",), exclude_characters="$")


@cache
def text(min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[str]:
    return st.text(_TEXT, min_size=min_size, max_size=max_size)


# -- the mission file set ------------------------------------------------------------------


@dataclass(frozen=True)
class Included:
    """A subtree a mission may include: its parameters (type, a valid value) and whether
    it drives anything (a parallel allows one child that does)."""

    file: str
    required: dict[str, tuple[FieldType, Any]]
    optional: dict[str, tuple[FieldType, Any]]
    free: bool


SHIPPED_SUBTREES = (
    Included("subtrees/fetch_drink.yaml", {"bar_tag": (FieldType.TAG, 3)}, {}, free=False),
    Included(
        "subtrees/serve_at_table.yaml",
        {"table_tag": (FieldType.TAG, 7)},
        {"heading": (FieldType.NUMBER, 1.5), "guest_timeout": (FieldType.NUMBER, 30)},
        free=False,
    ),
)


@dataclass
class Expect:
    """Where the loader must report a mutation: an error naming ``path``, at the start of
    the YAML node ``data_path`` leads to in the main file (its key when ``at_key``)."""

    what: str
    path: str
    data_path: tuple[Any, ...]
    at_key: bool = False


@dataclass
class FileSet:
    """Mission files relative to a mission directory; ``docs`` before rendering."""

    docs: dict[str, Any]
    raw: dict[str, bytes] = field(default_factory=dict)
    expect: Expect | None = None
    edits: list[str] = field(default_factory=list)  # what was done, for failure reports

    def render(self, flow: bool | None = None, width: int = 80) -> None:
        for name, doc in self.docs.items():
            self.raw[name] = dump(doc, flow, width).encode("utf-8")


def dump(doc: Any, flow: bool | None = False, width: int = 80) -> str:
    text_: str = yaml.dump(
        doc,
        Dumper=_Dumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=flow,
        width=width,
    )
    return text_


class _Gen:
    """Draws one valid document; records parameters as it parameterises values."""

    def __init__(
        self,
        draw: st.DrawFn,
        poses: dict[str, dict[str, float]],
        gestures: dict[str, dict[str, float]],
        subtrees: list[Included],
        *,
        max_depth: int,
        subtree: bool = False,
        folder: str = "",
    ) -> None:
        self.draw = draw
        self.poses = poses
        self.gestures = gestures
        self.subtrees = subtrees
        self.max_depth = max_depth
        self.subtree = subtree  # parameters may be required (values given by includes)
        self.folder = folder  # of the file, in the mission directory: includes are relative
        self.params: dict[str, dict[str, Any]] = {}
        self.required: dict[str, tuple[FieldType, Any]] = {}
        self.optional: dict[str, tuple[FieldType, Any]] = {}
        self.free = True  # nothing drawn so far drives a resource

    # -- values -----------------------------------------------------------------------------

    def number(self, f: Field, *, integer: bool = False) -> int | float:
        lo = f.gt if f.gt is not None else f.ge
        hi = f.le
        if f.name == "tolerance":  # bounded by the moved joints' stream (the Atom's: rad)
            hi = RAD_TOLERANCE.max
        if integer or f.type in (FieldType.INTEGER, FieldType.TAG):
            ilo = math.ceil(lo) if lo is not None else -(10**6)
            if f.gt is not None and ilo == f.gt:
                ilo += 1
            ihi = math.floor(hi) if hi is not None else 10**6
            ints = st.integers(ilo, ihi)
            return self.draw(st.one_of(st.sampled_from([ilo, ihi]), ints))
        flo = lo if lo is not None else -1e6
        fhi = hi if hi is not None else 1e6
        edges = [fhi] + ([flo] if f.gt is None else [])
        floats = st.floats(flo, fhi, exclude_min=f.gt is not None)
        ilo, ihi = math.ceil(flo) + (f.gt is not None), math.floor(fhi)
        options = [st.sampled_from(edges), floats] + ([st.integers(ilo, ihi)] if ilo <= ihi else [])
        value: int | float = self.draw(st.one_of(*options))
        if f.gt is not None and not value > f.gt:
            value = fhi
        return value

    def value(self, f: Field) -> Any:
        t = f.type
        if t in (FieldType.NUMBER, FieldType.INTEGER, FieldType.TAG):
            if t is FieldType.TAG:
                return self.draw(st.one_of(st.sampled_from([0, MAX_TAG]), st.integers(0, MAX_TAG)))
            return self.number(f)
        if t is FieldType.BOOLEAN:
            return self.draw(st.booleans())
        if t is FieldType.STRING:
            return self.draw(text(max(f.min_length, 1), min(f.max_length or 80, 40)))
        if t is FieldType.POSE:
            return self.draw(st.sampled_from(sorted(self.poses)))
        if t is FieldType.GESTURE:
            return self.draw(st.sampled_from(sorted(self.gestures)))
        if t is FieldType.FSM_STATE:
            return self.draw(st.one_of(st.sampled_from(FSM_STATES), st.integers(0, MAX_FSM_ID)))
        if t is FieldType.BUTTON:
            return self.draw(st.sampled_from(BUTTONS))
        if t is FieldType.CHOICE:
            return self.draw(st.sampled_from(f.choices))
        raise AssertionError(f"no generator for {t}")

    def maybe_param(self, f: Field, v: Any) -> Any:
        """``v`` as written, or ``${p}`` for a new parameter whose value is ``v``."""
        if not f.refs or self.draw(st.integers(0, 4)) != 0:
            return v
        if f.type is FieldType.STRING:
            ptype = self.draw(st.sampled_from([FieldType.STRING, FieldType.INTEGER]))
            pv = (
                self.draw(text(0, 12))
                if ptype is FieldType.STRING
                else self.draw(st.integers(-(10**6), 10**6))
            )
            name = self.declare(ptype, pv, None)
            return f"{v[:30]} ${{{name}}}"
        ptype = f.type
        if f.type is FieldType.NUMBER and isinstance(v, int):
            ptype = self.draw(st.sampled_from([FieldType.NUMBER, FieldType.INTEGER]))
        if f.type is FieldType.TAG:
            ptype = self.draw(st.sampled_from([FieldType.TAG, FieldType.INTEGER]))
        if f.type is FieldType.FSM_STATE and isinstance(v, bool):
            return v
        bounds = None
        if ptype in (FieldType.NUMBER, FieldType.INTEGER) and self.draw(st.booleans()):
            bounds = (v, v) if self.draw(st.booleans()) else (v - 1, v + 1)
        return f"${{{self.declare(ptype, v, bounds)}}}"

    def declare(self, ptype: FieldType, v: Any, bounds: tuple[Any, Any] | None) -> str:
        name = f"p{len(self.params)}_{self.draw(st.sampled_from(['a', 'tag', 'Speed', '_x']))}"
        decl: dict[str, Any] = {"type": ptype.value}
        if bounds is not None:
            decl["min"], decl["max"] = bounds
        if self.draw(st.booleans()):
            decl["description"] = self.draw(text(0, 30))
        required = self.subtree and self.draw(st.booleans())
        if not required:
            decl["default"] = v
        (self.required if required else self.optional)[name] = (ptype, v)
        self.params[name] = decl
        return name

    def fields(self, kind: NodeKind, skip: tuple[str, ...] = ()) -> dict[str, Any]:
        """Values for ``kind``'s scalar fields: every required one, some optional ones."""
        body: dict[str, Any] = {}
        for f in kind.fields:
            if f.name in skip or f.type in (FieldType.NODE, FieldType.NODES, FieldType.FILE):
                continue
            if f.type in (FieldType.JOINT_TARGETS, FieldType.SELECTION, FieldType.ARGS):
                continue
            if f.required or self.draw(st.integers(0, 3)) == 0:
                body[f.name] = self.maybe_param(f, self.value(f))
        return body

    # -- nodes ------------------------------------------------------------------------------

    def node(self, depth: int, free: bool) -> Any:
        choices = ["leaf"] * 4
        if depth < self.max_depth:
            choices += ["composite"] * (8 if depth == 1 else 3) + ["decorator", "guard"]
            if any(s.free or not free for s in self.subtrees):
                choices.append("include")
        what = self.draw(st.sampled_from(choices))
        if what == "leaf":
            return self.leaf(free)
        if what == "composite":
            return self.composite(depth, free)
        if what == "decorator":
            return self.decorator(depth, free)
        if what == "guard":
            return self.wrap(
                "guard", depth, {"condition": self.condition(depth + 1)}, self.node(depth + 1, free)
            )
        return self.include(free)

    def wrap(self, kind: str, depth: int, extra: dict[str, Any], child: Any) -> Any:
        body = {**self.fields(KINDS[kind]), **extra, "child": child}
        return {kind: self.shuffled(body)}

    def shuffled(self, body: dict[str, Any]) -> dict[str, Any]:
        keys = self.draw(st.permutations(list(body)))
        return {k: body[k] for k in keys}

    def leaf(self, free: bool) -> Any:
        kind = KINDS[self.draw(st.sampled_from(FREE_LEAVES if free else LEAF_KINDS))]
        if kind.name in ("move_joints", "hand_gesture"):
            body = self.motion(kind)
        else:
            body = self.fields(kind)
        if kind.name not in FREE_LEAVES:
            self.free = False
        if not kind.required and not body:
            return self.draw(st.sampled_from([kind.name, {kind.name: None}, {kind.name: {}}]))
        return {kind.name: self.shuffled(body)}

    def motion(self, kind: NodeKind) -> dict[str, Any]:
        fingers = kind.name == "hand_gesture"
        named, inline = ("gesture", "fingers") if fingers else ("pose", "joints")
        body = self.fields(kind, skip=("pose", "gesture", "duration", "speed", "timeout"))
        library = self.gestures if fingers else self.poses
        if self.draw(st.booleans()):
            name = self.draw(st.sampled_from(sorted(library)))
            targets = dict(library[name])
            body[named] = self.maybe_param(kind.field(named) or _never(), name)
        else:
            names = self.draw(
                st.lists(st.sampled_from(FINGERS if fingers else JOINTS), min_size=1, max_size=6)
            )
            targets = {n: self.joint_value(n) for n in dict.fromkeys(names)}
            joint_field = Field("joint", FieldType.NUMBER, "")
            body[inline] = {n: self.maybe_param(joint_field, q) for n, q in targets.items()}
        if self.draw(st.integers(0, 3)) == 0:
            keep = self.draw(st.sampled_from(sorted(targets)))
            options = [keep, PROFILE.joints[keep].group, "all"]
            options += [s for s, members in PROFILE.joint_sets.items() if keep in members]
            chosen = self.draw(st.sampled_from(options))
            body["select"] = [chosen] if self.draw(st.booleans()) else chosen
            targets = {n: q for n, q in targets.items() if n in PROFILE.expand([chosen])}
        timeout_field = kind.field("timeout") or _never()
        pace = self.draw(st.sampled_from(["none", "duration", "speed"]))
        low = 0.001
        if pace == "duration":
            duration_field = kind.field("duration") or _never()
            need = worst_case_duration(targets)
            top = duration_field.le or 600.0
            duration = self.draw(st.one_of(st.just(need), st.just(top), st.floats(need, top)))
            body["duration"] = self.maybe_param(duration_field, duration)
            low = float(duration)
        elif pace == "speed":
            cap = min(PROFILE.joints[n].max_velocity for n in targets)
            speed = self.draw(st.one_of(st.just(cap), st.floats(0.01, cap)))
            body["speed"] = self.maybe_param(kind.field("speed") or _never(), speed)
        timeout = self.draw(
            st.one_of(st.just(MAX_TIMEOUT), st.floats(max(low, 0.001), MAX_TIMEOUT))
        )
        body["timeout"] = self.maybe_param(timeout_field, timeout)
        return body

    def joint_value(self, name: str) -> float:
        low, high = clear_range(name)
        value: float = self.draw(st.one_of(st.sampled_from([low, high]), st.floats(low, high)))
        return value

    def composite(self, depth: int, free: bool) -> Any:
        kind = self.draw(st.sampled_from(["sequence", "fallback", "parallel"]))
        n = self.draw(st.integers(1, 6))
        body: dict[str, Any] = {}
        if self.draw(st.booleans()):
            body["name"] = self.maybe_param(
                KINDS[kind].field("name") or _never(), self.draw(text(1, 40))
            )
        policy = None
        if kind == "parallel" and self.draw(st.booleans()):
            policy = self.draw(st.sampled_from(["success_on_all", "success_on_one"]))
            body["policy"] = policy
        memory = None
        if policy != "success_on_one" and self.draw(st.booleans()):
            memory = self.draw(st.booleans())
            body["memory"] = memory
        children: list[Any] = []
        if kind == "parallel":
            main = self.draw(st.integers(0, n - 1))
            for i in range(n):
                if i == main:
                    children.append(self.node(depth + 1, free))
                elif memory is False:
                    children.append(self.condition(depth + 1))
                else:
                    children.append(self.node(depth + 1, True))
        else:
            for i in range(n):
                last = i == n - 1
                children.append(
                    self.node(depth + 1, free)
                    if last or memory is not False
                    else self.condition(depth + 1)
                )
        if not body and self.draw(st.booleans()):
            return {kind: children}  # the short form
        body["children"] = children
        return {kind: self.shuffled(body)}

    def condition(self, depth: int) -> Any:
        what = self.draw(st.sampled_from(["leaf", "leaf", "inverter", "composite"]))
        if what == "leaf" or depth >= self.max_depth:
            return {"check_battery": self.shuffled(self.fields(KINDS["check_battery"]))}
        if what == "inverter":
            return self.wrap("inverter", depth, {}, self.condition(depth + 1))
        kind = self.draw(st.sampled_from(["sequence", "fallback"]))
        children = [self.condition(depth + 1) for _ in range(self.draw(st.integers(1, 3)))]
        body: dict[str, Any] = {"children": children}
        if self.draw(st.booleans()):
            body["memory"] = self.draw(st.booleans())
        return {kind: body}

    def decorator(self, depth: int, free: bool) -> Any:
        kind = self.draw(st.sampled_from(["retry", "repeat", "timeout", "inverter", "delay"]))
        return self.wrap(kind, depth, {}, self.node(depth + 1, free))

    def include(self, free: bool) -> Any:
        sub = self.draw(st.sampled_from([s for s in self.subtrees if s.free or not free]))
        if not sub.free:
            self.free = False
        given: dict[str, Any] = {}
        optional = self.draw(st.lists(st.sampled_from(sorted(sub.optional) or [""]), unique=True))
        for name, (ptype, v) in [
            *sub.required.items(),
            *((n, sub.optional[n]) for n in optional if n in sub.optional),
        ]:
            pfield = Field(name, ptype, "")
            given[name] = self.maybe_param(pfield, v)
        file = posixpath.relpath(sub.file, self.folder or ".")
        if self.folder and self.draw(st.booleans()):
            file = posixpath.join("..", sub.file)  # out of subtrees/ and back in
        body: dict[str, Any] = {"file": file}
        if self.draw(st.booleans()):
            body["name"] = self.draw(text(1, 40))
        if given or self.draw(st.booleans()):
            body["with"] = given or None
        node: Any = {"include": self.shuffled(body)}
        if list(body) == ["file"] and self.draw(st.booleans()):
            node = {"include": file}
        if sub.file in SHIPPED_FILES:
            return {"sequence": [*at_rest(), node]}
        return node

    def document(self, kind: str, name: str, free: bool) -> dict[str, Any]:
        tree = self.node(1, free)
        doc: dict[str, Any] = {kind: name}
        if self.draw(st.booleans()):
            doc["description"] = self.draw(text(0, 60))
        if self.params:
            doc["params"] = self.params
        doc["tree"] = tree
        return doc


def worst_case_duration(targets: dict[str, float]) -> float:
    """The shortest duration the speed caps allow for a move to ``targets`` from anywhere
    within the joints' limits: what validation asks of a move whose start it cannot know."""
    need = 0.0
    for name, q in targets.items():
        j = PROFILE.joints[name]
        need = max(need, max(q - j.lower, j.upper - q) * MIN_JERK_PEAK / j.max_velocity)
    return need


def at_rest() -> list[dict[str, Any]]:
    """Paced moves to a known pose: what a shipped subtree's timed moves expect before
    them (new dicts each time: mutations edit documents in place)."""
    return [
        {"move_joints": {"pose": "home", "timeout": 12}},
        {"hand_gesture": {"gesture": "right_relaxed", "timeout": 4}},
    ]


SHIPPED_FILES = frozenset(s.file for s in SHIPPED_SUBTREES)


def _never() -> Field:
    raise AssertionError("the registry lacks a field the generator relies on")


def _library_entries(
    draw: st.DrawFn, section: str, joints: tuple[str, ...]
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for i in range(draw(st.integers(0, 3))):
        names = draw(st.lists(st.sampled_from(joints), min_size=1, max_size=5, unique=True))
        out[f"fz_{section[:-1]}_{i}"] = {n: draw(st.floats(*clear_range(n))) for n in names}
    return out


@st.composite
def valid_files(draw: st.DrawFn) -> FileSet:
    """A valid mission (``MAIN``) with the generated subtrees and library files it uses."""
    docs: dict[str, Any] = {}
    poses = _library_entries(draw, "poses", JOINTS)
    gestures = _library_entries(draw, "gestures", FINGERS)
    field_name = {"poses": "joints", "gestures": "fingers"}
    for section, entries in (("poses", poses), ("gestures", gestures)):
        if entries:
            docs[f"{section}/fz.yaml"] = {
                section: {
                    n: {"description": "generated", field_name[section]: t}
                    for n, t in entries.items()
                }
            }
    poses = {**SHIPPED_POSES, **poses}
    gestures = {**SHIPPED_GESTURES, **gestures}
    subtrees = list(SHIPPED_SUBTREES)
    for i in range(draw(st.integers(0, 2))):
        free = draw(st.booleans())
        gen = _Gen(
            draw, poses, gestures, list(subtrees), max_depth=3, subtree=True, folder="subtrees"
        )
        file = f"subtrees/fz_{i}.yaml"
        docs[file] = gen.document("subtree", f"fz_{i}", free)
        subtrees.append(Included(file, gen.required, gen.optional, free=gen.free))
    gen = _Gen(draw, poses, gestures, subtrees, max_depth=draw(st.integers(2, 6)))
    docs = {
        MAIN: gen.document(
            "mission", draw(st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,20}\Z")), False
        ),
        **docs,
    }
    files = FileSet(docs)
    files.render(draw(st.sampled_from([False, None])), draw(st.sampled_from([80, 10**6])))
    return files


# -- located mutations ---------------------------------------------------------------------


@dataclass(frozen=True)
class NodeRef:
    """A node of a document: where it is in the data, its loader path, its kind and body."""

    data_path: tuple[Any, ...]
    path: str  # the loader's path of the node (the kind key's parent)
    kind: str | None
    body: Any


def nodes(doc: Any) -> Iterator[NodeRef]:
    """Every node of a document's tree, with paths the way the loader writes them."""
    if isinstance(doc, dict) and "tree" in doc:
        yield from _walk(doc["tree"], ("tree",), "tree")


def _walk(node: Any, dpath: tuple[Any, ...], path: str) -> Iterator[NodeRef]:
    if isinstance(node, str):
        yield NodeRef(dpath, path, node if node in KINDS else None, None)
        return
    if not isinstance(node, dict) or len(node) != 1:
        yield NodeRef(dpath, path, None, node)
        return
    ((kind, body),) = node.items()
    yield NodeRef(dpath, path, kind if kind in KINDS else None, body)
    if kind not in KINDS:
        return
    kpath, kd = f"{path}.{kind}", (*dpath, kind)
    category = KINDS[kind].category
    if category is Category.COMPOSITE:
        if isinstance(body, list):
            for i, child in enumerate(body):
                yield from _walk(child, (*kd, i), f"{kpath}[{i}]")
        elif isinstance(body, dict) and isinstance(body.get("children"), list):
            for i, child in enumerate(body["children"]):
                yield from _walk(child, (*kd, "children", i), f"{kpath}.children[{i}]")
    elif category is Category.DECORATOR and isinstance(body, dict):
        for name in ("condition", "child"):
            if name in body:
                yield from _walk(body[name], (*kd, name), f"{kpath}.{name}")


def get(doc: Any, data_path: tuple[Any, ...]) -> Any:
    for step in data_path:
        doc = doc[step]
    return doc


def _wrong_values(f: Field) -> list[Any]:
    common: list[Any] = [None, [1, 2], {"a": 1}]
    t = f.type
    if t in (FieldType.NUMBER, FieldType.INTEGER, FieldType.TAG):
        extra: list[Any] = ["fast", "1e3", "", True, "0x"]
        if t is not FieldType.NUMBER:
            extra.append(2.5)
        return common + extra
    if t is FieldType.BOOLEAN:
        return [*common, "maybe", 1, 0.0, "True "]
    if t is FieldType.FSM_STATE:
        return [*common, True, 1.5, -1, MAX_FSM_ID + 1, "flying", "Joint_Control"]
    if t is FieldType.FILE:
        return [None, [1], 5, True]
    if t is FieldType.STRING:
        return [*common, 5, 2.5, True, ""]
    return [*common, 7, True, "no_such_name", ""]  # pose, gesture, button, choice


_NUMERIC = (FieldType.NUMBER, FieldType.INTEGER, FieldType.TAG)


def _out_of_range(f: Field) -> list[Any]:
    if f.type not in _NUMERIC:
        return ["x" * ((f.max_length or 0) + 1)]
    out: list[Any] = [math.nan, math.inf, -math.inf]
    if f.gt is not None:
        out += [f.gt, f.gt - 1]
    if f.ge is not None:
        out.append(f.ge - 0.5 if f.type is FieldType.NUMBER else int(f.ge) - 1)
    if f.le is not None:
        out.append(f.le + 0.5 if f.type is FieldType.NUMBER else int(f.le) + 1)
        out.append(10**25)
    if f.type is FieldType.TAG:
        out += [-1, MAX_TAG + 1]
    return out


MUTATIONS = (
    "unknown_field",
    "wrong_type",
    "out_of_range",
    "missing_required",
    "unknown_kind",
    "unknown_joint",
    "joint_outside_limits",
    "unknown_param",
    "misindented",
    "top_level_key",
    "include_missing",
    "include_escape",
    "include_cycle",
    "include_bad_char",
    "include_fifo",
    "include_directory",
)
# Special files every fuzz mission directory holds (tests/fuzz/test_fuzz_missions.py Root).
FIFO = "subtrees/fz_fifo.yaml"
DIRECTORY = "subtrees/fz_dir.yaml"
_BAD_CHARS = ("\0", "\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\x01")


def mutate(draw: st.DrawFn, files: FileSet, what: str | None = None) -> None:
    """One located mistake in the main document; sets ``files.expect`` when it applies."""
    doc = files.docs[MAIN]
    what = what or draw(st.sampled_from(MUTATIONS))
    refs = [r for r in nodes(doc) if r.kind is not None]
    dict_bodies = [r for r in refs if isinstance(r.body, dict)]
    files.edits.append(what)
    expect: Expect | None = None
    if what == "top_level_key":
        key = draw(st.sampled_from(["trees", "Mission", "param", "name", "version"]))
        doc[key] = 1
        expect = Expect(what, key, (key,), at_key=True)
    elif what == "unknown_field" and dict_bodies:
        r = draw(st.sampled_from(dict_bodies))
        known = {f.name for f in KINDS[r.kind or ""].fields}
        key = draw(st.sampled_from(["bogus", "timeout_s", "Name", "speed_cap", "childs", "poses"]))
        if key not in known:
            r.body[key] = draw(st.sampled_from([1, "x", None, [1]]))
            expect = Expect(what, f"{r.path}.{r.kind}.{key}", (*r.data_path, r.kind, key), True)
    elif what in ("wrong_type", "out_of_range", "unknown_param") and dict_bodies:
        r = draw(st.sampled_from(dict_bodies))
        kind = KINDS[r.kind or ""]
        scalars = [
            f
            for f in kind.fields
            if f.name in r.body
            and f.type not in (FieldType.NODE, FieldType.NODES, FieldType.ARGS)
            and f.type not in (FieldType.JOINT_TARGETS, FieldType.SELECTION)
        ]
        if what == "out_of_range":
            scalars = [f for f in scalars if f.type in _NUMERIC or f.max_length is not None]
        if what == "unknown_param":
            scalars = [f for f in scalars if f.refs]
        if scalars:
            f = draw(st.sampled_from(scalars))
            if what == "wrong_type":
                value = draw(st.sampled_from(_wrong_values(f)))
            elif what == "out_of_range":
                value = draw(st.sampled_from(_out_of_range(f)))
            else:
                value = draw(st.sampled_from(["${nope}", "${p0_a }", "${a + 1}", "${"]))
                if f.type is FieldType.STRING:
                    value = f"x {value}"
            r.body[f.name] = value
            expect = Expect(what, f"{r.path}.{r.kind}.{f.name}", (*r.data_path, r.kind, f.name))
    elif what == "missing_required":
        options = [r for r in dict_bodies if set(KINDS[r.kind or ""].required) & set(r.body)]
        if options:
            r = draw(st.sampled_from(options))
            gone = draw(st.sampled_from(sorted(set(KINDS[r.kind or ""].required) & set(r.body))))
            del r.body[gone]
            expect = Expect(what, f"{r.path}.{r.kind}", (*r.data_path, r.kind), at_key=True)
    elif what == "unknown_kind" and refs:
        r = draw(st.sampled_from(refs))
        new = draw(
            st.sampled_from(["selector", "sleep", "Sequence", "move_joint", "action", "not"])
        )
        parent = get(doc, r.data_path[:-1])
        old = parent[r.data_path[-1]]
        parent[r.data_path[-1]] = {new: old[r.kind] if isinstance(old, dict) else None}
        expect = Expect(what, r.path, (*r.data_path, new), at_key=True)
    elif what in ("unknown_joint", "joint_outside_limits"):
        options = [
            r
            for r in dict_bodies
            if isinstance(r.body.get("joints"), dict) or isinstance(r.body.get("fingers"), dict)
        ]
        if options:
            r = draw(st.sampled_from(options))
            key = "joints" if isinstance(r.body.get("joints"), dict) else "fingers"
            targets = r.body[key]
            if what == "unknown_joint":
                joint = draw(st.sampled_from(["nose", "head_roll", "left_knees", "Right_index"]))
                targets[joint] = 0.0
                path = f"{r.path}.{r.kind}.{key}.{joint}"
                expect = Expect(what, path, (*r.data_path, r.kind, key, joint), at_key=True)
            else:
                joint = draw(st.sampled_from(sorted(targets)))
                j = PROFILE.joints[joint]
                targets[joint] = draw(st.sampled_from([j.lower - 0.01, j.upper + 0.01, 100.0]))
                path = f"{r.path}.{r.kind}.{key}.{joint}"
                expect = Expect(what, path, (*r.data_path, r.kind, key, joint))
    elif what == "misindented":
        options = [r for r in dict_bodies if r.body and r.kind in LEAF_KINDS]
        if options:
            r = draw(st.sampled_from(options))
            parent = get(doc, r.data_path[:-1])
            parent[r.data_path[-1]] = {r.kind: None, **r.body}
            expect = Expect(what, r.path, r.data_path)
    elif what.startswith("include_") and refs:
        if what == "include_bad_char":
            valid = draw(st.sampled_from(sorted(SHIPPED_FILES)))
            at = draw(st.integers(0, len(valid)))
            bad = draw(st.text(st.sampled_from(_BAD_CHARS), min_size=1, max_size=3))
            target = valid[:at] + bad + valid[at:]
        else:
            target = {
                "include_missing": "subtrees/no_such_file.yaml",
                "include_escape": "../outside/x.yaml",
                "include_cycle": MAIN,
                "include_fifo": FIFO,
                "include_directory": DIRECTORY,
            }[what]
        r = draw(st.sampled_from(refs))
        parent = get(doc, r.data_path[:-1])
        parent[r.data_path[-1]] = {"include": {"file": target}}
        expect = Expect(what, f"{r.path}.include.file", (*r.data_path, "include", "file"))
    files.expect = expect


@st.composite
def mutated_files(draw: st.DrawFn, what: str | None = None) -> FileSet:
    """A valid set with one located mistake in the main file (``expect`` says where)."""
    files = draw(valid_files())
    mutate(draw, files, what)
    files.render(draw(st.sampled_from([False, None])), draw(st.sampled_from([80, 10**6])))
    return files


# -- YAML-level traps and blind byte edits -----------------------------------------------

SENTINEL = "ZqxSentinel"
YAML_TRAPS = {
    # token: (the path the error names: "field" = the value's own path, "" = the file)
    "*anchor": "",
    "&anchor 5": "",
    "!!python/object:os.system 5": "",
    "!custom 5": "",
    "010": "field",
    "0777": "field",
    "1:30": "field",
    "2024-01-01": "field",
    "1_000:00": "field",
    "0x_": "field",  # YAML 1.1 reads these as numbers with no digits
    "-0b__": "field",
}


@dataclass(frozen=True)
class Trap:
    """A YAML trap written in place of the value at ``path``, at ``line``:``col``."""

    files: FileSet
    token: str
    path: str
    line: int
    col: int


@st.composite
def yaml_trap(draw: st.DrawFn) -> Trap:
    """A valid set with one scalar of the main file replaced by a YAML trap. Rendered in
    block style."""
    files = draw(valid_files())
    doc = files.docs[MAIN]
    spots: list[tuple[tuple[Any, ...], str]] = []
    for r in nodes(doc):
        if isinstance(r.body, dict):
            for key, value in r.body.items():
                if not isinstance(value, dict | list) and value is not None:
                    spots.append(((*r.data_path, r.kind, key), f"{r.path}.{r.kind}.{key}"))
    token = draw(st.sampled_from(sorted(YAML_TRAPS)))
    if not spots:
        spots = [(("mission",), "mission")]
    data_path, path = draw(st.sampled_from(spots))
    get(doc, data_path[:-1])[data_path[-1]] = SENTINEL
    files.render(False, 10**6)
    text_ = files.raw[MAIN].decode("utf-8")
    before = text_[: text_.index(SENTINEL)]
    line, col = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1
    files.raw[MAIN] = text_.replace(SENTINEL, token, 1).encode("utf-8")
    files.edits.append(f"trap {token!r} at {path}")
    return Trap(files, token, path, line, col)


_JUNK_TOKENS = [
    b"\t",
    b"- ",
    b": ",
    b"? ",
    b"{",
    b"]",
    b"'",
    b'"',
    b"#",
    b"&a ",
    b"*a",
    b"!!binary ",
    b"<<: {x: 1}\n",
    b"%YAML 1.1\n",
    b"---\n",
    b"...\n",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\xc2\x85",
    b"\xe2\x80\xa8",
    b"\r",
    b"\xff\xfe",
    b"\xc3",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\x1b[31m",
    b"${",
    b"$${x}",
    b"${nope}",
    b"1e999",
    b"-.inf",
    b".nan",
    b"0x7fffffffffffffffffffffffffffffffff",
    b"9" * 40,
    b"0x_",
    b"0b_1",
    b"._",
]


@st.composite
def junk(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with one to four blind edits."""
    for _ in range(draw(st.integers(1, 4))):
        op = draw(
            st.sampled_from(
                [
                    "insert",
                    "insert",
                    "delete",
                    "truncate",
                    "dup_line",
                    "swap_lines",
                    "crlf",
                    "cr",
                    "deep",
                    "huge_line",
                    "huge_scalar",
                    "bom",
                ]
            )
        )
        i = draw(st.integers(0, len(data)))
        lines = data.splitlines(keepends=True)
        if op == "insert":
            data = data[:i] + draw(st.sampled_from(_JUNK_TOKENS)) + data[i:]
        elif op == "delete":
            data = data[:i] + data[i + draw(st.integers(1, 40)) :]
        elif op == "truncate":
            data = data[:i]
        elif op == "dup_line" and lines:
            k = draw(st.integers(0, len(lines) - 1))
            data = b"".join([*lines[: k + 1], lines[k], *lines[k + 1 :]])
        elif op == "swap_lines" and len(lines) > 1:
            a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            data = b"".join(lines)
        elif op == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif op == "cr":
            data = data.replace(b"\n", b"\r")
        elif op == "deep":
            n = draw(st.sampled_from([33, 199, 200, 201, 5000]))
            data = data[:i] + b"[" * n + b"1" + b"]" * n + data[i:]
        elif op == "huge_line":
            data = (
                data[:i] + b"#" + b"x" * draw(st.sampled_from([10**4, 10**6, 2 * 10**6])) + data[i:]
            )
        elif op == "huge_scalar":
            data += b"description: " + b"y" * draw(st.sampled_from([10**4, 10**6 + 10])) + b"\n"
        elif op == "bom":
            data = b"\xef\xbb\xbf" + data
    return data


@st.composite
def any_files(draw: st.DrawFn) -> FileSet:
    """Anything: a valid set, a few mutations anywhere, maybe blind edits of any file, and
    now and then the language's own limits (nesting, node budget)."""
    files = draw(valid_files())
    for _ in range(draw(st.integers(0, 3))):
        mutate(draw, files)
    extra = draw(st.sampled_from(["none", "none", "none", "deep_tree", "many_nodes", "subtree"]))
    doc = files.docs[MAIN]
    if extra == "deep_tree":
        n = draw(st.sampled_from([30, 31, 32, 33, 120, 250]))
        tree: Any = "clear_errors"
        for _ in range(n):
            tree = {"inverter": {"child": tree}}
        doc["tree"] = tree
    elif extra == "many_nodes":
        n = draw(st.sampled_from([1999, 2000, 2001, 3000]))
        doc["tree"] = {"sequence": ["clear_errors"] * n}
    elif extra == "subtree":
        doc["subtree"] = doc.pop("mission", "x")
    files.edits.append(extra)
    files.expect = None
    files.render(draw(st.sampled_from([False, None])), draw(st.sampled_from([80, 10**6])))
    for name in list(files.raw):
        if draw(st.integers(0, 2)) == 0:
            files.raw[name] = draw(junk(files.raw[name]))
            files.edits.append(f"junk in {name}")
    return files


# -- requests ------------------------------------------------------------------------------

AUTH_MODES = (
    "correct",
    "none",  # no signature
    "wrong_key",
    "garbled",  # a signature that is not what HMAC gives (any text)
    "stale",  # correctly signed, timestamp before the window
    "future",  # correctly signed, timestamp after the window
    "replay",  # correctly signed with a nonce the service already accepted
    "empty_nonce",
    "unknown_client",
)


@dataclass(frozen=True)
class RequestSpec:
    """One request, decided before sending. ``None`` fields are made fresh at send time;
    ``not_utf8`` names the field whose bytes are replaced by invalid UTF-8 on the wire."""

    verb: str
    args: str
    auth: str = "none"
    request_id: str | None = None
    client_id: str = "operator"
    nonce: str | None = None
    signature: str = ""  # for auth == "garbled"
    stamp_offset_ns: int = 0
    not_utf8: str | None = None


FUZZ_MISSIONS = ("fuzz_long", "fuzz_params", "fuzz_broken")  # tests/fuzz/missions
DISTURBING = ("stop", "pause")  # verbs whose valid form changes the running mission
UNKNOWN_VERBS = ("", "START", "start ", " stop", "dance", "list-missions", "status\x00", "Ω")
_OVERSIZE = MAX_FIELD + 1


@cache
def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        st.sampled_from(["home", "look_left", "A", "joint_control", "${x}", "\ud800", "é"]),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    )


# values that suit fuzz_params' parameters, and ones that do not
PARAM_VALUES: dict[str, list[Any]] = {
    "count": [1, 5, 100, 0, 101, 2.5, "3", None, True, 10**400, -(10**30)],
    "level": [0, 50.5, 100, -1, 100.01, math.nan, "x", 10**400, 1e308],
    "label": ["", "hello", "é" * 300, 5, None, ["a"]],
    "flag": [True, False, "yes", 0],
    "pose": ["fz_left", "fz_right", "nope", 3],
    "tag": [0, MAX_TAG, MAX_TAG + 1, -1, 1.5, 10**4000],
    "state": ["joint_control", "walk", 0, MAX_FSM_ID, MAX_FSM_ID + 1, "nope", True],
    "button": ["A", "START", "a", "Z", None],
    "rounds": [1, 10000, 0, 10001],
}


@cache
def _params() -> st.SearchStrategy[Any]:
    known = st.sampled_from(sorted(PARAM_VALUES)).flatmap(
        lambda name: st.tuples(st.just(name), st.sampled_from(PARAM_VALUES[name]))
    )
    entries = st.lists(st.one_of(known, st.tuples(st.text(max_size=8), _json_values())), max_size=4)
    return weighted((80, entries.map(dict)), (20, _json_values()))  # the latter: rarely objects


@cache
def _args_object(verb: str) -> st.SearchStrategy[dict[str, Any]]:
    mission = weighted(
        (60, st.sampled_from(FUZZ_MISSIONS)),
        (20, st.sampled_from(["fuzz_sub", "nope", "", "../missions/head_scan", "FUZZ_LONG"])),
        (20, _json_values()),
    )
    needs = verb in ("start", "validate")
    run_id = weighted(  # recover's: hex (no such run), a path, anything
        (50, st.text("0123456789abcdef", min_size=1, max_size=70)),
        (20, st.sampled_from(["../runs/x", "", "ABC", "0" * 64 + "/"])),
        (30, _json_values()),
    )
    if verb == "set":  # a place: its name and where
        coordinate = st.one_of(
            st.floats(-1.0, 1.0),
            st.sampled_from([100, 100.0001, -100, 10**400, math.inf, math.nan, True, "0.1"]),
        )
        place = st.fixed_dictionaries(
            {
                "name": weighted(
                    (60, st.sampled_from(["cup", "table_2", "a" * 64])),
                    (40, st.sampled_from(["Cup", "cup\n", "2cup", "", "a" * 65, "cup-2", 7])),
                ),
                "at": weighted(
                    (70, st.lists(coordinate, min_size=3, max_size=3)),
                    (30, st.one_of(st.lists(coordinate, max_size=5), _json_values())),
                ),
            },
            optional={"by": _json_values(), "extra": _json_values()},
        )
        return weighted(
            (85, place), (15, st.dictionaries(st.text(max_size=10), _json_values(), max_size=3))
        )
    body = st.fixed_dictionaries(
        {"mission": mission} if needs else {"run_id": run_id} if verb == "recover" else {},
        optional={"params": _params(), "extra": _json_values()}
        | ({} if needs else {"mission": mission}),
    )
    return weighted(
        (85, body), (15, st.dictionaries(st.text(max_size=10), _json_values(), max_size=3))
    )


@cache
def _hostile_json() -> st.SearchStrategy[str]:
    # (not near 1000: where the recursion limit bites depends on the stack depth at the call)
    depth = st.sampled_from([10, 500, 5000, 30000])
    return st.one_of(
        depth.map(lambda n: "[" * n + "]" * n),
        depth.map(lambda n: '{"a":' * n + "1" + "}" * n),
        depth.map(lambda n: "[" * n),
        st.sampled_from([4300, 4301, 5000, 20000]).map(lambda n: '{"n": ' + "7" * n + "}"),
        st.sampled_from([4301, 5000]).map(
            lambda n: '{"mission": "fuzz_long", "x": -' + "1" * n + "}"
        ),
        st.just('{"n": 1e999999}'),
        st.just('{"a": NaN, "b": -Infinity}'),
        st.just('{"mission": "fuzz_long", "mission": "fuzz_params"}'),
        st.just('{"mission": "\\ud800"}'),
        st.just("\ufeff{}"),
        st.just('{"a": "\x00"}'),
    )


def weighted(*options: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of ``options``, each drawn with its weight (percent, say)."""
    table = [strategy for weight, strategy in options for _ in range(weight)]
    return st.sampled_from(table).flatmap(lambda strategy: strategy)


@cache
def _args(verb: str) -> st.SearchStrategy[str]:
    valid = _args_object(verb).map(json.dumps)
    return weighted(
        (60, valid),
        (5, st.just("")),
        (8, _json_values().map(lambda v: json.dumps(v))),  # JSON, not always an object
        (5, st.text(max_size=30)),
        (7, valid.flatmap(lambda t: st.integers(0, max(len(t) - 1, 0)).map(lambda i: t[:i]))),
        (10, _hostile_json()),
        (3, st.just("{" + '"x": 1, ' * 9000 + '"y": 2}')),  # large but fine
        (2, st.just(json.dumps({"pad": "p" * _OVERSIZE}))),
    )


@cache
def _verb() -> st.SearchStrategy[str]:
    return weighted(
        (75, st.sampled_from(sorted(VERBS))),
        (12, st.sampled_from(UNKNOWN_VERBS)),
        (10, st.text(max_size=12)),
        (3, st.just("v" * _OVERSIZE)),
    )


_AUTH_WEIGHTS = {"correct": 40, "none": 15}  # every other mode: 5


@st.composite
def request_specs(draw: st.DrawFn) -> RequestSpec:
    verb = draw(_verb())
    # a correctly signed stop or pause would disturb the run the fuzzer watches
    modes = [m for m in AUTH_MODES if not (verb in DISTURBING and m == "correct")]
    auth = draw(weighted(*((_AUTH_WEIGHTS.get(m, 5), st.just(m)) for m in modes)))
    spec = RequestSpec(verb=verb, args=draw(_args(verb)), auth=auth)
    extras: dict[str, Any] = {}
    if spec.auth == "garbled":
        extras["signature"] = draw(
            st.one_of(
                st.text(max_size=70),
                st.text("0123456789abcdef", min_size=64, max_size=64),
                st.just("é" * 64),
                st.just("0" * _OVERSIZE),
            )
        )
    elif spec.auth == "stale":
        extras["stamp_offset_ns"] = -draw(st.integers(WINDOW_NS + 10**9, 10**18))
    elif spec.auth == "future":
        extras["stamp_offset_ns"] = draw(st.integers(WINDOW_NS + 10**9, 10**18))
    elif spec.auth == "unknown_client":
        extras["client_id"] = draw(st.sampled_from(["mallory", "", "Operator", "operator\x00"]))
    odd = draw(
        weighted(
            (80, st.just("")),
            (5, st.just("request_id")),
            (5, st.just("nonce")),
            (5, st.just("client_id")),
            (5, st.just("not_utf8")),
        )
    )
    if odd == "request_id":
        extras["request_id"] = draw(
            st.one_of(
                st.just(""),
                st.text(min_size=1, max_size=300),
                st.just("r" * 5000),
                st.just("r" * _OVERSIZE),
            )
        )
    elif odd == "nonce":
        extras["nonce"] = draw(
            st.one_of(st.text(min_size=1, max_size=40), st.just("n" * _OVERSIZE))
        )
    elif odd == "client_id" and spec.auth in ("none", "garbled", "wrong_key"):
        extras["client_id"] = draw(st.one_of(st.text(max_size=40), st.just("c" * _OVERSIZE)))
    elif odd == "not_utf8":
        extras["not_utf8"] = draw(
            st.sampled_from(["verb", "args", "nonce", "signature", "request_id", "client_id"])
        )
    return RequestSpec(**{**spec.__dict__, **extras})


def json_or_none(text_: str) -> tuple[bool, Any]:
    """(parsed, value): how a careful server reads ``args`` (hostile JSON is not JSON)."""
    if not text_:
        return True, {}
    try:
        return True, json.loads(text_)
    except (ValueError, RecursionError):
        return False, None


def describe_spec(spec: RequestSpec) -> str:
    def short(v: object) -> str:
        r = repr(v)
        return r if len(r) <= 60 else f"{r[:40]}...({len(r)} chars)"

    return ", ".join(f"{k}={short(v)}" for k, v in spec.__dict__.items())


# -- start arguments from the command line -------------------------------------------------

PARAM_NAMES = tuple(PARAM_VALUES)  # the parameters of tests/fuzz/missions/fuzz_params.yaml
NOT_A_VALUE = (
    "2024-01-01",
    "2024-01-01 10:00:00",
    "[",
    "{",
    "[1, 2",
    "'x",
    '"x',
    "a: b",
    "[1, 2]",
    "{a: 1}",
    "- x",
    "!!python/object/apply:os.system ['true']",
    "!!python/name:os.system",
    "!!binary aGk=",
    "!custom 3",
    "&a 3",
    "*a",
    "010",
    "1:30",
    "0x_",
    ".nan",
    ".inf",
    "-.inf",
    "1.0e+999",
    "9" * 31,
    "-" + "9" * 5000,
    "null",
    "~",
    "%YAML 1.1\n--- 3",
    "3\n---\n4",
    "\x00",
    "a\x00b",
    "\x1b[31m",
    "\udcff\udcfe",
    "\ufeff3",
)


@st.composite
def param_items(draw: st.DrawFn) -> str:
    """One ``--param`` argument: NAME=VALUE, or something that is not even that."""
    name = draw(
        weighted(
            (80, st.sampled_from(PARAM_NAMES)),
            (10, st.from_regex(NAME_RE, fullmatch=True)),
            (10, st.text(max_size=8)),  # maybe not a name at all
        )
    )
    value = draw(
        weighted(
            (30, st.sampled_from([v for vs in PARAM_VALUES.values() for v in vs]).map(_as_yaml)),
            (35, st.sampled_from(NOT_A_VALUE)),
            (15, st.text(max_size=20)),
            (10, st.binary(max_size=12).map(lambda b: b.decode("utf-8", "surrogateescape"))),
            (10, st.sampled_from(sorted(YAML_TRAPS))),
        )
    )
    sep = draw(st.sampled_from(["=", "=", "=", "", "=="]))
    return f"{name}{sep}{value}"


def _as_yaml(value: Any) -> str:
    """How a person writes ``value`` after ``--param NAME=``."""
    if isinstance(value, str):
        return value
    text_: str = yaml.dump(value, Dumper=_Dumper, default_flow_style=True, width=10**6)
    return text_.removesuffix("\n...\n").strip()


# -- include paths ---------------------------------------------------------------------------

_PATH_PARTS = (
    "subtrees/",
    "../",
    "./",
    "/",
    "~/",
    "//",
    "fetch_drink.yaml",
    "serve_at_table.yaml",
    ".yaml",
    ".yml",
    FIFO,
    DIRECTORY,
    "subtrees",
    "poses/head.yaml",
    "x" * 300,
    "\0",
    "\n",
    "\x1b",
    "\x7f",
    "\u2028",
    "é",
    " ",
    "\\",
    "${p}",
)


_GOOD_PATHS = (
    "subtrees/fetch_drink.yaml",
    "./subtrees/serve_at_table.yaml",
    "subtrees/../subtrees/fetch_drink.yaml",
    "subtrees//serve_at_table.yaml",
)


@st.composite
def include_paths(draw: st.DrawFn) -> FileSet:
    """A mission whose tree includes one drawn path: pieces of real paths, special files,
    control characters and anything else text can hold."""
    path = "".join(
        draw(
            st.lists(
                weighted(
                    (70, st.sampled_from(_PATH_PARTS)),
                    (30, st.text(st.characters(exclude_categories=("Cs",)), max_size=6)),
                ),
                min_size=1,
                max_size=6,
            )
        )
    )
    if draw(st.booleans()):
        path += ".yaml"  # most get past the extension check
    if draw(st.integers(0, 5)) == 0:  # now and then a path that works, however written
        path = draw(st.sampled_from(_GOOD_PATHS))
    # the arguments the shipped subtree named (if any) requires, so some includes load
    args = {"bar_tag": 3} if "fetch_drink" in path else {"table_tag": 4} if "serve" in path else {}
    body: Any = {"file": path, "with": args} if args and draw(st.integers(0, 3)) else path
    doc = {"mission": "fz", "tree": {"sequence": [*at_rest(), {"include": body}]}}
    files = FileSet({MAIN: doc})
    files.render(draw(st.sampled_from([False, None])), draw(st.sampled_from([80, 10**6])))
    files.edits.append(f"include {path!r}")
    return files
