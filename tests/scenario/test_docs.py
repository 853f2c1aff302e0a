"""The scenarios of docs/missions.md ("Testing a mission") pass against the shipped missions,
and the one the docs quote from ``missions/tests/`` is that file, verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from executive.scenario.cli import run_file
from executive.scenario.report import PASS
from tests.integration.test_shipped_missions import DOCS, yaml_blocks

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = [
    b for b in yaml_blocks(DOCS.read_text(encoding="utf-8")) if "test" in (yaml.safe_load(b) or {})
]


def test_the_docs_have_a_scenario() -> None:
    assert SCENARIOS


@pytest.mark.parametrize("block", SCENARIOS, ids=lambda b: str(yaml.safe_load(b)["test"]))
def test_a_docs_scenario_passes(block: str, tmp_path: Path) -> None:
    path = tmp_path / "docs.test.yaml"
    path.write_text(block)
    verdict = run_file(path, ROOT / "missions")
    assert verdict.status == PASS, verdict.failures or verdict.problems
    shipped = [
        p for p in (ROOT / "missions" / "tests").rglob("*.test.yaml") if p.read_text() == block
    ]
    assert shipped, "the docs quote a shipped scenario verbatim"
