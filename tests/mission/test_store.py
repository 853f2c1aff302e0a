"""The service's mission store: what it lists, what it skips and why, and when a reload
is refused (a mission it can run now would break) or accepted."""

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
    assert message == "2 missions loaded, 1 skipped (not valid for adam-pro)"
    assert store.names() == ["arms_wave", "hands_open_close"]


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


def test_a_new_file_that_does_not_validate_is_skipped_not_a_refusal(mixed: Path) -> None:
    store = MissionStore(mixed, ADAM)
    (mixed / "broken.yaml").write_text("mission: broken\ntree:\n  sequence: []\n")
    ok, message = store.reload()
    assert ok, message
    assert store.names() == ["arms_wave", "hands_open_close"]
    assert sorted(store.skipped()) == ["broken", "greeting_wave"]
    assert store.validate("broken") and store.build("broken", {})[0] is None
