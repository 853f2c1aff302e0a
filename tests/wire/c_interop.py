"""Build and drive a CycloneDDS C program that speaks the wire types compiled by Debian's idlc.

Two code generators meet here: the C structs that ``idlc -l c`` makes from ``idl/`` and the
Python dataclasses that cyclonedds-python's ``idlc -l py`` plugin made from the same files
(the robot's side of the wire is the former). This module walks the Python classes and emits C
that sets and prints every field *by name*, with values derived from the field's path
(``motor_state[3].q``). If the two disagreed on order, type or size of any field, the bytes
one side writes would decode to different values on the other, and the path-keyed comparison
names the field.

Values are chosen so that such a swap cannot go unnoticed: across the samples of one type,
no two leaves of the same wire width carry the same sequence of values, and sibling booleans
differ in at least one sample (``make_values`` checks this and re-salts until it holds).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import time
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from cyclonedds.core import (
    InstanceState,
    Policy,
    Qos,
    ReadCondition,
    SampleState,
    ViewState,
    WaitSet,
)
from cyclonedds.idl import IdlEnum, IdlStruct
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from executive.robots.atom.interface import AXES, Interface, Variant
from executive.wire import dds
from executive.wire.codec import Codec, UnsupportedTypeError, raw_take
from tests.wire.layout import field_type

ROOT = Path(__file__).resolve().parents[2]
IDL_DIR = ROOT / "idl"
C_DIR = Path(__file__).with_name("c")
SAMPLES = 4  # per type and direction; enough for sibling booleans to differ somewhere
C_PREFIX = "dobot_atom_msg_dds__"

Flat = dict[str, Any]  # field path -> value (ints for chars and enums)

# Wire width of each leaf kind; leaves of one width could be confused by a layout error.
_WIDTH = {
    "boolean": 1,
    "char": 1,
    "octet": 1,
    "uint8": 1,
    "int8": 1,
    "uint16": 2,
    "int16": 2,
    "uint32": 4,
    "int32": 4,
    "float": 4,
    "enum": 4,
    "uint64": 8,
    "int64": 8,
    "double": 8,
    "string": 0,
}
_PACK = {
    "boolean": "<?",
    "char": "<b",
    "octet": "<B",
    "uint8": "<B",
    "int8": "<b",
    "uint16": "<H",
    "int16": "<h",
    "uint32": "<I",
    "int32": "<i",
    "float": "<f",
    "enum": "<i",
    "uint64": "<Q",
    "int64": "<q",
    "double": "<d",
}


@dataclass(frozen=True)
class Leaf:
    path: str  # also the C member expression below the struct pointer: s->motor_state[3].q
    kind: str  # IDL spelling of the leaf type, or "enum"
    parent: str  # path prefix of the struct instance holding it ("" for the top level)
    enum: Any = None  # the IdlEnum class when kind == "enum"


def leaves(cls: type, prefix: str = "") -> list[Leaf]:
    """Every scalar in a struct, depth first in field order, arrays expanded."""
    out: list[Leaf] = []
    for name, annotation in typing.get_type_hints(cls, include_extras=True).items():
        spelling, length, refs = field_type(annotation)
        paths = (
            [prefix + name] if length is None else [f"{prefix}{name}[{i}]" for i in range(length)]
        )
        for path in paths:
            ref = refs[0] if refs else None
            if ref is not None and issubclass(ref, IdlStruct):
                out.extend(leaves(ref, path + "."))
            elif ref is not None and issubclass(ref, IdlEnum):
                out.append(Leaf(path, "enum", prefix, ref))
            elif spelling in _WIDTH:
                out.append(Leaf(path, spelling, prefix))
            else:
                raise TypeError(f"{cls.__name__}.{name}: no interop rule for {spelling!r}")
    return out


def value(leaf: Leaf, k: int, salt: int) -> Any:
    """The value of ``leaf`` in sample ``k``: a function of the path only (and a salt)."""
    digest = hashlib.blake2b(f"{salt}/{k}/{leaf.path}".encode(), digest_size=8).digest()
    h = int.from_bytes(digest, "little")
    match leaf.kind:
        case "boolean":
            return bool(h & 1)
        case "char" | "int8":
            return 1 + h % 127
        case "uint8" | "octet":
            return 1 + h % 255
        case "uint16":
            return 1 + h % 0xFFFF
        case "int16":
            return h % 0xFFFF - 0x7FFF
        case "uint32":
            return 1 + h % 0xFFFF_FFFF
        case "int32":
            return h % 0xFFFF_FFFF - 0x7FFF_FFFF
        case "uint64":
            return 1 + h % 0xFFFF_FFFF_FFFF_FFFF
        case "int64":
            return h % 0xFFFF_FFFF_FFFF_FFFF - 0x7FFF_FFFF_FFFF_FFFF
        case "float":  # 21 significant bits: exact in float32, printed and parsed exactly
            return (h % 2**21 - 2**20) / 64
        case "double":
            return (h % 2**40 - 2**39) / 1024
        case "enum":
            return h % len(leaf.enum)
        case "string":
            return f"s{k}_{h:012x}"
    raise TypeError(leaf.kind)


def width(leaf: Leaf) -> int:
    """Bytes on the wire (0 for strings)."""
    return _WIDTH[leaf.kind]


def _wire_bytes(leaf: Leaf, v: Any) -> bytes:
    if leaf.kind == "string":
        return str(v).encode()
    return struct.pack(_PACK[leaf.kind], v)


def swap_is_visible(samples: Sequence[Flat], a: Leaf, b: Leaf) -> bool:
    """Whether exchanging the values of ``a`` and ``b`` changes at least one sample."""
    return any(_wire_bytes(a, s[a.path]) != _wire_bytes(b, s[b.path]) for s in samples)


def _well_spread(all_leaves: Sequence[Leaf], samples: Sequence[Flat]) -> bool:
    """No two non-boolean leaves of one width share their value sequence across the samples;
    booleans of one struct all differ from each other and each takes both values somewhere."""
    seen: dict[tuple[int, tuple[bytes, ...]], str] = {}
    for leaf in all_leaves:
        if leaf.kind == "boolean":
            continue
        vector = tuple(_wire_bytes(leaf, s[leaf.path]) for s in samples)
        key = (_WIDTH[leaf.kind], vector)
        if key in seen:
            return False
        seen[key] = leaf.path
    by_parent: dict[str, list[Leaf]] = {}
    for leaf in all_leaves:
        if leaf.kind == "boolean":
            by_parent.setdefault(leaf.parent, []).append(leaf)
    for group in by_parent.values():
        vectors = [tuple(s[leaf.path] for s in samples) for leaf in group]
        if len(set(vectors)) != len(vectors) or any(len(set(v)) == 1 for v in vectors):
            return False
    return True


def make_values(cls: type, count: int = SAMPLES) -> tuple[list[Leaf], list[Flat]]:
    """The leaves of ``cls`` and ``count`` samples of values in which no swap can hide."""
    all_leaves = leaves(cls)
    for salt in range(1000):
        samples = [{leaf.path: value(leaf, k, salt) for leaf in all_leaves} for k in range(count)]
        if _well_spread(all_leaves, samples):
            return all_leaves, samples
    raise AssertionError(f"{cls.__name__}: no salt gives distinguishable values")


def build_sample(cls: type, flat: Flat, prefix: str = "") -> Any:
    """A Python sample of ``cls`` holding the flat values."""
    kwargs: dict[str, Any] = {}
    for name, annotation in typing.get_type_hints(cls, include_extras=True).items():
        spelling, length, refs = field_type(annotation)
        ref = refs[0] if refs else None

        def one(path: str, ref: Any = ref, spelling: str = spelling) -> Any:
            if ref is not None and issubclass(ref, IdlStruct):
                return build_sample(ref, flat, path + ".")
            if ref is not None:
                return ref(flat[path])
            return chr(flat[path]) if spelling == "char" else flat[path]

        base = prefix + name
        kwargs[name] = one(base) if length is None else [one(f"{base}[{i}]") for i in range(length)]
    return cls(**kwargs)


def flatten(cls: type, sample: Any, prefix: str = "") -> Flat:
    """A received Python sample as field path -> value, by Python field name."""
    out: Flat = {}
    for name, annotation in typing.get_type_hints(cls, include_extras=True).items():
        spelling, length, refs = field_type(annotation)
        ref = refs[0] if refs else None
        raw = getattr(sample, name)
        items = (
            [(prefix + name, raw)]
            if length is None
            else [(f"{prefix}{name}[{i}]", v) for i, v in enumerate(raw)]
        )
        for path, v in items:
            if ref is not None and issubclass(ref, IdlStruct):
                out.update(flatten(ref, v, path + "."))
            elif isinstance(v, Enum):
                out[path] = v.value
            elif spelling == "char":
                out[path] = ord(v)
            else:
                out[path] = v
    return out


def match_samples(name: str, expected: Sequence[Flat], got: Sequence[Flat]) -> list[str]:
    """Problems, by field path, between the samples sent and those received (any order)."""
    problems: list[str] = []
    unmatched = list(expected)
    for flat in got:
        if flat in unmatched:
            unmatched.remove(flat)
            continue
        ref = min(expected, key=lambda e: _distance(e, flat))
        diffs = [
            f"{p}: sent {ref.get(p)!r}, received {flat.get(p)!r}"
            for p in sorted(set(ref) | set(flat))
            if ref.get(p) != flat.get(p)
        ]
        problems.append(f"{name}: {len(diffs)} fields differ, e.g. " + "; ".join(diffs[:8]))
    if len(got) != len(expected):
        problems.append(f"{name}: {len(got)} of {len(expected)} samples arrived")
    return problems


def _distance(a: Flat, b: Flat) -> int:
    return sum(a.get(p) != b.get(p) for p in set(a) | set(b))


# --- C code generation --------------------------------------------------------------------------


def _c_literal(leaf: Leaf, v: Any) -> str:
    match leaf.kind:
        case "boolean":
            return "true" if v else "false"
        case "char" | "int8":
            return f"(char) {v}"
        case "uint8" | "octet" | "uint16":
            return f"{v}u"
        case "int16":
            return str(v)
        case "uint32":
            return f"UINT32_C({v})"
        case "int32":
            return f"INT32_C({v})"
        case "uint64":
            return f"UINT64_C({v})"
        case "int64":
            return f"INT64_C({v})"
        case "float":
            return f"{float(v)!r}f"
        case "double":
            return repr(float(v))
        case "enum":  # by enumerator name, so C's own numbering is what goes on the wire
            return C_PREFIX + str(list(leaf.enum)[v].name)
        case "string":
            return f'dds_string_dup("{v}")'
    raise TypeError(leaf.kind)


_C_FORMAT = {
    "char": ('"%d"', "(int) "),
    "int8": ('"%d"', "(int) "),
    "uint8": ('"%u"', "(unsigned) "),
    "octet": ('"%u"', "(unsigned) "),
    "uint16": ('"%u"', "(unsigned) "),
    "int16": ('"%d"', "(int) "),
    "uint32": ('"%" PRIu32', ""),
    "int32": ('"%" PRId32', ""),
    "uint64": ('"%" PRIu64', ""),
    "int64": ('"%" PRId64', ""),
    "float": ('"%.17g"', "(double) "),
    "double": ('"%.17g"', ""),
    "enum": ('"%d"', "(int) "),
}


def _c_dump(leaf: Leaf, first: bool) -> str:
    key = ("" if first else ",") + f'\\"{leaf.path}\\":'
    access = f"s->{leaf.path}"
    if leaf.kind == "boolean":
        return f'  fputs("{key}", out); fputs({access} ? "true" : "false", out);'
    if leaf.kind == "string":
        return f'  fputs("{key}", out); interop_dump_string(out, {access});'
    fmt, cast = _C_FORMAT[leaf.kind]
    return f'  fprintf(out, "{key}" {fmt}, {cast}{access});'


def c_table(types: Sequence[type], headers: Iterable[str]) -> str:
    """C source: fill/dump functions and the type table for interop_main.c."""
    lines = [
        "/* Generated by tests/wire/c_interop.py at test time; not committed. */",
        "#include <inttypes.h>",
        "#include <stdbool.h>",
        '#include "interop.h"',
        *[f'#include "{h}"' for h in headers],
        "",
    ]
    for cls in types:
        name = cls.__name__
        ctype = C_PREFIX + name
        all_leaves, samples = make_values(cls)
        lines += [
            f"static void fill_{name}(void *p, int k)",
            "{",
            f"  {ctype} *s = p;",
            "  switch (k) {",
        ]
        for k, flat in enumerate(samples):
            lines.append(f"  case {k}:")
            lines += [
                f"    s->{leaf.path} = {_c_literal(leaf, flat[leaf.path])};" for leaf in all_leaves
            ]
            lines.append("    break;")
        lines += ["  }", "}", ""]
        lines += [
            f"static void dump_{name}(FILE *out, const void *p)",
            "{",
            f"  const {ctype} *s = p;",
        ]
        lines += [_c_dump(leaf, i == 0) for i, leaf in enumerate(all_leaves)]
        lines += ["}", ""]
    lines.append("const interop_type interop_types[] = {")
    for cls in types:
        name = cls.__name__
        ctype = C_PREFIX + name
        lines.append(f'  {{"{name}", &{ctype}_desc, sizeof({ctype}), fill_{name}, dump_{name}}},')
    lines += [
        "};",
        f"const size_t interop_ntypes = {len(types)};",
        f"const int interop_nsamples = {SAMPLES};",
        "",
    ]
    return "\n".join(lines)


# --- build --------------------------------------------------------------------------------------


def idl_files(variant: Variant, idl_dir: Path = IDL_DIR) -> list[Path]:
    """The .idl files of one variant: the defaults, with the variant folders' files replacing
    the default file of the same name (the same rule the Python packages follow)."""
    chosen = {f.name: f for f in sorted((idl_dir / "dobot_atom").glob("*.idl"))}
    for axis, choice in variant.choices.items():
        package = AXES[axis][choice]
        if package is not None:
            for f in sorted((idl_dir / "variants" / package).glob("*.idl")):
                chosen[f.name] = f
    return list(chosen.values())


def struct_types(variant: Variant) -> list[type]:
    interface = Interface(variant)
    classes = [getattr(interface, n) for n in interface.type_names]
    return [c for c in classes if issubclass(c, IdlStruct)]


@dataclass
class Build:
    variant: Variant
    exe: Path
    types: list[type]
    sources: list[Path]  # the idlc-generated .c files (descriptors) it was linked from


def _run(cmd: Sequence[str | Path]) -> str:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=120, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def build(variant: Variant, workdir: Path, idl_dir: Path = IDL_DIR) -> Build:
    """idlc -l c over the variant's .idl files, then gcc with the generated table, -lddsc.

    ``idl_dir`` lets a test build the C side from a deliberately altered copy of ``idl/``.
    """
    idlc = shutil.which("idlc") or "/usr/bin/idlc"
    gcc = shutil.which("gcc") or "gcc"
    sources: list[Path] = []
    headers: list[str] = []
    for idl in idl_files(variant, idl_dir):
        rel = idl.relative_to(idl_dir)
        outdir = workdir / rel.parent  # keeps the variants' "../../dobot_atom/x.h" includes valid
        outdir.mkdir(parents=True, exist_ok=True)
        _run([idlc, "-l", "c", "-o", outdir, idl])
        sources.append(outdir / f"{idl.stem}.c")
        headers.append(str(rel.with_suffix(".h")))
    types = struct_types(variant)
    table = workdir / "interop_types.c"
    table.write_text(c_table(types, headers))
    exe = workdir / "interop"
    _run([
        gcc, "-std=gnu11", "-O0", "-Wall", "-Werror=implicit-function-declaration",
        "-Werror=incompatible-pointer-types", "-Werror=int-conversion",
        "-I", workdir, "-I", C_DIR, "-o", exe,
        C_DIR / "interop_main.c", table, *sources, "-lddsc",
    ])  # fmt: skip
    return Build(variant, exe, types, sources)


# --- exchange ------------------------------------------------------------------------------------


@dataclass
class Exchange:
    """What both sides received, and the C side's own account (match counts, stderr).

    ``headers``: with ``decode="codec"``, the encapsulation headers (hex) that arrived per type.
    """

    py_received: dict[str, list[Flat]]
    c_received: dict[str, list[Flat]]
    c_summary: dict[str, dict[str, Any]]
    c_done: dict[str, Any] | None
    c_stderr: str
    headers: dict[str, set[str]] = field(default_factory=dict)


def record_value(record: Any, path: str) -> Any:
    """The value at ``path`` (``motor_state[3].q``) of a codec record, as ``flatten`` gives it."""
    node = record
    for name, index in re.findall(r"(\w+)(?:\[(\d+)\])?", path):
        node = node[name]
        if index:
            node = node[int(index)]
    item = node.item() if hasattr(node, "item") else node
    return item[0] if isinstance(item, bytes) else item  # a char (S1): its code


def flatten_record(cls: type, record: Any) -> Flat:
    """A record decoded by ``executive.wire.codec`` as field path -> value."""
    return {leaf.path: record_value(record, leaf.path) for leaf in leaves(cls)}


def exchange(
    b: Build,
    domain: int,
    timeout: float = 20.0,
    *,
    representation: str | None = None,
    decode: str = "stock",
) -> Exchange:
    """Run the C program and a Python participant on ``domain`` and swap every type's samples.

    Both sides write first (reliable, transient-local, keep-last SAMPLES) and then wait,
    bounded, for the other side's samples: the order in which the two start is irrelevant.

    ``representation`` ("xcdr1" or "xcdr2") sets the C writers' data representation.
    ``decode="codec"`` reads the C samples the way the executive's ``RobotIO`` does (raw
    bytes off the reader, ``Codec.decode``) instead of through stock cyclonedds-python, for
    every type the codec supports; the reader accepts XCDR1 and XCDR2, as ``dds`` QoS does.
    """
    names = {cls.__name__: cls for cls in b.types}
    codecs: dict[str, Codec] = {}
    if decode == "codec":
        for name, cls in names.items():
            with contextlib.suppress(UnsupportedTypeError):  # SetFsmId_ (a string): stock
                codecs[name] = Codec(cls)
    headers: dict[str, set[str]] = {n: set() for n in codecs}
    values = {name: make_values(cls)[1] for name, cls in names.items()}
    # The C side writes to files, not to pipes: a pipe nobody drains until the end fills up,
    # blocks the C program's printf and stalls its receive loop, which looks exactly like a
    # DDS delivery problem.
    out_path = b.exe.with_name(f"run-{domain}.out")
    err_path = b.exe.with_name(f"run-{domain}.err")
    with out_path.open("w") as out_file, err_path.open("w") as err_file:
        proc = subprocess.Popen(
            [str(b.exe), "run", str(domain), str(timeout)]
            + ([representation] if representation else []),
            stdin=subprocess.PIPE,
            stdout=out_file,
            stderr=err_file,
            env=dict(os.environ),  # CYCLONEDDS_URI: the loopback config tests/conftest.py set
        )
    py_received: dict[str, list[Flat]] = {n: [] for n in names}
    try:
        with dds.open_participant(domain) as participant:
            qos = Qos(
                Policy.Reliability.Reliable(duration(seconds=1)),
                Policy.Durability.TransientLocal,
                Policy.History.KeepLast(SAMPLES),
                # CycloneDDS keeps this many samples for late-joining readers (default 1)
                Policy.DurabilityService(
                    cleanup_delay=0,
                    history=Policy.History.KeepLast(SAMPLES),
                    max_samples=-1,
                    max_instances=-1,
                    max_samples_per_instance=-1,
                ),
                dds.ACCEPTED_REPRESENTATIONS,
            )
            waitset = WaitSet(participant)
            readers: dict[str, DataReader[Any]] = {}
            keep: list[object] = []  # entities must outlive the exchange
            for name, cls in names.items():
                writer: DataWriter[Any] = DataWriter(
                    participant, Topic(participant, f"interop/{name}/py2c", cls), qos=qos
                )
                reader: DataReader[Any] = DataReader(
                    participant, Topic(participant, f"interop/{name}/c2py", cls), qos=qos
                )
                condition = ReadCondition(
                    reader, SampleState.Any | ViewState.Any | InstanceState.Any
                )
                waitset.attach(condition)
                keep += [writer, condition]
                readers[name] = reader
                for flat in values[name]:
                    writer.write(build_sample(cls, flat))
            deadline = time.monotonic() + timeout
            while any(len(v) < SAMPLES for v in py_received.values()):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                waitset.wait(duration(seconds=min(remaining, 1.0)))
                for name, reader in readers.items():
                    if name in codecs:
                        for data in raw_take(reader, 16):
                            headers[name].add(data[:4].hex())
                            record = codecs[name].decode(data)
                            py_received[name].append(flatten_record(names[name], record))
                        continue
                    for sample in reader.take(N=16):
                        if isinstance(sample, names[name]):
                            py_received[name].append(flatten(names[name], sample))
            # Closing stdin lets the C side leave once it has all it waits for (or times out);
            # until then our writers stay up so it can still read our samples.
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=timeout + 15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = out_path.read_text()
    err = err_path.read_text()
    c_received: dict[str, list[Flat]] = {n: [] for n in names}
    c_summary: dict[str, dict[str, Any]] = {}
    c_done = None
    for line in out.splitlines():
        event = json.loads(line)
        if event["event"] == "sample":
            c_received[event["type"]].append(event["fields"])
        elif event["event"] == "summary":
            c_summary[event["type"]] = event
        elif event["event"] == "done":
            c_done = event
    return Exchange(py_received, c_received, c_summary, c_done, err, headers)


def c_typeinfo(b: Build) -> dict[str, dict[str, str]]:
    out = _run([b.exe, "typeinfo"])
    return {e["type"]: e for e in map(json.loads, out.splitlines())}


def python_typeinfo(cls: type) -> tuple[bytes, bytes]:
    """The XTypes TypeInformation and TypeMapping cyclonedds-python announces for ``cls``."""
    idl = cls.__idl__  # type: ignore[attr-defined]
    idl.fill_type_data()
    info, mapping = idl._xt_bytedata
    return bytes(info), bytes(mapping)
