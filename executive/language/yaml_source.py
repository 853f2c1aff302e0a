"""YAML text to a small tree of located values, refusing everything a mission does not need.

Mission files come from people, and a validator must survive anything they (or a
fuzzer) write. So this layer is deliberately narrower than YAML:

- one document, UTF-8, at most ``MAX_BYTES`` (1 MiB) — checked before parsing;
- no anchors, aliases or merge keys (``&a``, ``*a``, ``<<``): that rules out "billion
  laughs" bombs by construction instead of bounding their expansion;
- no tags (``!!python/object`` and friends): nothing in a file names a type to build;
- nesting at most ``MAX_YAML_DEPTH`` levels, enforced while streaming parser events, so
  ``[[[[…`` never reaches a recursive composer;
- keys are text and unique (PyYAML silently keeps the last duplicate; we say so);
- numbers are decimal (or 0x/0b): YAML 1.1's octal ``010`` = 8 and base-60 ``1:30`` = 90
  are refused rather than silently reinterpreted; dates must be quoted.

The tree is built iteratively from libyaml's event stream (the C parser when present,
which is also what makes loading fast), and every value keeps its line and column.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from executive.language.diagnostics import Diagnostic, Location

MAX_BYTES = 1 << 20
UNREADABLE = "cannot read: "  # prefix of the message for a file that could not be opened
MAX_YAML_DEPTH = 200
MAX_DIGITS = 30  # a whole number longer than this is refused: no field needs one
MAX_INT = 10**MAX_DIGITS

_Parser: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER = yaml.resolver.Resolver()
_TAG = "tag:yaml.org,2002:"

Scalar = None | bool | int | float | str


@dataclass(frozen=True, slots=True)
class YScalar:
    """A scalar; ``bad`` marks one already reported (its value is the raw text)."""

    value: Scalar
    where: Location
    quoted: bool = False
    bad: bool = False


@dataclass(frozen=True, slots=True)
class YEntry:
    key_where: Location
    value: YNode


@dataclass(frozen=True, slots=True)
class YMap:
    entries: dict[str, YEntry]
    where: Location


@dataclass(frozen=True, slots=True)
class YSeq:
    items: tuple[YNode, ...]
    where: Location


YNode = YScalar | YMap | YSeq
Parsed = tuple[YNode | None, tuple[Diagnostic, ...]]  # a file's tree (None if unusable), problems
ReadTree = Callable[[Path, str], Parsed]  # (path, display name) -> Parsed, cached by the loader


def plain(node: YNode) -> object:
    """The node as plain Python (dicts, lists, scalars), for a field whose check needs
    no more than the location of its key."""
    if isinstance(node, YMap):
        return {k: plain(e.value) for k, e in node.entries.items()}
    if isinstance(node, YSeq):
        return [plain(i) for i in node.items]
    return node.value


def describe(node: YNode) -> str:
    """How a value reads in a message: ``a mapping``, ``text 'abc'``, ``number 3``."""
    if isinstance(node, YMap):
        return "a mapping"
    if isinstance(node, YSeq):
        return "a list"
    return describe_value(node.value)


def describe_value(value: object) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int) and abs(value) >= MAX_INT:
        return f"a number of {int_digits(value)} digits"
    if isinstance(value, int | float):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text {shown!r}"
    return type(value).__name__


def int_digits(value: int) -> str:
    """How many decimal digits ``value`` has, said without converting it to text (which
    Python refuses beyond 4300 digits) or to a float (which overflows)."""
    if abs(value) < MAX_INT:
        return str(len(str(abs(value))))
    return f"about {int(value.bit_length() * 0.30103) + 1}"


class _FatalError(Exception):
    def __init__(self, where: Location, message: str) -> None:
        super().__init__(message)
        self.where = where
        self.message = message


@dataclass
class _Frame:
    where: Location
    path: str
    entries: dict[str, YEntry] | None = None  # a mapping under construction
    items: list[YNode] = field(default_factory=list)  # or a sequence
    key: tuple[str, Location] | None = None
    skip_value: bool = False  # the pending key was bad: drop its value


def read_file(path: Path, display: str, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``, refusing files over ``max_bytes`` before reading them.

    Only regular files are read: a FIFO would block the validator (and the service's
    reload) forever waiting for a writer, and a device or socket is no mission file. The
    file is opened non-blocking and checked on the open descriptor, so it cannot be
    swapped for another kind between the check and the read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise SourceError(Location(display, 1, 1), f"{UNREADABLE}{e.strerror or e}") from None
    except ValueError:  # an embedded NUL: no file has that name
        raise SourceError(
            Location(display, 1, 1), f"{UNREADABLE}the path contains a NUL character"
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise SourceError(Location(display, 1, 1), f"{UNREADABLE}{what}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise SourceError(Location(display, 1, 1), f"{UNREADABLE}{e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise SourceError(
            Location(display, 1, 1), f"file is larger than the {max_bytes // 1024} KiB limit"
        )
    return data


class SourceError(Exception):
    """A file that yields no tree at all (unreadable, not UTF-8, not YAML, a bomb...)."""

    def __init__(self, where: Location, message: str) -> None:
        super().__init__(f"{where}: {message}")
        self.diagnostic = Diagnostic(where, "", message)


def parse(data: bytes, display: str, max_bytes: int = MAX_BYTES) -> tuple[YNode, list[Diagnostic]]:
    """Parse one file's bytes; ``display`` names it in locations.

    Returns the tree and the non-fatal problems (duplicate keys, refused scalars). Raises
    ``SourceError`` when there is no usable tree.
    """
    if len(data) > max_bytes:
        raise SourceError(
            Location(display, 1, 1), f"file is larger than the {max_bytes // 1024} KiB limit"
        )
    text = _decode(data, display)
    return _Builder(display).build(text)


def parse_scalar(text: str, display: str) -> Scalar:
    """One value written as YAML on its own (a start argument from the command line), by
    the same rules as a value in a file: no tags, anchors, dates, octal or base-60, whole
    numbers of at most ``MAX_DIGITS`` digits. Raises ``SourceError`` (located in ``text``,
    which ``display`` names) for anything else, and for a list or mapping (parameters are
    single values) and a number that is not finite (nothing takes one). Empty text is the
    empty string.
    """
    if not text.strip():
        return text
    # command-line text arrives with undecodable bytes as surrogates: give them back, so
    # the decoder names the byte
    data = text.encode("utf-8", errors="surrogateescape")
    tree, problems = parse(data, display)
    if problems:
        raise SourceError(problems[0].where, problems[0].message)
    if not isinstance(tree, YScalar):
        raise SourceError(tree.where, f"expected a single value, got {describe(tree)}")
    value = tree.value
    if isinstance(value, float) and not math.isfinite(value):
        raise SourceError(tree.where, f"must be a finite number, got {text.strip()}")
    if value is None:
        raise SourceError(tree.where, f"{text.strip()!r} reads as no value; quote it if it is text")
    return value


def _decode(data: bytes, display: str) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        line = data.count(b"\n", 0, e.start) + 1
        col = len(data[start : e.start].decode("utf-8", errors="replace")) + 1
        raise SourceError(
            Location(display, line, col), f"not UTF-8 text (byte 0x{data[e.start]:02x})"
        ) from None


def _position(text: str, index: int) -> tuple[int, int]:
    index = max(0, min(index, len(text)))
    line = text.count("\n", 0, index) + 1
    col = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, col


class _Builder:
    """Turns the event stream into YNodes; non-recursive, so depth is ours to bound."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.problems: list[Diagnostic] = []

    def at(self, mark: Any) -> Location:
        return Location(self.display, int(mark.line) + 1, int(mark.column) + 1)

    def build(self, text: str) -> tuple[YNode, list[Diagnostic]]:
        loader = _Parser(text)
        try:
            root = self._events(loader)
        except _FatalError as e:
            raise SourceError(e.where, e.message) from None
        except yaml.MarkedYAMLError as e:
            mark = e.problem_mark or e.context_mark
            where = self.at(mark) if mark is not None else Location(self.display, 1, 1)
            problem = e.problem or e.context or "malformed"
            raise SourceError(where, f"not valid YAML: {problem}") from None
        except yaml.reader.ReaderError as e:
            line, col = _position(text, e.position)
            raise SourceError(
                Location(self.display, line, col), f"not valid YAML: {e.reason}"
            ) from None
        except yaml.YAMLError as e:
            raise SourceError(Location(self.display, 1, 1), f"not valid YAML: {e}") from None
        finally:
            loader.dispose()
        if root is None:
            raise SourceError(Location(self.display, 1, 1), "empty file: expected a mapping")
        return root, self.problems

    def _events(self, loader: Any) -> YNode | None:
        stack: list[_Frame] = []
        root: YNode | None = None
        documents = 0
        while loader.check_event():
            ev = loader.get_event()
            if isinstance(ev, yaml.StreamStartEvent | yaml.StreamEndEvent | yaml.DocumentEndEvent):
                continue
            if isinstance(ev, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise _FatalError(
                        self.at(ev.start_mark), "one YAML document per file (found '---')"
                    )
                continue
            where = self.at(ev.start_mark)
            if isinstance(ev, yaml.AliasEvent):
                raise _FatalError(where, "aliases (*name) are not allowed: write the value out")
            if isinstance(ev, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                frame = stack.pop()
                node: YNode = (
                    YMap(frame.entries, frame.where)
                    if frame.entries is not None
                    else YSeq(tuple(frame.items), frame.where)
                )
                root = self._attach(stack, node) or root
                continue
            if getattr(ev, "anchor", None) is not None:
                raise _FatalError(where, "anchors (&name) are not allowed: write the value out")
            tag = getattr(ev, "tag", None)
            if tag is not None:
                raise _FatalError(where, f"YAML tags ({tag}) are not allowed")
            if isinstance(ev, yaml.ScalarEvent):
                root = self._attach(stack, self._scalar(ev, where, stack)) or root
                continue
            if len(stack) >= MAX_YAML_DEPTH:
                raise _FatalError(where, f"nested deeper than {MAX_YAML_DEPTH} levels")
            path = self._child_path(stack)
            if isinstance(ev, yaml.MappingStartEvent):
                stack.append(_Frame(where, path, entries={}))
            elif isinstance(ev, yaml.SequenceStartEvent):
                stack.append(_Frame(where, path))
        return root

    @staticmethod
    def _child_path(stack: list[_Frame]) -> str:
        if not stack:
            return ""
        top = stack[-1]
        if top.entries is not None:
            if top.key is None:  # the node is a key: name the mapping
                return top.path
            key = top.key[0]
            return f"{top.path}.{key}" if top.path else key
        return f"{top.path}[{len(top.items)}]"

    def _attach(self, stack: list[_Frame], node: YNode) -> YNode | None:
        """Add ``node`` to the open collection; returns it when it is the document root."""
        if not stack:
            return node
        top = stack[-1]
        if top.entries is None:
            top.items.append(node)
            return None
        if top.key is None and not top.skip_value:  # this node is a key
            self._key(top, node)
            return None
        if top.key is not None:
            name, key_where = top.key
            top.entries[name] = YEntry(key_where, node)
        top.key = None
        top.skip_value = False
        return None

    def _key(self, top: _Frame, node: YNode) -> None:
        where = node.where
        if not isinstance(node, YScalar) or not isinstance(node.value, str) or node.bad:
            if not (isinstance(node, YScalar) and node.bad):
                self.problems.append(
                    Diagnostic(where, top.path, f"keys must be text, got {describe(node)}")
                )
            top.skip_value = True
            return
        name = node.value
        entries = top.entries if top.entries is not None else {}
        if name in entries:
            first = entries[name].key_where
            self.problems.append(
                Diagnostic(
                    where,
                    f"{top.path}.{name}" if top.path else name,
                    f"duplicate key (first at line {first.line})",
                )
            )
            top.skip_value = True
            return
        top.key = (name, where)

    def _scalar(self, ev: Any, where: Location, stack: list[_Frame]) -> YScalar:
        text: str = ev.value
        if not ev.implicit[0]:  # quoted or block scalar: text as written
            return YScalar(text, where, quoted=True)
        tag: str = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
        try:
            return YScalar(_convert(tag, text), where)
        except ValueError as e:
            self.problems.append(Diagnostic(where, self._child_path(stack), str(e)))
            return YScalar(text, where, bad=True)


def _convert(tag: str, text: str) -> Scalar:
    kind = tag.removeprefix(_TAG)
    if kind == "null":
        return None
    if kind == "bool":
        return text.lower() in ("yes", "true", "on")
    if kind == "int":
        return _int(text)
    if kind == "float":
        return _float(text)
    if kind == "timestamp":
        raise ValueError(f"{text!r} reads as a date; quote it if it is text")
    if kind == "merge":
        raise ValueError("merge keys (<<) are not allowed: write the values out")
    return text


def _int(text: str) -> int:
    digits = text.replace("_", "")
    if ":" in digits:
        raise ValueError(f"{text!r}: base-60 numbers are not allowed; quote it if it is text")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    if len(digits) > MAX_DIGITS:
        raise ValueError(f"{text[:20]!r}...: number too large")
    if digits in ("0x", "0b"):  # YAML 1.1 reads 0x_ and 0b_ as numbers; int() does not
        raise ValueError(f"{text!r} reads as a number without digits; quote it if it is text")
    if digits.startswith("0x"):
        value = int(digits[2:], 16)
    elif digits.startswith("0b"):
        value = int(digits[2:], 2)
    elif len(digits) > 1 and digits.startswith("0"):
        raise ValueError(f"{text!r}: a leading zero makes YAML 1.1 read octal; write {int(digits)}")
    else:
        value = int(digits)
    return sign * value


def _float(text: str) -> float:
    if ":" in text:
        raise ValueError(f"{text!r}: base-60 numbers are not allowed; quote it if it is text")
    low = text.replace("_", "").lower()
    if low in (".inf", "+.inf"):
        return math.inf
    if low == "-.inf":
        return -math.inf
    if low == ".nan":
        return math.nan
    return float(low)
