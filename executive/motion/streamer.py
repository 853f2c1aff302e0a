"""The motion streamer: the only code that publishes joint commands.

A fixed-rate thread (default 500 Hz, monotonic deadlines, overruns counted) publishes
the robot's joint streams (``ports.JointStream``: the Atom's upper, lower and hands
commands; the Adam's whole body and hands) for every *engaged* stream from the current
targets, sampling the active trajectories each period. A stream engages when a trajectory
first moves one of its joints and stays engaged (holding its last target) until
``disengage``: a stream the executive never used is never published, so it cannot fight
the firmware's own controller for the legs. Where one command carries the whole body
(``whole_body``), moving an arm engages it all: every other joint is held where it was
measured when it engaged.

``hold()`` is the safety fast path. It may be called from any thread (the safety
reaction calls it); under the same lock the period uses, it drops every trajectory,
freezes each engaged stream at the measured position, and publishes that hold at once.
Because publishing happens only under that lock, once ``hold()`` returns no command other
than the hold can leave, and while held every ``submit`` is refused until ``release()``.

The e-stop reflex (``executive.robots.native``) holds before Python knows. Every command leaves
through its gate (``Gate.publish``), and after each one the streamer stores the stream's
hold for it: the stream frozen at the measured position, or, while held, the command just
sent. When the reflex trips it writes those holds from C; the gate then refuses any
command computed before the streamer saw the trip, and the streamer adopts the reflex's
hold (``_adopt``: held, each target the position the reflex sent) before it publishes
again. Only the executive's reset clears a reflex trip; ``release()`` does not.

Every command is checked before it leaves: finite, inside the profile's limits, kp > 0.

A streamer that did not run for a while (its process stopped, starved, the interpreter
blocked) never jumps along its trajectories to where they would be by now: after a gap of
``SHIFT_AFTER_S`` its trajectories resume where they were left, and after ``stall_s`` (the
executive's own stall: SAFE_STOP internal follows) it holds at once. Before issue 25 the
first period after a 3 s SIGSTOP commanded the arm 1 rad ahead of where it was.

With ``native=True`` (the profile's ``stream_mode: native``, ``executive.motion.native``)
no Python runs per period: the extension's thread samples and writes every engaged
stream, and this streamer only hands it plans (after every change, and every
``native.RENEW_S``, renewing its dead man). Everything above holds the same: the lock,
the gate (the C thread writes under the reflex's gate), the hold (the plan and a write at
once, under that gate). A stream without a layout, or a missing extension, falls back to
the Python thread, saying so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog

from executive.logs import RateLimitedLog
from executive.motion import native as nat
from executive.motion import realtime
from executive.motion.gate import Gate, PythonGate
from executive.motion.trajectory import (
    MIN_JERK_PEAK,
    FloatArray,
    PlanError,
    Trajectory,
    plan,
    required_duration,
)
from executive.seam.ports import JointStream
from executive.seam.profile import RobotProfile

log = structlog.get_logger(__name__)

PublishHook = Callable[[str, FloatArray, bool], None]

PAUSE_RAMP_S = 0.25  # a pause slows the trajectories' clock to a stop over this long
SHIFT_AFTER_S = 0.1  # a gap between periods this long: trajectories resume where they were
STALL_S = 1.0  # and this long: hold (core.safety.STALL_S: the executive has stalled)


def _ramp(dt: float) -> float:
    """Trajectory time gone ``dt`` s into a pause: the clock's rate falls linearly to 0."""
    dt = min(max(dt, 0.0), PAUSE_RAMP_S)
    return dt - dt * dt / (2 * PAUSE_RAMP_S)


class HeldError(RuntimeError):
    """Motion was requested while the streamer holds; only ``release()`` lifts a hold."""


@dataclass
class StreamStats:
    """Timing of the streamer thread, for status and benchmarks."""

    periods: int = 0
    missed: int = 0  # whole periods skipped because a period overran
    lateness: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(1 << 16))
    busy: float = 0.0  # seconds spent publishing
    scheduling: str = ""  # the thread's policy once it runs: "SCHED_FIFO 80", "SCHED_OTHER"

    def record(self, late: float, busy: float) -> None:
        self.lateness[self.periods % len(self.lateness)] = late
        self.periods += 1
        self.busy += busy

    def recent_lateness(self) -> npt.NDArray[np.float64]:
        n = min(self.periods, len(self.lateness))
        return self.lateness[:n].copy()


class _Stream:
    def __init__(self, port: JointStream, profile: RobotProfile, slot: int) -> None:
        self.port = port
        self.topic = port.name
        self.slot = slot  # its index in the gate's holds (the robot's stream order)
        self.lower, self.upper = profile.limits(port.name)
        if len(self.lower) != len(port.joints):
            raise ValueError(f"{port.name}: the profile and the robot disagree on its joints")
        self.target: FloatArray = np.zeros(len(self.lower))
        self.engaged = False
        self.trajectories: list[Trajectory] = []
        self.layout: nat.NativeLayout | None = None  # set when the stream runs natively
        self.planned = False  # the native side has a plan for it (engaged there)
        self.knots: dict[int, FloatArray] = {}  # the feed-forward by knot, this plan's
        # the trajectories (and fixed targets) the knots were computed for
        self.knots_of: tuple[tuple[Trajectory, ...], bytes] | None = None


class MotionStreamer:
    """Publishes joint commands at a fixed rate from targets and trajectories."""

    def __init__(
        self,
        streams: Sequence[JointStream],
        profile: RobotProfile,
        *,
        rate_hz: float | None = None,
        max_state_age: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        on_publish: PublishHook | None = None,
        priority: int | None = None,
        stall_s: float = STALL_S,
        native: bool = False,
        deadman_s: float = 0.1,
    ) -> None:
        self.profile = profile
        self.native = native  # asked for; ``self._core`` is set once it runs natively
        self.deadman_s = deadman_s
        self._core: Any = None  # the extension's Core the periods run on (native)
        self._seen_deadman = 0
        self._lapses: list[float] = []  # short dead-man lapses not yet logged (s silent)
        self.stall_s = stall_s
        self.period = 1.0 / (rate_hz or profile.command_hz)
        self.max_state_age = max_state_age
        self.clock = clock
        self.on_publish = on_publish
        self.priority = priority  # SCHED_FIFO priority of the thread; None: normal scheduling
        self.stats = StreamStats()
        self._overruns = RateLimitedLog(log)
        self._streams = {p.name: _Stream(p, profile, i) for i, p in enumerate(streams)}
        self._lock = threading.Lock()
        self._held = False
        self._hold_reason = ""
        self._hold_called = False  # hold() was called since the last release()
        self._gate: Gate = PythonGate([s.port.write for s in self._streams.values()])
        self._seen_trips = 0  # the reflex's trips this streamer has adopted
        # the trajectories' clock stands still here while paused (``pause``): None: it runs
        self._paused_at: float | None = None
        self._stop = threading.Event()
        # native: the dead man is armed (a stream is planned); the renewals' cadence
        self._armed = False
        self._renew_soon = threading.Event()  # a stream was engaged: renew on time from now
        self._thread: threading.Thread | None = None

    # -- the reflex ----------------------------------------------------------------------

    def command_keys(self) -> tuple[str, ...]:
        """The command writers' keys, in the order of the gate's hold slots."""
        return tuple(s.port.command_key for s in self._streams.values())

    def attach_gate(self, gate: Gate) -> None:
        """Publish through ``gate`` (the installed reflex) from now on."""
        with self._lock:
            self._gate = gate
            self._seen_trips = gate.trips()

    def _adopt(self) -> bool:
        """Take over the reflex's hold once it has tripped: held, every trajectory dropped,
        each engaged stream's target the position the reflex sent (decoded from its bytes,
        so what this streamer sends next is that same command). True if this call adopted
        a trip. Caller holds the lock."""
        if not self._gate.tripped():
            return False
        trips = self._gate.trips()
        if self._held and trips == self._seen_trips:
            return False
        self._seen_trips = trips
        self._held = True
        self._hold_reason = self._hold_reason or "e-stop (reflex)"
        for stream in self._streams.values():
            stream.trajectories.clear()
            if not stream.engaged:
                continue
            fired = self._gate.fired(stream.slot)
            if fired is not None:
                stream.target = stream.port.decode_q(fired)
            elif (measured := self.measured(stream.topic)) is not None:
                # engaged after the reflex's last hold was stored: frozen where it is
                stream.target = np.clip(measured, stream.lower, stream.upper)
        self._sync(self.clock())
        return True

    def _hold_bytes(self, stream: _Stream) -> bytes:
        """The stream frozen at the measured position (at its last target where the state
        is missing or stale), encoded: what the reflex writes if it trips before the next
        period. Caller holds the lock."""
        q = self.measured(stream.topic)
        return stream.port.encode(
            stream.target if q is None else np.clip(q, stream.lower, stream.upper)
        )

    # -- measured state ----------------------------------------------------------------

    def measured(self, topic: str) -> FloatArray | None:
        """Measured positions of ``topic``'s motors, or None if missing or stale."""
        stamped = self._streams[topic].port.measured()
        if stamped is None or stamped.age(self.clock()) > self.max_state_age:
            return None
        q = stamped.sample
        return q if np.all(np.isfinite(q)) else None

    def measured_joints(self, names: Iterable[str]) -> dict[str, float]:
        """Measured position by joint name, for planning; joints without fresh state are left out."""
        out: dict[str, float] = {}
        cache: dict[str, FloatArray | None] = {}
        for name in names:
            joint = self.profile.joints[name]
            if joint.topic not in cache:
                cache[joint.topic] = self.measured(joint.topic)
            q = cache[joint.topic]
            if q is not None:
                out[name] = float(q[joint.index])
        return out

    # -- commands from leaves ----------------------------------------------------------

    @property
    def held(self) -> bool:
        return self._held or self._gate.tripped()

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def _traj_time(self, now: float) -> float:
        """Where the trajectories are sampled at ``now``: while paused, the clock's rate
        falls from 1 to 0 over ``PAUSE_RAMP_S`` (the joints' speed too: an arm stopped dead
        at its peak speed rang for a second under the simulated Atom's gains), then stands
        still (``PAUSE_RAMP_S / 2`` past the pause)."""
        if self._paused_at is None:
            return now
        return self._paused_at + _ramp(now - self._paused_at)

    def pause(self) -> bool:
        """Stop the trajectories' clock (slowed to a stop over ``PAUSE_RAMP_S``): every
        engaged stream goes on publishing the sample it reached (not its target, not the
        measured position), so the joints stay where they are. Refused (False) while held. Idempotent."""
        with self._lock:
            self._adopt()
            if self._held:
                return False
            if self._paused_at is None:
                self._paused_at = self.clock()
                self._sync(self._paused_at)
            return True

    def unpause(self) -> None:
        """Let the clock run again without re-planning (the run ended while paused)."""
        with self._lock:
            if self._paused_at is not None:
                now = self.clock()
                lost = now - self._traj_time(now)
                for stream in self._streams.values():
                    stream.trajectories = [replace(t, t0=t.t0 + lost) for t in stream.trajectories]
            self._paused_at = None
            self._sync(self.clock())

    def resume(self) -> list[str]:
        """Start the clock again, each interrupted move re-planned from the measured pose:
        the same goal, at most the peak speed it was planned with (so within the same speed
        caps), and no sooner than it would have ended. A move whose joints have no fresh
        measured state continues from the frozen sample instead (shifted by the pause). What
        was re-planned, one line a trajectory. Raises ``HeldError`` while held."""
        with self._lock:
            self._adopt()
            if self._held:
                raise HeldError(f"motion is held: {self._hold_reason}")
            if self._paused_at is None:
                return []
            now = self.clock()
            frozen = self._traj_time(now)
            self._paused_at = None
            said = []
            for stream in self._streams.values():
                kept = []
                for traj in stream.trajectories:
                    new = self._replan(traj, frozen, now)
                    if new is None:
                        new = replace(traj, t0=traj.t0 + (now - frozen))
                        said.append(f"{traj.topic}: {len(traj.names)} joints continue")
                    else:
                        said.append(
                            f"{traj.topic}: {len(traj.names)} joints re-planned "
                            f"({new.duration:.2f} s)"
                        )
                    kept.append(new)
                stream.trajectories = kept
            self._sync(now)
            return said

    def _replan(self, traj: Trajectory, frozen: float, now: float) -> Trajectory | None:
        """``traj`` from the measured pose at ``now`` (None where that is not known or the
        plan is refused). Caller holds the lock."""
        if traj.done(frozen):
            return None
        q = self.measured(traj.topic)
        if q is None:
            return None
        measured = {n: float(q[i]) for n, i in zip(traj.names, traj.indices.tolist(), strict=True)}
        goal = {n: float(g) for n, g in zip(traj.names, traj.goal.tolist(), strict=True)}
        # the peak speed the move was planned with: none of its joints went faster
        span = float(np.max(np.abs(traj.goal - traj.start))) if len(traj.goal) else 0.0
        peak = span * MIN_JERK_PEAK / traj.duration if traj.duration > 0 and span > 0 else None
        need, _ = required_duration(self.profile, goal, measured, speed=peak)
        remaining = traj.t0 + traj.duration - frozen
        try:
            (new,) = plan(
                self.profile,
                goal,
                measured,
                now,
                duration=max(need, remaining, self.period),
                speed=peak,
            )
        except (PlanError, ValueError):
            return None
        return new

    def submit(self, trajectories: Sequence[Trajectory]) -> None:
        """Start trajectories; a new one supersedes older ones on the same joints.

        Raises HeldError while held, and ValueError if a stream that is not engaged yet
        has no fresh measured state to start holding from.
        """
        with self._lock:
            self._adopt()
            if self._held:
                raise HeldError(f"motion is held: {self._hold_reason}")
            for traj in trajectories:
                stream = self._streams[traj.topic]
                if not stream.engaged:
                    q = self.measured(traj.topic)
                    if q is None:
                        raise ValueError(f"{traj.topic}: no fresh measured state to engage from")
                    stream.target = np.clip(q, stream.lower, stream.upper)
                    stream.engaged = True
                stream.trajectories.append(traj)
            self._sync(self.clock())

    def active(self, names: Iterable[str]) -> bool:
        """Whether any trajectory still moves any of ``names``."""
        wanted = set(names)
        with self._lock:
            now = self._traj_time(self.clock())
            return any(
                not t.done(now) and wanted.intersection(t.names)
                for s in self._streams.values()
                for t in s.trajectories
            )

    def targets(self, topic: str) -> FloatArray:
        with self._lock:
            return self._streams[topic].target.copy()

    def engaged(self) -> list[str]:
        with self._lock:
            return [t for t, s in self._streams.items() if s.engaged]

    def disengage(self, topic: str) -> None:
        """Stop publishing ``topic`` (after control of it was handed back)."""
        with self._lock:
            stream = self._streams[topic]
            stream.engaged = False
            stream.trajectories.clear()
            self._gate.store_hold(stream.slot, None)  # the reflex no longer holds it
            self._sync(self.clock())

    def cancel(self, names: Iterable[str]) -> None:
        """Stop moving ``names``: each stream keeps the position its trajectories had reached."""
        wanted = set(names)
        with self._lock:
            now = self._traj_time(self.clock())
            self._adopt()  # (held: no trajectory is left to cancel)
            for stream in self._streams.values():
                keep = []
                for traj in stream.trajectories:
                    stop = {
                        i
                        for i, n in zip(traj.indices.tolist(), traj.names, strict=True)
                        if n in wanted
                    }
                    if stop:
                        stream.target[traj.indices] = traj.sample(now)
                    rest = traj.without(stop)
                    if rest is not None:
                        keep.append(rest)
                stream.trajectories = keep
            self._sync(self.clock())

    def hold_joints(self, positions: dict[str, float]) -> None:
        """Stop moving these joints and hold them at the given (measured) positions.

        What a preempted move leaves behind: its joints stay where they are measured,
        clipped to limits; other joints' trajectories go on. While the streamer holds, this
        does nothing: the hold owns every target (a leaf preempted by a SAFE-STOP must not
        retarget the arm to a position it read from possibly stale state).
        """
        with self._lock:
            self._adopt()
            if self._held:
                return
            by_topic: dict[str, dict[int, float]] = {}
            for name, q in positions.items():
                joint = self.profile.joints[name]
                by_topic.setdefault(joint.topic, {})[joint.index] = q
            for topic, qs in by_topic.items():
                stream = self._streams[topic]
                kept = (t.without(qs.keys()) for t in stream.trajectories)
                stream.trajectories = [t for t in kept if t is not None]
                if stream.engaged:
                    for index, q in qs.items():
                        if np.isfinite(q):
                            stream.target[index] = min(
                                max(q, stream.lower[index]), stream.upper[index]
                            )
            self._sync(self.clock())

    def hold(self, reason: str, *, quiet: bool = False) -> bool:
        """Freeze every engaged stream at the measured position and publish it now.

        Idempotent; safe from any thread. Where measured state is missing or stale the
        stream freezes at its last commanded target instead; after a reflex trip, at what
        the reflex sent. True if this is the first ``hold()`` since the last release (the
        reflex's own hold is not one: the reaction that follows it logs the hold).
        ``quiet``: the caller logs it (the safety reaction does, after the base's cancel:
        a log line written between the two would delay the cancel).
        """
        with self._lock:
            self._adopt()
            first = not self._hold_called
            self._hold_called = True
            measure = not self._held  # not already frozen (by an earlier hold or the reflex)
            self._held = True
            self._hold_reason = self._hold_reason or reason
            self._paused_at = None  # a hold supersedes a pause: no trajectory is left
            now = self.clock()
            for stream in self._streams.values():
                stream.trajectories.clear()
                if not stream.engaged:
                    continue
                if measure:
                    q = self.measured(stream.topic)
                    if q is not None:
                        stream.target = np.clip(q, stream.lower, stream.upper)
                self._publish(stream, now)
        if first and not quiet:
            log.warning("motion held", reason=reason)
        return first

    def release(self) -> None:
        """Allow motion again; streams keep holding their targets until a new submit.

        Not while the reflex is tripped: that hold is lifted only by the executive's reset,
        which clears the reflex first (a mission start must not undo an e-stop that Python
        has not latched yet)."""
        with self._lock:
            if self._gate.tripped():
                self._adopt()
                return
            self._held = False
            self._hold_reason = ""
            self._hold_called = False
            self._paused_at = None

    # -- the native stream (executive.motion.native) --------------------------------------

    def _start_native(self) -> bool:
        """Hand the periods to the extension's thread: True if it streams from now on. A
        stream the robot gives no layout for, or a missing extension, keeps the Python
        thread (one warning saying why)."""
        if self.clock is not time.monotonic:
            log.warning("native stream refused: the streamer runs on another clock")
            return False
        layouts: dict[str, nat.NativeLayout] = {}
        for stream in self._streams.values():
            get = getattr(stream.port, "native_layout", None)
            layout = get() if get is not None else None
            if layout is None:
                log.warning(
                    "native stream refused: the Python streamer runs instead",
                    stream=stream.topic,
                    reason="the robot's stream gives no native layout",
                )
                return False
            layouts[stream.topic] = layout
        # the C side of the gate the adapter attached: the hold and the stream share it
        core = getattr(self._gate, "_core", None)
        if core is None:
            log.warning(
                "native stream refused: the Python streamer runs instead",
                reason="no native gate attached (the extension is not built: pip install -e .)",
            )
            return False
        with self._lock:
            for stream in self._streams.values():
                stream.layout = layouts[stream.topic]
            self._core = core
            self._seen_deadman = core.renew(0.0)
            self._sync(self.clock())
        refused = core.stream_start(self.period, self.priority or 0)
        # as the Python thread reports it (status and benches read it); the log says native
        self.stats.scheduling = (
            f"SCHED_FIFO {self.priority}" if self.priority and not refused else "SCHED_OTHER"
        )
        if self.priority and refused:
            log.warning(
                "motion streamer runs at normal priority",
                policy=self.stats.scheduling,
                wanted=f"SCHED_FIFO {self.priority}",
                reason=f"{refused}: give the service LimitRTPRIO={self.priority} or "
                "CAP_SYS_NICE (deploy/atom-executive.service)",
            )
        else:
            log.info(
                "motion streamer scheduling",
                policy=self.stats.scheduling,
                stream="native",
                deadman_s=self.deadman_s,
            )
        return True

    def _sync(self, now: float, write_now: bool = False) -> None:
        """Hand every stream's plan to the native streamer (nothing in Python mode).
        Caller holds the lock."""
        if self._core is None:
            return
        for stream in self._streams.values():
            self._push(stream, now, write_now)

    def _arm(self, core: Any) -> None:
        """An engaged stream's plan needs the dead man armed: the first arms it, before its
        plan, and the renewals' cadence follows at once. Disarmed, no lapse can have been counted since; were one,
        the plan is refused for it and adopted, as any unseen lapse. Caller holds the lock."""
        if self._armed:
            return
        core.renew(self.deadman_s)
        self._armed = True
        self._renew_soon.set()

    def _push(self, stream: _Stream, now: float, write_now: bool) -> None:
        """Sample the trajectories into the target (finished ones dropped, as a period
        does), hand the native side the stream's plan, and store its hold for the reflex.
        ``write_now``: the native side writes it at once (a hold). Caller holds the lock."""
        core, layout = self._core, stream.layout
        assert core is not None and layout is not None
        if not stream.engaged:
            if stream.planned:
                core.plan(stream.slot, self._seen_trips, self._seen_deadman, None, 0, (), (),
                          b"", 0.0, 0.0, b"", -1.0, PAUSE_RAMP_S, False)  # fmt: skip
                stream.planned = False
            return
        self._arm(core)
        t = self._traj_time(now)
        if stream.trajectories:
            for traj in stream.trajectories:
                stream.target[traj.indices] = traj.sample(t)
            stream.trajectories = [tr for tr in stream.trajectories if not tr.done(t)]
        q = stream.target
        if not np.all(np.isfinite(q)):  # cannot happen through plan(); never let it out
            log.error("non-finite target refused", topic=stream.topic)
            return
        np.clip(q, stream.lower, stream.upper, out=q)
        table = np.zeros((len(q), 8))
        table[:, 0], table[:, 1], table[:, 2] = q, stream.lower, stream.upper
        for traj in stream.trajectories:  # the last one moving a joint wins, as in a period
            i = traj.indices
            table[i, 3], table[i, 4], table[i, 5] = 1.0, traj.t0, traj.duration
            table[i, 6], table[i, 7] = traj.start, traj.goal
        k0, knots = self._knots(stream, table, t)
        data = stream.port.encode(q)
        paused = -1.0 if self._paused_at is None else self._paused_at
        args = (layout.q_kind, layout.q_at, layout.tau_at, table.tobytes(), k0 * nat.KNOT_S,
                nat.KNOT_S, knots, paused, PAUSE_RAMP_S, write_now)  # fmt: skip
        rc = core.plan(stream.slot, self._seen_trips, self._seen_deadman, data, *args)
        if rc == 0:  # a trip or a dead-man hold this streamer has not seen: adopt it first
            if not (self._adopt() or self._adopt_deadman()):
                return
            return  # (adopting re-planned every stream)
        if rc < 0:
            from cyclonedds.core import DDSException

            raise DDSException(rc, f"write on {stream.port.command_key}")
        stream.planned = True
        if self._held:
            self._gate.store_hold(stream.slot, data)
        else:
            self._gate.store_hold(stream.slot, self._hold_bytes(stream), True)
        if self.on_publish is not None:
            self.on_publish(stream.topic, q.copy(), self._held)

    def _knots(self, stream: _Stream, table: FloatArray, t: float) -> tuple[int, bytes]:
        """The feed-forward's knots from trajectory time ``t`` on (the first one's index
        and the float32 torques), each computed once per plan. Caller holds the lock."""
        layout = stream.layout
        if layout is None or not layout.tau_at or layout.feedforward is None:
            return 0, b""
        moving = table[:, 3] != 0
        key = (tuple(stream.trajectories), table[~moving, 0].tobytes())
        old = stream.knots_of  # the same trajectory objects (their == compares arrays)
        same = (
            old is not None
            and old[1] == key[1]
            and len(old[0]) == len(key[0])
            and all(a is b for a, b in zip(old[0], key[0], strict=True))
        )
        if not same:
            stream.knots, stream.knots_of = {}, key
        if not stream.trajectories:
            if 0 not in stream.knots:
                stream.knots[0] = layout.feedforward(table[:, 0])
            return 0, stream.knots[0].astype("<f4").tobytes()
        k0 = int(t // nat.KNOT_S)
        out = []
        for k in range(k0, k0 + nat.knots(self.deadman_s)):
            tau = stream.knots.get(k)
            if tau is None:
                tk = k * nat.KNOT_S
                s = np.clip((tk - table[:, 4]) / np.where(table[:, 5] > 0, table[:, 5], 1.0), 0, 1)
                s = np.where(table[:, 5] > 0, s, 1.0)
                blend = s * s * s * (10.0 + s * (-15.0 + 6.0 * s))
                q = np.where(moving, table[:, 6] + (table[:, 7] - table[:, 6]) * blend, table[:, 0])
                tau = stream.knots[k] = layout.feedforward(np.clip(q, stream.lower, stream.upper))
            out.append(tau)
        for k in [k for k in stream.knots if k < k0]:
            del stream.knots[k]
        return k0, np.asarray(out, dtype="<f4").tobytes()

    def _adopt_deadman(self, count: int | None = None) -> bool:
        """Take over the native side's dead-man hold (it froze every stream at what it sent
        last). A lapse shorter than ``stall_s`` (Python was late: starved, a long call)
        resumes each trajectory where it was frozen, as the Python thread does after a gap;
        a longer one holds: every trajectory dropped, each engaged stream's target the
        position sent last. True if this call adopted a lapse. Caller holds the lock."""
        core = self._core
        if core is None:
            return False
        stats = core.stream_stats(1 << 62)
        if count is None:
            count = int(stats["deadman"])
        if count == self._seen_deadman:
            return False
        self._seen_deadman = count
        now = self.clock()
        frozen = int(stats["deadman_ns"]) / 1e9
        silent = now - (int(stats["lapsed_ns"]) / 1e9 - self.deadman_s)  # since the renewal
        if silent < self.stall_s and not self._held:
            lost = max(now - frozen, 0.0)
            self._lapses.append(silent)
            for stream in self._streams.values():
                if self._paused_at is None:  # (paused: the clock stood still anyway)
                    stream.trajectories = [replace(t, t0=t.t0 + lost) for t in stream.trajectories]
                sent = core.sent(stream.slot) if stream.engaged else []
                if sent:
                    moving = np.zeros(len(stream.target), dtype=bool)
                    for traj in stream.trajectories:
                        moving[traj.indices] = True
                    q = np.asarray(sent, dtype=np.float64)
                    stream.target[~moving] = q[~moving]
            self._sync(now)
            return True
        self._held = True
        self._hold_reason = self._hold_reason or (
            f"the native stream's dead man: Python did not renew it for {silent:.2f} s"
        )
        self._paused_at = None
        for stream in self._streams.values():
            stream.trajectories.clear()
            sent = core.sent(stream.slot) if stream.engaged else []
            if sent:
                stream.target = np.asarray(sent, dtype=np.float64)
        self._sync(now)
        return True

    def _renew(self) -> None:
        """Every ``native.RENEW_S``: re-arm the dead man, adopt a hold the native side
        made, hand it the plans (the feed-forward's next knots), and read its timing."""
        core = self._core
        assert core is not None
        with self._lock:
            held = self._held
            # nothing planned: disarmed, nothing to hold (``_push`` arms it again)
            self._armed = any(s.planned for s in self._streams.values())
            count = int(core.renew(self.deadman_s if self._armed else 0.0))
            if not self._adopt_deadman(count):
                self._adopt()
                self._sync(self.clock())
            lapses, self._lapses = self._lapses, []
            now_held = self._held and not held
        if now_held:
            log.warning("motion held", reason=self._hold_reason)
        for silent in lapses:  # the first, then a line per interval with the count
            self._overruns.log(
                "warning",
                "native stream held: Python renewed it late; the moves resume where they were",
                key="deadman",
                silent_s=round(silent, 3),
                deadman_s=self.deadman_s,
            )
        stats = core.stream_stats(self.stats.periods)
        late = np.frombuffer(stats["lateness_ns"], dtype=np.int64) / 1e9
        for value in late:
            self.stats.lateness[self.stats.periods % len(self.stats.lateness)] = value
            self.stats.periods += 1
        self.stats.periods = int(stats["periods"])
        self.stats.missed = int(stats["missed"])
        self.stats.busy = int(stats["busy_ns"]) / 1e9

    def _run_native(self) -> None:
        realtime.name_thread("stream-renew")
        realtime.tight_timer()
        if self.priority is not None and self.priority > 1:  # below the C thread
            realtime.fifo(self.priority - 1)
        while not self._stop.is_set():
            self._renew_soon.wait(nat.RENEW_S if self._armed else nat.IDLE_RENEW_S)
            self._renew_soon.clear()
            if self._stop.is_set():
                return
            self._renew()

    # -- the periodic thread -------------------------------------------------------------

    def _publish(self, stream: _Stream, now: float) -> None:
        """Sample trajectories into the target, publish it through the reflex's gate, and
        store the stream's hold for the reflex. Caller holds the lock."""
        if self._core is not None:  # the native side writes it, now
            self._push(stream, now, True)
            return
        if stream.trajectories:
            finished = []
            now = self._traj_time(now)
            for traj in stream.trajectories:
                stream.target[traj.indices] = traj.sample(now)
                if traj.done(now):
                    finished.append(traj)
            for traj in finished:
                stream.trajectories.remove(traj)
        q = stream.target
        if not np.all(np.isfinite(q)):  # cannot happen through plan(); never let it out
            log.error("non-finite target refused", topic=stream.topic)
            return
        np.clip(q, stream.lower, stream.upper, out=q)
        data = stream.port.encode(q)
        if not self._gate.publish(stream.slot, data, self._seen_trips):
            # the reflex tripped after this period began: send its hold, not this command
            self._adopt()
            q = stream.target
            data = stream.port.encode(q)
            self._gate.publish(stream.slot, data, self._seen_trips)
        if not getattr(self._gate, "keeps_holds", True):
            pass  # no reflex to hand a hold to (``PythonGate``)
        elif self._held:  # the hold being sent: the reflex sends it as it is
            self._gate.store_hold(stream.slot, data)
        else:  # frozen where it is measured now (the reflex may find a newer measurement)
            self._gate.store_hold(stream.slot, self._hold_bytes(stream), True)
        if self.on_publish is not None:
            self.on_publish(stream.topic, q.copy(), self._held)

    def step(self, now: float | None = None) -> None:
        """One period: publish every engaged stream (the thread calls this; tests may too)."""
        with self._lock:
            t = self.clock() if now is None else now
            self._adopt()
            if self._core is not None:
                self._adopt_deadman()
                self._sync(t, write_now=True)
                return
            for stream in self._streams.values():
                if stream.engaged:
                    self._publish(stream, t)

    def _schedule(self) -> None:
        """Name the thread, tighten its timer, and raise it to SCHED_FIFO when configured
        (the service's default). A refusal is a fallback, not an error: one line says what
        the stream got, what it asked for and how to grant it; it runs at normal priority."""
        realtime.name_thread("motion-streamer")
        realtime.tight_timer()
        refused = realtime.fifo(self.priority) if self.priority is not None else None
        self.stats.scheduling = realtime.policy()
        if refused is not None:
            log.warning(
                "motion streamer runs at normal priority",
                policy=self.stats.scheduling,
                wanted=f"SCHED_FIFO {self.priority}",
                reason=refused,
            )
        else:
            log.info("motion streamer scheduling", policy=self.stats.scheduling)

    def _resume_after(self, gap: float) -> None:
        """The thread did not run for ``gap`` s: hold if that is a stall of the executive,
        else shift every trajectory by the time lost, so none jumps ahead."""
        if gap >= self.stall_s:
            self.hold(f"the motion streamer did not run for {gap:.1f} s")
            return
        lost = gap - self.period
        with self._lock:
            if self._paused_at is not None:  # the clock stands still: nothing to catch up
                return
            for stream in self._streams.values():
                stream.trajectories = [replace(t, t0=t.t0 + lost) for t in stream.trajectories]

    def _run(self) -> None:
        self._schedule()
        deadline = self.clock() + self.period
        woke = self.clock()
        while not self._stop.is_set():
            delay = deadline - self.clock()
            if delay > 0:
                time.sleep(delay)
            previous, woke = woke, self.clock()
            if woke - previous >= SHIFT_AFTER_S:
                self._resume_after(woke - previous)
            self.step(woke)
            done = self.clock()
            self.stats.record(woke - deadline, done - woke)
            deadline += self.period
            if done > deadline:  # overran: skip the periods already missed, count them
                missed = int((done - deadline) / self.period) + 1
                self.stats.missed += missed
                deadline += missed * self.period
                # the first, then a line per interval with the count: an idle service on a
                # busy machine once wrote 63 % of its log here (issue 15)
                self._overruns.log(
                    "warning",
                    "motion stream overruns",
                    key="overrun",
                    missed_total=self.stats.missed,
                )

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        run = self._run_native if self.native and self._start_native() else self._run
        self._thread = threading.Thread(target=run, name="motion-streamer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        self._renew_soon.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        core, self._core = self._core, None
        if core is not None:
            core.stream_stop()  # (the gate lives on: the reflex still holds on an e-stop)
            for stream in self._streams.values():
                stream.planned = False
