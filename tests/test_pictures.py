"""``atom-executive pose preview`` and ``atom-executive timeline``: the PNGs are made, and
show what they should (two poses are two different pictures), through the real CLI.

The profile's joint map (``body:``, the one place it is written) is held to the vendor
URDF as MuJoCo loads it: every body joint maps to one of its hinges whose limits contain
the profile's (the profile's are the intersection of the vendor's two sources), and no
hinge of the model is left unmapped. A robot with a model but no shipped poses (the
Fourier GR-3): tests/test_gr3_body.py.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imread

from executive import cli
from executive.operator.posepreview import Robot
from executive.seam.body import model_path
from executive.seam.profile import load_profile

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_URDF = ROOT.parent / "shared" / "reference" / "atom.urdf"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("profile_name", ["atom-sdk", "atom-seed001"])
def test_every_body_joint_maps_to_a_urdf_joint_whose_limits_contain_it(
    profile_name: str,
) -> None:
    profile = load_profile(profile_name)
    body = Robot(profile).body
    m, hinge = body.model, body.mujoco.mjtJoint.mjJNT_HINGE
    joint_at = {int(m.jnt_qposadr[j]): j for j in range(m.njnt)}
    mapped = []
    for name, joint in profile.joints.items():
        if joint.group == "hands":
            assert name not in body.qpos_of  # the URDF has no fingers
            continue
        j = joint_at[body.qpos_of[name]]  # the load refuses a joint the model lacks
        lower, upper = m.jnt_range[j]
        assert m.jnt_type[j] == hinge and m.jnt_limited[j], name
        assert lower - 1e-4 <= joint.lower and joint.upper <= upper + 1e-4, name
        mapped.append(j)
    assert sorted(mapped) == [j for j in range(m.njnt) if m.jnt_type[j] == hinge]  # 1:1


def test_the_shipped_urdf_is_the_vendors_with_a_note() -> None:
    shipped = model_path("atom.urdf").read_text()
    assert "Apache-2.0" in shipped.split("<robot", 1)[0]  # source and license, on top
    if not REFERENCE_URDF.is_file():
        pytest.skip("no shared/reference beside the repository")
    ours = shipped.split("-->\n", 1)[1]  # our note is the first comment
    assert ours == REFERENCE_URDF.read_text().split("\n", 1)[1]


def _pixels(path: Path) -> np.ndarray[Any, Any]:
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 10_000
    return np.asarray(imread(path))


def _differ(a: Path, b: Path) -> float:
    """The share of pixels that differ in the drawing (not the title, not the footnote)."""
    pa, pb = _pixels(a), _pixels(b)
    assert pa.shape == pb.shape
    rows = slice(int(0.1 * pa.shape[0]), int(0.82 * pa.shape[0]))
    return float(np.mean(np.any(np.abs(pa[rows] - pb[rows]) > 0.05, axis=-1)))


def test_two_poses_are_two_different_pictures(tmp_path: Path) -> None:
    for name in ("right_reach_forward", "look_left", "home"):
        code = cli.main(
            [
                "pose",
                "preview",
                name,
                "--missions",
                str(ROOT / "missions"),
                "-o",
                str(tmp_path / f"{name}.png"),
            ]
        )
        assert code == 0
    # the arm, or only the head, moved: either shows (a few thousand pixels of 1.3 M)
    assert _differ(tmp_path / "right_reach_forward.png", tmp_path / "home.png") > 0.002
    assert _differ(tmp_path / "look_left.png", tmp_path / "home.png") > 0.0005


def test_two_gestures_are_two_different_pictures(tmp_path: Path) -> None:
    for name in ("right_open", "right_grasp_cup"):
        out = tmp_path / f"{name}.png"
        assert (
            cli.main(
                ["pose", "preview", name, "--missions", str(ROOT / "missions"), "-o", str(out)]
            )
            == 0
        )
    assert _differ(tmp_path / "right_open.png", tmp_path / "right_grasp_cup.png") > 0.002


def test_an_unknown_name_is_refused_with_the_known_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["pose", "preview", "no_such_pose", "--missions", str(ROOT / "missions")])
    assert code == 1
    err = capsys.readouterr().err  # stdout is for the PNG's path only
    assert "no pose or gesture 'no_such_pose'" in err and "atom-executive poses" in err


def test_a_preview_from_another_directory_says_to_give_missions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library is ``./missions`` unless told: from elsewhere it said "no pose or gesture
    'home' in /tmp/missions", as if the name were wrong (issue 35, 7)."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["pose", "preview", "home"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        f"atom-executive pose preview: {tmp_path.resolve() / 'missions'} has no poses/ or "
        "gestures/: give the mission directory with --missions DIR (default: ./missions)"
    )
    assert not (tmp_path / "home.png").exists()


def test_a_preview_for_another_robot_is_refused_not_drawn_as_the_atom(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It drew the Atom's URDF with the Adam's joints dropped, silently. The Adam has no
    model we may ship: the profile says why, and so does the answer."""
    out = tmp_path / "rest.png"
    missions = str(ROOT / "missions" / "adam")
    code = cli.main(
        ["pose", "preview", "rest", "--profile", "adam-pro", "--missions", missions, "-o", str(out)]
    )
    assert code == 1 and not out.exists()
    err = capsys.readouterr().err
    assert "profile adam-pro has no body model to draw: the PND Adam has no licensed model" in err


def _record(runs: Path, run_id: str) -> None:
    """A JSON-lines run record as executive.records.runrecord writes it."""
    slot = "Atom/Priorities/Mission Slot"
    events = [
        {"ts": 100.0, "event": "state", "state": "RUNNING", "mission": "wave"},
        {"ts": 100.1, "event": "node", "node": f"{slot}/wave", "status": "RUNNING"},
        {"ts": 100.1, "event": "node", "node": f"{slot}/wave/Raise", "status": "RUNNING"},
        {"ts": 101.5, "event": "node", "node": f"{slot}/wave/Raise", "status": "SUCCESS"},
        {"ts": 101.5, "event": "node", "node": f"{slot}/wave/Wave", "status": "RUNNING"},
        {"ts": 102.0, "event": "node", "node": f"{slot}/wave/Wave", "status": "INVALID"},
        {
            "ts": 102.0,
            "event": "state",
            "state": "SAFE_STOP",
            "mission": "wave",
            "result": "SAFE_STOP",
            "reason": "estop: emergency stop: soft_emergency_triggered",
            "safety": ["estop: emergency stop: soft_emergency_triggered"],
        },
    ]
    runs.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(e) + "\n" for e in events) + '{"ts": 103, "ev'  # a torn line
    (runs / f"{run_id}.jsonl").write_text(text)


def test_the_timeline_of_a_json_lines_record(tmp_path: Path) -> None:
    from executive.operator.timeline import load, resolve

    _record(tmp_path / "runs", "abc123")
    out = tmp_path / "abc.png"
    assert cli.main(["timeline", "abc123", "--data-dir", str(tmp_path), "-o", str(out)]) == 0
    _pixels(out)
    data = load(resolve("latest", tmp_path))
    assert data.mission == "wave" and data.result == "SAFE_STOP"
    assert [s for _, s in data.nodes["Atom/Priorities/Mission Slot/wave/Raise"]] == [
        "RUNNING",
        "SUCCESS",
    ]
    assert data.safety and data.safety[0][2] == ["estop: emergency stop: soft_emergency_triggered"]


def test_the_timeline_of_a_run_that_is_not_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["timeline", "nope", "--data-dir", str(tmp_path)]) == 1
    assert "nope" in capsys.readouterr().out


@pytest.mark.parametrize("suffix", [".jsonl", ".mcap"])
def test_the_timeline_of_a_file_that_holds_no_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    """300 random bytes: it exited 0 with an empty "? run" picture (issue 35, 7)."""
    garbage = tmp_path / f"abc123{suffix}"
    garbage.write_bytes(np.random.default_rng(35).integers(0, 256, 300, dtype=np.uint8).tobytes())
    out = tmp_path / "garbage.png"
    assert cli.main(["timeline", str(garbage), "-o", str(out)]) == 1
    said = capsys.readouterr().out
    assert f"{garbage}: not a run's" in said and "nothing of a run in it" in said, said
    assert not out.exists()


def _base_run(data_dir: Path, run_id: str, positions: list[tuple[float, float, float]]) -> Path:
    """A run's MCAP file as the service writes it, whose ``/robot/base`` comes from decoded
    ``AMRState_`` records (``positions``) through the Atom adapter's snapshot and the real
    channel encoder."""
    from executive.records.mcaprecord import McapRecorder
    from executive.records.runchannels import RunChannels, catalogue
    from tests.test_run_channels import AmrExecutive

    profile = load_profile()
    rec = McapRecorder(data_dir, catalogue(profile).values())
    ex = AmrExecutive()
    channels = RunChannels(ex, profile, [rec])  # type: ignore[arg-type]  # a test double
    rec.begin(run_id, {}, time.time_ns())  # what on_change hands the sinks at RUNNING
    for i, position in enumerate(positions):
        ex.amr(position, 100.0 + i)
        channels.on_tick(ex)  # type: ignore[arg-type]
    channels.close()
    assert channels.problems() == []
    return rec.path(run_id)


def test_the_timeline_draws_the_base_path_from_the_amr_position(tmp_path: Path) -> None:
    from executive.operator.timeline import NO_POSE, base_path, draw, figure, load, resolve

    square = [(0.0, 0.0, 0.0), (2.0, 0.0, 1.57), (2.0, 1.5, 3.14), (0.0, 1.5, -1.57)]
    path = _base_run(tmp_path, "drive", square)
    assert resolve("drive", tmp_path) == path
    data = load(path)
    _pixels(draw(data, tmp_path / "drive.png"))
    assert base_path(data) == [(x, y) for x, y, _ in square]
    fig = figure(data)
    try:
        panel = fig.axes[-1]
        assert panel.get_title(loc="left").startswith("base path")
        xs, ys = panel.get_lines()[0].get_data()
        assert list(xs) == [0.0, 2.0, 2.0, 0.0] and list(ys) == [0.0, 0.0, 1.5, 1.5]
        assert NO_POSE not in [t.get_text() for t in panel.texts]
        # the existing panels are all still there: nodes, joints, base status (+ its twin)
        titles = [ax.get_title(loc="left") for ax in fig.axes]
        assert titles[0] == "nodes" and titles[1].startswith("joints")
        assert any(t.startswith("base: navigation status") for t in titles)
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_the_timeline_says_when_the_run_has_no_base_pose(tmp_path: Path) -> None:
    """An Atom whose ``AMRState_.position`` was never finite: the path panel says so."""
    from executive.operator.timeline import NO_POSE, base_path, draw, figure, load

    nan = float("nan")
    data = load(_base_run(tmp_path, "lost", [(nan, nan, nan), (nan, 0.0, 0.0)]))
    assert data.base and base_path(data) == []
    fig = figure(data)
    try:
        assert [t.get_text() for t in fig.axes[-1].texts] == [NO_POSE]
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    _pixels(draw(data, tmp_path / "lost.png"))


def test_a_timeline_of_a_base_that_stood_still_draws_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Its path panel's fixed square limits with equal scales by data limits: matplotlib said
    "Ignoring fixed x limits ..." (and y) on stderr with every such picture (issue 35, 7)."""
    from executive.operator.timeline import figure, load

    data = load(_base_run(tmp_path, "still", [(0.0, 0.0, 0.0), (0.1, 0.0, 0.0)]))
    with caplog.at_level(logging.WARNING):
        out = tmp_path / "still.png"
        assert cli.main(["timeline", str(data.source), "-o", str(out)]) == 0
    _pixels(out)
    assert not [r.getMessage() for r in caplog.records if "Ignoring" in r.getMessage()]
    fig = figure(data)
    try:
        panel = fig.axes[-1]
        assert panel.get_xlim() == (-0.45, 0.55) and panel.get_ylim() == (-0.5, 0.5)
        assert panel.get_aspect() == 1.0
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
