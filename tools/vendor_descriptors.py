"""Compare the vendor firmware's DDS type descriptors with the executive's wire types.

The vendor SDK (Dobot-Arm/dobot_atom_sdk) ships ``lib/libcommon.a``, whose objects hold the
topic descriptors that the vendor's idlc 0.10.5 generated for the robot's types
(``dobot_atom_msg_dds__<Type>__desc``). Each descriptor carries the XTypes TypeInformation and
TypeMapping that the firmware announces in discovery, which is exactly what CycloneDDS
compares when it decides whether our reader matches the robot's writer. Equal bytes there
prove wire identity with the real firmware types, beyond what any header transcription can.

The archive is read, not linked: a small ar and ELF64 reader follows the relocations of each
descriptor's ``m_typename``/``type_information``/``type_mapping`` pointers to the bytes in
.rodata, so this works on any host for x86-64 and aarch64 objects alike.

Nothing of the vendor's is copied into the project: pass the path of an archive you obtained
yourself, e.g. ``git -C <sdk clone> show HEAD:lib/libcommon.a > /tmp/libcommon.a``, then::

    .venv/bin/python tools/vendor_descriptors.py /tmp/libcommon.a --variant sdk-1.1.0
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DESC_PREFIX = "dobot_atom_msg_dds__"
DESC_SUFFIX = "_desc"

# dds_topic_descriptor_t (CycloneDDS 0.10 dds/ddsc/dds_public_impl.h) on an LP64 target.
_TYPENAME_AT = 16
_TYPEINFO_AT, _TYPEINFO_SZ_AT = 56, 64
_TYPEMAP_AT, _TYPEMAP_SZ_AT = 72, 80
_DESCRIPTOR_SIZE = 88

_ABS64 = {62: 1, 183: 257}  # e_machine -> its absolute 64-bit relocation (x86-64, aarch64)
_SHT_SYMTAB, _SHT_RELA = 2, 4


@dataclass(frozen=True)
class Descriptor:
    member: str  # archive member it came from
    typename: str  # e.g. dobot_atom::msg::dds_::UpperState_
    type_information: bytes
    type_mapping: bytes


def ar_members(data: bytes) -> Iterator[tuple[str, bytes]]:
    """(name, contents) of each member of a System V / GNU ar archive."""
    if not data.startswith(b"!<arch>\n"):
        raise ValueError("not an ar archive")
    pos, long_names = 8, b""
    while pos + 60 <= len(data):
        header = data[pos : pos + 60]
        name = header[:16].decode().rstrip()
        size = int(header[48:58].decode())
        body = data[pos + 60 : pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name == "//":
            long_names = body
        elif name in ("/", "/SYM64/"):
            continue
        elif name.startswith("/") and name[1:].isdigit():
            start = int(name[1:])
            yield long_names[start : long_names.index(b"/\n", start)].decode(), body
        else:
            yield name.rstrip("/"), body


@dataclass(frozen=True)
class _Section:
    name: str
    type: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int


class Elf:
    """Just enough of an ELF64 little-endian relocatable object to resolve data pointers."""

    def __init__(self, data: bytes) -> None:
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            raise ValueError("not a 64-bit little-endian ELF object")
        self.data = data
        self.machine = struct.unpack_from("<H", data, 18)[0]
        (shoff,) = struct.unpack_from("<Q", data, 40)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 58)
        raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        names = raw[shstrndx]
        self.sections = [
            _Section(self._cstr(names[4] + s[0]), s[1], s[4], s[5], s[6], s[7], s[9]) for s in raw
        ]
        symtab = next(s for s in self.sections if s.type == _SHT_SYMTAB)
        strtab = self.sections[symtab.link]
        self.symbols = []  # (name, section index, value)
        for i in range(symtab.size // symtab.entsize):
            st_name, _, _, st_shndx, st_value, _ = struct.unpack_from(
                "<IBBHQQ", data, symtab.offset + i * symtab.entsize
            )
            self.symbols.append((self._cstr(strtab.offset + st_name), st_shndx, st_value))
        # (target section, offset) -> (symbol index, addend), absolute 64-bit relocations only
        self.relocations: dict[tuple[int, int], tuple[int, int]] = {}
        abs64 = _ABS64.get(self.machine)
        for rela in (s for s in self.sections if s.type == _SHT_RELA):
            for i in range(rela.size // rela.entsize):
                r_offset, r_info, r_addend = struct.unpack_from(
                    "<QQq", data, rela.offset + i * rela.entsize
                )
                if r_info & 0xFFFFFFFF == abs64:
                    self.relocations[(rela.info, r_offset)] = (r_info >> 32, r_addend)

    def _cstr(self, at: int) -> str:
        return self.data[at : self.data.index(b"\0", at)].decode()

    def pointer(self, section: int, offset: int) -> tuple[int, int]:
        """Where the pointer stored at (section, offset) points: (section, offset)."""
        if (section, offset) not in self.relocations:
            raise ValueError(f"no relocation for the pointer at {section}:{offset:#x}")
        sym, addend = self.relocations[(section, offset)]
        _, shndx, value = self.symbols[sym]
        return shndx, value + addend

    def read(self, section: int, offset: int, size: int) -> bytes:
        start = self.sections[section].offset + offset
        return self.data[start : start + size]

    def read_cstr(self, section: int, offset: int) -> str:
        return self._cstr(self.sections[section].offset + offset)


def descriptors(archive: Path) -> dict[str, Descriptor]:
    """Type short name (e.g. ``UpperState_``) -> the vendor's descriptor, from an .a or .o."""
    data = archive.read_bytes()
    members = list(ar_members(data)) if data.startswith(b"!<arch>\n") else [(archive.name, data)]
    found: dict[str, Descriptor] = {}
    for member, body in members:
        if not body.startswith(b"\x7fELF"):
            continue
        elf = Elf(body)
        for name, shndx, value in elf.symbols:
            if not (name.startswith(DESC_PREFIX) and name.endswith(DESC_SUFFIX)) or shndx == 0:
                continue
            raw = elf.read(shndx, value, _DESCRIPTOR_SIZE)
            info_sz = struct.unpack_from("<I", raw, _TYPEINFO_SZ_AT)[0]
            map_sz = struct.unpack_from("<I", raw, _TYPEMAP_SZ_AT)[0]
            typename = elf.read_cstr(*elf.pointer(shndx, value + _TYPENAME_AT))
            info = elf.read(*elf.pointer(shndx, value + _TYPEINFO_AT), info_sz)
            mapping = elf.read(*elf.pointer(shndx, value + _TYPEMAP_AT), map_sz)
            short = name[len(DESC_PREFIX) : -len(DESC_SUFFIX)]
            found[short] = Descriptor(member, typename, info, mapping)
    return found


def python_type_data(cls: type) -> tuple[bytes, bytes]:
    """TypeInformation and TypeMapping that cyclonedds-python announces for ``cls``."""
    idl = cls.__idl__  # type: ignore[attr-defined]
    idl.fill_type_data()
    info, mapping = idl._xt_bytedata
    return bytes(info), bytes(mapping)


def compare(vendor: dict[str, Descriptor], variant_text: str) -> tuple[list[str], bool]:
    """Report lines, and whether every type both sides have is byte-identical."""
    from executive.robots.atom.interface import Interface, Variant  # needs the project's venv

    interface = Interface(Variant.parse(variant_text))
    ours = {n: getattr(interface, n) for n in interface.type_names}
    ours = {n: c for n, c in ours.items() if hasattr(c, "__dataclass_fields__")}  # structs
    lines = [f"variant {variant_text}: {len(vendor)} vendor descriptors, {len(ours)} our structs"]
    ok = True
    for name in sorted(set(vendor) | set(ours)):
        if name not in ours:
            lines.append(f"  {name:20s} vendor only ({vendor[name].typename})")
            continue
        if name not in vendor:
            lines.append(f"  {name:20s} ours only")
            continue
        v = vendor[name]
        info, mapping = python_type_data(ours[name])
        same = v.type_information == info and v.type_mapping == mapping
        ok &= same and v.typename == f"dobot_atom::msg::dds_::{name}"
        verdict = "identical" if same else (
            "TypeInformation " + ("same" if v.type_information == info else "DIFFERS")
            + ", TypeMapping " + ("same" if v.type_mapping == mapping else "DIFFERS")
        )  # fmt: skip
        lines.append(f"  {name:20s} {verdict}  ({v.typename}, {v.member})")
    return lines, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("archive", type=Path, help="the vendor's libcommon.a (or one .o)")
    parser.add_argument(
        "--variant",
        action="append",
        help="interface variant(s) to compare with, e.g. sdk-1.1.0 (default: every preset); "
        "the exit status is 0 when the archive is wire-identical to at least one of them",
    )
    args = parser.parse_args(argv)
    vendor = descriptors(args.archive)
    if not vendor:
        print(f"no {DESC_PREFIX}*{DESC_SUFFIX} descriptors in {args.archive}", file=sys.stderr)  # noqa: T201
        return 2
    from executive.robots.atom.interface import PRESETS

    results = []
    for variant in args.variant or list(PRESETS):
        lines, ok = compare(vendor, variant)
        print("\n".join(lines))  # noqa: T201 - CLI output
        print(f"  => {'wire-identical' if ok else 'NOT identical'}\n")  # noqa: T201
        results.append(ok)
    return 0 if any(results) else 1


if __name__ == "__main__":
    sys.exit(main())
