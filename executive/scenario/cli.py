"""``atom-executive test PATH...``: a mission's scenarios, run and judged.

    atom-executive test missions/tests/atom                 # every *.test.yaml under it
    atom-executive test x.test.yaml --missions-dir missions --junit build/junit.xml
    atom-executive test missions/tests --jobs 2 --keep build/failed
    atom-executive test x.test.yaml --realtime              # the real service and sim processes

Every file is checked first (``executive.scenario.load``); one that is not valid is named
at ``file:line:col`` and nothing runs (exit 2). Then each scenario runs, in simulated time
(``executive.scenario.simtime``) or with ``--realtime`` against the real processes
(``executive.scenario.realtime``), and is judged (``executive.scenario.verdict``): one
line each, PASS, or FAIL with the first expectation that failed and the node, then any
other. Exit 0 when all pass, 1 when one fails. ``--junit`` writes a JUnit XML report;
``--keep DIR`` keeps a failed scenario's files (its run record, its run's MCAP file, the
simulator's record of every command, the log) in ``DIR/<file>/``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TextIO, cast

from executive.scenario.report import FAIL, INVALID, PASS, Verdict, exit_code, junit, summary
from executive.text import printable


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "test",
        description=(__doc__ or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="*.test.yaml files or directories"
    )
    p.add_argument(
        "--missions-dir",
        type=Path,
        help="where missions named by name are (default: found from each file)",
    )
    p.add_argument("--junit", type=Path, metavar="FILE", help="write a JUnit XML report")
    p.add_argument(
        "--realtime",
        action="store_true",
        help="run against the real service and simulator processes",
    )
    p.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep a failed scenario's records (and its MCAP) here",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="scenarios run at once (processes; default 1)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="say what became of each event")
    p.add_argument(
        "--schema",
        nargs="?",
        const="atom-sdk",
        metavar="PROFILE",
        help="print the JSON Schema of scenario files (with PROFILE's world keys and buttons)",
    )
    p.set_defaults(handler=main)


def main(args: argparse.Namespace) -> int:
    from executive.scenario.load import find_scenarios

    if args.schema is not None:
        return _schema(args.schema)
    started = time.perf_counter()
    if not args.paths:
        _say("atom-executive test: give scenario files or directories (PATH...)", sys.stderr)
        return 2
    files = find_scenarios(list(args.paths))
    if not files:
        where = ", ".join(map(str, args.paths))
        _say(f"atom-executive test: no *.test.yaml in {where}", sys.stderr)
        return 2
    invalid = _invalid(files, args.missions_dir)
    if invalid:  # refused before anything runs
        _say(f"{len(invalid)} of {len(files)} scenario files invalid: nothing ran")
        if args.junit:
            junit(invalid, args.junit, time.perf_counter() - started)
        return 2
    options = (args.missions_dir, args.realtime, args.keep)
    verdicts: list[Verdict] = []
    jobs = max(1, min(args.jobs, len(files)))
    if jobs == 1:
        for path in files:
            verdicts.append(_told(run_file(path, *options), args.verbose))
    else:
        # a process per scenario at once: py_trees' blackboard is one per process
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(run_file, path, *options) for path in files]
            verdicts += [_told(future.result(), args.verbose) for future in futures]
    wall = time.perf_counter() - started
    _say(summary(verdicts, wall))
    if args.junit:
        junit(verdicts, args.junit, wall)
    return exit_code(verdicts)


def _invalid(files: list[Path], missions_dir: Path | None) -> list[Verdict]:
    """Every file checked; those that are not valid, each problem said."""
    from executive.scenario.load import load_scenario

    invalid = []
    for path in files:
        scenario, problems = load_scenario(path, missions_dir)
        if scenario is None:
            errors = [str(d) for d in problems if d.is_error] or ["invalid"]
            invalid.append(Verdict(str(path), status=INVALID, problems=errors))
            for line in errors:
                _say(line)
    return invalid


def _schema(profile_name: str) -> int:
    import json

    from executive.scenario.schema import scenario_schema
    from executive.scenario.simtime import lockstep_part
    from executive.seam.profile import ProfileError, load_profile

    try:
        robot = lockstep_part(load_profile(profile_name))
    except (ProfileError, LookupError) as e:
        _say(f"atom-executive test --schema: {e}", sys.stderr)
        return 2
    print(json.dumps(scenario_schema(robot), indent=2))  # noqa: T201 - the command's output
    return 0


def _say(line: str, to: TextIO | None = None) -> None:
    print(printable(line), file=to or sys.stdout, flush=True)


def _told(verdict: Verdict, verbose: bool) -> Verdict:
    """Say a verdict as it comes: its line, its details (with ``-v``, its events)."""
    _say(verdict.line())
    for line in verdict.details():
        _say(line)
    if verbose:
        for line in verdict.events:
            _say(f"      {line}")
    return verdict


def run_file(
    path: Path,
    missions_dir: Path | None = None,
    realtime: bool = False,
    keep: Path | None = None,
) -> Verdict:
    """Load, run and judge one scenario file (in this process); its ``Verdict``."""
    from executive.scenario.load import load_scenario
    from executive.scenario.simtime import SimulatedRun, lockstep_part
    from executive.scenario.verdict import judge
    from executive.seam.profile import load_profile

    scenario, problems = load_scenario(path, missions_dir)
    if scenario is None:
        return Verdict(str(path), status=INVALID, problems=[str(d) for d in problems])
    workdir = Path(tempfile.mkdtemp(prefix="atom-scenario-"))
    try:
        with _logging_to(workdir / "log.jsonl"):
            if realtime:
                from executive.scenario.realtime import RealtimeRun  # the harness: processes

                outcome = RealtimeRun(scenario, workdir).run()
            else:
                outcome = SimulatedRun(scenario, workdir, mcap=keep is not None).run()
        profile = load_profile(scenario.profile)
        failures = judge(scenario, outcome, lockstep_part(profile), profile)
        story = outcome.story
        verdict = Verdict(
            str(path),
            scenario.test,
            FAIL if failures else PASS,
            [str(f) for f in failures],
            failures[0].node if failures else "",
            events=[_event_line(f) for f in outcome.fired],
            result=(story.result or "") if story else "",
            simulated=outcome.simulated,
            duration=outcome.duration,
            wall=outcome.wall,
            cpu=outcome.cpu,
        )
        if failures and keep is not None:
            verdict.kept = str(_keep(path, workdir, outcome.files, keep))
        return verdict
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _event_line(fired: Any) -> str:
    said = fired.event.describe()
    if fired.at is None:
        return f"{said}: never fired ({fired.missed})"
    reply = f": {fired.reply}" if fired.reply else ""
    return f"{said}: at {fired.at:.2f} s{reply}"


def _keep(path: Path, workdir: Path, files: dict[str, Path], keep: Path) -> Path:
    """Copy a failed scenario's files into ``keep/<file name>/``."""
    target = keep / path.name.removesuffix(".test.yaml")
    target.mkdir(parents=True, exist_ok=True)
    for source in [*files.values(), workdir / "log.jsonl"]:
        if source.is_file():
            shutil.copy2(source, target / source.name)
    return target


@contextmanager
def _logging_to(path: Path) -> Any:
    """The executive's and the simulator's log lines (JSON) into ``path`` meanwhile: the
    terminal gets the verdicts only."""
    import structlog

    from executive import logs

    saved = structlog.get_config()
    with path.open("a", encoding="utf-8") as sink:
        logs.configure(level="info", journal=False)
        out = cast(TextIO, _Sink(sink))
        structlog.configure(logger_factory=lambda *_: structlog.PrintLogger(out))
        try:
            yield
        finally:
            structlog.configure(**saved)


class _Sink:
    """A text file a PrintLogger may print to after it was closed (a thread's late line)."""

    def __init__(self, file: TextIO) -> None:
        self.file = file

    def write(self, text: str) -> int:
        return 0 if self.file.closed else self.file.write(text)

    def flush(self) -> None:
        if not self.file.closed:
            self.file.flush()
