"""The plots of ``docs/benchmarks.md``, from a results file of ``bench/run.py``.

    python bench/plots.py [bench/results/latest.json] [--out docs/img]

- ``estop_latency.png``: the distribution (CDF) of e-stop to first hold and to the AMR
  cancel, idle and with a CPU hog, at normal and real-time scheduling, beside the plain
  relay's two hops; the targets marked.
- ``stream_lateness.png``: the histogram of the 500 Hz stream's period lateness, idle and
  with a CPU hog, at both schedulings (log count), the p99 target marked.

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
