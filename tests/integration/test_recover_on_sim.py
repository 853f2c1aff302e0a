"""Recovery from a checkpoint after a crash, against the simulated Atom (issue 23, 2).

The real service and the sim run as processes on a leased domain, on a copy of the shipped
missions (the test edits one). ``deliver_drink`` is killed (SIGKILL) once before any
checkpoint and once after "Cup in hand" is in its record; after each restart:

- ``atom-executive recover`` (the CLI, unsigned) lists both runs, one a line: the first "no
  checkpoint: cannot be recovered", the second with its last checkpoint "Cup in hand";
- recovering the first is refused saying it passed no checkpoint; recovering the second
  while its mission file differs on disk is refused naming the file;
- with the file as it was, ``recover RUN_ID`` (signed) starts a new run that takes control
  back, drives on to the table, waits for the guest (button A through the sim) and SUCCEEDS;
  in the sim's record every navigation goal from the kill on goes to the table's tag before
  any to the bar's: the base is never sent back to the bar to fetch the cup again.

After a pose library edit (issue 35, 5; it was taken silently, the arm holding the cup sent
to the new pose): ``right_carry``, which the recovered part moves to, changed and reloaded:
``recover`` is refused saying how, and the sim's record has no motion command from then;
``right_reach_forward`` (before the checkpoint) changed instead: recovered, the library file
named in the reply and in the new run's record, and the arm moves again.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from executive.harness.stack import ROOT, Stack, running_stack
from executive.records.checkpoints import read_run
from executive.robots.atom.sim.record import Recording

pytestmark = pytest.mark.dds

BAR, TABLE = 3, 4


def _missions(into: Path) -> Path:
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(ROOT / "missions" / folder, into / folder)
    shutil.copy(ROOT / "missions" / "deliver_drink.yaml", into / "deliver_drink.yaml")
    return into


def _start(stack: Stack) -> str:
    reply = stack.client.request(
        "start", {"mission": "deliver_drink", "params": {"table_tag": TABLE}}
    )
    assert reply.code == 0, reply.message
    return reply.message  # the run id


def _kill_and_restart(stack: Stack) -> float:
    """SIGKILL the service, start it again, wait until it hears the robot; when killed."""
    killed = time.monotonic()
    stack.procs["executive"].kill()
    stack.procs["executive"].wait(10)
    stack.start_service()
    return killed


def _checkpointed(record: Path) -> bool:
    return record.exists() and read_run(record).checkpoint is not None


def _cli(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "executive.cli", *args, "--timeout", "10"],
        env=stack.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _status(stack: Stack, predicate: Any, timeout: float) -> Any:
    status = stack.client.wait_status(predicate, timeout)
    assert status is not None, stack.client.status()
    return status


@pytest.mark.timeout(480)  # two restarts and a delivery on a loaded machine
def test_deliver_drink_killed_with_the_cup_in_hand_is_recovered_to_the_table(
    tmp_path: Path,
) -> None:
    missions = _missions(tmp_path / "missions")
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config(missions_dir=str(missions))
        stack.start_sim(record=True)
        stack.start_service()

        # a run killed before its checkpoint: nothing to go on from
        early = _start(stack)
        _status(stack, lambda s: "Drive to the bar" in s.active_node, 30)
        _kill_and_restart(stack)

        run_id = _start(stack)
        record = stack.data_dir / "runs" / f"{run_id}.jsonl"
        assert stack.wait_for(lambda: _checkpointed(record), 120, every=0.05), stack.client.status()
        checkpoint = read_run(record).checkpoint
        assert checkpoint is not None and checkpoint["checkpoint"] == "Cup in hand"
        assert checkpoint["params"] == {"table_tag": TABLE}
        killed = _kill_and_restart(stack)

        listing = _cli(stack, "recover")
        assert listing.returncode == 0, listing.stderr
        lines = listing.stdout.splitlines()
        # a run a line: the reply's line breaks were printed as a literal "\n" (issue 35, 7)
        assert lines[0] == "2 runs interrupted by a crash:" and "\\n" not in listing.stdout
        assert any(early in x and "no checkpoint: cannot be recovered" in x for x in lines), (
            listing.stdout
        )
        assert any(run_id in x and "last checkpoint 'Cup in hand'" in x for x in lines), (
            listing.stdout
        )

        refused = stack.client.request("recover", {"run_id": early})
        assert refused.code != 0
        assert "passed no checkpoint: it cannot be recovered" in refused.message, refused.message

        mission_file = missions / "deliver_drink.yaml"
        original = mission_file.read_bytes()
        mission_file.write_bytes(original.replace(b"timeout: 90", b"timeout: 91"))
        changed = stack.client.request("recover", {"run_id": run_id})
        assert changed.code != 0
        assert changed.message == f"refused: mission file changed since the run: {mission_file}"
        mission_file.write_bytes(original)

        unsigned = _cli(stack, "recover", run_id)
        assert unsigned.returncode != 0 and "refused" in unsigned.stdout, unsigned

        asked = time.monotonic()
        reply = stack.client.request("recover", {"run_id": run_id})
        assert reply.code == 0, reply.message
        new_run = json.loads(reply.payload)["run_id"]
        assert new_run != run_id
        _status(stack, lambda s: s.run_id == new_run and "Wait for button A" in s.active_node, 120)
        stack.sim.inject("button", "A", duration=0.5)
        done = _status(stack, lambda s: s.state != "RUNNING", 120)  # run_id "" once it ended
        assert done.state == "SUCCEEDED", (done.state, done.last_reason)
        print(
            f"\nrecovered run {new_run}: SUCCEEDED {time.monotonic() - asked:.1f} s after recover"
        )

        again = stack.client.request("recover", {"run_id": run_id})
        assert again.code != 0 and f"already recovered (run {new_run})" in again.message
        recovered = read_run(stack.data_dir / "runs" / f"{new_run}.jsonl")
        assert recovered.started is not None
        assert recovered.started["recovered_from"] == run_id
        assert recovered.started["recovered_at"] == "Cup in hand"
        assert recovered.checkpoint is not None  # passed again: a second crash goes on too

        stack.stop("sim")
        recording = Recording.load(stack.record_path)
        goals = [
            int(e.fields.get("target_id", -1))
            for e in recording.event_commands("amr_cmd", after=killed)
            if e.fields.get("command_type") == "MOVE_TO_TAG"
        ]
        assert goals and goals[0] == TABLE, goals  # on to the table, not back to the bar
        assert BAR not in goals[: goals.index(TABLE)], goals
        before = [
            int(e.fields.get("target_id", -1))
            for e in recording.event_commands("amr_cmd")
            if e.fields.get("command_type") == "MOVE_TO_TAG" and e.t < killed
        ]
        assert BAR in before, before  # it had driven to the bar for the cup (then maybe on)
        upper = [
            e.fields.get("flag")
            for e in recording.event_commands("switch_upper_control", after=killed)
        ]
        assert upper[:2] == [False, True], upper  # released at the restart, taken back


def _edit_pose(missions: Path, pose: str, joint: str, before: str, after: str) -> None:
    path = missions / "poses" / "arms.yaml"
    text = path.read_text()
    at = text.index(f"{joint}: {before}\n", text.index(f"\n  {pose}:\n"))
    path.write_text(text[:at] + f"{joint}: {after}\n" + text[at + len(f"{joint}: {before}\n") :])


@pytest.mark.timeout(300)
def test_recover_after_a_pose_edit_is_refused_where_the_recovered_part_reaches_it(
    tmp_path: Path,
) -> None:
    missions = _missions(tmp_path / "missions")
    arms = missions / "poses" / "arms.yaml"
    original = arms.read_bytes()
    with running_stack(tmp_path / "stack") as stack:
        stack.write_config(missions_dir=str(missions))
        stack.start_sim("--amr-speed", "3.0", record=True)
        stack.start_service()
        run_id = _start(stack)
        record = stack.data_dir / "runs" / f"{run_id}.jsonl"
        assert stack.wait_for(lambda: _checkpointed(record), 120, every=0.05), stack.client.status()
        killed = _kill_and_restart(stack)
        client = stack.client

        _edit_pose(missions, "right_carry", "right_elbow_pitch", "0.1", "0.15")
        reloaded = client.request("reload")
        assert reloaded.code == 0 and reloaded.message.startswith("1 missions loaded"), reloaded
        asked = time.monotonic()
        refused = client.request("recover", {"run_id": run_id})
        assert refused.code != 0, refused.message
        assert refused.message == (
            "refused: the recovered part moves to pose 'right_carry' ('Move to pose "
            "right_carry'), changed since the run: right_elbow_pitch 0.1 -> 0.15 "
            f"(library changed: {arms.resolve()})"
        )
        time.sleep(1.0)  # what a recovered run would send is on the wire well within this
        assert client.status().state == "IDLE"

        arms.write_bytes(original)
        _edit_pose(missions, "right_reach_forward", "right_elbow_pitch", "0.45", "0.47")
        assert client.request("reload").code == 0
        accepted = time.monotonic()
        reply = client.request("recover", {"run_id": run_id})
        assert reply.code == 0, reply.message
        assert f"pose library changed since the run: {arms.resolve()}" in reply.message
        new_run = json.loads(reply.payload)["run_id"]
        _status(stack, lambda s: "Drive to the table" in s.active_node, 120)  # arm carried
        assert client.request("stop").code == 0
        stack.stop("executive")
        stack.stop("sim")
    recording = Recording.load(stack.record_path)
    assert recording.motion_commands(killed - 10, before=killed, topic="upper_cmd"), "not moving"
    recording.assert_no_motion_after(asked, before=accepted, clock="sent")
    assert recording.motion_commands(accepted, topic="upper_cmd"), "the recovered run moved nothing"
    begun = read_run(stack.data_dir / "runs" / f"{new_run}.jsonl").started
    assert begun is not None and begun["library_changed"] == [str(arms.resolve())], begun
