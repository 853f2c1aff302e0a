"""Tags the robot's map lacks: the profile's ``tags``, validation's warning, the sim's map.

Reproduces issue 11: ``serve_two_tables`` sent the base to tags 7 and 9, which the
simulated site does not have, and ``validate`` said nothing.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest
import yaml

from executive.mission import cli
from executive.mission.loader import MissionLoader
from executive.robots.atom.sim.amr import TagMap
from executive.seam.profile import PROFILES_DIR, ProfileError, load_profile
from tests.mission.conftest import MISSIONS, PROFILE, Workspace, leaf_mission


def test_the_shipped_profile_lists_the_sim_map() -> None:
    assert PROFILE.tags == frozenset({1, 2, 3, 4, 5})
    assert set(TagMap.default().tags) == PROFILE.tags  # the profile is the source
    assert load_profile("atom-seed001").tags == PROFILE.tags  # extends: inherits them


def test_the_sim_map_follows_any_profile() -> None:
    odd = dataclasses.replace(PROFILE, tags=frozenset({3, 7, 9}))
    tags = TagMap.default(odd)
    assert set(tags.tags) == {3, 7, 9}
    assert tags.tags[3] == TagMap.default().tags[3]  # the familiar layout where it applies
    assert tags.charger is None  # tag 5, the charger, is not on this map
    unknown = dataclasses.replace(PROFILE, tags=None)
    assert set(TagMap.default(unknown).tags) == {1, 2, 3, 4, 5}


@pytest.mark.parametrize(
    ("tags", "words"),
    [
        ("7", "tags: must be a list of tag ids"),
        ("[1, -1]", "tags[1]: must be a tag id 0..4294967295"),
        ("[1, 4294967296]", "tags[1]: must be a tag id"),
        ("[1, true]", "tags[1]: must be a tag id"),
        ("[2, 2]", "tags[1]: tag 2 listed twice"),
    ],
)
def test_bad_tags_in_a_profile_name_the_key(tmp_path: Path, tags: str, words: str) -> None:
    data = yaml.safe_load((PROFILES_DIR / "atom-sdk.yaml").read_text())
    data["tags"] = yaml.safe_load(tags)
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ProfileError, match=words.replace("[", r"\[").replace("]", r"\]")):
        load_profile(path)


def test_a_tag_off_the_map_is_a_warning_naming_the_leaf_and_the_tag(ws: Workspace) -> None:
    leaf = "- navigate_to_tag: {name: To the table, tag: 9, timeout: 60}"
    r = ws.check(leaf_mission(leaf))
    assert r.ok  # a warning: the exit status stays 0
    (w,) = r.diagnostics
    assert not w.is_error
    assert (w.where.line, w.where.col) == (6, 6 + leaf.index("9") + 1)
    assert w.path == "tree.sequence.children[1].navigate_to_tag.tag"
    assert w.message == (
        "'To the table': tag 9 is not on the robot's map (the tags of profile atom-sdk: "
        "1, 2, 3, 4, 5)"
    )


def test_the_warning_says_where_a_parameter_got_its_tag(ws: Workspace) -> None:
    ws.write(
        "go.yaml",
        """
        mission: go
        params:
          table: {type: tag, default: 4}
        tree:
          navigate_to_tag: {tag: '${table}', timeout: 60}
        """,
    )
    loader = MissionLoader(PROFILE, ws.root)
    assert loader.check(ws.root / "go.yaml").diagnostics == ()
    (w,) = loader.check(ws.root / "go.yaml", {"table": 9}).diagnostics
    assert "'Navigate to tag 9': tag 9 is not on the robot's map" in w.message
    assert "(${table} = 9 at <start argument>" in w.message


def test_no_tags_in_the_profile_no_warning(mission_dir: Path) -> None:
    path = mission_dir / "m.yaml"
    path.write_text(leaf_mission("- navigate_to_tag: {tag: 9, timeout: 60}"))
    unknown_map = dataclasses.replace(PROFILE, tags=None)
    assert MissionLoader(unknown_map, mission_dir).check(path).diagnostics == ()


def test_serve_two_tables_as_shipped_warns_in_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "missions"
    shutil.copytree(MISSIONS, root)
    mission = root / "serve_two_tables.yaml"
    text = mission.read_text()
    text = text.replace("    default: 4\n", "    default: 7\n").replace(
        "default: 2\n", "default: 9\n"
    )
    mission.write_text(text)
    code = cli.main(["validate", str(mission)])
    out, err = capsys.readouterr()
    assert code == 0
    sub = root / "subtrees" / "serve_at_table.yaml"
    lines = out.splitlines()
    assert len(lines) == 2, out
    for line, tag in zip(lines, (7, 9), strict=True):
        assert line.startswith(f"{sub}:28:16: tree.sequence.children[0].navigate_to_tag.tag: ")
        assert f"warning: 'Navigate to tag {tag}': tag {tag} is not on the robot's map" in line
    assert "0 error(s), 2 warning(s)" in err
