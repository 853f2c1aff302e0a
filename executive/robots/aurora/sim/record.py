"""What the simulated Aurora received, as JSON lines (the format of ``simkit.record``).

One JSON object a line, flushed at least every 100 ms and on exit; ``t`` is the sim's
``time.monotonic()`` (CLOCK_MONOTONIC, system-wide: a test compares it with its own):

- ``{"t", "sim": {...}}``: first; pid, domain, namespace, ROS naming, interface, the groups
  and their sizes in the robot's order;
- ``{"t", "sent", "topic", "fields", "result"}``: every command taken, every field as
  decoded (enums as numbers), ``sent`` the writer's source timestamp on the same monotonic
  clock, ``result`` what the robot did (``applied``, ``ignored_fsm``, per group
  ``left_manipulator:moving``...: ``model.AuroraModel``);
- ``{"t", "fault": {"action": "set" | "clear", "kind", ...}}``;
- ``{"t", "fsm": [whole, upper]}``: whenever either FSM changed;
- ``{"t", "contact": {"action": "begin" | "end", "a", "b", "kind", "distance", "joint"}}``:
  a contact of the body (``sim.body``, the GR-3's model) with itself or the ``--scene``
  began or ended; ``joint`` the one that made it (``simkit.physics.ContactEvent``);
- ``{"t", "counters": {topic: n}}``: last, the commands taken per topic.

Standard library only (the sim runs in .venv-aurora; simkit.record needs numpy arrays of
the Atom's streams and is not this format's reader).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO


class Recorder:
    """Buffers lines; ``flush`` writes them (the sim calls it every 100 ms and at exit)."""

    def __init__(self, path: str | Path, header: Mapping[str, Any], now: float) -> None:
        self.path = Path(path)
        self._file: TextIO = self.path.open("w", encoding="utf-8")
        self._lines: list[str] = []
        self._dump = json.JSONEncoder(separators=(",", ":")).encode
        self.add(now, {"sim": dict(header)})
        self.flush()

    def add(self, t: float, line: Mapping[str, Any]) -> None:
        self._lines.append(self._dump({"t": t, **line}) + "\n")

    def flush(self) -> None:
        if self._lines:
            self._file.write("".join(self._lines))
            self._lines.clear()
            self._file.flush()

    def close(self) -> None:
        self.flush()
        self._file.close()


def read(path: str | Path) -> Iterator[dict[str, Any]]:
    """The lines of a record (a partly written last line is skipped)."""
    with Path(path).open(encoding="utf-8") as f:
        for line in f:
            if line.endswith("\n"):
                yield json.loads(line, parse_constant=lambda c: math.nan)
