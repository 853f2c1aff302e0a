"""Assembly: everything the executive needs, built from one participant and one profile.

The profile names the robot; ``executive.seam.registry.open_adapter`` opens it, and the rest is
the same for every robot.

The service, the demo and the integration tests all run the same assembly, so what is
tested is what runs. Nothing here is global: close() deletes the participant it made.

``clock``: where everything reads time (the tick, the streamer, the leaves' timeouts, the
safety monitor). A mission's test in simulated time (``executive.scenario``) builds the
same assembly on a simulated clock and its robot's in-process wire, and steps it itself
(``tick()`` and the streamer's ``step``) instead of ``start()``.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
from cyclonedds.domain import DomainParticipant

from behaviours.context import Pauses, RobotContext
from executive.core.safety import STALL_S, SafetyConfig, SafetyMonitor
from executive.core.taps import CommandTap
from executive.core.ticker import Ticker
from executive.core.tree import Executive
from executive.motion import native
from executive.motion.streamer import MotionStreamer
from executive.seam.ports import RobotAdapter
from executive.seam.profile import RobotProfile
from executive.seam.registry import open_adapter
from executive.wire import dds

log = structlog.get_logger(__name__)

SWITCH_INTERVAL_S = 0.0002  # the longest a thread that wants the GIL waits for it
SUPERVISE_S = 0.1  # the supervisor's period
IDLE_TICK_HZ = 10.0  # the tick loop's rate with no mission (service config: idle_tick_hz)
# the full rate goes on this long after a run ends: its MCAP tail (mcaprecord.TAIL_S, 2 s)
# records the robot settling at the rate the run did
IDLE_AFTER_S = 3.0


@dataclass
class Runtime:
    participant: DomainParticipant
    adapter: RobotAdapter
    streamer: MotionStreamer
    executive: Executive
    ticker: Ticker
    after_tick: list[Callable[[], None]] = field(default_factory=list)
    # run by the supervisor thread every 0.1 s while the tick loop is stalled (the status
    # heartbeat, so a client sees the SAFE_STOP while no tick publishes it)
    while_stalled: list[Callable[[], object]] = field(default_factory=list)
    stall_s: float = STALL_S
    _switch_interval: float | None = None
    _supervisor_stop: threading.Event = field(default_factory=threading.Event)
    _supervisor: threading.Thread | None = None
    # one internal cause per stall, whichever thread sees it first (the supervisor, or the
    # tick thread starting its first tick after it): when it was reported
    _stall_lock: threading.Lock = field(default_factory=threading.Lock)
    _stall_reported_at: float = -1.0
    _tick_started_at: float | None = None
    _supervised_at: float | None = None  # the supervisor's last wake
    # the tick loop's periods: with a mission (and IDLE_AFTER_S after it), and without
    busy_period: float = 1.0 / 50.0
    idle_period: float = 1.0 / IDLE_TICK_HZ
    _busy_at: float = -math.inf  # the last tick with a mission
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def build(
        cls,
        profile: RobotProfile,
        interface: Any = None,
        *,
        participant: DomainParticipant | None = None,
        tick_hz: float = 50.0,
        idle_tick_hz: float = IDLE_TICK_HZ,
        stream_hz: float | None = None,
        stream_priority: int | None = None,
        safety: SafetyConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        **adapter_options: Any,
    ) -> Runtime:
        participant = participant or dds.make_participant()
        adapter = open_adapter(
            profile, participant=participant, interface=interface, **adapter_options
        )
        streamer = MotionStreamer(
            adapter.streams,
            profile,
            rate_hz=stream_hz,
            priority=stream_priority,
            clock=clock,
            # the native stream keeps real time on its own thread: another clock streams
            # from Python (``stream_mode: python``)
            native=clock is time.monotonic and native.mode(profile.stream_mode) == "native",
            deadman_s=profile.stream_deadman_s,
        )
        # every one-shot command passes the tap: a run's recording lists them (runchannels)
        commands = CommandTap(adapter.commands)
        context = RobotContext(profile, commands, streamer, clock=clock, pauses=Pauses(clock))
        monitor = SafetyMonitor(
            safety, clock=clock, max_age=profile.safety_sources, stall_s=STALL_S
        )
        executive = Executive(
            adapter,
            context,
            streamer,
            monitor,
            clock=clock,
            safe_stop=commands.tapped_safe_stop(adapter.safe_stop),
            max_pause_s=profile.max_pause_s,
        )
        runtime = cls(
            participant,
            adapter,
            streamer,
            executive,
            Ticker(lambda: None, tick_hz, name="tick-loop", clock=clock),
            clock=clock,
        )
        runtime.ticker.work = runtime.tick
        runtime.busy_period = 1.0 / tick_hz
        runtime.idle_period = 1.0 / min(idle_tick_hz, tick_hz)
        # a request or a latch ticks at once when idle (a mission ticks at the full rate)
        executive.on_request = runtime.wake_if_idle
        monitor.on_latch = runtime.wake_if_idle
        # an exception anywhere in a tick (the tree's own are handled inside it): hold, latch
        runtime.ticker.on_error = lambda e: executive.internal_fault(e, "tick loop")
        return runtime

    def tick(self) -> None:
        """One tick of the tree, then whatever must follow it (status, watchdog ping).

        The first tick after the whole executive stalled (no tick started for ``stall_s``:
        the process stopped, starved or its interpreter blocked, so the supervisor could
        not run either) reports the stall before the tree judges anything."""
        now = self.clock()
        previous, self._tick_started_at = self._tick_started_at, now
        supervised = self._supervised_at
        if (
            previous is not None
            and supervised is not None
            and now - previous >= self.stall_s
            and now - supervised >= self.stall_s  # (else a slow tick: the supervisor's)
        ):
            self._stalled(now - previous, previous, "")
        self.executive.tick()
        for hook in self.after_tick:
            hook()
        self.ticker.period = self._period(now)

    def wake_if_idle(self) -> None:
        """Tick now if the loop is at its idle rate (any thread): a request or a latch
        must not wait out an idle period. At the full rate it waits for its tick, as it
        always did: a woken tick mid-mission shifted the loop's phase against the
        streamer's renewals, and the e-stop bench's holds with the interpreter blocked
        then lost their newest measurement in 1-3 of 15 e-stops (not understood yet)."""
        if self.ticker.period > self.busy_period:
            self.ticker.wake()

    def _period(self, now: float) -> float:
        """The full rate while a mission runs and ``IDLE_AFTER_S`` after; else the idle
        rate (issue 22: an idle service's tick was most of its CPU). What must not wait
        for a slow tick does not: the e-stop reflex and the fast path hold on their own
        threads, the native stream streams on its own, and a request or a latch wakes the
        loop (``Ticker.wake``); the watchdog judges the rest within an idle period."""
        if self.executive.run is not None:
            self._busy_at = now
        return self.busy_period if now - self._busy_at < IDLE_AFTER_S else self.idle_period

    def start(self) -> None:
        # CPython hands the GIL to a waiting thread only when the holder blocks or after
        # the switch interval (5 ms by default). The motion streamer's period is 2 ms and
        # the e-stop fast path runs on a DDS listener thread: neither may wait for a
        # whole tick of the tree. bench/stream.py and bench/estop.py measure the effect.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        self.streamer.start()
        self.ticker.start()
        self._supervisor_stop.clear()
        self._supervisor = threading.Thread(
            target=self._supervise, name="tick-supervisor", daemon=True
        )
        self._supervisor.start()

    def _supervise(self) -> None:
        """A tick loop that stops completing ticks (hung in a call, or failing every tick)
        gets the reaction of a trip and a SAFE_STOP ``internal`` naming where it is stuck,
        a line of ours. If the supervisor itself did not run meanwhile, the whole executive
        stalled (stopped, starved, its interpreter blocked): the cause says so and how long,
        and the robot's samples that waited in the readers' queues are no evidence of
        silence (``SafetyMonitor.resumed``). The watchdog pings stopped with the ticks, so
        systemd restarts the service if it stays so.
        """
        stalled = False
        awake = self._supervised_at = time.monotonic()
        while not self._supervisor_stop.wait(SUPERVISE_S):
            now = time.monotonic()
            own_gap, awake = now - awake, now
            self._supervised_at = now
            if own_gap >= self.stall_s:
                self.executive.monitor.resumed(now)
                # the supervisor itself could not run: the whole executive stalled, even if
                # the block ended inside a tick that has completed since (the next tick then
                # finds the supervisor fresh; each took the stall for the other's and no one
                # reported it: tests/integration/test_stall_in_tick.py)
                self._stalled(own_gap, now - own_gap, "")
            stalled_for = self.ticker.stalled_for()  # once: a tick may complete meanwhile
            if stalled_for < self.stall_s:
                stalled = False
                continue
            if not stalled:
                stalled = True
                since = now - stalled_for
                if own_gap >= self.stall_s:  # the supervisor was not running either
                    self._stalled(stalled_for, since, "")
                else:
                    self._stalled(stalled_for, since, self.ticker.where() or "not running")
            for hook in self.while_stalled:
                try:
                    hook()
                except Exception as e:  # noqa: BLE001 - the supervisor must go on
                    self.executive.counters.tick_errors += 1
                    log.error("stalled-loop hook failed", error=repr(e))

    def _stalled(self, length: float, since: float, where: str) -> None:
        """SAFE_STOP ``internal`` for a stall that began at ``since`` (monotonic), once per
        stall: the tick loop hung at ``where`` (a line of ours), or with ``where`` "" the
        whole executive stopped running."""
        with self._stall_lock:
            if self._stall_reported_at >= since:
                return  # the other thread has reported this stall
            self._stall_reported_at = time.monotonic()
        if where:
            why = f"no tick completed for {length:.1f} s (at {where})"
        else:
            why = (
                f"the executive stalled for {length:.1f} s (no thread of it ran: the process "
                "was stopped, starved or its interpreter blocked)"
            )
        self.executive.internal_fault(TimeoutError(why), "tick loop")

    def stop_supervisor(self) -> None:
        """Before stopping the tick loop on purpose: a stopped loop is not a stalled one."""
        self._supervisor_stop.set()
        if self._supervisor is not None:
            self._supervisor.join(1.0)
            self._supervisor = None

    def close(self, *, released: Callable[[], object] | None = None) -> None:
        """Stop ticking, hold what moves, hand control back, and delete the participant.

        ``released`` is called once motion is held and control handed back: from then on
        the rest of the close (the stream's thread, the adapter, DDS) may be abandoned
        (the service's ``ShutdownGuard`` ends a stop that overruns only after it)."""
        self.stop_supervisor()
        self.ticker.stop()
        self.streamer.hold("shutting down")
        ex = self.executive
        if ex.run is not None:
            ex.stop_mission("service stopping")
        if ex.context.control_acquired:
            ex.context.commands.request_control(False)
        if released is not None:
            released()
        self.streamer.stop()
        self.adapter.close()
        dds.close_participant(self.participant)
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
