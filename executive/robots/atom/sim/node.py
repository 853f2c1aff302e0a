"""The simulated Atom as a DDS node: robot topics in, robot state out, faults on demand.

Threads: one scheduler thread (the caller's, in ``run``) owns the robot model and runs
every periodic job; before each wake-up's jobs it takes the joint command streams off
their readers (polling: a listener callback per 500 Hz sample would cost a thread switch
and the GIL each time) and applies the one-shot commands that CycloneDDS's listener
threads (``AtomIO``'s readers) appended to an inbox. So the model has a single writer and
needs no locks. A command's ``t`` is the ``time.monotonic()`` at which the sim took it:
within one period of the fastest state topic (2 ms) of its arrival for streams, at once
for one-shot commands; stream records also carry ``sent``, the writer's source timestamp
on the same monotonic clock.

State is published through the precompiled codec (``executive.wire.codec``): each state
topic has one numpy record whose fields are refreshed in place through views set up once,
and is written as raw bytes. Joint commands are read as raw bytes too. Stock
cyclonedds-python (de)serialization would cost more than the quarter core the sim may use.

Fault requests, the status, the record and the scheduler's life are the kit's
(``executive.robots.simkit.node``); this module is the Atom.

What the robot obeys (the firmware's rules as the seeds describe them):

- FSM switches (``rt/set/fsm/id``) are taken at once, unless a REFUSE_FSM fault is set.
- upper joints: upper-body control on (``rt/switch/upper/control``) and an FSM state in
  which the profile says joints are controlled; lower joints: that FSM state; hands:
  always; nothing while an EmergencyState_ flag is set (joints brake where they are).
- a joint whose servo is in error (SERVO_ERROR fault) stops; ``rt/clear/errors`` clears
  the injected servo errors.
- invalid joint commands are rejected whole and counted (see ``executive.robots.simkit.joints``).
- ``rt/remote/control`` (joystick walking) is recorded but moves nothing.
- joints move in MuJoCo with the vendor's model (``executive.robots.simkit.physics``: PD
  at the commanded gains, gravity, limits, the legs held standing), the fingers as before;
  ``physics="kinematic"`` keeps the first-order lag for every joint.
- a contact of the body with itself or the scene is logged, recorded (``contact`` lines),
  listed in the status; with ``contact_fault`` it is also the servo error a firmware's
  collision detection would raise on the joint that made it (``CONTACT_ERROR``), cleared
  as any servo error (``rt/clear/errors``).
- the operator's gamepad (``wireless_remote``) shows the BUTTON and STICK "faults".
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
import structlog
from cyclonedds.domain import DomainParticipant
from cyclonedds.internal import InvalidSample

from executive.robots.atom import gamepad as remote
from executive.robots.atom.interface import Interface, Variant
from executive.robots.atom.sim.amr import AmrSim, TagMap
from executive.robots.atom.sim.config import SimConfig
from executive.robots.atom.sim.faults import (
    ESTOP_FLAGS,
    normalise_target,
    state_topic_key,
    validate,
)
from executive.robots.atom.sim.servos import MainNodes, axis_targets, node_joint
from executive.robots.atom.sim.topics import FAULT_TOPIC, STATUS_TOPIC, types
from executive.robots.atom.topics import STATE_TOPICS, TOPICS, AtomIO
from executive.robots.simkit.battery import Battery
from executive.robots.simkit.faults import FaultSpec
from executive.robots.simkit.joints import JointGroup, StreamCounters, Verdict, command_floats
from executive.robots.simkit.node import RawReader, SimNode, state_rates
from executive.robots.simkit.physics import TIMESTEP, ContactEvent, Physics, load_scene
from executive.robots.simkit.scheduler import Scheduler
from executive.seam.body import BodySpec, NoBody
from executive.seam.profile import RobotProfile, load_profile
from executive.wire.codec import Codec, Record, raw_write
from executive.wire.loop import LoopBus
from executive.wire.robot_io import Side

log = structlog.get_logger(__name__)

# stream -> (command key, state key, array field in the command, array field in the state)
STREAMS: dict[str, tuple[str, str, str, str]] = {
    "upper": ("upper_cmd", "upper_state", "motor_cmd", "motor_state"),
    "lower": ("lower_cmd", "lower_state", "motor_cmd", "motor_state"),
    "hands": ("hands_cmd", "hands_state", "hands", "hands"),
}
EVENT_TOPICS = ("set_fsm_id", "switch_upper_control", "clear_errors", "amr_cmd", "remote_control")
# The servo error a contact raises with ``contact_fault``: CiA 402's "following error", what
# a position-controlled drive reports when its joint is held off its target (the Atom's own
# code for a collision is not published).
CONTACT_ERROR = 0x8611


class _JointStateView:
    """Views into one state record's MotorState_ array, refreshed from a JointGroup."""

    def __init__(self, motors: Any, mode: int) -> None:
        motors["mode"] = mode
        motors["mcu_temp"] = 42
        motors["mos_temp"] = 40
        motors["motor_temp"] = 38
        motors["bus_voltage"] = 48
        self.q, self.dq, self.ddq = motors["q"], motors["dq"], motors["ddq"]
        self.tau = motors["tau_est"]
        self.q_raw, self.dq_raw, self.ddq_raw = motors["q_raw"], motors["dq_raw"], motors["ddq_raw"]

        self._stale = True

    def fill(self, group: JointGroup) -> None:
        """Copy the group's state in; skipped while it rests and reads without noise."""
        if group.settled and group.noise == 0 and not self._stale:
            return
        self._stale = not group.settled
        q = group.measured()
        self.q[:] = q
        self.q_raw[:] = q
        self.dq[:] = group.dq
        self.dq_raw[:] = group.dq
        self.ddq[:] = group.ddq
        self.ddq_raw[:] = group.ddq
        self.tau[:] = group.tau


class _BmsView:
    """Views into one state record's BmsState_, refreshed from the battery."""

    def __init__(self, bms: Any) -> None:
        bms["bms_state"] = 1
        bms["afe_state"] = 1
        bms["battery_health"] = 98
        bms["pcb_board_temp"] = 32
        bms["afe_chip_temp"] = 34
        bms["bms_hardware_version"] = 0x0100
        bms["bms_software_version"] = 0x0105
        self.alarms, self.level, self.heartbeat = (
            bms["bms_alarms"],
            bms["battery_level"],
            bms["heartbeat"],
        )
        self.cells, self.pack = bms["cells_voltage"], bms["battery_pack_current_voltage"]
        self.io_voltage, self.current = bms["battery_pack_io_voltage"], bms["battery_now_current"]
        self.work_time = bms["bms_work_time"]
        self.current[...] = 350  # 3.5 A in 10 mA units
        self._beats = 0
        self._source: tuple[int, float, int] | None = None
        self._shown: tuple[int, int, int, int] | None = None

    def fill(self, battery: Battery, alarms: int, work_time: float) -> None:
        """Advance the heartbeat; rewrite the rest only when it changed (cheap at 500 Hz:
        what it is made of, the alarms, the battery's reading and the whole seconds, is
        compared first; the reading moves at the base's 20 Hz)."""
        self._beats = (self._beats + 1) & 0xFFFF
        self.heartbeat[...] = self._beats
        seconds = int(max(0.0, work_time))
        source = (alarms, battery.reading, seconds)
        if source == self._source:
            return
        self._source = source
        shown = (alarms, round(battery.reading), battery.cell_mv, seconds)
        if shown == self._shown:
            return
        self._shown = shown
        self.alarms[...] = alarms
        self.level[...] = shown[1]
        self.cells[:] = shown[2]
        pack = round(battery.pack_voltage * 100)  # 10 mV units
        self.pack[...] = pack
        self.io_voltage[...] = pack
        self.work_time[...] = shown[3]


class _StateTopic:
    """One state topic: the record that is refreshed in place, its codec and its writer."""

    def __init__(self, io: AtomIO, key: str) -> None:
        self.key = key
        self.codec: Codec = io.codec(key)
        self.record: Record = self.codec.zeros()
        self._encode = self.codec.encoder(self.record)  # the record stays this object
        self.writer = io.writers[key]  # DDS's, or the in-process wire's (simulated time)
        self.published = 0

    def publish(self) -> None:
        raw_write(self.writer, self._encode())
        self.published += 1


class _StreamReader(RawReader):
    """A joint command topic read by polling, as raw bytes through the codec."""

    def __init__(
        self, participant: DomainParticipant | LoopBus, interface: Interface, key: str, field: str
    ) -> None:
        spec = TOPICS[key]
        idl_type = getattr(interface, spec.type_name)
        super().__init__(participant, spec.name, idl_type)
        self.codec = Codec(idl_type)
        self.field = field

    def commands(self) -> list[tuple[Any, int]]:
        """(q dq tau kp kd matrix, source timestamp ns) of each new sample, oldest first."""
        taken = self.take()
        if not taken:  # the usual wake-up: nothing new (three streams, 500 times a second)
            return taken
        decode, field = self.codec.decode, self.field
        return [(command_floats(decode(data)[field]), ts) for data, ts in taken]


class SimAtom(SimNode):
    """The simulated robot on one participant. ``run()`` blocks until ``stop()``."""

    def __init__(
        self,
        participant: DomainParticipant | LoopBus,
        config: SimConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(clock)
        self.config = cfg = config or SimConfig()
        self.profile: RobotProfile = load_profile(cfg.profile)
        self.interface = Interface(Variant.parse(cfg.interface))
        self.rates = state_rates(self.profile.state_hz, cfg.rates, state_topic_key)
        stream_keys = {spec[0] for spec in STREAMS.values()}
        self.io = AtomIO(
            participant,
            self.interface,
            side=Side.ROBOT,
            topics={k: v for k, v in TOPICS.items() if k not in stream_keys},
        )
        self._streams = [
            (
                _StreamReader(participant, self.interface, spec[0], spec[2]).commands,
                functools.partial(self._on_joint_command, name),
            )
            for name, spec in STREAMS.items()
        ]
        seq = np.random.SeedSequence(cfg.seed)
        rngs = [np.random.default_rng(s) for s in seq.spawn(len(STREAMS))]
        self.groups = {
            name: JointGroup(
                self.profile,
                name,
                rng,
                speed_scale=cfg.speed_scale,
                initial_jitter=cfg.initial_jitter,
                noise=cfg.noise,
            )
            for name, rng in zip(STREAMS, rngs, strict=True)
        }
        self.physics = self._physics(cfg)
        self._kinematic = set(self.groups) if self.physics is None else set(self.physics.kinematic)
        self.physics_mode = "kinematic" if self.physics is None else "mujoco"
        self._contact_since: dict[tuple[str, str], float] = {}
        self.counters = {name: StreamCounters() for name in STREAMS}
        self.events_received = 0
        self.fsm_id = self._fsm_id(cfg.fsm)
        self.upper_control = False
        self.amr = AmrSim(
            TagMap.load(cfg.tags) if cfg.tags else TagMap.default(),
            speed=cfg.amr_speed,
            turn_rate=cfg.amr_turn_rate,
        )
        self.battery = Battery(level=cfg.battery, drain_per_min=cfg.battery_drain)
        self._axes = axis_targets()
        self._four_flags = "di_emergency_triggered" in (
            self.io.codec("emergency_state").dtype.names or ()
        )
        self._permitted = dict.fromkeys(STREAMS, False)
        self._alarms: tuple[int, dict[str, int]] = (-1, {})  # (book version, block -> alarms)
        self._modes: dict[str, tuple[int, bool]] = {}  # state key -> (fsm_id, control) written
        self._inbox: deque[tuple[float, str, Any]] = deque()
        self._reject_logged: set[tuple[str, str]] = set()

        self._states = {key: _StateTopic(self.io, key) for key in STATE_TOPICS}
        self._joint_views = {
            name: _JointStateView(self._states[spec[1]].record[spec[3]], self.profile.motor_mode)
            for name, spec in STREAMS.items()
        }
        self._bms = {
            key: _BmsView(self._states[key].record["bms_state"])
            for key in ("upper_state", "lower_state")
        }
        self._init_static_fields()
        self._nodes = MainNodes(self._states["main_nodes_state"].record)
        self._enum = {
            "nav": {m.name: m.value for m in self.interface.NavigationStatus_},
            "dev": {m.name: m.value for m in self.interface.DeviceStatus_},
        }

        self._open_sim_topics(participant, FAULT_TOPIC, STATUS_TOPIC, types.Status_)
        self._start_record(cfg.record, self._header(), cfg.faults)

        for key in EVENT_TOPICS:
            self.io.readers[key].add_callback(self._enqueuer(key))

        self.scheduler = Scheduler(before_each=self._drain, clock=clock)
        if self.physics is not None:  # first: the state topics publish what it stepped to
            self.scheduler.add("physics", 1.0 / TIMESTEP, self._step_physics)
        for key in STATE_TOPICS:
            self.scheduler.add(key, self.rates[key], getattr(self, f"_publish_{key}"))
        self._schedule_sim_jobs(cfg.status_hz)
        self._refresh_permissions()
        log.info(
            "sim ready",
            profile=self.profile.name,
            interface=self.interface.variant.name,
            seed=cfg.seed,
            rates=self.rates,
            fsm_id=self.fsm_id,
            faults=[f.describe() for f in cfg.faults],
            record=str(cfg.record) if cfg.record else None,
            physics=self.physics_mode,
            scene=list(self.physics.body.scene.names) if self.physics else None,
        )

    # -- set-up ---------------------------------------------------------------------------

    def _fsm_id(self, state: str) -> int:
        try:
            return int(state)
        except ValueError:
            pass
        try:
            return self.profile.fsm_id(state)
        except KeyError:
            raise ValueError(
                f"unknown FSM state {state!r}; known: {', '.join(self.profile.fsm)} or a number"
            ) from None

    def _physics(self, cfg: SimConfig) -> Physics | None:
        """The body for ``cfg.physics``; ValueError (BodyError) for a bad mode or scene."""
        if cfg.physics == "kinematic":
            if cfg.scene is not None:
                raise ValueError("a scene needs the body: --scene with --physics mujoco")
            return None
        if cfg.physics != "mujoco":
            raise ValueError(f"physics must be mujoco or kinematic, not {cfg.physics!r}")
        body = self.profile.body
        if not isinstance(body, BodySpec):  # a site's profile may have no model: still a sim
            if cfg.scene is not None:
                raise ValueError(f"profile {self.profile.name!r} has no body model for a scene")
            log.warning(
                "no body model in the profile: joints move kinematically",
                profile=self.profile.name,
                why=body.why if isinstance(body, NoBody) else "no body: key",
            )
            return None
        return Physics.for_profile(self.profile, self.groups, load_scene(cfg.scene))

    def _header(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "seed": self.config.seed,
            "profile": self.profile.name,
            "interface": self.interface.variant.name,
            "joints": {name: group.names for name, group in self.groups.items()},
            "physics": self.physics_mode,
            "scene": list(self.physics.body.scene.names) if self.physics else [],
        }

    def _init_static_fields(self) -> None:
        upper = self._states["upper_state"].record
        upper["robot_type"][:] = np.frombuffer(b"Atom".ljust(16, b"\0"), dtype="S1")
        for key in ("upper_state", "lower_state"):
            rec = self._states[key].record
            if "imu_state" in (rec.dtype.names or ()):
                imu = rec["imu_state"]
                imu["quaternion"][:] = (1.0, 0.0, 0.0, 0.0)
                imu["accelerometer"][:] = (0.0, 0.0, 9.81)
                imu["temperature"] = 36

    def _enqueuer(self, key: str) -> Callable[[Any], None]:
        inbox, clock = self._inbox, self.clock

        def enqueue(sample: Any) -> None:  # runs on CycloneDDS's listener thread
            if not isinstance(sample, InvalidSample):  # a controller went away: no command
                inbox.append((clock(), key, sample))

        return enqueue

    def _published(self) -> dict[str, int]:
        return {k: s.published for k, s in self._states.items()}

    # -- commands in ----------------------------------------------------------------------

    def _drain(self, now: float) -> None:
        """Apply every command received since the last wake-up.

        One-shot commands first (an FSM switch or control change that arrived in the same
        ~2 ms as joint commands is in effect for them), then each stream in arrival order.
        """
        inbox = self._inbox
        if inbox:
            while inbox:
                t, key, sample = inbox.popleft()
                self.events_received += 1
                self._on_event(t, key, sample, now)
            self._refresh_permissions()
            self._status_dirty = True
        self._take(now, self._streams)

    def _on_joint_command(self, name: str, t: float, sent: float, cmd: Any) -> None:
        group = self.groups[name]
        verdict = group.check(cmd)
        if verdict is Verdict.APPLIED:
            if self._permitted[name]:
                group.command(cmd)
            else:
                verdict = Verdict.IGNORED
        self.counters[name].count(verdict.value)
        if verdict not in (Verdict.APPLIED, Verdict.IGNORED) and (
            (name, verdict.value) not in self._reject_logged
        ):
            self._reject_logged.add((name, verdict.value))  # once per kind: 500 Hz streams
            log.warning("joint command rejected", stream=name, reason=verdict.value)
        if self.recorder is not None:
            self.recorder.stream(t, sent, STREAMS[name][0], cmd, group.q, verdict.value)

    def _on_event(self, t: float, key: str, sample: Any, now: float) -> None:
        fields = _fields(sample)
        if key == "set_fsm_id":
            if self.faults.has("refuse-fsm"):
                result = f"refused (fault); fsm stays {self.fsm_id}"
            else:
                self.fsm_id = int(sample.id)
                names = [n for n, s in self.profile.fsm.items() if s.id == self.fsm_id]
                result = f"fsm {self.fsm_id} ({names[0] if names else 'not in the profile'})"
        elif key == "switch_upper_control":
            if not sample.flag:
                self.upper_control = False
                result = "upper control off"
            elif self.faults.has("refuse-upper-control") or self.faults.has("revoke-upper-control"):
                result = "refused (fault)"
            else:
                self.upper_control = True
                result = "upper control on"
        elif key == "clear_errors":
            cleared = self.faults.clear("servo-error")
            for spec in cleared:
                self._note_fault(now, "clear", spec, source="rt/clear/errors")
            self._sync_faults(now)
            result = f"cleared {len(cleared)} servo error(s)"
        elif key == "amr_cmd":
            kind = sample.command_type.name
            fields["command_type"] = kind
            result = self.amr.command(kind, now=now, **fields)
        else:  # remote_control: joystick walking, not simulated
            result = "recorded (walking is not simulated)"
        # joystick-rate commands would flood the log at info
        chatty = key == "remote_control" or fields.get("command_type") == "REMOTE_CONTROL"
        (log.debug if chatty else log.info)("command", topic=key, fields=fields, result=result)
        if self.recorder is not None:
            self.recorder.event(t, key, fields, result)

    def _obeys(self, name: str) -> bool:
        if self._estop():
            return False
        if name == "hands":
            return True
        fsm_ok = self.profile.allows_joint_control(self.fsm_id)
        return fsm_ok and (name == "lower" or self.upper_control)

    def _estop(self) -> bool:
        return any(self.faults.has(kind) for kind in ESTOP_FLAGS)

    def _refresh_permissions(self) -> None:
        """Release the joints of a stream that may no longer be commanded (brake on e-stop)."""
        estop = self._estop()
        for name, group in self.groups.items():
            permitted = self._obeys(name)
            if self._permitted[name] and not permitted:
                if estop:
                    group.halt()
                else:
                    group.release()
                log.info("joint commands no longer obeyed", stream=name, estop=estop)
            self._permitted[name] = permitted

    # -- the body -------------------------------------------------------------------------

    def _step_physics(self, now: float, periods: int) -> None:
        assert self.physics is not None
        for event in self.physics.step(periods):
            self._on_contact(now, event)

    def _on_contact(self, now: float, event: ContactEvent) -> None:
        """A contact began or ended: log, record, status; with ``contact_fault`` a servo
        error on the joint that made it (once per contact, not again while it is set)."""
        info = event.as_dict()
        key = (event.a, event.b)
        if event.action == "begin":
            self._contact_since[key] = now
            log.warning("contact", **info)
        else:
            self._contact_since.pop(key, None)
            log.info("contact", **info)
        fault = None
        if event.action == "begin" and self.config.contact_fault:
            joint = self.physics.culprit(event) if self.physics else None
            node = self._axes.get(joint) if joint else None
            if node is not None and not self.faults.has("servo-error", node):
                fault = node
        if self.recorder is not None:
            self.recorder.note(now, "contact", {**info, "fault": fault})
        if fault is not None:
            self.apply_fault("set", FaultSpec("servo-error", fault, CONTACT_ERROR), now, "contact")
        self._status_dirty = True

    # -- faults ---------------------------------------------------------------------------

    def _validate(self, spec: FaultSpec) -> FaultSpec:
        return validate(spec, four_flags=self._four_flags, axes=self._axes)

    def _target(self, kind: str, target: str) -> str:
        return normalise_target(kind, target, self._axes)

    def _sync_faults(self, now: float) -> None:
        """Make the model agree with the fault book after any change to it."""
        failing = self.faults.has("amr-failure")
        if failing and not self.amr.failing:
            self.amr.fail(now)
        elif not failing and self.amr.failing:
            self.amr.recover()
        level = self.faults.get("battery-level")
        self.battery.override = None if level is None else level.value
        if self.faults.has("revoke-upper-control"):
            self.upper_control = False
        pad = remote.encode(
            {f.target for f in self.faults.of_kind("button")},
            {f.target: f.value for f in self.faults.of_kind("stick")},
        )
        for key in ("upper_state", "lower_state"):
            self._states[key].record["wireless_remote"][:] = pad
        errors = {f.target: int(f.value) for f in self.faults.of_kind("servo-error")}
        self._nodes.set_errors(errors)
        frozen = {node_joint(node) for node in errors}
        for group in self.groups.values():
            group.freeze(np.array([n in frozen for n in group.names], dtype=bool))
        self._refresh_permissions()
        self._status_dirty = True

    # -- state out ------------------------------------------------------------------------

    def _bms_alarms(self, block: str) -> int:
        """The BMS_ALARM bits of ``block`` (upper, lower): read off the fault book again
        only when it changed (asked at 500 Hz per block)."""
        version, by_block = self._alarms
        if version != self.faults.version:
            by_block = {}
            self._alarms = (self.faults.version, by_block)
        alarms = by_block.get(block)
        if alarms is None:
            alarms = 0
            for f in self.faults.of_kind("bms-alarm"):
                if f.target in ("", block):
                    alarms |= int(f.value)
            by_block[block] = alarms
        return alarms

    def _publish_joints(self, name: str, key: str, now: float, periods: int) -> None:
        group = self.groups[name]
        if not self._permitted[name] and group.target is not None:
            group.release()
        if name in self._kinematic:
            group.step(periods / self.rates[key])
        state = self._states[key]
        self._joint_views[name].fill(group)
        if key in self._bms:
            mode = (self.fsm_id, self.upper_control)
            if self._modes.get(key) != mode:  # written when it changes: the record keeps it
                self._modes[key] = mode
                rec = state.record
                rec["fsm_id"] = self.fsm_id
                if key == "upper_state":
                    rec["is_upper_control"] = self.upper_control
            self._bms[key].fill(self.battery, self._bms_alarms(key[:5]), now - self.started)
        if not self._dropped(key):
            state.publish()

    def _publish_upper_state(self, now: float, periods: int) -> None:
        self._publish_joints("upper", "upper_state", now, periods)

    def _publish_lower_state(self, now: float, periods: int) -> None:
        self._publish_joints("lower", "lower_state", now, periods)

    def _publish_hands_state(self, now: float, periods: int) -> None:
        self._publish_joints("hands", "hands_state", now, periods)

    def _publish_amr_state(self, now: float, periods: int) -> None:
        dt = periods / self.rates["amr_state"]
        self.battery.step(dt, charging=self.amr.charging)
        halted = self._estop() or self.faults.has("amr-estop")
        self.amr.step(now, dt, halted=halted)
        state = self._states["amr_state"]
        rec, amr, battery = state.record, self.amr, self.battery
        rec["device_status"] = self._enum["dev"][amr.device_status]
        rec["navigation_status"] = self._enum["nav"][amr.navigation_status]
        basic = rec["basic_status"]
        basic["battery_level"] = battery.reading
        basic["battery_voltage"] = battery.pack_voltage
        basic["battery_current"] = -8.0 if amr.charging else 3.5
        basic["heartbeat"] = (int(basic["heartbeat"]) + 1) & 0xFFFF
        rec["position"][:] = (amr.x, amr.y, amr.yaw)
        event = rec["amr_event"]
        event["emergency_stop_pressed"] = self.faults.has("amr-estop")
        event["low_battery"] = battery.reading < 15.0
        rec["error_code"][0] = amr.error_code
        rec["task_id"] = amr.task_id
        rec["work_mode"] = amr.work_mode
        if not self._dropped("amr_state"):
            state.publish()

    def _publish_emergency_state(self, now: float, periods: int) -> None:
        state = self._states["emergency_state"]
        for kind, field in ESTOP_FLAGS.items():
            if kind != "estop-di" or self._four_flags:
                state.record[field] = self.faults.has(kind)
        if not self._dropped("emergency_state"):
            state.publish()

    def _publish_main_nodes_state(self, now: float, periods: int) -> None:
        if not self._dropped("main_nodes_state"):
            self._states["main_nodes_state"].publish()

    def status(self, now: float) -> Any:
        """The ``Status_`` sample describing the sim now."""
        t = types

        def counters(name: str) -> Any:
            return t.StreamCounters_(**self.counters[name].as_dict())

        fields: dict[str, Any] = {
            **self._status_fields(now),
            "seed": self.config.seed,
            "variant": self.interface.variant.name,
            "profile": self.profile.name,
            "upper": counters("upper"),
            "lower": counters("lower"),
            "hands": counters("hands"),
            "events_received": self.events_received,
            "fsm_id": self.fsm_id,
            "is_upper_control": self.upper_control,
            "physics": self.physics_mode,
            "contacts": self._contacts(now),
            "contact_events": self.physics.events if self.physics else 0,
        }
        return t.Status_(**fields)

    def _contacts(self, now: float) -> list[Any]:
        if self.physics is None:
            return []
        return [
            types.Contact_(
                a=a,
                b=b,
                kind=c.kind,
                distance=c.distance,
                since=self._contact_since.get((a, b), now),
            )
            for (a, b), c in self.physics.active.items()
        ]


def _fields(sample: Any) -> dict[str, Any]:
    """A stock IDL sample as plain JSON-able fields (enums by name, nested as dicts)."""
    out: dict[str, Any] = {}
    for name in sample.__dataclass_fields__:
        value = getattr(sample, name)
        if hasattr(value, "__dataclass_fields__"):
            out[name] = _fields(value)
        elif hasattr(value, "name") and hasattr(value, "value"):
            out[name] = value.name
        elif isinstance(value, float) and not math.isfinite(value):
            out[name] = str(value)
        else:
            out[name] = value
    return out


__all__ = ["STREAMS", "SimAtom", "SimConfig"]
