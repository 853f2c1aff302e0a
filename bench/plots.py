"""The plots of ``docs/benchmarks.md``, from a results file of ``python -m bench.run``.

    python -m bench.plots [bench/results/latest.json] [--out docs/img]

- ``estop_latency.png``: the distribution (CDF) of e-stop to first hold and to the AMR
  cancel, idle and with a CPU hog, at normal and real-time scheduling, beside the plain
  relay's two hops; the targets marked.
- ``stream_lateness.png``: the histogram of the 500 Hz stream's period lateness, idle and
  with a CPU hog, at both schedulings (log count), the p99 target marked.
- ``idle_cpu.png`` (``bench/parts/idle.py``): per robot, the idle service's CPU as shipped, as
  before (``ATOM_EXECUTIVE_POLL=off``) and beside the C robot, and the simulated robot's
  beside the C robot; a box of the 1 s windows each, the targets marked.
- ``cli_wall.png`` (``bench/parts/cli.py``): the wall time of each command beside the bare Python
  status reader of the same run (the floor), the 2x-floor target marked.

Needs matplotlib (the ``bench`` extra: ``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import matplotlib as mpl

mpl.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

ROOT = Path(__file__).resolve().parents[1]

COLOURS = {
    "idle": "tab:blue",
    "cpu hog": "tab:red",
    "idle, realtime": "tab:green",
    "cpu hog, realtime": "tab:purple",
}


def _cdf(ax: Any, values: list[float], **kwargs: Any) -> None:
    a = np.sort(np.asarray(values))
    if a.size:
        ax.step(a, np.arange(1, a.size + 1) / a.size, where="post", **kwargs)


def estop_plot(results: dict[str, Any], path: Path, machine: str) -> Path:
    fig, ax = plt.subplots(figsize=(10.5, 4.8), dpi=110)
    for name, c in results["conditions"].items():
        colour = COLOURS.get(name, "black")
        s = c["samples"]
        _cdf(ax, s["hold"], color=colour, lw=2, label=f"{name}: e-stop -> first hold")
        _cdf(ax, s["cancel"], color=colour, lw=1.2, ls="--", label=f"{name}: e-stop -> AMR cancel")
        if "realtime" not in name:  # the relay is not the service: its scheduling is the same
            _cdf(ax, s["relay"], color=colour, lw=1, ls=":", label=f"{name}: plain relay (2 hops)")
    ax.axvline(0.5, color="grey", lw=0.8)
    ax.axvline(1.5, color="grey", lw=0.8, ls="--")
    ax.axhline(0.5, color="grey", lw=0.5, alpha=0.5)
    ax.axhline(0.99, color="grey", lw=0.5, alpha=0.5)
    ax.text(0.5, 0.02, " median target 0.5 ms", color="grey", fontsize=8)
    ax.text(1.5, 0.08, " p99 target (hog) 1.5 ms", color="grey", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("latency at an independent subscriber (ms, log)")
    ax.set_ylabel("fraction of events")
    ax.set_title(
        f"E-stop to hold, {results['events']} events per condition\n{machine}", fontsize=10
    )
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(True, which="both", alpha=0.2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def stream_plot(results: dict[str, Any], path: Path, machine: str) -> Path:
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    for name, r in results.items():
        if not isinstance(r, dict) or "samples" not in r:
            continue
        late = np.asarray(r["samples"]["lateness"])
        s = r["lateness_ms"]
        bins = np.linspace(0, max(2.0, float(np.percentile(late, 99.9))), 120)
        ax.hist(
            np.clip(late, 0, bins[-1]),
            bins=bins,
            histtype="step",
            lw=1.5,
            color=COLOURS.get(name, "black"),
            label=f"{name}: median {s['median']:.3f}, p99 {s['p99']:.3f} ms, "
            f"missed {r['missed']} of {r['expected_periods']}",
        )
    ax.axvline(0.25, color="grey", lw=0.8, ls="--")
    ax.text(
        0.25,
        0.5,
        " p99 target 0.25 ms",
        color="grey",
        fontsize=8,
        transform=ax.get_xaxis_transform(),
    )
    ax.set_yscale("log")
    ax.set_xlabel("period lateness (ms; the last bin holds everything later)")
    ax.set_ylabel("periods")
    ax.set_title(
        f"500 Hz command stream (upper, lower, hands) in the running service\n{machine}",
        fontsize=10,
    )
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


# idle_cpu.png: the conditions of bench/parts/idle.py, in the order drawn within a robot's group
IDLE_SERVICE = (
    ("sim", "as shipped", "tab:blue"),
    ("before", "as before (ATOM_EXECUTIVE_POLL=off)", "tab:red"),
    ("floor", "beside the C robot (its floor)", "tab:grey"),
)
IDLE_SIM = (
    ("sim", "the simulated robot", "tab:blue"),
    ("floor", "the C robot (its floor)", "tab:grey"),
)
BOX_WIDTH = 0.22


def _boxes(
    ax: Any,
    robots: dict[str, Any],
    who: str,
    conditions: tuple[tuple[str, str, str], ...],
    target: float,
) -> None:
    """One group per robot, a box per condition of its 1 s windows (% of a core) with every
    window drawn as a point on it: a window resolves 1 % (the 10 ms clock tick), so a short
    run's box is a few repeated values and the points show how many. A condition the robot
    has no figure for (the GRX: no before, no C floor) says so where its box would be."""
    rng = np.random.default_rng(0)  # the points' jitter: the same picture from the same file
    offsets = (np.arange(len(conditions)) - (len(conditions) - 1) / 2) * (BOX_WIDTH + 0.06)
    for i, r in enumerate(robots.values()):
        for dx, (key, _, colour) in zip(offsets, conditions, strict=True):
            x = i + dx
            fig = (r.get(key) or {}).get(who)
            if not fig or not fig.get("samples"):
                ax.text(x, 0.3, "not measured", rotation=90, ha="center", va="bottom",
                        fontsize=7, color="grey")  # fmt: skip
                continue
            w = np.asarray(fig["samples"], dtype=float)
            ax.boxplot(
                w,
                positions=[x],
                widths=BOX_WIDTH,
                whis=(0, 100),  # the whiskers span every window: no outliers hidden
                patch_artist=True,
                boxprops={"facecolor": colour, "alpha": 0.35, "edgecolor": colour},
                medianprops={"color": colour, "lw": 2},
                whiskerprops={"color": colour},
                capprops={"color": colour},
                showfliers=False,
            )
            ax.scatter(x + rng.uniform(-0.06, 0.06, w.size), w, s=6, color=colour, zorder=3)
            ax.text(x, float(w.max()) + 0.3, f"{fig['median']:.1f}", ha="center",
                    va="bottom", fontsize=7, color=colour)  # fmt: skip
    ax.axhline(target, color="grey", lw=0.8, ls="--")
    ax.text(
        1.0, target, f"target {target:g} % ", color="grey", fontsize=8, ha="right", va="bottom",
        transform=ax.get_yaxis_transform(),
    )  # fmt: skip
    ax.set_xticks(range(len(robots)), list(robots))
    ax.set_xlim(-0.6, len(robots) - 0.4)
    ax.grid(True, axis="y", alpha=0.2)


def idle_plot(results: dict[str, Any], path: Path, machine: str) -> Path:
    """``bench/parts/idle.py``'s results: per robot (``results[robot]``), condition (``sim``,
    ``before``, ``floor``; ``floor`` None where there is none) and process (``service``,
    ``sim``), the figures of its 1 s windows with every window in ``samples``."""
    from matplotlib.patches import Patch

    # a robot's entry is the one whose "sim" is a condition (``targets`` has a "sim" too)
    robots = {k: v for k, v in results.items() if isinstance(v, dict) and isinstance(v.get("sim"), dict)}  # fmt: skip
    targets = results.get("targets", {"service": 5.0, "sim": 10.0})
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(11, 4.6), dpi=110, sharey=True, gridspec_kw={"width_ratios": [3, 2]}
    )
    _boxes(left, robots, "service", IDLE_SERVICE, targets["service"])
    _boxes(right, robots, "sim", IDLE_SIM, targets["sim"])
    left.set_title("the service, no mission, beside the robot", fontsize=9)
    right.set_title("the simulated robot beside the service", fontsize=9)
    left.set_ylabel("CPU, % of one core (1 s windows; median above)")
    left.set_ylim(0, None)
    for ax, conditions in ((left, IDLE_SERVICE), (right, IDLE_SIM)):
        handles = [Patch(facecolor=c, alpha=0.5, edgecolor=c, label=label) for _, label, c in conditions]  # fmt: skip
        ax.legend(handles=handles, fontsize=7, loc="upper left")
    top = max(left.get_ylim()[1], max(targets.values()) * 1.25)
    left.set_ylim(0, top * 1.15)  # room for the legend above the boxes
    load = results.get("loadavg", ["?"])[0]
    end = (results.get("loadavg_at_end") or ["?"])[0]
    bare = [robot for robot, r in robots.items() if not r.get("floor")]
    note = f" (no C floor: {', '.join(bare)}; the GRX speaks zenoh)" if bare else ""
    fig.suptitle(
        f"Idle CPU: {results.get('seconds', '?'):g} s of 1 s windows per condition, load "
        f"{load} -> {end}{note}\n{machine}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


CLI_FLOOR = "floor: bare status reader"  # bench/parts/cli.py's FLOOR
CLI_TARGETED = ("atom-executive --help", "atom-executive status")  # bench/parts/cli.py's TARGETED
CLI_TARGET_RATIO = 2.0  # bench/parts/cli.py's TARGET_RATIO (its results do not carry it)


def cli_plot(results: dict[str, Any], path: Path, machine: str) -> Path:
    """``bench/parts/cli.py``'s results: every run's wall time per command (``samples_s``), the
    floor among them; a box per command, top to bottom in the order run, its median and its
    median over the floor's beside it."""
    samples: dict[str, list[float]] = results["samples_s"]
    names = list(samples)[::-1]  # barh draws the first at the bottom
    floor_ms = 1000 * float(np.median(samples[CLI_FLOOR])) if samples.get(CLI_FLOOR) else None
    ratio = CLI_TARGET_RATIO
    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=110)
    right = 0.0
    for y, name in enumerate(names):
        ms = 1000 * np.asarray(samples[name], dtype=float)
        if not ms.size:
            continue
        colour = ("black" if name == CLI_FLOOR else "tab:blue" if name in CLI_TARGETED
                  else "tab:grey")  # fmt: skip
        ax.boxplot(
            ms,
            positions=[y],
            orientation="horizontal",
            widths=0.5,
            whis=(0, 100),
            patch_artist=True,
            boxprops={"facecolor": colour, "alpha": 0.3, "edgecolor": colour},
            medianprops={"color": colour, "lw": 2},
            whiskerprops={"color": colour},
            capprops={"color": colour},
            showfliers=False,
        )
        ax.scatter(ms, np.full(ms.size, y), s=8, color=colour, zorder=3)
        median = float(np.median(ms))
        over = f", {median / floor_ms:.2f}x floor" if floor_ms and name != CLI_FLOOR else ""
        ax.text(float(ms.max()) + 6, y, f"{median:.0f} ms{over}", va="center", fontsize=8,
                color=colour)  # fmt: skip
        right = max(right, float(ms.max()))
    if floor_ms:
        ax.axvline(floor_ms, color="black", lw=0.8, ls=":")
        ax.axvline(ratio * floor_ms, color="tab:red", lw=0.9, ls="--")
        top = ax.get_xaxis_transform()
        ax.text(floor_ms, 0.99, " floor median", fontsize=8, va="top", transform=top)
        ax.text(
            ratio * floor_ms, 0.99, f" target (status, --help):\n <= {ratio:g}x floor median",
            color="tab:red", fontsize=8, va="top", transform=top,
        )  # fmt: skip
        right = max(right, ratio * floor_ms)
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.set_xlim(0, right * 1.3)
    ax.set_xlabel("wall time from the spawn to the exit (watch: to its first frame), ms")
    ax.grid(True, axis="x", alpha=0.2)
    ax.set_title(
        f"CLI wall time against an idle service, {results.get('runs', '?')} runs each\n{machine}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def make(results: dict[str, Any], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    m = results.get("machine", {})
    load = m.get("loadavg_at_start", ["?"])[0]
    machine = f"{m.get('nproc', '?')} x {m.get('cpu', '?')}, load {load} at start"
    made = []
    if "estop" in results:
        made.append(estop_plot(results["estop"], out / "estop_latency.png", machine))
    if "stream" in results:
        made.append(stream_plot(results["stream"], out / "stream_lateness.png", machine))
    if results.get("idle"):
        made.append(idle_plot(results["idle"], out / "idle_cpu.png", machine))
    if results.get("cli"):
        made.append(cli_plot(results["cli"], out / "cli_wall.png", machine))
    return made


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", type=Path, default=ROOT / "bench/results/latest.json")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    for path in make(json.loads(args.results.read_text()), args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
