"""idl/fourier_aurora/fourier_aurora.idl is what the wire module's classes are.

The IDL is the readable contract (Debian's idlc 0.10.2 compiles it, @appendable included);
the wire uses the cyclonedds 11 classes of executive/robots/aurora/wire/types.py. Every struct
of the IDL must be a class of types.py with the same type name and the same members in the
same order, and every type of types.py (but the seed variants) must be in the IDL.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.aurora.harness import AURORA_PY, ROOT, env, require

IDL = ROOT / "idl" / "fourier_aurora" / "fourier_aurora.idl"
SEED_VARIANTS = {"VelocityCmdSeed", "MotorCfgGroupCmdSeed", "RobotMotorCfgGroupCmdSeed"}


def idl_structs() -> dict[str, list[str]]:
    """{scoped type name: member names} parsed from the IDL (its own simple layout)."""
    text = re.sub(r"//[^\n]*", "", IDL.read_text())
    structs: dict[str, list[str]] = {}
    for module in re.finditer(r"module (\w+) \{ module msg \{(.*?)\n\}; \};", text, re.S):
        for m in re.finditer(r"struct (\w+) \{(.*?)\};", module.group(2), re.S):
            members = [d.split()[-1] for d in m.group(2).split(";") if d.strip()]
            structs[f"{module.group(1)}::msg::{m.group(1)}"] = members
    return structs


def test_idlc_compiles_it(tmp_path: Path) -> None:
    done = subprocess.run(
        ["idlc", str(IDL)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "fourier_aurora.c").exists()


def test_the_idl_and_the_wire_classes_agree() -> None:
    code = (
        "import dataclasses, json\n"
        "from cyclonedds.idl import IdlStruct\n"
        "from executive.robots.aurora.wire import types\n"
        "out = {}\n"
        "for name, cls in vars(types).items():\n"
        "    if (isinstance(cls, type) and issubclass(cls, IdlStruct) and cls is not IdlStruct\n"
        "            and cls.__module__ == types.__name__ and not name.endswith('Ros')):\n"
        "        out[name] = [cls.__idl_typename__, [f.name for f in dataclasses.fields(cls)]]\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [str(require(AURORA_PY)), "-c", code],
        capture_output=True,
        text=True,
        env=env(),
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    classes = json.loads(done.stdout)
    structs = idl_structs()
    assert len(structs) >= 25, sorted(structs)
    wire = {
        typename: members
        for name, (typename, members) in classes.items()
        if name not in SEED_VARIANTS
    }
    assert wire == structs
