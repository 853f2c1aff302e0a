"""What the newcomer's docs point at is there: every repository path they name, every
``python -m`` module they tell you to run, and every relative link.

A path is a word that starts at one of the repository's top folders (``executive/``,
``bench/``, ``tests/``...); one written as a pattern (``executive/robots/<name>/``,
``missions/*.yaml``) is checked up to the pattern, a mission may be named without its
``.yaml``, and what a command the docs show writes is named in ``WRITTEN``. The history in
CHANGELOG.md names files as they were, and is not checked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/architecture.md", "docs/operating.md", "docs/benchmarks.md")
TOPS = ("executive", "behaviours", "bench", "tests", "docs", "deploy", "idl", "missions", "tools")

PATH = re.compile(rf"(?<![\w./<-])((?:{'|'.join(TOPS)})/[\w./-]*)")
MODULE = re.compile(r"python -m ([\w.]+)")
# files the docs' commands write, not the repository's
WRITTEN = {"bench/results/latest.json", "missions/deliver_drink_v2.yaml"}
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def named_paths(text: str) -> set[str]:
    """The paths a text names, each cut before a pattern (``<``, ``*``, ``{``) and without
    the full stop or comma of the sentence it ends."""
    found = set()
    for match in PATH.finditer(text):
        path = match.group(1)
        if text[match.end() : match.end() + 1] in ("<", "*", "{"):
            path = path.rpartition("/")[0] + "/"
        found.add(path.rstrip(".,"))
    return found


def module_file(name: str) -> Path | None:
    """The file ``python -m name`` runs from this checkout, or None."""
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__main__.py"):
        if candidate.is_file():
            return candidate
    return None


@pytest.mark.parametrize("doc", DOCS)
def test_every_path_a_doc_names_exists(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    paths = named_paths(text)
    missing = sorted(
        p for p in paths - WRITTEN if not (ROOT / p).exists() and not (ROOT / f"{p}.yaml").is_file()
    )
    assert not missing, f"{doc} names paths that are not in the repository: {missing}"
    assert len(paths) >= 3, f"{doc}: the walk found {sorted(paths)}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_module_a_doc_runs_exists(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    missing = sorted({m for m in MODULE.findall(text) if m.startswith(TOPS) and not module_file(m)})
    assert not missing, f"{doc} runs modules that are not in the repository: {missing}"


@pytest.mark.parametrize("doc", (*DOCS, "CHANGELOG.md"))
def test_every_relative_link_of_a_doc_resolves(doc: str) -> None:
    source = ROOT / doc
    links = [t for t in LINK.findall(source.read_text(encoding="utf-8")) if "://" not in t]
    broken = sorted(t for t in links if not (source.parent / t).exists())
    assert not broken, f"{doc} links to what is not there: {broken}"


def test_the_architecture_names_every_rung_of_the_ladder() -> None:
    """docs/architecture.md says the ladder of tests/test_ladder.py in words: every rung, in
    its order."""
    from tests.test_ladder import LADDER

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [
        line.split("|")[1].strip().strip("`")
        for line in text.splitlines()
        if line.startswith("| `")
    ]
    rungs = [row for row in rows if row in LADDER]
    assert rungs == list(LADDER), rungs


def test_the_paths_are_found() -> None:
    """The walk itself: a pattern is cut, a sentence's full stop dropped, a word that only
    contains a top folder's name is no path."""
    text = (
        "see `executive/robots/<name>/robot.py`, missions/*.yaml and tests/test_docs.py. xbench/a"
    )
    assert named_paths(text) == {"executive/robots/", "missions/", "tests/test_docs.py"}
