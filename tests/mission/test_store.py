"""The service's mission store: what it lists, what it skips and why, and when a reload
is refused (a real error in a mission: an unknown pose, a file that is not YAML) or
accepted (another robot's missions in the same directory are skipped, not problems)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from executive.mission.store import MissionStore
from executive.robots.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
ADAM = load_profile("adam-pro")


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """The Adam's two missions and their libraries, and one of the Atom's."""
    for item in (ROOT / "missions" / "adam").iterdir():
        copy = shutil.copytree if item.is_dir() else shutil.copy
        copy(item, tmp_path / item.name)
    shutil.copy(ROOT / "missions" / "greeting_wave.yaml", tmp_path / "greeting_wave.yaml")
    return tmp_path


def test_a_directory_shared_with_another_robot_lists_its_own_and_reloads(mixed: Path) -> None:
    store = MissionStore(mixed, ADAM)
    assert store.names() == ["arms_wave", "hands_open_close"]
    assert list(store.skipped()) == ["greeting_wave"]
    assert any("capability" in why for why in store.skipped()["greeting_wave"])
    # every reload after the first was refused: the Atom's mission counted as a problem
    ok, message = store.reload()
    assert ok, message
    assert message == "2 missions loaded, 1 skipped (another robot's: not valid for adam-pro)"
    assert store.names() == ["arms_wave", "hands_open_close"]
    assert list(store.skipped()) == ["greeting_wave"]
    assert store.validate("greeting_wave") == store.skipped()["greeting_wave"]
    assert store.build("greeting_wave", {})[0] is None
    ok, message = store.reload()  # and every one after it
    assert ok, message


def test_more_of_another_robots_missions_reload_too(mixed: Path) -> None:
    store = MissionStore(mixed, ADAM)
    for name in ("head_scan", "deliver_drink"):
        shutil.copy(ROOT / "missions" / f"{name}.yaml", mixed / f"{name}.yaml")
    ok, message = store.reload()
    assert ok, message
    assert store.names() == ["arms_wave", "hands_open_close"]
    assert sorted(store.skipped()) == ["deliver_drink", "greeting_wave", "head_scan"]


def test_a_reload_that_breaks_a_runnable_mission_is_refused_and_keeps_it(mixed: Path) -> None:
    store = MissionStore(mixed, ADAM)
    good = (mixed / "arms_wave.yaml").read_text()
    (mixed / "arms_wave.yaml").write_text(good.replace("wave_out", "no_such_pose", 1))
    ok, message = store.reload()
    assert not ok and "refused" in message and "arms_wave" in message
    assert "no_such_pose" in message
    assert store.names() == ["arms_wave", "hands_open_close"]  # kept what it had
    root, errors = store.build("arms_wave", {})
    assert root is not None and errors == []  # from the loaded snapshot, not the bad file


ADAM_MISSION = """\
mission: {name}
tree:
  sequence:
    children:
      - move_joints:
          pose: {pose}
          timeout: 5
"""


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (ADAM_MISSION.format(name="stray", pose="no_such_pose"), "unknown pose 'no_such_pose'"),
        ("mission: stray\ntree: [unclosed\n", "stray.yaml"),  # not YAML
        ("mission: stray\ntree:\n  sequence: []\n", "stray.yaml"),
    ],
    ids=["unknown-pose", "not-yaml", "empty-sequence"],
)
def test_a_new_file_with_a_real_error_refuses_the_reload(
    mixed: Path, text: str, error: str
) -> None:
    store = MissionStore(mixed, ADAM)
    (mixed / "stray.yaml").write_text(text)
    ok, message = store.reload()
    assert not ok and message.startswith("refused:") and "stray" in message, message
    assert error in message
    assert "greeting_wave" not in message  # the other robot's mission is no problem
    assert store.names() == ["arms_wave", "hands_open_close"]  # kept what it had
    assert list(store.skipped()) == ["greeting_wave"]
    (mixed / "stray.yaml").write_text(ADAM_MISSION.format(name="stray", pose="wave_out"))
    ok, message = store.reload()  # fixed: accepted, and the new mission listed
    assert ok, message
    assert store.names() == ["arms_wave", "hands_open_close", "stray"]


def test_an_atom_store_refuses_a_reload_with_an_unknown_pose(tmp_path: Path) -> None:
    """The same rule for the Atom's store: its mission reloads, and a pose its library
    lacks in it refuses the reload."""
    atom = load_profile()
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(ROOT / "missions" / folder, tmp_path / folder)
    shutil.copy(ROOT / "missions" / "greeting_wave.yaml", tmp_path / "greeting_wave.yaml")
    store = MissionStore(tmp_path, atom)
    assert store.names() == ["greeting_wave"]
    ok, message = store.reload()
    assert ok and message == "1 missions loaded", message
    wave = (tmp_path / "greeting_wave.yaml").read_text()
    (tmp_path / "greeting_wave.yaml").write_text(wave.replace("pose: home", "pose: hom", 1))
    ok, message = store.reload()
    assert not ok and "unknown pose 'hom'" in message, message
    assert store.names() == ["greeting_wave"]


def test_the_first_load_takes_the_directory_and_reports_its_errors(mixed: Path) -> None:
    (mixed / "stray.yaml").write_text(ADAM_MISSION.format(name="stray", pose="no_such_pose"))
    store = MissionStore(mixed, ADAM)  # the service starts on what it can run
    assert store.names() == ["arms_wave", "hands_open_close"]
    assert sorted(store.skipped()) == ["greeting_wave", "stray"]
    assert any("unknown pose 'no_such_pose'" in why for why in store.validate("stray"))
    ok, message = store.reload()  # until the file is fixed, a reload is refused
    assert not ok and "stray" in message and "greeting_wave" not in message, message
