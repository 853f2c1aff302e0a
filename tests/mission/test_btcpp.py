"""Missions as BehaviorTree.CPP XML, both ways, proven against BehaviorTree.CPP itself.

Every shipped mission of every robot exports to XML that BehaviorTree.CPP's factory
parses with our leaf kinds registered and builds node for node as we number it (its own
``Groot2Publisher``'s tree, with the UIDs its factory gave), and imports back to a
mission that ``diff`` calls identical. What has no counterpart is refused, naming the
node (export) or the XML line (import).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from executive.mission import btcpp
from executive.mission.btcpp_cli import export_trees, export_xml
from executive.mission.btcpp_import import ImportError_, import_xml
from executive.mission.diff import diff_missions
from executive.mission.loader import MissionLoader
from executive.seam.profile import load_profile
from tests import btcpp as theirs
from tests.mission.conftest import MISSIONS

ROBOTS = {"": "atom-sdk", "adam": "adam-pro", "grx": "grx", "aurora": "aurora"}
SHIPPED = [
    (folder, prof, p.name)
    for folder, prof in ROBOTS.items()
    for p in sorted((MISSIONS / folder).glob("*.yaml"))
]


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of missions/ to import into (the imports sit beside the originals)."""
    target = tmp_path_factory.mktemp("btcpp") / "missions"
    shutil.copytree(MISSIONS, target)
    return target


def _load(profile: str, path: Path) -> tuple[MissionLoader, object]:
    loader = MissionLoader(load_profile(profile))
    result = loader.check(path)
    assert result.mission is not None, [str(d) for d in result.errors]
    return loader, result.mission


@pytest.mark.parametrize(("folder", "profile", "name"), SHIPPED)
def test_a_shipped_mission_goes_to_btcpp_and_back_identical(
    copy: Path, folder: str, profile: str, name: str
) -> None:
    source = copy / folder / name
    loader, mission = _load(profile, source)
    text = export_xml(mission)  # type: ignore[arg-type]
    # BehaviorTree.CPP reads it as it is: every node known, every count right
    f = theirs.factory()
    f.register_behavior_tree_from_text(text)
    root = ET.fromstring(text)
    assert root.attrib["main_tree_to_execute"] in f.registered_behavior_trees()
    # ... every port of every leaf a port of its model
    models = {
        m.attrib["ID"]: {p.attrib["name"] for p in m.iter("input_port")}
        for m in root.find("TreeNodesModel")  # type: ignore[union-attr]
    }
    for e in root.iter():
        if btcpp.kind_of(e.tag) is not None:
            ports = {a for a in e.attrib if a != "name" and not a.startswith("_")}
            assert ports <= models[e.tag], (e.tag, ports - models[e.tag])
    # imported back beside it: the same mission to diff
    out = copy / folder / f"{Path(name).stem}_from_xml.yaml"
    yaml_text, imported = import_xml(text.encode(), "x.xml", out, loader)
    out.write_text(yaml_text)
    assert diff_missions(mission, imported) == []  # type: ignore[arg-type]
    again = loader.check(out)
    assert again.ok, [str(d) for d in again.errors]


@pytest.mark.parametrize(("folder", "profile", "name"), SHIPPED)
def test_btcpp_builds_the_exported_tree_node_for_node(folder: str, profile: str, name: str) -> None:
    """BehaviorTree.CPP's factory builds the tree and its own publisher serves it: the
    same elements, names and UIDs as ours (its factory numbers nodes as we do)."""
    _, mission = _load(profile, MISSIONS / folder / name)
    trees = export_trees(mission)  # type: ignore[arg-type]
    ours = btcpp.number(trees.main)
    with theirs.their_publisher(export_xml(mission)) as port:  # type: ignore[arg-type]
        tree, _xml, statuses = theirs.fetch(port)
    their_nodes = [n for _, n in theirs.paths(tree.roots[0])]
    assert [(n.registration, n.name, n.uid) for n in their_nodes] == [
        (e.tag, e.attrs["name"], e.uid) for e in ours
    ]
    assert set(statuses) == {e.uid for e in ours}  # every node has a status: IDLE
    assert all(s.raw == 0 for s in statuses.values())


def test_the_export_command_writes_what_btcpp_reads(tmp_path: Path) -> None:
    out = tmp_path / "head_scan.xml"
    cmd = [sys.executable, "-m", "executive.cli", "export", str(MISSIONS / "head_scan.yaml")]
    done = subprocess.run(
        [*cmd, "--format", "btcpp", "-o", str(out)], check=False, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    theirs.factory().register_behavior_tree_from_text(out.read_text())
    mission = tmp_path / "missions"
    shutil.copytree(MISSIONS, mission)
    imported = mission / "head_scan_again.yaml"
    cmd = [sys.executable, "-m", "executive.cli", "import", str(out), "-o", str(imported)]
    done = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    diff = [sys.executable, "-m", "executive.cli", "diff", str(mission / "head_scan.yaml")]
    done = subprocess.run([*diff, str(imported)], check=False, capture_output=True, text=True)
    # the same tree; the XML carries resolved values, not the declared parameters, which
    # ``diff`` compares too (issue 35, 6): the import declares none
    assert done.returncode == 1, done
    removed = ["- params.min_battery (param): removed", "- params.sweeps (param): removed"]
    assert done.stdout.splitlines()[2:] == removed, done.stdout


# -- what has no counterpart ------------------------------------------------------------


def _mission(tmp_path: Path, tree: str) -> Path:
    """A mission in a copy of the shipped libraries."""
    root = tmp_path / "m"
    if not root.exists():
        shutil.copytree(MISSIONS, root)
    path = root / "t.yaml"
    path.write_text(f"mission: t\ntree:\n{tree}")
    return path


def test_a_reactive_parallel_is_refused_by_name(tmp_path: Path) -> None:
    path = _mission(
        tmp_path,
        "  parallel:\n    memory: false\n    children:\n"
        "      - check_battery: {min_level: 10}\n      - wait: {seconds: 1}\n",
    )
    _, mission = _load("atom-sdk", path)
    with pytest.raises(btcpp.TranslationError, match="memory: false.*no counterpart"):
        export_xml(mission)  # type: ignore[arg-type]


def test_a_time_that_is_no_whole_millisecond_is_refused(tmp_path: Path) -> None:
    path = _mission(
        tmp_path, "  timeout:\n    seconds: 0.0005\n    child:\n      wait: {seconds: 1}\n"
    )
    _, mission = _load("atom-sdk", path)
    with pytest.raises(btcpp.TranslationError, match="whole number of milliseconds"):
        export_xml(mission)  # type: ignore[arg-type]


XML = """<root BTCPP_format="4" main_tree_to_execute="m">
  <BehaviorTree ID="m">
    <Sequence name="Steps">
      {node}
    </Sequence>
  </BehaviorTree>
</root>
"""


def _import(tmp_path: Path, node: str) -> str:
    out = _mission(tmp_path, "  wait: {seconds: 1}\n").with_name("imported.yaml")
    loader = MissionLoader(load_profile())
    with pytest.raises(ImportError_) as e:
        import_xml(XML.format(node=node).encode(), "g.xml", out, loader)
    assert not out.exists()
    return str(e.value)


@pytest.mark.parametrize(
    ("node", "said"),
    [
        ('<Wait seconds="1.0"/>\n      <Switch2 name="x"/>', "g.xml:5: <Switch2>: not a node"),
        ('<Wait second="1.0"/>', "g.xml:4: <Wait>: no port 'second' (its ports: seconds)"),
        ('<Wait seconds="{t}"/>', "g.xml:4: <Wait>: port seconds: {t} is a blackboard"),
        ('<Wait seconds="1.0" _skipIf="x"/>', "g.xml:4: <Wait>: attribute '_skipIf'"),
        (
            '<Parallel success_count="2" failure_count="1"><Wait seconds="1.0"/>'
            '<Wait seconds="1.0"/><Wait seconds="1.0"/></Parallel>',
            "g.xml:4: <Parallel>: success_count 2 of 3",
        ),
        ('<Wait seconds="0.0"/>', "g.xml:4: tree.sequence.children[0].wait.seconds: must be > 0"),
        ('<Repeat num_cycles="2"/>', "g.xml:4: <Repeat>: takes exactly one child node, has 0"),
    ],
)
def test_an_import_names_the_xml_line_of_what_it_cannot_take(
    tmp_path: Path, node: str, said: str
) -> None:
    assert said in _import(tmp_path, node)


def test_an_include_edited_in_place_is_refused_at_its_line(tmp_path: Path) -> None:
    root = tmp_path / "m"
    shutil.copytree(MISSIONS, root)
    loader, mission = _load("atom-sdk", root / "serve_two_tables.yaml")
    lines = export_xml(mission).splitlines()  # type: ignore[arg-type]
    at = next(i for i, line in enumerate(lines) if 'name="Navigate to tag 3"' in line)
    lines[at] = lines[at].replace('tag="3"', 'tag="2"')
    with pytest.raises(ImportError_, match=rf"x.xml:{at + 1}: <NavigateToTag> does not come"):
        import_xml("\n".join(lines).encode(), "x.xml", root / "again.yaml", loader)


def test_xml_with_a_dtd_is_refused(tmp_path: Path) -> None:
    bomb = '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaa">]>\n<root BTCPP_format="4"/>'
    loader = MissionLoader(load_profile())
    with pytest.raises(ImportError_, match="g.xml:2: DTDs and entities are refused"):
        import_xml(bomb.encode(), "g.xml", tmp_path / "x.yaml", loader)


def test_a_guard_is_a_reactive_sequence_of_its_condition_and_child(tmp_path: Path) -> None:
    _, mission = _load("atom-sdk", MISSIONS / "head_scan.yaml")
    root = ET.fromstring(export_xml(mission))  # type: ignore[arg-type]
    guard = next(e for e in root.iter("ReactiveSequence"))
    assert guard.attrib["name"] == "While the battery holds"
    assert [c.tag for c in guard] == ["CheckBattery", "Repeat"]


def test_a_subtree_on_its_own_exports_its_unset_parameters_as_blackboard_ports() -> None:
    _, subtree = _load("atom-sdk", MISSIONS / "subtrees" / "serve_at_table.yaml")
    text = export_xml(subtree)  # type: ignore[arg-type]
    go = next(ET.fromstring(text).iter("NavigateToTag"))
    assert go.attrib["tag"] == "{table_tag}"  # required, no value: BehaviorTree.CPP's reference
    theirs.factory().register_behavior_tree_from_text(text)


def test_the_live_view_draws_what_an_export_refuses_with_our_own_models(tmp_path: Path) -> None:
    """A running parallel with memory: false is shown as what it is (ReactiveParallel),
    not refused: the live view shows whatever runs."""
    from executive.mission.build import build, placeholder_builders

    path = _mission(
        tmp_path,
        "  parallel:\n    memory: false\n    children:\n"
        "      - check_battery: {min_level: 10}\n      - wait: {seconds: 1}\n",
    )
    _, mission = _load("atom-sdk", path)
    root = build(mission, placeholder_builders())  # type: ignore[arg-type]
    element = btcpp.mission_elements(root, {}, str(path), live=True)
    assert element.tag == btcpp.REACTIVE_PARALLEL.id
    assert [c.tag for c in element.children] == ["CheckBattery", "Wait"]
    with pytest.raises(btcpp.TranslationError):
        btcpp.mission_elements(root, {}, str(path))
