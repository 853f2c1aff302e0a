"""The benchmarks' stand-in for the robot: state at the profile's rates, e-stops on demand.

The e-stop benchmark needs to know, from outside the executive, which joint command is
the *hold*. ``BenchRobot`` makes that exact: it publishes every state topic at the rate
the profile gives the firmware (upper and lower 500 Hz, hands 100 Hz, ...) with the
joints at a pose it chooses, and before each e-stop it moves the measured pose to a
*marker* (``marker(profile, topic, k)``: every joint a little off its base by an amount
that encodes the event number ``k``). ``MotionStreamer.hold()`` freezes every engaged
stream at the measured position, so the first command carrying marker ``k``'s positions
is event ``k``'s hold, bit for bit, while no trajectory command can carry them (a
mission's targets and its start pose are elsewhere). An independent subscriber matches
commands against the markers' bytes (``marker_bytes``).

Nothing here moves: the measured pose is whatever the bench sets. That is all the
executive's safety path needs (fresh state, a battery, no alarms), and it keeps the
robot's CPU use small next to the process measured.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
from cyclonedds.domain import DomainParticipant
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.robots.atom.interface import Interface
from executive.robots.atom.streams import STREAMS
from executive.robots.atom.topics import STATE_TOPICS, TOPICS, AtomIO
from executive.seam.profile import RobotProfile
from executive.wire import dds
from executive.wire.codec import Codec, raw_take
from executive.wire.robot_io import Side

MARKER_STEP = 1e-4  # rad per event number; 2000 distinct markers stay within 0.2 rad
MARKERS = 2000
BATTERY = 80.0  # percent: far from critical


def base_pose(profile: RobotProfile, topic: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Mid-range of every joint of ``topic``: where the robot stands between e-stops."""
    lower, upper = profile.limits(topic)
    return ((lower + upper) / 2).astype(np.float32).astype(np.float64)


def marker(profile: RobotProfile, topic: str, k: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    """The measured pose that marks event ``k`` (0 <= k < MARKERS) on ``topic``."""
    if not 0 <= k < MARKERS:
        raise ValueError(f"event number {k} outside 0..{MARKERS - 1}")
    base = base_pose(profile, topic)
    return (base + MARKER_STEP * (k + 1)).astype(np.float32).astype(np.float64)


def marker_table(profile: RobotProfile, interface: Interface, topic: str) -> dict[bytes, int]:
    """Event number by the bytes of the ``q`` array of ``topic``'s command that holds at
    its marker: state float -> the executive's float64 -> the command's float, as the
    hold copies them."""
    cmd_key, state_key, cmd_field, state_field = STREAMS[topic]
    state_q = Codec(getattr(interface, TOPICS[state_key].type_name)).dtype[state_field].base["q"]
    cmd_q = Codec(getattr(interface, TOPICS[cmd_key].type_name)).dtype[cmd_field].base["q"]
    lower, upper = profile.limits(topic)
    table = {}
    for k in range(MARKERS):
        q = marker(profile, topic, k).astype(state_q).astype(np.float64)
        table[np.clip(q, lower, upper).astype(cmd_q).tobytes()] = k
    return table


class BenchRobot:
    """Publishes the robot's state topics on ``participant`` until ``close()``."""

    def __init__(
        self,
        participant: DomainParticipant,
        profile: RobotProfile,
        interface: Interface | None = None,
        *,
        watch_commands: bool = True,
    ) -> None:
        self.profile = profile
        self.interface = interface or Interface()
        self.io = AtomIO(
            participant,
            self.interface,
            side=Side.ROBOT,
            topics={k: TOPICS[k] for k in STATE_TOPICS},
            records=STATE_TOPICS,
        )
        self.records = {k: self.io.codec(k).zeros() for k in STATE_TOPICS}
        for key in ("upper_state", "lower_state"):
            self.records[key]["bms_state"]["battery_level"] = BATTERY
        self.poses = {t: base_pose(profile, t) for t in STREAMS}
        for topic in STREAMS:
            self._fill(topic)
        self.flags = [n for n in self.records["emergency_state"].dtype.names or ()]
        base_hz = max(profile.state_hz.values())
        self.period = 1.0 / base_hz
        self.every = {k: max(1, round(base_hz / profile.state_hz[k])) for k in STATE_TOPICS}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-robot", daemon=True)
        # the joint command streams, read only when asked (no listener: no load)
        self._commands: dict[str, DataReader[Any]] = {}
        if watch_commands:
            for topic, (cmd_key, *_) in STREAMS.items():
                spec = TOPICS[cmd_key]
                t = Topic(participant, spec.name, getattr(self.interface, spec.type_name))
                self._commands[topic] = DataReader(participant, t, qos=dds.STATE_READER_QOS)

    def _fill(self, topic: str) -> None:
        _, state_key, _, state_field = STREAMS[topic]
        self.records[state_key][state_field]["q"] = self.poses[topic]

    def start(self) -> BenchRobot:
        self._thread.start()
        return self

    def _run(self) -> None:
        n = 0
        deadline = time.monotonic()
        while not self._stop.is_set():
            with self._lock:
                for key in STATE_TOPICS:
                    if n % self.every[key] == 0:
                        self.io.write_record(key, self.records[key])
            n += 1
            deadline += self.period
            delay = deadline - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                deadline = time.monotonic()

    def set_pose(self, poses: dict[str, np.ndarray[Any, np.dtype[np.float64]]]) -> None:
        """Measured positions of these streams from now on, published at once."""
        with self._lock:
            for topic, q in poses.items():
                self.poses[topic] = np.asarray(q, dtype=np.float64)
                self._fill(topic)
                self.io.write_record(STREAMS[topic][1], self.records[STREAMS[topic][1]])

    def set_base(self) -> None:
        self.set_pose({t: base_pose(self.profile, t) for t in STREAMS})

    def set_marker(self, k: int) -> None:
        self.set_pose({t: marker(self.profile, t, k) for t in STREAMS})

    def estop(self, on: bool, flag: str = "soft_emergency_triggered") -> int:
        """Set (or clear every) e-stop flag and publish it now; the ``time.monotonic_ns()``
        taken just before the sample was handed to DDS."""
        with self._lock:
            rec = self.records["emergency_state"]
            for name in self.flags:
                rec[name] = on and name == flag
            t = time.monotonic_ns()
            self.io.write_record("emergency_state", rec)
        return t

    def commands_seen(self) -> set[str]:
        """Streams with a joint command since the last call."""
        return {t for t, r in self._commands.items() if raw_take(r, 64)}

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
