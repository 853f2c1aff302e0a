"""The Aurora's wire as words, for the seam test (tests/test_seam.py): its topics (its wire's
tables) and every member of its types (its IDL), read as text, since the wire's modules are
cyclonedds 11's and never load in the service's environment."""

from __future__ import annotations

import ast
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
IDL = HERE.parents[2] / "idl" / "fourier_aurora" / "fourier_aurora.idl"


def wire_words() -> set[str]:
    """Every topic name of ``wire/topics.py`` and every member of ``fourier_msgs`` in its IDL
    (std_msgs' Header, ``frame_id`` and ``stamp``, is every ROS-shaped wire's)."""
    tables = ast.parse((HERE / "wire" / "topics.py").read_text(encoding="utf-8"))
    topics = {
        key.value
        for node in ast.walk(tables)
        if isinstance(node, ast.Dict)
        for key in node.keys
        if isinstance(key, ast.Constant) and isinstance(key.value, str)
    }
    idl = re.sub(
        r"//[^\n]*", "", IDL.read_text(encoding="utf-8").split("module fourier_msgs", 1)[1]
    )
    return topics | set(re.findall(r"[\w:<>]+\s+(\w+)\s*;", idl))
