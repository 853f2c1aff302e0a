"""The simulated Aurora in simulated time: the Aurora's part of ``executive.scenario``.

The Aurora's wire is cyclonedds 11 in two child processes (the adapter's bridge, the
simulator), which the service's process cannot load. So simulated time replaces the
processes and their DDS, and nothing above them:

- the adapter (``adapter.py``) runs as the service runs it: its configuration and hello,
  its streams' frames, its decoding of the bridge's state into snapshots, its trips into
  the fast path, its hold, reset and release. Its participant is ``LocalBridge``: instead
  of starting the child, ``_launch`` takes a link in this process (``_Link``: the same
  ``ipc`` frames, byte for byte, handed over instead of sent through a socket), and the
  scenario's loop does its two threads' work (``pump``: the link read; ``ping``);
- the bridge is the bridge: ``bridge.Bridge`` itself, handed each frame as its ``main``
  hands it one (``handle``; ``failed`` when it raises), its loop's ``step`` run every
  ``bridge.TICK_S`` of simulated time, its messages up queued on the link (``_Up``, for
  its ``Uplink`` thread). What it holds, latches, trips on and sends is its own code;
  only its robot's endpoints (``node``: ``wire.node.AuroraNode``, cyclonedds 11) are the
  simulated robot's (``_Endpoints``): a command sample it writes is taken by the model as
  the sim takes one off DDS (``plain(sample)``), a state sample the model gives reaches
  its listener as cyclone's would;
- the simulator's model is ``sim.model.AuroraModel``, driven through its own interface
  (``command``, ``step``, ``raise_fsm9``, ``raise_group_error``, ``clear``, ``status``)
  at the sim's rate; this module stands for the sim's DDS node (``sim/node.py``): the
  state samples the bridge reads, the faults of its control port, its record's format.

What is not exercised here is what ``--realtime`` runs: the processes, the socket, the two
cyclonedds 11 participants and the XCDR1 encoding (proved against the vendor's client in
tests/aurora).

A scenario's ``world:`` is the simulator's start-up (its options, ``_`` for ``-``); a fault
is a spec of the sim's control port (``FAULTS``), the same request in both ways of running.
The Aurora has no operator buttons.
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from executive.clock import SimClock
from executive.robots.aurora import ipc
from executive.robots.aurora.sim.model import AuroraModel
from executive.robots.aurora.sim.record import Recorder, read
from executive.robots.aurora.wire.config import (
    GR3_GROUP_SIZES,
    GROUP_STOPPED,
    INTERFACES,
    WireConfig,
)
from executive.robots.simkit.scheduler import Scheduler
from executive.seam.profile import RobotProfile

GROUP_CMD = "robot_control_group_cmd"
VELOCITY_CMD = "velocity_cmd"
MOVED = 1e-6  # rad: a group command this far from the group's previous one moves it
# the state topics the bridge reads (bridge.SOURCES), each published every Nth sim tick
# (the sim's node: the two fast ones every tick, the others every tenth)
PUBLISHED = {
    "aurora_state": 1,
    "robot_control_group_state": 1,
    "base_data_pub": 10,
    "contact_data_pub": 10,
}
STATE_TOPICS = (
    "aurora_state",
    "robot_stand_pose_state",
    "robot_control_group_state",
    "robot_cartesian_state",
    "robot_motor_cfg_group_state",
    "base_data_pub",
    "true_data_pub",
    "contact_data_pub",
)
PHYSICS = ("mujoco", "kinematic")  # the sim's --physics
READY_S = 30.0  # --realtime: the sim process's control port answers within this

# world key -> (what it is, the sim's option)
WORLD: dict[str, tuple[str, str]] = {
    "speed": ("number > 0: the joints' speed limit, rad/s (1.0)", "--speed"),
    "fsm": ("integer 0..11: the whole-body FSM at start (2, PD stand)", "--fsm"),
    "no_override": ("boolean: allow_upper_body_override false (control refused)", "--no-override"),
    "rate": ("number > 0: the state topics' rate, Hz (100)", "--rate"),
    "physics": (
        "mujoco (the GR-3's body stepped, as the sim process does by default) or kinematic",
        "--physics",
    ),
    "interface": (
        f"the interface variant both ends speak: {' or '.join(INTERFACES)} (the profile's)",
        "--interface",
    ),
}

FAULTS = {
    "fsm9": "security protection (whole-body FSM 9): the robot freezes, FSM commands refused",
    "group-error:GROUP": "that control group reports error (group_motion_state 3)",
    "silence[:TOPIC+TOPIC...][@SECONDS]": "those state topics (all) stop, for S s (until clear)",
    "undecodable[:TOPIC][=COUNT]": "the next COUNT (1) samples of TOPIC (aurora_state) undecodable",
}


def fault_message(spec: str, groups: Mapping[str, int] = GR3_GROUP_SIZES) -> dict[str, Any]:
    """The sim's control request for a fault spec (``FAULTS``); ValueError saying why not."""
    text = spec.strip()
    head, _, seconds = text.partition("@")
    head, _, value = head.partition("=")
    kind, _, target = head.partition(":")
    known = ", ".join(FAULTS)
    if kind == "fsm9" and not (target or value or seconds):
        return {"fault": "fsm9"}
    if kind == "group-error" and not (value or seconds):
        if target not in groups:
            raise ValueError(f"group-error:GROUP: {target!r} is not one of {', '.join(groups)}")
        return {"fault": "group_error", "group": target}
    if kind == "silence" and not value:
        topics = [t for t in target.split("+") if t] if target else []
        unknown = [t for t in topics if t not in STATE_TOPICS]
        if unknown:
            raise ValueError(f"silence: {unknown} are not state topics ({', '.join(STATE_TOPICS)})")
        message: dict[str, Any] = {"fault": "silence", "topics": topics or list(STATE_TOPICS)}
        if seconds:
            message["duration"] = _positive(seconds, "silence@SECONDS")
        return message
    if kind == "undecodable" and not seconds:
        topic = target or "aurora_state"
        if topic not in STATE_TOPICS:
            raise ValueError(f"undecodable: {topic!r} is not a state topic")
        count = int(_positive(value, "undecodable=COUNT")) if value else 1
        return {"fault": "undecodable", "topic": topic, "count": count}
    raise ValueError(f"{spec!r} is not a fault of the simulated Aurora; known: {known}")


def clear_message(spec: str) -> dict[str, Any]:
    """The sim's clear for a fault (``KIND[:TARGET]``): the sim clears every fault at once
    (FSM 9 stays until the robot is commanded out of it)."""
    fault_message(spec.partition("=")[0].partition("@")[0])  # ValueError if not a fault
    return {"clear": True}


def _positive(text: str, what: str) -> float:
    try:
        n = float(text)
    except ValueError:
        n = math.nan
    if not (math.isfinite(n) and n > 0):
        raise ValueError(f"{what}: {text!r} is not a positive number")
    return n


# -- the bridge in this process ---------------------------------------------------------------


class _Process:
    """The bridge's "process" as the adapter supervises one (``subprocess.Popen``'s face):
    running until the bridge has closed."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            self.returncode = -9


class _NoTimeouts:
    """The link's ``sock`` as ``_await_hello`` sets its timeout: nothing here waits."""

    def settimeout(self, timeout: float | None) -> None:
        pass


class _Up:
    """The bridge's ``Uplink``: its messages up, queued on the link as frames (the
    adapter's ``pump`` reads them); the state, the newest only, as the Uplink sends it."""

    def __init__(self, link: Any) -> None:  # the in-process link (``Bridge`` says Channel)
        self.link: _Link = link

    def send(self, message: dict[str, Any]) -> None:
        self.link.up.append(ipc.encode(message))

    def state(self, message: dict[str, Any]) -> None:
        self.link.up.append(ipc.encode(message))

    def close(self, timeout: float = 1.0) -> None:
        pass


class _Link:
    """The adapter's end of the link (``ipc.Channel``'s face), in this process: a frame the
    adapter sends is handed to the bridge at once, as the bridge's ``main`` reads and
    handles one (the first, the config, starts it); the bridge's frames up wait in ``up``
    for ``recv`` (None once none waits)."""

    sock = _NoTimeouts()

    def __init__(self, host: LocalAurora) -> None:
        self.host = host
        self.process = _Process()
        self.up: deque[bytes] = deque()
        self.sent = self.received = 0

    def send(self, message: dict[str, Any]) -> None:
        self.send_frame(ipc.encode(message))

    def send_frame(self, frame: bytes, timeout: float | None = None) -> None:
        if self.process.returncode is not None:
            raise BrokenPipeError("the Aurora bridge has closed its link")
        (length,) = ipc.HEADER.unpack_from(frame)
        m = ipc.decode(frame[ipc.HEADER.size : ipc.HEADER.size + length])
        self.sent += 1
        bridge = self.host.bridge
        if bridge is None:
            self.host.start_bridge(self, m)
            return
        try:
            if not bridge.handle(m):
                self.host.close_bridge("the service closed the link")
        except Exception as e:  # noqa: BLE001 - as bridge.main: hold, say so
            bridge.failed(f"{m.get('t')!r}: {type(e).__name__}: {e}")

    def recv(self) -> dict[str, Any] | None:
        if not self.up:
            return None
        frame = self.up.popleft()
        (length,) = ipc.HEADER.unpack_from(frame)
        self.received += 1
        return ipc.decode(frame[ipc.HEADER.size : ipc.HEADER.size + length])

    def close(self) -> None:
        pass


@dataclass
class _Reader:
    """A state topic's reader of the bridge: what its listener takes (``take``). An
    undecodable sample raises in ``take``, as cyclonedds's deserialization does."""

    topic: str
    listener: Any
    samples: list[Any] = field(default_factory=list)
    broken: int = 0

    def take(self, N: int = 16) -> list[Any]:  # noqa: N803 - cyclonedds's keyword
        taken, self.samples = self.samples[:N], self.samples[N:]
        if self.broken:
            self.broken = 0
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte (the sim's)")
        return taken


@dataclass
class _Writer:
    """A command topic's writer of the bridge: each sample taken by the simulated robot."""

    host: LocalAurora
    topic: str

    def write(self, sample: Any) -> None:
        self.host.take(self.topic, sample)


class _Endpoints:
    """The bridge's robot endpoints (``wire.node.AuroraNode``'s face) on the simulated
    robot in this process."""

    def __init__(self, host: LocalAurora, config: WireConfig) -> None:
        self.host = host
        self.config = config

    def writer(self, base: str, depth: int = 1) -> _Writer:
        return _Writer(self.host, base)

    def reader(self, base: str, depth: int = 1, listener: Any = None) -> _Reader:
        reader = _Reader(base, listener)
        self.host.readers.setdefault(base, []).append(reader)
        return reader

    def close(self) -> None:
        self.host.readers.clear()


# -- the simulated robot ----------------------------------------------------------------------


class LocalAurora:
    """The simulated Aurora and the adapter's bridge in one process, on a ``SimClock``: the
    ``LockstepRobot`` the engine steps, and the ``LocalBridge`` the adapter opens on
    (``participant``)."""

    def __init__(
        self,
        clock: SimClock,
        world: Mapping[str, Any],
        record: Path,
        groups: Mapping[str, int],
        body: Any = None,
    ) -> None:
        self.clock = clock
        self.participant = self
        self.interface: str | None = world.get("interface")
        self.model = AuroraModel(
            groups,
            speed=float(world.get("speed", 1.0)),
            fsm=int(world.get("fsm", 2)),
            allow_override=not world.get("no_override", False),
            body=body,
        )
        self.period = 1.0 / float(world.get("rate", 100.0))
        self.readers: dict[str, list[_Reader]] = {}
        self.silent: dict[str, float] = {}  # topic -> end (inf: until cleared)
        self.undecodable: dict[str, int] = {}  # topic -> samples left to break
        self.counters: dict[str, int] = {}  # commands taken, by topic
        self.bridge: Any = None
        self.adapter: Any = None
        self._link: _Link | None = None
        self._next_up = 0.0
        self._ticks = 0
        self._last = clock()
        self._record = record
        sizes = {name: len(g.q) for name, g in self.model.groups.items()}
        self.recorder: Recorder | None = Recorder(
            record, {"pid": os.getpid(), "lockstep": True, "groups": sizes}, clock()
        )
        self.scheduler = Scheduler(clock=clock)
        from executive.robots.aurora.bridge import TICK_S

        self.scheduler.add("sim", 1.0 / self.period, self._tick)
        # the bridge's loop is its own process's timer, not the sim's: half a period apart,
        # a trip (sent up at once) reaches the adapter before the state the bridge sends
        # up at its next pass, as it does between the processes
        self.scheduler.add("bridge", 1.0 / TICK_S, self._bridge_step, phase=TICK_S / 2)
        self.scheduler.add("ping", 1.0 / ipc.PING_S, self._ping)

    # -- LocalBridge (the adapter's participant) -----------------------------------------------

    def launch(self, adapter: Any) -> tuple[_Process, _Link]:
        """The bridge's process and link for ``adapter`` (``AuroraAdapter._launch``)."""
        self.adapter = adapter
        self._link = _Link(self)
        return self._link.process, self._link

    def start_bridge(self, link: _Link, config: dict[str, Any]) -> None:
        """The config frame: ``bridge.Bridge`` made on it, its hello up (``bridge.main``)."""
        from executive.robots.aurora.bridge import Bridge

        if config.get("t") != ipc.CONFIG:
            link.process.returncode = 2  # as main: no config on the link
            return
        self.bridge = Bridge(
            link,  # type: ignore[arg-type]  # the in-process link: ipc.Channel's face
            config,
            self.clock,
            node=lambda wire: _Endpoints(self, wire),
            uplink=_Up,
        )
        link.up.append(ipc.encode(self.bridge.hello()))

    def close_bridge(self, why: str) -> None:
        link = self._link
        if self.bridge is not None and link is not None and link.process.returncode is None:
            self.bridge.close(why)
            link.process.returncode = 0

    # -- LockstepRobot -------------------------------------------------------------------------

    def due(self) -> float:
        return self.scheduler.due()

    def run_due(self, now: float) -> None:
        self.scheduler.run_due(now)
        if self.adapter is not None and self._link is not None and self._link.up:
            self.adapter.pump()

    def fault(self, spec: str, now: float) -> None:
        self.control(fault_message(spec, {n: len(g.q) for n, g in self.model.groups.items()}))

    def clear(self, spec: str, now: float) -> None:
        self.control(clear_message(spec))

    def press(self, button: str, now: float) -> None:
        raise ValueError("the Aurora has no operator buttons")

    def record(self) -> Path:
        if self.recorder is not None:
            self.recorder.flush()
        return self._record

    def close(self) -> None:
        if self.recorder is not None:
            self.recorder.add(self.clock(), {"counters": dict(self.counters)})
            self.recorder.close()
            self.recorder = None

    # -- the simulated robot (sim/node.py's part) ----------------------------------------------

    def take(self, topic: str, sample: Any) -> None:
        """A command the bridge wrote, taken by the model as the sim takes one off DDS."""
        from executive.robots.aurora.wire.convert import plain

        now = self.clock()
        fields = plain(sample)
        before = (self.model.whole, self.model.upper)
        result = self.model.command(topic, fields, now)
        self.counters[topic] = self.counters.get(topic, 0) + 1
        self._add(now, {"sent": now, "topic": topic, "fields": fields, "result": result})
        self._fsm_changed(before, now)

    def control(self, message: Mapping[str, Any]) -> None:
        """A request of the sim's control port (``sim/control.py``), as the sim applies it."""
        now = self.clock()
        before = (self.model.whole, self.model.upper)
        if message.get("clear"):
            self.model.clear()
            self.silent.clear()
            self.undecodable.clear()
            self._add(now, {"fault": {"action": "clear", "kind": "all"}})
            return
        kind = message["fault"]
        if kind == "fsm9":
            self.model.raise_fsm9()
        elif kind == "group_error":
            self.model.raise_group_error(str(message["group"]))
        elif kind == "silence":
            d = message.get("duration")
            end = math.inf if d is None else now + float(d)
            self.silent.update(dict.fromkeys(message["topics"], end))
        elif kind == "undecodable":
            self.undecodable[str(message["topic"])] = int(message.get("count", 1))
        self._add(now, {"fault": {"action": "set", "kind": kind, **message}})
        self._fsm_changed(before, now)

    def _tick(self, now: float, periods: int) -> None:
        """The sim's loop: the model advanced, its state published to the bridge."""
        for event in self.model.step(now - self._last, now):  # the body's contacts, as node.py
            body = self.model.body
            joint = body.culprit(event) if body is not None else None
            self._add(now, {"contact": {**event.as_dict(), "joint": joint}})
        self._last = now
        for topic in [t for t, end in self.silent.items() if now >= end]:
            del self.silent[topic]
            self._add(now, {"fault": {"action": "expired", "kind": "silence", "topic": topic}})
        status = self.model.status()
        for topic, every in PUBLISHED.items():
            if self._ticks % every or topic in self.silent:
                continue
            sample = self._sample(topic, status)
            broken = self.undecodable.get(topic, 0) > 0
            if broken:
                self.undecodable[topic] -= 1
            for reader in self.readers.get(topic, ()):
                reader.samples.append(sample)
                reader.broken += broken
                reader.listener.on_data_available(reader)
        self._ticks += 1

    def _sample(self, topic: str, status: Mapping[str, Any]) -> Any:
        """The state sample of ``topic``, of the wire's class, with what the bridge reads of
        it as the sim's node fills it (of ``base_data_pub`` and ``contact_data_pub`` it
        reads only that they came)."""
        from executive.robots.aurora.wire import types as idl
        from executive.robots.aurora.wire.node import header

        h = header(now=self.clock.wall_offset() + self.clock())
        if topic == "aurora_state":
            return idl.AuroraState(
                header=h,
                velocity_command_source=status["velocity_command_source"],
                whole_body_fsm_state=status["whole_body_fsm_state"],
                upper_body_fsm_state=status["upper_body_fsm_state"],
                allow_upper_body_override=status["allow_upper_body_override"],
            )
        if topic == "robot_control_group_state":
            groups = status["groups"]
            return idl.RobotControlGroupState(
                header=h,
                group_motion_state=[g["motion"] for g in groups.values()],
                group_state=[
                    idl.ControlGroupState(
                        group_name=name,
                        joint_position=list(g["q"]),
                        joint_velocity=list(g.get("dq") or [0.0] * len(g["q"])),
                        joint_effort=[0.0] * len(g["q"]),
                    )
                    for name, g in groups.items()
                ],
                stable_level=1,
            )
        if topic == "base_data_pub":
            b = status["base"]
            return idl.BaseData(header=h, pos_W=[b["x"], b["y"], 0.0], rpy=[0.0, 0.0, b["yaw"]])
        return idl.ContactData(
            header=h, contact_force=[0.0, 0.0, 320.0, 0.0, 0.0, 0.0] * 2, contact_prob=[1.0, 1.0]
        )

    def _bridge_step(self, now: float, periods: int) -> None:
        if self.bridge is not None and self._link is not None and self._link.process.poll() is None:
            self._next_up = self.bridge.step(self._next_up)

    def _ping(self, now: float, periods: int) -> None:
        if self.adapter is not None:
            self.adapter.ping()

    def _add(self, now: float, line: Mapping[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.add(now, line)

    def _fsm_changed(self, before: tuple[int, int], now: float) -> None:
        after = (self.model.whole, self.model.upper)
        if after != before:
            self._add(now, {"fsm": list(after)})


# -- --realtime -------------------------------------------------------------------------------


@dataclass
class _ControlClient:
    """``--realtime``: faults into the sim process through its control port."""

    port: int

    def _request(self, message: dict[str, Any]) -> None:
        from executive.robots.aurora.sim.control import request

        answer = request(self.port, message)
        if not answer.get("ok"):
            raise ValueError(str(answer.get("error", answer)))

    def fault(self, spec: str) -> None:
        self._request(fault_message(spec))

    def clear(self, spec: str) -> None:
        self._request(clear_message(spec))

    def press(self, button: str) -> None:
        raise ValueError("the Aurora has no operator buttons")


class _ControlPort:
    """``--realtime``'s meeting point (``RealWire``): the sim's control port, a free loopback
    port chosen here (``--control-port``); the wire itself is the service's DDS domain."""

    def __init__(self) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            self.port: int = s.getsockname()[1]
        self.sim_args = ["--control-port", str(self.port)]
        self.service_config: dict[str, Any] = {}

    def sim_ready(self, stack: Any, pid: int) -> bool:
        """Whether the sim process answers on its control port within ``READY_S``."""
        from executive.robots.aurora.sim.control import request

        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if stack.pid("sim") != pid:
                return False
            try:
                if request(self.port, {"status": True}, timeout=0.5).get("ok"):
                    return True
            except (TimeoutError, OSError):
                time.sleep(0.1)
        return False

    def fault_client(self) -> _ControlClient:
        return _ControlClient(self.port)

    def close(self) -> None:
        pass


# -- the part ---------------------------------------------------------------------------------


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _check(key: str, value: object) -> str | None:
    if key in ("speed", "rate"):
        n = _number(value)
        return None if n is not None and n > 0 else "must be a number > 0"
    if key == "fsm":
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 11
        return None if ok else "must be a whole-body FSM id 0..11"
    if key == "no_override":
        return None if isinstance(value, bool) else "must be true or false"
    if key == "physics":
        return None if value in PHYSICS else f"must be one of {', '.join(PHYSICS)}"
    return None if value in INTERFACES else f"must be one of {', '.join(INTERFACES)}"


class _Part:
    """The Aurora's ``LockstepPart`` (``executive.seam.lockstep``)."""

    world_keys: Mapping[str, str] = {k: what for k, (what, _) in WORLD.items()}
    simulator = "the simulated Aurora"
    buttons: tuple[str, ...] = ()

    def check_world(self, world: Mapping[str, Any], base: Path) -> list[tuple[str, str]]:
        return [(k, why) for k, v in world.items() if (why := _check(k, v))]

    def check_fault(self, spec: str, world: Mapping[str, Any]) -> str | None:
        try:
            fault_message(spec)
        except ValueError as e:
            return str(e)
        return None

    def open(
        self,
        profile: RobotProfile,
        clock: SimClock,
        world: Mapping[str, Any],
        base: Path,
        record: Path,
    ) -> LocalAurora:
        groups = {g: len(joints) for g, joints in profile.topics.items()}
        sizes = {g: groups.get(g, n) for g, n in GR3_GROUP_SIZES.items()}  # the sim's, in order
        body = None
        if world.get("physics", "mujoco") == "mujoco":  # the sim process's default
            from executive.robots.aurora.sim.body import SimBody  # MuJoCo: only when asked for

            body = SimBody(profile, sizes)
        return LocalAurora(clock, world, record, sizes, body)

    def motion_after(self, record: Path, after: float, before: float = math.inf) -> list[str]:
        """Every command in ``record`` taken in (``after``, ``before``] that moves the robot:
        a group commanded to move to positions other than its previous command's (a held
        position repeated, a stop, is no motion) and a walk (a velocity not zero)."""
        last: dict[str, list[float]] = {}
        out = []
        for line in read(record):
            topic, t = line.get("topic"), float(line["t"])
            fields = line.get("fields") or {}
            if topic == GROUP_CMD:
                for c in fields.get("group_cmd", ()):
                    name, q = str(c["group_name"]), [float(x) for x in c.get("position", ())]
                    prev = last.get(name)
                    if int(c["group_motion_state"]) != GROUP_STOPPED:
                        last[name] = q
                        change = (
                            math.inf
                            if prev is None or len(prev) != len(q)
                            else max((abs(a - b) for a, b in zip(q, prev, strict=True)), default=0)
                        )
                        if change > MOVED and after < t <= before:
                            out.append(f"{GROUP_CMD} {name} at {t:.3f} s: change {change:.4f} rad")
            elif topic == VELOCITY_CMD and after < t <= before:
                v = [float(fields.get(k, 0.0)) for k in ("vx", "vy", "yaw")]
                if any(v):
                    out.append(f"{VELOCITY_CMD} at {t:.3f} s: {v}")
        return out

    def sim_argv(self, profile: RobotProfile, world: Mapping[str, Any], base: Path) -> list[str]:
        argv = ["--profile", profile.name]
        for key, value in world.items():
            flag = WORLD[key][1]
            if key == "no_override":
                argv += [flag] if value else []
            else:
                argv += [flag, str(value)]
        return argv

    def fault_client(self, participant: Any) -> _ControlClient:
        raise LookupError("the simulated Aurora's faults go through its control port: real_wire")

    def real_wire(self, workdir: Path) -> _ControlPort:
        return _ControlPort()


PART = _Part()
