"""The simulated PND Adam as a DDS node: ``rt/lowcmd``/``rt/handcmd`` in, state out, faults.

One scheduler thread (the caller's, in ``run``; ``executive.robots.simkit.scheduler``) owns
the robot model and runs every periodic job; before each wake-up it takes the command topics
off their readers as raw bytes (polling) and applies the fault requests that arrived from
stdin or DDS. So the model has a single writer and needs no locks. Fault requests, the
status, the record and the scheduler's life are the kit's (``executive.robots.simkit.node``);
this module is the Adam.

What the robot obeys (seed 002, the vendor SDK examples; robots.md 1.1, 1.3):

- ``rt/lowcmd`` carries every body motor: it is applied only if the sequence holds exactly
  the profile's N motors and every ``mode`` is 1 (enable); otherwise it is rejected whole
  and counted (``wrong_length``, ``bad_mode``). Then as the kit's joints
  (``executive.robots.simkit.joints``): non-finite numbers, q outside the profile's limits,
  kp <= 0 or kd < 0 reject it too. The body PD-tracks the last applied command; there is no control
  authority, FSM or e-stop to honour (the Adam's DDS interface has none).
- ``rt/handcmd``: 12 positions 0..1000 (1000 open); a value over 1000 rejects the command.
  The fingers move toward the targets at the profile's hand cap (counts/s, x speed scale).
- a servo error (fault) sets ``MotorState_.state`` of its joint and stops that joint.
- ``rt/lowstate``/``rt/handstate`` go silent under a dropout fault; ``battery_data``
  (sdk-1.2) reports the battery, or the level a fault forces.

The participant may be the in-process wire of simulated time (``executive.wire.loop``) and
``clock`` a simulated one (``executive.robots.adam.lockstep``): the same node, its jobs run
by the scenario engine (``Scheduler.run_due``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt
import structlog
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter

from executive.robots.adam.interface import DEFAULT_VARIANT, HAND_RANGE, AdamInterface
from executive.robots.adam.sim import faults as adam_faults
from executive.robots.adam.sim.record import BODY_TOPIC, HAND_TOPIC
from executive.robots.adam.sim.topics import FAULT_TOPIC, STATUS_TOPIC, AdamCounters_, AdamStatus_
from executive.robots.adam.sim.wire import BodyWire, HandWire
from executive.robots.simkit import joints
from executive.robots.simkit.battery import Battery
from executive.robots.simkit.faults import FaultError, FaultSpec
from executive.robots.simkit.joints import JointGroup, Verdict
from executive.robots.simkit.node import RawReader, SimNode, state_rates
from executive.robots.simkit.scheduler import Scheduler
from executive.seam.profile import RobotProfile, load_profile
from executive.wire import dds, loop
from executive.wire.codec import DecodeError, raw_write
from executive.wire.loop import LoopBus

log = structlog.get_logger(__name__)

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
    faults: tuple[FaultSpec, ...] = ()  # active from start
    record: Path | None = None  # JSON lines of every command received (simkit.record)
    stdin: TextIO | None = None  # fault requests, one per line (faults.parse_line)


@dataclass
class Counters(joints.Counters):
    """Commands received on one topic, by what became of them (``AdamCounters_``)."""

    wrong_length: int = 0
    bad_mode: int = 0
    non_finite: int = 0
    out_of_range: int = 0
    bad_gains: int = 0
    undecodable: int = 0


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


class SimAdam(SimNode):
    """The simulated Adam on one participant. ``run()`` blocks until ``stop()``."""

    def __init__(
        self,
        participant: DomainParticipant | LoopBus,
        config: AdamSimConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(clock)
        self.config = cfg = config or AdamSimConfig()
        self.profile = load_profile(cfg.profile)
        if self.profile.robot != "adam":
            raise ValueError(
                f"profile {self.profile.name!r} is for robot {self.profile.robot!r}, not adam"
            )
        self.iface = AdamInterface(cfg.interface)
        self.rates = state_rates(self.profile.state_hz, cfg.rates, adam_faults.source_key)
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
        self._reject_logged: set[tuple[str, str]] = set()
        self._stdin_lines: deque[str] = deque()

        self._start_record(cfg.record, self._header(), cfg.faults)
        if cfg.stdin is not None:
            threading.Thread(
                target=self._read_stdin, args=(cfg.stdin,), name="adam-sim-stdin", daemon=True
            ).start()

        self.scheduler = Scheduler(before_each=self._drain, clock=clock)
        self.scheduler.add("low_state", self.rates["low_state"], self._publish_low_state)
        self.scheduler.add("hand_state", self.rates["hand_state"], self._publish_hand_state)
        self._schedule_sim_jobs(cfg.status_hz)
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

    def _open_topics(self, participant: DomainParticipant | LoopBus) -> None:
        """The robot's topics (state out, commands in) and the sim's own (faults, status)."""
        qos = dds.STATE_WRITER_QOS
        self._low_writer: DataWriter[Any] = loop.writer(
            participant, loop.topic(participant, "rt/lowstate", self.iface.LowState_), qos
        )
        self._hand_writer: DataWriter[Any] = loop.writer(
            participant, loop.topic(participant, "rt/handstate", self.iface.HandState_), qos
        )
        body = RawReader(participant, "rt/lowcmd", self.iface.LowCmd_)
        hand = RawReader(participant, "rt/handcmd", self.iface.HandCmd_)
        self._commands = [
            (body.take, self._on_body_command),
            (hand.take, self._on_hand_command),
        ]
        self._open_sim_topics(participant, FAULT_TOPIC, STATUS_TOPIC, AdamStatus_)

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

    def _published(self) -> dict[str, int]:
        return self.published

    # -- commands in ----------------------------------------------------------------------

    def _drain(self, now: float) -> None:
        while self._stdin_lines:
            self._on_stdin(self._stdin_lines.popleft(), now)
        self._take(now, self._commands)

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

    def _validate(self, spec: FaultSpec) -> FaultSpec:
        return adam_faults.validate(spec, joints=self.joint_names, battery=self.has_battery)

    def _target(self, kind: str, target: str) -> str:
        return adam_faults.normalise_target(kind, target, self.joint_names)

    def _sync_faults(self, now: float) -> None:
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
        except FaultError as e:
            log.warning("stdin fault request refused", line=line.strip(), reason=str(e))
            print(f"refused: {e}", file=sys.stderr)  # noqa: T201 - the person typing reads it

    # -- state out ------------------------------------------------------------------------

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
        data["timestamp_ms"] = int((self.clock() + self._wall_offset()) * 1000)
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
        fields: dict[str, Any] = dict(
            self._status_fields(now),
            seed=self.config.seed,
            variant=self.iface.variant,
            profile=self.profile.name,
            motors=self.motors,
            body=AdamCounters_(**self.counters["body"].as_dict()),
            hands=AdamCounters_(**self.counters["hands"].as_dict()),
        )
        return AdamStatus_(**fields)


__all__ = ["AdamSimConfig", "Counters", "Hands", "SimAdam"]
