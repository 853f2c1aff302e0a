"""The generated wire types are exactly the vendor's layouts, for every interface variant.

A field with a wrong name, type, order or array length breaks matching with the firmware
(DESIGN.md 3), and nothing at run time says why: the executive just receives nothing. These
tests pin the generated Python classes to a hand transcription of the vendor's headers
(``vendor_layout.yaml``), check that the committed code is what ``idl/`` generates today, and
prove the comparison can fail by regenerating from deliberately broken copies of ``idl/``.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from executive import wire
from executive.robots.atom.interface import AXES, PRESETS, Interface, Variant
from executive.wire import generate
from tests.wire.layout import compare, load_golden

GOLDEN = load_golden()
DEFAULT_CHOICES = GOLDEN.presets["seed"]

# Every preset, and every non-default axis choice on its own on top of the default.
CASES = list(PRESETS) + [
    f"seed+{axis}={choice}"
    for axis, choices in AXES.items()
    for choice in choices
    if choice != PRESETS["seed"][axis]
]
# Generated packages that hold the executive's own types rather than the robot's.
OWN_PACKAGES = {"own"}


def _axis_choice(package: str) -> tuple[str, str]:
    for axis, choices in AXES.items():
        for choice, pkg in choices.items():
            if pkg == package:
                return axis, choice
    raise AssertionError(f"generated package {package!r} is no choice of any interface axis")


def package_problems(prefix: str, package: str) -> list[str]:
    """Compare one generated package (``<prefix>.<package>``) with the golden layouts."""
    module = importlib.import_module(f"{prefix}.{package}.dobot_atom.msg.dds_")
    roots = [getattr(module, name) for name in module.__all__]
    if package == "default":
        return compare(roots, GOLDEN.base, complete=True)
    axis, choice = _axis_choice(package)
    return compare(roots, GOLDEN.resolve({**DEFAULT_CHOICES, axis: choice}), complete=False)


def test_golden_data_names_the_same_presets_and_axes_as_the_code() -> None:
    """A new preset or axis choice needs golden data first; a changed preset is a decision."""
    assert GOLDEN.presets == PRESETS
    assert {a: set(c) for a, c in GOLDEN.alternatives.items()} == {
        a: set(c) for a, c in AXES.items()
    }


@pytest.mark.parametrize("variant_text", CASES)
def test_interface_types_match_vendor_layout(variant_text: str) -> None:
    variant = Variant.parse(variant_text)
    interface = Interface(variant)
    roots = [getattr(interface, name) for name in interface.type_names]
    assert compare(roots, GOLDEN.resolve(variant.choices), complete=True) == []


def test_every_generated_package_matches_vendor_layout() -> None:
    """Also the packages' private copies of included types (e.g. a variant's MotorState_)."""
    packages = sorted(
        p.name
        for p in generate.GEN_DIR.iterdir()
        if (p / "dobot_atom").is_dir() and p.name not in OWN_PACKAGES
    )
    assert "default" in packages
    problems = {p: package_problems(generate.PREFIX, p) for p in packages}
    assert problems == {p: [] for p in packages}


def test_committed_code_is_what_idl_generates(tmp_path: Path) -> None:
    """The same check as ``make idl-check``, so a plain pytest run catches a stale wire/gen."""
    fresh = tmp_path / "gen"
    generate.generate(fresh)
    assert generate._diff(generate.GEN_DIR, fresh) == []


# --- the comparison can fail -------------------------------------------------------------------

# (file under idl/, pattern, replacement, the type whose check must fail)
MUTATIONS = [
    pytest.param(
        "dobot_atom/motor_state.idl",
        r"float tau_est;",
        "float tau_estimate;",
        "MotorState_",
        id="renamed-field",
    ),
    pytest.param(
        "dobot_atom/upper_cmd.idl",
        r"motor_cmd\[17\]",
        "motor_cmd[16]",
        "UpperCmd_",
        id="array-length",
    ),
    pytest.param(
        "dobot_atom/imu_state.idl",
        r"(float gyroscope\[3\];[^\n]*)\n(\s*)(float accelerometer\[3\];[^\n]*)",
        r"\3\n\2\1",
        "IMUState_",
        id="swapped-same-type-fields",
    ),
    pytest.param(
        "dobot_atom/bms_state.idl",
        r"uint32 bms_alarms",
        "uint16 bms_alarms",
        "BmsState_",
        id="field-type",
    ),
    pytest.param(
        "dobot_atom/amr_cmd.idl",
        r"PAUSE_TASK, RESUME_TASK",
        "RESUME_TASK, PAUSE_TASK",
        "AMRCommandType",
        id="enumerator-order",
    ),
    pytest.param(
        "dobot_atom/set_fsm_id.idl",
        r"string current_action",
        "char current_action",
        "SetFsmId_",
        id="seed-000-char-typo",
    ),
    pytest.param(
        "variants/emergency_state_di/emergency_state.idl",
        r"boolean di_emergency_triggered",
        "boolean di_emergency",
        "EmergencyState_",
        id="variant-file",
    ),
    pytest.param(
        "dobot_atom/lower_state.idl",
        r"@final\s*\n(\s*struct LowerState_)",
        r"@appendable\n\1",
        "LowerState_",
        id="extensibility",
    ),
]


@pytest.fixture
def regenerate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], str]]:
    """Generate from a copy of idl/ into an importable scratch package, and clean up after.

    ``executive.wire.generate`` reads its source folder and package prefix from module
    globals, so the test points them elsewhere instead of shelling out to ``make``.
    """
    prefixes: list[str] = []
    monkeypatch.syspath_prepend(str(tmp_path))

    def run(idl_dir: Path) -> str:
        prefix = f"wire_regen_{len(prefixes)}"
        prefixes.append(prefix)
        monkeypatch.setattr(generate, "IDL_DIR", idl_dir)
        monkeypatch.setattr(generate, "PREFIX", prefix)
        generate.generate(tmp_path / prefix)
        importlib.invalidate_caches()
        return prefix

    yield run
    for name in [m for m in sys.modules if m.split(".")[0] in prefixes]:
        del sys.modules[name]


def _copy_idl(dest: Path) -> Path:
    shutil.copytree(generate.ROOT / "idl", dest)
    return dest


def _all_problems(prefix: str, gen_dir: Path) -> dict[str, list[str]]:
    packages = sorted(
        p.name
        for p in gen_dir.iterdir()
        if (p / "dobot_atom").is_dir() and p.name not in OWN_PACKAGES
    )
    return {p: package_problems(prefix, p) for p in packages}


def test_unmutated_copy_passes(tmp_path: Path, regenerate: Callable[[Path], str]) -> None:
    """Control for the mutation tests: the harness itself accepts a faithful regeneration."""
    prefix = regenerate(_copy_idl(tmp_path / "idl"))
    problems = _all_problems(prefix, tmp_path / prefix)
    assert "default" in problems
    assert all(p == [] for p in problems.values()), problems


@pytest.mark.parametrize(("idl_file", "pattern", "replacement", "type_name"), MUTATIONS)
def test_a_broken_idl_fails_the_golden_comparison(
    tmp_path: Path,
    regenerate: Callable[[Path], str],
    idl_file: str,
    pattern: str,
    replacement: str,
    type_name: str,
) -> None:
    idl_dir = _copy_idl(tmp_path / "idl")
    target = idl_dir / idl_file
    text, count = re.subn(pattern, replacement, target.read_text(), count=1)
    assert count == 1, f"mutation pattern {pattern!r} no longer matches {idl_file}"
    target.write_text(text)
    prefix = regenerate(idl_dir)
    problems = [p for ps in _all_problems(prefix, tmp_path / prefix).values() for p in ps]
    assert any(p.startswith(type_name) for p in problems), problems


def test_interface_reads_the_committed_package() -> None:
    """The golden checks above go through ``Interface``; make sure it is the committed code."""
    assert Interface().UpperState_.__module__.startswith(f"{wire.__name__}.gen.default.")
