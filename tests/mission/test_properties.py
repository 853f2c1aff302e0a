"""Properties: whatever a file holds, loading it yields a mission or clean errors.

"Clean" means: no exception escapes, every problem has a location inside the file (line
and column >= 1) and a message, and a file that loads without errors builds into a
py_trees tree. Inputs come from three directions: raw bytes and text, generated YAML
built from the language's own vocabulary (so many inputs get deep into validation), and
random edits of the shipped missions (so most inputs are *almost* right).
"""

from __future__ import annotations

import copy
import shutil
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from executive.mission.build import build, placeholder_builders
from executive.mission.loader import LoadResult, MissionLoader
from executive.mission.registry import BUTTONS, KINDS
from tests.mission.conftest import MISSIONS, PROFILE

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
SHIPPED = sorted(MISSIONS.glob("*.yaml")) + sorted((MISSIONS / "subtrees").glob("*.yaml"))
TEXTS = [p.read_text(encoding="utf-8") for p in SHIPPED]
_CLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
DOCS = [yaml.load(t, Loader=_CLoader) for t in TEXTS]


@pytest.fixture(scope="module")
def loader(tmp_path_factory: pytest.TempPathFactory) -> MissionLoader:
    root = tmp_path_factory.mktemp("missions")
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(MISSIONS / folder, root / folder)
    return MissionLoader(PROFILE, root)


def _check(loader: MissionLoader, data: bytes) -> LoadResult:
    assert loader.root is not None
    path = loader.root / "fuzz.yaml"
    result = loader.check(path, data=data)
    _assert_clean(result, str(path))
    return result


def _assert_clean(result: LoadResult, display: str) -> None:
    if result.ok:
        assert result.mission is not None
        tree = build(result.mission, placeholder_builders(), for_display=True)
        assert tree.name
        return
    assert result.mission is None
    assert result.errors
    for d in result.diagnostics:
        assert d.where.line >= 1 and d.where.col >= 1
        assert d.message
        assert str(d).startswith(d.where.file)


@SETTINGS
@given(st.binary(max_size=2000))
def test_any_bytes(loader: MissionLoader, data: bytes) -> None:
    _check(loader, data)


@SETTINGS
@given(st.text(max_size=2000))
def test_any_text(loader: MissionLoader, text: str) -> None:
    _check(loader, text.encode("utf-8", errors="surrogatepass"))


# -- generated YAML from the language's vocabulary -----------------------------------------

WORDS = sorted(
    {*KINDS, *(f.name for k in KINDS.values() for f in k.fields), *PROFILE.joints, *PROFILE.fsm}
    | {"mission", "subtree", "tree", "params", "type", "default", "home", "right_open", "x"}
    | set(BUTTONS)
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(WORDS),
    st.sampled_from(
        ["${x}", "${tag}", "$${x}", "${", "subtrees/fetch_drink.yaml", "fuzz.yaml", ""]
    ),
    st.text(max_size=12),
)
KEYS = st.one_of(st.sampled_from(WORDS), st.text(max_size=8))


def _nodes(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(KEYS, children, max_size=4),
        st.builds(lambda k, v: {k: v}, st.sampled_from(sorted(KINDS)), children),
    )


DATA = st.recursive(SCALARS, _nodes, max_leaves=40)
DOCUMENT = st.fixed_dictionaries(
    {"mission": st.sampled_from(["m", "x y", 3]), "tree": DATA},
    optional={"params": DATA, "description": SCALARS},
)


@SETTINGS
@given(st.one_of(DATA, DOCUMENT))
def test_generated_documents(loader: MissionLoader, doc: Any) -> None:
    text = yaml.dump(doc, Dumper=_CDumper, allow_unicode=True, default_flow_style=None)
    _check(loader, text.encode("utf-8", errors="surrogatepass"))


# -- edits of the shipped missions ---------------------------------------------------------


@st.composite
def _edited(draw: st.DrawFn) -> bytes:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        lines = text.splitlines(keepends=True)
        op = draw(st.sampled_from(["delete", "insert", "dup_line", "swap_lines", "retype"]))
        i = draw(st.integers(min_value=0, max_value=max(len(text) - 1, 0)))
        if op == "delete":
            text = text[:i] + text[i + draw(st.integers(min_value=1, max_value=20)) :]
        elif op == "insert":
            text = (
                text[:i]
                + draw(st.sampled_from(["-", ":", " ", "\n", "  ", "{", "'", "${", "9.5", "x"]))
                + text[i:]
            )
        elif op == "dup_line" and lines:
            k = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            lines.insert(k, lines[k])
            text = "".join(lines)
        elif op == "swap_lines" and len(lines) > 1:
            a = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            b = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            text = "".join(lines)
        else:  # retype: replace a value after a colon with something of another type
            k = draw(st.integers(min_value=0, max_value=max(len(lines) - 1, 0)))
            if lines and ": " in lines[k]:
                key = lines[k].split(": ", 1)[0]
                value = draw(
                    st.sampled_from(
                        ["-1", "0", "1e999", "yes", "[]", "{}", "null", "'${nope}'", "2.0e10", "A"]
                    )
                )
                lines[k] = f"{key}: {value}\n"
                text = "".join(lines)
    return text.encode("utf-8")


@SETTINGS
@given(_edited())
def test_edited_missions(loader: MissionLoader, data: bytes) -> None:
    _check(loader, data)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


@SETTINGS
@given(st.data())
def test_one_value_replaced_in_a_shipped_mission(
    loader: MissionLoader, data: st.DataObject
) -> None:
    doc = copy.deepcopy(data.draw(st.sampled_from(DOCS)))
    path = data.draw(st.sampled_from(_paths(doc)[1:]))
    target = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = data.draw(DATA)
    text = yaml.dump(doc, Dumper=_CDumper, allow_unicode=True)
    _check(loader, text.encode("utf-8", errors="surrogatepass"))


def test_shipped_texts_pass_the_property_check(loader: MissionLoader) -> None:
    for text in TEXTS[:6]:
        assert _check(loader, text.encode()).ok
