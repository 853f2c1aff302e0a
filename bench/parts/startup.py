"""Validation of 100 mission files, and the service's start to READY.

    python -m bench.parts.startup [--repeats 5]

- validation: the shipped missions copied to 100 files beside their pose, gesture and
  subtree libraries, checked by ``executive.mission.loader.validate_files`` (one loader,
  as ``atom-executive validate`` and the service use it) in this process, warm; and
  ``atom-executive validate`` on the same 100 files as a fresh process (Python's start
  and imports included), for scale.
- start to READY: ``atom-executive run`` (the shipped missions, a key file, loopback DDS)
  started as systemd would start a ``Type=notify`` service: with ``NOTIFY_SOCKET`` naming
  a real datagram socket (``executive.harness.stack.NotifySocket``). From just before the process
  is spawned to the arrival of its ``READY=1`` (config, profile, keys, the missions
  validated, DDS up, the tick loop started).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.harness import ROOT, check, cli, fmt, summary, table
from bench.parts import Part, sized
from executive.harness.stack import running_stack
from executive.mission.loader import validate_files
from executive.seam.profile import load_profile

MISSIONS = ROOT / "missions"
TARGETS = {"validate_s": 1.0, "ready_s": 2.0}


def copy_missions(directory: Path, count: int = 100) -> list[Path]:
    for folder in ("poses", "gestures", "subtrees"):
        shutil.copytree(MISSIONS / folder, directory / folder)
    shipped = sorted(MISSIONS.glob("*.yaml"))
    paths = []
    for i in range(count):
        src = shipped[i % len(shipped)]
        dst = directory / f"{src.stem}_{i}.yaml"
        shutil.copy(src, dst)
        paths.append(dst)
    return paths


def validation(repeats: int = 5) -> dict[str, Any]:
    profile = load_profile()
    work = Path(tempfile.mkdtemp(prefix="bench-validate-"))
    try:
        paths = copy_missions(work)
        validate_files(paths[:3], profile)  # warm imports
        in_process = []
        for _ in range(repeats):
            t = time.perf_counter()
            results = validate_files(paths, profile)
            in_process.append(time.perf_counter() - t)
            if not all(r.ok for r in results):
                raise AssertionError("a shipped mission does not validate")
        cli = []
        for _ in range(max(1, repeats // 2)):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "executive.cli", "validate", *map(str, paths)],
                check=True,
                capture_output=True,
            )
            cli.append(time.perf_counter() - t)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"files": len(paths), "in_process_s": summary(in_process), "cli_s": summary(cli)}


def ready(repeats: int = 5) -> dict[str, Any]:
    times = []
    with running_stack() as stack:
        stack.write_config()
        notify = stack.notify_socket()
        for _ in range(repeats):
            t0 = time.monotonic()
            stack.start_service(env=notify.env(), wait=False)
            at = notify.wait_for("READY=1", after=t0, timeout=30)
            if at is None:
                raise TimeoutError(f"no READY=1 within 30 s; see {stack.workdir}")
            times.append(at - t0)
            stack.stop("executive")
    return {"ready_s": summary(times), "samples": times}


def run(repeats: int = 5) -> dict[str, Any]:
    return {"validation": validation(repeats), "ready": ready(repeats)}


def report(results: dict[str, Any]) -> str:
    v, r = results["validation"], results["ready"]["ready_s"]
    rows = [
        [
            f"validate {v['files']} files (in process)",
            str(v["in_process_s"]["n"]),
            fmt(v["in_process_s"]["median"]),
            fmt(v["in_process_s"]["max"]),
        ],
        [
            f"atom-executive validate {v['files']} files",
            str(v["cli_s"]["n"]),
            fmt(v["cli_s"]["median"]),
            fmt(v["cli_s"]["max"]),
        ],
        ["start to READY=1", str(r["n"]), fmt(r["median"]), fmt(r["max"])],
    ]
    return table(("what", "runs", "median s", "max s"), rows)


def rows(s: dict[str, Any]) -> list[list[str]]:
    """The summary's rows: 100 files validated, and the start to READY=1 (their maxima)."""
    v, r = s["validation"]["in_process_s"], s["ready"]["ready_s"]
    cli_s = s["validation"]["cli_s"]["median"]
    validated = v["max"] <= TARGETS["validate_s"]
    ready = r["max"] <= TARGETS["ready_s"]
    return [
        [
            "validate 100 files (s)",
            f"cli {fmt(cli_s)} s",
            fmt(v["median"]),
            f"max {fmt(v['max'])}",
            "<= 1 s",
            check(validated),
        ],
        [
            "start to READY=1 (s)",
            f"{r['n']} starts",
            fmt(r["median"]),
            f"max {fmt(r['max'])}",
            "<= 2 s",
            check(ready),
        ],
    ]


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(sized(options, 5, 3, 1))


PART = Part("startup", run_part, report, rows)


def main() -> int:
    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--repeats", type=int, default=5)

    return cli(__doc__, lambda args: run(args.repeats), report, arguments)


if __name__ == "__main__":
    sys.exit(main())
