"""Every YAML example of docs/missions.md is what the docs say it is.

- a ``mission:`` document validates with no error and no warning (and runs to SUCCEEDED
  on the simulated Atom: ``tests/integration/test_shipped_missions.py``);
- a pose or gesture library quotes the shipped library, entry for entry;
- a fragment (a list of nodes) validates without a problem as a step of a mission that
  has taken control, set a joint-control FSM state and brought the arms and the right hand
  to rest, as the docs' missions do before their timed moves — except the one the docs
  mark ``# wrong``, which fails with the message they quote;
- a scenario (``test:``, "Testing a mission") passes: ``tests/scenario/test_docs.py``;
- nothing else (a comment-only block is an editor hint).

Reproduces issue 11: "A first mission" copied verbatim always failed on the robot.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from executive.mission.loader import MissionLoader
from tests.integration.test_shipped_missions import DOCS, yaml_blocks
from tests.mission.conftest import MISSIONS, PROFILE

BLOCKS = yaml_blocks(DOCS.read_text(encoding="utf-8"))
# parameters the fragments refer to, as the mission around them would declare them
FRAGMENT_PARAMS = {"first_table": "{type: tag, default: 4}"}


def kind(block: str) -> str:
    doc = yaml.safe_load(block)
    if doc is None:
        return "comment"
    if isinstance(doc, dict) and "test" in doc:
        return "scenario"
    if isinstance(doc, dict) and "mission" in doc:
        return "mission"
    if isinstance(doc, dict) and set(doc) <= {"poses", "gestures", "description"}:
        return "library"
    if isinstance(doc, list):
        return "wrong" if re.search(r"#\s*wrong", block) else "fragment"
    return f"unknown: {list(doc) if isinstance(doc, dict) else type(doc).__name__}"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("docs")
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(MISSIONS / folder, path / folder)
    return path


def _check(root: Path, text: str) -> Any:
    path = root / "example.yaml"
    path.write_text(text, encoding="utf-8")
    return MissionLoader(PROFILE, root).check(path)


def test_every_block_is_of_a_known_kind() -> None:
    kinds = [kind(b) for b in BLOCKS]
    assert not [k for k in kinds if k.startswith("unknown")], kinds
    assert kinds.count("mission") >= 2 and "fragment" in kinds and "library" in kinds


@pytest.mark.parametrize("i", [i for i, b in enumerate(BLOCKS) if kind(b) == "mission"])
def test_docs_mission_is_valid_without_warnings(root: Path, i: int) -> None:
    result = _check(root, BLOCKS[i])
    assert result.diagnostics == (), "\n".join(map(str, result.diagnostics))
    assert result.mission is not None and result.mission.complete


@pytest.mark.parametrize("i", [i for i, b in enumerate(BLOCKS) if kind(b) == "fragment"])
def test_docs_fragment_is_valid_where_the_docs_use_it(root: Path, i: int) -> None:
    block = BLOCKS[i]
    used = dict.fromkeys(re.findall(r"\$\{(\w+)\}", block))
    params = "".join(f"  {n}: {FRAGMENT_PARAMS[n]}\n" for n in used)
    text = (
        "mission: fragment\n"
        + (f"params:\n{params}" if params else "")
        + "tree:\n  sequence:\n"
        + "    - acquire_control: {timeout: 5}\n"
        + "    - set_fsm: {state: joint_control, timeout: 5}\n"
        + "    - move_joints: {pose: home, timeout: 12}\n"
        + "    - hand_gesture: {gesture: right_relaxed, timeout: 4}\n"
        + textwrap.indent(block, "    ")
    )
    result = _check(root, text)
    assert result.diagnostics == (), text + "\n".join(map(str, result.diagnostics))


def test_the_wrong_example_fails_as_the_docs_say() -> None:
    (block,) = [b for b in BLOCKS if kind(b) == "wrong"]
    quoted = "pose should be indented under move_joints:"
    assert quoted in DOCS.read_text(encoding="utf-8")
    root_text = "mission: w\ntree:\n  sequence:\n" + textwrap.indent(block, "    ")
    path = Path(MISSIONS) / "x.yaml"  # (not written: checked from memory)
    result = MissionLoader(PROFILE, MISSIONS).check(path, data=root_text.encode())
    assert any(quoted in d.message for d in result.errors), result.diagnostics


@pytest.mark.parametrize("i", [i for i, b in enumerate(BLOCKS) if kind(b) == "library"])
def test_docs_library_quotes_the_shipped_library(i: int) -> None:
    doc = yaml.safe_load(BLOCKS[i])
    section = "poses" if "poses" in doc else "gestures"
    shipped: dict[str, Any] = {}
    for path in sorted((MISSIONS / section).glob("*.yaml")):
        shipped.update(yaml.safe_load(path.read_text(encoding="utf-8"))[section])
    field = "joints" if section == "poses" else "fingers"
    for name, entry in doc[section].items():
        assert entry.get(field) == shipped[name].get(field), name
        assert entry.get("solve") == shipped[name].get("solve"), (
            name
        )  # a pose solved for its intent
        if "intent" in entry:
            assert entry["intent"] == shipped[name]["intent"], name
