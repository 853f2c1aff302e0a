"""Missions as BehaviorTree.CPP XML, both ways, proven against BehaviorTree.CPP itself.

Every shipped mission of every robot exports to XML that BehaviorTree.CPP's factory
parses with our leaf kinds registered and builds node for node as we number it (its own
``Groot2Publisher``'s tree, with the UIDs its factory gave), and imports back to a
mission that ``diff`` calls identical, its declared parameters included, and that is the
same mission under other parameter values too (every field that was a parameter is one
again). What has no counterpart is refused, naming the node (export) or the XML line
(import).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from executive.language.kinds import FieldType
from executive.language.model import Mission
from executive.mission import btcpp
from executive.mission.btcpp_export import export_trees, export_xml
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
    # ... the mission's parameters the main tree's ports, each with its default
    ports = {
        p.attrib["name"]: p.attrib.get("default")
        for m in root.iter("SubTree")
        if m.attrib["ID"] == root.attrib["main_tree_to_execute"]
        for p in m.iter("input_port")
    }
    assert ports == {
        n: btcpp.port_text(d.default)
        for n, d in mission.params.items()  # type: ignore[attr-defined]
    }
    # imported back beside it: the same mission to diff, parameters and all
    out = copy / folder / f"{Path(name).stem}_from_xml.yaml"
    yaml_text, imported = import_xml(text.encode(), "x.xml", out, loader)
    out.write_text(yaml_text)
    assert diff_missions(mission, imported) == []  # type: ignore[arg-type]
    again = loader.check(out)
    assert again.ok, [str(d) for d in again.errors]
    # ... and under other values of its parameters too: they are where they were
    other = _other_values(mission)  # type: ignore[arg-type]
    if other:
        a, b = loader.check(source, other), loader.check(out, other)
        assert a.mission is not None and b.mission is not None, (a.errors, b.errors)
        assert diff_missions(a.mission, b.mission) == []


def _other_values(mission: Mission) -> dict[str, object]:
    """A value other than its default for each parameter whose type has an obvious one
    (a pose, a gesture, a state or a button keeps its default)."""
    out: dict[str, object] = {}
    for name, d in mission.params.items():
        v = d.default
        if d.type in (FieldType.NUMBER, FieldType.INTEGER, FieldType.TAG):
            step = 1 if d.type is not FieldType.NUMBER else 0.25
            up = v + step
            out[name] = up if d.maximum is None or up <= d.maximum else v - step
        elif d.type is FieldType.BOOLEAN:
            out[name] = not v
        elif d.type is FieldType.STRING:
            out[name] = f"{v} again"
    return out


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


def test_export_resolves_only_when_asked(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "executive.cli", "export", str(MISSIONS / "head_scan.yaml")]
    done = subprocess.run(
        [*cmd, "--param", "sweeps=3"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 2 and "add --resolved" in done.stderr
    done = subprocess.run(
        [*cmd, "--resolved", "--param", "sweeps=3"], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert '<Repeat name="Repeat x3" num_cycles="3">' in done.stdout
    assert "{" not in done.stdout.split("<TreeNodesModel>")[0]


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
    assert subprocess.run([*diff, str(imported)], check=False).returncode == 0


# -- what has no counterpart ------------------------------------------------------------


def _mission(tmp_path: Path, tree: str, params: str = "") -> Path:
    """A mission in a copy of the shipped libraries."""
    root = tmp_path / "m"
    if not root.exists():
        shutil.copytree(MISSIONS, root)
    path = root / "t.yaml"
    path.write_text(f"mission: t\n{params}tree:\n{tree}")
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
        ('<Wait seconds="{t}"/>', "g.xml:4: <Wait>: port seconds: {t} is no port of the tree"),
        ('<Timeout msec="{t}"><Wait seconds="1.0"/></Timeout>', "g.xml:4: <Timeout>: msec '{t}'"),
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
    lines[at] = lines[at].replace('tag="{bar_tag}"', 'tag="2"')
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
    root = ET.fromstring(text)
    go = next(root.iter("NavigateToTag"))
    assert go.attrib["tag"] == "{table_tag}"  # required, no value: BehaviorTree.CPP's reference
    ports = {p.attrib["name"]: p for m in root.iter("SubTree") for p in m}
    assert "default" not in ports["table_tag"].attrib  # required: a mandatory port
    assert ports["table_tag"].text is not None and ports["table_tag"].text.endswith(" [tag]")
    assert ports["heading"].attrib["default"] == "0.0"
    theirs.factory().register_behavior_tree_from_text(text)


# -- parameters --------------------------------------------------------------------------


def _ports(text: str) -> dict[str, ET.Element]:
    root = ET.fromstring(text)
    main = root.attrib["main_tree_to_execute"]
    return {p.attrib["name"]: p for m in root.iter("SubTree") if m.attrib["ID"] == main for p in m}


def test_a_parameter_is_a_port_reference_and_text_keeps_its_references() -> None:
    _, mission = _load("atom-sdk", MISSIONS / "greeting_wave.yaml")
    text = export_xml(mission)  # type: ignore[arg-type]
    repeat = next(ET.fromstring(text).iter("Repeat"))
    assert repeat.attrib == {"name": "Wave ${waves} times", "num_cycles": "{waves}"}
    waves = _ports(text)["waves"]
    assert waves.attrib == {"name": "waves", "type": "int", "default": "3"}
    assert waves.text is not None and waves.text.endswith(
        "[integer, min 1, max 10; exported with 3]"
    )
    # export --resolved: the tree the robot would run, every field its value, no ports
    resolved = export_xml(mission, params=False)  # type: ignore[arg-type]
    repeat = next(ET.fromstring(resolved).iter("Repeat"))
    assert repeat.attrib == {"name": "Wave 3 times", "num_cycles": "3"}
    assert _ports(resolved) == {}


def test_a_literal_dollar_brace_stays_literal(tmp_path: Path) -> None:
    path = _mission(
        tmp_path,
        "  sequence:\n    name: Costs $${price} at ${tag}\n    children:\n"
        "      - log: {message: 'Costs $${price}'}\n"
        "      - navigate_to_tag: {tag: '${tag}', timeout: 60}\n",
        "params:\n  tag: {type: tag, default: 3}\n",
    )
    loader, mission = _load("atom-sdk", path)
    text = export_xml(mission)  # type: ignore[arg-type]
    seq = next(ET.fromstring(text).iter("Sequence"))
    assert seq.attrib["name"] == "Costs $${price} at ${tag}"  # as the file writes it
    assert next(ET.fromstring(text).iter("Log")).attrib["message"] == "Costs $${price}"
    _, imported = import_xml(text.encode(), "x.xml", path.with_name("again.yaml"), loader)
    assert imported.root.name == "Costs ${price} at 3"
    assert diff_missions(mission, imported) == []  # type: ignore[arg-type]


def test_a_default_edited_in_groot2_is_the_new_default_not_an_edited_tree(tmp_path: Path) -> None:
    """serve_two_tables with first_table's default 4 -> 5 in Groot2: the import declares
    default 5 and is the mission the original is with first_table=5 (the included tree,
    drawn with 4, is not an edit; the names drawn with 4 are not kept)."""
    root = tmp_path / "m"
    shutil.copytree(MISSIONS, root)
    loader, mission = _load("atom-sdk", root / "serve_two_tables.yaml")
    text = export_xml(mission)  # type: ignore[arg-type]
    port = 'name="first_table" type="unsigned int" default="4"'
    assert text.count(port) == 1
    edited = text.replace(port, port.replace('"4"', '"5"'))
    yaml_text, imported = import_xml(edited.encode(), "x.xml", root / "again.yaml", loader)
    assert imported.params["first_table"].default == 5
    assert "tag 4" not in yaml_text and "tag 5" not in yaml_text  # no name pinned
    with_five = loader.check(root / "serve_two_tables.yaml", {"first_table": 5}).mission
    assert with_five is not None
    changes = diff_missions(with_five, imported)
    assert [(c.path, c.field, c.before, c.after) for c in changes] == [
        ("params.first_table", "default", "4", "5")
    ]


@pytest.mark.parametrize(
    ("tree", "params", "said"),
    [
        (
            "  timeout:\n    seconds: ${t}\n    child:\n      wait: {seconds: 1}\n",
            "params:\n  t: {type: number, default: 2}\n",
            "tree.timeout.seconds: the parameter ${t} is in seconds",
        ),
        (
            "  move_joints: {joints: {head_yaw: '${yaw}'}, speed: 0.5, timeout: 5}\n",
            "params:\n  yaw: {type: number, default: 0.1}\n",
            "tree.move_joints.joints.head_yaw: a parameter inside joints",
        ),
        (
            "  wait: {seconds: '${name}'}\n",
            "params:\n  name: {type: number, default: 2}\n",
            "parameter 'name': BehaviorTree.CPP reserves the name",
        ),
        (
            "  log: {message: '{x}'}\n",
            "",
            "tree.log.message: the text '{x}' is what BehaviorTree.CPP reads as a blackboard",
        ),
    ],
)
def test_what_a_port_cannot_say_is_refused_by_name(
    tmp_path: Path, tree: str, params: str, said: str
) -> None:
    _, mission = _load("atom-sdk", _mission(tmp_path, tree, params))
    with pytest.raises(btcpp.TranslationError) as e:
        export_xml(mission)  # type: ignore[arg-type]
    assert said in str(e.value)


PORTED = """<root BTCPP_format="4" main_tree_to_execute="m">
  <BehaviorTree ID="m">
    <Wait seconds="{{t}}"/>
  </BehaviorTree>
  <TreeNodesModel>
    <SubTree ID="m">
      {port}
    </SubTree>
  </TreeNodesModel>
</root>
"""


@pytest.mark.parametrize(
    ("port", "said"),
    [
        ('<input_port name="t" default="2.0">How long</input_port>', "g.xml:7: <input_port>: port 't' says no parameter type"),
        ('<input_port name="t" default="soon">[number]</input_port>', "g.xml:7: <input_port>: port 't': default: could not convert"),
        ('<input_port name="t" default="2.0">[number, min 3.0]</input_port>', "g.xml:7: params.t.default: must be >= 3"),
        ('<output_port name="t"/>', "g.xml:7: <output_port>: the tree's ports are the mission's parameters"),
        ('<input_port name="t">[number]</input_port>', "g.xml:7: params.t: a mission's parameters need a default"),
    ],
)  # fmt: skip
def test_an_import_names_the_line_of_a_port_it_cannot_take(
    tmp_path: Path, port: str, said: str
) -> None:
    out = _mission(tmp_path, "  wait: {seconds: 1}\n").with_name("imported.yaml")
    with pytest.raises(ImportError_) as e:
        import_xml(PORTED.format(port=port).encode(), "g.xml", out, MissionLoader(load_profile()))
    assert said in str(e.value)


def test_a_port_groot2_added_with_a_plain_type_is_a_parameter(tmp_path: Path) -> None:
    """A port added in Groot2 says a C++ type, not ours: double, int, bool and std::string
    are number, integer, boolean and string parameters (a node without a name has the
    one the mission gives it)."""
    port = '<input_port name="t" type="double" default="2.5">How long</input_port>'
    out = _mission(tmp_path, "  wait: {seconds: 1}\n").with_name("imported.yaml")
    loader = MissionLoader(load_profile())
    text, mission = import_xml(PORTED.format(port=port).encode(), "g.xml", out, loader)
    t = mission.params["t"]
    assert (t.type, t.default, t.description) == (FieldType.NUMBER, 2.5, "How long")
    assert "seconds: ${t}" in text


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
