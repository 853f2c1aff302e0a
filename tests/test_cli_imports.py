"""The CLI imports only what the chosen command uses (issue 22, 3).

``atom-executive status`` and even ``--help`` took 1.3 s on an idle machine: building the
parser imported every command's module, so the mission compiler, the behaviours, py_trees,
MuJoCo and numpy came with any command. Now ``executive.cli.COMMANDS`` names each
command's module and its summary, and a module is imported once its command is chosen.

Here: the table and the modules agree (every row's module registers that command and no
other unlisted one, and gives no summary of its own: ``COMMANDS`` is its one home); ``--help``
imports no command module at all; and ``status``, ``missions`` and ``watch``, run as
processes against a real service, import none of the heavy modules (read from ``python -X
importtime``, which names every module a process imports).
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from executive import cli
from executive.harness.stack import running_stack

ROOT = Path(__file__).resolve().parents[1]

# what no read-only command may import: the mission compiler and loader, the behaviours and
# py_trees, the tree and the service's own machinery, the robots' bodies (MuJoCo, numpy),
# the pictures (matplotlib)
HEAVY = (
    "py_trees",
    "behaviours",
    "executive.mission",
    "executive.language",
    "executive.core",
    "executive.service.requests",
    "executive.service.status",
    "executive.service.run",
    "executive.robots",
    "mujoco",
    "numpy",
    "matplotlib",
    "mcap",
)


# what the console script ``atom-executive`` runs (pyproject.toml's [project.scripts])
SCRIPT = "import sys; from executive.cli import main; sys.exit(main(sys.argv[1:]))"


def imported(argv: list[str], env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """The modules ``atom-executive ARGV`` imports as a process, and its output."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", SCRIPT, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    names.discard("package")  # the header line: "self [us] | cumulative | imported package"
    return names, done.stdout


def heavy(names: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY))


class Recorder(cli._Subcommands):
    """A subparsers stand-in that also notes which commands a module gave a summary."""

    def __init__(self) -> None:
        super().__init__("atom-executive")
        self.summarised: list[str] = []

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if "help" in kwargs:
            self.summarised.append(name)
        return super().add_parser(name, **kwargs)


def test_every_row_is_registered_by_its_module_which_gives_no_summary() -> None:
    rows: dict[str, set[str]] = defaultdict(set)
    for name, (register, _) in cli.COMMANDS.items():
        if register is not None:
            rows[register].add(name)
    for register, names in rows.items():
        module, _, function = register.partition(":")
        sub = Recorder()
        getattr(__import__(module, fromlist=[function]), function)(sub)
        assert set(sub.choices) == names, (
            f"{register} registers {sorted(sub.choices)}; executive.cli.COMMANDS lists "
            f"{sorted(names)} for it: a command needs its row there (name, module, summary)"
        )
        assert not sub.summarised, (
            f"{register} gives {sub.summarised} a help= summary: it belongs in executive.cli.COMMANDS"
        )


def test_every_command_parses_its_own_help() -> None:
    """Each command's ``--help`` comes from its module's parser (loaded on demand)."""
    parser = cli.build_parser()
    for name in cli.COMMANDS:
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args([name, "--help"])
        assert exit_.value.code == 0, name


def test_help_imports_no_command() -> None:
    names, out = imported(["--help"])
    assert "status" in out and "validate" in out and "print the executive's status" in out
    ours = sorted(n for n in names if n.split(".")[0] in ("executive", "behaviours"))
    assert ours == ["executive", "executive.cli", "executive.text"], ours
    assert not {"cyclonedds", "yaml", "structlog", "rich"} & names, names


@pytest.mark.dds
def test_read_only_commands_import_nothing_heavy(tmp_path: Path) -> None:
    """``status``, ``missions`` and ``watch`` against the real service (no robot: they
    read the service's status and answer, which is all they need)."""
    with running_stack(tmp_path / "stack") as stack:
        stack.start_service()
        env = {k: v for k, v in stack.env().items() if k != cli.PARENT_ENV}
        for argv, said in (
            (["status"], "state: "),
            (["missions"], "deliver_drink"),
            (["watch", "--plain", "--duration", "0.5"], "atom-executive watch"),
        ):
            names, out = imported(argv, env)
            assert said in out, (argv, out)
            assert "cyclonedds" in names, argv  # it did talk DDS
            assert not heavy(names), (argv, heavy(names))
            if argv[0] != "watch":  # the live view's terminal machinery is watch's alone
                assert not {n for n in names if n.split(".")[0] == "rich"}, argv
