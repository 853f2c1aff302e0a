"""No traceback from mission inputs: include paths, non-regular files, start arguments.

Reproduces issue 11: a NUL in an include path made ``validate`` print a traceback (and the
service reply "internal error: ValueError"); ``--param`` values such as a date, broken
YAML flow or a YAML tag gave tracebacks; a huge number as a start argument overflowed.
Each is now one located line: ``file:line:col: field: message`` for a file, the
parameter's name for a ``--param``, with exit status 1 for a mission's problems and 2 for
a value that is none at all.
"""

from __future__ import annotations

import math
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from executive.mission import cli
from executive.mission.loader import MissionLoader
from executive.mission.params import StartArgError, parse_start_arg
from executive.mission.store import MissionStore
from tests.mission.conftest import MISSIONS, PROFILE, Workspace, one_error

# -- include paths ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        (r"subtrees/a\0b.yaml", "a control character (NUL at character 11)"),
        (r"subtrees/a\nb.yaml", "a control character (U+000A at character 11)"),
        (r"subtrees/\e[31m.yaml", "a control character (U+001B at character 10)"),
        (r"sub\x7ftrees/x.yaml", "a control character (U+007F at character 4)"),
    ],
)
def test_invalid_characters_in_an_include_path(ws: Workspace, written: str, shown: str) -> None:
    r = ws.check(f'mission: m\ntree:\n  include: "{written}"\n')
    assert one_error(r) == (
        3,
        12,
        "tree.include.file",
        f"include paths cannot contain {shown}",
    )


def _with_timeout(fn: Any, seconds: float = 10.0) -> Any:
    """Run ``fn`` in a thread; fail (instead of hanging the run) if it blocks."""
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert out, "blocked (a FIFO opened for reading waits for a writer)"
    return out[0]


def test_a_fifo_is_refused_not_waited_on(ws: Workspace) -> None:
    os.mkfifo(ws.root / "subtrees" / "pipe.yaml")
    r = _with_timeout(lambda: ws.check("mission: m\ntree:\n  include: subtrees/pipe.yaml\n"))
    assert one_error(r) == (
        3,
        12,
        "tree.include.file",
        "cannot include subtrees/pipe.yaml: not a regular file",
    )
    alone = _with_timeout(
        lambda: MissionLoader(PROFILE, ws.root).check(ws.root / "subtrees" / "pipe.yaml")
    )
    assert [str(d).split(": ", 1)[1] for d in alone.diagnostics] == [
        "cannot read: not a regular file"
    ]


def test_a_directory_and_a_device_are_refused(ws: Workspace) -> None:
    (ws.root / "subtrees" / "dir.yaml").mkdir()
    r = ws.check("mission: m\ntree:\n  include: subtrees/dir.yaml\n")
    assert one_error(r)[3] == "cannot include subtrees/dir.yaml: a directory"
    r = MissionLoader(PROFILE, ws.root).check("/dev/null")
    assert [d.message for d in r.diagnostics] == ["cannot read: not a regular file"]


def test_a_nul_in_a_path_given_to_the_loader(ws: Workspace) -> None:
    r = MissionLoader(PROFILE, ws.root).check(str(ws.root / "a\0b.yaml"))
    (d,) = r.diagnostics
    assert d.message == "cannot read: the path contains a NUL character"
    assert "\0" not in str(d)


def test_validate_prints_one_located_line_for_a_nul_include(
    mission_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = mission_dir / "nul.yaml"
    path.write_text('mission: nul\ntree:\n  sequence:\n    - include: "a\\0.yaml"\n')
    code = cli.main(["validate", "-q", str(path)])
    out, err = capsys.readouterr()
    assert code == 1 and err == ""
    assert out == (
        f"{path}:4:16: tree.sequence[0].include.file: include paths cannot contain "
        "a control character (NUL at character 2)\n"
    )


# -- the service's path: the store a request reads -------------------------------------------


def test_the_service_store_reports_a_nul_include_instead_of_raising(tmp_path: Path) -> None:
    root = tmp_path / "missions"
    shutil.copytree(MISSIONS, root)
    (root / "nul.yaml").write_text('mission: nul\ntree:\n  include: "a\\0.yaml"\n')
    store = MissionStore(root, PROFILE)  # the service's reload: no ValueError
    (problem,) = store.validate("nul")
    assert problem.endswith(
        "nul.yaml:3:12: tree.include.file: include paths cannot contain "
        "a control character (NUL at character 2)"
    )
    root_, errors = store.build("nul", {})
    assert root_ is None and errors == [problem]


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (10**400, "number too large (about 401 digits)"),
        (-(10**4000), "number too large (about 4001 digits)"),
        (math.nan, "must be a finite number, got nan"),
        (math.inf, "must be a finite number, got inf"),
        ([1], "expected a whole number, got list"),
        ({"a": 1}, "expected a whole number, got dict"),
        ("2024-01-01", "expected a whole number, got text '2024-01-01'"),
        (None, "expected a whole number, got nothing (null)"),
    ],
)
def test_start_arguments_from_a_request_are_errors_not_exceptions(
    value: object, words: str
) -> None:
    store = MissionStore(MISSIONS, PROFILE)
    root, errors = store.build("greeting_wave", {"waves": value})
    assert root is None
    (error,) = errors
    assert error.endswith(f"greeting_wave.yaml:5:3: params.waves: start argument: {words}")


def test_a_huge_number_for_a_number_parameter(tmp_path: Path) -> None:
    store = MissionStore(MISSIONS, PROFILE)
    _, errors = store.build("head_scan", {"min_battery": 10**400})
    assert errors and "number too large" in errors[0]


# -- --param ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("waves=3", ("waves", 3)),
        ("level=2.5", ("level", 2.5)),
        ("flag=true", ("flag", True)),
        ("pose=home", ("pose", "home")),
        ("label='3'", ("label", "3")),
        ("label=", ("label", "")),
        ("label=a=b", ("label", "a=b")),
        ("label=é", ("label", "é")),
    ],
)
def test_param_values_read_as_yaml(item: str, expected: tuple[str, object]) -> None:
    assert parse_start_arg(item) == expected


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("waves=2024-01-01", "--param waves: '2024-01-01' reads as a date; quote it if it is text"),
        ("waves=[", "--param waves: not valid YAML: did not find expected node content"),
        ('waves="x', "--param waves: not valid YAML: found unexpected end of stream"),
        (
            "waves=!!python/object/apply:os.system ['true']",
            "--param waves: YAML tags (tag:yaml.org,2002:python/object/apply:os.system) "
            "are not allowed",
        ),
        ("waves=!custom 3", "--param waves: YAML tags (!custom) are not allowed"),
        ("waves=&a 3", "--param waves: anchors (&name) are not allowed"),
        ("waves=" + "9" * 5000, "--param waves: '99999999999999999999'...: number too large"),
        ("waves=.nan", "--param waves: must be a finite number, got .nan"),
        ("waves=-.inf", "--param waves: must be a finite number, got -.inf"),
        ("waves=1.0e+999", "--param waves: must be a finite number, got 1.0e+999"),
        ("waves=010", "--param waves: '010': a leading zero makes YAML 1.1 read octal"),
        ("waves=1:30", "--param waves: '1:30': base-60 numbers are not allowed"),
        (
            "waves=[1, 2]",
            "--param waves: expected a point [x, y, z] (three numbers, m, the robot's base "
            "frame), got 2 values: number 1, number 2",
        ),
        ("waves=a: b", "--param waves: expected a single value, got a mapping"),
        ("waves=null", "--param waves: 'null' reads as no value; quote it if it is text"),
        ("waves=\udcff", "--param waves: not UTF-8 text (byte 0xff)"),
        ("waves=\x00", "--param waves: not valid YAML: control characters are not allowed"),
        ("waves", "--param 'waves': write NAME=VALUE"),
        ("=3", "--param '=3': write NAME=VALUE"),
        ("1x=3", "--param '1x=3': write NAME=VALUE"),
    ],
)
def test_param_values_that_are_no_value_are_one_line(item: str, message: str) -> None:
    with pytest.raises(StartArgError) as e:
        parse_start_arg(item)
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "value", ["2024-01-01", "[", "!!python/object/apply:os.system ['true']", "9" * 5000, ".nan"]
)
def test_validate_param_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code = cli.main(["validate", str(MISSIONS / "greeting_wave.yaml"), "--param", f"waves={value}"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("error: --param waves: ") and err.count("\n") == 1


def test_validate_param_checks_the_mission_as_started(capsys: pytest.CaptureFixture[str]) -> None:
    mission = str(MISSIONS / "greeting_wave.yaml")
    assert cli.main(["validate", "-q", mission, "--param", "waves=2"]) == 0
    assert cli.main(["validate", "-q", mission, "--param", "waves=20"]) == 1
    out, _ = capsys.readouterr()
    assert out.endswith(
        "greeting_wave.yaml:5:3: params.waves: start argument: must be <= 10, got 20\n"
    )
    both = [mission, str(MISSIONS / "head_scan.yaml")]
    assert cli.main(["validate", *both, "--param", "waves=2"]) == 2
    assert "give exactly one FILE" in capsys.readouterr().err
