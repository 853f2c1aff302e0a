"""The simulated PND Adam as a DDS node: ``rt/lowcmd``/``rt/handcmd`` in, state out, faults.

One scheduler thread (the caller's, in ``run``; ``executive.robots.atom.sim.scheduler``) owns the robot
model and runs every periodic job; before each wake-up it takes the command topics off
their readers as raw bytes (polling, as the simulated Atom does) and applies the fault
requests that arrived from stdin or DDS. So the model has a single writer and needs no locks.

What the robot obeys (seed 002, the vendor SDK examples; robots.md 1.1, 1.3):

- ``rt/lowcmd`` carries every body motor: it is applied only if the sequence holds exactly
  the profile's N motors and every ``mode`` is 1 (enable); otherwise it is rejected whole
  and counted (``wrong_length``, ``bad_mode``). Then as the simulated Atom's joints
  (``executive.robots.atom.sim.joints``): non-finite numbers, q outside the profile's limits, kp <= 0 or
  kd < 0 reject it too. The body PD-tracks the last applied command; there is no control
  authority, FSM or e-stop to honour (the Adam's DDS interface has none).
- ``rt/handcmd``: 12 positions 0..1000 (1000 open); a value over 1000 rejects the command.
  The fingers move toward the targets at the profile's hand cap (counts/s, x speed scale).
- a servo error (fault) sets ``MotorState_.state`` of its joint and stops that joint.
- ``rt/lowstate``/``rt/handstate`` go silent under a dropout fault; ``battery_data``
  (sdk-1.2) reports the battery, or the level a fault forces.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt
import structlog
from cyclonedds._clayer import ddspy_take
from cyclonedds.core import DDSException
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from executive.robots.adam.interface import DEFAULT_VARIANT, HAND_RANGE, AdamInterface
from executive.robots.adam.sim import faults as adam_faults
from executive.robots.adam.sim.record import BODY_TOPIC, HAND_TOPIC
from executive.robots.adam.sim.topics import (
    FAULT_QOS,
    FAULT_TOPIC,
    STATUS_QOS,
    STATUS_TOPIC,
    ActiveFault_,
    AdamCounters_,
    AdamStatus_,
    Fault_,
)
from executive.robots.adam.sim.wire import BodyWire, HandWire
from executive.robots.atom.sim.battery import Battery
from executive.robots.atom.sim.joints import JointGroup, Verdict
from executive.robots.atom.sim.record import Recorder
from executive.robots.atom.sim.scheduler import Scheduler
from executive.robots.atom.sim.topics import types as atom_sim
from executive.robots.profile import RobotProfile, load_profile
from executive.wire import dds
from executive.wire.codec import DecodeError, raw_write

log = structlog.get_logger(__name__)

_RECENT_REQUESTS = 32
_ACTIONS = {"FAULT_SET": "set", "FAULT_CLEAR": "clear", "FAULT_CLEAR_ALL": "clear_all"}
_LOW_BATTERY = 20.0  # percent: battery_data.status says "low" below it
_PACK_AH = 20.0  # for wh_accumulated only


@dataclass(frozen=True)
class AdamSimConfig:
    """Everything the simulated Adam can be told at start-up, with defaults for all of it."""

    profile: str = "adam-pro"  # built-in profile name or path (robot: adam)
    interface: str = DEFAULT_VARIANT  # "sdk-1.2" or "seed"
    seed: int = 0
    rates: Mapping[str, float] = field(default_factory=dict)  # low_state/hand_state -> Hz
    status_hz: float = 5.0
    speed_scale: float = 2.0  # joint speed limit = this x the profile's velocity cap
    initial_jitter: float = 0.005  # rad, seeded offset of the start pose
    noise: float = 0.0  # rad, standard deviation of seeded measurement noise
    battery: float = 85.0  # percent at start
    battery_drain: float = 0.5  # percent per minute
    faults: tuple[adam_faults.FaultSpec, ...] = ()  # active from start
    record: Path | None = (
        None  # JSON lines of every command received (executive.robots.atom.sim.record)
    )
    stdin: TextIO | None = None  # fault requests, one per line (faults.parse_line)


@dataclass
class Counters:
    """Commands received on one topic, by what became of them (``AdamCounters_``)."""

    received: int = 0
    applied: int = 0
    wrong_length: int = 0
    bad_mode: int = 0
    non_finite: int = 0
    out_of_range: int = 0
    bad_gains: int = 0
    undecodable: int = 0

    def count(self, result: str) -> None:
        self.received += 1
        setattr(self, result, getattr(self, result) + 1)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class Hands:
    """The 12 finger positions (counts), moving toward their targets at a bounded rate."""

    def __init__(self, profile: RobotProfile, speed_scale: float) -> None:
        joints = profile.topic_joints("hands")
        self.names = [j.name for j in joints]
        self.lower, self.upper = profile.limits("hands")
        self.rate = speed_scale * np.array([j.max_velocity for j in joints])
        self.position: npt.NDArray[np.float64] = self.upper.copy()  # open
        self.target: npt.NDArray[np.float64] | None = None

    def command(self, positions: npt.NDArray[np.uint32]) -> None:
        self.target = np.clip(positions.astype(np.float64), self.lower, self.upper)

    def step(self, dt: float) -> None:
        if self.target is None:
            return
        step = self.rate * dt
        self.position += np.clip(self.target - self.position, -step, step)


class _RawReader:
    """A command topic read by polling, as raw bytes with source timestamps."""

    def __init__(self, participant: DomainParticipant, name: str, idl_type: Any) -> None:
        self.name = name
        self.reader: DataReader[Any] = DataReader(
            participant, Topic(participant, name, idl_type), qos=dds.EVENT_READER_QOS
        )

    def take(self, n: int = 64) -> list[tuple[bytes, int]]:
        ret = ddspy_take(self.reader._ref, n)
        if isinstance(ret, int):
            raise DDSException(ret, f"take on {self.name}")
        return [(data, info.source_timestamp) for data, info in ret if info.valid_data]


class SimAdam:
    """The simulated Adam on one participant. ``run()`` blocks until ``stop()``."""

    def __init__(
        self,
        participant: DomainParticipant,
        config: AdamSimConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = cfg = config or AdamSimConfig()
        self.clock = clock
        self.started = clock()
        self.profile = load_profile(cfg.profile)
        if self.profile.robot != "adam":
            raise ValueError(
                f"profile {self.profile.name!r} is for robot {self.profile.robot!r}, not adam"
            )
        self.iface = AdamInterface(cfg.interface)
        self.rates = self._rates(cfg.rates)
        self.joint_names = list(self.profile.topics["body"])
        self.motors = len(self.joint_names)
        self.body_wire = BodyWire(self.iface, self.motors)
        self.hand_wire = HandWire(self.iface)
        self.has_battery = self.body_wire.sdk12

        self.body = JointGroup(
            self.profile,
            "body",
            np.random.default_rng(cfg.seed),
            speed_scale=cfg.speed_scale,
            initial_jitter=cfg.initial_jitter,
            noise=cfg.noise,
        )
        self.hands = Hands(self.profile, cfg.speed_scale)
        self.counters = {"body": Counters(), "hands": Counters()}
        self.battery = Battery(level=cfg.battery, drain_per_min=cfg.battery_drain)
        self.faults = adam_faults.FaultBook()
        self._wh = 0.0
        self._tick = 0

        self._low = self.body_wire.state_record()
        motors = self._low["motor_state"]
        motors["mode"] = self.profile.motor_mode
        self._q, self._dq, self._ddq = motors["q"], motors["dq"], motors["ddq"]
        self._tau, self._state = motors["tau_est"], motors["state"]
        self._hand_rec = self.hand_wire.state.zeros()

        self._open_topics(participant)
        self.published = {"low_state": 0, "hand_state": 0}
        self._applied_requests: deque[int] = deque(maxlen=_RECENT_REQUESTS)
        self._rejected_requests: deque[int] = deque(maxlen=_RECENT_REQUESTS)
        self._last_rejection = ""
        self._status_dirty = True
        self._reject_logged: set[tuple[str, str]] = set()
        self._stdin_lines: deque[str] = deque()

        self.recorder: Recorder | None = None
        if cfg.record is not None:
            self.recorder = Recorder(cfg.record, self._header(), self.started)
        for spec in cfg.faults:
            self.apply_fault("set", spec, self.started)
        if cfg.stdin is not None:
            threading.Thread(
                target=self._read_stdin, args=(cfg.stdin,), name="adam-sim-stdin", daemon=True
            ).start()

        self.scheduler = Scheduler(before_each=self._drain, clock=clock)
        self.scheduler.add("low_state", self.rates["low_state"], self._publish_low_state)
        self.scheduler.add("hand_state", self.rates["hand_state"], self._publish_hand_state)
        self.scheduler.add("faults", 20.0, self._poll_faults)
        self.scheduler.add("status", cfg.status_hz, self._publish_status)
        if self.recorder is not None:
            self.scheduler.add("record", 10.0, lambda now, n: self._flush_record())
        log.info(
            "sim ready",
            robot="adam",
            profile=self.profile.name,
            motors=self.motors,
            interface=self.iface.variant,
            seed=cfg.seed,
            rates=self.rates,
            faults=[f.describe() for f in cfg.faults],
            record=str(cfg.record) if cfg.record else None,
        )

    def _open_topics(self, participant: DomainParticipant) -> None:
        """The robot's topics (state out, commands in) and the sim's own (faults, status)."""
        qos = dds.STATE_WRITER_QOS
        self._low_writer: DataWriter[Any] = DataWriter(
            participant, Topic(participant, "rt/lowstate", self.iface.LowState_), qos=qos
        )
        self._hand_writer: DataWriter[Any] = DataWriter(
            participant, Topic(participant, "rt/handstate", self.iface.HandState_), qos=qos
        )
        self._body_reader = _RawReader(participant, "rt/lowcmd", self.iface.LowCmd_)
        self._hand_reader = _RawReader(participant, "rt/handcmd", self.iface.HandCmd_)
        self._fault_reader: DataReader[Any] = DataReader(
            participant, Topic(participant, FAULT_TOPIC, Fault_), qos=FAULT_QOS
        )
        self._status_writer: DataWriter[Any] = DataWriter(
            participant, Topic(participant, STATUS_TOPIC, AdamStatus_), qos=STATUS_QOS
        )

    def _rates(self, overrides: Mapping[str, float]) -> dict[str, float]:
        rates = dict(self.profile.state_hz)
        for key, hz in overrides.items():
            source = adam_faults.source_key(key)
            if not (math.isfinite(hz) and hz > 0):
                raise ValueError(f"rate of {source} must be > 0 Hz, got {hz}")
            rates[source] = hz
        return rates

    def _header(self) -> dict[str, Any]:
        return {
            "robot": "adam",
            "pid": os.getpid(),
            "seed": self.config.seed,
            "profile": self.profile.name,
            "interface": self.iface.variant,
            "motors": self.motors,
            "streams": {BODY_TOPIC: self.joint_names, HAND_TOPIC: self.hands.names},
        }

    # -- running --------------------------------------------------------------------------

    def run(self) -> None:
        """Publish and obey until ``stop()``."""
        self.scheduler.run()

    def stop(self) -> None:
        """Make ``run`` return; safe to call from a signal handler."""
        self.scheduler.stop()

    def close(self) -> None:
        """Write the final counters and close the record (call after ``run`` returns)."""
        now = self.clock()
        counters = {name: c.as_dict() for name, c in self.counters.items()}
        if self.recorder is not None:
            self.recorder.note(now, "counters", counters)
            self.recorder.close()
            self.recorder = None
        log.info(
            "sim stopped",
            uptime=round(now - self.started, 3),
            counters=counters,
            published=self.published,
            scheduler=self.scheduler.stats(),
        )

    # -- commands in ----------------------------------------------------------------------

    def _drain(self, now: float) -> None:
        while self._stdin_lines:
            self._on_stdin(self._stdin_lines.popleft(), now)
        offset = None
        for reader, handle in (
            (self._body_reader, self._on_body_command),
            (self._hand_reader, self._on_hand_command),
        ):
            taken = reader.take()
            if not taken:
                continue
            if offset is None:  # source timestamps are wall-clock ns: map them to monotonic
                offset = time.time() - time.monotonic()
            for data, source_ns in taken:
                handle(now, source_ns * 1e-9 - offset, data)

    def _reject(self, stream: str, result: str, detail: str) -> None:
        if (stream, result) not in self._reject_logged:  # once per kind: 400 Hz streams
            self._reject_logged.add((stream, result))
            log.warning("command rejected", stream=stream, reason=result, detail=detail)

    def _on_body_command(self, t: float, sent: float, data: bytes) -> None:
        counters = self.counters["body"]
        try:
            cmd = self.body_wire.decode_command(data)
        except DecodeError as e:
            counters.count("undecodable")
            self._reject("body", "undecodable", str(e))
            return
        if cmd.floats is None or cmd.modes is None:
            counters.count("wrong_length")
            self._reject("body", "wrong_length", f"{cmd.count} motors, the profile has N")
            if self.recorder is not None:
                fields = {"motors": cmd.count, "expected": self.motors, "mode_pr": cmd.mode_pr}
                self.recorder.event(t, BODY_TOPIC, fields, "wrong_length")
            return
        if (cmd.modes != 1).any():
            result = "bad_mode"
            self._reject("body", result, f"modes {sorted(set(cmd.modes.tolist()))}, need 1")
        else:
            verdict = self.body.check(cmd.floats)
            result = verdict.value
            if verdict is Verdict.APPLIED:
                self.body.command(cmd.floats)
            else:
                self._reject("body", result, "")
        counters.count(result)
        if self.recorder is not None:
            self.recorder.stream(t, sent, BODY_TOPIC, cmd.floats, self.body.q, result)

    def _on_hand_command(self, t: float, sent: float, data: bytes) -> None:
        counters = self.counters["hands"]
        try:
            positions = self.hand_wire.decode_command(data)
        except DecodeError as e:
            counters.count("undecodable")
            self._reject("hands", "undecodable", str(e))
            return
        if (positions > HAND_RANGE[1]).any():
            result = "out_of_range"
            self._reject("hands", result, f"positions {positions.tolist()}, 0..{HAND_RANGE[1]}")
        else:
            result = "applied"
            self.hands.command(positions)
        counters.count(result)
        if self.recorder is not None:
            # the record's stream format: (n, 5) q, dq, tau, kp, kd; fingers have q only
            cmd = np.zeros((len(positions), 5), dtype=np.float32)
            cmd[:, 0] = positions
            cmd[:, 3] = 1.0
            self.recorder.stream(t, sent, HAND_TOPIC, cmd, self.hands.position, result)

    # -- faults ---------------------------------------------------------------------------

    def apply_fault(
        self, action: str, spec: adam_faults.FaultSpec, now: float, source: str = "cli"
    ) -> None:
        """Set, clear or clear all (``action``); FaultError if the spec is invalid."""
        if action == "set":
            spec = adam_faults.validate(spec, joints=self.joint_names, battery=self.has_battery)
            self.faults.set(spec, now)
            self._note_fault(now, "set", spec, source)
        elif action == "clear":
            target = (
                adam_faults.normalise_target(
                    adam_faults.canonical_kind(spec.kind), spec.target, self.joint_names
                )
                if spec.target
                else ""
            )
            for gone in self.faults.clear(spec.kind, target):
                self._note_fault(now, "clear", gone, source)
        elif action == "clear_all":
            for gone in self.faults.clear_all():
                self._note_fault(now, "clear", gone, source)
        else:
            raise adam_faults.FaultError(f"unknown fault action {action!r}")
        self._sync_faults()

    def _note_fault(
        self, now: float, action: str, spec: adam_faults.FaultSpec, source: str
    ) -> None:
        info = {
            "action": action,
            "kind": spec.kind,
            "target": spec.target,
            "value": spec.value,
            "duration": spec.duration,
        }
        log.warning("fault", source=source, **info)
        if self.recorder is not None:
            self.recorder.note(now, "fault", {**info, "source": source})

    def _sync_faults(self) -> None:
        """Make the model agree with the fault book after any change to it."""
        codes = adam_faults.servo_codes(self.faults)
        self._state[:] = [codes.get(name, 0) for name in self.joint_names]
        self.body.freeze(np.array([n in codes for n in self.joint_names], dtype=bool))
        level = self.faults.get("battery-level")
        self.battery.override = None if level is None else level.value
        self._status_dirty = True

    def _read_stdin(self, stream: TextIO) -> None:
        """(Its own thread.) Queue each line for the scheduler thread; EOF ends the thread."""
        for line in stream:
            self._stdin_lines.append(line)

    def _on_stdin(self, line: str, now: float) -> None:
        try:
            parsed = adam_faults.parse_line(line)
            if parsed is not None:
                self.apply_fault(*parsed, now, source="stdin")
        except adam_faults.FaultError as e:
            log.warning("stdin fault request refused", line=line.strip(), reason=str(e))
            print(f"refused: {e}", file=sys.stderr)  # noqa: T201 - the person typing reads it

    def _poll_faults(self, now: float, periods: int) -> None:
        for sample in self._fault_reader.take(N=16):
            if isinstance(sample, Fault_):  # not the InvalidSample of a writer leaving
                self._on_fault_request(sample, now)
        expired = self.faults.expire(now)
        for spec in expired:
            self._note_fault(now, "expire", spec, source="duration")
        if expired:
            self._sync_faults()
        if self._status_dirty:
            self._publish_status(now, 0)

    def _on_fault_request(self, sample: Any, now: float) -> None:
        rid = int(sample.request_id)
        if rid in self._applied_requests or rid in self._rejected_requests:
            return  # a resend of a request already handled
        action = _ACTIONS[sample.action.name]
        try:
            spec = adam_faults.FaultSpec(
                adam_faults.canonical_kind(sample.kind.name),
                str(sample.target),
                float(sample.value),
                float(sample.duration),
            )
            self.apply_fault(action, spec, now, source="dds")
        except adam_faults.FaultError as e:
            self._rejected_requests.append(rid)
            self._last_rejection = f"{rid}: {e}"
            log.warning("fault request refused", request_id=rid, reason=str(e))
        else:
            self._applied_requests.append(rid)
        self._status_dirty = True

    # -- state out ------------------------------------------------------------------------

    def _dropped(self, source: str) -> bool:
        return self.faults.has("state-dropout", "") or self.faults.has("state-dropout", source)

    def _publish_low_state(self, now: float, periods: int) -> None:
        dt = periods / self.rates["low_state"]
        body = self.body
        body.step(dt)
        self._q[:] = body.measured()
        self._dq[:] = body.dq
        self._ddq[:] = body.ddq
        self._tau[:] = body.tau
        rec = self._low
        if self.body_wire.sdk12:
            self._tick = (self._tick + 1) & 0xFFFFFFFF
            rec["tick"] = self._tick
            self._fill_battery(rec["battery_data"], dt)
        if not self._dropped("low_state"):
            raw_write(self._low_writer, self.body_wire.encode_state(rec))
            self.published["low_state"] += 1

    def _fill_battery(self, data: Any, dt: float) -> None:
        battery = self.battery
        battery.step(dt, charging=False)
        volts = battery.pack_voltage
        amps = 3.5
        self._wh += volts * amps * dt / 3600.0
        data["timestamp_ms"] = int(time.time() * 1000)
        data["voltage"] = volts
        data["current"] = amps
        data["power"] = volts * amps
        data["wh_accumulated"] = self._wh
        self.body_wire.set_status("low" if battery.reading < _LOW_BATTERY else "normal")

    def _publish_hand_state(self, now: float, periods: int) -> None:
        self.hands.step(periods / self.rates["hand_state"])
        self._hand_rec["position"][:] = np.rint(self.hands.position)
        if not self._dropped("hand_state"):
            raw_write(self._hand_writer, self.hand_wire.encode_state(self._hand_rec))
            self.published["hand_state"] += 1

    def status(self, now: float) -> AdamStatus_:
        """The ``AdamStatus_`` sample describing the sim now."""
        fields: dict[str, Any] = dict(  # the IDL sequences take lists
            pid=os.getpid(),
            seed=self.config.seed,
            variant=self.iface.variant,
            profile=self.profile.name,
            motors=self.motors,
            monotonic=now,
            applied_requests=list(self._applied_requests),
            rejected_requests=list(self._rejected_requests),
            last_rejection=self._last_rejection,
            faults=[
                ActiveFault_(
                    kind=atom_sim.FaultKind[adam_faults.KIND_NAMES[f.spec.kind]],
                    target=f.spec.target,
                    value=f.spec.value,
                    remaining=f.remaining(now),
                )
                for f in self.faults.active()
            ],
            body=AdamCounters_(**self.counters["body"].as_dict()),
            hands=AdamCounters_(**self.counters["hands"].as_dict()),
        )
        return AdamStatus_(**fields)

    def _publish_status(self, now: float, periods: int) -> None:
        self._status_writer.write(self.status(now))
        self._status_dirty = False

    def _flush_record(self) -> None:
        if self.recorder is not None:
            self.recorder.flush()


__all__ = ["AdamSimConfig", "Counters", "Hands", "SimAdam"]
