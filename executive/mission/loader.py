"""Loading = validation: mission files in, a validated model or every problem out.

``MissionLoader`` holds what all loads share — the robot profile, parsed files and the
pose/gesture libraries, each read once — so validating a hundred files costs a hundred
parses, not a hundred profile and library loads. A loader is a snapshot: files are
cached for its lifetime; make a new loader to see edits (the service's "reload").

The mission directory (``root``) holds ``poses/``, ``gestures/`` and the missions
(conventionally ``subtrees/`` for included files). Given no root, a file's root is the
nearest directory, from its own upwards, that has a ``poses/`` or ``gestures/`` folder.
Includes must stay inside the root.

Nothing here raises for a bad file: ``check`` returns diagnostics. ``load`` raises
``MissionError`` (with all of them) and is what starting a mission uses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from executive.language.diagnostics import Diagnostic, Diagnostics, Location, MissionError
from executive.language.library import Library, load_library
from executive.language.model import Mission
from executive.language.values import Val, check_value, suggest
from executive.language.yaml_source import (
    MAX_BYTES,
    UNREADABLE,
    Parsed,
    SourceError,
    YMap,
    YNode,
    parse,
    read_file,
)
from executive.mission import body_checks, checkpoints, pacing, tree_checks
from executive.mission.compile import Session, compile_document
from executive.mission.params import decl_field, parse_decls
from executive.mission.registry import MAX_DEPTH, MAX_NODES
from executive.seam.body import BodySpec
from executive.seam.profile import RobotProfile, load_profile


@dataclass(frozen=True)
class LoadResult:
    """What checking one file found. ``mission`` is None when it has errors (or is a
    library file); ``ok`` means no errors (warnings allowed). ``planned``: the moves that
    need a path planned around the body (``path: plan``), said, not a problem."""

    file: str
    mission: Mission | None
    diagnostics: tuple[Diagnostic, ...]
    planned: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)


def find_root(path: Path) -> Path:
    """The mission directory of ``path``: the nearest ancestor with poses/ or gestures/."""
    start = path.resolve().parent
    for folder in (start, *start.parents):
        if (folder / "poses").is_dir() or (folder / "gestures").is_dir():
            return folder
    return start


class MissionLoader:
    """Checks and loads mission files against one robot profile."""

    def __init__(
        self,
        profile: RobotProfile,
        root: Path | str | None = None,
        *,
        max_depth: int = MAX_DEPTH,
        max_nodes: int = MAX_NODES,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.profile = profile
        self.root = Path(root).resolve() if root is not None else None
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.max_bytes = max_bytes
        self._parsed: dict[Path, Parsed] = {}
        self._digests: dict[Path, str] = {}  # sha256 of the bytes parsed, by resolved path
        self._libraries: dict[Path, Library] = {}
        self._roots: dict[Path, Path] = {}
        self._resolved: dict[Path, Path] = {}

    # -- shared, cached reads -------------------------------------------------------------

    def read_tree(self, path: Path, display: str) -> Parsed:
        """The located tree of a file (parsed once per loader) and its YAML problems."""
        cached = self._parsed.get(path)
        if cached is None:
            cached = self._parse(lambda: self._read(path, display), display)
            self._parsed[path] = cached
        return cached

    def _read(self, path: Path, display: str) -> bytes:
        data = read_file(path, display, self.max_bytes)
        self._digests[path] = hashlib.sha256(data).hexdigest()
        return data

    def sources(self, mission: Mission) -> dict[str, str]:
        """The sha256 of the bytes this loader parsed for ``mission``'s file and every file
        it includes, by their paths as the mission names them: what the mission is made of
        (a recovery after a crash is refused if any differs; the pose and gesture libraries
        are ``library_sources``). A file given as ``data`` (not read) has no digest: "" then."""
        out = {}
        for display in (mission.file, *mission.includes):
            try:
                resolved = Path(display).resolve()
            except (OSError, ValueError):
                resolved = Path(display)
            out[display] = self._digests.get(resolved, "")
        return out

    def library_sources(self, root: Path) -> dict[str, str]:
        """The sha256 of the bytes this loader read for each pose and gesture library file
        under (resolved) ``root``, by path: what a mission's poses came from (a recovery
        after a crash names a library file that differs)."""
        folders = (root / "poses", root / "gestures")
        return {str(p): d for p, d in sorted(self._digests.items()) if p.parent in folders}

    def _parse(self, data: Callable[[], bytes], display: str) -> Parsed:
        try:
            tree, problems = parse(data(), display, self.max_bytes)
        except SourceError as e:
            return None, (e.diagnostic,)
        return tree, tuple(problems)

    def library(self, root: Path) -> Library:
        """The poses and gestures under (resolved) ``root``, read and checked once per loader."""
        if root not in self._libraries:
            commands = {"joints", "hands"} & self.profile.capabilities
            if not commands and not isinstance(self.profile.body, BodySpec):
                # a robot that neither commands joints nor has a body to check poses on has
                # no use for poses or gestures: another robot's library above its missions
                # is none of its business. One with a body (the GRX: its joints reported,
                # never commanded) keeps its own library, drawn (pose preview), solved and
                # checked on that body.
                self._libraries[root] = Library({}, {}, (), frozenset(), ())
                return self._libraries[root]
            display = _display_root(root)
            self._libraries[root] = load_library(root, display, self.profile, self.read_tree)
        return self._libraries[root]

    def root_of(self, path: Path) -> Path:
        """The mission directory of a resolved ``path`` (looked up once per folder)."""
        if self.root is not None:
            return self.root
        folder = path.parent
        if folder not in self._roots:
            self._roots[folder] = find_root(path)
        return self._roots[folder]

    # -- checking -------------------------------------------------------------------------

    def check(
        self,
        path: Path | str,
        args: Mapping[str, Any] | None = None,
        *,
        data: bytes | None = None,
    ) -> LoadResult:
        """Check one file (a mission, a subtree or a library file); never raises for its
        content. ``data`` stands in for the file's bytes (tests, requests over DDS)."""
        display = str(path)
        try:
            resolved = Path(path).resolve()
        except ValueError:  # a NUL in the name (from a request, not a shell): no such file
            where = Location(display.replace("\0", "\\0"), 1, 1)
            message = f"{UNREADABLE}the path contains a NUL character"
            return LoadResult(display, None, (Diagnostic(where, "", message),))
        root = self.root_of(resolved)
        library = self.library(root)
        diags = Diagnostics()
        if self._is_library_file(resolved, root):
            diags.extend(
                d for d in library.diagnostics if d.where.file == _library_display(root, resolved)
            )
            return LoadResult(display, None, diags.items())
        diags.extend(library.diagnostics)
        if data is not None:
            parsed = self._parse(lambda: data, display)
            self._parsed[resolved] = parsed  # includes of this file see the same text
        else:
            parsed = self.read_tree(resolved, display)
        tree, problems = parsed
        diags.extend(problems)
        if tree is None:
            return LoadResult(display, None, diags.items())
        session = Session(
            self.profile,
            library,
            root,
            self.read_tree,
            diags,
            max_depth=self.max_depth,
            max_nodes=self.max_nodes,
            stack=[resolved],
            resolved_paths=self._resolved,
        )
        start_args = self._start_args(tree, args, session) if args else None
        mission = compile_document(session, tree, display, resolved, args=start_args)
        planned: list[str] = []
        if mission is not None and mission.kind == "mission":
            if (
                "control" in self.profile.capabilities
            ):  # a robot without it takes commands as they come
                tree_checks.check_control_order(mission.root, diags)
            pacing.check(mission.root, self.profile, diags)
            planned = body_checks.check(
                mission.root, mission.where, self.profile, library, mission.scene, diags
            )
            checkpoints.check(mission, self.profile, library, diags)
        if data is not None:
            del self._parsed[resolved]
        ok = not diags.has_errors
        return LoadResult(display, mission if ok else None, diags.items(), tuple(planned))

    def load(self, path: Path | str, args: Mapping[str, Any] | None = None) -> Mission:
        """A mission ready to build and run; raises ``MissionError`` listing every problem."""
        result = self.check(path, args)
        if not result.ok or result.mission is None:
            if result.ok:  # a library file
                where = Location(str(path), 1, 1)
                raise MissionError([Diagnostic(where, "", "a library file, not a mission")])
            raise MissionError(result.diagnostics)
        mission = result.mission
        if mission.kind != "mission":
            raise MissionError(
                [
                    Diagnostic(
                        mission.where, "subtree", "a subtree is included by missions, not started"
                    )
                ]
            )
        return mission

    @staticmethod
    def _is_library_file(resolved: Path, root: Path) -> bool:
        return resolved.parent in (root / "poses", root / "gestures") and resolved.suffix in (
            ".yaml",
            ".yml",
        )

    def _start_args(
        self, tree: YNode, args: Mapping[str, Any], session: Session
    ) -> dict[str, Val] | None:
        """Start-request arguments checked against the file's declarations."""
        entry = tree.entries.get("params") if isinstance(tree, YMap) else None
        scratch = Diagnostics()
        decls = parse_decls(entry.value, "params", session.names, scratch) if entry else {}
        out: dict[str, Val] = {}
        for name, value in args.items():
            decl = decls.get(name)
            if decl is None:
                session.diags.error(
                    tree.where,
                    "params",
                    f"start argument {name!r} is not a parameter{suggest(name, decls, 'parameters')}",
                )
                continue
            v, problem = check_value(value, decl_field(decl), session.names)
            if problem is not None:
                session.diags.error(decl.where, f"params.{name}", f"start argument: {problem}")
                continue
            out[name] = Val(v, Location("<start argument>", 1, 1))
        return out


def _display_root(root: Path) -> str:
    try:
        return str(root.relative_to(Path.cwd()))
    except ValueError:
        return str(root)


def _library_display(root: Path, path: Path) -> str:
    return str(Path(_display_root(root)) / path.parent.name / path.name)


def validate_files(
    paths: Iterable[Path | str],
    profile: RobotProfile | None = None,
    root: Path | str | None = None,
) -> list[LoadResult]:
    """Check many files with one loader (profile and libraries loaded once).

    This is the benchmark's unit: "100 mission files in at most 1 s".
    """
    loader = MissionLoader(profile if profile is not None else load_profile(), root)
    return [loader.check(p) for p in paths]
