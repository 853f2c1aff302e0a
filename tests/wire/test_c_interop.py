"""Python and C, both built from idl/, agree on every wire type, byte for byte and on DDS.

The robot's firmware is C/C++ compiled with CycloneDDS's idlc from the vendor's .idl files.
These tests compile *our* .idl files with Debian's ``idlc -l c`` into a small C program and
check, per interface variant, that:

- each type's XTypes TypeInformation and TypeMapping (what DDS compares when deciding whether
  a reader and a writer match) are identical to what cyclonedds-python announces; and
- samples of every struct type travel both ways over real DDS on the test's own loopback
  domain, with every field's value checked by field path on the receiving side.

So a Python <-> C disagreement (a field the backends order or size differently, an enum or
``octet``/``uint8`` encoded differently, a type that does not match) fails here, naming it.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.robots.atom.interface import Variant
from executive.wire.codec import Codec
from tests.wire.c_interop import (
    IDL_DIR,
    SAMPLES,
    Build,
    Exchange,
    Leaf,
    build,
    c_typeinfo,
    exchange,
    leaves,
    make_values,
    match_samples,
    python_typeinfo,
    struct_types,
    swap_is_visible,
    width,
)

# The default, both SDK generations, and the newer AMR numbering: every axis choice appears.
VARIANTS = ["seed", "sdk-1.0.1", "sdk-1.1.0+amr_command_type=move_to_charge"]


@pytest.fixture(scope="module", params=VARIANTS)
def c_build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Build:
    variant = Variant.parse(request.param)
    workdir = tmp_path_factory.mktemp(f"interop-{variant.name.replace('+', '-')}")
    return build(variant, workdir)


def typeinfo_problems(b: Build) -> list[str]:
    c_side = c_typeinfo(b)
    problems = []
    if sorted(c_side) != sorted(cls.__name__ for cls in b.types):
        problems.append(f"C has types {sorted(c_side)}")
    for cls in b.types:
        info, mapping = python_typeinfo(cls)
        entry = c_side.get(cls.__name__)
        if entry is None:
            continue
        if entry["typename"] != f"dobot_atom::msg::dds_::{cls.__name__}":
            problems.append(f"{cls.__name__}: C type name {entry['typename']}")
        if bytes.fromhex(entry["typeinfo"]) != info:
            problems.append(f"{cls.__name__}: TypeInformation differs")
        if bytes.fromhex(entry["typemap"]) != mapping:
            problems.append(f"{cls.__name__}: TypeMapping differs")
    return problems


def exchange_problems(b: Build, result: Exchange) -> list[str]:
    """Per type and direction: samples missing or differing, by field path; for a type that
    never arrived, whether DDS matched the endpoints at all (a type mismatch does not)."""
    problems: list[str] = []
    for cls in b.types:
        name = cls.__name__
        expected = make_values(cls)[1]
        summary = result.c_summary.get(name, {})
        for direction, got in (
            ("C->Python", result.py_received[name]),
            ("Python->C", result.c_received[name]),
        ):
            found = match_samples(f"{name} {direction}", expected, got)
            if found and not got:
                found.append(
                    f"{name}: C writer matched {summary.get('writer_matched')} readers, "
                    f"C reader matched {summary.get('reader_matched')} writers"
                )
            problems += found
    return problems


def test_c_and_python_announce_identical_type_information(c_build: Build) -> None:
    """Identical TypeInformation means CycloneDDS's type matching cannot tell them apart."""
    assert typeinfo_problems(c_build) == []


@pytest.mark.dds
def test_every_type_crosses_between_c_and_python(c_build: Build, dds_domain: int) -> None:
    result = exchange(c_build, dds_domain)
    assert result.c_done is not None, f"C side did not finish:\n{result.c_stderr}"
    problems = exchange_problems(c_build, result)
    assert problems == [], "\n".join([*problems, "C stderr:", result.c_stderr])
    assert result.c_done["complete"] is True


# --- the checks can fail --------------------------------------------------------------------


def _swappable_pairs(cls: type) -> Iterator[tuple[Leaf, Leaf]]:
    """Pairs of leaves a layout error could exchange: same wire width (and, for booleans,
    the same struct: a boolean's value alone cannot identify it across structs)."""
    for a, b in itertools.combinations(leaves(cls), 2):
        if width(a) != width(b):
            continue
        if a.kind == b.kind == "boolean" and a.parent != b.parent:
            continue
        yield a, b


@pytest.mark.parametrize("variant_text", VARIANTS)
def test_values_expose_any_swap_of_same_width_fields(variant_text: str) -> None:
    """If C and Python swapped two fields of one wire width, some sample would show it."""
    for cls in struct_types(Variant.parse(variant_text)):
        all_leaves, samples = make_values(cls)
        assert len(samples) == SAMPLES
        assert {leaf.path for leaf in all_leaves} == set(samples[0])
        hidden = [
            (a.path, b.path) for a, b in _swappable_pairs(cls) if not swap_is_visible(samples, a, b)
        ]
        assert hidden == [], f"{cls.__name__}: swaps nobody would see: {hidden[:5]}"


def test_the_exchange_covers_every_kind_of_field() -> None:
    """The types exercised hold every construct the Atom wire uses."""
    all_leaves = [leaf for cls in struct_types(Variant()) for leaf in leaves(cls)]
    kinds = {leaf.kind for leaf in all_leaves}
    assert kinds >= {"boolean", "char", "uint8", "uint16", "uint32", "uint64", "int32"}
    assert kinds >= {"float", "enum", "string"}
    assert any(re.search(r"\]\.", leaf.path) for leaf in all_leaves)  # arrays of structs
    assert any(leaf.path.count(".") >= 1 and "[" not in leaf.path for leaf in all_leaves)


def test_match_samples_names_a_swapped_field() -> None:
    cls = next(c for c in struct_types(Variant()) if c.__name__ == "MotorCmd_")
    _, samples = make_values(cls)
    swapped = [dict(s, q=s["dq"], dq=s["q"]) for s in samples]
    problems = match_samples("MotorCmd_", samples, swapped)
    assert len(problems) == SAMPLES
    assert all("q: sent" in p and "dq: sent" in p for p in problems)
    assert match_samples("MotorCmd_", samples, samples[:1]) == ["MotorCmd_: 1 of 4 samples arrived"]


@pytest.mark.dds
def test_a_c_side_with_two_fields_swapped_is_caught(tmp_path: Path, dds_domain: int) -> None:
    """Mutation test of the whole harness: C built from an idl/ copy with MotorCmd_.q and
    MotorCmd_.dq swapped (same type, so only names and order differ) must fail both checks.

    What DDS does with it is worth knowing: CycloneDDS 0.10 does not match the endpoints at
    all and logs nothing, so the affected types (and every type embedding MotorCmd_) simply
    never arrive while all others do.
    """
    idl_dir = tmp_path / "idl"
    shutil.copytree(IDL_DIR, idl_dir)
    target = idl_dir / "dobot_atom" / "motor_cmd.idl"
    text, count = re.subn(
        r"(float q;[^\n]*)\n(\s*)(float dq;[^\n]*)", r"\3\n\2\1", target.read_text(), count=1
    )
    assert count == 1, "motor_cmd.idl no longer has q followed by dq"
    target.write_text(text)
    mutant = build(Variant(), tmp_path / "build", idl_dir)
    affected = {"MotorCmd_", "UpperCmd_", "LowerCmd_", "HandsCmd_"}
    typeinfo = typeinfo_problems(mutant)
    assert {p.split(":")[0] for p in typeinfo} == affected
    result = exchange(mutant, dds_domain, timeout=3.0)  # the mismatched types never arrive
    found = exchange_problems(mutant, result)
    failed = {p.split(" ")[0].rstrip(":") for p in found}
    assert failed == affected, "\n".join([*found, "C stderr:", result.c_stderr])


def _c_type_information(tmp_path: Path, member: str) -> tuple[str, str]:
    """TypeInformation and TypeMapping that Debian's ``idlc -l c`` emits for ``struct S``."""
    work = tmp_path / member.replace(" ", "_")
    work.mkdir()
    (work / "s.idl").write_text(f"module m {{ @final struct S {{ {member}; }}; }};\n")
    subprocess.run(
        [shutil.which("idlc") or "/usr/bin/idlc", "-l", "c", "s.idl"], cwd=work, check=True
    )
    source = (work / "s.c").read_text()
    info = re.search(r"#define TYPE_INFO_CDR_m_S \(unsigned char \[\]\)\{(.*?)\}", source, re.S)
    mapping = re.search(r"#define TYPE_MAP_CDR_m_S \(unsigned char \[\]\)\{(.*?)\}", source, re.S)
    assert info is not None and mapping is not None, source
    return info.group(1), mapping.group(1)


def test_octet_and_uint8_are_one_wire_type(tmp_path: Path) -> None:
    """Why the golden data may say ``octet`` where the Python class can only say uint8.

    CycloneDDS 0.10's XTypes has no TK_UINT8 (Debian's ddsi_xt_typeinfo.idl lists TK_BYTE
    only), so idlc gives IDL ``uint8`` and ``octet`` the same type object, as
    cyclonedds-python's ``types.uint8`` does. A toolchain that told them apart (XTypes 1.3
    has TK_UINT8) would make the choice in idl/ matter for matching; this test says so.
    """
    octet = _c_type_information(tmp_path, "octet x[40]")
    assert _c_type_information(tmp_path, "uint8 x[40]") == octet
    assert _c_type_information(tmp_path, "uint16 x[40]") != octet  # the comparison can fail


def test_vendor_descriptor_reader_reads_an_idlc_archive(
    c_build: Build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools/vendor_descriptors.py, run on an archive of our own idlc objects, must find every
    descriptor and read back exactly the type information Python announces: the check of
    the vendor's libcommon.a (idl/README.md) is only as good as this reader."""
    spec = importlib.util.spec_from_file_location(
        "vendor_descriptors", IDL_DIR.parent / "tools" / "vendor_descriptors.py"
    )
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, tool)  # dataclasses look their module up there
    spec.loader.exec_module(tool)
    objects = []
    for source in c_build.sources:
        obj = tmp_path / f"{source.parent.name}_{source.stem}.c.o"  # long names: GNU ar "//"
        subprocess.run(["gcc", "-c", "-O0", "-o", obj, source], check=True)
        objects.append(obj)
    archive = tmp_path / "libours.a"
    subprocess.run(["ar", "rcs", archive, *objects], check=True)
    found = tool.descriptors(archive)
    assert sorted(found) == sorted(cls.__name__ for cls in c_build.types)
    for cls in c_build.types:
        d = found[cls.__name__]
        assert d.typename == f"dobot_atom::msg::dds_::{cls.__name__}"
        assert (d.type_information, d.type_mapping) == python_typeinfo(cls)
    lines, ok = tool.compare(found, c_build.variant.name)
    assert ok, "\n".join(lines)


# --- the executive's own receive path ---------------------------------------------------------


@pytest.mark.dds
@pytest.mark.parametrize("representation", ["xcdr1", "xcdr2"])
def test_the_executive_decoder_reads_what_c_writes(
    c_build: Build, dds_domain: int, representation: str
) -> None:
    """C samples read the way RobotIO reads them (raw bytes, ``Codec.decode``), field by field.

    The C writer's headers are checked too: a CycloneDDS 0.10 C writer puts the padding count
    in the options (``00010001`` for the 3-byte EmergencyState_, DESIGN.md 3.2), which is
    exactly what a decoder tested only against our own encoder once rejected.
    """
    result = exchange(c_build, dds_domain, representation=representation, decode="codec")
    assert result.c_done is not None, f"C side did not finish:\n{result.c_stderr}"
    problems = [
        p
        for cls in c_build.types
        for p in match_samples(
            f"{cls.__name__} C->codec", make_values(cls)[1], result.py_received[cls.__name__]
        )
    ]
    assert problems == [], "\n".join(problems)
    rep = "0001" if representation == "xcdr1" else "0007"
    sizes = {
        cls.__name__: Codec(cls).size for cls in c_build.types if cls.__name__ in result.headers
    }
    for name, seen in result.headers.items():
        padding = -sizes[name] % 4 if representation == "xcdr1" else None
        assert seen, f"{name}: nothing arrived through the codec"
        assert {h[:4] for h in seen} == {rep}, (name, seen)
        if padding is not None:
            assert {int(h[4:], 16) & 3 for h in seen} == {padding}, (name, seen)
    if representation == "xcdr1":  # some type has padding, so the check above was not vacuous
        assert any(int(h[4:], 16) for seen in result.headers.values() for h in seen)
