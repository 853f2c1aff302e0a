"""Following ``include``: where the file is, whether it may be included, its arguments.

Include paths are relative to the including file and must resolve (symlinks followed)
inside the mission directory: a mission set is self-contained, and a request to
validate text over the network cannot make the executive read arbitrary files. A file
already on the include stack closes a cycle, reported at the include that closes it.
Arguments in ``with`` are checked against the included file's declarations in the
*including* file's scope, so ``${param}`` passes a parameter on.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from executive.language.diagnostics import Diagnostics, Location
from executive.language.model import ParamDecl
from executive.language.values import Names, Val, suggest
from executive.language.yaml_source import UNREADABLE, ReadTree, YMap, YNode, YScalar, describe
from executive.mission.fields import FieldReader
from executive.mission.params import decl_field, parse_decls


def locate(
    text: str,
    where: Location,
    path: str,
    including: Path,
    including_display: str,
    root: Path,
    cache: dict[Path, Path],
    diags: Diagnostics,
) -> tuple[Path, str] | None:
    """(resolved path, display path) of an include, or None if it may not be included."""
    bad = invalid_character(text)
    if bad is not None:
        diags.error(where, path, f"include paths cannot contain {bad}")
        return None
    if os.path.isabs(text) or text.startswith("~"):
        diags.error(where, path, "include paths are relative to the including file")
        return None
    if not text.endswith((".yaml", ".yml")):
        diags.error(where, path, "include a .yaml file")
        return None
    joined = Path(os.path.normpath(including.parent / text))
    resolved = cache.get(joined)
    if resolved is None:
        try:
            resolved = joined.resolve()
        except (OSError, RuntimeError):  # a symlink loop, a name too long: unreadable below
            resolved = joined
        cache[joined] = resolved
    if not resolved.is_relative_to(root):
        diags.error(where, path, f"include leaves the mission directory {root}")
        return None
    display = os.path.normpath(os.path.join(os.path.dirname(including_display), text))
    return resolved, display


def invalid_character(text: str) -> str | None:
    """What in ``text`` no file name may hold, said for a message; None if nothing.

    NUL ends a path for the operating system (Python refuses it with a ValueError deep in
    ``resolve``); control characters and line or paragraph separators (a newline, an
    escape, U+2028) make a path that cannot be shown in a one-line message or typed;
    format characters (a zero-width space, a right-to-left override) make one name look
    like another; a lone surrogate cannot be encoded as a file name at all. None is ever
    part of a mission set's file names, so all are refused."""
    for i, ch in enumerate(text, start=1):
        kind = _INVALID.get(unicodedata.category(ch))
        if kind is not None:
            name = "NUL" if ch == "\0" else f"U+{ord(ch):04X}"
            return f"{kind} ({name} at character {i})"
    return None


_INVALID = {  # Unicode general category -> how a message names it
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Cs": "a surrogate",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


def cycle(
    stack: list[Path], resolved: Path, where: Location, path: str, diags: Diagnostics
) -> bool:
    """Report and return True if including ``resolved`` closes a cycle."""
    if resolved not in stack:
        return False
    chain = [*stack[stack.index(resolved) :], resolved]
    diags.error(where, path, "include cycle: " + " -> ".join(p.name for p in chain))
    return True


def read(
    read_tree: ReadTree, resolved: Path, display: str, fval: Val, path: str, diags: Diagnostics
) -> YNode | None:
    """The included file's tree; an unreadable file is reported at the include."""
    tree, problems = read_tree(resolved, display)
    if tree is None and problems and problems[0].message.startswith(UNREADABLE):
        reason = problems[0].message.removeprefix(UNREADABLE)
        diags.error(fval.where, path, f"cannot include {fval.value}: {reason}")
        return None
    diags.extend(problems)
    if tree is None:  # the file's own problem says why; point at the include too
        diags.error(fval.where, path, f"cannot include {fval.value}: see {display}")
    return tree


def peek_decls(tree: YNode, names: Names) -> Mapping[str, ParamDecl] | None:
    """The parameter declarations of an included file, None if they have errors (those are
    reported when the file itself is compiled, so here they go to a throwaway collector)."""
    if not isinstance(tree, YMap):
        return None
    entry = tree.entries.get("params")
    if entry is None:
        return {}
    scratch = Diagnostics()
    decls = parse_decls(entry.value, "params", names, scratch)
    return None if scratch.has_errors else decls


def arguments(
    raw: tuple[YNode, Location] | None,
    decls: Mapping[str, ParamDecl] | None,
    where: Location,
    kpath: str,
    reader: FieldReader,
    diags: Diagnostics,
) -> dict[str, Val] | None:
    """The ``with`` values, each checked against its declaration; every required one given."""
    entries: dict[str, tuple[Location, YNode]] = {}
    if raw is not None:
        node, _ = raw
        if isinstance(node, YMap):
            entries = {k: (e.key_where, e.value) for k, e in node.entries.items()}
        elif not (isinstance(node, YScalar) and node.value is None):
            diags.error(
                node.where,
                f"{kpath}.with",
                f"expected a mapping of parameter values, got {describe(node)}",
            )
            return None
    if decls is None:
        return None
    ok = True
    args: dict[str, Val] = {}
    for name, (key_where, node) in entries.items():
        apath = f"{kpath}.with.{name}"
        decl = decls.get(name)
        if decl is None:
            hint = suggest(name, decls, "parameters")
            diags.error(key_where, apath, f"the included file has no parameter {name!r}{hint}")
            ok = False
            continue
        v = reader.value(node, decl_field(decl), apath)
        if v is None:
            ok = False
        else:
            args[name] = v
    for name, decl in decls.items():
        if decl.required and name not in entries:
            diags.error(
                where,
                kpath,
                f"missing with.{name}: the included file requires it ({decl.type.value})",
            )
            ok = False
    return args if ok else None
