"""What a simulated robot received, as JSON lines, and the reader tests check it with.

``--record PATH`` makes a sim write one JSON object per line, flushed at least every
100 ms and on exit, so a test can check what a controller *sent* (not only what it
logged). Times are on ``time.monotonic()``'s clock: CLOCK_MONOTONIC is system-wide on
Linux, so a test compares them with its own ``time.monotonic()``. Every sim built on the
kit writes this format; each robot's ``record`` module names its stream topics and what
its header holds.

Lines (every line has ``t``, the sim's ``time.monotonic()`` when it took the command):

- ``{"t", "sim": {...}}``: first line; pid, seed, profile, interface, the joint names of
  each stream in index order.
- ``{"t", "sent", "topic", "result", "dev", "change", "q", "kp"}``: a joint command on a
  stream topic (the Atom's ``upper_cmd``, the Adam's ``body_cmd``) that differs from the
  previous one on its topic. ``t`` is within ~2 ms of arrival (streams are polled);
  ``sent`` is the writer's source timestamp mapped onto the same monotonic clock.
  ``result`` is ``applied``, or why not (``ignored``, ``non_finite``, ``out_of_range``,
  ``bad_gains``, and what else the robot refuses); ``dev`` is max |q - measured position|
  when taken (the pull it exerts); ``change`` is max |q - previous q| (``null`` for the
  first). q and kp have 6 decimals; kp is written only when it differs from the previous
  command's.
- ``{"t", "sent", "topic", "result", "dev", "same": true}``: a command identical to the
  previous one on its topic, written short to keep 500 Hz streams cheap.
- ``{"t", "topic", "fields": {...}, "result": "..."}``: a one-shot command (or a stream
  command with no q to write), with what the sim did about it.
- ``{"t", "fault": {"action", "kind", "target", "value", "duration", "source"}}``: a
  fault set, cleared or expired (to correlate with commands).
- ``{"t", "contact": {"action", "a", "b", "kind", "distance", "fault"}}``: a contact of a
  sim with a body (``simkit.physics``) began or ended: ``a`` a link (or a named point),
  ``b`` a link (``kind`` "self") or an obstacle of the scene ("scene"), ``distance`` in m
  (negative: overlapping); ``fault`` the servo node it set in error, or null.
- ``{"t", "counters": {...}}``: last line, the command counters per stream.

Python's json writes a non-finite number as ``NaN``/``Infinity``; ``Recording`` reads them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self, TextIO

import numpy as np
import numpy.typing as npt


class Recorder:
    """Buffers record lines in memory; ``flush`` writes them (the sim calls it at 10 Hz)."""

    def __init__(self, path: str | Path, header: Mapping[str, Any], now: float) -> None:
        self.path = Path(path)
        self._file: TextIO = self.path.open("w", encoding="utf-8")
        self._lines: list[str] = []
        self._prev: dict[str, tuple[bytes, npt.NDArray[np.float64], bytes]] = {}
        self._formats: dict[int, str] = {}
        self._dump = json.JSONEncoder(separators=(",", ":")).encode
        self._add({"t": now, "sim": dict(header)})
        self.flush()

    def _add(self, obj: Mapping[str, Any]) -> None:
        self._lines.append(self._dump(obj) + "\n")

    def stream(
        self,
        t: float,
        sent: float,
        topic: str,
        cmd: npt.NDArray[np.float32],
        measured: npt.NDArray[np.float64],
        result: str,
    ) -> None:
        """A joint command: ``cmd`` is its (n, 5) q, dq, tau, kp, kd matrix.

        This runs for every command of several 500 Hz streams, so it formats by hand
        (a precomputed ``%`` format per topic) and writes kp only when it changed.
        """
        raw = cmd.tobytes()
        q64 = cmd[:, 0].astype(np.float64)
        dev = float(np.abs(q64 - measured).max())  # NaN propagates: no warning, no errstate
        head = f'{{"t":{t!r},"sent":{sent!r},"topic":"{topic}","result":"{result}"'
        prev = self._prev.get(topic)
        if prev is not None and prev[0] == raw:
            self._lines.append(f'{head},"dev":{_num(dev)},"same":true}}\n')
            return
        change = None if prev is None else float(np.abs(q64 - prev[1]).max())
        kp_raw = cmd[:, 3].tobytes()
        new_kp = prev is None or prev[2] != kp_raw
        self._prev[topic] = (raw, q64, kp_raw)
        if result == "non_finite":  # %f would write nan/inf, which is not JSON
            obj: dict[str, Any] = {
                "t": t,
                "sent": sent,
                "topic": topic,
                "result": result,
                "dev": dev,
                "change": change,
                "q": q64.tolist(),
            }
            if new_kp:
                obj["kp"] = cmd[:, 3].astype(np.float64).tolist()
            self._add(obj)
            return
        fmt = self._formats.get(len(q64))
        if fmt is None:
            fmt = self._formats[len(q64)] = ",".join(["%.6f"] * len(q64))
        line = f'{head},"dev":{_num(dev)},"change":{"null" if change is None else _num(change)}'
        line += ',"q":[' + fmt % tuple(q64.tolist()) + "]"
        if new_kp:
            line += ',"kp":[' + fmt % tuple(cmd[:, 3].tolist()) + "]"
        self._lines.append(line + "}\n")

    def event(self, t: float, topic: str, fields: Mapping[str, Any], result: str) -> None:
        self._add({"t": t, "topic": topic, "fields": dict(fields), "result": result})

    def note(self, t: float, key: str, value: Any) -> None:
        """A line of sim-side information (``fault``, ``counters``)."""
        self._add({"t": t, key: value})

    def flush(self) -> None:
        if self._lines:
            self._file.write("".join(self._lines))
            self._lines.clear()
        self._file.flush()

    def close(self) -> None:
        self.flush()
        self._file.close()


def _num(x: float) -> str:
    """``x`` as Python's json writes it (NaN, Infinity and -Infinity included)."""
    if math.isfinite(x):
        return repr(x)
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


@dataclass(frozen=True)
class StreamCommand:
    """One joint command as the sim received it."""

    t: float  # time.monotonic() when the sim took it
    sent: float  # the writer's source timestamp, on the same monotonic clock
    topic: str
    result: str
    dev: float  # max |q - measured| at receipt (NaN for a non-finite q)
    change: float  # max |q - previous q|; inf for the first on its topic, 0 for a repeat
    q: tuple[float, ...]
    kp: tuple[float, ...]

    @property
    def repeat(self) -> bool:
        return self.change == 0.0


@dataclass(frozen=True)
class EventCommand:
    t: float
    topic: str
    fields: dict[str, Any]
    result: str


class Recording:
    """A record file, parsed. Safe to load while the sim still writes it.

    A robot's ``record`` module subclasses it with ``stream_topics``: the topics whose
    lines are joint commands, in the order ``motion_commands`` walks them.
    """

    stream_topics: ClassVar[tuple[str, ...]] = ()

    def __init__(self, lines: list[dict[str, Any]]) -> None:
        self.header: dict[str, Any] = {}
        self.streams: list[StreamCommand] = []
        self.events: list[EventCommand] = []
        self.faults: list[tuple[float, dict[str, Any]]] = []
        self.contacts: list[tuple[float, dict[str, Any]]] = []
        self.counters: dict[str, dict[str, int]] | None = None
        last: dict[str, StreamCommand] = {}
        for obj in lines:
            t = float(obj["t"])
            if "sim" in obj:
                self.header = obj["sim"]
            elif "fault" in obj:
                self.faults.append((t, obj["fault"]))
            elif "contact" in obj:
                self.contacts.append((t, obj["contact"]))
            elif "counters" in obj:
                self.counters = obj["counters"]
            elif "fields" in obj:  # before streams: a stream command with no q is an event
                self.events.append(EventCommand(t, obj["topic"], obj["fields"], obj["result"]))
            elif obj.get("topic") in self.stream_topics:
                cmd = _stream(t, obj, last.get(obj["topic"]))
                if cmd is not None:
                    last[cmd.topic] = cmd
                    self.streams.append(cmd)

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """Parse the file; an unfinished last line (the sim mid-write) is skipped."""
        lines = []
        with Path(path).open(encoding="utf-8") as f:
            for line in f:
                if not line.endswith("\n"):
                    break
                lines.append(json.loads(line))
        return cls(lines)

    def commands(
        self, topic: str | None = None, *, after: float | None = None, clock: str = "sent"
    ) -> list[StreamCommand]:
        """Joint commands (on ``topic``) sent (``clock="t"``: taken) after ``after``."""
        return [
            c
            for c in self.streams
            if (topic is None or c.topic == topic) and (after is None or getattr(c, clock) > after)
        ]

    def event_commands(
        self, topic: str | None = None, *, after: float | None = None
    ) -> list[EventCommand]:
        return [
            e
            for e in self.events
            if (topic is None or e.topic == topic) and (after is None or e.t > after)
        ]

    def motion_commands(
        self,
        after: float,
        *,
        before: float = math.inf,
        topic: str | None = None,
        tol: float = 0.02,
        clock: str = "sent",
    ) -> list[StreamCommand]:
        """Joint commands sent in (``after``, ``before``] that ask the robot to move.

        Times are the controller's send times (``sent``), which is what "the controller
        sent no motion after T" is about; ``clock="t"`` uses the sim's receipt times.

        A command is *motion* when its q is more than ``tol`` (rad) from the measured
        position at receipt (it pulls the joints), or non-finite, or when it changes the
        target and is not a *hold*. A hold is a change of target onto the measured position
        (within ``tol``) that is the last change on its topic in the window: every later
        command repeats it. That is what a controller sends when it stops (freeze at the
        measured position), so "no motion after the e-stop was seen" passes with one hold
        and fails on a trajectory that keeps streaming, however slowly.

        The repeats of a hold (in the window, or sent just before it: a controller's fast
        path may hold before its latch is stamped) do not pull, however far the joints then
        are from it: a body
        under gravity sags away from a hold at its measured position until its loop's error
        carries the load (``simkit.physics``: 0.02-0.08 rad at the Atom's gains), and that is
        the body settling, not the controller asking for motion. A controller that never
        sent a hold in the window, and keeps repeating a target away from the measured
        position, still pulls.
        """
        topics = [topic] if topic is not None else list(self.stream_topics)
        out: list[StreamCommand] = []
        for name in topics:
            stream = [c for c in self.streams if c.topic == name and getattr(c, clock) <= before]
            window = [c for c in stream if after < getattr(c, clock)]
            changes = [i for i, c in enumerate(window) if not c.repeat]
            last_change = changes[-1] if changes else -1
            if last_change >= 0:
                hold = window[last_change].dev <= tol
            else:  # the window only repeats a target set before it: was that a hold?
                earlier = [c for c in stream[: len(stream) - len(window)] if not c.repeat]
                hold = bool(earlier) and earlier[-1].dev <= tol
            for i, c in enumerate(window):
                settling = hold and i > last_change  # a repeat of the hold
                pulls = not (c.dev <= tol) and not settling  # NaN counts as pulling
                retarget = not c.repeat and not (i == last_change and c.dev <= tol)
                if pulls or retarget:
                    out.append(c)
        return sorted(out, key=lambda c: float(getattr(c, clock)))

    def last_motion(
        self, *, topic: str | None = None, tol: float = 0.02, clock: str = "sent"
    ) -> float | None:
        """Send (or receipt) time of the last motion command (``motion_commands``), or None."""
        cmds = self.motion_commands(-math.inf, topic=topic, tol=tol, clock=clock)
        return float(getattr(cmds[-1], clock)) if cmds else None

    def assert_no_motion_after(
        self,
        after: float,
        *,
        before: float = math.inf,
        topic: str | None = None,
        tol: float = 0.02,
        clock: str = "sent",
    ) -> None:
        """AssertionError describing the first offending command, if there is one."""
        bad = self.motion_commands(after, before=before, topic=topic, tol=tol, clock=clock)
        if bad:
            first = bad[0]
            raise AssertionError(
                f"{len(bad)} motion command(s) after {after:.6f}: first on {first.topic} "
                f"{clock} at +{float(getattr(first, clock)) - after:.4f} s (dev {first.dev:.4f} "
                f"rad, change {first.change:.4f} rad, {first.result})"
            )

    def __iter__(self) -> Iterator[StreamCommand]:
        return iter(self.streams)


def _stream(t: float, obj: dict[str, Any], prev: StreamCommand | None) -> StreamCommand | None:
    """A stream line as a command (``prev``: the previous one on its topic, for repeats)."""
    topic = obj["topic"]
    if obj.get("same"):
        if prev is None:  # cannot happen in a whole file; be lenient
            return None
        return StreamCommand(t, obj["sent"], topic, obj["result"], obj["dev"], 0.0, prev.q, prev.kp)
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
