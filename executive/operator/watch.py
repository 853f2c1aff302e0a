"""``atom-executive watch``: the executive's status, live, in a view you can trust.

What it shows, on a terminal (a ``rich`` live view, full screen, redrawn four times a
second) or, when standard output is not one, as plain text (a frame whenever what it
says changes):

- the age of the newest status sample, counted here from its arrival; once none has
  come for ``--stale`` seconds (default 3; the service publishes at least twice a
  second) the top line turns red: ``no executive for N s``, and the rest is dimmed and
  labelled as what the executive last said. A kill -9, a hung host, a cut cable: the
  view says so within seconds instead of showing IDLE / CLEAR forever;
- state, mission, run, safety and what keeps a start refused (as ``status`` prints it);
- the robot line, from the status document's telemetry (``telemetry``): the base's
  navigation status and pose (x, y in m, yaw in degrees; ``no pose`` for a robot that
  reports none) and the battery, when the document carries them and the terminal has
  room (the tree keeps ``MIN_TREE_ROWS`` first). It changes with every sample while the
  base moves, so, like the ages, it does not by itself print a new plain frame;
- the motion line: what the robot itself reports about moving (``telemetry.motion``: the
  firmware task, the axes sent and seen, the base's task and speed, joint speeds, the
  streams the executive publishes), in red while it moves; kept like the robot line;
- the tree, one node a line, with the time each RUNNING node has been running (from the
  sample in which this watch first saw it running; ``≥`` when it was already running
  when the watch began, or after a gap), how long finished nodes took, and a progress
  bar with percent and time left for nodes whose status carries progress (moves,
  navigation, waits: ``progress_of`` is the one place that reads it);
- the safety watchdog as what it means: ``clear`` in green when no fault holds (the node
  FAILs then, so the mission branch runs: it is no failure), ``SAFE_STOP`` in red;
- a legend.

Every string from the service passes ``printable`` and goes into ``rich`` as ``Text``,
never as markup: a ``[red]`` or an ``\\x1b[2J`` in a node name is shown as written.

The status is read through ``_get``, which takes attributes (the DDS ``Status_``) or
keys (a JSON status document), so the view follows the status when it becomes a
versioned document; new fields (per-node progress, elapsed) are used when present.
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich.text import Text  # the terminal machinery (Console, Live) only in run()

from executive.operator.lines import WATCHDOG_KINDS, motion, summary, telemetry
from executive.operator.lines import number as _number
from executive.operator.lines import read as _get
from executive.text import printable

STALE_AFTER = 3.0  # s without a sample before "no executive"; the heartbeat is 0.5 s
REFRESH = 0.25  # s between redraws (ages and elapsed times tick)
BAR_WIDTH = 20
MAX_DEPTH_SHOWN = 32  # indent levels drawn; a deeper (forged) depth is drawn at this one
INDENT = "  "
MIN_TREE_ROWS = 8  # a short terminal drops the robot line before the tree gets fewer rows

SYMBOLS = {"RUNNING": "●", "SUCCESS": "✓", "FAILURE": "✗", "INVALID": "·"}
STYLES = {"RUNNING": "bold cyan", "SUCCESS": "green", "FAILURE": "red", "INVALID": "dim"}
SLOT_KINDS = frozenset({"MissionSlot"})

LEGEND = (
    (
        ("● ", "bold cyan", "running  "),
        ("✓ ", "green", "succeeded  "),
        ("✗ ", "red", "failed  "),
        ("· ", "dim", "not ticked  "),
        ("◆ clear", "green", " the safety watchdog: no fault"),
    ),
    (
        ("1.2 s", "cyan", " running for  "),
        ("≥", "cyan", " since before this watch  "),
        ("━━──", "cyan", " progress, when reported  "),
        ("Ctrl-C", "bold", " quits"),
    ),
)


# -- progress: the hook --------------------------------------------------------------------------


@dataclass(frozen=True)
class Progress:
    """How far a node is: ``fraction`` 0..1 and ``time_left`` s, either may be unknown."""

    fraction: float | None = None
    time_left: float | None = None


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%")
_LEFT = re.compile(r"(\d+(?:\.\d+)?)\s*s\s+(?:left|remaining)")


def _known(value: Any) -> float | None:
    """A progress number, or None: -1 (and any negative) is ``NodeStatus_``'s "unknown"."""
    number = _number(value)
    return None if number is None or number < 0 else number


def progress_of(node: Any) -> Progress | None:
    """The progress a node's status carries, or None.

    The hook for moves, navigation and waits. Read, in order:

    1. structured fields, as the status carries them (``executive.service.status``: the DDS
       ``NodeStatus_`` and the JSON document's nodes): ``progress`` (a number 0..1, or an
       object/mapping with ``fraction`` 0..1 or ``percent`` 0..100 and ``time_left_s``,
       or ``elapsed_s`` with ``total_s``), or the same names flat on the node
       (``percent``, ``time_left_s``). A negative number is the DDS fields' "unknown"
       (-1), read as absent;
    2. else the feedback text: ``42 %`` and ``3.1 s left`` (or ``remaining``), which a
       leaf can write today without any change to the status.
    """
    candidates = [node]
    nested = _get(node, "progress")
    fraction = _known(nested)
    if fraction is None and nested is not None:
        candidates.insert(0, nested)
    time_left = None
    for source in candidates:
        if fraction is None:
            fraction = _known(_get(source, "fraction"))
        if fraction is None and (percent := _known(_get(source, "percent"))) is not None:
            fraction = percent / 100.0
        elapsed, total = _known(_get(source, "elapsed_s")), _known(_get(source, "total_s"))
        if fraction is None and elapsed is not None and total:
            fraction = elapsed / total
        if time_left is None:
            time_left = _known(_get(source, "time_left_s"))
        if time_left is None and elapsed is not None and total is not None:
            time_left = max(0.0, total - elapsed)
    if fraction is None and time_left is None:
        text = str(_get(node, "feedback", "") or "")
        if m := _PERCENT.search(text):
            fraction = float(m.group(1)) / 100.0
        if m := _LEFT.search(text):
            time_left = float(m.group(1))
    if fraction is None and time_left is None:
        return None
    return Progress(None if fraction is None else min(1.0, max(0.0, fraction)), time_left)


def bar(progress: Progress, width: int = BAR_WIDTH) -> Text:
    """``━━━━━━━━──────────── 42 % · 3.1 s left``."""
    out = Text()
    if progress.fraction is not None:
        done = round(progress.fraction * width)
        out.append("━" * done, "cyan")
        out.append("─" * (width - done), "grey42")
        out.append(f" {progress.fraction * 100:3.0f} %")
    if progress.time_left is not None:
        out.append(
            (" · " if progress.fraction is not None else "") + f"{progress.time_left:.1f} s left"
        )
    return out


# -- what the watch remembers between samples -----------------------------------------------------


@dataclass
class Tracker:
    """Arrival times and, per node, when this watch first saw it RUNNING.

    A node is keyed by executive, run, position and path: two siblings of one name
    (``Move to pose home`` twice in a sequence) are two nodes, and a restarted service
    or a new run starts every clock afresh."""

    stale_after: float = STALE_AFTER
    last_arrival: float | None = None
    first_arrival: float | None = None
    executive_id: str = ""
    started: dict[tuple[str, str, int, str], tuple[float, bool]] = field(default_factory=dict)
    took: dict[tuple[str, str, int, str], float] = field(default_factory=dict)

    def arrived(self, status: Any, now: float) -> None:
        """A new sample, arrived ``now`` (monotonic)."""
        executive = str(_get(status, "executive_id", ""))
        # after a gap (the executive was silent) a node's start is not known exactly
        gap = self.last_arrival is None or executive != self.executive_id
        gap = gap or now - (self.last_arrival or now) > self.stale_after
        self.executive_id = executive
        self.first_arrival = now if self.first_arrival is None else self.first_arrival
        self.last_arrival = now
        run = str(_get(status, "run_id", ""))
        running = set()
        for i, node in enumerate(_tree(status)):
            key = (executive, run, i, str(_get(node, "path", "")))
            if _get(node, "status") == "RUNNING":
                running.add(key)
                if key not in self.started:
                    self.started[key] = (now, gap)
                    self.took.pop(key, None)
        for key in [k for k in self.started if k not in running]:
            start, _ = self.started.pop(key)
            if key[0] == executive:  # finished while watched (not: the executive went)
                self.took[key] = now - start
        if len(self.took) > 4096:  # a long watch over many runs: keep the recent
            self.took = dict(list(self.took.items())[-2048:])

    def age(self, now: float) -> float:
        return 0.0 if self.last_arrival is None else max(0.0, now - self.last_arrival)

    def elapsed(self, key: tuple[str, str, int, str], now: float) -> tuple[float, bool] | None:
        """Seconds ``key`` has been RUNNING (up to the last sample) and whether that is a
        lower bound; None if it is not running."""
        if key not in self.started:
            return None
        start, lower_bound = self.started[key]
        until = min(now, self.last_arrival or now) if self.age(now) > self.stale_after else now
        return max(0.0, until - start), lower_bound


def _tree(status: Any) -> list[Any]:
    tree = _get(status, "tree", None)
    return list(tree) if tree is not None else []


# -- the frame ---------------------------------------------------------------------------------


def _seconds(value: float) -> str:
    if value < 60:
        return f"{value:.1f} s"
    minutes, seconds = divmod(int(value), 60)
    return (
        f"{minutes}:{seconds:02d} min" if minutes < 60 else f"{minutes // 60}:{minutes % 60:02d} h"
    )


def header(status: Any, tracker: Tracker, now: float, stale_after: float) -> list[Text]:
    age = tracker.age(now)
    who = printable(_get(status, "executive_id", "") or "?")
    version = printable(_get(status, "version", "") or "")
    if age > stale_after:
        stamp = _number(_get(status, "stamp_ns"))
        when = time.strftime("%H:%M:%S", time.localtime(stamp / 1e9)) if stamp else "?"
        return [
            Text(f"no executive for {age:.0f} s", style="bold white on red")
            + Text(
                f"  last status from {who} at {when}; below: what it last said, not now",
                style="bold red",
            )
        ]
    line = Text("atom-executive watch", style="bold")
    line.append(f"  {who}" + (f" v{version}" if version else ""), "dim")
    line.append("  status ")
    line.append(f"{age:.1f} s old", "green" if age <= 1.0 else "yellow")
    line.append(f"  (seq {_get(status, 'seq', '?')})", "dim")
    return [line]


def summary_lines(status: Any) -> list[Text]:
    """State, mission, active node, safety and the rest, as ``status`` prints them
    (``lines.summary``), coloured: safety green when clear, red otherwise."""
    out = []
    for line in summary(status).splitlines():
        text = Text(line)
        key, _, value = line.partition(": ")
        if key == "safety":
            text.stylize("bold green" if value == "CLEAR" else "bold white on red", len(key) + 2)
        elif key == "state":
            style = {"RUNNING": "bold cyan", "SAFE_STOP": "bold red", "FAILED": "red"}
            text.stylize(style.get(value, "bold"), len(key) + 2)
        elif key == "paused":
            text.stylize("bold yellow", len(key) + 2)
        elif key in ("not ready", "problem", "decode errors"):
            text.stylize("yellow")
        out.append(text)
    return out


def robot_line(status: Any) -> Text | None:
    """``robot: control held · fsm 3 · e-stop clear · battery 87 % · base RUNNING at x +1.20
    y -0.40 m yaw +90°``: what the telemetry holds of these (a robot that does not report
    one leaves it out), the e-stop in red when an input is on; None when it holds none."""
    t = telemetry(status)
    if t is None:
        return None
    parts: list[Text] = []
    control = t.get("control")
    if isinstance(control, Mapping) and isinstance(control.get("held"), bool):
        parts.append(Text("control " + ("held" if control["held"] else "not held")))
    fsm = t.get("fsm")
    fsm_id = _number(fsm.get("id")) if isinstance(fsm, Mapping) else None
    if fsm_id is not None:
        parts.append(Text(f"fsm {fsm_id:.0f}"))
    estop = t.get("estop")
    if isinstance(estop, Mapping):
        on = estop.get("on")
        names = [printable(str(n)) for n in on] if isinstance(on, list) else []
        if estop.get("any") or names:
            parts.append(Text("E-STOP " + (", ".join(names) or "on"), style="bold red"))
        else:
            parts.append(Text("e-stop clear"))
    battery = t.get("battery")
    percent = _number(battery.get("percent")) if isinstance(battery, Mapping) else None
    if percent is not None:
        parts.append(Text(f"battery {percent:.0f} %"))
    base = t.get("base")
    if isinstance(base, Mapping):
        pose = base.get("pose")
        x, y, yaw = (
            (_number(pose.get(k)) for k in ("x", "y", "yaw"))
            if isinstance(pose, Mapping)
            else (None, None, None)
        )
        where = "no pose"
        if x is not None and y is not None:
            where = f"at x {x:+.2f} y {y:+.2f} m"
            if yaw is not None:
                where += f" yaw {math.degrees(yaw):+.0f}°"
        parts.append(Text(f"base {printable(str(base.get('status', '?')))} {where}"))
    if not parts:
        return None
    line = Text("robot: ")
    line.append_text(Text(" · ").join(parts))
    return line


def motion_line(status: Any) -> Text | None:
    """The motion line (``lines.motion``), in red while the robot moves; None when the
    status document has none (an executive before it)."""
    found = motion(status)
    if found is None:
        return None
    moving, said = found
    line = Text("motion: ")
    line.append(said, style="bold red" if moving else "")
    return line


def tree_lines(status: Any, tracker: Tracker, now: float) -> list[tuple[Text, str]]:
    """One line per node, with the node's status: its mark and name indented by depth,
    then (aligned) its elapsed time or time taken, progress and feedback."""
    nodes = _tree(status)
    executive, run = str(_get(status, "executive_id", "")), str(_get(status, "run_id", ""))
    rows = []
    for i, node in enumerate(nodes):
        depth = _depth(node)
        has_child = i + 1 < len(nodes) and _depth(nodes[i + 1]) > depth
        key = (executive, run, i, str(_get(node, "path", "")))
        rows.append(_row(node, depth, has_child, key, tracker, now))
    width = max((len(left) for left, _ in rows), default=0)
    out = []
    for (left, right), node in zip(rows, nodes, strict=True):
        line = left.copy()
        if right:
            line.append(" " * (width - len(left) + 2))
            line.append_text(right)
        out.append((line, str(_get(node, "status", ""))))
    return out


def _depth(node: Any) -> int:
    """A node's depth, as drawn: a forged one (70 000) at ``MAX_DEPTH_SHOWN``."""
    depth = _number(_get(node, "depth", 0))
    return 0 if depth is None or depth < 0 else min(int(depth), MAX_DEPTH_SHOWN)


def _row(
    node: Any,
    depth: int,
    has_child: bool,
    key: tuple[str, str, int, str],
    tracker: Tracker,
    now: float,
) -> tuple[Text, Text]:
    """A node's line: the left part (mark, name) and the right (times, progress, words)."""
    state = str(_get(node, "status", ""))
    kind = str(_get(node, "kind", ""))
    feedback = str(_get(node, "feedback", "") or "")
    name = printable(key[3].rsplit("/", 1)[-1])
    left, right = Text(INDENT * depth), Text()
    if kind in WATCHDOG_KINDS:  # FAILURE is its "no fault": the mission branch runs
        clear = state != "RUNNING"
        style = "bold green" if clear else "bold red"
        left.append("◆ ", style)
        left.append(name)
        right.append("clear" if clear else "SAFE_STOP", style)
        if not clear and feedback:
            right.append("  " + printable(feedback.removeprefix("SAFE_STOP: ")), "red")
        return left, right
    if kind in SLOT_KINDS and state == "FAILURE" and not has_child:  # no mission in it
        left.append("○ ", "dim")
        left.append(name, "dim")
        right.append("empty", "dim")
        return left, right
    left.append(SYMBOLS.get(state, "?") + " ", STYLES.get(state, ""))
    left.append(name, "bold" if state == "RUNNING" else ("dim" if state == "INVALID" else ""))
    elapsed = tracker.elapsed(key, now)
    if state == "RUNNING" and elapsed is not None:
        seconds, lower_bound = elapsed
        right.append(("≥" if lower_bound else " ") + _seconds(seconds).rjust(8), "cyan")
        progress = progress_of(node)
        if progress is not None:
            right.append("  ")
            right.append_text(bar(progress))
    elif state in ("SUCCESS", "FAILURE") and key in tracker.took:
        right.append(" took " + _seconds(tracker.took[key]), "dim")
    if feedback and state != "INVALID":
        right.append("  " + printable(feedback), "red" if state == "FAILURE" else "dim")
    return left, right


def fit(tree: list[tuple[Text, str]], room: int) -> list[Text]:
    """The tree in ``room`` lines on a short terminal: first without the nodes not
    ticked, then the part that ends at the deepest running node, each time saying how
    much is not shown, so the header, the safety line and the legend always stay."""
    if len(tree) <= room:
        return [line for line, _ in tree]
    kept = [(line, state) for line, state in tree if state != "INVALID"]
    hidden = len(tree) - len(kept)
    if len(kept) < room:
        note = f"… {hidden} nodes not ticked yet (a taller terminal shows them)"
        return [*(line for line, _ in kept), Text(note, "dim")]
    room = max(1, room - 1)
    running = [i for i, (_, state) in enumerate(kept) if state == "RUNNING"]
    end = max(room, (running[-1] + 1) if running else room)
    start = end - room
    shown = [line for line, _ in kept[start:end]]
    more = len(tree) - len(shown)
    return [*shown, Text(f"… {more} more nodes (a taller terminal shows them)", "dim")]


def legend() -> list[Text]:
    out = []
    for i, row in enumerate(LEGEND):
        line = Text("legend: " if i == 0 else "        ", style="dim")
        for symbol, style, words in row:
            line.append(symbol, style)
            line.append(words, "dim")
        out.append(line)
    return out


def frame(
    status: Any,
    tracker: Tracker,
    now: float,
    stale_after: float = STALE_AFTER,
    height: int | None = None,
) -> list[Text]:
    """Everything the watch shows for ``status`` at ``now``, one ``Text`` a line; in
    ``height`` lines when given (the tree is what gives way)."""
    stale = tracker.age(now) > stale_after
    top = [*header(status, tracker, now, stale_after), *summary_lines(status)]
    bottom = [Text(""), *legend()]
    rows = tree_lines(status, tracker, now)
    for line in (robot_line(status), motion_line(status)):
        if line is not None and (
            height is None or height - len(top) - 2 - len(bottom) >= min(len(rows), MIN_TREE_ROWS)
        ):
            top.append(line)
    top.append(Text(""))
    room = len(rows) if height is None else max(1, height - len(top) - len(bottom))
    tree = fit(rows, room)
    if stale:
        for line in top[1:] + tree:
            line.stylize("dim")
    return [*top, *tree, *bottom]


def content(status: Any) -> tuple[Any, ...]:
    """What a status says, without what changes every sample (seq, stamps, ages)."""
    nodes = tuple(
        (_get(n, "path"), _get(n, "status"), _get(n, "feedback"), progress_of(n))
        for n in _tree(status)
    )
    return (_get(status, "executive_id"), summary(status), nodes)


def plain(lines: list[Text]) -> str:
    return "\n".join(line.plain.rstrip() for line in lines)


# -- the loop ----------------------------------------------------------------------------------


def run(
    latest: Callable[[Any, float], Any],
    first: Any,
    *,
    duration: float = 0.0,
    stale_after: float = STALE_AFTER,
    out: TextIO | None = None,
    live: bool | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Watch until ``duration`` s have passed (0: until Ctrl-C). ``latest(last, timeout)``
    returns the newest sample once it is not ``last`` (or None after ``timeout``);
    ``first`` is the sample the watch starts from. A live full-screen view when ``out``
    is a terminal (or ``live``), else a plain frame whenever what it says changes."""
    out = out or sys.stdout
    live = out.isatty() if live is None else live
    tracker = Tracker(stale_after=stale_after)
    tracker.arrived(first, clock())
    status = first
    deadline = clock() + duration if duration else None

    def poll() -> bool:
        """Take a new sample if one came; False once the watch is over."""
        nonlocal status
        now = clock()
        if deadline is not None and now >= deadline:
            return False
        wait = min(REFRESH, deadline - now) if deadline is not None else REFRESH
        new = latest(status, wait)
        if new is not None and new is not status:
            status = new
            tracker.arrived(status, clock())
        return True

    from rich.console import Console, Group
    from rich.live import Live

    try:
        if live:
            console = Console(file=out)
            with Live(
                console=console, screen=True, auto_refresh=False, redirect_stdout=False
            ) as view:
                while True:
                    lines = frame(status, tracker, clock(), stale_after, console.size.height)
                    view.update(Group(*_cropped(lines)), refresh=True)
                    if not poll():
                        break
            console.print(Group(*_cropped(frame(status, tracker, clock(), stale_after))))
        else:
            shown = None
            while True:
                now = clock()
                # a new frame when what it says changes, not when an age ticks
                said = (tracker.age(now) > stale_after, content(status))
                if said != shown:
                    print(
                        plain(frame(status, tracker, now, stale_after)) + "\n", file=out, flush=True
                    )
                    shown = said
                if not poll():
                    break
    except KeyboardInterrupt:
        pass
    return 0


def _cropped(lines: list[Text]) -> list[Text]:
    for line in lines:
        line.no_wrap = True
        line.overflow = "ellipsis"
    return lines
