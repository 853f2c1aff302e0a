"""Assembly: everything the executive needs, built from one participant and one profile.

The service, the demo and the integration tests all run the same assembly, so what is
tested is what runs. Nothing here is global: close() deletes the participant it made.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cyclonedds.domain import DomainParticipant

from behaviours.context import DdsCommands, RobotContext
from executive import dds
from executive.core import Executive
from executive.motion.streamer import MotionStreamer
from executive.profile import STATE_TOPICS, RobotProfile
from executive.robot_io import RobotIO, Side
from executive.safety import SafetyConfig, SafetyMonitor
from executive.ticker import Ticker
from executive.wire import Interface

SWITCH_INTERVAL_S = 0.0002  # the longest a thread that wants the GIL waits for it


@dataclass
class Runtime:
    participant: DomainParticipant
    io: RobotIO
    streamer: MotionStreamer
    executive: Executive
    ticker: Ticker
    after_tick: list[Callable[[], None]] = field(default_factory=list)
    _switch_interval: float | None = None

    @classmethod
    def build(
        cls,
        profile: RobotProfile,
        interface: Interface,
        *,
        participant: DomainParticipant | None = None,
        tick_hz: float = 50.0,
        stream_hz: float | None = None,
        stream_priority: int | None = None,
        safety: SafetyConfig | None = None,
    ) -> Runtime:
        participant = participant or dds.make_participant()
        io = RobotIO(participant, interface, side=Side.CONTROLLER, records=STATE_TOPICS)
        streamer = MotionStreamer(io, profile, rate_hz=stream_hz, priority=stream_priority)
        context = RobotContext(profile, DdsCommands(io), streamer, clock=time.monotonic)
        monitor = SafetyMonitor(safety, max_age=profile.safety_sources)
        executive = Executive(io, context, streamer, monitor)
        runtime = cls(
            participant, io, streamer, executive, Ticker(lambda: None, tick_hz, name="tick-loop")
        )
        runtime.ticker.work = runtime.tick
        return runtime

    def tick(self) -> None:
        """One tick of the tree, then whatever must follow it (status, watchdog ping)."""
        self.executive.tick()
        for hook in self.after_tick:
            hook()

    def start(self) -> None:
        # CPython hands the GIL to a waiting thread only when the holder blocks or after
        # the switch interval (5 ms by default). The motion streamer's period is 2 ms and
        # the e-stop fast path runs on a DDS listener thread: neither may wait for a
        # whole tick of the tree. bench/stream.py and bench/estop.py measure the effect.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        self.streamer.start()
        self.ticker.start()

    def close(self) -> None:
        """Stop ticking, hold what moves, hand control back, and delete the participant."""
        self.ticker.stop()
        self.streamer.hold("shutting down")
        ex = self.executive
        if ex.run is not None:
            ex.stop_mission("service stopping")
        if ex.context.control_acquired:
            ex.context.commands.switch_upper_control(False)
        self.streamer.stop()
        dds.close_participant(self.participant)
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
