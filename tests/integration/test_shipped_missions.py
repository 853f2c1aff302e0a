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

The other robots' shipped missions (``missions/adam``, ``missions/grx``, ``missions/aurora``)
run through the real service as a process against their own sim process, one fresh sim and
service per robot and that robot's missions back to back on it, with the same shortest
parameters; each must end
SUCCEEDED, and every mission file of the robot's directory must be listed by the service
(none skipped). Nothing ran them before issue 25, and the GRX's ``wave`` always failed.

Two lanes: the missions' own motions take about 110 s in all (their durations are real
time), too long for one after the other. The cases are split by their expected time into
two lanes of about a minute: this process runs lane 0, and a second pytest process, started
when the module starts (``ATOM_MISSION_LANE=1``), runs lane 1 at the same time on its own
leased domain (py_trees' blackboard is one per process, so two runtimes need two). Each
lane-1 case here reports the child's verdict for the same test id, failure text included.
"""

from __future__ import annotations

import json
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
from executive.harness.aurora import start as start_aurora
from executive.harness.grx import start as start_grx
from executive.harness.stack import Stack, running_stack
from executive.mission.store import MissionStore
from executive.robots.adam.sim.client import client_for
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
    "arms_wave": {"waves": 1},
    "hands_open_close": {"cycles": 1},
    "walk_square": {"leg_seconds": 0.3, "turn_seconds": 0.3},
    "arm_wave": {"waves": 1},
    "arm_hand_walk": {"walk_seconds": 0.5},
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
        if isinstance(doc, dict) and "mission" in doc and "test" not in doc:  # (not a scenario)
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


# -- the other robots, through the service -----------------------------------------------

OTHER_ROBOTS = ("adam", "grx", "aurora")
OTHER_RUN_TIMEOUT = 40.0  # s for one mission (arms_wave with one wave takes about 12)


def run_on_service(stack: Stack, robot: str, folder: Path) -> list[str]:
    """Every mission file of ``folder`` (listed by the service: none skipped), started back
    to back with its shortest parameters; what did not end SUCCEEDED, with its reason."""
    client = stack.client
    listed = json.loads(client.request("list_missions").payload)
    assert listed == sorted(p.stem for p in folder.glob("*.yaml")), (robot, listed)
    problems = []
    started = int(client.status().runs)
    for name in listed:
        params = SHORT.get(name, {})
        reply = client.request("start", {"mission": name, "params": params})
        if reply.code != 0:
            problems.append(f"{robot} {name}: start refused: {reply.message}")
            continue
        started += 1  # the status' run counter says which run it is about
        done = client.wait_status(
            lambda s, n=started: int(s.runs) >= n and s.state not in ("RUNNING", "IDLE"),
            OTHER_RUN_TIMEOUT,
        )
        status = client.status()
        if done is None or done.state != "SUCCEEDED":
            problems.append(f"{robot} {name}: {status.state}: {status.last_reason}")
            if status.safety == "SAFE_STOP":
                client.request("reset")
    return problems


@pytest.mark.parametrize("robot", OTHER_ROBOTS)
def test_every_shipped_mission_of_the_robot_succeeds_on_its_sim(robot: str, tmp_path: Path) -> None:
    with running_stack(tmp_path / robot) as stack:
        if robot == "adam":
            folder = MISSIONS / "adam"
            stack.write_config(profile="adam-pro", interface="sdk-1.2", missions_dir=str(folder))

            def adam_ready(st: Stack, pid: int) -> bool:
                return client_for(st.dds).wait_status(lambda s: s.pid == pid, 30) is not None

            stack.start_sim(
                *("--profile", "adam-pro", "--interface", "sdk-1.2", "--seed", "2"),
                sim_ready=adam_ready,
            )
            stack.start_service()
            problems = run_on_service(stack, robot, folder)
        elif robot == "aurora":
            folder = MISSIONS / "aurora"
            aurora = start_aurora(stack)
            try:
                problems = run_on_service(stack, robot, folder)
            finally:
                aurora.close()
        else:
            folder = MISSIONS / "grx"
            sim = start_grx(stack, task_seconds=0.2)
            try:
                problems = run_on_service(stack, robot, folder)
                status = sim.cmd("status")
            finally:
                sim.close()
            # wave's component reached the robot, and it ends standing, not walking
            assert status["component_state"] != 0, status
            assert status["accepted"][-1] == 960, status  # ready
            assert status["axes"] == [[0.0, 0.0], [0.0, 0.0]], status
    assert not problems, "\n".join(problems)
