"""Every shipped mission and every mission in docs/missions.md runs to SUCCEEDED on the sim.

Validation says a mission is fine; this says the robot agrees: each mission is started
through the real runtime (the tick loop, the leaves, the motion streamer) against the
simulated Atom as its own process (the ``live`` fixture: a fast base), and must end
SUCCEEDED with control handed back. Missions run with the shortest parameters they offer
(one wave, one sweep); a ``wait_for_button`` is answered with the sim's gamepad, a fresh
press of the awaited button once the wait has begun.

The docs' missions are the ```yaml blocks of docs/missions.md that are ``mission:``
documents, written into a mission directory beside copies of the shipped libraries and
subtrees (which the docs' examples use), so an example copied verbatim works.

Two lanes: the missions' own motions take about 110 s in all (their durations are real
time), too long for one after the other. The cases are split by their expected time into
two lanes of about a minute: this process runs lane 0, and a second pytest process, started
when the module starts (``ATOM_MISSION_LANE=1``), runs lane 1 at the same time on its own
leased domain (py_trees' blackboard is one per process, so two runtimes need two). Each
lane-1 case here reports the child's verdict for the same test id, failure text included.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import py_trees
import pytest
import yaml

from behaviours.conditions.robot import WaitForButton
from executive.core.tree import ExecState
from executive.mission.store import MissionStore
from tests.integration.conftest import ROOT, Live

pytestmark = pytest.mark.dds

MISSIONS = ROOT / "missions"
DOCS = ROOT / "docs" / "missions.md"
LANE_ENV = "ATOM_MISSION_LANE"
LANE = os.environ.get(LANE_ENV)  # None: the first process; "1": the child running lane 1
# the shortest run each mission offers (its own parameters, within their ranges)
SHORT: dict[str, dict[str, object]] = {
    "greeting_wave": {"waves": 1},
    "head_scan": {"sweeps": 1},
    "pick_and_place": {"attempts": 1},
}
# seconds each case takes (measured), to balance the lanes; others count as 10
SECONDS = {
    "shipped-serve_two_tables": 34,
    "shipped-deliver_drink": 20,
    "shipped-pick_and_place": 18,
    "shipped-head_scan": 14,
    "shipped-operator_confirmed_step": 9,
    "shipped-greeting_wave": 7,
    "docs-greeting_wave": 7,
}
RUN_TIMEOUT = 60.0  # s for one mission: the longest (serve_two_tables) takes about 35
LANE_TIMEOUT = 110.0  # s a lane-1 case waits for the child's verdict


def yaml_blocks(markdown: str) -> list[str]:
    """The contents of the ```yaml fenced blocks of a markdown text, in order."""
    blocks: list[str] = []
    current: list[str] | None = None
    for line in markdown.splitlines(keepends=True):
        if current is None:
            if line.strip() == "```yaml":
                current = []
        elif line.strip() == "```":
            blocks.append("".join(current))
            current = None
        else:
            current.append(line)
    return blocks


def docs_missions() -> dict[str, str]:
    """The ``mission:`` documents among the docs' YAML blocks, by mission name."""
    out: dict[str, str] = {}
    for block in yaml_blocks(DOCS.read_text(encoding="utf-8")):
        doc = yaml.safe_load(block)
        if isinstance(doc, dict) and "mission" in doc:
            assert doc["mission"] not in out, f"two docs examples named {doc['mission']}"
            out[str(doc["mission"])] = block
    return out


DOCS_MISSIONS = docs_missions()
CASES = [f"shipped-{p.stem}" for p in sorted(MISSIONS.glob("*.yaml"))] + [
    f"docs-{name}" for name in sorted(DOCS_MISSIONS)
]


def lanes(cases: list[str]) -> dict[str, int]:
    """Each case's lane: longest first, each to the lane with less time so far."""
    load = [0.0, 0.0]
    out: dict[str, int] = {}
    for case in sorted(cases, key=lambda c: -SECONDS.get(c, 10)):
        lane = 0 if load[0] <= load[1] else 1
        out[case] = lane
        load[lane] += SECONDS.get(case, 10)
    return out


LANES = lanes(CASES)
# lane 0's cases first: lane 1's wait for the child, which has run meanwhile
ORDER = (
    sorted(CASES, key=lambda c: LANES[c])
    if LANE is None
    else [c for c in CASES if LANES[c] == int(LANE)]
)
TEST_NAME = "test_mission_succeeds_on_the_sim"


def run_to_end(live: Live, name: str, params: dict[str, object]) -> None:
    """Start ``name`` and answer its button waits until it ends; it must end SUCCEEDED."""
    ex = live.runtime.executive
    live.start(name, **params)
    answered: set[int] = set()
    deadline = time.monotonic() + RUN_TIMEOUT
    while ex.state is ExecState.RUNNING and time.monotonic() < deadline:
        tip = ex.tree.root.tip() if ex.run else None
        if isinstance(tip, WaitForButton):
            if tip.status is py_trees.common.Status.RUNNING and id(tip) not in answered:
                time.sleep(0.1)  # a press after the wait began, not a button already held
                live.sim.client.inject("button", tip.button, duration=0.3)
                answered.add(id(tip))
        else:
            answered.clear()  # the same leaf may wait again later (a loop): answer it again
        time.sleep(0.02)
    assert ex.state is ExecState.SUCCEEDED, (name, ex.state, ex.last_run)
    assert not ex.context.control_acquired  # every mission hands control back


class OtherLane:
    """The child pytest running lane 1, and its verdicts once it has finished."""

    def __init__(self, cases: list[str], workdir: Path) -> None:
        self.report = workdir / "lane1.xml"
        self.log = workdir / "lane1.log"
        ids = [f"{Path(__file__).relative_to(ROOT)}::{TEST_NAME}[{c}]" for c in cases]
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "-p",
                    "no:randomly",
                    f"--junitxml={self.report}",
                    *ids,
                ],
                cwd=ROOT,
                env={**os.environ, LANE_ENV: "1"},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.verdicts: dict[str, str | None] | None = None

    def verdict(self, case: str) -> str | None:
        """None if ``case`` passed in the child, else why not."""
        if self.verdicts is None:
            try:
                self.proc.wait(LANE_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.verdicts = self._read()
        if case not in self.verdicts:
            return f"lane 1 gave no verdict for {case}; its output:\n{self.tail()}"
        return self.verdicts[case]

    def _read(self) -> dict[str, str | None]:
        if not self.report.exists():
            return {}
        out: dict[str, str | None] = {}
        for tc in ET.parse(self.report).iter("testcase"):
            name = tc.get("name", "")
            case = name[len(TEST_NAME) + 1 : -1] if name.startswith(TEST_NAME + "[") else name
            problem = next((e for e in tc if e.tag in ("failure", "error", "skipped")), None)
            out[case] = None if problem is None else f"{problem.get('message')}\n{problem.text}"
        return out

    def tail(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-4000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module", autouse=True)
def other_lane(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OtherLane | None]:
    """In the first process, start lane 1 for the lane-1 cases this run selected."""
    selected = [
        item.callspec.id
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.module is request.module
        and item.originalname == TEST_NAME
    ]
    cases = [c for c in selected if LANE is None and LANES.get(c) == 1]
    if not cases:
        yield None
        return
    lane = OtherLane(cases, tmp_path_factory.mktemp("lane1"))
    try:
        yield lane
    finally:
        lane.close()


@pytest.fixture
def case_live(request: pytest.FixtureRequest) -> Live | None:
    """The ``live`` fixture (a sim process and a runtime) for a case this process runs."""
    case = request.node.callspec.id
    if LANE is None and LANES[case] == 1:
        return None  # the child runs it
    live: Live = request.getfixturevalue("live")
    return live


@pytest.mark.parametrize("case", ORDER)
def test_mission_succeeds_on_the_sim(
    case: str, case_live: Live | None, other_lane: OtherLane | None, tmp_path: Path
) -> None:
    if case_live is None:
        assert other_lane is not None
        problem = other_lane.verdict(case)
        assert problem is None, f"in lane 1: {problem}"
        return
    source, name = case.split("-", 1)
    live = case_live
    if source == "docs":
        root = tmp_path / "missions"
        for folder in ("poses", "gestures", "subtrees"):
            shutil.copytree(MISSIONS / folder, root / folder)
        (root / f"{name}.yaml").write_text(DOCS_MISSIONS[name], encoding="utf-8")
        store = MissionStore(root, live.store.profile)
        assert store.validate(name) == []
        live = replace(live, store=store)
    run_to_end(live, name, SHORT.get(name, {}))


def test_the_docs_have_missions_to_run() -> None:
    assert {"greeting_wave", "drive_to_table"} <= set(DOCS_MISSIONS)  # "A first mission"
    assert set(LANES.values()) == {0, 1}
