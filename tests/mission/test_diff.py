"""``atom-executive diff``: two missions compared as trees, by node path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from executive import cli
from tests.mission.conftest import MISSIONS


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


A = """\
mission: demo
params:
  tag:
    type: tag
    default: 3
tree:
  sequence:
    name: Demo
    children:
      - navigate_to_tag: {name: Go, tag: "${tag}", theta: 0.0, timeout: 60}
      - log: {name: Hello, message: hi}
      - wait: {name: Pause, seconds: 1}
      - log: {name: Bye, message: bye}
"""

B = """\
mission: demo
params:
  tag:
    type: tag
    default: 4
tree:
  sequence:
    name: Demo
    children:
      - navigate_to_tag: {name: Go, tag: "${tag}", theta: 0.0, timeout: 90}
      - wait: {name: Pause, seconds: 1}
      - log: {name: Bye, message: bye}
      - log: {name: Hello, message: hi}
      - log: {name: New, message: new}
"""


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(MISSIONS / "poses", tmp_path / "poses")
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(A)
    b.write_text(B)
    return a, b


def test_same_mission_is_exit_0_and_silent(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(MISSIONS / "deliver_drink.yaml")
    code, out, _ = _run(capsys, path, path)
    assert (code, out) == (0, "")


def test_changes_moves_and_additions_by_node_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b = _pair(tmp_path)
    code, out, err = _run(capsys, str(a), str(b))
    assert code == 1, err
    lines = out.splitlines()
    # a parameter's new default reaches the node it resolves into
    assert "~ Demo/Go (navigate_to_tag): tag: 3 -> 4" in lines
    assert "~ Demo/Go (navigate_to_tag): timeout: 60.0 -> 90.0" in lines
    assert "+ Demo/New (log): added" in lines
    moved = [line for line in lines if line.startswith(">")]
    assert moved == ["> Demo/Hello (log): moved from Demo/Hello"]
    assert not [line for line in lines if line.startswith("- ")]


def test_a_renamed_parameter_is_a_difference(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``sed 's/table_tag/tbl_tag/'`` runs the same tree, but ``start --param table_tag=5``
    is refused by the new file: it was no output and exit 0 (issue 35, 6)."""
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(MISSIONS / folder, tmp_path / folder)
    a = MISSIONS / "deliver_drink.yaml"
    b = tmp_path / "deliver_drink.yaml"
    b.write_text(a.read_text().replace("table_tag", "tbl_tag"))
    code, out, err = _run(capsys, str(a), str(b))
    assert code == 1, err
    assert out.splitlines()[2:] == [
        "+ params.tbl_tag (param): added",
        "- params.table_tag (param): removed",
    ]


def test_a_parameter_with_another_default_or_range_is_said_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b = _pair(tmp_path)
    b.write_text(B.replace("default: 4", "default: 4\n    description: The tag."))
    code, out, _ = _run(capsys, str(a), str(b))
    assert code == 1
    assert "~ params.tag (param): default: 3 -> 4" in out.splitlines()
    c = tmp_path / "c.yaml"
    c.write_text(
        A.replace("type: tag\n    default: 3", "type: integer\n    default: 3\n    min: 1")
    )
    code, out, _ = _run(capsys, str(a), str(c))
    assert code == 1
    assert out.splitlines()[2:] == [
        "~ params.tag (param): type: tag -> integer",
        "~ params.tag (param): min: null -> 1",
    ]


def test_markdown_for_a_pull_request(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    code, out, _ = _run(capsys, str(a), str(b), "--format", "md")
    assert code == 1
    assert "| change | node | kind | field | before | after |" in out
    assert "| changed | Demo/Go | navigate_to_tag | timeout | 60.0 | 90.0 |" in out


def test_param_resolves_both(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    _, out, _ = _run(capsys, str(a), str(b), "--param", "tag=7")
    assert "tag: 3 -> 4" not in out


def test_shipped_missions_differ_by_node_path(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, str(MISSIONS / "deliver_drink.yaml"), str(MISSIONS / "serve_two_tables.yaml")
    )
    assert code == 1
    assert "+ Serve two tables/Fetch a drink at tag 3[2] (include): added" in out
    assert "- Deliver a drink/Drive to the table (navigate_to_tag): removed" in out


def test_invalid_file_is_trouble(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a, _ = _pair(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("mission: bad\ntree:\n  sequence:\n    - wait: {seconds: -1}\n")
    code, out, err = _run(capsys, str(a), str(bad))
    assert code == 2 and out == ""
    assert "bad.yaml:" in err and "is invalid" in err
