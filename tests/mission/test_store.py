"""The service's mission store: what it lists, what it skips and why. A reload follows
the first load's rule (the service's start): a mission with an error is skipped and
reported, another robot's is skipped and counted apart, the rest is listed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from executive.mission.store import MissionStore
from executive.seam.profile import load_profile

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


def _as_a_start_would(store: MissionStore) -> None:
    """What a reload left is what a fresh store (the service's start) loads from the same
    directory: the same missions listed, the same skipped, for the same reasons."""
    fresh = MissionStore(store.directory, store.profile)
    assert store.names() == fresh.names()
    assert store.skipped() == fresh.skipped()


def test_a_reload_that_breaks_a_runnable_mission_skips_and_reports_it(mixed: Path) -> None:
    """As a restart would: the broken file is skipped and said at once, the rest stays."""
    store = MissionStore(mixed, ADAM)
    good = (mixed / "arms_wave.yaml").read_text()
    (mixed / "arms_wave.yaml").write_text(good.replace("wave_out", "no_such_pose", 1))
    ok, message = store.reload()
    assert ok and "1 skipped with errors (arms_wave)" in message, message
    assert "no_such_pose" in message
    assert store.names() == ["hands_open_close"]
    assert store.build("arms_wave", {})[0] is None
    _as_a_start_would(store)


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
def test_a_new_valid_mission_loads_beside_a_new_file_with_an_error(
    mixed: Path, text: str, error: str
) -> None:
    """Issue 25: the reload refused the whole directory for the bad file, so the new valid
    mission needed a restart; a start skipped the bad file and reported it. One rule now."""
    store = MissionStore(mixed, ADAM)
    (mixed / "stray.yaml").write_text(text)
    (mixed / "new.yaml").write_text(ADAM_MISSION.format(name="new", pose="wave_out"))
    ok, message = store.reload()
    assert ok and "3 missions loaded, 1 skipped with errors (stray): " in message, message
    assert error in message and "greeting_wave" not in message  # counted apart
    assert message.endswith("1 skipped (another robot's: not valid for adam-pro)"), message
    assert store.names() == ["arms_wave", "hands_open_close", "new"]
    assert sorted(store.skipped()) == ["greeting_wave", "stray"]
    _as_a_start_would(store)
    (mixed / "stray.yaml").write_text(ADAM_MISSION.format(name="stray", pose="wave_out"))
    ok, message = store.reload()  # fixed: listed
    assert ok, message
    assert store.names() == ["arms_wave", "hands_open_close", "new", "stray"]
    _as_a_start_would(store)


def test_an_atom_store_reloads_skipping_a_mission_with_an_unknown_pose(tmp_path: Path) -> None:
    """The same rule for the Atom's store."""
    atom = load_profile()
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(ROOT / "missions" / folder, tmp_path / folder)
    shutil.copy(ROOT / "missions" / "head_scan.yaml", tmp_path / "head_scan.yaml")
    store = MissionStore(tmp_path, atom)
    assert store.names() == ["head_scan"]
    ok, message = store.reload()
    assert ok and message == "1 missions loaded", message
    scan = (tmp_path / "head_scan.yaml").read_text()
    (tmp_path / "head_scan.yaml").write_text(scan.replace("pose: head_center", "pose: hed", 1))
    ok, message = store.reload()
    assert ok and "unknown pose 'hed'" in message, message
    assert store.names() == []
    _as_a_start_would(store)


def test_the_first_load_and_a_reload_skip_and_report_alike(mixed: Path) -> None:
    (mixed / "stray.yaml").write_text(ADAM_MISSION.format(name="stray", pose="no_such_pose"))
    store = MissionStore(mixed, ADAM)  # the service starts on what it can run
    assert store.names() == ["arms_wave", "hands_open_close"]
    assert sorted(store.skipped()) == ["greeting_wave", "stray"]
    assert any("unknown pose 'no_such_pose'" in why for why in store.validate("stray"))
    ok, message = store.reload()
    assert ok and "(stray)" in message, message
    _as_a_start_would(store)


def test_a_directory_that_is_gone_refuses_the_reload_and_keeps_what_was_loaded(
    mixed: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    store = MissionStore(mixed, ADAM)
    moved = tmp_path_factory.mktemp("moved") / "missions"
    mixed.rename(moved)
    ok, message = store.reload()
    assert not ok and "not a directory" in message
    assert store.names() == ["arms_wave", "hands_open_close"]
