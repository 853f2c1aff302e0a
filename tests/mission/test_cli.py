"""``validate``, ``schema`` and ``render`` from the command line."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from executive.mission import cli
from tests.mission.conftest import MISSIONS


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# robots other than the Atom keep their missions (and libraries) in a folder of their own
ROBOT_MISSIONS = {"adam": "adam-pro", "grx": "grx", "aurora": "aurora"}
TESTS = "tests"  # the missions' scenarios (atom-executive test: tests/scenario), not missions


def test_validate_shipped(capsys: pytest.CaptureFixture[str]) -> None:
    files = [
        str(p)
        for p in sorted(MISSIONS.rglob("*.yaml"))
        if p.relative_to(MISSIONS).parts[0] not in {*ROBOT_MISSIONS, TESTS}
    ]
    code, out, err = _run(capsys, "validate", *files)
    assert code == 0
    assert out == ""
    assert f"{len(files)} file(s): 0 invalid, 0 error(s), 0 warning(s)" in err


@pytest.mark.parametrize(("folder", "profile"), sorted(ROBOT_MISSIONS.items()))
def test_validate_shipped_for_other_robots(
    capsys: pytest.CaptureFixture[str], folder: str, profile: str
) -> None:
    files = [str(p) for p in sorted((MISSIONS / folder).rglob("*.yaml"))]
    if not files:
        pytest.skip(f"no missions for {folder} yet")
    code, out, err = _run(capsys, "validate", "--profile", profile, *files)
    assert code == 0, err
    assert f"{len(files)} file(s): 0 invalid, 0 error(s)" in err


def test_validate_reports_every_error_as_file_line_col(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shutil.copytree(MISSIONS / "poses", tmp_path / "poses")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "mission: bad\ntree:\n  sequence:\n    - wait: {seconds: 0}\n    - move_joints: {pose: homme, timeout: 5}\n"
    )
    junk = tmp_path / "junk.yaml"
    junk.write_bytes(b"\x00\xff\xfe binary")
    code, out, err = _run(
        capsys, "validate", "-q", str(bad), str(junk), str(tmp_path / "missing.yaml")
    )
    assert code == 1
    assert err == ""
    assert out.splitlines() == [
        f"{bad}:4:23: tree.sequence[0].wait.seconds: must be > 0, got 0",
        f"{bad}:5:27: tree.sequence[1].move_joints.pose: unknown pose 'homme' (did you mean 'home'?)",
        f"{junk}:1:2: not UTF-8 text (byte 0xff)",
        f"{tmp_path / 'missing.yaml'}:1:1: cannot read: No such file or directory",
    ]


def test_validate_with_an_unknown_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(
        capsys, "validate", "--profile", "/nonexistent.yaml", str(MISSIONS / "head_scan.yaml")
    )
    assert code == 2 and "robot profile" in err


def test_schema_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "schema")
    assert code == 0
    schema = json.loads(out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    code, out, _ = _run(capsys, "schema", "--root", str(MISSIONS))
    pose = json.loads(out)["$defs"]["kind_move_joints"]["properties"]["move_joints"]["properties"][
        "pose"
    ]
    assert "home" in pose["anyOf"][0]["enum"]
    code, out, _ = _run(capsys, "schema", "--document", "gestures")
    assert "gestures" in json.loads(out)["properties"]


def test_render_ascii_and_dot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "render", str(MISSIONS / "greeting_wave.yaml"))
    assert code == 0 and out.startswith("{-} Greet")
    target = tmp_path / "tree.dot"
    code, out, _ = _run(
        capsys, "render", str(MISSIONS / "greeting_wave.yaml"), "--format", "dot", "-o", str(target)
    )
    assert code == 0 and target.read_text().startswith("digraph")


def test_render_svg_without_graphviz(capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("dot") is not None:
        pytest.skip("Graphviz is installed")
    code, _, err = _run(capsys, "render", str(MISSIONS / "greeting_wave.yaml"), "--format", "svg")
    assert code == 1 and "graphviz" in err


def test_render_an_invalid_mission(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("mission: bad\ntree: {wait: {}}\n")
    code, out, err = _run(capsys, "render", str(bad))
    assert code == 1 and "missing seconds" in err and out == ""


def test_add_parsers_registers_three_subcommands() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    cli.add_parsers(sub)
    assert set(sub.choices) == {"validate", "schema", "render"}
    args = parser.parse_args(["render", "x.yaml", "--format", "dot"])
    assert args.handler is cli.render_cmd and args.format == "dot"
