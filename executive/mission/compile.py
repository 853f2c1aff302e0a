"""From located YAML to the validated model: one walk that reports every problem.

A document is ``mission:`` (startable; every parameter has a default) or ``subtree:``
(included by others; parameters may be required). Its ``tree`` is a node; a node is a
mapping with exactly one key, the node kind from the registry, whose value holds the
kind's fields. Composites may be written with just their children
(``sequence: [...]``), an include with just its file (``include: subtrees/pick.yaml``),
and a leaf without fields as a bare name (``- clear_errors``).

The walk checks fields against the registry (unknown, missing, wrong type, out of
range, mutually exclusive), substitutes parameters, hands leaves to the semantic
checker, checks how nodes combine, and follows includes — relative to the including
file, inside the mission directory, without cycles — under a nesting limit and a node
budget that hold across files. Nothing stops at the first problem.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from executive.language.diagnostics import Diagnostics, Location
from executive.language.leaf import LeafInput
from executive.language.library import Library
from executive.language.model import (
    Composite,
    Decorator,
    Guard,
    Leaf,
    Mission,
    Node,
    ParamDecl,
    Subtree,
    Unresolved,
    frozen,
)
from executive.language.values import Val, suggest
from executive.language.yaml_source import (
    ReadTree,
    YEntry,
    YMap,
    YNode,
    YScalar,
    YSeq,
    describe,
    plain,
)
from executive.mission import includes, tree_checks
from executive.mission.fields import FieldReader, expected
from executive.mission.params import Binding, Scope, parse_decls
from executive.mission.registry import (
    ALIASES,
    KINDS,
    MAX_DEPTH,
    MAX_NODES,
    Category,
    FieldType,
    NodeKind,
)
from executive.mission.validate import LeafValidator, default_name
from executive.seam.body import EMPTY_SCENE, Scene, parse_scene
from executive.seam.profile import RobotProfile

DOC_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_DOC_KEYS = ("mission", "subtree", "description", "params", "scene", "tree")


@dataclass
class _Names:
    """The names a value may refer to (satisfies values.Names)."""

    library: Library
    profile: RobotProfile

    @property
    def poses(self) -> Mapping[str, Any]:
        return self.library.poses

    @property
    def gestures(self) -> Mapping[str, Any]:
        return self.library.gestures

    @property
    def fsm_states(self) -> Mapping[str, Any]:
        return self.profile.fsm


@dataclass
class Session:
    """One load: what every file of it shares (limits count across includes)."""

    profile: RobotProfile
    library: Library
    root: Path  # resolved mission directory
    read: ReadTree
    diags: Diagnostics = field(default_factory=Diagnostics)
    max_depth: int = MAX_DEPTH
    max_nodes: int = MAX_NODES
    nodes: int = 0
    over_budget: bool = False
    stack: list[Path] = field(default_factory=list)
    resolved_paths: dict[Path, Path] = field(default_factory=dict)  # symlinks resolved, cached
    includes: dict[str, None] = field(default_factory=dict)
    scene: Scene = EMPTY_SCENE  # the mission's: leaves that take one (reach) get it

    def __post_init__(self) -> None:
        self.names = _Names(self.library, self.profile)
        self.leaves = LeafValidator(self.profile, self.library, self.diags)


@dataclass(frozen=True)
class _Body:
    """A node's fields after the generic checks."""

    vals: dict[str, Val]
    nodes: dict[str, tuple[YNode, Location]]  # NODE/NODES/ARGS fields, raw
    broken: frozenset[str]
    ok: bool  # no missing/exclusive problem


def compile_document(
    session: Session,
    tree: YNode,
    display: str,
    path: Path,
    *,
    args: Mapping[str, Val] | None = None,
    depth: int = 1,
    standalone: bool = True,
) -> Mission | None:
    """Compile one file. ``args`` are include arguments (``standalone`` False) or start
    arguments; a standalone subtree leaves parameters without values ``Unresolved``."""
    diags = session.diags
    header = _header(tree, diags)
    if header is None:
        return None
    kind, entries, where = header
    name = _doc_name(entries[kind].value, kind, diags)
    description = _description(entries, diags)
    decls: dict[str, ParamDecl] = {}
    if "params" in entries:
        decls = parse_decls(entries["params"].value, "params", session.names, diags)
    if kind == "mission" and standalone:
        for decl in decls.values():
            if decl.required:
                diags.error(
                    decl.where,
                    f"params.{decl.name}",
                    "a mission's parameters need a default (only a subtree may require them)",
                )
    scope = Scope(display, _bindings(decls, args))
    scene = _scene(entries, kind, diags)
    if kind == "mission" and standalone:
        session.scene = scene
    if "tree" not in entries:
        diags.error(where, "", "missing 'tree:' (the mission's root node)")
        return None
    root = _Compiler(session, scope, path).node(entries["tree"].value, "tree", depth)
    for decl in decls.values():
        if decl.name not in scope.used:
            diags.warning(decl.where, f"params.{decl.name}", "declared but never used")
    if root is None or name is None:
        return None
    return Mission(
        name=name,
        kind=kind,
        file=display,
        where=entries[kind].key_where,
        description=description,
        params=frozen(decls),
        args=frozen({n: b.value for n, b in scope.bindings.items()}),
        root=root,
        includes=tuple(session.includes),
        scene=scene,
    )


def _scene(entries: Mapping[str, YEntry], kind: str, diags: Diagnostics) -> Scene:
    """A mission's ``scene:``: the obstacles its moves are checked against (body_checks)."""
    entry = entries.get("scene")
    if entry is None:
        return EMPTY_SCENE
    if kind != "mission":
        diags.error(entry.key_where, "scene", "only a mission declares a scene")
        return EMPTY_SCENE
    return parse_scene(
        plain(entry.value), "scene", lambda key, message: diags.error(entry.key_where, key, message)
    )


def _header(tree: YNode, diags: Diagnostics) -> tuple[str, dict[str, YEntry], Location] | None:
    """The document kind (mission or subtree) and top-level entries, unknown keys reported."""
    if not isinstance(tree, YMap):
        diags.error(
            tree.where,
            "",
            f"expected a mapping with 'mission:' or 'subtree:' and 'tree:', got {describe(tree)}",
        )
        return None
    entries = tree.entries
    for key, entry in entries.items():
        if key not in _DOC_KEYS:
            diags.error(entry.key_where, key, f"unknown key{suggest(key, _DOC_KEYS, 'keys')}")
    kinds = [k for k in ("mission", "subtree") if k in entries]
    if len(kinds) != 1:
        where = entries[kinds[1]].key_where if len(kinds) > 1 else tree.where
        diags.error(
            where, "", "a file is either 'mission: <name>' or 'subtree: <name>' (exactly one)"
        )
        return None
    return kinds[0], entries, tree.where


def _description(entries: Mapping[str, YEntry], diags: Diagnostics) -> str:
    if "description" not in entries:
        return ""
    d = entries["description"].value
    if isinstance(d, YScalar) and isinstance(d.value, str):
        return d.value
    diags.error(d.where, "description", f"expected text, got {describe(d)}")
    return ""


def _doc_name(node: YNode, kind: str, diags: Diagnostics) -> str | None:
    if isinstance(node, YScalar) and isinstance(node.value, str) and DOC_NAME_RE.match(node.value):
        return node.value
    diags.error(node.where, kind, f"expected a name (letters, digits, _ . -), got {describe(node)}")
    return None


def _bindings(decls: Mapping[str, ParamDecl], args: Mapping[str, Val] | None) -> dict[str, Binding]:
    out: dict[str, Binding] = {}
    for name, decl in decls.items():
        if args is not None and name in args:
            out[name] = Binding(decl, args[name].value, args[name].where)
        elif not decl.required:
            out[name] = Binding(decl, decl.default, decl.default_where)
        else:
            # standalone: checked as far as possible; included: the include reported it
            out[name] = Binding(decl, Unresolved(name), None)
    return out


class _Compiler:
    """Compiles the nodes of one file instance (one scope)."""

    def __init__(self, session: Session, scope: Scope, path: Path) -> None:
        self.s = session
        self.diags = session.diags
        self.scope = scope
        self.path = path
        self.fields = FieldReader(session.names, session.diags, scope)

    # -- nodes ----------------------------------------------------------------------------

    def node(self, y: YNode, path: str, depth: int) -> Node | None:
        if depth > self.s.max_depth:
            self.diags.error(
                y.where,
                path,
                f"nested deeper than {self.s.max_depth} levels (counted across includes)",
            )
            return None
        self.s.nodes += 1
        if self.s.nodes > self.s.max_nodes:
            if not self.s.over_budget:
                self.s.over_budget = True
                self.diags.error(
                    y.where, path, f"more than {self.s.max_nodes} nodes (counted across includes)"
                )
            return None
        split = self._split(y, path)
        if split is None:
            return None
        kind, body_node, where = split
        kpath = f"{path}.{kind.name}"
        body = self._body(kind, body_node, where, kpath)
        if body is None:
            return None
        if kind.category is Category.LEAF:
            return self._leaf(kind, body, where, kpath, depth)
        if kind.category is Category.COMPOSITE:
            return self._composite(kind, body, where, kpath, depth)
        if kind.category is Category.DECORATOR:
            return self._decorator(kind, body, where, kpath, depth)
        return self._include(body, where, kpath, depth)

    def _split(self, y: YNode, path: str) -> tuple[NodeKind, YNode | None, Location] | None:
        """The kind of a node and its body: ``{kind: body}`` or a bare kind name."""
        if isinstance(y, YScalar) and isinstance(y.value, str) and y.value in KINDS:
            kind = KINDS[y.value]
            if kind.required:
                self.diags.error(
                    y.where,
                    path,
                    f"{kind.name} needs {', '.join(kind.required)}: write it as a mapping",
                )
                return None
            return kind, None, y.where
        if not isinstance(y, YMap) or len(y.entries) != 1:
            self.diags.error(y.where, path, self._not_a_node(y))
            return None
        ((name, entry),) = y.entries.items()
        kind_ = KINDS.get(name)
        if kind_ is None:
            hint = (
                f" (this language calls it {ALIASES[name]!r})"
                if name in ALIASES
                else suggest(name, KINDS, "node kinds")
            )
            self.diags.error(entry.key_where, path, f"unknown node kind {name!r}{hint}")
            return None
        return kind_, entry.value, entry.key_where

    @staticmethod
    def _not_a_node(y: YNode) -> str:
        base = "expected a node: a mapping with one key, the node kind"
        if isinstance(y, YMap) and y.entries:
            keys = list(y.entries)
            # "- move_joints:" followed by fields at the same indentation: an empty kind
            kinds = [
                k
                for k, e in y.entries.items()
                if k in KINDS and isinstance(e.value, YScalar) and e.value.value is None
            ]
            if len(kinds) == 1:
                others = ", ".join(k for k in keys if k != kinds[0])
                return f"{base}; {others} should be indented under {kinds[0]}:"
            return f"{base}, found keys {', '.join(keys)}"
        return f"{base}, got {describe(y)}"

    def _body(
        self, kind: NodeKind, body: YNode | None, where: Location, kpath: str
    ) -> _Body | None:
        entries = self._entries(kind, body, kpath)
        if entries is None:
            return None
        vals: dict[str, Val] = {}
        nodes: dict[str, tuple[YNode, Location]] = {}
        broken: set[str] = set()
        for name, key_where, value in entries:
            fpath = kpath if name == "children" and isinstance(body, YSeq) else f"{kpath}.{name}"
            f = kind.field(name)
            if f is None:
                known = [x.name for x in kind.fields]
                self.diags.error(
                    key_where,
                    fpath,
                    f"unknown field of {kind.name}{suggest(name, known, 'fields')}",
                )
            elif f.type in (FieldType.NODE, FieldType.NODES, FieldType.ARGS):
                nodes[name] = (value, key_where)
            else:
                v = self.fields.value(value, f, fpath)
                if v is None:
                    broken.add(name)
                else:
                    vals[name] = v
        given = {n for n, _, _ in entries if kind.field(n) is not None}
        ok = self._combination(kind, given, where, kpath)
        return _Body(vals, nodes, frozenset(broken), ok)

    def _entries(
        self, kind: NodeKind, body: YNode | None, kpath: str
    ) -> list[tuple[str, Location, YNode]] | None:
        """A node body's (field, key location, value) triples, shorthand forms expanded."""
        if body is None or (isinstance(body, YScalar) and body.value is None):
            return []
        if isinstance(body, YMap):
            return [(k, e.key_where, e.value) for k, e in body.entries.items()]
        if isinstance(body, YSeq) and kind.category is Category.COMPOSITE:
            return [("children", body.where, body)]
        if isinstance(body, YScalar) and kind.category is Category.INCLUDE:
            return [("file", body.where, body)]
        self.diags.error(
            body.where,
            kpath,
            f"expected the fields of {kind.name} as a mapping, got {describe(body)}",
        )
        return None

    def _combination(self, kind: NodeKind, given: set[str], where: Location, kpath: str) -> bool:
        """Required fields present, one_of and exclusive respected."""
        ok = True
        for name in kind.required:
            if name not in given:
                self.diags.error(where, kpath, _missing(kind, name))
                ok = False
        chosen = given & set(kind.one_of)
        if kind.one_of and len(chosen) != 1:
            options = " or ".join(kind.one_of)
            message = f"give either {options}, not both" if chosen else f"needs {options}"
            self.diags.error(where, kpath, message)
            ok = False
        if len(given & set(kind.exclusive)) > 1:
            self.diags.error(where, kpath, f"give {' or '.join(kind.exclusive)}, not both")
            ok = False
        return ok

    def _name(self, body: _Body, fallback: str) -> str:
        v = body.vals.get("name")
        return str(v.value) if v is not None else fallback

    def _leaf(
        self, kind: NodeKind, body: _Body, where: Location, kpath: str, depth: int
    ) -> Node | None:
        # a leaf's node fields (checkpoint's ``recover``): subtrees in its args, run apart
        # from the tree (a walk does not enter them; executive.mission.checkpoints checks them)
        subtrees = {
            fname: self.node(raw, f"{kpath}.{fname}", depth + 1)
            for fname, (raw, _) in body.nodes.items()
        }
        args = self.s.leaves.check(LeafInput(kind, body.vals, body.broken, where, kpath))
        if args is None or not body.ok or any(t is None for t in subtrees.values()):
            return None
        args = {**args, **subtrees}
        if "scene" in kind.args:  # the obstacles the leaf checks at run time (reach)
            args["scene"] = self.s.scene
        return Leaf(
            name=self._name(body, default_name(kind.name, args)),
            where=where,
            path=kpath,
            kind=kind.name,
            args=frozen(args),
            spots=frozen({n: v.where for n, v in body.vals.items()}),
            fields=frozen({n: v.value for n, v in body.vals.items()}),
            written=_written(body.vals),
        )

    def _composite(
        self, kind: NodeKind, body: _Body, where: Location, kpath: str, depth: int
    ) -> Node | None:
        children: list[Node | None] = []
        if "children" in body.nodes:
            raw, key_where = body.nodes["children"]
            # the short form (sequence: [...]) has no "children" key: its key is the list
            shorthand = isinstance(raw, YSeq) and raw.where == key_where
            cpath = kpath if shorthand else f"{kpath}.children"
            if not isinstance(raw, YSeq) or not raw.items:
                self.diags.error(
                    raw.where, cpath, f"expected a list of at least one node, got {describe(raw)}"
                )
                return None
            children = [
                self.node(item, f"{cpath}[{i}]", depth + 1) for i, item in enumerate(raw.items)
            ]
        memory_val = body.vals.get("memory")
        memory = bool(memory_val.value) if memory_val is not None else True
        policy = None
        if kind.name == "parallel":
            policy = str(body.vals["policy"].value) if "policy" in body.vals else "success_on_all"
            if policy == "success_on_one" and memory_val is not None:
                self.diags.error(
                    memory_val.where,
                    f"{kpath}.memory",
                    "memory applies to success_on_all only (success_on_one stops the others when one succeeds)",
                )
                return None
        if not body.ok or body.broken or any(c is None for c in children):
            return None
        node = Composite(
            name=self._name(body, kind.name.capitalize()),
            where=where,
            path=kpath,
            kind=kind.name,
            memory=memory,
            policy=policy,
            nodes=tuple(c for c in children if c is not None),
            written=_written(body.vals),
        )
        before = self.diags.error_count()
        tree_checks.check_composite(node, self.diags)
        return node if self.diags.error_count() == before else None

    def _decorator(
        self, kind: NodeKind, body: _Body, where: Location, kpath: str, depth: int
    ) -> Node | None:
        built: dict[str, Node | None] = {}
        for fname in ("condition", "child"):
            if fname in body.nodes:
                raw, _ = body.nodes[fname]
                built[fname] = self.node(raw, f"{kpath}.{fname}", depth + 1)
        if not body.ok or body.broken or any(v is None for v in built.values()):
            return None
        child = built["child"]
        assert child is not None
        if kind.name == "guard":
            condition = built["condition"]
            assert condition is not None
            guard = Guard(
                name=self._name(body, "Guard"),
                where=where,
                path=kpath,
                condition=condition,
                child=child,
                written=_written(body.vals),
            )
            before = self.diags.error_count()
            tree_checks.check_guard(guard, self.diags)
            return guard if self.diags.error_count() == before else None
        args = {n: v.value for n, v in body.vals.items() if n != "name"}
        return Decorator(
            name=self._name(body, _decorator_name(kind.name, args)),
            where=where,
            path=kpath,
            kind=kind.name,
            child=child,
            args=frozen(args),
            written=_written(body.vals),
        )

    # -- includes -------------------------------------------------------------------------

    def _include(self, body: _Body, where: Location, kpath: str, depth: int) -> Node | None:
        if "file" not in body.vals:
            return None
        fval = body.vals["file"]
        fpath = f"{kpath}.file"
        target = includes.locate(
            str(fval.value),
            fval.where,
            fpath,
            self.path,
            self.scope.file,
            self.s.root,
            self.s.resolved_paths,
            self.diags,
        )
        if target is None:
            return None
        resolved, display = target
        if includes.cycle(self.s.stack, resolved, fval.where, fpath, self.diags):
            return None
        tree = includes.read(self.s.read, resolved, display, fval, fpath, self.diags)
        if tree is None:
            return None
        self.s.includes[display] = None
        args = includes.arguments(
            body.nodes.get("with"),
            includes.peek_decls(tree, self.s.names),
            where,
            kpath,
            self.fields,
            self.diags,
        )
        if args is None or not body.ok or body.broken:
            return None
        self.s.stack.append(resolved)
        try:
            doc = compile_document(
                self.s, tree, display, resolved, args=args, depth=depth, standalone=False
            )
        finally:
            self.s.stack.pop()
        if doc is None:
            return None
        return Subtree(
            name=self._name(body, doc.root.name),
            where=where,
            path=kpath,
            file=display,
            document=doc.name,
            args=doc.args,
            root=doc.root,
            written=frozen(
                {**_written(body.vals), **_written(args, "with.")}  # an include's values
            ),
        )


def _missing(kind: NodeKind, name: str) -> str:
    f = kind.field(name)
    if name == "timeout" and kind.waits:
        return (
            f"missing timeout: {kind.name} waits on the robot, so it needs a timeout > 0 "
            "(seconds) after which it fails"
        )
    desc = f" ({expected(f)})" if f is not None else ""
    return f"missing {name}{desc}"


def _written(vals: Mapping[str, Val], prefix: str = "") -> Mapping[str, str]:
    """The values among ``vals`` that involved ``${``, as the file writes them."""
    return frozen({prefix + n: v.written for n, v in vals.items() if v.written is not None})


def _decorator_name(kind: str, args: Mapping[str, Any]) -> str:
    if kind == "retry":
        return f"Retry x{args.get('attempts')}"
    if kind == "repeat":
        return f"Repeat x{args.get('times')}"
    if kind in ("timeout", "delay"):
        s = args.get("seconds")
        shown = f"{s:g}" if isinstance(s, float) else str(s)
        return f"{kind.capitalize()} {shown} s"
    return kind.capitalize()
