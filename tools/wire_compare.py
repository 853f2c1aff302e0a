"""Prove the Atom's bytes on the wire did not change across a refactor (issue 12, item 2).

    .venv/bin/python tools/wire_compare.py --before 3d8faf2 --after HEAD

For each revision: a detached git worktree under /tmp (the working tree of this checkout is
never touched), that revision's code run with ``PYTHONPATH=<worktree>`` (checked: the
capture prints ``executive.__file__``; the venv's editable finder sits after the path
finder, so PYTHONPATH wins), the C reflex's built ``.so`` copied in when its C source (one
``_reflex.c``, or the units behind ``reflex.h``) is identical. Then, per revision, in that
revision's code:

- ``capture``: the simulated Atom and the service as processes (``executive.harness.stack``, as
  the demo runs them; same sim seed), a separate participant holding a raw reader on every
  command topic (serialized bytes, ``raw_take``), and a script of shipped missions and an
  e-stop while the base drives (the hold and the CANCEL_TASK);
- ``golden`` (``--before`` only): the Atom's stream records and one-shot commands encoded
  by that revision's own classes for fixed inputs, through a real writer, taken raw:
  ``tests/fixtures/atom_wire_golden.json``, which ``tests/test_wire_compare.py`` checks
  HEAD's ``AtomStream``/``AtomCommands`` against in CI without worktrees.

The comparison (this file's code, stock cyclonedds deserialization, not the codec under
test) and its markdown report: ``docs/wire-before-after.md``.
"""

# ruff: noqa: T201, S108, PLR0915 - a command-line tool: it prints, works under /tmp, runs scripts

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
MAIN = HERE.parents[1]
LOOPBACK = (MAIN / "executive" / "resources" / "cyclonedds-loopback.xml").as_uri()
# where the C extension lives: the newest layout first (the robot-neutral native core under
# executive/robots/), then a revision's before it (executive/reflex/, the Atom's reflex)
REFLEX_DIRS = ("executive/robots/native", "executive/reflex")
STREAM_KEYS = ("upper_cmd", "lower_cmd", "hands_cmd")
EVENT_KEYS = (
    "set_fsm_id",
    "switch_upper_control",
    "clear_errors",
    "amr_cmd",
    "remote_control",
)
# fields that are ids or clocks by design: masked in the byte comparison, and why
MASKED = {
    "amr_cmd": {
        "command_id": "a counter started from the wall clock (int(time.time()) % 10**6 * 1000)",
        "timestamp": "time.time_ns() at send",
    },
    "clear_errors": {"msg_id": "the same wall-clock-seeded counter"},
}
GOLDEN_PROFILES = ("atom-sdk", "atom-seed001")
GOLDEN_INTERFACES = ("seed", "sdk-1.0.1", "sdk-1.1.0")
GOLDEN_CLOCK_NS = 1_700_000_000_123_456_789
GOLDEN_FIRST_ID = 424_242_000


# -- running a revision's code ----------------------------------------------------------


def use_tree(root: Path) -> None:
    """Import ``executive``/``behaviours`` from ``root`` and say so (fail if not).

    The venv's editable install of the main tree is a finder that answers for any
    ``executive.*`` module the path does not have: without removing it, a module that exists
    only in the main tree (``executive.seam.profile`` asked of a revision before it) would
    be imported from there, silently mixing revisions."""
    sys.meta_path[:] = [
        f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")
    ]
    sys.path.insert(0, str(root))
    import behaviours
    import executive

    for mod in (executive, behaviours):
        where = Path(mod.__file__ or "").resolve()
        print(f"[{root.name}] {mod.__name__}.__file__ = {where}", flush=True)
        if not where.is_relative_to(root.resolve()):
            raise SystemExit(f"{mod.__name__} imported from {where}, not from {root}")
    reflex = layered("robots.native", "reflex")
    c = getattr(reflex, "_reflex", None)
    print(f"[{root.name}] C reflex: {getattr(c, '__file__', 'absent: Python fallback')}")


def layered(*names: str) -> Any:
    """The first of ``executive.<name>`` that exists: the newest layout first, then a
    revision's before it (flat modules moved into layer packages after the seam, and the
    Atom's topic table moved under its adapter; the code did not change)."""
    for name in names[:-1]:
        try:
            return importlib.import_module(f"executive.{name}")
        except ModuleNotFoundError:
            continue
    return importlib.import_module(f"executive.{names[-1]}")


def raw_readers(participant: Any, interface: Any) -> dict[str, Any]:
    from cyclonedds.core import Policy, Qos
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration

    topics = layered("robots.atom.topics", "wire.robot_io", "robot_io").TOPICS

    qos = Qos(
        Policy.Reliability.Reliable(duration(milliseconds=100)),
        Policy.History.KeepLast(100_000),
        Policy.Durability.Volatile,
        Policy.DataRepresentation(use_cdrv0_representation=True, use_xcdrv2_representation=True),
    )
    readers = {}
    for key in (*STREAM_KEYS, *EVENT_KEYS):
        spec = topics[key]
        topic = Topic(participant, spec.name, getattr(interface, spec.type_name))
        readers[key] = DataReader(participant, topic, qos=qos)
    return readers


# -- capture: missions against the sim, every command taken raw ----------------------------


def capture(root: Path, out: Path, seed: int) -> None:
    use_tree(root)
    import threading

    dds = layered("wire.dds", "dds")
    running_stack = layered("harness.stack", "stack").running_stack

    try:  # after the seam the Atom's variants are its adapter's
        from executive.robots.atom.interface import Interface
    except ImportError:  # before it
        from executive.wire import Interface  # type: ignore[no-redef]
    from executive.wire.codec import raw_take

    samples: list[tuple[float, str, str]] = []  # (monotonic, key, hex)
    phases: list[dict[str, Any]] = []
    stop = threading.Event()

    with running_stack(keep=True) as stack:
        print(f"[{root.name}] domain {stack.domain}, work {stack.workdir}", flush=True)
        os.environ.setdefault("CYCLONEDDS_URI", LOOPBACK)
        spy = dds.make_participant(stack.domain)  # the witness: its own participant
        readers = raw_readers(spy, Interface())

        def drain() -> None:
            while not stop.is_set():
                for key, reader in readers.items():
                    for data in raw_take(reader, 4096):
                        samples.append((time.monotonic(), key, data.hex()))
                time.sleep(0.002)

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        try:
            stack.start_sim("--amr-speed", "3.0", "--seed", str(seed))
            service = stack.start_service()
            maps = Path(f"/proc/{service.pid}/maps").read_text()
            so = sorted({line.split()[-1] for line in maps.splitlines() if "_reflex" in line})
            print(f"[{root.name}] the service (pid {service.pid}) mapped {so}", flush=True)
            if so and not all(p.startswith(str(root)) for p in so):
                raise SystemExit(f"the service runs another tree's code: {so}")
            client, sim = stack.client, stack.sim
            assert client.status(30).state == "IDLE"
            time.sleep(0.5)

            def run(name: str, params: dict[str, Any], *, press_a: bool = False) -> str:
                # a trip that is not the script's (on 2 shared cores the sim can stall past
                # the 0.5 s stale limit) spoils the phase: reset, run it again
                for attempt in range(3):  # noqa: B007 - reported after the loop
                    final = attempt_run(name, params, press_a=press_a)
                    if not final.startswith("SAFE_STOP"):
                        break
                    print(f"[{root.name}] {label(name, params)}: again after {final}", flush=True)
                phases.append({**pending.pop(), "attempts": attempt + 1})
                print(f"[{root.name}] {label(name, params)}: {final}", flush=True)
                return final

            pending: list[dict[str, Any]] = []

            def attempt_run(name: str, params: dict[str, Any], *, press_a: bool) -> str:
                pending.clear()
                t0 = time.monotonic()
                reply = client.request("start", {"mission": name, "params": params})
                if reply.code != 0:
                    raise RuntimeError(f"{name}: start refused: {reply.message}")
                run_id = reply.message
                client.wait_status(lambda s: s.run_id == run_id, 10)
                deadline = time.monotonic() + 180
                while time.monotonic() < deadline:
                    s = client.wait_status(lambda s: s.state != "RUNNING", 0.5)
                    if s is not None:
                        break
                    if press_a and "Wait for button A" in (client.status().active_node or ""):
                        sim.inject("button", "A", duration=1.0)
                        client.wait_status(lambda s: "Wait for button A" not in s.active_node, 4.0)
                status = client.status()
                final = str(status.state)
                if final == "SAFE_STOP":  # not the script's: say why, reset, go on
                    final += f" ({status.safety_reason})"
                    deadline = time.monotonic() + 20  # refused until every source is fresh
                    while time.monotonic() < deadline:
                        time.sleep(0.5)
                        if client.request("reset").code == 0 and client.wait_status(
                            lambda s: s.state == "IDLE", 5
                        ):
                            break
                time.sleep(1.0)  # the release and anything after it
                pending.append(
                    {"phase": label(name, params), "t0": t0, "t1": time.monotonic(), "end": final}
                )
                return final

            run("head_scan", {})
            run("greeting_wave", {})
            run("deliver_drink", {"table_tag": 4}, press_a=True)
            run("pick_and_place", {})

            # the safety trip: an e-stop while the base drives, the arm held in its pose
            t0 = time.monotonic()
            reply = client.request(
                "start", {"mission": "deliver_drink", "params": {"bar_tag": 1, "table_tag": 2}}
            )
            assert reply.code == 0, reply.message
            client.wait_status(lambda s: "Drive to the table" in s.active_node, 120)
            time.sleep(1.0)
            t_estop = time.monotonic()
            sim.inject("estop-soft")
            stopped = client.wait_status(lambda s: s.state == "SAFE_STOP", 10)
            time.sleep(1.5)
            sim.clear("estop-soft")
            time.sleep(0.5)
            reset = client.request("reset")
            client.wait_status(lambda s: s.state == "IDLE", 5)
            time.sleep(1.0)
            phases.append(
                {
                    "phase": "estop: deliver_drink(bar_tag=1, table_tag=2), e-stop while driving",
                    "t0": t0,
                    "t_estop": t_estop,
                    "t1": time.monotonic(),
                    "end": f"{stopped.state if stopped else 'no SAFE_STOP'}; reset {reset.code}",
                }
            )
            print(f"[{root.name}] estop: {phases[-1]['end']}", flush=True)
        finally:
            stop.set()
            thread.join(2)
            dds.close_participant(spy)
    out.write_text(json.dumps({"root": str(root), "phases": phases, "samples": samples}))


def label(name: str, params: dict[str, Any]) -> str:
    return f"{name}({', '.join(f'{k}={v}' for k, v in params.items())})"


# -- golden: fixed inputs through that revision's own encoders ------------------------


def golden_vectors(lower: Any, upper: Any) -> dict[str, list[float]]:
    import numpy as np

    rng = np.random.default_rng(12)
    return {
        "mid": ((lower + upper) / 2).tolist(),
        "random": (lower + rng.random(len(lower)) * (upper - lower)).tolist(),
    }


def golden(root: Path, out: Path) -> None:
    """Encode fixed inputs with the revision's stream records and command writer, write
    them through a real writer, take them raw from a reader: the golden bytes."""
    use_tree(root)
    import numpy as np

    dds = layered("wire.dds", "dds")
    load_profile = layered("robots.profile", "profile").load_profile
    robot_io = layered("wire.robot_io", "robot_io")

    try:  # after the seam the Atom's variants are its adapter's
        from executive.robots.atom.interface import Interface, Variant
    except ImportError:  # before it
        from executive.wire import Interface, Variant  # type: ignore[no-redef]
    from executive.wire.codec import raw_take, raw_write

    try:  # before the seam: the streamer's _Stream, behaviours' DdsCommands
        from behaviours.context import DdsCommands as Commands
        from executive.motion.streamer import _Stream

        def stream_bytes(io: Any, profile: Any, name: str, q: Any, hold: bool) -> bytes:
            s = _Stream(io, profile, name, 0)
            if hold:  # MotionStreamer._hold_bytes
                s.hold_record[s.cmd_field]["q"] = q
                return bytes(s.codec.encode(s.hold_record))
            s.record[s.cmd_field]["q"] = q  # MotionStreamer._publish
            return bytes(s.codec.encode(s.record))

        ops = {
            "control_on": lambda c: c.switch_upper_control(True),
            "control_off": lambda c: c.switch_upper_control(False),
            "clear": lambda c: c.clear_errors(),
            "move_to_tag": lambda c: c.amr("MOVE_TO_TAG", target_id=4, theta=1.5707963267948966),
            "cancel": lambda c: c.amr("CANCEL_TASK"),
        }
    except ImportError:  # behind the seam
        from executive.robots.atom.commands import AtomCommands as Commands
        from executive.robots.atom.streams import AtomStream

        def stream_bytes(io: Any, profile: Any, name: str, q: Any, hold: bool) -> bytes:
            return AtomStream(io, profile, name).encode(q)

        ops = {
            "control_on": lambda c: c.request_control(True),
            "control_off": lambda c: c.request_control(False),
            "clear": lambda c: c.clear_faults(),
            "move_to_tag": lambda c: c.go_to_tag(4, 1.5707963267948966),
            "cancel": lambda c: c.cancel_base(),
        }

    os.environ.setdefault("CYCLONEDDS_URI", LOOPBACK)
    lease = dds.lease_domain()
    participant = dds.make_participant(lease.domain)
    result: dict[str, Any] = {
        "_about": "Atom command bytes (hex, as taken raw from a reader) encoded by "
        "revision's own classes for fixed inputs; regenerate with "
        "tools/wire_compare.py --golden-only --before REV",
        "clock_ns": GOLDEN_CLOCK_NS,
        "first_id": GOLDEN_FIRST_ID,
        "fsm_ids": [0, 1, 2, 7, 255],
        "streams": [],
        "commands": [],
    }
    try:
        for variant in GOLDEN_INTERFACES:
            interface = Interface(Variant.parse(variant))
            atom_io = getattr(
                layered("robots.atom.topics", "wire.robot_io", "robot_io"), "AtomIO", None
            )
            io = (atom_io or robot_io.RobotIO)(
                participant, interface, side=robot_io.Side.CONTROLLER
            )
            readers = raw_readers(participant, interface)

            def through_wire(key: str, send: Any, readers: Any = readers, io: Any = io) -> str:
                send()
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    got = raw_take(readers[key], 16)
                    if got:
                        assert len(got) == 1, (key, len(got))
                        return bytes(got[0]).hex()
                    time.sleep(0.002)
                raise TimeoutError(key)

            time.sleep(0.3)  # the local reader matches the writer
            # the joint streams' types are the same in every variant: recorded for the first
            for pname in GOLDEN_PROFILES if variant == GOLDEN_INTERFACES[0] else ():
                profile = load_profile(pname)
                for name in profile.topics:
                    key = f"{name}_cmd"
                    lower, upper = profile.limits(name)
                    for vname, q in golden_vectors(lower, upper).items():
                        for hold in (False, True):
                            data = stream_bytes(io, profile, name, np.asarray(q), hold)
                            wire = through_wire(
                                key, lambda d=data, k=key, io=io: raw_write(io.writers[k], d)
                            )
                            assert wire == data.hex(), f"{key}: the wire altered the bytes"
                            result["streams"].append(
                                {
                                    "interface": variant,
                                    "profile": pname,
                                    "stream": name,
                                    "vector": vname,
                                    "hold": hold,
                                    "q": q,
                                    "hex": wire,
                                }
                            )
            commands = Commands(io, clock_ns=lambda: GOLDEN_CLOCK_NS)
            commands._ids = itertools.count(GOLDEN_FIRST_ID)
            key_of = {
                "control_on": "switch_upper_control",
                "control_off": "switch_upper_control",
                "clear": "clear_errors",
                "move_to_tag": "amr_cmd",
                "cancel": "amr_cmd",
            }
            seq = [(n, lambda f=f, c=commands: f(c)) for n, f in ops.items()]
            for fsm_id in result["fsm_ids"]:
                seq.append((f"set_fsm_{fsm_id}", lambda i=fsm_id, c=commands: c.set_fsm(i)))
                key_of[f"set_fsm_{fsm_id}"] = "set_fsm_id"
            for op, send in seq:
                result["commands"].append(
                    {
                        "interface": variant,
                        "op": op,
                        "topic": key_of[op],
                        "hex": through_wire(key_of[op], send),
                    }
                )
    finally:
        dds.close_participant(participant)
        lease.release()
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"[{root.name}] golden: {len(result['streams'])} stream, "
        f"{len(result['commands'])} command samples -> {out}"
    )


# -- the comparison (HEAD's environment, stock deserialization) --------------------------


class Wire:
    """Field decoding with stock cyclonedds, and byte masks from it."""

    def __init__(self) -> None:
        topics = layered("robots.atom.topics", "wire.robot_io", "robot_io").TOPICS

        try:  # after the seam the Atom's variants are its adapter's
            from executive.robots.atom.interface import Interface
        except ImportError:  # before it
            from executive.wire import Interface  # type: ignore[no-redef]

        self.i = Interface()
        self.types = {k: getattr(self.i, topics[k].type_name) for k in (*STREAM_KEYS, *EVENT_KEYS)}
        self.names = {k: topics[k].name for k in self.types}
        self._masks: dict[tuple[str, int], tuple[int, ...]] = {}

    def decode(self, key: str, data: bytes) -> Any:
        return self.types[key].deserialize(data)

    def mask(self, key: str, data: bytes, fields: tuple[str, ...]) -> tuple[int, ...]:
        """Byte positions of ``fields`` in ``data``'s layout: where two re-serializations
        that differ only in those fields differ (stock serializer, same representation)."""
        cache = (key, len(data))
        if cache not in self._masks:
            import copy

            sample = self.decode(key, data)
            pos: set[int] = set()
            for f in fields:
                a, b = copy.deepcopy(sample), copy.deepcopy(sample)
                setattr(a, f, 0)
                setattr(b, f, (1 << 31) - 1 if f == "msg_id" else (1 << 32) - 1)
                if f == "timestamp":
                    setattr(b, f, (1 << 63) - 1)
                ea, eb = a.serialize(), b.serialize()
                assert len(ea) == len(eb) == len(data), (key, f, len(ea), len(data))
                pos |= {i for i in range(len(ea)) if ea[i] != eb[i]}
            self._masks[cache] = tuple(sorted(pos))
        return self._masks[cache]

    def q_mask(self, key: str, data: bytes) -> tuple[int, ...]:
        cache = (key + ":q", len(data))
        if cache not in self._masks:
            import copy

            sample = self.decode(key, data)
            arr = "motor_cmd" if hasattr(sample, "motor_cmd") else "hands"
            encoded = []
            for value in (0.0, -3.0e38, 1.1):  # every byte of q differs from 0 in one of them
                s = copy.deepcopy(sample)
                for m in getattr(s, arr):
                    m.q = value
                encoded.append(s.serialize())
            assert all(len(e) == len(data) for e in encoded), key
            zero = encoded[0]
            self._masks[cache] = tuple(
                i for i in range(len(zero)) if any(e[i] != zero[i] for e in encoded[1:])
            )
        return self._masks[cache]


def masked(data: bytes, positions: tuple[int, ...]) -> bytes:
    b = bytearray(data)
    for p in positions:
        b[p] = 0
    return bytes(b)


def q_of(wire: Wire, key: str, data: bytes) -> tuple[float, ...]:
    s = wire.decode(key, data)
    arr = s.motor_cmd if hasattr(s, "motor_cmd") else s.hands
    return tuple(float(m.q) for m in arr)


def plateaus(qs: list[tuple[float, ...]], min_run: int = 25) -> list[tuple[float, ...]]:
    """The q vectors held for at least ``min_run`` consecutive samples (rests and final
    targets), in order, consecutive repeats merged."""
    out: list[tuple[float, ...]] = []
    i = 0
    while i < len(qs):
        j = i
        while j < len(qs) and qs[j] == qs[i]:
            j += 1
        if j - i >= min_run and (not out or out[-1] != qs[i]):
            out.append(qs[i])
        i = j
    return out


def reversals(qs: list[tuple[float, ...]]) -> int:
    """Direction changes summed over joints: a move to a target is monotone per joint, so
    this counts the segments' turns whatever the timing sampled (steps under 1e-6 rad are
    the float32 rounding of a target reached, not a move)."""
    n = 0
    for j in range(len(qs[0]) if qs else 0):
        last = 0
        for a, b in itertools.pairwise(qs):
            d = b[j] - a[j]
            step = 0 if abs(d) < 1e-6 else (d > 0) - (d < 0)  # below: float32 rounding
            if step and last and step != last:
                n += 1
            last = step or last
    return n


def by_phase(cap: dict[str, Any]) -> dict[str, dict[str, list[tuple[float, bytes]]]]:
    res: dict[str, dict[str, list[tuple[float, bytes]]]] = {}
    for ph in cap["phases"]:
        res[ph["phase"]] = defaultdict(list)
    for t, key, h in cap["samples"]:
        for ph in cap["phases"]:
            if ph["t0"] <= t < ph["t1"]:
                res[ph["phase"]][key].append((t, bytes.fromhex(h)))
                break
    return res


def compare(
    before: dict[str, Any], after: dict[str, Any], limits: dict[str, Any]
) -> dict[str, Any]:
    wire = Wire()
    pb, pa = by_phase(before), by_phase(after)
    rows: list[dict[str, Any]] = []
    differences: list[str] = []
    for phase in pb:
        for key in (*STREAM_KEYS, *EVENT_KEYS):
            sb, sa = pb[phase].get(key, []), pa.get(phase, {}).get(key, [])
            if not sb and not sa:
                continue
            row: dict[str, Any] = {
                "phase": phase,
                "topic": wire.names[key],
                "before": len(sb),
                "after": len(sa),
            }
            if key in STREAM_KEYS:
                row.update(compare_stream(wire, key, sb, sa, limits[key], differences, phase))
            else:
                row.update(compare_events(wire, key, sb, sa, differences, phase))
            rows.append(row)
    # the trip: what followed the e-stop, stream by stream
    trip = {}
    for ph_b, ph_a in zip(before["phases"], after["phases"], strict=True):
        if "t_estop" not in ph_b:
            continue
        for key in (*STREAM_KEYS, "amr_cmd"):
            after_b = [
                bytes.fromhex(h)
                for t, k, h in before["samples"]
                if k == key and ph_b["t_estop"] <= t < ph_b["t1"]
            ]
            after_a = [
                bytes.fromhex(h)
                for t, k, h in after["samples"]
                if k == key and ph_a["t_estop"] <= t < ph_a["t1"]
            ]
            if key == "amr_cmd":
                trip[key] = {
                    "before": [wire.decode(key, d).command_type.name for d in after_b],
                    "after": [wire.decode(key, d).command_type.name for d in after_a],
                }
            else:
                hb = sorted({q_of(wire, key, d) for d in after_b})
                ha = sorted({q_of(wire, key, d) for d in after_a})
                trip[key] = {
                    "distinct_q_before": len(hb),
                    "distinct_q_after": len(ha),
                    "max_abs_diff": max_diff(hb[:1], ha[:1]) if hb and ha else None,
                }
    return {"rows": rows, "differences": differences, "trip": trip}


def max_diff(a: list[tuple[float, ...]], b: list[tuple[float, ...]]) -> float:
    return max(
        (abs(x - y) for va, vb in zip(a, b, strict=False) for x, y in zip(va, vb, strict=True)),
        default=0.0,
    )


def compare_stream(
    wire: Wire, key: str, sb: list[Any], sa: list[Any], lim: Any, diffs: list[str], phase: str
) -> dict[str, Any]:
    """Every byte but q identical (header, size, mode, kp, kd, dq, tau, padding); q: rests
    and final target equal, every q within limits."""

    def nonq(samples: list[Any]) -> set[bytes]:
        return {masked(d, wire.q_mask(key, d)) for _, d in samples}

    nb, na = nonq(sb), nonq(sa)
    same_nonq = nb == na
    if not same_nonq:
        diffs.append(
            f"{phase} {wire.names[key]}: bytes outside q differ: "
            f"before {[x.hex() for x in nb]} after {[x.hex() for x in na]}"
        )
    qb = [q_of(wire, key, d) for _, d in sb]
    qa = [q_of(wire, key, d) for _, d in sa]
    lower, upper = lim
    tol = 1e-6  # q is float32 on the wire: a value clipped at a float64 limit rounds past it
    inside = all(lower[i] - tol <= v <= upper[i] + tol for q in qb + qa for i, v in enumerate(q))
    # rests: held >= 0.2 s (100 periods); the other run must pass through each exactly
    rb, ra = plateaus(qb, 100), plateaus(qa, 100)
    seen_b, seen_a = set(qb), set(qa)
    missing = [r for r in rb if r not in seen_a] + [r for r in ra if r not in seen_b]
    rests_same = not missing
    final_same = bool(qb and qa and qb[-1] == qa[-1])
    turns = (reversals(qb), reversals(qa))
    if not final_same:
        diffs.append(
            f"{phase} {wire.names[key]}: final q differs by "
            f"{max_diff(qb[-1:], qa[-1:]) if qb and qa else 'n/a'} rad"
        )
    if missing:
        diffs.append(
            f"{phase} {wire.names[key]}: {len(missing)} rest(s) of one run never "
            f"commanded in the other"
        )
    # turns are reported, not judged: a move started while another still runs (parallel
    # nodes, a gesture's next keyframe) starts from wherever the last period sampled it
    same = same_nonq and final_same and rests_same and inside
    verdict = "identical" if same else "DIFFERS"
    if not same and same_nonq:
        verdict = "non-q bytes identical; trajectory differs"
    return {
        "verdict": verdict,
        "nonq_variants": f"{len(nb)}/{len(na)}",
        "sizes": sorted({len(d) for _, d in sb + sa}),
        "header": sorted({d[:4].hex() for _, d in sb + sa}),
        "rests": f"{len(rb)}/{len(ra)}" + ("" if rests_same else f" ({len(missing)} unmatched)"),
        "reversals": f"{turns[0]}/{turns[1]}",
        "final_same": final_same,
        "within_limits": inside,
        "masked": "q (timing: trajectory samples depend on when each period ran)",
    }


def compare_events(
    wire: Wire, key: str, sb: list[Any], sa: list[Any], diffs: list[str], phase: str
) -> dict[str, Any]:
    fields = tuple(MASKED.get(key, {}))

    def fielded(d: bytes) -> str:
        s = wire.decode(key, d)
        for f in fields:
            setattr(s, f, 0)
        return repr(s)

    fb = [fielded(d) for _, d in sb]
    fa = [fielded(d) for _, d in sa]
    mb = [masked(d, wire.mask(key, d, fields)).hex() for _, d in sb]
    ma = [masked(d, wire.mask(key, d, fields)).hex() for _, d in sa]
    same = fb == fa and mb == ma
    if not same:
        diffs.append(f"{phase} {wire.names[key]}: before {fb} after {fa}")
    return {
        "verdict": "identical" if same else "DIFFERS",
        "sizes": sorted({len(d) for _, d in sb + sa}),
        "header": sorted({d[:4].hex() for _, d in sb + sa}),
        "sequence": [fielded(d).split("(", 1)[1][:-1] for _, d in sb][:6],
        "masked": ", ".join(f"{f} ({why})" for f, why in MASKED.get(key, {}).items()) or "nothing",
    }


# -- the orchestration -------------------------------------------------------------------


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(MAIN), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def c_source(directory: Path) -> dict[str, bytes]:
    """The C extension's source files in ``directory`` by name: one ``_reflex.c``, or (since
    issue 33) its units and their header; empty where there is none."""
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.[ch]"))}


def worktree(rev: str) -> Path:
    sha = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    path = Path("/tmp") / f"wire-compare-{sha[:10]}"
    if not path.exists():
        git("worktree", "add", "--detach", str(path), sha)
    # the C reflex: built once in this checkout; the same source makes the same .so
    home = next((d for d in REFLEX_DIRS if c_source(path / d)), REFLEX_DIRS[0])
    src = c_source(path / home)
    built = sorted((MAIN / REFLEX_DIRS[0]).glob("_reflex*.so"))
    if built and src and src == c_source(MAIN / REFLEX_DIRS[0]):
        for so in built:
            shutil.copy2(so, path / home / so.name)
    else:
        print(f"{rev}: its C reflex differs from this checkout's: the Python fallback runs")
    return path


def in_tree(path: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(path), "CYCLONEDDS_URI": LOOPBACK}
    subprocess.run(
        [sys.executable, str(HERE), *args, "--root", str(path)], check=True, env=env, cwd=path
    )


def limits_table() -> dict[str, Any]:
    load_profile = layered("robots.profile", "profile").load_profile

    p = load_profile()
    return {f"{n}_cmd": tuple(a.tolist() for a in p.limits(n)) for n in p.topics}


def report(args: argparse.Namespace, revs: dict[str, str], result: dict[str, Any]) -> str:
    lines = [
        "# The Atom's wire before and after the robot seam",
        "",
        "Issue 12, item 2: the bytes on the wire for the shipped missions are unchanged.",
        "",
        "```",
        f".venv/bin/python tools/wire_compare.py --before {args.before} --after {args.after}",
        "```",
        "",
        f"- before: `{revs['before']}` ({args.before}), after: `{revs['after']}` ({args.after})",
        "- each revision in its own git worktree under /tmp, run with `PYTHONPATH=<worktree>`"
        " (the capture checks `executive.__file__`); the C reflex `.so` copied in (its C source"
        " identical)",
        f"- each: `atom-executive sim --amr-speed 3.0 --seed {args.seed}` and `atom-executive run`"
        " (executive/harness/stack.py), a separate participant with a raw reader (serialized bytes,"
        " `raw_take`) on every command topic; the shipped missions one after the other, then an"
        " e-stop while the base drives (`estop-soft` in the sim), release, reset",
        "- decoded for the comparison with stock cyclonedds (not the codec under test)",
        "",
        "## Per phase and topic",
        "",
        "| phase | topic | samples before/after | verdict | size, header | masked, and why |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        extra = ""
        if "rests" in r:
            extra = (
                f"; non-q byte images {r['nonq_variants']}, rests {r['rests']},"
                f" final q same: {r['final_same']}, within limits: {r['within_limits']},"
                f" direction changes {r['reversals']}"
            )
        lines.append(
            f"| {r['phase']} | `{r['topic']}` | {r['before']}/{r['after']} | {r['verdict']}{extra}"
            f" | {','.join(map(str, r['sizes']))} B, `{','.join(r['header'])}` | {r['masked']} |"
        )
    lines += ["", "## After the e-stop", ""]
    for key, t in result["trip"].items():
        lines.append(f"- `{key}`: {json.dumps(t)}")
    lines += [
        "",
        "## What is compared, and what is masked",
        "",
        "- joint streams (`rt/upper/cmd`, `rt/lower/cmd`, `rt/hands/cmd`): every sample with"
        " its `q` bytes zeroed must be one of the same byte images before and after (size,"
        " encapsulation header, `mode`, `kp`, `kd`, `dq`, `tau`, padding: all of them);"
        " `q` is masked because the trajectory samples in between depend on when each 2 ms"
        " period ran. `q` is judged as the same trajectory instead: the final `q` equal,"
        " every rest (a `q` held for 100 periods or more) of one run commanded exactly in"
        " the other, every `q` within the profile's limits (1e-6 rad: `q` is float32 on"
        " the wire, a value clipped at a float64 limit rounds past it). Direction changes"
        " (summed over joints, steps under 1e-6 rad ignored) are reported, not judged: a"
        " move started while another still runs starts wherever the last period left it.",
        "- one-shot commands: the sequence of decoded samples per topic with the masked"
        " fields zeroed, and the raw bytes with the masked fields' bytes zeroed (their"
        " positions found by re-serializing with different values), must be equal.",
        "- the golden file (`tests/fixtures/atom_wire_golden.json`): the before revision's"
        " own stream records (`_Stream`: a period's command and the reflex's hold) and"
        " command writer (`DdsCommands`, ids and clock fixed) for fixed inputs, three"
        " interface variants, both Atom profiles, taken raw from a reader;"
        " `tests/test_wire_compare.py` holds HEAD's `AtomStream`/`AtomCommands` to it byte"
        " for byte, nothing masked, in CI (`-m dds`, a few seconds).",
        "",
        "## Differences",
        "",
    ]
    lines += [f"- {d}" for d in result["differences"]] or ["None."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd")
    for name in ("capture", "golden"):
        s = sub.add_parser(name)
        s.add_argument("--root", type=Path, required=True)
        s.add_argument("--out", type=Path, required=True)
        s.add_argument("--seed", type=int, default=1)
    p.add_argument("--before", default="3d8faf2")
    p.add_argument("--after", default="HEAD")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--work", type=Path, default=Path("/tmp/wire-compare"))
    p.add_argument("--golden", type=Path, default=MAIN / "tests/fixtures/atom_wire_golden.json")
    p.add_argument("--report", type=Path, default=MAIN / "docs/wire-before-after.md")
    p.add_argument("--golden-only", action="store_true", help="only regenerate the fixture")
    p.add_argument("--keep", action="store_true", help="keep the worktrees")
    args = p.parse_args(argv)
    if args.cmd == "capture":
        capture(args.root, args.out, args.seed)
        return 0
    if args.cmd == "golden":
        golden(args.root, args.out)
        return 0

    args.work.mkdir(parents=True, exist_ok=True)
    revs = {
        "before": git("rev-parse", "--short", args.before),
        "after": git("rev-parse", "--short", args.after),
    }
    trees = {side: worktree(rev) for side, rev in (("before", args.before), ("after", args.after))}
    try:
        args.golden.parent.mkdir(parents=True, exist_ok=True)
        in_tree(trees["before"], "golden", "--out", str(args.golden))
        if args.golden_only:
            return 0
        caps = {}
        for side, path in trees.items():
            out = args.work / f"{side}.json"
            in_tree(path, "capture", "--out", str(out), "--seed", str(args.seed))
            caps[side] = json.loads(out.read_text())
        result = compare(caps["before"], caps["after"], limits_table())
        (args.work / "result.json").write_text(json.dumps(result, indent=1))
        text = report(args, revs, result)
        args.report.write_text(text)
        print(text)
        return 1 if result["differences"] else 0
    finally:
        if not args.keep:
            for path in trees.values():
                git("worktree", "remove", "--force", str(path))


if __name__ == "__main__":
    sys.exit(main())
