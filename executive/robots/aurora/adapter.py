"""The Aurora adapter, the service's half (``ports.RobotAdapter``): the bridge's supervisor.

It starts the bridge (``bridge.py``) in ``.venv-aurora`` with one end of a socket pair
(``ipc.py``), sends it the profile's configuration, and then:

- keeps the newest state the bridge sends up; ``snapshot`` turns it into a ``RobotSnapshot``
  (joints per control group, ``control`` = whole-body FSM is the profile's control FSM,
  ``fsm``, ``estop`` while the robot is in its safety FSM, ``servo_errors`` for a group in
  error, each source's receive time and health);
- the streams (one per control group) encode a group's positions as the link frame itself,
  so ``write`` is one ``sendall``; the bridge publishes them;
- the bridge's trip (it has held already) goes to the executive's fast path
  (``on_safety_event``) as the bridge names it; so does the bridge's death (below);
- ``safe_stop`` sends ``hold`` (the bridge stops every commanded group and zeroes velocity,
  and drops motion until the reset); the reflex this adapter installs is that latch: the
  executive's reset lifts it (``reset``);
- a ping every ``ipc.PING_S`` from its own thread: a bridge that hears nothing for
  ``parent_timeout_s`` while it commands anything holds on its own.

A dead bridge. Nothing the executive holds reaches the robot then, and its last command may
be a moving one. EOF on the link (the kernel closes a dead process's end) is at once
``stale_state`` naming the bridge, how it ended (its exit code, waited for up to
``EXIT_WAIT_S``: the link closes just before the process is reaped) and what to do. Then
the link thread starts a fresh bridge, latched from its start and holding what the dead one
commanded (``config``'s ``hold``: each group sent since the last reset at its last frame's
positions; zero velocity if it walked). No state survives the death: until the fresh bridge
hears the robot every source is never received (naming the death while none runs), so
``motion`` is not reported and the reset is refused. The reset lifts the fresh bridge's
latch as it did the dead one's; the service's stop releases control through it. At most
``RESPAWNS`` fresh bridges in ``RESPAWN_WINDOW_S``: past that, or if one cannot start, the
sources say to restart the service. The thread that started a bridge reads its link until
it ends: a bridge's ``PR_SET_PDEATHSIG`` fires when that *thread* exits.

Control: the whole-body FSM the profile names (``aurora.control_fsm``: upper-body user
command, 11), sent only where ``aurora_state.allow_upper_body_override`` allows it; release
sends the whole-body FSM found when control was taken (``release_fsm`` if none was seen).
``set_fsm``: ids below 256 are whole-body states, 256 + n the upper body's n
(``settings.UPPER_FSM_BASE``); the snapshot's ``fsm`` reports the machine last switched, so
a ``set_fsm`` is confirmed against the state it asked for.

In simulated time (``lockstep.py``) the participant is a ``LocalBridge``: the bridge's own
code in this process instead of the child, on a simulated clock. Everything above is the
same but what a process and its threads do: ``_launch`` takes the local bridge's link
instead of starting the child, and the scenario's loop does the link thread's work
(``pump``) and the ping thread's (``ping``) between its steps.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import structlog

from executive.logs import RateLimitedLog
from executive.robots.aurora import ipc
from executive.robots.aurora.settings import UPPER_FSM_BASE, AuroraSettings
from executive.robots.aurora.settings import check_interface as _check_interface
from executive.seam.ports import (
    AdapterError,
    FloatArray,
    Motion,
    NoCommands,
    ReaderHealth,
    RobotSnapshot,
    SafetyEvent,
    Source,
    Stamped,
    Velocity,
)
from executive.seam.profile import RobotProfile

log = structlog.get_logger(__name__)
_errors = RateLimitedLog(log)

PYTHON_ENV = "ATOM_AURORA_PYTHON"  # the bridge's interpreter, when not the checkout's
REPO = Path(__file__).resolve().parents[3]
DEFAULT_PYTHON = REPO / ".venv-aurora" / "bin" / "python"
SEND_TIMEOUT_S = 0.2  # a bridge that reads nothing for this long is stuck (its buffer full)
HELLO_TIMEOUT_S = 30.0  # the bridge's start: an interpreter, cyclonedds 11, a participant
JOINT_MOVING = 0.1  # rad/s: a group measured faster than this is moving
RESPAWNS = 3  # fresh bridges after a death, at most, in RESPAWN_WINDOW_S (then: restart)
RESPAWN_WINDOW_S = 60.0
EXIT_WAIT_S = 0.2  # after EOF, how long the link thread waits for the bridge's exit code
GROUP_ERROR = 3  # group_motion_state: error
GROUP_MOVING = 1


class BridgeError(AdapterError):
    """The bridge could not be started (its interpreter missing, its start failed)."""


@runtime_checkable
class LocalBridge(Protocol):
    """The bridge in this process (simulated time: ``lockstep.py``), as the participant the
    adapter opens on: what ``_launch`` takes instead of the child, and the clock the
    adapter reads (the bridge's stamps are on it)."""

    clock: Callable[[], float]

    def launch(self, adapter: AuroraAdapter) -> tuple[Any, Any]:
        """The bridge's process and the adapter's end of its link (``ipc.Channel``'s
        methods), as ``_launch`` gives them for the child."""
        ...


@dataclass(frozen=True)
class _Health:
    received: float | None
    errors: int
    last_error: str
    undecodable: bool


class _State:
    """The newest state message, read once into what the snapshot and the streams need."""

    def __init__(self, m: Mapping[str, Any], sizes: Mapping[str, int]) -> None:
        self.sources = {
            k: _Health(
                v["received"], int(v["errors"]), str(v["last_error"]), bool(v["undecodable"])
            )
            for k, v in m["sources"].items()
        }
        self.aurora: Mapping[str, Any] | None = m.get("aurora")
        groups: Mapping[str, Any] = m.get("groups") or {}
        self.q: dict[str, FloatArray] = {}
        self.dq: dict[str, float] = {}
        self.states: dict[str, int] = {}
        for g, v in groups.items():
            self.states[g] = int(v["state"])
            if v["q"] is not None and len(v["q"]) == sizes.get(g):
                self.q[g] = np.asarray(v["q"], dtype=np.float64)
            if v["dq"]:
                self.dq[g] = float(np.max(np.abs(np.asarray(v["dq"], dtype=np.float64))))
        self.latched: tuple[str, str] | None = (
            None if m.get("latched") is None else (str(m["latched"][0]), str(m["latched"][1]))
        )
        self.counts: Mapping[str, int] = m.get("counts") or {}
        self.first_hold_at: float | None = m.get("first_hold_at")

    def received(self, key: str) -> float | None:
        h = self.sources.get(key)
        return None if h is None else h.received


class GroupStream:
    """One control group as a ``ports.JointStream``: its frame is the link message."""

    def __init__(self, adapter: AuroraAdapter, name: str, joints: tuple[str, ...]) -> None:
        self.name = name
        self.command_key = name
        self.joints = joints
        self._adapter = adapter

    def measured(self) -> Stamped[FloatArray] | None:
        return self._adapter.measured(self.name)

    def encode(self, q: FloatArray) -> bytes:
        return ipc.encode({"t": ipc.GROUP, "g": self.name, "q": q.tolist()})

    def decode_q(self, data: bytes) -> FloatArray:
        return np.asarray(ipc.decode(data[ipc.HEADER.size :])["q"], dtype=np.float64)

    def write(self, data: bytes) -> None:
        self._adapter.send_group(self.name, data)


class AuroraCommands(NoCommands):
    """``RobotCommands`` as link messages (no navigation, faults or tasks on the Aurora)."""

    robot = "the Fourier Aurora"

    def __init__(self, adapter: AuroraAdapter) -> None:
        self.adapter = adapter
        self.last_sent: Stamped[Velocity] | None = None

    def request_control(self, on: bool) -> None:
        self.adapter.request_control(on)

    def set_fsm(self, fsm_id: int) -> None:
        self.adapter.set_fsm(fsm_id)

    def set_velocity(self, vx: float, vy: float, yaw: float, ttl: float = 0.5) -> None:
        rates = tuple(min(max(float(r), -1.0), 1.0) for r in (vx, vy, yaw))
        if not all(np.isfinite(rates)):
            raise ValueError(f"velocity must be finite, got {(vx, vy, yaw)}")
        if any(rates):
            self.adapter.walked = True
        fx, fy, fyaw = self.adapter.settings.max_velocity
        self.adapter.send(
            {
                "t": ipc.VELOCITY,
                "vx": rates[0] * fx,
                "vy": rates[1] * fy,
                "yaw": rates[2] * fyaw,
                "ttl": max(float(ttl), 0.0),
            }
        )
        self.last_sent = Stamped(Velocity(*rates), self.adapter.clock())


class BridgeLatch:
    """``ports.Reflex``: the bridge's latch after a hold; the executive's reset lifts it."""

    def __init__(self, adapter: AuroraAdapter) -> None:
        self.adapter = adapter

    def reset(self) -> None:
        self.adapter.reset_latch()


class AuroraAdapter:
    """The Aurora through its bridge (see the module docstring)."""

    name = "aurora"
    # the robot's command topics are on its own DDS (cyclonedds 11, perhaps another domain)
    # and the bridge is a participant of ours: executive.service.peers has nothing to watch
    command_topics: frozenset[str] = frozenset()

    def __init__(
        self,
        profile: RobotProfile,
        settings: AuroraSettings,
        domain: int,
        python: Path,
        dds_config: str | None = None,
        local: LocalBridge | None = None,
    ) -> None:
        self.profile = profile
        self._local = local
        self.clock: Callable[[], float] = time.monotonic if local is None else local.clock
        self.settings = settings
        self.interface_name = settings.interface
        self.capabilities = profile.capabilities
        self.domain = domain
        self.sizes = {g: len(joints) for g, joints in profile.topics.items()}
        self.streams = tuple(GroupStream(self, g, tuple(j)) for g, j in profile.topics.items())
        self.commands = AuroraCommands(self)
        self.layout = {j.name: (j.topic, j.index) for j in profile.joints.values()}
        self._fsm_ids = {s.name: s.id for s in profile.fsm.values()}
        self.control_id = self._fsm_ids[settings.control_fsm]
        self.safety_id = self._fsm_ids[settings.safety_fsm]
        self._lock = threading.Lock()
        self._callbacks: list[SafetyEvent] = []
        self._state: _State | None = None
        self._names: dict[str, str] = {k: k for k in profile.sources}
        self._upper = False  # the last set_fsm was the upper body's
        self._found: int | None = None  # the whole-body FSM found when control was taken
        self._gone = ""  # why the bridge is gone ("" while one runs)
        self._closing = False
        self._stuck = False  # it stopped reading the link and was killed
        self.trips: list[tuple[str, str, float]] = []  # the bridge's, as received (code, msg, t)
        # what a fresh bridge must hold if this one dies: each group's last frame since the
        # last reset, and whether a walk was sent
        self._sent: dict[str, bytes] = {}
        self.walked = False
        self.replaced: list[tuple[int, str]] = []  # dead bridges: (pid, how it ended)
        self._respawned: list[float] = []  # when each fresh bridge was started
        self._python = python
        self._dds_config = dds_config
        self.process, self._link = self._spawn(None)
        self.pid = self.process.pid
        if local is not None:
            return  # the scenario's loop does the threads' work (pump, ping)
        self._reader = threading.Thread(target=self._read, name="aurora-link", daemon=True)
        self._reader.start()
        self._pinger = threading.Thread(target=self._ping, name="aurora-ping", daemon=True)
        self._pinger.start()

    # -- the bridge ----------------------------------------------------------------------

    def _spawn(self, hold: dict[str, Any] | None) -> tuple[subprocess.Popen[bytes], ipc.Channel]:
        """A bridge started, configured (``hold``: latched from its start) and heard;
        BridgeError saying why not."""
        process, link = self._launch()
        try:
            config = self._config(self._dds_config)
            if hold is not None:
                config["hold"] = hold
            link.send(config)
            self._await_hello(link, process)
        except BaseException:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=5.0)
            link.close()
            raise
        return process, link

    def _launch(self) -> tuple[subprocess.Popen[bytes], ipc.Channel]:
        """The bridge's process and the link to it: the child in .venv-aurora, or the
        local bridge's (simulated time)."""
        if self._local is not None:
            process, link = self._local.launch(self)
            return process, link
        ours, theirs = ipc.pair()
        link = ipc.Channel(ours)
        try:
            fd = str(theirs.fileno())
            process = subprocess.Popen(
                [str(self._python), "-m", "executive.robots.aurora.bridge", "--fd", fd],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                cwd=str(REPO),
            )
        except OSError as e:
            link.close()
            raise BridgeError(f"the Aurora bridge could not be started: {e}") from e
        finally:
            theirs.close()
        return process, link

    def _config(self, dds_config: str | None) -> dict[str, Any]:
        p, s = self.profile, self.settings
        gains = {}
        for g in p.topics:
            kp, kd = p.gains(g)
            gains[g] = {"kp": kp.tolist(), "kd": kd.tolist()}
        return {
            "t": ipc.CONFIG,
            "protocol": ipc.PROTOCOL,
            "domain": self.domain,
            "namespace": s.namespace,
            "ros_compatible": s.ros_compatible,
            "interface": s.interface,
            "dds_config": dds_config,
            "groups": self.sizes,
            "gains": gains,
            "sources": dict(p.safety_sources),
            "safety_fsm": self.safety_id,
            "motor_mode": p.motor_mode,
            "motor_cfg_mode": s.motor_cfg_mode,
            "velocity_source": s.velocity_source,
            "velocity_hz": s.velocity_hz,
            "command_hz": p.command_hz,
            "parent_timeout_s": s.parent_timeout_s,
        }

    def _await_hello(self, link: ipc.Channel, process: subprocess.Popen[bytes]) -> None:
        """The bridge's hello, or BridgeError saying why it did not come."""
        pid = process.pid
        link.sock.settimeout(HELLO_TIMEOUT_S)
        try:
            m = link.recv()
        except TimeoutError:
            raise BridgeError(
                f"the Aurora bridge (pid {pid}) said nothing within {HELLO_TIMEOUT_S:g} s"
            ) from None
        finally:
            link.sock.settimeout(None)
        if m is None:
            code = process.wait(timeout=5.0)
            raise BridgeError(f"the Aurora bridge (pid {pid}) exited with code {code} at start")
        if m["t"] == ipc.ERROR:
            raise BridgeError(str(m["message"]))
        if m["t"] != ipc.HELLO or m.get("protocol") != ipc.PROTOCOL:
            raise BridgeError(f"the Aurora bridge answered {m!r}, not its hello")
        self._names = {k: str(v) for k, v in m["names"].items()}
        log.info("aurora bridge up", pid=pid, domain=m["domain"], interface=m["interface"])

    def _read(self) -> None:
        """The link thread: each bridge's state, trips and errors until its link ends, then
        (unless closing) its death reported and a fresh bridge started to hold the robot."""
        while True:
            why = self._read_link(self._link)
            if self._closing:
                return
            self._bridge_gone(self._ended(why))
            if not self._respawn():
                return

    def _read_link(self, link: ipc.Channel) -> str:
        """Messages until EOF or a broken frame: "" at EOF, else what broke."""
        try:
            while True:
                m = link.recv()
                if m is None:
                    return ""
                self._on_message(m)
        except ipc.FrameError as e:
            return f"a broken frame: {e}"
        except OSError as e:
            return f"the link failed: {e}"

    def _ended(self, why: str) -> str:
        """How the bridge whose link just ended ended (EOF may come just before the exit)."""
        try:
            code: int | None = self.process.wait(timeout=EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            code = None
        if self._stuck:
            how = f"stopped reading its link for {SEND_TIMEOUT_S:g} s and was killed"
        elif code is None:
            how = "closed its link" + (f" ({why})" if why else "")
        elif code < 0:
            how = f"was killed by signal {-code} ({_signal_name(-code)})"
        else:
            how = f"exited with code {code}"
        return f"the Aurora bridge (pid {self.pid}) {how}"

    def _on_message(self, m: dict[str, Any]) -> None:
        kind = m["t"]
        try:
            if kind == ipc.STATE:
                state = _State(m, self.sizes)
                with self._lock:
                    self._state = state
            elif kind == ipc.TRIP:
                code, message = str(m["code"]), str(m["message"])
                self.trips.append((code, message, self.clock()))
                self._safety(code, f"{message} (the Aurora bridge held on its own)")
                # at: the bridge's clock (CLOCK_MONOTONIC) as it tripped, for benchmarks
                log.error(
                    "aurora bridge held on its own", code=code, reason=message, at=m.get("at")
                )
            elif kind == ipc.ERROR:
                _errors.log(
                    "error", "aurora bridge", key=str(m["message"])[:40], message=m["message"]
                )
        except Exception as e:  # noqa: BLE001 - the link thread must live on
            _errors.log("error", "aurora link message failed", kind=kind, error=repr(e))

    def _bridge_gone(self, why: str) -> None:
        """SAFE_STOP at once, saying what happened and what to do; its state forgotten (no
        source, no motion is reported from a dead bridge's last word)."""
        with self._lock:
            self._gone = f"{why}; a fresh bridge is starting"
            self._state = None
        self.replaced.append((self.pid, why))
        log.error("aurora bridge gone", reason=why, pid=self.pid)
        self._safety("stale_state", _gone_message(why))

    def _respawn(self) -> bool:
        """A fresh bridge holding what the dead one commanded; False (the sources say to
        restart the service) when none may or can start. The dead one is made sure of
        first: two bridges must never command the robot."""
        why = self.replaced[-1][1]
        old = self.process
        self._link.close()
        if old.poll() is None:
            old.kill()
            try:
                old.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                return self._no_bridge(why, "it could not be killed")
        if self._closing:
            return False
        now = time.monotonic()
        self._respawned = [t for t in self._respawned if now - t < RESPAWN_WINDOW_S]
        if len(self._respawned) >= RESPAWNS:
            return self._no_bridge(
                why, f"{RESPAWNS} fresh bridges died within {RESPAWN_WINDOW_S:g} s"
            )
        self._respawned.append(now)
        sent = dict(self._sent)  # (a copy: the streamer's thread writes it)
        groups = {g: self._last_q(frame) for g, frame in sent.items()}
        hold = {"why": f"replaces {why}", "groups": groups, "velocity": self.walked}
        try:
            process, link = self._spawn(hold)
        except Exception as e:  # noqa: BLE001 - said in the sources; the latch stays
            return self._no_bridge(why, f"a fresh bridge could not start: {e}")
        with self._lock:
            self.process, self._link, self.pid = process, link, process.pid
            self._stuck = False
            closing = self._closing
            if not closing:
                self._gone = ""
        if closing:  # closed while it started: it holds and exits on bye
            self._close_bridge(process, link, bye=True)
            return False
        log.warning(
            "aurora bridge replaced: the fresh one holds the robot until the reset",
            pid=process.pid,
            replaces=self.replaced[-1][0],
            held=sorted(groups),
        )
        return True

    def _no_bridge(self, why: str, problem: str) -> bool:
        with self._lock:
            self._gone = f"{why}; {problem}: restart the service"
        log.error("aurora bridge not replaced: restart the service", reason=why, problem=problem)
        return False

    def _last_q(self, frame: bytes) -> list[float] | None:
        try:
            q = ipc.decode(frame[ipc.HEADER.size :])["q"]
        except (ipc.FrameError, KeyError):
            return None
        return [float(x) for x in q] if isinstance(q, list) else None

    def _safety(self, code: str, message: str) -> None:
        with self._lock:
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(code, message)
            except Exception as e:  # noqa: BLE001 - one failing callback must not stop the next
                _errors.log("error", "aurora safety callback failed", error=repr(e))

    def _ping(self) -> None:
        while not self._closing:
            self.ping()
            time.sleep(ipc.PING_S)

    def ping(self) -> None:
        """The service is alive (every ``ipc.PING_S``); nothing while no bridge runs."""
        self.send({"t": ipc.PING})

    def pump(self) -> None:
        """Simulated time: what the local bridge has sent up, read as the link thread reads
        it (its link's ``recv`` gives None once nothing waits)."""
        self._read_link(self._link)

    def send(self, message: dict[str, Any]) -> None:
        """A message to the bridge; nothing (logged once) when it is gone: its death is a
        fault the fast path has already latched."""
        self.send_frame(ipc.encode(message))

    def send_frame(self, frame: bytes) -> None:
        """One frame to the bridge, never waiting more than ``SEND_TIMEOUT_S``: the streamer,
        the tick thread and the fast path send here. A bridge that has stopped reading (hung,
        stopped) fills the socket's buffer; then it is killed, so that its end closes and the
        link thread reports it gone (not from here: a caller may hold the streamer's lock,
        which the fast path's hold needs)."""
        if self._gone or self._stuck:
            return
        link, process = self._link, self.process
        try:
            link.send_frame(frame, timeout=SEND_TIMEOUT_S)
        except TimeoutError:
            self._stuck = True
            log.error("aurora bridge stopped reading its link; killing it", pid=process.pid)
            process.kill()
        except OSError as e:
            _errors.log("warning", "aurora bridge unreachable", key="send", error=repr(e))

    def send_group(self, group: str, frame: bytes) -> None:
        """A group's frame (its stream's ``write``), kept for a fresh bridge's hold."""
        self._sent[group] = frame
        self.send_frame(frame)

    def reset_latch(self) -> None:
        """The executive's reset: the bridge's latch lifted; nothing is commanded since."""
        self._sent.clear()
        self.walked = False
        self.send({"t": ipc.RESET})

    def measured(self, group: str) -> Stamped[FloatArray] | None:
        with self._lock:
            state = self._state
        if state is None or group not in state.q:
            return None
        received = state.received("group_state")
        return None if received is None else Stamped(state.q[group], received)

    # -- commands ------------------------------------------------------------------------

    def request_control(self, on: bool) -> None:
        with self._lock:
            state = self._state
        aurora = None if state is None else state.aurora
        if on:
            if aurora is not None and not aurora["allow"]:
                _errors.log(
                    "warning",
                    "aurora: the robot does not allow upper-body override; control not requested",
                    key="override",
                )
                return
            if aurora is not None and aurora["whole"] != self.control_id:
                self._found = int(aurora["whole"])
            self._upper = False
            self.send({"t": ipc.FSM, "whole": self.control_id})
        else:
            if aurora is not None and aurora["whole"] == self.safety_id:
                # the robot's own protection: leaving it is an operator's act, not a release
                _errors.log(
                    "warning",
                    "aurora: the robot is in its safety FSM; control release sends nothing",
                    key="release_in_safety",
                )
                return
            back = self._found
            if back is None or back in (self.control_id, self.safety_id):
                back = self._fsm_ids[self.settings.release_fsm]
            self._upper = False
            self.send({"t": ipc.FSM, "whole": back})

    def set_fsm(self, fsm_id: int) -> None:
        if fsm_id >= UPPER_FSM_BASE:
            self._upper = True
            self.send({"t": ipc.FSM, "upper": fsm_id - UPPER_FSM_BASE})
        else:
            self._upper = False
            self.send({"t": ipc.FSM, "whole": fsm_id})

    # -- ports.RobotAdapter ----------------------------------------------------------------

    def snapshot(self) -> RobotSnapshot:
        now = self.clock()
        with self._lock:
            state, gone = self._state, self._gone
        sources = {}
        for key in self.profile.sources:
            name = self._names.get(key, key)
            h = None if state is None else state.sources.get(key)
            health = ReaderHealth(
                topic=name if not gone else f"{name} ({gone})",
                errors=0 if h is None else h.errors,
                last_error="" if h is None else h.last_error,
                undecodable=False if h is None else h.undecodable,
            )
            received = None if h is None else h.received
            sources[key] = Source(key, health.topic, received, health)
        if state is None:
            return RobotSnapshot(taken=now, layout=self.layout, sources=sources)
        group_at = state.received("group_state")
        joints = (
            {g: Stamped(q, group_at) for g, q in state.q.items() if g in self.sizes}
            if group_at is not None
            else {}
        )
        errors = (
            Stamped(
                tuple(
                    f"{g}: error (group_motion_state 3)"
                    for g, s in state.states.items()
                    if s == GROUP_ERROR
                ),
                group_at,
            )
            if group_at is not None
            else None
        )
        control = fsm = estop = None
        aurora, at = state.aurora, state.received("aurora_state")
        if aurora is not None and at is not None:
            whole = int(aurora["whole"])
            control = Stamped(whole == self.control_id, at)
            fsm = Stamped(UPPER_FSM_BASE + int(aurora["upper"]) if self._upper else whole, at)
            safety: tuple[str, ...] = (
                (f"whole-body FSM {whole} (security protection)",)
                if whole == self.safety_id
                else ()
            )
            estop = Stamped(safety, at)
        return RobotSnapshot(
            taken=now,
            joints=joints,
            layout=self.layout,
            control=control,
            fsm=fsm,
            estop=estop,
            servo_errors=errors,
            sources=sources,
        )

    def wire_mismatches(self) -> list[str] | None:
        """Types are matched by name on the robot's side (IgnoreTypeInformation): nothing to
        compare here; a wrong variant shows as undecodable or never-received state."""
        return None

    def on_safety_event(self, callback: SafetyEvent) -> None:
        with self._lock:
            self._callbacks.append(callback)
            gone = self._gone
        if gone:  # died before anyone listened: still a fault
            callback("stale_state", _gone_message(self.replaced[-1][1]))

    def safe_stop(self) -> None:
        """The bridge holds every commanded group and zeroes velocity, latched until the
        reset. Never raises (the fast path calls it)."""
        try:
            self.send({"t": ipc.HOLD, "why": "the executive's safe stop"})
        except Exception as e:  # noqa: BLE001
            _errors.log("error", "aurora safe stop failed", error=repr(e))

    def install_reflex(self, streamer: Any, on_trip: Callable[[Any], None]) -> BridgeLatch:
        """The bridge is the Aurora's reflex: it holds on its own, then tells the executive
        (through ``on_safety_event``); what the reset clears is its latch."""
        return BridgeLatch(self)

    def motion(self) -> Motion:
        """From the groups' newest state; not reported (None) while it is older than its
        safety limit, or none is heard (a dead bridge's last word is not the robot's now)."""
        with self._lock:
            state = self._state
        sent = self.commands.last_sent
        at = None if state is None else state.received("group_state")
        limit = self.profile.safety_sources.get("group_state")
        now = self.clock()
        if state is None or at is None or (limit is not None and now - at > limit):
            return Motion(None, velocity_sent=sent)
        speed = {g: Stamped(v, at) for g, v in state.dq.items()}
        reasons = [
            f"group {g} moves at {v:.2f} rad/s"
            for g, v in sorted(state.dq.items())
            if v > JOINT_MOVING
        ]
        reasons += [
            f"group {g} reports moving"
            for g, s in sorted(state.states.items())
            if s == GROUP_MOVING
        ]
        if sent is not None and not sent.sample.zero and sent.age(now) < 1.0:
            reasons.append("walking on the velocity this executive sends")
        return Motion(bool(reasons), tuple(reasons), velocity_sent=sent, joint_speed=speed)

    def leftovers(self) -> tuple[str, ...] | None:
        """Upper-body user command left on (someone's control), groups moving; None until the
        robot's FSM and groups have been heard."""
        with self._lock:
            state = self._state
        if state is None or state.aurora is None or state.received("group_state") is None:
            return None
        out = []
        if int(state.aurora["whole"]) == self.control_id:
            out.append(
                f"whole-body FSM {self.settings.control_fsm} ({self.control_id}) on: upper-body "
                "control left taken"
            )
        out += list(self.motion().reasons)
        return tuple(out)

    def make_safe_now(self) -> tuple[str, ...]:
        """Zero velocity: it only stops (another live controller's stream sends its own at
        its next period), and the robot does not report the velocity it walks on."""
        self.send({"t": ipc.VELOCITY, "vx": 0.0, "vy": 0.0, "yaw": 0.0, "ttl": 0.0})
        return ("zero velocity sent (the robot does not report the velocity it walks on)",)

    def make_safe(self) -> tuple[str, ...]:
        """Upper-body control handed back (the profile's release FSM) if it was left taken."""
        with self._lock:
            state = self._state
        if state is None or state.aurora is None or int(state.aurora["whole"]) != self.control_id:
            return ()
        back = self._fsm_ids[self.settings.release_fsm]
        self.send({"t": ipc.FSM, "whole": back})
        return (
            f"whole-body FSM {self.settings.release_fsm} ({back}) sent: upper-body control released",
        )

    def bridge_state(self) -> _State | None:
        """The bridge's newest state message (tests, benchmarks: its counts and first hold)."""
        with self._lock:
            return self._state

    def close(self) -> None:
        with self._lock:
            if self._closing:
                return
            self._closing = True
            process, link, running = self.process, self._link, not self._gone
        self._close_bridge(process, link, bye=running)

    @staticmethod
    def _close_bridge(process: subprocess.Popen[bytes], link: ipc.Channel, *, bye: bool) -> None:
        """Bye to a bridge (it holds, then exits); killed if it does not exit."""
        try:
            if bye:
                link.send_frame(ipc.encode({"t": ipc.BYE}), timeout=SEND_TIMEOUT_S)
            process.wait(timeout=5.0)
        except (OSError, subprocess.TimeoutExpired):
            if process.poll() is None:
                process.kill()
                process.wait(timeout=5.0)
        finally:
            link.close()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown"


def _gone_message(why: str) -> str:
    """The SAFE_STOP reason for a dead bridge: what happened, and what to do."""
    return (
        f"{why}: the service's wire child is dead, so no state comes from the robot and "
        "nothing reaches it; a fresh bridge is started to hold it: reset once it hears the "
        "robot again (if none starts, restart the service)"
    )


def bridge_python() -> Path:
    """The bridge's interpreter: ``ATOM_AURORA_PYTHON``, else the checkout's .venv-aurora."""
    raw = os.environ.get(PYTHON_ENV)
    return Path(raw) if raw else DEFAULT_PYTHON


def open(  # the name executive.seam.registry.open_adapter calls
    profile: RobotProfile,
    *,
    participant: Any = None,
    interface: str | None = None,
    settings: AuroraSettings | None = None,
    domain: int | None = None,
    python: Path | str | None = None,
    dds_config: str | None = None,
    **_: Any,
) -> AuroraAdapter:
    """The Aurora adapter for ``profile``: its bridge started and heard. The robot's domain:
    ``domain``, else the profile's ``aurora.domain``, else the executive's own (the
    participant's, or ``ATOM_DDS_DOMAIN``). ``interface`` picks the wire variant over the
    profile's. BridgeError when the bridge cannot start (``make aurora-env``). A
    ``LocalBridge`` as the participant: the bridge in this process (simulated time)."""
    settings = settings or AuroraSettings.from_options(profile.options)
    if interface is not None:
        if (why := _check_interface(interface)) is not None:
            raise ValueError(why)
        settings = AuroraSettings(**{**settings.__dict__, "interface": interface})
    if domain is None:
        domain = settings.domain
    if domain is None:
        domain = getattr(participant, "domain_id", None)
    if domain is None:
        from executive.wire.dds import domain_id_from_env

        domain = domain_id_from_env()
    local = participant if isinstance(participant, LocalBridge) else None
    exe = Path(python) if python is not None else bridge_python()
    if local is None and not exe.exists():
        raise BridgeError(
            f"the Aurora bridge's interpreter {exe} does not exist: run `make aurora-env` "
            f"(or set {PYTHON_ENV})"
        )
    return AuroraAdapter(profile, settings, int(domain), exe, dds_config, local)
