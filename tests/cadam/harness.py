"""Build ``cadam.c`` per Adam interface variant and run it against the executive's codec.

``build(variant, workdir)`` runs Debian's ``idlc -l c`` over ``idl/pnd_adam/common`` and the
variant's folder (same relative layout, so ``#include "../common/x.h"`` holds) and gcc over
``cadam.c`` with ``-DCADAM_SDK12`` for ``sdk-1.2``, ``-lddsc``. ``exchange(...)`` starts it on
a test's domain and, from Python, writes ``LowCmd_``/``HandCmd_`` records through OUR codec
(``raw_write``) and reads ``LowState_``/``HandState_`` through OUR codec (``raw_take`` +
``Codec.decode``), the way the executive's readers do. Flattening helpers turn both sides'
account into field path -> value, for an every-field comparison.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from cyclonedds.core import Policy, Qos
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from executive.robots.adam.interface import AdamInterface
from executive.robots.simkit import realtime
from executive.wire import dds
from executive.wire.codec import LENGTH_FIELD, raw_take, raw_write

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SOURCE = HERE / "cadam.c"
IDL_DIR = ROOT / "idl" / "pnd_adam"
FOLDERS = {"seed": "seed", "sdk-1.2": "sdk12"}  # variant -> idl/pnd_adam/<folder>
DEFINES = {"seed": [], "sdk-1.2": ["-DCADAM_SDK12"]}
SAMPLES = 7  # per topic and direction: the C side's status strings take 7 lengths

Flat = dict[str, Any]


def _run(cmd: Sequence[str | Path]) -> str:
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, timeout=120, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def build(variant: str, workdir: Path) -> Path:
    """idlc -l c over the variant's .idl files, gcc over cadam.c; the executable."""
    idlc = shutil.which("idlc") or "/usr/bin/idlc"
    gcc = shutil.which("gcc") or "gcc"
    sources: list[Path] = []
    includes: list[str] = []
    for folder in ("common", FOLDERS[variant]):
        outdir = workdir / folder
        outdir.mkdir(parents=True, exist_ok=True)
        for idl in sorted((IDL_DIR / folder).glob("*.idl")):
            _run([idlc, "-l", "c", "-o", outdir, idl])
            sources.append(outdir / f"{idl.stem}.c")
            includes.append(f'#include "{folder}/{idl.stem}.h"')
    (workdir / "cadam_idl.h").write_text(
        "\n".join(
            [
                f"/* Written by tests/cadam/harness.py for Adam interface variant {variant}. */",
                "#ifndef CADAM_IDL_H",
                "#define CADAM_IDL_H",
                *includes,
                "#endif",
                "",
            ]
        )
    )
    exe = workdir / "cadam"
    _run([
        gcc, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-I", workdir, *DEFINES[variant],
        "-o", exe, SOURCE, *sources, "-lddsc",
    ])  # fmt: skip
    return exe


def c_typeinfo(exe: Path) -> dict[str, dict[str, str]]:
    return {e["type"]: e for e in map(json.loads, _run([exe, "typeinfo"]).splitlines())}


# --- flattening -----------------------------------------------------------------------------


def flatten_record(x: Any, prefix: str = "") -> Flat:
    """A codec record as path -> value (strings decoded; sequence length fields left out:
    a sequence's length is how many elements the path names)."""
    out: Flat = {}
    names = x.dtype.names
    if names and np.shape(x):
        for i in range(np.shape(x)[0]):
            out.update(flatten_record(x[i], f"{prefix}[{i}]"))
    elif names:
        for n in names:
            if not n.endswith(LENGTH_FIELD.format("")):
                out.update(flatten_record(x[n], f"{prefix}.{n}" if prefix else n))
    elif np.shape(x):
        for i in range(np.shape(x)[0]):
            out[f"{prefix}[{i}]"] = np.asarray(x)[i].item()
    else:
        v = np.asarray(x).item()
        out[prefix] = v.decode("utf-8") if isinstance(v, bytes) else v
    return out


def flatten_json(x: Any, prefix: str = "") -> Flat:
    out: Flat = {}
    if isinstance(x, dict):
        for k, v in x.items():
            out.update(flatten_json(v, f"{prefix}.{k}" if prefix else k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out.update(flatten_json(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = x
    return out


def differences(c_side: Flat, ours: Flat) -> list[str]:
    """Every path where the two differ (floats compared as float32, exactly)."""
    problems = [f"{p}: only in C" for p in sorted(set(c_side) - set(ours))]
    problems += [f"{p}: only in the codec's record" for p in sorted(set(ours) - set(c_side))]
    for path in sorted(set(c_side) & set(ours)):
        a, b = c_side[path], ours[path]
        same = np.float32(a) == np.float32(b) if isinstance(b, float) else a == b
        if not same:
            problems.append(f"{path}: C {a!r}, codec {b!r}")
    return problems


# --- exchange -------------------------------------------------------------------------------


@dataclass
class Exchange:
    sent_by_c: dict[str, list[Any]]  # topic -> the C side's account of what it wrote
    received_by_c: dict[str, list[Any]]  # topic -> what the C side read
    decoded: dict[str, list[Any]]  # topic -> our codec's records of what C wrote
    raw: dict[str, list[bytes]]  # topic -> the bytes as they arrived
    done: dict[str, Any] | None
    stderr: str
    extra: dict[str, Any] = field(default_factory=dict)


def command_records(
    iface: AdamInterface, motors: int, rng: np.random.Generator
) -> dict[str, list[Any]]:
    """SAMPLES LowCmd_ and HandCmd_ records with random values in every field."""
    low, hand = iface.codec("LowCmd_", motors), iface.codec("HandCmd_")
    lows, hands = [], []
    for _ in range(SAMPLES):
        rec = low.zeros()
        m = rec["motor_cmd"]
        m["mode"] = rng.integers(0, 2, motors)
        for name in m.dtype.names or ():
            if name in ("mode", "reserve"):
                continue  # the floats: q dq tau kp kd, and ki in sdk-1.2
            m[name] = rng.uniform(-50, 50, motors).astype(np.float32)
        m["reserve"] = rng.integers(0, 2**32, motors, dtype=np.uint32)
        if "mode_pr" in (rec.dtype.names or ()):
            rec["mode_pr"] = rng.integers(0, 256)
        rec["reserve"] = rng.integers(0, 2**32, dtype=np.uint32)
        lows.append(rec)
        h = hand.zeros()
        h["position"] = rng.integers(0, 1001, 12)
        h["reserve"] = rng.integers(0, 2**32, dtype=np.uint32)
        hands.append(h)
    return {"rt/lowcmd": lows, "rt/handcmd": hands}


def exchange(
    exe: Path,
    iface: AdamInterface,
    domain: int,
    motors: int,
    commands: dict[str, list[Any]],
    *,
    c_motors: int | None = None,
    representation: str | None = None,
    timeout: float = 20.0,
) -> Exchange:
    """Run the C side (writing ``c_motors`` motor states, default ``motors``) and ours."""
    c_motors = motors if c_motors is None else c_motors
    out_path = exe.with_name(f"run-{domain}.out")
    err_path = exe.with_name(f"run-{domain}.err")
    args = [str(exe), "run", str(domain), str(c_motors), str(SAMPLES), str(timeout)]
    with out_path.open("w") as out_file, err_path.open("w") as err_file:
        proc = subprocess.Popen(
            realtime.command(args + ([representation] if representation else [])),
            stdin=subprocess.PIPE,
            stdout=out_file,  # a file, not a pipe nobody drains (tests/wire/c_interop.py)
            stderr=err_file,
            env=dict(os.environ),  # CYCLONEDDS_URI: the loopback config
        )
    codecs = {
        "rt/lowstate": iface.codec("LowState_", motors),
        "rt/handstate": iface.codec("HandState_"),
        "rt/lowcmd": iface.codec("LowCmd_", motors),
        "rt/handcmd": iface.codec("HandCmd_"),
    }
    raw: dict[str, list[bytes]] = {"rt/lowstate": [], "rt/handstate": []}
    try:
        with dds.open_participant(domain) as pp:
            qos = Qos(
                Policy.Reliability.Reliable(duration(seconds=1)),
                Policy.Durability.TransientLocal,
                Policy.History.KeepLast(SAMPLES),
                Policy.DurabilityService(
                    cleanup_delay=0,
                    history=Policy.History.KeepLast(SAMPLES),
                    max_samples=-1,
                    max_instances=-1,
                    max_samples_per_instance=-1,
                ),
                dds.ACCEPTED_REPRESENTATIONS,
            )
            keep: list[object] = []
            for topic, records in commands.items():
                cls = iface.topic_type(topic)
                writer: DataWriter[Any] = DataWriter(pp, Topic(pp, topic, cls), qos=qos)
                keep.append(writer)
                for rec in records:
                    raw_write(writer, codecs[topic].encode(rec))
            readers = {t: DataReader(pp, Topic(pp, t, iface.topic_type(t)), qos=qos) for t in raw}
            deadline = time.monotonic() + timeout
            while any(len(v) < SAMPLES for v in raw.values()) and time.monotonic() < deadline:
                time.sleep(0.02)
                for topic, reader in readers.items():
                    raw[topic] += raw_take(reader, 16)
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=timeout + 15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    sent: dict[str, list[Any]] = {"rt/lowstate": [], "rt/handstate": []}
    received: dict[str, list[Any]] = {"rt/lowcmd": [], "rt/handcmd": []}
    done = None
    for line in out_path.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "sent":
            sent[event["topic"]].append(event["sample"])
        elif event["event"] == "received":
            received[event["topic"]].append(event["sample"])
        elif event["event"] == "done":
            done = event
    decoded: dict[str, list[Any]] = {}
    if c_motors == motors:
        decoded = {t: [codecs[t].decode(d) for d in datas] for t, datas in raw.items()}
    return Exchange(sent, received, decoded, raw, done, err_path.read_text())
