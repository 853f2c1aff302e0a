"""Mission files, fuzzed in-process: every generated file loads, or gives clean errors.

Clean means: no exception escapes ``check`` (and only ``MissionError`` escapes ``load``);
every problem names a file of the mission directory, a line and column inside that
file's text and, unless it is about the file as a whole, the field; ``load`` agrees with
``check``. Beyond that, with generators that know the answer:

- a generated valid set loads without errors, builds with the real behaviours, renders
  as ASCII and dot, and satisfies the JSON Schema editors use;
- one located mistake in a valid file is reported at its field path and at its line and
  column, as an independent YAML parser (PyYAML's pure-Python composer) places it;
- a YAML trap (alias, anchor, tag, octal, base-60, date) is reported where it is written;
- an include path of any text (NUL and other control characters, a FIFO, a directory,
  a long name) gives located errors, never an exception or a wait;
- a ``--param NAME=VALUE`` of any text either is a value (and then the mission checks it,
  with located errors) or is refused in one line naming the parameter: ``validate``
  exits 2 for exactly those, never with a traceback.

``tests/mission/test_properties.py`` covers raw bytes, raw text, vocabulary soup and
edits of the shipped missions; this file adds generation from the registry and the
profile, parameters, includes, generated libraries and located oracles.
"""

from __future__ import annotations

import io
import math
import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from executive.language.diagnostics import MissionError
from executive.mission import cli
from executive.mission.build import build, placeholder_builders
from executive.mission.builders import BUILDERS
from executive.mission.loader import LoadResult, MissionLoader
from executive.mission.params import StartArgError, parse_start_arg
from executive.mission.render import render
from executive.mission.schema import mission_schema
from tests.fuzz.fuzzing import LONG_EXAMPLES, TIMEOUT_S, fuzz_settings, stats
from tests.fuzz.strategies import (
    DIRECTORY,
    FIFO,
    MAIN,
    MUTATIONS,
    PROFILE,
    SHIPPED,
    YAML_TRAPS,
    FileSet,
    Trap,
    any_files,
    get,
    include_paths,
    mutated_files,
    param_items,
    valid_files,
    yaml_trap,
)
from tests.mission.jsonschema_subset import Validator

pytestmark = pytest.mark.timeout(TIMEOUT_S)

# Problems about a file as a whole carry no field path; every other problem names one.
FILE_LEVEL = (
    "not valid YAML",
    "not UTF-8",
    "empty file",
    "file is larger",
    "one YAML document",
    "aliases",
    "anchors",
    "YAML tags",
    "nested deeper than",
    "cannot read",
    "expected a mapping with",
    "a file is either",
    "missing 'tree:'",
    "missing 'poses:'",
    "missing 'gestures:'",
    # about a key of the document's own mapping, which has no field path
    "keys must be text",
    "merge keys",
)
# ...or a key of the document's own mapping that YAML reads as something else than text
ROOT_KEY = re.compile(r"reads as a date|base-60|a leading zero|number too large|without digits")
# words of Python's own exceptions: a message people cannot act on
PYTHON_SPEAKING = re.compile(
    r"invalid literal|could not convert|has no attribute|NoneType|unhashable|not subscriptable"
    r"|object is not|Traceback|Error\b"
)
# py_trees' dot export is quadratic in the nodes (0.4 s at 2,000): bigger trees get ASCII only
DOT_NODES = 300
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): ")


def _without_fixed_intents(library: Path) -> None:
    """The library with no ``intent`` on a pose that gives its joints. An intent is checked
    where its pose is reached, from the joints before it: ``lift`` sets three of the arm's
    seven, and reached from rest, not from the grasp its missions come from, its hand is
    31 mm low. A generated order reaches poses from starts no author meant; the intents are
    proved by the shipped missions' own scenarios. A solved pose keeps its intent."""
    doc = yaml.load(library.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    for entry in doc["poses"].values():
        if "joints" in entry and "solve" not in entry:
            entry.pop("intent", None)
    library.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


class Root:
    """One mission directory per test: the shipped libraries and subtrees, plus whatever
    an example writes (removed again after the example)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        for folder in ("poses", "gestures", "subtrees"):
            shutil.copytree(SHIPPED / folder, path / folder)
        for library in (path / "poses").glob("*.yaml"):
            _without_fixed_intents(library)
        os.mkfifo(path / FIFO)  # an include of it must not wait for a writer
        (path / DIRECTORY).mkdir()

    @contextmanager
    def written(self, files: FileSet) -> Iterator[Path]:
        written = []
        try:
            for name, data in files.raw.items():
                target = self.path / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                written.append(target)
            yield self.path / MAIN
        finally:
            for target in written:
                target.unlink()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Root:
    return Root(tmp_path_factory.mktemp("fuzz-missions"))


def _report(files: FileSet, result: LoadResult | None = None) -> str:
    parts = [f"edits: {files.edits}"]
    if result is not None:
        parts += [str(d) for d in result.diagnostics]
    for name, data in files.raw.items():
        shown = data[:3000].decode("utf-8", errors="replace")
        parts.append(f"--- {name} ({len(data)} bytes)\n{shown}")
    return "\n".join(parts)


def _lines(path: Path) -> tuple[int, int]:
    """(lines, longest line in characters) of a file, counting every kind of line break."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    lines = text.splitlines() or [""]
    return len(lines), max(len(line) for line in text.split("\n"))


def check_clean(root: Root, files: FileSet, main: Path) -> LoadResult:
    """Check ``main`` and hold the result to every cleanliness rule; return it."""
    result = MissionLoader(PROFILE, root.path).check(main)
    assert result.ok == (not result.errors)
    assert (result.mission is not None) == (result.ok and result.mission is not None)
    if not result.ok:
        assert result.mission is None
    sizes: dict[Path, tuple[int, int]] = {}
    for d in result.diagnostics:
        where = d.where
        file = Path(where.file).resolve()
        assert file.is_relative_to(root.path.resolve()), _report(files, result)
        assert file.is_file(), _report(files, result)
        lines, width = sizes.setdefault(file, _lines(file))
        assert 1 <= where.line <= lines + 1, _report(files, result)
        assert 1 <= where.col <= width + 2, _report(files, result)
        assert d.message and not PYTHON_SPEAKING.search(d.message), _report(files, result)
        assert str(d).startswith(f"{where.file}:{where.line}:{where.col}: ")
        assert d.path or d.message.startswith(FILE_LEVEL) or ROOT_KEY.search(d.message), _report(
            files, result
        )
    _load_agrees(root, main, result, files)
    return result


def _load_agrees(root: Root, main: Path, result: LoadResult, files: FileSet) -> None:
    """``load`` (a fresh loader) raises MissionError exactly when ``check`` says the file
    cannot be started, with the same errors, one located line each; a started mission
    builds with the real behaviours and renders."""
    try:
        mission = MissionLoader(PROFILE, root.path).load(main)
    except MissionError as e:
        startable = result.ok and result.mission is not None and result.mission.kind == "mission"
        assert not startable, _report(files, result)
        if not result.ok:
            assert e.diagnostics == result.diagnostics
        for line in str(e).splitlines():
            assert LOCATED.match(line), line
        return
    assert result.ok and result.mission is not None, _report(files, result)
    tree = build(mission, BUILDERS, clock=time.monotonic)
    assert tree.name
    shown = build(mission, placeholder_builders(), for_display=True)
    assert render(shown, "ascii")
    if sum(1 for _ in shown.iterate()) <= DOT_NODES:
        assert render(shown, "dot").startswith("digraph")


def _mark(text: str, data_path: tuple[Any, ...], at_key: bool) -> tuple[int, int]:
    """(line, col) of the node ``data_path`` leads to, by PyYAML's pure-Python composer."""
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    key = None
    for step in data_path:
        if isinstance(node, yaml.MappingNode):
            key, node = next((k, v) for k, v in node.value if k.value == str(step))
        else:
            assert isinstance(node, yaml.SequenceNode)
            key, node = None, node.value[step]
    target = key if at_key else node
    assert target is not None
    return target.start_mark.line + 1, target.start_mark.column + 1


# -- the properties ------------------------------------------------------------------------


@fuzz_settings(150)
@given(valid_files())
def test_generated_valid_missions_load_build_render_and_match_the_schema(
    root: Root, files: FileSet
) -> None:
    s = stats("missions: valid sets load")
    s.begin()
    with root.written(files) as main:
        result = check_clean(root, files, main)
        assert result.ok, _report(files, result)
        assert result.mission is not None and result.mission.kind == "mission"
        doc = yaml.load(files.raw[MAIN], Loader=yaml.SafeLoader)
        library = MissionLoader(PROFILE, root.path).library(root.path.resolve())
        schema = mission_schema(PROFILE, poses=list(library.poses), gestures=list(library.gestures))
        assert Validator(schema).errors(doc) == [], _report(files, result)
        s.outcomes["warnings" if result.diagnostics else "clean"] += 1
    s.end()


@pytest.mark.parametrize("what", MUTATIONS)
@fuzz_settings(25, LONG_EXAMPLES // 10)
@given(data=st.data())
def test_one_mistake_is_reported_at_its_field_line_and_column(
    root: Root, what: str, data: st.DataObject
) -> None:
    files = data.draw(mutated_files(what), label="files")
    s = stats("missions: one located mistake")
    s.begin()
    with root.written(files) as main:
        result = check_clean(root, files, main)
        expect = files.expect
        if expect is None:  # the drawn mutation found nothing to change
            s.outcomes["no-op"] += 1
            s.end()
            return
        assert not result.ok, _report(files, result)
        text = files.raw[MAIN].decode("utf-8")
        line, col = _mark(text, expect.data_path, expect.at_key)
        named = [d for d in result.errors if d.path == expect.path]
        assert named, f"no error names {expect.path}\n" + _report(files, result)
        placed = [d for d in named if (d.where.line, d.where.col) == (line, col)]
        assert placed, f"{expect.what}: expected {expect.path} at {line}:{col}\n" + _report(
            files, result
        )
        assert all(Path(d.where.file) == main for d in placed)
        s.outcomes[expect.what] += 1
    s.end()


@fuzz_settings(100, LONG_EXAMPLES // 5)
@given(yaml_trap())
def test_yaml_traps_are_reported_where_they_are_written(root: Root, trap: Trap) -> None:
    files, token, line, col = trap.files, trap.token, trap.line, trap.col
    s = stats("missions: YAML traps")
    s.begin()
    with root.written(files) as main:
        result = check_clean(root, files, main)
        assert not result.ok, _report(files, result)
        want = "" if YAML_TRAPS[token] == "" else trap.path
        hits = [
            d for d in result.errors if (d.where.line, d.where.col, d.path) == (line, col, want)
        ]
        assert hits, f"{token!r}: expected {want!r} at {line}:{col}\n" + _report(files, result)
        s.outcomes[token] += 1
    s.end()


@fuzz_settings(250)
@given(any_files())
def test_anything_loads_or_gives_clean_located_errors(root: Root, files: FileSet) -> None:
    s = stats("missions: anything")
    s.begin()
    with root.written(files) as main:
        result = check_clean(root, files, main)
        s.outcomes["loads" if result.ok else "errors"] += 1
    s.end()


def test_the_mark_oracle_finds_keys_and_values() -> None:
    text = "mission: m\ntree:\n  sequence:\n    - wait: {seconds: 1}\n"
    assert _mark(text, ("tree", "sequence", 0, "wait", "seconds"), True) == (4, 14)
    assert _mark(text, ("tree", "sequence", 0, "wait", "seconds"), False) == (4, 23)
    assert get({"a": [{"b": 2}]}, ("a", 0, "b")) == 2


@fuzz_settings(150, LONG_EXAMPLES // 2)
@given(include_paths())
def test_any_include_path_gives_clean_located_errors(root: Root, files: FileSet) -> None:
    s = stats("missions: include paths")
    s.begin()
    with root.written(files) as main:
        result = check_clean(root, files, main)
        s.outcomes["loads" if result.ok else "errors"] += 1
    s.end()


PARAMS_MISSION = Path(__file__).parent / "missions" / "fuzz_params.yaml"


@fuzz_settings(300)
@given(param_items())
def test_any_param_value_is_a_value_or_one_line(item: str) -> None:
    s = stats("missions: --param values")
    s.begin()
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["validate", "-q", str(PARAMS_MISSION), f"--param={item}"])  # (-x=1 too)
    try:
        name, value = parse_start_arg(item)
    except StartArgError as e:
        message = str(e)
        assert code == 2, (item, code, out.getvalue(), err.getvalue())
        assert message.startswith("--param ") and "\n" not in message, message
        assert not PYTHON_SPEAKING.search(message), message
        assert err.getvalue() == f"error: {message}\n" and out.getvalue() == ""
        s.outcomes["refused"] += 1
        s.end()
        return
    assert isinstance(value, bool | int | float | str), (item, value)
    if isinstance(value, float):
        assert math.isfinite(value)
    if isinstance(value, int):
        assert abs(value) < 10**30
    assert code in (0, 1), (item, code, err.getvalue())
    assert err.getvalue() == ""
    lines = out.getvalue().splitlines()
    assert bool(code) == any(": warning: " not in line for line in lines), lines
    for line in lines:  # the mission's own problems, located in its file
        assert LOCATED.match(line) and line.startswith(str(PARAMS_MISSION)), line
        assert not PYTHON_SPEAKING.search(line), line
    s.outcomes["mission says no" if code else "valid"] += 1
    s.end()
