"""The PND Adam behind the seam (seed 002; ``../shared/reference/robots.md`` section 1).

What the Adam offers on DDS, and so what this adapter does:

- joints, whole body only: one ``LowCmd_`` on ``rt/lowcmd`` carries all N motors (31, 29 or
  23 by model, the profile's ``topics.body``), each ``mode`` 1 (enable, the profile's
  ``motor_mode``). The streamer engages the ``body`` stream as a whole: moving an arm holds
  the legs where they were measured when it engaged;
- hands: ``HandCmd_`` on ``rt/handcmd``, 12 positions in counts 0..1000 (the profile's
  hand joints are in counts), from ``HandState_`` on ``rt/handstate``;
- safety from what the robot reports: a motor whose ``MotorState_.state`` is not 0 is a
  servo error; both state topics are safety sources (silence is a fault); an undecodable
  sample on either is a fault at once;
- battery, where the variant has it: sdk-1.2's ``LowState_.battery_data`` has a voltage (and
  a free-text status, not read), no percentage, and the vendor documents no range. With the
  profile's ``adam.battery_voltage: {empty: V, full: V}`` (the pack's datasheet figures) the
  snapshot's ``battery`` is the percent of that range, linear, clamped to 0..100, stamped
  with ``rt/lowstate``'s receive time, and the watchdog's battery trigger applies as to any
  robot. Without the range, on the seed variant (no ``battery_data``) or for a non-finite
  voltage, ``battery`` is None. A profile that offers the ``battery`` capability without the
  range does not load (``check_options``), so a mission's ``check_battery`` is refused at
  validation on a profile that cannot read one.

After a restart (``leftovers``, ``make_safe``): a dead instance's body stream died with it,
and the Adam has no control to hand back and no base to cancel. Its motors keep the last
target they were sent (the simulated Adam PD-tracks it), as after any mission's end. So
there is nothing to send: the adapter reports a body still moving (its measured ``dq``)
and starts no stream of its own, which would take every motor with no mission to run.

What it does not have, and so no port: control authority (publishing ``rt/lowcmd`` takes
every motor), an FSM on DDS (the vendor's is gRPC), an e-stop signal, a base, battery
alarms (``battery_data.status`` is free text). Missions that need any of these are refused
at validation, naming the capability.

The participant may be the in-process wire of simulated time (``executive.wire.loop``,
``executive.robots.adam.lockstep``): the same readers, writers and codecs, the snapshot
timed by the wire's simulated clock, no discovery to watch."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from cyclonedds.domain import DomainParticipant

from executive.robots import native
from executive.robots.adam.interface import (
    DEFAULT_VARIANT,
    TOPICS,
    VARIANTS,
    AdamInterface,
    AdamVariantError,
)
from executive.robots.adam.settings import battery_percent, battery_range
from executive.robots.adam.streams import BodyStream, HandStream
from executive.seam.ports import Motion, NoCommands, RobotSnapshot, SafetyEvent, Source, Stamped
from executive.seam.profile import RobotProfile
from executive.wire import dds, loop
from executive.wire.loop import LoopBus
from executive.wire.robot_io import LatestReader
from executive.wire.typewatch import TypeWatch, type_ids

# source key -> (topic, type): the state the executive reads
SOURCES: dict[str, tuple[str, str]] = {
    "low_state": ("rt/lowstate", "LowState_"),
    "hand_state": ("rt/handstate", "HandState_"),
}


COMMANDS: dict[str, tuple[str, str]] = {
    "body_cmd": ("rt/lowcmd", "LowCmd_"),
    "hand_cmd": ("rt/handcmd", "HandCmd_"),
}


JOINT_MOVING = 0.1  # rad/s: a body measured faster than this is moving


class AdamCommands(NoCommands):
    """The Adam has no one-shot command on DDS: every verb says which capability it lacks."""

    robot = "the PND Adam"


class AdamAdapter:
    """The Adam on one DDS participant, or the in-process wire (the executive's side)."""

    name = "adam"

    def __init__(
        self,
        profile: RobotProfile,
        participant: DomainParticipant | LoopBus,
        interface: AdamInterface,
    ) -> None:
        self.profile = profile
        self.interface = interface
        self.interface_name = interface.name
        self.body = tuple(profile.topics["body"])
        motors = len(self.body)
        self.codecs = {
            key: interface.codec(type_name, motors)
            for key, (_, type_name) in (SOURCES | COMMANDS).items()
        }
        # the pack's voltage range (None: no battery read), where LowState_ carries one
        low_fields = self.codecs["low_state"].dtype.names or ()
        self.battery_voltage = (
            battery_range(profile.options) if "battery_data" in low_fields else None
        )
        self.capabilities = (
            profile.capabilities
            if self.battery_voltage is not None
            else profile.capabilities - {"battery"}
        )
        self.commands = AdamCommands()
        self.command_topics = frozenset(topic for topic, _ in COMMANDS.values())
        self.readers: dict[str, LatestReader[Any]] = {}
        # what the snapshot is timed by: time.monotonic, or the in-process wire's clock
        self._clock = loop.clock_of(participant) or time.monotonic
        for key, (topic, type_name) in SOURCES.items():
            t = loop.topic(participant, topic, getattr(interface, type_name))
            # polled: read at the tick's rate, not rt/lowstate's 500 Hz (issue 22)
            self.readers[key] = LatestReader(
                participant, t, dds.STATE_READER_QOS, codec=self.codecs[key], polled=True
            )
        writers = {
            key: loop.writer(
                participant,
                loop.topic(participant, topic, getattr(interface, type_name)),
                dds.STREAM_WRITER_QOS,
            )
            for key, (topic, type_name) in COMMANDS.items()
        }
        self.streams = (
            BodyStream(
                profile,
                "body_cmd",
                self.body,
                self.codecs["body_cmd"],
                writers["body_cmd"],
                self.readers["low_state"],
            ),
            HandStream(
                "hands",
                "hand_cmd",
                tuple(profile.topics["hands"]),
                self.codecs["hand_cmd"],
                writers["hand_cmd"],
                self.readers["hand_state"],
            ),
        )
        self.layout = {j.name: (j.topic, j.index) for j in profile.joints.values()}
        self._types: TypeWatch | None = None
        self._participant = participant

    def snapshot(self) -> RobotSnapshot:
        """The newest state; the readers are polled here, so an undecodable sample reaches
        the fast path (``on_safety_event``) from this thread (the tick's)."""
        for reader in self.readers.values():
            reader.poll()
        low = self.readers["low_state"].latest
        joints = {
            s.name: Stamped(s.positions(r.sample), r.received)
            for s, r in zip(self.streams, (low, self.readers["hand_state"].latest), strict=True)
            if r is not None
        }
        errors = None
        battery = None
        if low is not None:
            codes = np.asarray(low.sample["motor_state"]["state"])
            errors = Stamped(
                tuple(f"{self.body[i]}=0x{int(c):04x}" for i, c in enumerate(codes) if c),
                low.received,
            )
            if self.battery_voltage is not None:
                volts = float(low.sample["battery_data"]["voltage"])
                percent = battery_percent(volts, *self.battery_voltage)
                battery = None if percent is None else Stamped(percent, low.received)
        return RobotSnapshot(
            taken=self._clock(),
            joints=joints,
            layout=self.layout,
            battery=battery,
            servo_errors=errors,
            sources={
                key: Source(key, topic, _received(self.readers[key]), self.readers[key].health)
                for key, (topic, _) in SOURCES.items()
            },
        )

    def motion(self) -> Motion:
        """The body's largest measured ``|dq|`` (the hands report positions only)."""
        low = self.readers["low_state"].latest
        if low is None:
            return Motion(None)
        dq = np.abs(np.asarray(low.sample["motor_state"]["dq"], dtype=np.float64))
        i = int(np.nanargmax(dq)) if dq.size and not np.isnan(dq).all() else 0
        fastest = float(dq[i]) if dq.size else 0.0
        speed = {"body": Stamped(fastest, low.received)}
        if fastest > JOINT_MOVING:
            why = f"the body moves: {self.body[i]} at {fastest:.2f} rad/s"
            return Motion(True, (why,), joint_speed=speed)
        return Motion(False, joint_speed=speed)

    def leftovers(self) -> tuple[str, ...] | None:
        """A body still moving when this instance starts; None until rt/lowstate is heard."""
        motion = self.motion()
        if motion.moving is None:
            return None
        return motion.reasons

    def make_safe_now(self) -> tuple[str, ...]:
        """Nothing to send (module docstring)."""
        return ()

    def make_safe(self) -> tuple[str, ...]:
        """Nothing to send: the dead instance's stream has stopped with it, and a stream of
        ours would take every motor (module docstring)."""
        return ()

    def wire_mismatches(self) -> list[str] | None:
        """Discovery's types on the Adam's four topics against ours (executive.wire.typewatch):
        the variants differ on ``LowCmd_`` and ``LowState_``; the hand types are both's. Nothing
        to watch on the in-process wire, whose two ends share one table."""
        if isinstance(self._participant, LoopBus):
            return []
        if self._types is None:
            names = set(TOPICS.values())
            self._types = TypeWatch(
                self._participant,
                topics=TOPICS,
                ours=type_ids(self.interface, names),
                variants={v: type_ids(AdamInterface(v), names) for v in VARIANTS},
                name=self.interface_name,
            )
        if not self._types.poll():
            return None
        return [str(m) for m in self._types.mismatches]

    def on_safety_event(self, callback: SafetyEvent) -> None:
        """An undecodable sample on a safety source is a fault at once (a servo error is
        judged at tick rate, from the snapshot)."""
        for key in self.profile.safety_sources:
            reader = self.readers.get(key)
            if reader is None:
                continue
            topic = SOURCES[key][0]

            def on_undecodable(why: str, topic: str = topic) -> None:
                callback("undecodable", f"{topic}: undecodable sample ({why})")

            reader.on_undecodable(on_undecodable)

    def safe_stop(self) -> None:
        """Nothing beyond the hold: the Adam has no base to cancel."""

    def install_reflex(self, streamer: Any, on_trip: Callable[[Any], None]) -> None:
        """No e-stop signal on the Adam's DDS: nothing for a reflex to listen to. A native
        stream (``stream_mode: native``) gets the extension's gate all the same: it runs
        on it, and holds on its own when Python stops renewing it."""
        if getattr(streamer, "native", False):
            self._gate = native.stream_gate(streamer, [s._writer for s in self.streams])

    def close(self) -> None:
        """Nothing to release: the participant is the caller's."""


def _received(reader: LatestReader[Any]) -> float | None:
    latest = reader.latest
    return None if latest is None else latest.received


def check_interface(text: str, profile: RobotProfile | None = None) -> str | None:
    """Why ``text`` is not an Adam interface variant (``sdk-1.2`` or ``seed``), or why it
    cannot serve ``profile``: a profile that offers the battery (``adam.battery_voltage``)
    needs a variant whose ``LowState_`` carries ``battery_data``. Said at start-up, naming
    both keys, rather than as a ``check_battery`` that validates and then never hears."""
    try:
        interface = AdamInterface(text)
    except AdamVariantError as e:
        return str(e)
    if profile is not None and "battery" in profile.capabilities:
        motors = len(profile.topics["body"])
        fields = interface.codec(SOURCES["low_state"][1], motors).dtype.names
        if "battery_data" not in (fields or ()):
            return (
                f"{text!r} reports no battery (its LowState_ has no battery_data), but profile "
                f"{profile.name!r} offers 'battery' (adam.battery_voltage): use interface "
                "'sdk-1.2', or a profile whose capabilities leave out battery"
            )
    return None


def open(  # the name executive.seam.registry.open_adapter calls
    profile: RobotProfile,
    *,
    participant: DomainParticipant | LoopBus,
    interface: str | None = None,
    **_: Any,
) -> AdamAdapter:
    """The Adam adapter for ``profile`` on ``participant``, speaking ``interface``
    (default: the current SDK's, ``sdk-1.2``)."""
    return AdamAdapter(profile, participant, AdamInterface(interface or DEFAULT_VARIANT))
