"""``atom-executive timeline RUN -o FILE.png``: a run drawn as one picture.

From the run's MCAP file (``executive.records.mcaprecord``), top to bottom on one time axis
(seconds from the run's start):

- the mission's nodes over time, one row each, coloured by status (running, success,
  failure), indented by depth;
- joint targets (dashed) against measured positions (solid) for the joints the run moved
  most, so a lag, an overshoot or a hold shows at a glance;
- the base: navigation status as steps, and its position (x, y) over time;
- the base's path seen from above (x against y, start and end marked) in a small panel
  of its own below, or "no base pose reported" when the run's ``/robot/base`` carried
  none (a robot without a base, or one that reports no odometry);
- safety: every latch (red line, with its causes) and every state change (grey), drawn
  across all panels, and the time any e-stop flag was set shaded.

Given a JSON-lines run record instead (a run from before MCAP files, or one whose MCAP
is gone), it draws what that holds: nodes, states and safety; the figure says the rest
is not in the record. ``RUN`` is a path to either file, a run id (looked up in
``<data_dir>/runs``, ``.mcap`` first), or ``latest``.

An MCAP file the service could not finish (killed mid-run) has no summary: it is read
record by record as far as it goes (``mcap``'s stream reader), not refused. A file that
holds nothing of a run (not a record at all) is refused, exit 1, not drawn as an empty
"? run" picture.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger(__name__)

MAX_JOINTS = 6  # more lines than this and no one line can be followed
MAX_NODES = 40
MOVED_RAD = 0.02  # a joint whose target moved less than this is not worth a line
STATUS_COLOURS = {"RUNNING": "#f0ad4e", "SUCCESS": "#5cb85c", "FAILURE": "#d9534f"}
SLOT = "/Mission Slot/"  # the mission's nodes are below it
GONE = "GONE"  # a node no longer in the tree (its run ended and it was pruned)
NO_POSE = "no base pose reported"
PATH_PANEL_IN = 2.6  # the base path panel's height, inches (it is about square)
PATH_COLUMNS = 5  # the path takes one of these columns of the figure's width


class TimelineError(ValueError):
    """The run could not be found or read; the message says what to do."""


@dataclass
class RunData:
    """What a run's record holds, on one clock: seconds since ``t0`` (wall, s)."""

    source: Path
    run_id: str = ""
    mission: str = ""
    t0: float | None = None
    node_order: list[tuple[str, int]] = field(default_factory=list)  # (path, depth)
    nodes: dict[str, list[tuple[float, str]]] = field(default_factory=dict)  # changes
    states: list[tuple[float, str, str]] = field(default_factory=list)  # (t, state, reason)
    safety: list[tuple[float, bool, list[str]]] = field(default_factory=list)
    measured: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    targets: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    held: list[float] = field(default_factory=list)  # when a target was sent while held
    estop: list[tuple[float, bool]] = field(default_factory=list)
    base: list[tuple[float, str, float, float]] = field(default_factory=list)  # nav, x, y
    result: str = ""  # the run's end: SUCCEEDED, FAILED, ABORTED, SAFE_STOP
    has_robot: bool = False  # from an MCAP file: joints and base are in it
    end: float = 0.0

    def node(self, t: float, path: str, depth: int, status: str) -> None:
        if path not in self.nodes:
            self.nodes[path] = []
            self.node_order.append((path, depth))
        changes = self.nodes[path]
        if not changes or changes[-1][1] != status:
            changes.append((t, status))


def resolve(run: str, data_dir: Path) -> Path:
    """The file ``run`` names: a path, a run id in ``data_dir/runs``, or ``latest``."""
    path = Path(run)
    if path.suffix in (".mcap", ".jsonl") and path.is_file():
        return path
    runs = data_dir / "runs"
    if run == "latest":
        found = sorted(
            (p for p in runs.glob("*") if p.suffix in (".mcap", ".jsonl")),
            key=lambda p: p.stat().st_mtime,
        )
        if not found:
            raise TimelineError(f"no run records in {runs}")
        newest = found[-1]
        mcap = newest.with_suffix(".mcap")
        return mcap if mcap.is_file() else newest
    for suffix in (".mcap", ".jsonl"):
        candidate = runs / f"{run}{suffix}"
        if candidate.is_file():
            return candidate
    raise TimelineError(f"{run}: not a run record file, nor a run id in {runs}")


def load(path: Path) -> RunData:
    """A run's data from its MCAP file or JSON-lines record; a file that holds nothing of a
    run (not a record, or an empty one) is a ``TimelineError``, not an empty picture."""
    try:
        data = _from_mcap(path) if path.suffix == ".mcap" else _from_jsonl(path)
    except OSError as e:
        raise TimelineError(f"{path}: {e.strerror or e}") from None
    if not (data.states or data.nodes or data.measured or data.targets or data.base):
        what = "MCAP file" if path.suffix == ".mcap" else "JSON-lines record"
        raise TimelineError(f"{path}: not a run's {what}: nothing of a run in it")
    return data


def _mcap_messages(path: Path) -> Iterator[tuple[str, int, bytes]]:
    """(topic, log_time ns, data) in file order, as far as the file can be read."""
    from mcap.records import Channel, Message
    from mcap.stream_reader import StreamReader

    topics: dict[int, str] = {}
    with path.open("rb") as f:
        records = StreamReader(f).records
        while True:
            try:
                record = next(records)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001 - cut anywhere, it fails wherever it was
                # an unfinished file (killed mid-run): what was read so far is the run
                log.warning("run MCAP ends early", path=str(path), error=str(e))
                return
            if isinstance(record, Channel):
                topics[record.id] = record.topic
            elif isinstance(record, Message):
                yield topics.get(record.channel_id, ""), record.log_time, record.data


def _from_mcap(path: Path) -> RunData:
    data = RunData(path, has_robot=True)
    begun = False
    for topic, log_ns, raw in _mcap_messages(path):
        t_wall = log_ns / 1e9
        if data.t0 is None:
            data.t0 = t_wall  # until the run's start is seen: the pre-roll is negative
        body = json.loads(raw)
        if (
            topic == "/executive/events"
            and body.get("event") == "state"
            and body["state"] == "RUNNING"
            and not begun
        ):
            begun = True
            _rebase(data, t_wall)
            data.run_id, data.mission = body.get("run_id", ""), body.get("mission", "")
        t = t_wall - data.t0
        data.end = max(data.end, t)
        _mcap_message(data, topic, t, body)
    return data


def _rebase(data: RunData, t0: float) -> None:
    """Make ``t0`` the origin of everything read so far (the pre-roll goes negative).

    The pre-roll's robot state is kept (how the run found the robot); its tree and events
    are dropped: they are the previous run's (its end, when this run began in its tail)."""
    shift = t0 - (data.t0 or t0)
    data.t0 = t0
    data.nodes, data.node_order, data.states, data.safety = {}, [], [], []

    def moved(points: list[Any]) -> list[Any]:
        return [(p[0] - shift, *p[1:]) for p in points]

    for series in (data.measured, data.targets, data.nodes):
        for key in series:
            series[key] = moved(series[key])
    data.states, data.safety = moved(data.states), moved(data.safety)
    data.estop, data.base = moved(data.estop), moved(data.base)
    data.held = [t - shift for t in data.held]
    data.end -= shift


def _mcap_message(data: RunData, topic: str, t: float, body: dict[str, Any]) -> None:
    if topic.startswith("/robot/joints/"):
        for name, q in body["position"].items():
            if q is not None:
                data.measured.setdefault(name, []).append((t, q))
    elif topic.startswith("/cmd/joints/"):
        for name, q in body["position"].items():
            data.targets.setdefault(name, []).append((t, q))
        if body.get("held"):
            data.held.append(t)
    elif topic == "/executive/tree":
        _tree(data, t, body["nodes"])
    elif topic == "/executive/events":
        _event(data, t, body)
    elif topic == "/robot/emergency" and (not data.estop or data.estop[-1][1] != body["any"]):
        data.estop.append((t, bool(body["any"])))
    elif topic == "/robot/base":
        pos = body["position"]
        data.base.append((t, body["status"], pos["x"], pos["y"]))


def _tree(data: RunData, t: float, nodes: list[dict[str, Any]]) -> None:
    present = set()
    for node in nodes:
        if SLOT in node["path"]:
            present.add(node["path"])
            data.node(t, node["path"], node["depth"], node["status"])
    for path in data.nodes.keys() - present:  # pruned: the run ended
        data.node(t, path, 0, GONE)


def _event(data: RunData, t: float, body: dict[str, Any]) -> None:
    if body.get("event") == "state":
        data.states.append((t, body["state"], body.get("reason", "")))
        data.result = body.get("result") or data.result
    else:
        causes = [f"{c['code']}: {c['message']}" for c in body.get("causes", [])]
        data.safety.append((t, bool(body.get("latched")), causes))


def _from_jsonl(path: Path) -> RunData:
    data = RunData(path, run_id=path.stem)
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line
            if not isinstance(event, dict) or not isinstance(event.get("ts"), int | float):
                continue
            if data.t0 is None:
                data.t0 = float(event["ts"])
            t = float(event["ts"]) - data.t0
            data.end = max(data.end, t)
            if event.get("event") == "node" and SLOT in str(event.get("node", "")):
                path_ = str(event["node"])
                data.node(t, path_, path_.count("/"), str(event.get("status", "")))
            elif event.get("event") == "state":
                data.mission = data.mission or str(event.get("mission", ""))
                data.states.append((t, str(event["state"]), str(event.get("reason", ""))))
                data.result = str(event.get("result") or data.result)
                if event.get("safety"):
                    data.safety.append((t, True, [str(c) for c in event["safety"]]))
    return data


# -- drawing -------------------------------------------------------------------------


def _moved_joints(data: RunData) -> list[str]:
    """The commanded joints whose targets moved most (at most MAX_JOINTS)."""
    spans = []
    for name, points in data.targets.items():
        qs = [q for _, q in points if q is not None]
        if qs and max(qs) - min(qs) >= MOVED_RAD:
            spans.append((max(qs) - min(qs), name))
    return [name for _, name in sorted(spans, reverse=True)[:MAX_JOINTS]]


def base_path(data: RunData) -> list[tuple[float, float]]:
    """The base's (x, y) in the order the run reported them, samples without a pose left
    out (a robot that reports none gives an empty path)."""
    return [(x, y) for _, _, x, y in data.base if x is not None and y is not None]


def draw(data: RunData, out: Path) -> Path:
    """Draw ``data`` as a PNG at ``out``; the path written."""
    import matplotlib.pyplot as plt

    fig = figure(data)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def figure(data: RunData) -> Any:
    """The timeline of ``data`` as a matplotlib ``Figure`` (the caller closes it): the
    time panels top to bottom (``fig.axes[0]`` the nodes), then the base's path."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, whatever the environment says
    import matplotlib.pyplot as plt

    order = data.node_order[:MAX_NODES]
    node_h = max(1.6, 0.28 * len(order) + 0.6)
    heights = [node_h, 3.0, 1.8] if data.has_robot else [node_h]
    # the time panels share one axis, full width; the base's path (metres on both axes,
    # not time) is a small square panel in a row of its own below them
    path_h = PATH_PANEL_IN if data.has_robot else 0.0
    fig = plt.figure(figsize=(14, sum(heights) + path_h + 1.2))
    grid = fig.add_gridspec(
        len(heights) + (1 if path_h else 0),
        PATH_COLUMNS,
        height_ratios=heights + ([path_h] if path_h else []),
    )
    axes: list[list[Any]] = []
    for i in range(len(heights)):
        share = axes[0][0] if axes else None
        axes.append([fig.add_subplot(grid[i, :], sharex=share)])
    for row in axes[:-1]:
        row[0].tick_params(labelbottom=False)  # one time scale, at the bottom
    ax_nodes = axes[0][0]
    result = data.result
    fig.suptitle(
        f"{data.mission or '?'}  run {data.run_id or data.source.stem}"
        + (f"  ->  {result}" if result else "")
        + f"   ({data.source.name})",
        fontsize=12,
        x=0.01,
        ha="left",
    )
    _draw_nodes(ax_nodes, data, order)
    if data.has_robot:
        _draw_joints(axes[1][0], data)
        _draw_base(axes[2][0], data)
        _draw_path(fig.add_subplot(grid[-1, 0]), data)
    else:
        ax_nodes.text(
            0.99,
            -0.25,
            "a JSON-lines record: joints and base are in the run's MCAP file only",
            transform=ax_nodes.transAxes,
            ha="right",
            fontsize=8,
            color="grey",
        )
    for row in axes:
        _draw_events(row[0], data)
    axes[-1][0].set_xlabel("s since the run started")
    start = min([0.0] + [points[0][0] for points in data.measured.values() if points])
    axes[-1][0].set_xlim(start, max(data.end, start + 1.0))  # the pre-roll is before 0
    fig.tight_layout()
    return fig


def _draw_nodes(ax: Any, data: RunData, order: list[tuple[str, int]]) -> None:
    base_depth = min((d for _, d in order), default=0)
    for row, (path, _) in enumerate(order):
        changes = data.nodes[path]
        for i, (t, status) in enumerate(changes):
            colour = STATUS_COLOURS.get(status)
            if colour is None:
                continue
            until = changes[i + 1][0] if i + 1 < len(changes) else data.end
            ax.barh(row, max(until - t, 0.02), left=t, height=0.7, color=colour)
    labels = ["  " * (d - base_depth) + p.rsplit("/", 1)[-1] for p, d in order]
    ax.set_yticks(range(len(order)), labels, fontsize=8)
    ax.set_ylim(max(len(order), 1) - 0.5, -0.5)  # a run with no node: one empty row
    ax.set_title("nodes", loc="left", fontsize=9)
    from matplotlib.patches import Patch

    handles = [Patch(color=c, label=s.lower()) for s, c in STATUS_COLOURS.items()]
    ax.legend(handles=handles, loc="upper right", fontsize=7, ncol=3)


def _draw_joints(ax: Any, data: RunData) -> None:
    names = _moved_joints(data)
    from matplotlib import colormaps

    colours = colormaps["tab10"]
    for i, name in enumerate(names):
        colour = colours(i % 10)
        target = data.targets[name]
        ax.plot(
            [t for t, _ in target],
            [q for _, q in target],
            "--",
            color=colour,
            lw=1.2,
            drawstyle="steps-post",
        )
        measured = data.measured.get(name, [])
        ax.plot(
            [t for t, _ in measured],
            [q for _, q in measured],
            "-",
            color=colour,
            lw=1.6,
            label=name,
        )
    if data.held:
        ax.plot(data.held, [ax.get_ylim()[0]] * len(data.held), "|", color="#d9534f", ms=6)
    ax.set_ylabel("rad")
    title = "joints: target (dashed) vs measured (solid)"
    if not names:
        title += ": no joint moved"
    ax.set_title(title + ("; red ticks: held" if data.held else ""), loc="left", fontsize=9)
    if names:
        ax.legend(loc="upper right", fontsize=7, ncol=min(3, len(names)))
    ax.grid(alpha=0.3)


def _draw_base(ax: Any, data: RunData) -> None:
    ax.set_title("base: navigation status (steps), position (thin)", loc="left", fontsize=9)
    if not data.base:
        return
    statuses: list[str] = []
    for _, nav, _, _ in data.base:
        if nav not in statuses:
            statuses.append(nav)
    ts = [t for t, *_ in data.base]
    ax.step(
        ts, [statuses.index(n) for _, n, _, _ in data.base], where="post", color="#337ab7", lw=2
    )
    ax.set_yticks(range(len(statuses)), statuses, fontsize=8)
    ax.set_ylim(-0.5, len(statuses) - 0.5)
    twin = ax.twinx()
    twin.plot(ts, [x for *_, x, _ in data.base], color="grey", lw=0.8, label="x")
    twin.plot(ts, [y for *_, y in data.base], color="grey", lw=0.8, ls=":", label="y")
    twin.set_ylabel("m", fontsize=8)
    twin.legend(loc="upper right", fontsize=7)


def _draw_path(ax: Any, data: RunData) -> None:
    """The base's path from above: x against y in metres, equal scales, start and end
    marked; or, when no ``/robot/base`` sample carried a pose, that said in the panel."""
    ax.set_title("base path (from above)", loc="left", fontsize=9)
    points = base_path(data)
    if not points:
        ax.text(
            0.5,
            0.5,
            NO_POSE,
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=8,
            color="grey",
        )
        ax.set_xticks([])
        ax.set_yticks([])
        return
    xs, ys = [x for x, _ in points], [y for _, y in points]
    ax.plot(xs, ys, "-", color="#337ab7", lw=1.4)
    ax.plot(xs[:1], ys[:1], "o", color="#5cb85c", ms=5, label="start")
    ax.plot(xs[-1:], ys[-1:], "s", color="#d9534f", ms=5, label="end")
    # a base that stood still is a point: give the axes a metre around it, square limits
    # in a square box (equal scales by adjusting the data limits would ignore those limits,
    # and matplotlib said so on stderr twice a picture)
    span = max(max(xs) - min(xs), max(ys) - min(ys))
    if span < 1.0:
        cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
        ax.set_xlim(cx - 0.5, cx + 0.5)
        ax.set_ylim(cy - 0.5, cy + 0.5)
        ax.set_aspect("equal", adjustable="box")
    else:
        ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x (m)", fontsize=8)
    ax.set_ylabel("y (m)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(loc="best", fontsize=6)
    ax.grid(alpha=0.3)


def _draw_events(ax: Any, data: RunData) -> None:
    top = ax is ax.figure.axes[0]
    on: float | None = None
    for t, pressed in data.estop:
        if pressed and on is None:
            on = t
        elif not pressed and on is not None:
            ax.axvspan(on, t, color="#d9534f", alpha=0.12, lw=0)
            on = None
    if on is not None:
        ax.axvspan(on, data.end, color="#d9534f", alpha=0.12, lw=0)
    for t, state, _ in data.states:
        ax.axvline(t, color="grey", lw=0.8, ls=":")
        if top:
            ax.annotate(
                state,
                (t, 1.0),
                xycoords=("data", "axes fraction"),
                fontsize=7,
                rotation=0,
                va="bottom",
                color="dimgrey",
            )
    for t, latched, causes in data.safety:
        if not latched:
            continue
        ax.axvline(t, color="#d9534f", lw=1.5)
        if top:
            right_half = t > data.end / 2  # the text runs away from the nearer edge
            ax.annotate(
                "SAFE-STOP: " + "; ".join(causes),
                (t, 0.02),
                xycoords=("data", "axes fraction"),
                fontsize=8,
                color="#d9534f",
                xytext=(-4 if right_half else 4, 0),
                textcoords="offset points",
                ha="right" if right_half else "left",
                bbox={"facecolor": "white", "alpha": 0.8, "lw": 0},
            )


# -- the command ---------------------------------------------------------------------


def add_parser(sub: Any) -> None:
    p = sub.add_parser("timeline")
    p.add_argument("run", metavar="RUN", help="a run id, 'latest', or a .mcap/.jsonl file")
    p.add_argument("-o", "--output", type=Path, help="the PNG to write (default: RUN.png)")
    p.add_argument("--data-dir", type=Path, help="where the runs are (default: the config's)")
    p.add_argument("--config", type=Path, help="service config YAML, for its data_dir")
    p.set_defaults(handler=command)


def command(args: argparse.Namespace) -> int:
    from executive.service.config import ConfigError, load_config

    try:
        data_dir = args.data_dir or Path(load_config(args.config).data_dir)
        path = resolve(args.run, data_dir)
        data = load(path)
    except (TimelineError, ConfigError) as e:
        print(f"atom-executive timeline: {e}")  # noqa: T201 - the user's answer
        return 1
    out = args.output or Path(f"{data.run_id or path.stem}.png")
    draw(data, out)
    print(out)  # noqa: T201 - where the picture is
    return 0
