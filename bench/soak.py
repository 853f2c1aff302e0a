"""``make soak``: 1,000 missions back to back against the sim, with random faults and resets.

The simulated Atom and the service run as separate processes on a leased loopback
domain (``executive.harness.stack``), the service with a notify socket and ``WatchdogSec`` as
systemd runs it. Each run starts one of the short missions in ``bench/missions``
(``soak_arm``, ``soak_base``, ``soak_both``: control, FSM, a joint move and/or a base
move, release) with signed requests. A seeded share of the runs gets a fault injected
through the sim's fault topic at a random moment; the run must then end as the fault
requires, the fault is cleared, and a latched SAFE_STOP is reset (retried while the
executive still sees the cause) back to IDLE.

Every run must end within a bound: SUCCEEDED, or SAFE_STOP -> reset -> IDLE (or FAILED
where the fault makes the mission fail: the base's task FAILED, control or state gone
before the mission had control). A run that does not end, a reset that is never
accepted, or a service that does not come back to IDLE is a stuck state; an outcome the
fault does not explain (a clean run that fails, a latching fault that does not latch)
is an anomaly. The service's resident memory is sampled every ``--sample-every`` runs;
the report gives first, last and the slope. Exit 1 on any stuck state or anomaly, on a
watchdog ping gap longer than WatchdogSec, or if memory grows.

Then ``--restarts`` times (20) the service is killed (SIGKILL) mid-run and started again on
the same data directory, as systemd's ``Restart=on-failure`` does in the fault matrix's
``killed`` row: each restart must come back to a start it accepts, and neither the sim,
which lives through them all, nor the restarted service (its RSS at that first accepted
start, with the records of every run before it on disk) may grow from one restart to the
next by more than ``MAX_KIB_PER_RESTART`` (the fitted slope).

    python -m bench.soak                         # 1,000 runs, ~25 minutes
    python -m bench.soak --runs 50 --seed 3      # for development
"""

from __future__ import annotations

import itertools
import os
import platform
import random
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import MISSIONS, WATCHDOG_S, Table, command_line, reset_until_accepted, save
from executive.harness.stack import Stack, running_stack

TAGS = (1, 2, 3, 4)  # the sim's default map: a 2 m x 1.5 m rectangle
RUN_BOUND_S = 30.0  # a run must have ended this long after its start
RESET_BOUND_S = 10.0  # and a latch be reset this long after the fault was cleared
WARMUP_RUNS = 100  # memory growth before this (or half the runs) is start-up, not a leak
# "flat": the steady growth after the warm-up (the median step between samples, so that a
# rare jump of the allocator does not count as a trend) stays below this. The blackboard
# leak fixed in executive/core/tree.py grew ~200 KiB per 100 runs; this catches one half that.
MAX_STEADY_KIB_PER_100 = 100.0
JUMP_KIB = 512  # a step between two samples this large is reported as a jump
# restarts: the growth (fitted slope) of the sim's RSS and of the restarted service's
# RSS at its first accepted start stays below this. The restarted service's RSS at that
# moment varies by ~+-100 KiB from one start to the next: over 20 restarts its fitted slope
# came out 0.8 and 3.7 KiB. The sim's grew 18-20 KiB a restart, every restart, while the
# loopback config left CycloneDDS's receive buffers at 1 MiB: each restarted service's
# discovery was kept in the sim's buffer as it filled (docs/benchmarks.md, "CycloneDDS's
# receive buffers sized"); this catches that.
MAX_KIB_PER_RESTART = 16.0
RESTART_BOUND_S = 60.0  # killed, restarted, a start accepted again within this

# Latching faults latch whether or not a mission runs; the other kinds depend on what
# the mission is doing when they hit. (kind spec, results the run may end with)
ALWAYS_LATCH = {
    "estop-soft": ("SAFE_STOP", "SUCCEEDED"),
    "estop-hard": ("SAFE_STOP", "SUCCEEDED"),
    "bms-alarm:lower=4": ("SAFE_STOP", "SUCCEEDED"),
    "amr-estop": ("SAFE_STOP", "SUCCEEDED"),
    "servo-error:right_elbow_pitch=0x2310": ("SAFE_STOP", "SUCCEEDED"),
    "battery=4": ("SAFE_STOP", "SUCCEEDED"),
}
# revoked control or dropped state: SAFE_STOP while the mission holds control / moves;
# FAILED if it hits while the mission waits for control; nothing if no mission uses them
MISSION_ONLY = {
    "revoke-upper-control": ("SAFE_STOP", "FAILED", "SUCCEEDED"),
    "dropout:upper_state": ("SAFE_STOP", "FAILED", "SUCCEEDED"),
    "amr-failure": ("FAILED", "SUCCEEDED"),
}
FAULTS = {**ALWAYS_LATCH, **MISSION_ONLY}


@dataclass
class Run:
    index: int
    mission: str
    params: dict[str, Any]
    fault: str = ""
    delay: float = 0.0
    run_id: str = ""
    result: str = ""  # how the mission ended (status last_result)
    reason: str = ""
    latched: bool = False
    resets: int = 0  # reset requests until one was accepted
    stuck: str = ""
    anomaly: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in ("", 0, 0.0, False, None)}


@dataclass
class Soak:
    stack: Stack
    rng: random.Random
    fault_fraction: float
    runs: list[Run] = field(default_factory=list)
    rss: list[tuple[int, int, int]] = field(default_factory=list)  # (runs done, service, sim)
    maps: list[dict[str, int]] = field(default_factory=list)  # the service's RSS by mapping
    started: int = 0  # missions the service accepted
    # per restart: (sim KiB, restarted service KiB at its first accepted start, seconds)
    restarts: list[tuple[int, int, float]] = field(default_factory=list)
    restart_problems: list[str] = field(default_factory=list)

    def pick(self, index: int) -> Run:
        mission = self.rng.choice(["soak_arm", "soak_base", "soak_both"])
        params = {} if mission == "soak_arm" else {"tag": self.rng.choice(TAGS)}
        run = Run(index, mission, params)
        if self.rng.random() < self.fault_fraction:
            run.fault = self.rng.choice(sorted(FAULTS))
            run.delay = round(self.rng.uniform(0.05, 1.5), 3)
        return run

    def one(self, run: Run) -> Run:
        st, client = self.stack, self.stack.client
        t0 = time.monotonic()
        reply = client.request("start", {"mission": run.mission, "params": run.params})
        if reply.code != 0:
            run.anomaly = f"start refused: {reply.message}"
            self.recover(run)
            return run
        self.started += 1
        n = self.started
        run.run_id = str(reply.message)

        def ended(s: Any) -> bool:
            return int(s.runs) >= n and s.state != "RUNNING"

        if client.wait_status(lambda s: int(s.runs) >= n, RUN_BOUND_S) is None:
            run.stuck = "the run never showed in the status"
            return run
        if run.fault:
            client.wait_status(ended, run.delay)  # the fault may also come after the end
            st.sim.inject_spec(run.fault)
        status = client.wait_status(ended, max(0.0, t0 + RUN_BOUND_S - time.monotonic()))
        if status is None:
            run.stuck = f"still {client.status().state} {RUN_BOUND_S:g} s after the start"
            self.recover(run)
            return run
        if run.fault in ALWAYS_LATCH:  # it may hit just after the end: wait for the latch
            status = client.wait_status(lambda s: s.safety == "SAFE_STOP", 5.0) or status
        run.result, run.reason = status.last_result, status.last_reason
        run.latched = status.safety == "SAFE_STOP"
        if run.fault:
            st.sim.clear_all()
        self.judge(run)
        if client.status().safety == "SAFE_STOP":
            run.latched = True
            accepted, run.resets = self.reset()
            if not accepted:
                run.stuck = f"reset not accepted {RESET_BOUND_S:g} s after clearing"
                return run
        idle = client.wait_status(
            lambda s: s.safety == "CLEAR" and s.state not in ("RUNNING", "SAFE_STOP"), 5.0
        )
        if idle is None:
            run.stuck = f"not back to idle: {client.status().state}"
        elif int(idle.runs) != self.started:
            run.anomaly = f"the service started {int(idle.runs) - self.started} run(s) by itself"
        run.seconds = round(time.monotonic() - t0, 3)
        return run

    def judge(self, run: Run) -> None:
        """An outcome the fault (or its absence) does not explain is an anomaly."""
        allowed = FAULTS.get(run.fault, ("SUCCEEDED",))
        if run.result not in allowed:
            run.anomaly = f"ended {run.result} ({run.reason}); expected one of {allowed}"
        elif run.fault in ALWAYS_LATCH and not run.latched:
            run.anomaly = f"{run.fault} did not latch SAFE_STOP"
        elif run.fault == "amr-failure" and run.latched:
            run.anomaly = "amr-failure latched SAFE_STOP"

    def reset(self) -> tuple[bool, int]:
        """Reset until accepted (the executive may still see the cleared fault)."""
        accepted, attempts, _ = reset_until_accepted(
            self.stack.client, RESET_BOUND_S, every=0.05, reply_timeout=5.0
        )
        return accepted, attempts

    def recover(self, run: Run) -> None:
        """After a stuck run: stop it, clear everything, reset, so the soak goes on."""
        client = self.stack.client
        self.stack.sim.clear_all()
        client.request("stop")
        client.wait_status(lambda s: s.state != "RUNNING", 10.0)
        if client.status().safety == "SAFE_STOP":
            self.reset()

    def restart(self, index: int, env: dict[str, str]) -> None:
        """SIGKILL the service mid-run, start it again (the same config and data directory)
        and wait until it accepts a start; then sample the sim's and its RSS."""
        st, client = self.stack, self.stack.client
        t0 = time.monotonic()
        reply = client.request("start", {"mission": "soak_arm", "params": {}})
        if reply.code == 0:
            client.wait_status(lambda s: s.state == "RUNNING", 5.0)
            time.sleep(self.rng.uniform(0.1, 0.5))  # mid-motion, as the fault matrix kills
        st.stop("executive", signal.SIGKILL)
        proc = st.start_service(env=env)
        deadline = time.monotonic() + RESTART_BOUND_S
        while True:  # recovery may hold starts until it has made the robot safe
            reply = client.request("start", {"mission": "soak_arm", "params": {}})
            if reply.code == 0:
                break
            if time.monotonic() >= deadline:
                self.restart_problems.append(
                    f"restart {index}: no start accepted {RESTART_BOUND_S:g} s after it: "
                    f"{reply.message}"
                )
                return
            time.sleep(0.2)
        self.restarts.append(
            (
                self.stack.rss_kib("sim"),
                self.stack.rss_kib("executive"),
                round(time.monotonic() - t0, 2),
            )
        )
        ended = client.wait_status(lambda s: s.state not in ("RUNNING", "IDLE"), RUN_BOUND_S)
        if ended is None or ended.executive_id.split(":")[-1] != str(proc.pid):
            self.restart_problems.append(f"restart {index}: its run did not end")
        elif client.status().safety == "SAFE_STOP" and not self.reset()[0]:
            self.restart_problems.append(f"restart {index}: reset not accepted")

    def sample(self, done: int) -> None:
        self.rss.append((done, self.stack.rss_kib("executive"), self.stack.rss_kib("sim")))
        pid = self.stack.pid("executive")
        if pid is not None:
            self.maps.append({"runs": done, **rss_by_mapping(pid)})


def rss_by_mapping(pid: int) -> dict[str, int]:
    """The process's RSS (KiB) by kind of mapping: ``heap`` (brk: the main thread's
    malloc arena and pymalloc's small arenas), ``anon`` (other anonymous mappings: thread
    arenas, mmapped blocks, CycloneDDS's buffers), ``stack``, ``file`` (code, libraries)."""
    out = {"heap": 0, "anon": 0, "stack": 0, "file": 0}
    kind = "anon"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5:  # a mapping's first line
            name = head[5] if len(head) > 5 else ""
            kind = (
                "heap"
                if name == "[heap]"
                else "stack"
                if name.startswith("[stack")
                else "file"
                if name.startswith("/")
                else "anon"
            )
        elif head and head[0] == "Rss:":
            out[kind] += int(head[1])
    return out


def memory(rss: list[tuple[int, int, int]], maps: list[dict[str, int]]) -> dict[str, Any]:
    """RSS first, after the warm-up and last; the fitted slope and the steady (median)
    growth after the warm-up, KiB per 100 runs; jumps between samples; where it grew."""
    total = rss[-1][0] if rss else 0
    warmup = min(WARMUP_RUNS, total // 2)
    later = [(n, kib) for n, kib, _ in rss if n >= warmup]
    runs = np.array([n for n, _ in later], dtype=float)
    kib = np.array([k for _, k in later], dtype=float)
    fitted = steady = 0.0
    if len(later) >= 3:
        fitted = float(np.polyfit(runs, kib, 1)[0] * 100)
        steady = float(np.median(np.diff(kib) / np.diff(runs)) * 100)
    jumps = [
        {"runs": b[0], "kib": b[1] - a[1]}
        for a, b in itertools.pairwise(rss)
        if a[0] >= warmup and b[1] - a[1] >= JUMP_KIB
    ]
    after = next((m for m in maps if m["runs"] >= warmup), maps[0] if maps else None)
    grew = (
        {k: maps[-1][k] - after[k] for k in ("heap", "anon", "stack", "file")}
        if after and maps
        else {}
    )
    return {
        "warmup_runs": warmup,
        "first_kib": rss[0][1] if rss else None,
        "after_warmup_kib": int(kib[0]) if len(kib) else None,
        "last_kib": rss[-1][1] if rss else None,
        "max_kib": max(k for _, k, _ in rss) if rss else None,
        "fitted_kib_per_100_runs": round(fitted, 1),
        "steady_kib_per_100_runs": round(steady, 1),
        "jumps": jumps,
        "grew_after_warmup_by_mapping_kib": grew,
        "sim_first_kib": rss[0][2] if rss else None,
        "sim_last_kib": rss[-1][2] if rss else None,
        "flat": steady < MAX_STEADY_KIB_PER_100,
    }


def restart_memory(restarts: list[tuple[int, int, float]]) -> dict[str, Any]:
    """The sim's and the restarted service's RSS over the restarts: first, last and the
    growth (the fitted slope, KiB per restart: a restarted service's RSS at the same
    moment varies by ~100 KiB from one start to the next, a median step would be noise)."""

    def steady(values: list[int]) -> float:
        if len(values) < 3:
            return 0.0
        return float(np.polyfit(np.arange(len(values), dtype=float), values, 1)[0])

    sim = [r[0] for r in restarts]
    service = [r[1] for r in restarts]
    out: dict[str, Any] = {
        "restarts": len(restarts),
        "sim_kib": sim,
        "service_kib": service,
        "seconds": [r[2] for r in restarts],
        "sim_steady_kib_per_restart": round(steady(sim), 1),
        "service_steady_kib_per_restart": round(steady(service), 1),
    }
    out["flat"] = max(out["sim_steady_kib_per_restart"], out["service_steady_kib_per_restart"]) < (
        MAX_KIB_PER_RESTART
    )
    return out


def soak(
    runs: int,
    *,
    seed: int = 1,
    fault_fraction: float = 0.3,
    sample_every: int = 25,
    restarts: int = 0,
    workdir: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run the soak; the summary as JSON-able data."""
    t_start = time.monotonic()
    with running_stack(workdir) as stack:
        stack.write_config(missions_dir=str(MISSIONS))
        stack.start_sim("--amr-speed", "3.0", "--amr-turn-rate", "6.0", "--seed", str(seed))
        notify = stack.notify_socket(WATCHDOG_S)
        stack.start_service(env=notify.env())
        s = Soak(stack, random.Random(seed), fault_fraction)  # noqa: S311 - a seeded plan, not a secret
        s.sample(0)
        for i in range(runs):
            run = s.one(s.pick(i))
            s.runs.append(run)
            if run.stuck or run.anomaly:
                print(f"  run {i} {run.mission} {run.fault or '-'}: {run.stuck or run.anomaly}")
            if (i + 1) % sample_every == 0 or i + 1 == runs:
                s.sample(i + 1)
            if progress and (i + 1) % 50 == 0:
                elapsed = time.monotonic() - t_start
                print(
                    f"  {i + 1}/{runs} runs, {elapsed:.0f} s, service RSS {s.rss[-1][1]} KiB",
                    flush=True,
                )
        pings = [at for at, _ in notify.since(0.0, "WATCHDOG=1")]
        final = stack.client.status()
        for i in range(restarts):  # after the runs: their pings and counters are judged above
            s.restart(i, notify.env())
        if progress and restarts:
            print(f"  {len(s.restarts)}/{restarts} restarts", flush=True)
    gaps = np.diff(pings) if len(pings) > 1 else np.array([0.0])
    faulted = [r for r in s.runs if r.fault]
    by_fault: dict[str, dict[str, int]] = {}
    for r in faulted:
        outcome = r.result + (" latched" if r.latched else "")
        counts = by_fault.setdefault(r.fault, {})
        counts[outcome] = counts.get(outcome, 0) + 1
    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "host": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "seed": seed,
        "runs": len(s.runs),
        "seconds": round(time.monotonic() - t_start, 1),
        "faults_injected": len(faulted),
        "latched": sum(r.latched for r in s.runs),
        "resets": sum(1 for r in s.runs if r.resets),
        "results": {
            res: sum(1 for r in s.runs if r.result == res)
            for res in sorted({r.result for r in s.runs})
        },
        "missions": {
            m: sum(1 for r in s.runs if r.mission == m) for m in sorted({r.mission for r in s.runs})
        },
        "by_fault": by_fault,
        "stuck": [r.as_dict() for r in s.runs if r.stuck],
        "anomalies": [r.as_dict() for r in s.runs if r.anomaly],
        "service_runs_counter": int(final.runs),
        "starts_accepted": s.started,
        "run_seconds": {
            "median": round(float(np.median([r.seconds for r in s.runs])), 3) if s.runs else None,
            "max": max((r.seconds for r in s.runs), default=None),
        },
        "watchdog_max_ping_gap_s": round(float(gaps.max()), 3),
        "memory": memory(s.rss, s.maps),
        "restarts": {**restart_memory(s.restarts), "problems": s.restart_problems},
        "rss_samples": [{"runs": n, "service_kib": a, "sim_kib": b} for n, a, b in s.rss],
        "service_rss_by_mapping": s.maps,
        "per_run": [r.as_dict() for r in s.runs],
    }


def report(data: dict[str, Any]) -> tuple[str, bool]:
    mem = data["memory"]
    restarts = data["restarts"]
    ok = (
        not data["stuck"]
        and not data["anomalies"]
        and mem["flat"]
        and restarts["flat"]
        and not restarts["problems"]
        and data["watchdog_max_ping_gap_s"] < WATCHDOG_S
        and data["service_runs_counter"] == data["starts_accepted"]
    )
    t = Table(("soak", "figure"), limit=100)
    t.add(
        (
            "runs",
            f"{data['runs']} in {data['seconds']:.0f} s (median run {data['run_seconds']['median']} s, max {data['run_seconds']['max']} s)",
        )
    )
    t.add(("missions", ", ".join(f"{m} {n}" for m, n in data["missions"].items())))
    t.add(("results", ", ".join(f"{k} {v}" for k, v in data["results"].items())))
    t.add(
        (
            "faults injected",
            f"{data['faults_injected']}; latched {data['latched']}, reset {data['resets']}",
        )
    )
    t.add(("stuck states", str(len(data["stuck"]))))
    t.add(("anomalies", str(len(data["anomalies"]))))
    t.add(
        (
            "runs started / counted by the service",
            f"{data['starts_accepted']} / {data['service_runs_counter']}",
        )
    )
    t.add(
        (
            "service RSS first / after warm-up / last",
            f"{mem['first_kib']} / {mem['after_warmup_kib']} / {mem['last_kib']} KiB (max {mem['max_kib']})",
        )
    )
    t.add(
        (
            "service RSS steady growth / fitted slope after warm-up",
            f"{mem['steady_kib_per_100_runs']} / {mem['fitted_kib_per_100_runs']} KiB per 100 runs "
            f"({'flat' if mem['flat'] else 'GROWING'})",
        )
    )
    jumps = ", ".join(f"+{j['kib']} KiB at run {j['runs']}" for j in mem["jumps"]) or "none"
    t.add(("service RSS jumps after warm-up", jumps))
    grew = mem["grew_after_warmup_by_mapping_kib"]
    t.add(("grew after warm-up, by mapping", ", ".join(f"{k} {v:+d}" for k, v in grew.items())))
    t.add(("sim RSS first / last", f"{mem['sim_first_kib']} / {mem['sim_last_kib']} KiB"))
    if restarts["restarts"] or restarts["problems"]:
        sim, service = restarts["sim_kib"], restarts["service_kib"]
        t.add(
            (
                "restarts (SIGKILL mid-run), back to an accepted start",
                f"{restarts['restarts']}; {len(restarts['problems'])} problems; "
                f"longest {max(restarts['seconds'], default=0)} s",
            )
        )
        t.add(
            (
                "sim RSS over the restarts: first / last, slope",
                f"{sim[0] if sim else '-'} / {sim[-1] if sim else '-'} KiB, "
                f"{restarts['sim_steady_kib_per_restart']} KiB per restart",
            )
        )
        t.add(
            (
                "restarted service RSS at its first start: first / last, slope",
                f"{service[0] if service else '-'} / {service[-1] if service else '-'} KiB, "
                f"{restarts['service_steady_kib_per_restart']} KiB per restart "
                f"({'flat' if restarts['flat'] else 'GROWING'})",
            )
        )
    t.add(
        (
            "longest watchdog ping gap",
            f"{data['watchdog_max_ping_gap_s']} s (WatchdogSec {WATCHDOG_S:g})",
        )
    )
    lines = [t.render(), "", "by fault (run result, latched):"]
    for fault, counts in sorted(data["by_fault"].items()):
        lines.append(f"  {fault:38s} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for problem in restarts["problems"]:
        lines.append(f"  {problem}")
    lines.append("")
    lines.append("soak: " + ("ok" if ok else "FAILED"))
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    p = command_line("python -m bench.soak", __doc__, "soak.json")
    p.add_argument("--runs", type=int, default=1000, help="missions to run (default 1000)")
    p.add_argument(
        "--seed", type=int, default=1, help="seed of the missions, faults and delays (default 1)"
    )
    p.add_argument(
        "--fault-fraction", type=float, default=0.3, help="share of runs with a fault (default 0.3)"
    )
    p.add_argument(
        "--sample-every",
        type=int,
        default=25,
        help="sample the service's RSS every N runs (default 25)",
    )
    p.add_argument(
        "--restarts",
        type=int,
        default=20,
        help="after the runs, kill (SIGKILL) and restart the service N times (default 20)",
    )
    args = p.parse_args(argv)
    data = soak(
        args.runs,
        seed=args.seed,
        fault_fraction=args.fault_fraction,
        sample_every=args.sample_every,
        restarts=args.restarts,
        workdir=args.workdir,
    )
    text, ok = report(data)
    print()
    print(text)
    save(args.json, data)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
