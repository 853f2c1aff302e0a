"""A scenario's verdict, as a line for a person and a JUnit XML test case for CI.

``Verdict`` is plain data (it crosses process boundaries with ``--jobs``): the scenario,
PASS, FAIL or INVALID, every failure (``file:line: expect.x: why``, the node it concerns),
what became of each event, and the timing: the scenario's own seconds (simulated, or
real with ``--realtime``), the wall and CPU time it took here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

from executive.text import printable

PASS, FAIL, INVALID = "PASS", "FAIL", "INVALID"


@dataclass
class Verdict:
    file: str
    test: str = ""
    status: str = PASS
    failures: list[str] = field(default_factory=list)  # "file:line:col: expect.x: why"
    node: str = ""  # the node the first failure concerns ("" when none)
    problems: list[str] = field(default_factory=list)  # an invalid file's diagnostics
    events: list[str] = field(default_factory=list)  # what became of each event
    result: str = ""  # how the run ended
    simulated: bool = True
    duration: float = 0.0  # the scenario's seconds (simulated, or real)
    wall: float = 0.0
    cpu: float = 0.0
    kept: str = ""  # where its files were kept (--keep)

    def line(self) -> str:
        """The scenario's one line: PASS or FAIL and what failed first, or INVALID."""
        if self.status == INVALID:
            return f"INVALID {self.file}: {self.problems[0] if self.problems else 'invalid'}"
        clock = "simulated" if self.simulated else "real"
        took = f"({self.result or 'no run'}; {self.duration:.1f} s {clock} in {self.wall:.1f} s)"
        if self.status == PASS:
            return f"PASS  {self.file}  {self.test}  {took}"
        return f"FAIL  {self.failures[0]}  [{self.test}] {took}"

    def details(self) -> list[str]:
        """The lines after the first: every other failure or problem, and where files are."""
        rest = self.problems[1:] if self.status == INVALID else self.failures[1:]
        out = [f"      {line}" for line in rest]
        if self.kept:
            out.append(f"      kept: {self.kept}")
        return out


def summary(verdicts: Sequence[Verdict], wall: float) -> str:
    counts = {s: sum(1 for v in verdicts if v.status == s) for s in (PASS, FAIL, INVALID)}
    said = [f"{counts[PASS]} passed"]
    if counts[FAIL]:
        said.append(f"{counts[FAIL]} failed")
    if counts[INVALID]:
        said.append(f"{counts[INVALID]} invalid")
    ran = [v for v in verdicts if v.status != INVALID]
    simulated = sum(v.duration for v in ran if v.simulated)
    cpu = sum(v.cpu for v in ran)
    return (
        f"{', '.join(said)} in {wall:.1f} s "
        f"({simulated:.1f} s simulated, {cpu:.1f} s CPU in the scenarios)"
    )


def exit_code(verdicts: Sequence[Verdict]) -> int:
    """2 when a file is invalid, 1 when a scenario failed, else 0."""
    if any(v.status == INVALID for v in verdicts):
        return 2
    return 1 if any(v.status == FAIL for v in verdicts) else 0


def junit(verdicts: Sequence[Verdict], path: Path, wall: float) -> None:
    """A JUnit XML report: one test case per scenario (its file as the class, its ``test``
    as the name), a failure with every failed expectation, an error for an invalid file."""
    suite = ET.Element(
        "testsuite",
        name="atom-executive test",
        tests=str(len(verdicts)),
        failures=str(sum(1 for v in verdicts if v.status == FAIL)),
        errors=str(sum(1 for v in verdicts if v.status == INVALID)),
        time=f"{wall:.3f}",
    )
    for v in verdicts:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=v.file.removesuffix(".yaml").replace("/", "."),
            name=v.test or v.file,
            time=f"{v.wall:.3f}",
        )
        props = ET.SubElement(case, "properties")
        clock = "simulated_s" if v.simulated else "real_s"
        for name, value in (
            (clock, f"{v.duration:.3f}"),
            ("cpu_s", f"{v.cpu:.3f}"),
            ("result", v.result),
        ):
            ET.SubElement(props, "property", name=name, value=value)
        if v.status == FAIL:
            failure = ET.SubElement(
                case, "failure", message=_clean(v.failures[0]), type="expectation"
            )
            failure.text = _clean("\n".join([*v.failures, "", *v.events]))
        elif v.status == INVALID:
            error = ET.SubElement(
                case, "error", message=_clean(v.problems[0] if v.problems else ""), type="invalid"
            )
            error.text = _clean("\n".join(v.problems))
        if v.events:
            ET.SubElement(case, "system-out").text = _clean("\n".join(v.events))
    root = ET.Element("testsuites")
    root.append(suite)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _clean(text: str) -> str:
    """Text XML 1.0 can hold: control characters (a mission's text) shown, not written."""
    return "\n".join(printable(line) for line in text.split("\n"))
