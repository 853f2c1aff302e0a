"""The robot seam holds: nothing above it names a robot's wire.

Leaves, the safety monitor, the motion streamer, the tick loop, the core, status and
requests speak ``executive.seam.ports`` only. Three checks, all derived from the robots'
own wire tables rather than from a list kept by hand:

- imports: no module above the seam imports a robot package (the Atom's gamepad table,
  topic table and e-stop reflex's topic and cancel live in its own), the DDS robot I/O,
  the generated robot types or the native core (the C extension's reflex, gate and
  stream: the adapters arm it); and the robot-neutral wire below the adapters (codec,
  readers, the type watch) imports no robot and names none of their topics;
- words: no string or attribute name in those modules is one of the robots' topic names
  or wire field names (every field of every Atom and Adam type, as the codecs lay them
  out), other than the words the ports themselves define;
- the native core (``executive/robots/native``), under the adapters but shared by every
  DDS robot, imports no robot and names no robot's wire, in its Python or its C.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.seam.registry import SPECS, part

ROOT = Path(__file__).resolve().parents[1]
# the layers above the seam, whole: a module added to one of them is checked without a list to edit
ABOVE = sorted(
    path
    for layer in (
        "behaviours",
        "executive/core",
        "executive/motion",
        "executive/language",
        "executive/mission",
        "executive/service",
        "executive/records",
    )
    for path in (ROOT / layer).rglob("*.py")
)
FORBIDDEN_IMPORTS = (
    "executive.wire.robot_io",
    "executive.robots.native",
    "executive.robots.atom.sim",
    "executive.robots.simkit",  # the simulators' kit: test and demo harness, never the executive
    *(f"executive.robots.{name}" for name in SPECS),
)
# words of the mission language and of leaf failures that a robot's wire happens to use too
NEUTRAL = {
    "clear_errors",  # the mission leaf kind (the ports' verb is clear_faults)
    "fsm_id",  # set_fsm's field: an FSM state by number (the profile bounds it per robot)
    "low_battery",  # check_battery's failure code
}
# own types; generic XCDR; participants and QoS (the executive's own topics are DDS too)
ALLOWED_WIRE = (
    "executive.wire.gen.own",
    "executive.wire.codec",
    "executive.wire.dds",
    "executive.wire.zenoh_session",
)


def _imports(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)


def _words(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.Name):
            yield node.id


def wire_words() -> set[str]:
    """Every robot's topic names and wire field names with an underscore (``q``, ``mode``
    and their like are everybody's words), as each robot's own ``wire_words`` gives them
    (its spec names it), minus the ports' own vocabulary."""
    words: set[str] = set()
    for name in SPECS:
        found = part(name, "wire_words")
        assert found is not None, f"robot {name} names no wire_words: the check would skip it"
        words |= set(found())
    ports = ast.parse((ROOT / "executive" / "seam" / "ports.py").read_text())
    return {w for w in words if "_" in w or "/" in w} - set(_words(ports)) - NEUTRAL


@pytest.mark.parametrize("path", ABOVE, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_above_the_seam_imports_a_robot(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [
        name
        for name in _imports(tree)
        if name.startswith(FORBIDDEN_IMPORTS)
        or (name.startswith("executive.wire.") and not name.startswith(ALLOWED_WIRE))
    ]
    assert not bad, f"{path.name} reaches below the seam: {bad}"


def test_the_word_list_is_the_robots_wire() -> None:
    """The check below is only as good as this list: it holds the wire's own names."""
    words = wire_words()
    for expected in (
        "rt/upper/state",
        "is_upper_control",
        "bms_alarms",
        "rt/lowcmd",
        "mode_pr",
        "aurora_state",
        "whole_body_fsm_state",
        "robot_control_group_cmd",
        "group_motion_state",
        "allow_upper_body_override",
        "flag_heart_beat",  # the GRX's
        "virtual_joystick_axis_left",
    ):
        assert expected in words


@pytest.mark.parametrize("path", ABOVE, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_above_the_seam_names_a_robots_wire(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = sorted(set(_words(tree)) & wire_words())
    assert not found, f"{path.name} names the robots' wire: {found}"


# the robot-neutral wire under the adapters: the codec, participants and QoS, latest-sample
# readers and writers. Robots' tables and types are their adapters'; gen/ holds every IDL's
WIRE = sorted((ROOT / "executive" / "wire").glob("*.py"))


@pytest.mark.parametrize("path", WIRE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_wire_layer_names_no_robot(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    robots = [
        name
        for name in _imports(tree)
        if name.startswith("executive.robots.") and not name.startswith("executive.seam.ports")
    ]
    assert not robots, f"{path.name} imports a robot: {robots}"
    topics = wire_words()
    found = sorted(set(_words(tree)) & topics)
    assert not found, f"{path.name} names a robot's topics: {found}"


# the robot-neutral native core: the adapters hand it their topics, writers and offsets
NATIVE = ROOT / "executive" / "robots" / "native"
ROBOT_PACKAGES = tuple(f"executive.robots.{name}" for name in (*SPECS, "simkit"))


@pytest.mark.parametrize(
    "path", sorted(NATIVE.glob("*.py*")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_the_native_core_names_no_robot(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    robots = [name for name in _imports(tree) if name.startswith(ROBOT_PACKAGES)]
    assert not robots, f"{path.name} imports a robot: {robots}"
    found = sorted(set(_words(tree)) & wire_words())
    assert not found, f"{path.name} names the robots' wire: {found}"


def test_the_native_core_c_names_no_robots_wire() -> None:
    """Every identifier, string and comment word of the C extension, each unit and its
    header: a robot's topic or field reaches it only as a handle or an offset its adapter
    computed."""
    units = sorted(NATIVE.glob("*.[ch]"))
    assert NATIVE / "reflex.h" in units, "the C units are not where this test looks"
    words = wire_words()
    found = {
        path.name: sorted(set(re.findall(r"[A-Za-z_][\w/]*", path.read_text("utf-8"))) & words)
        for path in units
    }
    found = {name: named for name, named in found.items() if named}
    assert not found, f"the C units name the robots' wire: {found}"
