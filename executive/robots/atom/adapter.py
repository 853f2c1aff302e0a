"""The Dobot Atom's adapter: ``open(profile)`` opens its topics on one participant as the
seam's ports, registers the fast path (an e-stop sample, an undecodable safety sample) and
arms the C e-stop reflex (``reflex.py``); ``check_interface`` names its interface variants.

The participant may be the in-process wire of simulated time (``executive.wire.loop``,
``executive.robots.atom.lockstep``): everything is the same but the reflex, which is C on
DDS's receive thread; there the Python fast path holds, as with ``ATOM_EXECUTIVE_REFLEX=off``,
and the samples, commands and snapshots are timed by the wire's simulated clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cyclonedds.domain import DomainParticipant

from executive.robots import native
from executive.robots.atom import reflex
from executive.robots.atom.commands import AtomCommands
from executive.robots.atom.interface import (
    DEFAULT_PRESET,
    PRESETS,
    Interface,
    Variant,
    VariantError,
)
from executive.robots.atom.state import AtomState, BaseSpeed, estop_flags
from executive.robots.atom.streams import AtomStream
from executive.robots.atom.topics import TOPICS, AtomIO
from executive.seam.ports import Motion, RobotSnapshot, SafetyEvent, Stamped
from executive.seam.profile import RobotProfile
from executive.wire.loop import LoopBus
from executive.wire.robot_io import Kind, Side
from executive.wire.typewatch import TypeWatch, type_ids

ESTOP_KEY = "emergency_state"
# rad/s: a joint stream measured faster than this is moving (well above the sim's and a
# standing robot's noise, well below any move the streamer makes)
JOINT_MOVING = 0.1
BASE_MOVING = (0.02, 0.05)  # m/s, rad/s: a base reported faster than this is moving
COMMAND_TOPICS = frozenset(s.name for s in TOPICS.values() if s.kind in (Kind.STREAM, Kind.EVENT))
# The state the executive reads at tick rate (the snapshot), polled: no Python per sample
# (issue 22). The e-stop too where the reflex arms (it watches the topic in C, per sample);
# without it the e-stop listens: the Python fast path's per-sample callback.
POLLED = frozenset(k for k, s in TOPICS.items() if s.kind is Kind.STATE and k != ESTOP_KEY)


def polled(participant: object = None) -> frozenset[str]:
    """The topics read at tick rate here: ``POLLED``, and the e-stop if the reflex arms (on
    DDS only: the in-process wire has none)."""
    if isinstance(participant, LoopBus):
        return POLLED
    return POLLED | {ESTOP_KEY} if native.available() else POLLED


class AtomTypeWatch(TypeWatch):
    """The wire's type watch (``executive.wire.typewatch``) over the Atom's topic table,
    naming the presets whose type would match."""

    def __init__(self, participant: DomainParticipant, interface: Interface) -> None:
        self.interface = interface
        topics = {spec.name: spec.type_name for spec in TOPICS.values()}
        names = set(topics.values())
        super().__init__(
            participant,
            topics=topics,
            ours=type_ids(interface, names),
            variants={p: type_ids(Interface(Variant(p)), names) for p in PRESETS},
            name=interface.variant.name,
        )


class AtomAdapter:
    """The Atom on one DDS participant (the executive's side of the wire)."""

    name = "atom"

    def __init__(
        self,
        profile: RobotProfile,
        participant: DomainParticipant | LoopBus,
        interface: Interface,
    ) -> None:
        self.profile = profile
        self.interface = interface
        self.interface_name = interface.variant.name
        self.capabilities = profile.capabilities
        self.io = AtomIO(
            participant,
            interface,
            side=Side.CONTROLLER,
            records=profile.sources,
            polled=polled(participant),
        )
        self.commands = AtomCommands(
            self.io,
            clock_ns=participant.clock.wall_ns
            if isinstance(participant, LoopBus)
            else time.time_ns,
        )
        self.streams = tuple(AtomStream(self.io, profile, name) for name in profile.topics)
        layout = {j.name: (j.topic, j.index) for j in profile.joints.values()}
        self.state = AtomState(
            interface, self.io.readers, layout, profile.sources, clock=self.io.clock
        )
        self.command_topics = COMMAND_TOPICS  # for executive.service.peers: who else commands it
        self._reflex: reflex.Reflex | None = None
        self._base_speed = BaseSpeed()
        self._types: AtomTypeWatch | None = None
        self._participant = participant

    def snapshot(self) -> RobotSnapshot:
        return self.state.snapshot()

    def wire_mismatches(self) -> list[str] | None:
        """Discovery's types on the Atom's topics against ours (executive.wire.typewatch);
        none on the in-process wire, whose two ends share one table."""
        if isinstance(self._participant, LoopBus):
            return []
        if self._types is None:
            self._types = AtomTypeWatch(self._participant, self.interface)
        if not self._types.poll():
            return None
        return [str(m) for m in self._types.mismatches]

    def on_safety_event(self, callback: SafetyEvent) -> None:
        """An e-stop sample with a flag set, or an undecodable sample on a safety source,
        calls ``callback`` on the receiving thread. With the reflex armed, the e-stop topic
        is the reflex's: it holds first and reports through ``install_reflex``'s on_trip."""
        estop = self.io.readers.get(ESTOP_KEY)
        if estop is not None and self._reflex is None:
            estop.listen()  # polled for a reflex that did not arm: the fast path needs it

            def on_estop(sample: Any) -> None:
                if flags := estop_flags(sample):
                    callback("estop", f"emergency stop: {', '.join(flags)}")

            estop.add_callback(on_estop)
        for key in self.profile.safety_sources:
            reader = self.io.readers.get(key)
            if reader is None or (self._reflex is not None and key == ESTOP_KEY):
                continue
            name = TOPICS[key].name

            def on_undecodable(why: str, name: str = name) -> None:
                callback("undecodable", f"{name}: undecodable sample ({why})")

            reader.on_undecodable(on_undecodable)

    def safe_stop(self) -> None:
        """After the hold: cancel the base's task (and remote driving)."""
        self.commands.cancel_base()

    def motion(self) -> Motion:
        """The base's task and speed (from its pose) and each joint stream's speed (``dq``)."""
        snap = self.state.snapshot()
        speed = self._base_speed.update(snap.base)
        joints = self.state.joint_speeds()
        reasons = []
        base_task = None
        if snap.base is not None and snap.base.sample.busy:
            b = snap.base.sample
            base_task = Stamped(b.task_id, snap.base.received)
            reasons.append(f"the base is on task {b.task_id} ({b.status.name})")
        if speed is not None and (
            speed.sample[0] > BASE_MOVING[0] or speed.sample[1] > BASE_MOVING[1]
        ):
            reasons.append(
                f"the base moves at {speed.sample[0]:.2f} m/s, turns {speed.sample[1]:.2f} rad/s"
            )
        for stream, dq in joints.items():
            if dq.sample > JOINT_MOVING:
                reasons.append(f"{stream} joints move at up to {dq.sample:.2f} rad/s")
        heard = snap.base is not None or bool(joints)
        moving = bool(reasons) if heard else None
        return Motion(
            moving, tuple(reasons), base_task=base_task, base_speed=speed, joint_speed=joints
        )

    def leftovers(self) -> tuple[str, ...] | None:
        """Upper-body control on (this instance has taken none yet), a base task and a base
        left in remote-drive mode; None until the upper state and the base (if the profile
        reads it) have been heard: a look at one alone would miss what the other says."""
        snap = self.state.snapshot()
        if snap.control is None or (snap.base is None and "amr_state" in self.state.sources):
            return None
        found = []
        if snap.control is not None and snap.control.sample:
            fsm = "" if snap.fsm is None else f", fsm {snap.fsm.sample}"
            found.append(f"upper-body control is on{fsm}, and no mission of ours took it")
        if snap.base is not None and snap.base.sample.busy:
            b = snap.base.sample
            found.append(f"the base is running task {b.task_id} ({b.status.name})")
        remote = self.state.remote_driving()
        if remote is not None and remote.sample:
            found.append(
                "the base is in remote-drive mode (work_mode 3): it takes velocities from "
                "whoever sends them and refuses tasks"
            )
        return tuple(found)

    def make_safe_now(self) -> tuple[str, ...]:
        """Nothing: every act the Atom has (release control, cancel the base's task, end
        remote driving) could take something from another live controller, so each waits
        until this executive knows it is alone (``make_safe``). A dead instance's joint
        streams died with it."""
        return ()

    def make_safe(self) -> tuple[str, ...]:
        """Hand upper-body control back (the robot's own controller holds the arms), cancel
        the base's task and end remote driving (STOP_REMOTE), each only if the robot reports
        it. The base's remote-drive mode is read from the robot (``work_mode``), not from
        ``AtomCommands.remote_driving``: that flag was the dead instance's."""
        snap = self.state.snapshot()
        done = []
        if snap.control is not None and snap.control.sample:
            self.commands.request_control(False)
            done.append("upper-body control released")
        if snap.base is not None and snap.base.sample.busy:
            self.commands.cancel_base()
            done.append(f"the base's task {snap.base.sample.task_id} canceled")
        remote = self.state.remote_driving()
        if remote is not None and remote.sample:
            self.commands.amr("STOP_REMOTE")
            self.commands.remote_driving = False
            done.append("the base's remote driving stopped (STOP_REMOTE)")
        return tuple(done)

    def install_reflex(self, streamer: Any, on_trip: Callable[[reflex.Trip], None]) -> Any:
        if isinstance(self.io.participant, LoopBus):
            return None  # C on DDS's receive thread: the in-process wire has none
        measured = [
            s.measured_for_reflex(self.profile, streamer.max_state_age) for s in self.streams
        ]
        self._reflex = reflex.install(self.io, streamer, measured, on_trip)
        return self._reflex

    def close(self) -> None:
        """Nothing to release: the participant is the caller's."""


def check_interface(text: str) -> str | None:
    """Why ``text`` is not an Atom interface variant (``preset[+axis=choice...]``)."""
    try:
        Variant.parse(text)
    except VariantError as e:
        return str(e)
    return None


def open(  # the name executive.seam.registry.open_adapter calls
    profile: RobotProfile,
    *,
    participant: DomainParticipant | LoopBus,
    interface: str | Interface | None = None,
    **_: Any,
) -> AtomAdapter:
    """The Atom adapter for ``profile`` on ``participant``, speaking ``interface``
    (a variant name such as ``sdk-1.1.0``, or an ``Interface``; default: the seeds')."""
    if not isinstance(interface, Interface):
        interface = Interface(Variant.parse(interface or DEFAULT_PRESET))
    return AtomAdapter(profile, participant, interface)
