"""The Aurora adapter's child process: the robot's DDS on cyclonedds 11, the service's link.

Run by the adapter (``interface.py``) as ``.venv-aurora/bin/python -m
executive.robots.aurora.bridge --fd N``, N its end of the link (``ipc.py``). It imports only
the standard library and ``wire/`` (cyclonedds 11): never the service's packages.

What it does:

- reads the robot's state topics (``SOURCES``), stamps each sample with its own
  ``time.monotonic()`` and sends the newest of all up every ``UP_S`` (a trip at once);
- writes what the service asks: a joint group's positions (``robot_control_group_cmd``, one
  sample carrying every group commanded in the last ``fresh_s``: the robot's reader keeps one
  sample, so each is the whole state, never a delta), the group's gains once it engages
  (``robot_motor_cfg_group_cmd``), FSM changes, and the walk (``velocity_source_cmd`` then
  ``velocity_cmd`` streamed at ``velocity_hz`` until its ttl, zeros after);
- trips on its own, without waiting for the service: the whole-body FSM entering the safety
  state (9), a group's ``group_motion_state`` 3 (error), a state topic silent past its limit
  or undecodable, the service silent past ``parent_timeout_s`` (the last two while it
  commands anything). A trip holds first (every group commanded since the last reset sent
  ``group_motion_state`` 2 at its last position, zero velocity), latches (every moving
  command from the service is dropped until its reset), then tells the service;
- the service's ``hold`` (its safe stop) does the same without the message up;
- starts held when the config carries ``hold`` (the adapter replacing a bridge that died:
  the groups the dead one commanded, their last positions, whether it walked): latched
  before it reads a frame from the service, its hold repeated until the executive's reset;
- dies with the service: EOF on the link (the kernel closes a dead process's socket) or the
  parent-death signal (``PR_SET_PDEATHSIG``) holds, then exits.

In simulated time (``lockstep.py``) the same ``Bridge`` runs in the service's process: its
robot's endpoints (``node``) the simulated robot's, its messages up (``uplink``) queued on
the in-process link, its loop (``step``) run by the scenario's clock.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import math
import os
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from cyclonedds.core import Listener

from executive.robots.aurora import ipc
from executive.robots.aurora.wire import config as wc
from executive.robots.aurora.wire import types as _types
from executive.robots.aurora.wire.config import WireConfig
from executive.robots.aurora.wire.node import AuroraNode, header, is_valid
from executive.robots.aurora.wire.topics import type_for

# the adapter's source keys (the profile's) -> the robot's state topic (base name)
SOURCES = {
    "aurora_state": "aurora_state",
    "group_state": "robot_control_group_state",
    "base_data": "base_data_pub",
    "contact_data": "contact_data_pub",
}
UP_S = 0.01  # s: the state goes up at most this often (100 Hz)
TICK_S = 0.005  # s: the bridge's own loop (velocity stream, silence, the hold's repeats)
HOLD_REPEAT_S = 0.1  # s: while latched the stop is sent again (the robot's reader keeps one)
SOURCE_REPEAT_S = 0.2  # s: velocity_source_cmd again while the robot reports another source
ZERO_REPEATS = 3  # zero velocity samples after a walk or on a hold
GAIN_REPEATS = 3  # motor config samples when a group engages (a lost one is not re-asked)
PR_SET_PDEATHSIG = 1
# the wire's classes are cyclonedds 11's; mypy runs in .venv, against 0.10.2's annotations of
# the same names (a sequence there is not a list): the classes are used untyped here
wt: Any = _types
_Listener: Any = Listener


class Uplink:
    """What goes up to the service, sent by a thread of its own: nothing that trips or holds
    ever waits on the link. A stopped service stops reading; the socket's buffer fills in
    about a second of state, and a blocking send there once stopped the bridge's own loop
    before it could judge the service silent (the robot was never held). Messages (trips,
    errors) queue, at most ``QUEUE`` of them; the state is the newest only."""

    QUEUE = 256

    def __init__(self, link: ipc.Channel) -> None:
        self.link = link
        self._cv = threading.Condition()
        self._messages: deque[dict[str, Any]] = deque(maxlen=self.QUEUE)
        self._state: dict[str, Any] | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="aurora-uplink", daemon=True)
        self._thread.start()

    def send(self, message: dict[str, Any]) -> None:
        with self._cv:
            self._messages.append(message)
            self._cv.notify()

    def state(self, message: dict[str, Any]) -> None:
        with self._cv:
            self._state = message
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while not (self._messages or self._state is not None or self._closed):
                    self._cv.wait()
                if self._messages:
                    message: dict[str, Any] | None = self._messages.popleft()
                else:
                    message, self._state = self._state, None
                if message is None and self._closed:
                    return
            if message is not None:
                try:
                    self.link.send(message)
                except OSError:
                    return  # the service is gone: EOF ends the bridge

    def close(self, timeout: float = 1.0) -> None:
        """Send what is queued (for up to ``timeout`` s), then stop."""
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join(timeout)


class Bridge:
    """The robot's side of the adapter (see the module docstring). Thread-safe: the link
    thread, cyclone's listener threads and the bridge's loop share one lock."""

    def __init__(
        self,
        link: ipc.Channel,
        cfg: dict[str, Any],
        clock: Callable[[], float] = time.monotonic,
        *,
        node: Callable[[WireConfig], Any] = AuroraNode,
        uplink: Callable[[ipc.Channel], Any] = Uplink,
    ) -> None:
        self.link = link
        self.up = uplink(link)  # every message up, never blocking the safety path
        self.cfg = cfg
        self.clock = clock
        self.wire = WireConfig(
            domain=int(cfg["domain"]),
            namespace=str(cfg["namespace"]),
            ros_compatible=bool(cfg["ros_compatible"]),
            interface=str(cfg["interface"]),
            **({"dds_config": cfg["dds_config"]} if cfg.get("dds_config") else {}),
        )
        self.groups: dict[str, int] = {str(k): int(v) for k, v in cfg["groups"].items()}
        self.gains: dict[str, tuple[list[float], list[float]]] = {
            g: (list(v["kp"]), list(v["kd"])) for g, v in cfg["gains"].items()
        }
        self.limits: dict[str, float] = {str(k): float(v) for k, v in cfg["sources"].items()}
        self.safety_fsm = int(cfg["safety_fsm"])
        self.motor_mode = int(cfg["motor_mode"])
        self.motor_cfg_mode = int(cfg["motor_cfg_mode"])
        self.velocity_source = int(cfg["velocity_source"])
        self.velocity_period = 1.0 / float(cfg["velocity_hz"])
        self.fresh_s = max(0.1, 5.0 / float(cfg["command_hz"]))
        self.parent_timeout_s = float(cfg["parent_timeout_s"])
        self.lock = threading.RLock()
        # state, newest per source: (received, the fields the service reads)
        self.latest: dict[str, tuple[float, Any] | None] = dict.fromkeys(SOURCES)
        self.health: dict[str, dict[str, Any]] = {
            k: {"errors": 0, "last_error": "", "undecodable": False} for k in SOURCES
        }
        self.changed = True
        # commands
        self.targets: dict[str, tuple[list[float], float]] = {}  # group -> (q, when)
        self.commanded: set[str] = set()  # groups commanded since the last reset
        self.gains_due: dict[str, int] = {}
        self.velocity = (0.0, 0.0, 0.0)
        self.velocity_until = 0.0
        self.velocity_used = False
        self.zeros_due = 0
        self.next_velocity = 0.0
        self.next_source = 0.0
        self.latched: tuple[str, str] | None = None
        self.next_hold = 0.0
        self.last_parent = clock()
        self.last_motion = -math.inf  # the last group or walk command from the service
        self.counts = {"group": 0, "hold": 0, "velocity": 0, "dropped": 0, "fsm": 0}
        self.first_hold_at: float | None = None
        if (hold := cfg.get("hold")) is not None:
            self._start_held(hold)
        self._stop = threading.Event()
        self.node = node(self.wire)
        # each command topic's class under this config: the variant's, or its ROS twin
        # (another type name: a plain class is refused by a twin's writer)
        self.cls: dict[str, Any] = {
            topic: type_for(self.wire, topic)
            for topic in (
                "robot_control_group_cmd",
                "robot_motor_cfg_group_cmd",
                "whole_body_fsm_state_change_cmd",
                "upper_body_fsm_state_change_cmd",
                "velocity_source_cmd",
                "velocity_cmd",
            )
        }
        w = self.node.writer
        self.w_group = w("robot_control_group_cmd")
        self.w_cfg = w("robot_motor_cfg_group_cmd")
        self.w_whole = w("whole_body_fsm_state_change_cmd")
        self.w_upper = w("upper_body_fsm_state_change_cmd")
        self.w_source = w("velocity_source_cmd")
        self.w_velocity = w("velocity_cmd")
        self.readers = [
            self.node.reader(topic, listener=_Listener(on_data_available=self._receiver(key)))
            for key, topic in SOURCES.items()
        ]
        self._thread = threading.Thread(target=self._loop, name="aurora-bridge", daemon=True)

    def _start_held(self, hold: dict[str, Any]) -> None:
        """Latched from the start, holding what the bridge this one replaces commanded:
        its loop sends the hold at once and every ``HOLD_REPEAT_S`` until the reset (the
        first ones may reach no one: the robot's readers are still being discovered)."""
        for g, q in hold["groups"].items():
            if g in self.groups:
                self.commanded.add(g)
                if q is not None and len(q) == self.groups[g]:
                    self.targets[g] = ([float(x) for x in q], -math.inf)
        self.velocity_used = bool(hold["velocity"])
        self.latched = ("hold", str(hold["why"]))

    def hello(self) -> dict[str, Any]:
        return {
            "t": ipc.HELLO,
            "protocol": ipc.PROTOCOL,
            "pid": os.getpid(),
            "interface": self.wire.interface,
            "domain": self.wire.domain,
            "names": {k: self.wire.topic(topic) for k, topic in SOURCES.items()},
        }

    def start(self) -> None:
        self._thread.start()

    # -- state from the robot (cyclone's listener threads) -----------------------------------

    def _receiver(self, key: str) -> Callable[[Any], None]:
        def on_data(reader: Any) -> None:
            if reader is None:  # cyclonedds called before its reader object was made (a
                return  # robot already publishing at start-up): the next call takes them
            try:
                samples = reader.take(N=16)
            except Exception as e:  # noqa: BLE001 - a listener: never raise into cyclone
                self._undecodable(key, f"{type(e).__name__}: {e}")
                return
            try:
                for sample in samples:
                    if is_valid(sample):  # a Fast DDS peer leaving hands us fieldless ones
                        self._receive(key, sample)
            except Exception as e:  # noqa: BLE001
                self._undecodable(key, f"{type(e).__name__}: {e}")

        return on_data

    def _receive(self, key: str, sample: Any) -> None:
        now = self.clock()
        if key == "aurora_state":
            fields: Any = {
                "source": int(sample.velocity_command_source),
                "whole": int(sample.whole_body_fsm_state),
                "upper": int(sample.upper_body_fsm_state),
                "allow": bool(sample.allow_upper_body_override),
            }
        elif key == "group_state":
            fields = self._groups(sample)
        else:
            fields = None  # heard is all the service needs of it
        with self.lock:
            self.latest[key] = (now, fields)
            self.health[key]["undecodable"] = False
            self.changed = True
        if key == "aurora_state" and fields["whole"] == self.safety_fsm:
            self.trip(
                "estop",
                f"{self.wire.topic('aurora_state')}: whole-body FSM {self.safety_fsm} "
                "(security protection)",
            )
        elif key == "group_state":
            errors = [g for g, v in fields.items() if v["state"] == wc.GROUP_ERROR]
            if errors:
                self.trip(
                    "servo_error",
                    f"{self.wire.topic('robot_control_group_state')}: group_motion_state "
                    f"{wc.GROUP_ERROR} (error) on {', '.join(errors)}",
                )

    def _groups(self, sample: Any) -> dict[str, dict[str, Any]]:
        """Each group's positions, velocities and motion state; a state with no group of
        that index is named as the vendor orders them."""
        out: dict[str, dict[str, Any]] = {}
        states = list(sample.group_motion_state)
        for i, g in enumerate(sample.group_state):
            q = [float(x) for x in g.joint_position]
            if not all(math.isfinite(x) for x in q):
                raise ValueError(f"group {g.group_name}: a non-finite joint position")
            out[str(g.group_name)] = {
                "q": q,
                "dq": [float(x) for x in g.joint_velocity],
                "state": int(states[i]) if i < len(states) else 0,
            }
        for i, state in enumerate(states[len(out) :], start=len(out)):
            if i < len(wc.GROUP_NAMES) and wc.GROUP_NAMES[i] not in out:
                out[wc.GROUP_NAMES[i]] = {"q": None, "dq": None, "state": int(state)}
        return out

    def _undecodable(self, key: str, why: str) -> None:
        with self.lock:
            h = self.health[key]
            h["errors"] += 1
            h["last_error"] = why
            h["undecodable"] = True
            self.changed = True
        self.trip("undecodable", f"{self.wire.topic(SOURCES[key])}: undecodable sample ({why})")

    # -- the safety path -------------------------------------------------------------------

    def trip(self, code: str, message: str, *, tell: bool = True) -> None:
        """Hold, latch, then (``tell``) say so to the service; once per latch."""
        at = self.clock()  # the decision, before the hold is written (benchmarks split here)
        with self.lock:
            if self.latched is not None:
                return  # held already; the loop repeats the stop
            self.latched = (code, message)
            self._hold()
        if tell:
            self._send({"t": ipc.TRIP, "code": code, "message": message, "at": at})

    def failed(self, why: str) -> None:
        """A command from the service that raised: what it asked is not what the robot
        does, so hold (a stale command must not go on driving it) and latch, saying why."""
        self._send({"t": ipc.ERROR, "message": f"the bridge could not carry out {why}"})
        self.trip("internal", f"the Aurora bridge could not carry out {why}: held")

    def _hold(self) -> None:
        """Every group commanded since the last reset stopped (group_motion_state 2, at its
        last position), zero velocity. Caller holds the lock."""
        now = self.clock()
        if self.commanded:
            cmds = [
                wt.ControlGroupCmd(
                    group_name=g,
                    group_motion_state=wc.GROUP_STOPPED,
                    control_type=0,
                    motor_mode=self.motor_mode,
                    position=list(self.targets[g][0]) if g in self.targets else [],
                )
                for g in sorted(self.commanded)
            ]
            try:
                self.w_group.write(
                    self.cls["robot_control_group_cmd"](header=header(), group_cmd=cmds)
                )
                self.counts["hold"] += 1
                if self.first_hold_at is None:
                    self.first_hold_at = now
            except Exception as e:  # noqa: BLE001 - the velocity's zero must still go out
                self._send({"t": ipc.ERROR, "message": f"hold not written: {e!r}"})
        self.velocity_until = 0.0
        if self.velocity_used or self.zeros_due:
            self._write_velocity(0.0, 0.0, 0.0)
            self.zeros_due = ZERO_REPEATS - 1
        self.next_hold = now + HOLD_REPEAT_S

    # -- commands from the service (the link thread) ------------------------------------------

    def handle(self, m: dict[str, Any]) -> bool:
        """Carry out one message; False for ``bye``."""
        self.last_parent = self.clock()
        kind = m["t"]
        if kind == ipc.GROUP:
            self._group(str(m["g"]), [float(x) for x in m["q"]])
        elif kind == ipc.FSM:
            self._fsm(m)
        elif kind == ipc.VELOCITY:
            self._velocity(float(m["vx"]), float(m["vy"]), float(m["yaw"]), float(m["ttl"]))
        elif kind == ipc.HOLD:
            self.trip("hold", str(m.get("why", "the executive's safe stop")), tell=False)
        elif kind == ipc.RESET:
            with self.lock:
                self.latched = None
                self.commanded.clear()
                self.targets.clear()
        elif kind == ipc.BYE:
            return False
        elif kind != ipc.PING:
            self._send({"t": ipc.ERROR, "message": f"unknown message kind {kind!r}"})
        return True

    def _group(self, group: str, q: list[float]) -> None:
        size = self.groups.get(group)
        if size is None or len(q) != size:
            self._send({"t": ipc.ERROR, "message": f"group {group!r}: {len(q)} positions refused"})
            return
        with self.lock:
            if self.latched is not None:
                self.counts["dropped"] += 1
                return
            now = self.clock()
            fresh = self._fresh(now)
            if group not in fresh:
                self.gains_due[group] = GAIN_REPEATS
            self.targets[group] = (q, now)
            self.last_motion = now
            self.commanded.add(group)
            fresh = self._fresh(now)
            due = [g for g in fresh if self.gains_due.get(g, 0) > 0]
            if due:
                self._write_gains(due)
            cmds = [
                wt.ControlGroupCmd(
                    group_name=g,
                    group_motion_state=wc.GROUP_MOVING,
                    control_type=0,
                    motor_mode=self.motor_mode,
                    position=list(self.targets[g][0]),
                    velocity=[0.0] * len(self.targets[g][0]),
                    effort=[0.0] * len(self.targets[g][0]),
                )
                for g in fresh
            ]
            self.w_group.write(self.cls["robot_control_group_cmd"](header=header(), group_cmd=cmds))
            self.counts["group"] += 1

    def _fresh(self, now: float) -> list[str]:
        return sorted(g for g, (_, t) in self.targets.items() if now - t <= self.fresh_s)

    def _write_gains(self, groups: list[str]) -> None:
        seed = self.wire.interface == "seed"
        cmds = []
        for g in groups:
            self.gains_due[g] -= 1
            kp, kd = self.gains.get(g, ([], []))
            if seed:
                cmds.append(wt.MotorCfgGroupCmdSeed(group_name=g, pd_kp=kp, pd_kd=kd))
            else:
                cmds.append(
                    wt.MotorCfgGroupCmd(
                        group_name=g, mode=wt.MotorMode(self.motor_cfg_mode), pd_kp=kp, pd_kd=kd
                    )
                )
        cls = self.cls["robot_motor_cfg_group_cmd"]
        self.w_cfg.write(cls(header=header(), group_cmd=cmds))

    def _fsm(self, m: dict[str, Any]) -> None:
        with self.lock:
            self.counts["fsm"] += 1
            if "whole" in m:
                self.w_whole.write(
                    self.cls["whole_body_fsm_state_change_cmd"](
                        header=header(), desired_state=int(m["whole"])
                    )
                )
            else:
                self.w_upper.write(
                    self.cls["upper_body_fsm_state_change_cmd"](
                        header=header(), desired_state=int(m["upper"])
                    )
                )

    def _velocity(self, vx: float, vy: float, yaw: float, ttl: float) -> None:
        with self.lock:
            if not (vx or vy or yaw):
                self.velocity_until = 0.0
                self._write_velocity(0.0, 0.0, 0.0)
                self.zeros_due = ZERO_REPEATS - 1
                return
            if self.latched is not None:
                self.counts["dropped"] += 1
                return
            now = self.clock()
            self.velocity = (vx, vy, yaw)
            self.last_motion = now
            self.velocity_until = now + max(ttl, 0.0)
            self.velocity_used = True
            self.zeros_due = ZERO_REPEATS
            self._velocity_tick(now)

    def _velocity_tick(self, now: float) -> None:
        """Source first (while the robot reports another), then the velocity. Lock held."""
        aurora = self.latest["aurora_state"]
        source = None if aurora is None else aurora[1]["source"]
        if source != self.velocity_source and now >= self.next_source:
            self.w_source.write(
                self.cls["velocity_source_cmd"](
                    header=header(), desired_source=self.velocity_source
                )
            )
            self.next_source = now + SOURCE_REPEAT_S
        if now >= self.next_velocity:
            self._write_velocity(*self.velocity)
            self.next_velocity = now + self.velocity_period

    def _write_velocity(self, vx: float, vy: float, yaw: float) -> None:
        if self.wire.interface == "seed":
            sample: Any = self.cls["velocity_cmd"](header=header(), vx=vx, vy=vy, yaw=yaw)
        else:  # the robot stops by itself two periods after the stream ends
            sample = self.cls["velocity_cmd"](
                header=header(), vx=vx, vy=vy, yaw=yaw, duration=2 * self.velocity_period
            )
        self.w_velocity.write(sample)
        self.counts["velocity"] += 1

    # -- the bridge's own loop ---------------------------------------------------------------

    def _active(self, now: float) -> bool:
        """Commanding anything now: a fresh group or a walk."""
        return bool(self._fresh(now)) or self.velocity_until > now

    def _loop(self) -> None:
        next_up = 0.0
        while not self._stop.wait(TICK_S):
            next_up = self.step(next_up)

    def step(self, next_up: float) -> float:
        """One pass of the loop (every ``TICK_S``): the hold's repeats, the walk, the
        silences, the state up when ``next_up`` has come; the next ``next_up``."""
        try:
            return self._step(next_up)
        except Exception as e:  # noqa: BLE001 - the loop must outlive a bad step
            self._send({"t": ipc.ERROR, "message": f"bridge loop: {type(e).__name__}: {e}"})
            return next_up

    def _step(self, next_up: float) -> float:
        now = self.clock()
        trips: list[tuple[str, str]] = []
        with self.lock:
            if self.latched is not None:
                if now >= self.next_hold:
                    self._hold()
            elif self.velocity_until > now:
                self._velocity_tick(now)
            elif self.zeros_due > 0 and now >= self.next_velocity:
                self.zeros_due -= 1
                self._write_velocity(0.0, 0.0, 0.0)
                self.next_velocity = now + self.velocity_period
            if self.latched is None:
                trips = self._silences(now) if self._active(now) else []
                trips += self._service_silence(now)
        for code, message in trips[:1]:
            self.trip(code, message)
        if now >= next_up:
            with self.lock:
                changed, self.changed = self.changed, False
            if changed:
                self.up.state(self.state(now))
            return now + UP_S
        return next_up

    def _silences(self, now: float) -> list[tuple[str, str]]:
        out = []
        for key, limit in self.limits.items():
            latest = self.latest.get(key)
            name = self.wire.topic(SOURCES[key])
            if latest is None:
                out.append(("stale_state", f"{name} never received while commanding"))
            elif now - latest[0] > limit:
                age = now - latest[0]
                out.append(("stale_state", f"{name} silent for {age:.2f} s (limit {limit:g} s)"))
        return out

    def _service_silence(self, now: float) -> list[tuple[str, str]]:
        """The service silent past its limit while it was commanding: its last frames came
        with motion (a group, a walk). Judged from the last frame, not from now: a stopped
        service's streams stop with it, and the robot still runs on their last command."""
        quiet = now - self.last_parent
        was_active = self.last_parent - self.last_motion <= self.fresh_s
        if quiet <= self.parent_timeout_s or not was_active:
            return []
        why = (
            f"the Aurora bridge heard nothing from the service for {quiet:.2f} s "
            f"(limit {self.parent_timeout_s:g} s) while it commanded motion: held"
        )
        return [("internal", why)]

    def state(self, now: float) -> dict[str, Any]:
        with self.lock:
            return {
                "t": ipc.STATE,
                "at": now,
                "sources": {
                    k: {"received": None if v is None else v[0], **self.health[k]}
                    for k, v in self.latest.items()
                },
                "aurora": None
                if self.latest["aurora_state"] is None
                else self.latest["aurora_state"][1],
                "groups": None
                if self.latest["group_state"] is None
                else self.latest["group_state"][1],
                "latched": self.latched,
                "velocity": [*self.velocity, self.velocity_until > now],
                "counts": dict(self.counts),
                "first_hold_at": self.first_hold_at,
            }

    def _send(self, message: dict[str, Any]) -> None:
        self.up.send(message)  # never blocks (Uplink)

    def close(self, why: str) -> None:
        """Hold (the service is gone or closing), then end the loop and the participant."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=1.0)
        with self.lock:
            self.latched = self.latched or ("hold", why)
            self._hold()
        self.up.close(timeout=0.5)
        self.node.close()


def _die_with_parent() -> None:
    """SIGTERM when the parent dies (Linux), whatever else happens to the link."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fd", type=int, required=True, help="this end of the link")
    args = parser.parse_args(argv)
    link = ipc.Channel(socket.socket(fileno=args.fd))
    terminated: list[str] = []

    def on_term(*_: object) -> None:
        # End the loop the way EOF does: raising SystemExit here could land inside
        # ``bridge.close`` (the parent-death SIGTERM races the link's EOF when the service
        # is killed) and skip the hold (tests/integration/test_aurora_supervision.py).
        terminated.append("the service is gone (SIGTERM)")
        with contextlib.suppress(OSError):
            link.sock.shutdown(socket.SHUT_RDWR)

    signal.signal(signal.SIGTERM, on_term)
    _die_with_parent()
    first = link.recv()
    if first is None or first.get("t") != ipc.CONFIG:
        print("aurora bridge: no config on the link", file=sys.stderr)  # noqa: T201
        return 2
    try:
        bridge = Bridge(link, first)
    except Exception as e:  # noqa: BLE001 - tell the service why, then fail
        with contextlib.suppress(OSError):
            link.send({"t": ipc.ERROR, "message": f"bridge start: {type(e).__name__}: {e}"})
        print(f"aurora bridge: {type(e).__name__}: {e}", file=sys.stderr)  # noqa: T201
        return 2
    link.send(bridge.hello())
    bridge.start()
    why = "the service closed the link"
    try:
        while True:
            m = link.recv()
            if m is None:
                why = terminated[0] if terminated else "the service is gone (EOF on the link)"
                break
            try:
                if not bridge.handle(m):
                    break
            except Exception as e:  # noqa: BLE001 - a command it cannot carry out: hold, say so
                bridge.failed(f"{m.get('t')!r}: {type(e).__name__}: {e}")
    except (ipc.FrameError, OSError) as e:
        why = terminated[0] if terminated else f"a broken link to the service: {e}"
    finally:
        bridge.close(why)
    return 0


if __name__ == "__main__":
    sys.exit(main())
