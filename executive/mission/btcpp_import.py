"""BehaviorTree.CPP XML (as Groot2 saves it) back into a mission file.

The inverse of ``executive.mission.btcpp``'s export, node by node, by the same table; an
element, a port or an attribute that has no meaning in our language is an error naming
its XML line, never guessed at. The main tree's ports (its ``<SubTree>`` model) are the
mission's parameters again, declared by the description each port ends with (``[number,
min 5.0, max 100.0; exported with 20.0]``) and defaulting to the port's ``default``; a
port reference ``{p}`` is ``${p}`` again. The YAML written is then loaded as the service
would (``MissionLoader.check``) and exported again, with the values the XML was exported
with: a mission whose export is not the XML it came from (an included tree edited in
place, a node Groot2 added that we translate differently) is refused at the first
element that differs, so an import never hands back a tree other than the one in the
file, and a default edited in Groot2 is a new default, not an edit of the tree.

The XML is read with expat, with no DTD, no entities and at most ``MAX_BYTES``: nothing
in the file can make the reader fetch, expand or nest without bound.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.parsers import expat

import yaml

from executive.language.kinds import PARAM_TYPES, Field, FieldType
from executive.language.model import Mission
from executive.language.yaml_source import MAX_BYTES
from executive.mission import btcpp
from executive.mission.btcpp_export import export_trees
from executive.mission.loader import MissionLoader
from executive.mission.params import NAME_RE, decl_field
from executive.mission.registry import KINDS, MAX_DEPTH

# attributes BehaviorTree.CPP writes that say nothing of what a node does
IGNORED = frozenset({"_uid", "_fullpath", "_autoremap"})
XML_DEPTH = 4 * MAX_DEPTH + 8  # a mission nests at most MAX_DEPTH nodes; its XML a few more


class ImportError_(ValueError):  # noqa: N818 - ImportError is Python's own
    """XML that cannot become a mission; the message names the file and line."""


@dataclass
class XNode:
    """An XML element with the line it starts on."""

    tag: str
    attrs: dict[str, str]
    line: int
    children: list[XNode] = field(default_factory=list)
    text: str = ""  # its character data (a port's description)


def parse_xml(data: bytes, name: str) -> XNode:
    """The document's root element; ImportError_ naming the line for anything unsafe
    or malformed."""
    if len(data) > MAX_BYTES:
        raise ImportError_(f"{name}: larger than {MAX_BYTES} bytes")
    parser = expat.ParserCreate()
    stack: list[XNode] = []
    top: list[XNode] = []

    def refuse(*_: Any) -> Any:
        raise ImportError_(f"{name}:{parser.CurrentLineNumber}: DTDs and entities are refused")

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(stack) >= XML_DEPTH:
            raise ImportError_(f"{name}:{parser.CurrentLineNumber}: nested too deeply")
        node = XNode(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else top).append(node)
        stack.append(node)

    def end(_tag: str) -> None:
        stack.pop()

    def text(data: str) -> None:
        if stack:
            stack[-1].text += data

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise ImportError_(
            f"{name}:{e.lineno}: not well-formed XML: {expat.errors.messages[e.code]}"
        ) from None
    if not top:
        raise ImportError_(f"{name}: no root element")
    return top[0]


@dataclass
class _Out:
    """A translated node: its YAML and the XML line of every YAML path below it."""

    yaml: dict[str, Any]
    name: str


class _Reader:
    def __init__(
        self,
        name: str,
        trees: Mapping[str, XNode],
        loader: MissionLoader,
        output: Path,
        ports: Mapping[str, Port],
        main_id: str,
    ) -> None:
        self.name = name
        self.output = output
        root = loader.root_of(output.resolve())
        self.trees = trees
        self.loader = loader
        self.root = root
        self.ports = ports  # the main tree's: the mission's parameters
        self.main_id = main_id
        self.lines: dict[str, int] = {p.path: p.line for p in ports.values()}  # YAML path -> line
        self.names: dict[str, str] = {}  # YAML path -> the XML's name
        self.used_trees: set[str] = set()

    def fail(self, x: XNode, message: str) -> ImportError_:
        return ImportError_(f"{self.name}:{x.line}: <{x.tag}>: {message}")

    def value(self, x: XNode, f: Field, what: str, text: str) -> Any:
        """A port's text as the YAML value of field ``f``: a reference to one of the main
        tree's ports ``{p}`` is the parameter ``${p}``; text is as a mission file writes
        it (``${p}`` a parameter, ``$${`` a literal ``${``)."""
        pointer = btcpp.POINTER.match(text)
        if pointer is not None:
            ref = pointer.group(1).strip()
            if ref not in self.ports:
                ports = ", ".join(self.ports) or "none"
                raise self.fail(
                    x,
                    f"{what}: {{{ref}}} is no port of the tree {self.main_id!r} (its ports: "
                    f"{ports}); a mission's fields take values or its parameters",
                )
            return "${" + ref + "}"
        try:
            return btcpp.port_value(f, text)
        except ValueError as e:
            raise self.fail(x, f"{what}: {e}") from None

    def node(self, x: XNode, path: str, depth: int = 0) -> dict[str, Any]:
        if depth > XML_DEPTH:
            raise self.fail(x, "nested too deeply")
        if x.tag in ("Action", "Condition", "Control", "Decorator") and "ID" in x.attrs:
            x = XNode(
                x.attrs["ID"], {k: v for k, v in x.attrs.items() if k != "ID"}, x.line, x.children
            )
        extra = {k for k in x.attrs if k.startswith("_") and k not in IGNORED}
        include = x.attrs.get(btcpp.INCLUDE_ATTR)
        unknown = {
            k for k in extra if k != btcpp.INCLUDE_ATTR and not k.startswith(btcpp.WITH_PREFIX)
        }
        if unknown:
            raise self.fail(
                x,
                f"attribute {sorted(unknown)[0]!r} has no counterpart in a mission "
                "(pre- and post-conditions are not part of the language)",
            )
        if include is not None:
            return self._include(x, path, include, depth)
        self.lines[path] = x.line
        name = x.attrs.get("name")
        key, body = self._kind(x, path, depth)
        if name is not None:
            self.names[f"{path}.{key}"] = name
            if key == "checkpoint":
                body = {"name": name, **body}
        return {key: body}

    def _kind(self, x: XNode, path: str, depth: int) -> tuple[str, dict[str, Any]]:
        ports = {k: v for k, v in x.attrs.items() if not k.startswith("_") and k != "name"}
        kind = btcpp.kind_of(x.tag)
        if kind is not None:
            return kind.name, self._leaf(x, kind.name, ports, path, depth)
        if x.tag in ("Sequence", "ReactiveSequence", "Fallback", "ReactiveFallback", "Parallel"):
            return self._composite(x, ports, path, depth)
        if x.tag in btcpp.BUILTIN_PORTS:
            return self._decorator(x, ports, path, depth)
        known = sorted([*btcpp.LEAF_IDS.values(), *btcpp.BUILTIN_PORTS])
        raise self.fail(x, f"not a node of the mission language (known: {', '.join(known)})")

    def _check_ports(self, x: XNode, ports: Mapping[str, str], allowed: tuple[str, ...]) -> None:
        for p in ports:
            if p not in allowed:
                have = ", ".join(allowed) or "none"
                raise self.fail(x, f"no port {p!r} (its ports: {have})")

    def _children(self, x: XNode, path: str, depth: int) -> list[Any]:
        if not x.children:
            raise self.fail(x, "has no child node")
        return [self.node(c, f"{path}[{i}]", depth + 1) for i, c in enumerate(x.children)]

    def _child(self, x: XNode, path: str, depth: int) -> Any:
        if len(x.children) != 1:
            raise self.fail(x, f"takes exactly one child node, has {len(x.children)}")
        return self.node(x.children[0], path, depth + 1)

    def _composite(
        self, x: XNode, ports: Mapping[str, str], path: str, depth: int
    ) -> tuple[str, dict[str, Any]]:
        tag = x.tag
        if tag == "ReactiveSequence" and len(x.children) == 2 and self._is_condition(x.children[0]):
            cpath = f"{path}.guard"
            return "guard", {
                "condition": self.node(x.children[0], f"{cpath}.condition", depth + 1),
                "child": self.node(x.children[1], f"{cpath}.child", depth + 1),
            }
        if tag == "Parallel":
            self._check_ports(x, ports, btcpp.BUILTIN_PORTS["Parallel"])
            kind, body = "parallel", self._parallel(x, ports)
        else:
            self._check_ports(x, ports, ())
            kind = "sequence" if "Sequence" in tag else "fallback"
            body = {} if not tag.startswith("Reactive") else {"memory": False}
        body["children"] = self._children(x, f"{path}.{kind}.children", depth)
        return kind, body

    def _parallel(self, x: XNode, ports: Mapping[str, str]) -> dict[str, Any]:
        try:
            success = int(ports.get("success_count", "-1"))
            failure = int(ports.get("failure_count", "1"))
        except ValueError:
            raise self.fail(x, "success_count and failure_count must be whole numbers") from None
        n = len(x.children)
        if failure not in (1, -n):  # -n: BehaviorTree.CPP's "all but" counting
            raise self.fail(
                x, f"failure_count {failure}: ours fails as soon as one child fails (1)"
            )
        if success in (-1, n):
            return {}
        if success == 1:
            return {"policy": "success_on_one"}
        raise self.fail(
            x, f"success_count {success} of {n}: ours succeeds on one child or on all (1 or -1)"
        )

    def _decorator(
        self, x: XNode, ports: Mapping[str, str], path: str, depth: int
    ) -> tuple[str, dict[str, Any]]:
        table = {
            "RetryUntilSuccessful": ("retry", "num_attempts", "attempts"),
            "Repeat": ("repeat", "num_cycles", "times"),
            "Timeout": ("timeout", "msec", "seconds"),
            "Delay": ("delay", "delay_msec", "seconds"),
            "Inverter": ("inverter", "", ""),
        }
        kind, port, ours = table[x.tag]
        self._check_ports(x, ports, btcpp.BUILTIN_PORTS[x.tag])
        body: dict[str, Any] = {}
        if port:
            if port not in ports:
                raise self.fail(x, f"needs its port {port!r}")
            if btcpp.POINTER.match(ports[port]) and port.endswith("msec"):
                raise self.fail(
                    x,
                    f"{port} {ports[port]!r}: a parameter here would be milliseconds, and a "
                    "mission's are seconds (no counterpart: give the value)",
                )
            if btcpp.POINTER.match(ports[port]):
                body[ours] = self.value(x, _WHOLE, port, ports[port])
            else:
                try:
                    value = int(ports[port])
                except ValueError:
                    raise self.fail(x, f"{port} {ports[port]!r}: not a whole number") from None
                body[ours] = value / 1000 if port.endswith("msec") else value
        body["child"] = self._child(x, f"{path}.{kind}.child", depth)
        return kind, body

    def _leaf(
        self, x: XNode, kind: str, ports: Mapping[str, str], path: str, depth: int
    ) -> dict[str, Any]:
        spec = KINDS[kind]
        allowed = tuple(f.name for f in spec.fields if f.name != "name")
        self._check_ports(x, ports, allowed)
        if x.children:
            raise self.fail(x, "a leaf has no child nodes")
        body: dict[str, Any] = {}
        for pname, text in ports.items():
            f = spec.field(pname)
            assert f is not None
            if f.type is FieldType.NODE:
                tree = self.trees.get(text)
                if tree is None:
                    raise self.fail(x, f"{pname}: no <BehaviorTree ID={text!r}> in the file")
                if not tree.children:
                    raise self.fail(tree, "empty")
                self.used_trees.add(text)
                body[pname] = self.node(tree.children[0], f"{path}.{kind}.{pname}", depth + 1)
                continue
            body[pname] = self.value(x, f, f"port {pname}", text)
        return body

    def _is_condition(self, x: XNode) -> bool:
        kind = btcpp.kind_of(
            x.attrs.get("ID", x.tag) if x.tag in ("Condition", "Action") else x.tag
        )
        if kind is not None:
            return kind.condition
        if x.tag in ("Inverter", "Sequence", "Fallback", "ReactiveSequence", "ReactiveFallback"):
            return bool(x.children) and all(self._is_condition(c) for c in x.children)
        return False

    def _include(self, x: XNode, path: str, file: str, depth: int) -> dict[str, Any]:
        """An include's tree, inline in the XML: the include itself (its file, name and
        parameter values); the tree must be what the file gives (checked with the rest)."""
        self.lines[path] = x.line
        target = (self.output.parent / file).resolve()
        if not target.is_relative_to(self.root.resolve()) or not target.is_file():
            raise self.fail(
                x, f"_include {file!r}: no such file in the mission directory {self.root}"
            )
        result = self.loader.check(target)
        decls = result.mission.params if result.mission is not None else {}
        values: dict[str, Any] = {}
        for k, text in x.attrs.items():
            if not k.startswith(btcpp.WITH_PREFIX):
                continue
            pname = k[len(btcpp.WITH_PREFIX) :]
            decl = decls.get(pname)
            if decl is None:
                raise self.fail(x, f"{k}: {file} has no parameter {pname!r}")
            values[pname] = self.value(x, decl_field(decl), k, text)
        body: dict[str, Any] = {"file": file}
        if "name" in x.attrs:
            self.names[f"{path}.include"] = x.attrs["name"]
        if values:
            body["with"] = values
        return {"include": body}


def _tree_roots(doc: XNode, name: str) -> tuple[XNode, dict[str, XNode]]:
    if doc.tag != "root":
        raise ImportError_(f"{name}:{doc.line}: the document's element is <{doc.tag}>, not <root>")
    fmt = doc.attrs.get("BTCPP_format")
    if fmt != btcpp.FORMAT:
        raise ImportError_(f"{name}:{doc.line}: BTCPP_format {fmt!r}: only version 4 is read")
    trees: dict[str, XNode] = {}
    for x in doc.children:
        if x.tag == "BehaviorTree":
            tid = x.attrs.get("ID", "")
            if tid in trees:
                raise ImportError_(f"{name}:{x.line}: a second <BehaviorTree ID={tid!r}>")
            if len(x.children) != 1:
                raise ImportError_(f"{name}:{x.line}: a <BehaviorTree> holds exactly one node")
            trees[tid] = x
        elif x.tag not in ("TreeNodesModel",):
            raise ImportError_(
                f"{name}:{x.line}: <{x.tag}>: not read (a mission is one file: no <include>)"
            )
    if not trees:
        raise ImportError_(f"{name}: no <BehaviorTree>")
    main = doc.attrs.get("main_tree_to_execute") or next(iter(trees))
    if main not in trees:
        raise ImportError_(f"{name}:{doc.line}: main_tree_to_execute {main!r}: no such tree")
    return trees[main], trees


def _dump(doc: Mapping[str, Any]) -> str:
    class Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return yaml.dump(doc, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100)


def _with_names(node: Any, path: str, names: Mapping[str, str], defaults: Mapping[str, str]) -> Any:
    """``node`` (YAML) with ``name:`` on every node whose XML name is not its default."""
    if isinstance(node, list):
        return [_with_names(n, f"{path}[{i}]", names, defaults) for i, n in enumerate(node)]
    if not isinstance(node, dict) or len(node) != 1:
        return node
    ((key, body),) = node.items()
    here = f"{path}.{key}"
    if key not in KINDS or not isinstance(body, dict):
        return node
    out: dict[str, Any] = {}
    name = names.get(here)
    if name is not None and name != defaults.get(here) and "name" not in body:
        out["name"] = name
    for k, v in body.items():
        f = KINDS[key].field(k)
        nodes = f is not None and f.type in (FieldType.NODE, FieldType.NODES)
        out[k] = _with_names(v, f"{here}.{k}", names, defaults) if nodes else v
    return {key: out}


def _default_names(mission: Mission) -> dict[str, str]:
    """Each node's name as the export writes it, by its YAML path (as the loader reports
    paths): the nodes of ``mission``, loaded without names, all have their default ones.
    An included tree's nodes are its file's: not looked into."""
    trees = export_trees(mission)
    out: dict[str, str] = {}
    for root in (trees.main, *trees.others.values()):
        todo = [root]
        while todo:
            e = todo.pop()
            includes = getattr(e.node, "includes", ())
            source = includes[0] if includes else getattr(e.node, "source", None)
            if source is not None:
                out[source.path] = e.attrs.get("name", "")
            if not includes:
                todo.extend(e.children)
    return out


@dataclass(frozen=True)
class Port:
    """A port of the main tree: the parameter it declares (as YAML), the value the tree was
    exported with (None: not said), and its line."""

    name: str
    decl: dict[str, Any]
    exported: Any
    line: int

    @property
    def path(self) -> str:
        return f"params.{self.name}"


# a port's C++ type, for a port that says no type of ours (added in Groot2)
_CPP_TYPES = {
    "double": FieldType.NUMBER,
    "int": FieldType.INTEGER,
    "bool": FieldType.BOOLEAN,
    "std::string": FieldType.STRING,
}
_WHOLE = Field("count", FieldType.INTEGER, "")  # a decorator's count


def _ports(doc: XNode, main_id: str, xml_name: str) -> dict[str, Port]:
    """The main tree's ports, from its ``<SubTree ID=...>`` model: the parameters."""
    out: dict[str, Port] = {}
    for models in (x for x in doc.children if x.tag == "TreeNodesModel"):
        for model in models.children:
            if model.tag != "SubTree" or model.attrs.get("ID") != main_id:
                continue
            for x in model.children:
                where = f"{xml_name}:{x.line}: <{x.tag}>"
                name = x.attrs.get("name", "")
                if x.tag != "input_port":
                    raise ImportError_(
                        f"{where}: the tree's ports are the mission's parameters, which are "
                        "inputs (input_port)"
                    )
                if not NAME_RE.match(name):
                    raise ImportError_(
                        f"{where}: port {name!r}: a parameter's name is letters, digits and _, "
                        "not starting with a digit"
                    )
                if name in out:
                    raise ImportError_(f"{where}: a second port {name!r}")
                out[name] = _port(x, name, where)
    return out


def _port(x: XNode, name: str, where: str) -> Port:
    decl = btcpp.read_declaration(x.text)
    if decl is None:
        ptype = _CPP_TYPES.get(x.attrs.get("type", ""))
        if ptype is None:
            types = ", ".join(t.value for t in PARAM_TYPES)
            raise ImportError_(
                f"{where}: port {name!r} says no parameter type: end its description with "
                f"[TYPE] or [TYPE, min M, max N] (TYPE one of {types})"
            )
        decl = btcpp.Declaration(ptype, None, None, x.text.strip(), None)
    f = Field(name, decl.type, "")  # its range: the loader checks it, naming this line

    def read(what: str, text: str) -> Any:
        try:
            return btcpp.port_value(f, text)
        except ValueError as e:
            raise ImportError_(f"{where}: port {name!r}: {what}: {e}") from None

    out: dict[str, Any] = {"type": decl.type.value}
    default = x.attrs.get("default", decl.exported)  # Groot2 drops an empty default
    if default is not None:
        out["default"] = read("default", default)
    integer = decl.type is FieldType.INTEGER
    for key, text in (("min", decl.minimum), ("max", decl.maximum)):
        if text is not None:
            try:
                out[key] = int(text) if integer else float(text)
            except ValueError:
                raise ImportError_(
                    f"{where}: port {name!r}: {key} {text!r}: not a number"
                ) from None
    if decl.description:
        out["description"] = decl.description
    exported = read("exported with", decl.exported) if decl.exported is not None else None
    return Port(name, out, exported, x.line)


def import_xml(
    data: bytes, xml_name: str, output: Path, loader: MissionLoader
) -> tuple[str, Mission]:
    """The mission YAML for the XML ``data`` (to be written at ``output``) and the mission
    it loads as; ImportError_ naming the XML line of what cannot be translated, or of the
    node the loader refuses."""
    doc = parse_xml(data, xml_name)
    main, trees = _tree_roots(doc, xml_name)
    main_id = main.attrs.get("ID", "mission")
    ports = _ports(doc, main_id, xml_name)
    reader = _Reader(xml_name, trees, loader, output, ports, main_id)
    tree = reader.node(main.children[0], "tree")
    mission: dict[str, Any] = {"mission": main_id}
    if btcpp.DESCRIPTION_ATTR in main.attrs:
        mission["description"] = main.attrs[btcpp.DESCRIPTION_ATTR]
    if ports:
        mission["params"] = {name: port.decl for name, port in ports.items()}
    # the values the XML's tree was drawn with (its default names, an included tree's
    # values): a default edited since is the mission's new default, not an edited tree
    drawn_with = {name: p.exported for name, p in ports.items() if p.exported is not None}
    # first without names: the names the export gives; then a name where the XML's differs
    bare = _dump({**mission, "tree": tree})
    first = _load(loader, output, bare, reader, xml_name, drawn_with)
    text = _dump(
        {**mission, "tree": _with_names(tree, "tree", reader.names, _default_names(first))}
    )
    loaded = _load(loader, output, text, reader, xml_name)
    drawn = _load(loader, output, text, reader, xml_name, drawn_with) if drawn_with else loaded
    _same_tree(doc, drawn, xml_name)
    return text, loaded


def _load(
    loader: MissionLoader,
    output: Path,
    text: str,
    reader: _Reader,
    xml_name: str,
    args: Mapping[str, Any] | None = None,
) -> Mission:
    """The mission ``text`` loads as (with ``args``: as a start with them would, or as
    declared where they no longer fit the declarations)."""
    result = loader.check(output, args or None, data=text.encode())
    if not result.ok and args:
        result = loader.check(output, None, data=text.encode())
    if result.ok and result.mission is not None:
        return result.mission
    problems = []
    for d in result.errors:
        line = max(
            ((len(p), ln) for p, ln in reader.lines.items() if d.path.startswith(p)),
            default=(0, 0),
        )[1]
        problems.append(f"{xml_name}:{line or '?'}: {d.path}: {d.message}")
    raise ImportError_("\n".join(problems) or f"{xml_name}: not a mission")


Canonical = tuple[int, str, tuple[tuple[str, str], ...], int]


def _canonical(x: XNode) -> Iterator[Canonical]:
    todo = [x]
    while todo:
        e = todo.pop()
        attrs = tuple(sorted((k, v) for k, v in e.attrs.items() if k not in IGNORED))
        yield e.line, e.tag, attrs, len(e.children)
        todo.extend(reversed(e.children))


def _same_tree(doc: XNode, mission: Mission, xml_name: str) -> None:
    """Refuse an import whose mission does not export back to the XML's trees."""
    again = parse_xml(btcpp.to_xml(export_trees(mission), []).encode(), "export")
    ours = {x.attrs.get("ID"): x for x in again.children if x.tag == "BehaviorTree"}
    theirs = [x for x in doc.children if x.tag == "BehaviorTree"]
    for tree in theirs:
        mine = ours.get(tree.attrs.get("ID"))
        if mine is None:
            continue  # a tree nothing refers to: not part of the mission
        pairs = zip(_canonical(tree.children[0]), _canonical(mine.children[0]), strict=False)
        for (line, tag, attrs, count), (_, tag_b, given, count_b) in pairs:
            named = any(k == "name" for k, _ in attrs)  # no name: the one the mission gives
            attrs_b = given if named else tuple((k, v) for k, v in given if k != "name")
            if (tag, attrs, count) != (tag_b, attrs_b, count_b):
                raise ImportError_(
                    f"{xml_name}:{line}: <{tag}> does not come back as it is in the file "
                    f"(the mission gives <{tag_b}> {dict(attrs_b)}, {count_b} children): an "
                    "included tree edited in place (edit its file), or a node our language "
                    "states otherwise"
                )
