"""What the simulated Adam received: the simulated Atom's record format, Adam's topics.

The sim writes with the simulated Atom's ``Recorder`` (``executive.robots.atom.sim.record``, whose
docstring describes every line), so both records read alike. Streams are ``body_cmd``
(``rt/lowcmd``: q and kp of the N motors in the profile's order) and ``hand_cmd``
(``rt/handcmd``: the 12 positions in counts as q, kp 1). Results are those of the Atom's
plus ``bad_mode`` (a motor's mode is not 1); a command without exactly N motors has no q to
write, so it is an event line ``{"t", "topic": "body_cmd", "fields": {"motors",
"expected", "mode_pr"}, "result": "wrong_length"}``.

``Recording`` here is the Atom's reader with these stream topics: the Atom's parses its
three stream topics by name, which is all this class changes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from executive.robots.atom.sim import record as atom_record
from executive.robots.atom.sim.record import EventCommand, StreamCommand

BODY_TOPIC = "body_cmd"
HAND_TOPIC = "hand_cmd"
STREAM_TOPICS = (BODY_TOPIC, HAND_TOPIC)


class Recording(atom_record.Recording):
    """A simulated Adam's record file, parsed (``Recording.load(path)``)."""

    def __init__(self, lines: list[dict[str, Any]]) -> None:
        super().__init__([])
        last: dict[str, StreamCommand] = {}
        for obj in lines:
            t = float(obj["t"])
            if "sim" in obj:
                self.header = obj["sim"]
            elif "fault" in obj:
                self.faults.append((t, obj["fault"]))
            elif "counters" in obj:
                self.counters = obj["counters"]
            elif "fields" in obj:
                self.events.append(EventCommand(t, obj["topic"], obj["fields"], obj["result"]))
            elif obj.get("topic") in STREAM_TOPICS:
                cmd = self._stream(t, obj, last.get(obj["topic"]))
                if cmd is not None:
                    last[cmd.topic] = cmd
                    self.streams.append(cmd)

    @classmethod
    def load(cls, path: str | Path) -> Recording:
        """Parse the file; an unfinished last line (the sim mid-write) is skipped."""
        rec = super().load(path)
        assert isinstance(rec, Recording)
        return rec

    @staticmethod
    def _stream(t: float, obj: dict[str, Any], prev: StreamCommand | None) -> StreamCommand | None:
        topic = obj["topic"]
        if obj.get("same"):
            if prev is None:  # cannot happen in a whole file; be lenient
                return None
            return StreamCommand(
                t, obj["sent"], topic, obj["result"], obj["dev"], 0.0, prev.q, prev.kp
            )
        change = obj.get("change")
        return StreamCommand(
            t,
            obj["sent"],
            topic,
            obj["result"],
            obj["dev"],
            math.inf if change is None else change,
            tuple(obj["q"]),
            tuple(obj["kp"]) if "kp" in obj else (prev.kp if prev else ()),
        )

    def motion_commands(
        self,
        after: float,
        *,
        before: float = math.inf,
        topic: str | None = None,
        tol: float = 0.02,
        clock: str = "sent",
    ) -> list[StreamCommand]:
        """As the Atom's (see there), over the Adam's stream topics."""
        topics = [topic] if topic is not None else list(STREAM_TOPICS)
        out: list[StreamCommand] = []
        for name in topics:
            out += super().motion_commands(after, before=before, topic=name, tol=tol, clock=clock)
        return sorted(out, key=lambda c: float(getattr(c, clock)))


__all__ = ["BODY_TOPIC", "HAND_TOPIC", "STREAM_TOPICS", "Recording"]
