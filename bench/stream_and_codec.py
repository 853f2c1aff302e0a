"""Benchmarks for issue 3's figures: command serialization and the 500 Hz stream's lateness.

Run: ``make bench-stream`` (loopback DDS config). Prints medians and p99; nothing here
asserts a time (timed assertions belong in benchmarks, not unit tests).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from executive import dds
from executive.motion.streamer import STATE_KEYS, MotionStreamer
from executive.motion.trajectory import plan
from executive.profile import load_profile
from executive.robot_io import RobotIO, Side
from executive.wire import Interface
from executive.wire.codec import Codec


def serialization() -> None:
    iface = Interface()
    print(f"{'type':12s} {'codec med':>10s} {'codec p99':>10s} {'stock med':>10s} {'ratio':>6s}")
    for name in ("UpperCmd_", "LowerCmd_", "HandsCmd_"):
        codec = Codec(getattr(iface, name))
        rec = codec.zeros()
        motors = rec[next(iter(rec.dtype.names))]
        motors["q"] = np.linspace(-0.5, 0.5, motors.shape[0])
        sample = codec.to_sample(rec)
        assert codec.encode(rec) == sample.serialize()
        fast = np.empty(20000)
        for i in range(len(fast)):
            t = time.perf_counter_ns()
            codec.encode(rec)
            fast[i] = time.perf_counter_ns() - t
        stock = np.empty(1000)
        for i in range(len(stock)):
            t = time.perf_counter_ns()
            sample.serialize()
            stock[i] = time.perf_counter_ns() - t
        fm, fp, sm = np.median(fast) / 1e3, np.percentile(fast, 99) / 1e3, np.median(stock) / 1e3
        print(f"{name:12s} {fm:9.2f}us {fp:9.2f}us {sm:9.1f}us {sm / fm:6.0f}x")


def stream(seconds: float = 10.0) -> None:
    profile = load_profile()
    with dds.open_participant() as p1, dds.open_participant() as p2:
        robot = RobotIO(p1, side=Side.ROBOT, records=["upper_cmd", "lower_cmd", "hands_cmd"])
        ctl = RobotIO(p2, side=Side.CONTROLLER, records=STATE_KEYS)
        for key in ("upper_state", "lower_state", "hands_state"):
            rec = robot.codec(key).zeros()
            for _ in range(200):
                robot.write_record(key, rec)
                if ctl.readers[key].wait_for(lambda s: True, 0.01) is not None:
                    break
        streamer = MotionStreamer(ctl, profile, max_state_age=1e9)
        names = profile.expand(["all"])
        measured = streamer.measured_joints(names)
        targets = {
            n: float(np.clip(0.2, profile.joints[n].lower, profile.joints[n].upper)) for n in names
        }
        proc0 = time.process_time()
        streamer.start()
        streamer.submit(plan(profile, targets, measured, time.monotonic(), duration=seconds))
        time.sleep(seconds)
        streamer.stop()
        proc = time.process_time() - proc0
        late = streamer.stats.recent_lateness() * 1e3
        print(
            f"500 Hz, upper+lower+hands engaged, {seconds:.0f} s: periods {streamer.stats.periods}, "
            f"missed {streamer.stats.missed}, lateness median {np.median(late):.3f} ms, "
            f"p99 {np.percentile(late, 99):.3f} ms, max {late.max():.3f} ms, "
            f"publish work {streamer.stats.busy / seconds * 100:.1f} % of a core, "
            f"process CPU (incl. the robot side's DDS receive) {proc / seconds * 100:.1f} %"
        )


if __name__ == "__main__":
    lease = dds.lease_domain()
    os.environ.setdefault("ATOM_DDS_DOMAIN", str(lease.domain))
    serialization()
    stream(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0)
