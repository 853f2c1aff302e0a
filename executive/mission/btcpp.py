"""Missions as BehaviorTree.CPP XML (``BTCPP_format="4"``), both ways.

BehaviorTree.CPP's XML is the format most behaviour trees are written in, and Groot2 the
editor that opens it. ``export`` writes a mission as that XML: its tree with its includes
expanded, and a ``<TreeNodesModel>`` of our leaf kinds with their ports, so Groot2 draws
and edits it. The mission's parameters are its main tree's ports (a ``<SubTree ID=...>``
model, where BehaviorTree.CPP reads a tree's ports and Groot2 shows and edits them; our
type and range end each port's description, ``declaration_text``), and a field that is a
parameter is written as the file writes it: ``{param}``, BehaviorTree.CPP's blackboard
reference, or text with its ``${param}`` (``Terms``). ``--resolved`` (and the live view)
writes every field's value instead: the tree the service runs. ``import`` reads such XML
(as Groot2 saves it) back into a mission file that the loader then validates; an element
or a port we do not know is an error naming its XML line.

Control nodes map by meaning (``docs/missions.md``, "Missions in BehaviorTree.CPP XML"):

=========================================  ==================================================
ours                                       BehaviorTree.CPP
=========================================  ==================================================
sequence (memory: true / false)            ``Sequence`` / ``ReactiveSequence``
fallback (memory: true / false)            ``Fallback`` / ``ReactiveFallback``
parallel success_on_all (memory: true)     ``Parallel success_count="-1" failure_count="1"``
parallel success_on_one                    ``Parallel success_count="1" failure_count="1"``
retry attempts                             ``RetryUntilSuccessful num_attempts``
repeat times                               ``Repeat num_cycles``
timeout seconds                            ``Timeout msec``
delay seconds                              ``Delay delay_msec``
inverter                                   ``Inverter``
guard [condition, child]                   ``ReactiveSequence`` [condition, child]
include                                    its tree inline, ``_include`` and ``_with.*`` on it
leaf ``move_joints`` ...                   ``<MoveJoints>`` ... (``TreeNodesModel``)
checkpoint ``recover``                     a ``<BehaviorTree>`` named by the port ``recover``
=========================================  ==================================================

What has no counterpart is refused, never approximated: a ``parallel`` with
``memory: false`` (BehaviorTree.CPP's Parallel never ticks a finished child again), a
time that is no whole number of milliseconds or a parameter in seconds where
BehaviorTree.CPP takes milliseconds, a parameter inside a joint map, a parameter named as
BehaviorTree.CPP reserves, BehaviorTree.CPP's own nodes we do not have (``Switch2``,
``Script``, ``KeepRunningUntilFailure`` ...).

The same element for a node serves the live view (``executive.service.groot2``): a mission
running in the service and its export are one tree to a Groot2 client. Elements are made
from the built py_trees tree (each node carries the model node it was built from,
``executive.mission.build``), so what is shown is what runs: the delay's own wait is inside
its ``Delay``, a guard's condition is the first child of its ``ReactiveSequence``.
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import py_trees

from executive.language.kinds import PARAM_TYPES, Field, FieldType, NodeKind
from executive.language.leaf import LeafKind
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
)
from executive.language.values import Val
from executive.mission.params import TOKEN, WHOLE_REF, as_text
from executive.mission.registry import KINDS, LEAVES

FORMAT = "4"
INCLUDE_ATTR = "_include"  # an include's file (relative to the mission directory)
WITH_PREFIX = "_with."  # an include's parameter values, one attribute each
DESCRIPTION_ATTR = "_description"  # a mission's description, on its <BehaviorTree>

# BehaviorTree.CPP forbids these in a model name (a tree ID): xml_parsing.cpp's
# validateModelName, basic_types.cpp's findForbiddenChar
_FORBIDDEN_IN_ID = re.compile(r"[\s<>&\"'/\\:*?|.\x00-\x1f\x7f]")
# names BehaviorTree.CPP reserves, which no port may have (basic_types.cpp's
# IsReservedAttribute: the pre- and post-conditions, name, ID, _autoremap)
RESERVED_PORTS = frozenset(
    {"name", "ID", "_autoremap", "_failureIf", "_skipIf", "_successIf", "_while"}
    | {"_onSuccess", "_onFailure", "_post", "_onHalted"}
)
# what BehaviorTree.CPP reads as a blackboard reference (TreeNode::isBlackboardPointer)
POINTER = re.compile(r"^\s*\{(.*)\}\s*$", re.S)


class TranslationError(ValueError):
    """A mission (or XML) that has no exact counterpart in the other language."""


def leaf_id(kind: str) -> str:
    """A leaf kind's BehaviorTree.CPP ID: ``move_joints`` -> ``MoveJoints``."""
    return "".join(part.capitalize() for part in kind.split("_"))


LEAF_IDS: Mapping[str, str] = {k.name: leaf_id(k.name) for k in LEAVES}
KIND_OF_ID: Mapping[str, str] = {v: k for k, v in LEAF_IDS.items()}

# BehaviorTree.CPP's built-in controls and decorators that ours map onto, with their ports
BUILTIN_PORTS: Mapping[str, tuple[str, ...]] = {
    "Sequence": (),
    "ReactiveSequence": (),
    "Fallback": (),
    "ReactiveFallback": (),
    "Parallel": ("success_count", "failure_count"),
    "RetryUntilSuccessful": ("num_attempts",),
    "Repeat": ("num_cycles",),
    "Timeout": ("msec",),
    "Delay": ("delay_msec",),
    "Inverter": (),
}


def tree_id(name: str) -> str:
    """A valid BehaviorTree.CPP tree ID for a mission or subtree name (``.`` is not)."""
    return _FORBIDDEN_IN_ID.sub("_", name) or "Mission"


# -- values as port strings -----------------------------------------------------------


def plain(value: Any) -> Any:
    """A field's value without the loader's locations (``Val``, ``(Location, Val)``)."""
    if isinstance(value, Val):
        return plain(value.value)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], Val):
        return plain(value[1])
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    return value


def port_text(value: Any) -> str:
    """A value as a port string: numbers exactly (``repr``), ``true``/``false``, joint
    targets ``joint:rad;joint:rad``, lists ``a;b`` (BehaviorTree.CPP's vector
    convention), a value nobody gave ``{param}`` (a blackboard reference)."""
    value = plain(value)
    if isinstance(value, Unresolved):
        return "{" + value.param + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Mapping):
        return ";".join(f"{k}:{port_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ";".join(port_text(v) for v in value)
    return str(value)


def escape(text: str) -> str:
    """Literal text as a mission file writes it (``${`` as ``$${``): the XML's texts are
    the file's, so an import reads a literal ``${`` back as one, not as a reference."""
    return text.replace("${", "$${")


def has_refs(text: str) -> bool:
    """Whether ``text`` (as a mission file writes it) refers to a parameter."""
    return any(m.group(1) is not None for m in TOKEN.finditer(text))


@dataclass(frozen=True)
class Terms:
    """One file instance's parameters in the exported tree's terms: each parameter's value
    in force, and how the export writes it: ``${p}`` (the main tree's port ``p``), text
    with such references (a string parameter), or None (by its value). The mission's own
    parameters are its ports; an included file's are what its ``with`` gave them, in the
    including file's terms (BehaviorTree.CPP's subtree remapping), or their values."""

    values: Mapping[str, Any]
    texts: Mapping[str, str | None]

    @classmethod
    def of(cls, mission: Mission) -> Terms:
        return cls(mission.args, {p: "${" + p + "}" for p in mission.params})

    def text(self, written: str) -> str:
        """A value as its file writes it (``Serve at tag ${table_tag}``) in these terms:
        each reference the main tree's port or its value (as text, as a file's ``${``
        is replaced in text)."""
        out: list[str] = []
        pos = 0
        for m in TOKEN.finditer(written):
            out.append(written[pos : m.start()])
            pos = m.end()
            name = m.group(1)
            if name is None:  # "$${" (a loaded file has no other)
                out.append(m.group(0))
                continue
            mapped = self.texts.get(name)
            value = self.values.get(name)
            if mapped is not None:
                out.append(mapped)
            elif isinstance(value, Unresolved):
                out.append("${" + value.param + "}")
            else:
                out.append(escape(as_text(value)))
        out.append(written[pos:])
        return "".join(out)

    def included(self, sub: Subtree) -> Terms:
        """The terms of the file ``sub`` includes, from its ``with`` in these."""
        texts: dict[str, str | None] = {}
        for name in sub.args:
            written = sub.written.get(f"with.{name}")
            text = self.text(written) if written is not None else None
            texts[name] = text if text is not None and has_refs(text) else None
        return Terms(sub.args, texts)


def _number(text: str, integer: bool) -> float | int:
    value = int(text) if integer else float(text)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def port_value(f: Field, text: str) -> Any:
    """A port string as the YAML value of field ``f``; ValueError saying why not."""
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        raise ValueError(
            f"{text} is a blackboard reference; a mission's fields take values "
            "(give the value, or a ${param} in the YAML)"
        )
    if f.type is FieldType.NUMBER:
        return _number(text, integer=False)
    if f.type in (FieldType.INTEGER, FieldType.TAG):
        return _number(text, integer=True)
    if f.type is FieldType.BOOLEAN:
        if text not in ("true", "false"):
            raise ValueError(f"expected true or false, got {text!r}")
        return text == "true"
    if f.type is FieldType.FSM_STATE:
        return int(text) if text.isdigit() else text
    if f.type is FieldType.JOINT_TARGETS:
        out: dict[str, float] = {}
        for part in filter(None, text.split(";")):
            joint, sep, rad = part.partition(":")
            if not sep:
                raise ValueError(f"expected joint:rad;joint:rad, got {text!r}")
            out[joint.strip()] = float(_number(rad, integer=False))
        return out
    if f.type is FieldType.SELECTION:
        return [p.strip() for p in text.split(";") if p.strip()]
    return text


def _millis(seconds: Any, what: str) -> str:
    """Seconds as BehaviorTree.CPP's whole milliseconds, exactly, or refused."""
    if isinstance(seconds, Unresolved):
        return port_text(seconds)
    msec = round(float(seconds) * 1000)
    if msec / 1000 != float(seconds):
        raise TranslationError(
            f"{what} {seconds!r} s is not a whole number of milliseconds, which is what "
            "BehaviorTree.CPP's node takes"
        )
    return str(msec)


def _seconds(text: str) -> float:
    msec = _number(text, integer=True)
    return msec / 1000


# -- the element tree -------------------------------------------------------------------


@dataclass
class Element:
    """One XML element of a tree: ``tag`` (the node's registered ID), attributes in
    order, children, and the py_trees node it shows (None in an export's extra trees)."""

    tag: str
    attrs: dict[str, str]
    children: list[Element] = field(default_factory=list)
    node: Any = None  # py_trees.behaviour.Behaviour whose status it shows
    # set by ``number``: BehaviorTree.CPP's UID (pre-order from 1, as its factory numbers)
    uid: int = 0

    def walk(self) -> Iterator[Element]:
        """This element and all below it, pre-order (iterative: trees may be deep)."""
        todo = [self]
        while todo:
            e = todo.pop()
            yield e
            todo.extend(reversed(e.children))


@dataclass
class Trees:
    """What a ``<root>`` holds: the main tree (its ID, root element, description) and
    further trees by ID (a checkpoint's ``recover``)."""

    main_id: str
    main: Element
    description: str = ""
    others: dict[str, Element] = field(default_factory=dict)


def number(root: Element, first: int = 1) -> list[Element]:
    """Give every element under ``root`` its UID, pre-order from ``first``: the order in
    which BehaviorTree.CPP's factory creates (and numbers) the nodes of a tree. Returns
    the elements in that order."""
    out = list(root.walk())
    for uid, e in enumerate(out, start=first):
        if uid > 0xFFFF:
            raise TranslationError("more than 65535 nodes: a UID is 16 bits")
        e.uid = uid
    return out


class Maker:
    """py_trees nodes (built from a mission) to elements; collects a checkpoint's
    ``recover`` trees as further trees.

    With ``terms`` (an export that keeps the parameters: ``Terms.of(mission)``) a field
    that is a parameter is written as the file writes it, in the main tree's terms: a
    port reference ``{p}``, or text with ``${p}``; without, every field is its value (the
    live view, ``export --resolved``)."""

    def __init__(
        self,
        others: dict[str, Element],
        base: str,
        live: bool = False,
        terms: Terms | None = None,
    ) -> None:
        self.others = others
        self.base = base  # includes are said relative to this directory (the mission's)
        # the live view shows whatever runs: what an export refuses is drawn with our own
        # models (``REACTIVE_PARALLEL``), a node not built from a mission by its class
        self.live = live
        self.terms = terms

    def element(self, node: py_trees.behaviour.Behaviour) -> Element:
        source: Node | None = getattr(node, "source", None)
        includes: tuple[Subtree, ...] = getattr(node, "includes", ())
        if source is None:
            if not self.live:
                raise TranslationError(f"{node.name!r}: not built from a mission")
            return self.generic(node)
        if len(includes) > 1:
            raise TranslationError(f"{node.name!r}: an include whose tree is only another include")
        outer = self.terms
        if includes and outer is not None:
            self.terms = outer.included(includes[0])
        try:
            e = self._of(node, source)
        except TranslationError:
            if not self.live:
                raise
            return self.generic(node)
        finally:
            self.terms = outer
        for inc in includes:  # said in the including file's terms
            if "name" in inc.written or node.name != source.name:
                e.attrs["name"] = self.name(node.name, inc)
            # else named after its tree's root, as that is written (in the file's terms)
            e.attrs[INCLUDE_ATTR] = os.path.relpath(inc.file, self.base)
            for k, v in inc.args.items():
                e.attrs[WITH_PREFIX + k] = self.port(v, inc.written.get(f"with.{k}"))
        return e

    # -- what a field is in the XML ------------------------------------------------------

    def text(self, value: Any) -> str:
        """A value as a port string; a literal text as the file writes it (an export)."""
        text = port_text(value)
        if self.live or not isinstance(plain(value), str):
            return text
        if POINTER.match(text):
            raise TranslationError(
                f"the text {text!r} is what BehaviorTree.CPP reads as a blackboard reference"
            )
        return escape(text)

    def port(self, value: Any, written: str | None) -> str:
        """A field's port string: where it is a parameter (``written``), as the file writes
        it in the main tree's terms (``{p}``, or text with ``${p}``), else its value."""
        if written is None or self.terms is None:
            return self.text(value)
        whole = WHOLE_REF.match(written)
        text = self.terms.texts.get(whole.group(1)) if whole else self.terms.text(written)
        if text is None:  # a parameter given a value: by its value
            return self.text(value)
        ref = WHOLE_REF.match(text)
        return "{" + ref.group(1) + "}" if ref else text

    def name(self, resolved: str, source: Node) -> str:
        """A node's name: as its file writes it where it holds a parameter."""
        written = source.written.get("name")
        if written is None or self.terms is None:
            return resolved if self.live else escape(resolved)
        return self.terms.text(written)

    # -- elements --------------------------------------------------------------------------

    def _of(self, node: py_trees.behaviour.Behaviour, source: Node) -> Element:
        name = {"name": self.name(node.name, source)}
        kids = list(node.children)
        if isinstance(source, Leaf):
            return Element(LEAF_IDS[source.kind], {**name, **self._ports(source)}, node=node)
        if isinstance(source, Guard):
            return Element("ReactiveSequence", name, self._all(kids), node)
        if isinstance(source, Composite):
            return Element(*_composite(source, name), self._all(kids), node)
        if isinstance(source, Decorator):
            if source.kind == "delay":  # built as Sequence[its wait, child]
                kids = kids[1:]
            return Element(*self._decorator(source, name), self._all(kids), node)
        raise TranslationError(f"{source.path}: no BehaviorTree.CPP counterpart")

    def _all(self, nodes: Sequence[py_trees.behaviour.Behaviour]) -> list[Element]:
        return [self.element(n) for n in nodes]

    def generic(
        self, node: py_trees.behaviour.Behaviour, kids: list[Element] | None = None
    ) -> Element:
        """A py_trees node by its class (the live view of a node no mission describes);
        its children as given, else made here."""
        name = {"name": node.name}
        if kids is None:
            kids = self._all(node.children)
        composites = py_trees.composites
        if isinstance(node, composites.Sequence):
            return Element("Sequence" if node.memory else "ReactiveSequence", name, kids, node)
        if isinstance(node, composites.Selector):
            return Element("Fallback" if node.memory else "ReactiveFallback", name, kids, node)
        if isinstance(node, composites.Parallel):
            policy = node.policy
            if isinstance(policy, py_trees.common.ParallelPolicy.SuccessOnOne):
                counts = {"success_count": "1", "failure_count": "1"}
                return Element("Parallel", {**name, **counts}, kids, node)
            if getattr(policy, "synchronise", True):
                counts = {"success_count": "-1", "failure_count": "1"}
                return Element("Parallel", {**name, **counts}, kids, node)
            return Element(REACTIVE_PARALLEL.id, name, kids, node)
        if isinstance(node, py_trees.decorators.Inverter):
            return Element("Inverter", name, kids, node)
        if isinstance(node, py_trees.decorators.Decorator):
            return Element(DECORATOR.id, name, kids, node)
        return Element(type(node).__name__, name, kids, node)

    def _ports(self, leaf: Leaf) -> dict[str, str]:
        kind = KINDS[leaf.kind]
        out: dict[str, str] = {}
        for f in kind.fields:
            if f.name == "name":
                continue
            if f.type is FieldType.NODE:
                sub = leaf.args.get(f.name)
                if isinstance(sub, Node):
                    out[f.name] = self._extra_tree(leaf, sub)
                continue
            if f.name not in leaf.fields:
                continue
            value = leaf.fields[f.name]
            if self.terms is not None and f.type is FieldType.JOINT_TARGETS:
                _no_parameter_inside(leaf, f.name, value)
            try:
                out[f.name] = self.port(value, leaf.written.get(f.name))
            except TranslationError as e:
                raise TranslationError(f"{leaf.path}.{f.name}: {e}") from None
        return out

    def _extra_tree(self, leaf: Leaf, sub: Node) -> str:
        """A leaf's subtree (a checkpoint's ``recover``) as a tree of its own, by ID."""
        from executive.mission.build import build_node  # the placeholders: on demand

        base = tree_id(f"{leaf_id(leaf.kind)}_{leaf.name}")
        tid, n = base, 1
        while tid in self.others:
            n += 1
            tid = f"{base}_{n}"
        self.others[tid] = Element("?", {})  # reserved while its own extras are made
        self.others[tid] = self.element(build_node(sub))
        return tid

    def _decorator(self, d: Decorator, name: dict[str, str]) -> tuple[str, dict[str, str]]:
        a = d.args

        def port(key: str) -> str:
            return self.port(a[key], d.written.get(key))

        if d.kind in ("timeout", "delay"):
            if self.terms is not None and "seconds" in d.written:
                raise TranslationError(
                    f"{d.path}.seconds: the parameter {d.written['seconds']} is in seconds, and "
                    f"BehaviorTree.CPP's {'Timeout' if d.kind == 'timeout' else 'Delay'} takes "
                    "milliseconds (no counterpart; export --resolved writes its value)"
                )
            port_name = "msec" if d.kind == "timeout" else "delay_msec"
            tag = "Timeout" if d.kind == "timeout" else "Delay"
            return tag, {**name, port_name: _millis(a["seconds"], f"{d.path}: {d.kind}")}
        if d.kind == "retry":
            return "RetryUntilSuccessful", {**name, "num_attempts": port("attempts")}
        if d.kind == "repeat":
            return "Repeat", {**name, "num_cycles": port("times")}
        if d.kind == "inverter":
            return "Inverter", name
        raise TranslationError(f"{d.path}: {d.kind} has no BehaviorTree.CPP counterpart")


def _no_parameter_inside(leaf: Leaf, field_name: str, targets: Any) -> None:
    """A joint's target that is a parameter has no port of its own to refer from."""
    if not isinstance(targets, Mapping):
        return
    for joint, entry in targets.items():
        val = entry[1] if isinstance(entry, tuple) else entry
        if isinstance(val, Val) and val.written is not None:
            raise TranslationError(
                f"{leaf.path}.{field_name}.{joint}: a parameter inside {field_name} has no "
                "BehaviorTree.CPP counterpart (a port is one value or one blackboard "
                "entry; export --resolved writes its value)"
            )


def _composite(c: Composite, name: dict[str, str]) -> tuple[str, dict[str, str]]:
    if c.kind == "sequence":
        return ("Sequence" if c.memory else "ReactiveSequence"), name
    if c.kind == "fallback":
        return ("Fallback" if c.memory else "ReactiveFallback"), name
    if c.policy == "success_on_one":
        return "Parallel", {**name, "success_count": "1", "failure_count": "1"}
    if not c.memory:
        raise TranslationError(
            f"{c.path}: a parallel with memory: false re-ticks its finished children; "
            "BehaviorTree.CPP's Parallel never does (no counterpart)"
        )
    return "Parallel", {**name, "success_count": "-1", "failure_count": "1"}


def mission_elements(
    root: py_trees.behaviour.Behaviour,
    others: dict[str, Element],
    mission_file: str,
    *,
    live: bool = False,
    terms: Terms | None = None,
) -> Element:
    """The element tree of a mission built by ``executive.mission.build`` (its root);
    a checkpoint's ``recover`` trees go to ``others``, includes are said relative to the
    directory of ``mission_file``. ``terms``: the parameters kept as the main tree's
    ports (``Terms.of(mission)``), else every field by its value. TranslationError if
    a node has no BehaviorTree.CPP counterpart, unless ``live`` (the service's view: then
    drawn with our own models)."""
    return Maker(others, os.path.dirname(mission_file) or ".", live, terms).element(root)


# -- the node models -------------------------------------------------------------------

_PORT_TYPES = {
    FieldType.NUMBER: "double",
    FieldType.INTEGER: "int",
    FieldType.TAG: "unsigned int",
    FieldType.BOOLEAN: "bool",
}


@dataclass(frozen=True)
class Model:
    """A ``<TreeNodesModel>`` entry: element type, ID, ports (name, type, default or None,
    doc)."""

    type: str  # Action, Condition, Control, Decorator; SubTree (a tree's own ports)
    id: str
    ports: tuple[tuple[str, str, str | None, str], ...] = ()
    doc: str = ""


# our own models for what a live tree may hold that BehaviorTree.CPP has no node for
REACTIVE_PARALLEL = Model(
    "Control",
    "ReactiveParallel",
    doc=(
        "py_trees' Parallel SuccessOnAll(synchronise=False): ticks every child every tick, "
        "a finished one too; fails as soon as one fails, succeeds when all have at once. "
        "(BehaviorTree.CPP's Parallel never ticks a finished child again.)"
    ),
)
DECORATOR = Model("Decorator", "Decorator", doc="A py_trees decorator with no counterpart.")


def leaf_model(kind: LeafKind | NodeKind) -> Model:
    """A leaf kind's model: every field but ``name`` an input port."""
    ports: list[tuple[str, str, str | None, str]] = []
    for f in kind.fields:
        if f.name == "name":
            continue
        if f.type is FieldType.NODE:
            ports.append((f.name, "std::string", None, f"ID of a BehaviorTree: {f.doc}"))
            continue
        default = None if f.default is None else port_text(f.default)
        doc = f.doc + (" (required)" if f.required else "")
        ports.append((f.name, _PORT_TYPES.get(f.type, "std::string"), default, doc))
    return Model(
        "Condition" if kind.condition else "Action", leaf_id(kind.name), tuple(ports), kind.doc
    )


def leaf_models() -> list[Model]:
    """The models of every leaf kind of the mission language."""
    return [leaf_model(k) for k in LEAVES]


# -- the mission's parameters: its tree's ports ------------------------------------------

# a parameter's declaration, at the end of its port's description (which BehaviorTree.CPP
# writes and Groot2 keeps as the port's text): our type and range, and the value the tree
# was exported with (what its default names and an included tree's values were drawn
# with: an import tells a default edited in Groot2 from an edited tree by it)
DECLARATION = re.compile(
    r"\[(?P<type>[a-z_]+)(?:, min (?P<min>[^,;\]]+))?(?:, max (?P<max>[^,;\]]+))?"
    r"(?:; exported with (?P<exported>.*))?\]\s*\Z",
    re.S,
)
PARAM_TYPE_NAMES = frozenset(t.value for t in PARAM_TYPES)


@dataclass(frozen=True)
class Declaration:
    """A port's description read back: the parameter's type, range, description and the
    value the tree was exported with (its text; None if it had none)."""

    type: FieldType
    minimum: str | None
    maximum: str | None
    description: str
    exported: str | None


def declaration_text(decl: ParamDecl, exported: Any) -> str:
    """A parameter's port description: its own, then ``[type, min M, max N; exported
    with V]``."""
    block = decl.type.value
    if decl.minimum is not None:
        block += f", min {port_text(decl.minimum)}"
    if decl.maximum is not None:
        block += f", max {port_text(decl.maximum)}"
    if not isinstance(exported, Unresolved):
        block += f"; exported with {port_text(exported)}"
    return f"{decl.description} [{block}]".strip()


def read_declaration(text: str) -> Declaration | None:
    """The declaration at the end of a port's description; None if it has none."""
    for at in reversed([m.start() for m in re.finditer(r"\[", text)]):
        m = DECLARATION.match(text, at)
        if m is not None and m.group("type") in PARAM_TYPE_NAMES:
            return Declaration(
                FieldType(m.group("type")),
                m.group("min"),
                m.group("max"),
                text[:at].strip(),
                m.group("exported"),
            )
    return None


def params_model(mission: Mission) -> Model:
    """The mission's parameters as its tree's ports: a ``<SubTree ID="...">`` model, where
    BehaviorTree.CPP reads (and Groot2 shows and edits) a tree's ports and their
    defaults. TranslationError for a name BehaviorTree.CPP reserves."""
    ports: list[tuple[str, str, str | None, str]] = []
    for name, decl in mission.params.items():
        if name in RESERVED_PORTS:
            raise TranslationError(
                f"parameter {name!r}: BehaviorTree.CPP reserves the name, no port may have it "
                "(rename the parameter, or export --resolved)"
            )
        default = None if decl.required else port_text(decl.default)
        doc = declaration_text(decl, mission.args.get(name, Unresolved(name)))
        ports.append((name, _PORT_TYPES.get(decl.type, "std::string"), default, doc))
    return Model("SubTree", tree_id(mission.name), tuple(ports))


def _model_xml(m: Model) -> ET.Element:
    e = ET.Element(m.type, {"ID": m.id})
    for name, type_, default, doc in m.ports:
        attrs = {"name": name, "type": type_}
        if default is not None:
            attrs["default"] = default
        p = ET.SubElement(e, "input_port", attrs)
        p.text = doc
    if m.doc:
        meta = ET.SubElement(e, "MetadataFields")
        ET.SubElement(meta, "Metadata", {"description": m.doc})
    return e


def _tree_xml(e: Element, *, uids: bool, blocks: list[Element]) -> ET.Element:
    """Iterative: a mission may nest 32 levels, a live tree more. A ``SubTree``'s child is
    not nested: it goes to ``blocks``, a ``<BehaviorTree>`` of its own, as
    BehaviorTree.CPP writes every subtree instance."""
    out = ET.Element(e.tag, _attrs(e, uids))
    todo = [(e, out)]
    while todo:
        src, dst = todo.pop()
        if src.tag == "SubTree":
            blocks.append(src)
            continue
        for child in src.children:
            sub = ET.SubElement(dst, child.tag, _attrs(child, uids))
            todo.append((child, sub))
    return out


def _attrs(e: Element, uids: bool) -> dict[str, str]:
    attrs = dict(e.attrs)
    if uids and e.uid:
        name = attrs.pop("name", None)  # BehaviorTree.CPP's order: name, _uid, ports
        head = {"name": name} if name is not None else {}
        fullpath = attrs.pop("_fullpath", None)
        if fullpath is not None:
            head["_fullpath"] = fullpath
        attrs = {**head, "_uid": str(e.uid), **attrs}
    return attrs


def to_xml(
    trees: Trees,
    models: Sequence[Model],
    *,
    uids: bool = False,
    fullpaths: Mapping[str, str] | None = None,
) -> str:
    """The ``<root BTCPP_format="4">`` document: the main tree, the others, the models.
    ``uids``: each element's ``_uid`` (the live tree, as ``WriteTreeToXML`` writes it);
    ``fullpaths``: a ``_fullpath`` per tree ID (the main tree's is "")."""
    root = ET.Element("root", {"BTCPP_format": FORMAT, "main_tree_to_execute": trees.main_id})
    blocks: list[Element] = []
    for tid, element in [(trees.main_id, trees.main), *trees.others.items()]:
        attrs = {"ID": tid}
        if fullpaths is not None and tid in fullpaths:
            attrs["_fullpath"] = fullpaths[tid]
        if tid == trees.main_id and trees.description:
            attrs[DESCRIPTION_ATTR] = trees.description
        bt = ET.SubElement(root, "BehaviorTree", attrs)
        bt.append(_tree_xml(element, uids=uids, blocks=blocks))
    while blocks:  # each subtree instance, after the tree that holds it (BT.CPP's order)
        sub = blocks.pop(0)
        attrs = {"ID": sub.attrs["ID"], "_fullpath": sub.attrs.get("_fullpath", "")}
        bt = ET.SubElement(root, "BehaviorTree", attrs)
        for child in sub.children:
            bt.append(_tree_xml(child, uids=uids, blocks=blocks))
    nodes = ET.SubElement(root, "TreeNodesModel")
    for m in sorted(models, key=lambda m: m.id):
        nodes.append(_model_xml(m))
    ET.indent(root, space="    ")
    return ET.tostring(root, encoding="unicode") + "\n"


def kind_of(element_tag: str) -> NodeKind | None:
    """Our leaf kind for a BehaviorTree.CPP element name (None: not a leaf of ours)."""
    kind = KIND_OF_ID.get(element_tag)
    return KINDS[kind] if kind is not None else None
