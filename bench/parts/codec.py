"""Serialization of the hot wire types: the precompiled codec against stock cyclonedds-python.

    python -m bench.parts.codec

The joint commands (``UpperCmd_``, ``LowerCmd_``, ``HandsCmd_``) are encoded 1,500 times a
second by the motion streamer, and the joint states (``UpperState_``, ``LowerState_``,
``HandsState_``) decoded 1,100 times a second by the executive's readers. For each type:
the codec's encode (or decode) time, median and p99 over 20,000 calls, against the stock
binding's ``serialize()`` (or ``deserialize()``) over 1,000 calls, after checking that
both give the same bytes. Each call is timed alone with ``perf_counter_ns``, so the
figures include the clock's own cost (tens of ns).

States are decoded as a CycloneDDS 0.10 C firmware sends them (XCDR1 little-endian with
the padding count in the options, DESIGN.md 3.2), plus the e-stop and servo-error types
whose padding is not zero, and, for the joint states, the encodings a conforming peer may
also send (big-endian XCDR1, plain XCDR2): those decode through a converted copy.

The PND Adam's rows (``adam:<variant>``): ``LowCmd_`` (31 motors, a fixed-length sequence)
encoded, ``LowState_`` decoded as a C firmware sends it; in ``sdk-1.2`` ``LowState_`` holds
a string (``battery_data.status``, here 11 bytes), so its decode copies the numpy prefix
and walks the tail by hand, and its encode likewise.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from cyclonedds.idl._support import Endianness

from bench.harness import cli, figure_row, fmt, summary, table
from bench.parts import Part, sized
from executive.robots.adam.interface import AdamInterface
from executive.robots.atom.interface import Interface
from executive.wire.codec import Codec

COMMANDS = ("UpperCmd_", "LowerCmd_", "HandsCmd_")
STATES = ("UpperState_", "LowerState_", "HandsState_", "EmergencyState_", "MainNodesState_")
OTHER_ENCODINGS = ("UpperState_", "HandsState_")  # also decoded big-endian and as XCDR2
TARGET_US = 10.0
ADAM_MOTORS = 31  # the Pro
ADAM_CASES = [
    (variant, name, op)
    for variant in ("sdk-1.2", "seed")
    for name, op in (("LowCmd_", "encode"), ("LowState_", "decode C"), ("LowState_", "encode"))
] + [("sdk-1.2", "LowState_", "decode XCDR2")]


def _times(call: Callable[[], Any], n: int) -> list[float]:
    out = np.empty(n)
    for i in range(n):
        t = time.perf_counter_ns()
        call()
        out[i] = time.perf_counter_ns() - t
    return list(out / 1e3)  # us


def _measure(
    codec: Codec, rec: Any, op: str, fast_n: int, stock_n: int, label: str
) -> dict[str, Any]:
    """Codec against stock for one operation on one record (bytes checked equal first)."""
    name = codec.name
    sample = codec.to_sample(rec)
    data = codec.encode(rec)
    if data != sample.serialize(use_version_2=False):
        raise AssertionError(f"{name}: the codec's bytes differ from stock")
    if op == "encode":
        fast = _times(lambda: codec.encode(rec), fast_n)
        stock = _times(lambda: sample.serialize(), stock_n)
    else:
        if op == "decode C":  # as the C writer pads: options = padding count
            pad = -len(data) % 4
            data = data[:3] + bytes([pad]) + data[4:] + b"\0" * pad
        else:
            data = sample.serialize(
                endianness=Endianness.Big if op == "decode BE" else Endianness.Little,
                use_version_2=op == "decode XCDR2",
            )
        if codec.decode(data).tobytes() != rec.tobytes():
            raise AssertionError(f"{name}: {op} does not give the record back")
        t = codec.idl_type
        fast = _times(lambda: codec.decode(data), fast_n)
        stock = _times(lambda: t.deserialize(data), stock_n)
    f, s = summary(fast), summary(stock)
    return {
        "type": label,
        "op": op,
        "bytes": len(data),
        "codec_us": f,
        "stock_us": s,
        "speedup": s["median"] / f["median"],
    }


def run(fast_n: int = 20_000, stock_n: int = 1_000) -> dict[str, Any]:
    iface = Interface()
    results: dict[str, Any] = {}
    cases = [(name, "encode") for name in COMMANDS] + [(name, "decode C") for name in STATES]
    cases += [(n, op) for n in OTHER_ENCODINGS for op in ("decode BE", "decode XCDR2")]
    for name, op in cases:
        codec = Codec(getattr(iface, name))
        rec = codec.zeros()
        motors = next((n for n in rec.dtype.names or () if "motor" in n or n == "hands"), None)
        if motors is not None:
            rec[motors]["q"] = np.linspace(-0.5, 0.5, rec[motors].shape[0])
        results[f"{name} {op}"] = _measure(codec, rec, op, fast_n, stock_n, name)
    for variant, name, op in ADAM_CASES:
        codec = AdamInterface(variant).codec(name, ADAM_MOTORS)
        rec = codec.zeros()
        seq = "motor_cmd" if name == "LowCmd_" else "motor_state"
        rec[seq]["q"] = np.linspace(-0.5, 0.5, ADAM_MOTORS)
        rec[seq]["mode"] = 1
        if "battery_data" in (rec.dtype.names or ()):
            rec["battery_data"]["status"] = b"discharging"
        label = f"adam:{variant} {name}"
        results[f"{label} {op}"] = _measure(codec, rec, op, fast_n, stock_n, label)
    return results


def report(results: dict[str, Any]) -> str:
    rows = [
        [
            r.get("type", name.split()[0]),
            r["op"],
            str(r["bytes"]),
            fmt(r["codec_us"]["median"], 2),
            fmt(r["codec_us"]["p99"], 2),
            fmt(r["stock_us"]["median"], 1),
            fmt(r["stock_us"]["p99"], 1),
            f"{r['speedup']:.0f}x",
        ]
        for name, r in results.items()
    ]
    return table(
        (
            "type",
            "op",
            "bytes",
            "codec med us",
            "codec p99 us",
            "stock med us",
            "stock p99 us",
            "x",
        ),
        rows,
    )


def rows(c: dict[str, Any]) -> list[list[str]]:
    """The summary's rows: each type's codec time, the commands' against their target."""
    out = []
    for name, r in c.items():
        is_cmd = name in COMMANDS
        target = "<= 10 us" if is_cmd else ""
        row = figure_row(f"{r['op']} {name} (us)", f"stock {fmt(r['stock_us']['median'], 1)} us", r["codec_us"], target, r["codec_us"]["p99"] <= TARGET_US if is_cmd else None, digits=2)  # fmt: skip
        out.append(row)
    return out


def run_part(options: argparse.Namespace, earlier: Mapping[str, Any]) -> dict[str, Any]:
    return run(*sized(options, (20_000, 1000), (5000, 300), (200, 20)))


PART = Part("codec", run_part, report, rows)


def main() -> int:
    return cli(__doc__, lambda args: run(), report)


if __name__ == "__main__":
    sys.exit(main())
