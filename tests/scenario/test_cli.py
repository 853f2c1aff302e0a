"""``atom-executive test``: one line a scenario, exit 0 / 1 / 2, a JUnit report, a failed
scenario's records kept, and the scenario files' JSON Schema."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]  # no types-jsonschema in the dev extra
import pytest
import yaml

from executive import cli
from executive.scenario.load import find_scenarios

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "missions" / "tests"
STOP = SCENARIOS / "atom" / "greeting_wave.stop.test.yaml"
SUCCEEDS = SCENARIOS / "atom" / "head_scan.battery.test.yaml"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = cli.main(["test", *argv])
    return code, capsys.readouterr().out.splitlines()


def test_passing_scenarios_exit_0_with_a_junit_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "junit.xml"
    code, out = _run(capsys, str(STOP), str(SUCCEEDS), "--junit", str(report))
    assert code == 0
    assert [line.split()[0] for line in out[:2]] == ["PASS", "PASS"]
    assert out[-1].startswith("2 passed in ")
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "0"
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names == ["greeting_wave stops when the operator says so",
                     "head_scan stops when the battery drops below its minimum"]  # fmt: skip


def test_a_failed_expectation_exits_1_naming_it_and_keeps_the_records(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    failing = tmp_path / "s.test.yaml"
    failing.write_text(
        STOP.read_text()
        .replace("result: ABORTED", "result: SUCCEEDED")
        .replace("mission: greeting_wave", f"mission: greeting_wave\nmissions: {ROOT / 'missions'}")
    )
    keep = tmp_path / "kept"
    report = tmp_path / "junit.xml"
    code, out = _run(capsys, str(failing), "--keep", str(keep), "--junit", str(report))
    assert code == 1
    assert out[0].startswith(f"FAIL  {failing}:")
    assert "expect.result: expected SUCCEEDED; the run ended ABORTED (stopped by request)" in out[0]
    kept = sorted(p.suffix for p in (keep / "s").iterdir())
    assert kept == [".jsonl", ".jsonl", ".jsonl", ".mcap"]  # run record, log, sim record; MCAP
    failure = ET.parse(report).getroot().find("testsuite/testcase/failure")
    assert failure is not None and "expect.result" in (failure.get("message") or "")


def test_an_invalid_file_exits_2_and_nothing_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.test.yaml"
    bad.write_text(STOP.read_text().replace("on_start: Wave 5 times", "on_start: Wave 6 times"))
    code, out = _run(capsys, str(STOP), str(bad), "--missions-dir", str(ROOT / "missions"))
    assert code == 2
    assert out[0].startswith(f"{bad}:6:16: events[0].on_start: no node 'Wave 6 times'")
    assert out[-1] == "1 of 2 scenario files invalid: nothing ran"
    assert not any(line.startswith("PASS") for line in out)


def test_a_directory_runs_its_scenarios_at_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    for source in (STOP, SUCCEEDS):
        (folder / source.name).write_text(source.read_text() + f"missions: {ROOT / 'missions'}\n")
    code, out = _run(capsys, str(folder), "--jobs", "2")
    assert code == 0 and out[-1].startswith("2 passed")
    assert [line.split()[1] for line in out[:2]] == sorted(str(p) for p in folder.iterdir())


def test_every_shipped_scenario_matches_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["test", "--schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = find_scenarios([SCENARIOS])
    assert files
    for path in files:
        errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
        assert not errors, (path, errors)
    copy = dict(yaml.safe_load(STOP.read_text()), events=[{"at": 1, "press": "Q"}])
    assert list(validator.iter_errors(copy)), "a button the Atom has not"
