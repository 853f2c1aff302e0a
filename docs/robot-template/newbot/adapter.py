"""The template robot's adapter: ``open(profile, **options)`` gives the seam's ports
(``executive.seam.ports.RobotAdapter``) on the robot's wire.

Not written yet, so ``open`` refuses, saying so: ``atom-executive run`` stops at start-up on
that one line, while the robot's profiles and missions load and validate without it.
``Adapter`` below is the shape to fill; ``executive/robots/adam/`` is the smallest complete
adapter (two DDS state topics, two joint streams, no one-shot command), ``executive/robots/
grx/`` one on zenoh. What a written adapter gives (docs/robots.md, "The ports"):

- ``streams``: one ``JointStream`` per joint stream of the spec, its joints the profile's
  ``topics.<stream>`` in wire order (``profile.topic_joints``): ``encode(q)`` makes the
  command's bytes for those positions (gains and mode from the profile), ``write`` sends
  them, ``decode_q`` reads them back, ``measured()`` gives the newest measured positions and
  their receive time. The streamer owns targets, trajectories, limits and the hold.
- ``snapshot()``: the robot's state now (``RobotSnapshot``; None for what it does not
  report), with every source of the spec, its wire name, receive time and decode health.
- ``commands``: the one-shot verbs of its capabilities; ``NoCommands`` raises for the rest.
- ``on_safety_event(callback)``: the fast path. The moment an e-stop input trips or a safety
  source delivers something that does not decode, call ``callback(code, message)`` on the
  receiving thread; nothing raises through a middleware callback.
- ``safe_stop()``: on a trip the streamer first holds every stream at the measured position
  (no motion command leaves the executive after the trigger), then this runs, from any
  thread: the robot's own part (the Atom cancels its base's task; the GRX sends zero axes,
  then its safe task). It never raises and never sets anything moving; a robot with nothing
  but joint streams sends nothing more (the Adam).
- ``motion()``, ``leftovers()``, ``make_safe_now()``, ``make_safe()``: what the robot reports
  about moving, and what a dead instance may have left it doing (docs/robots.md, "Made safe
  on start").
- ``install_reflex``, ``wire_mismatches``, ``close``: a native e-stop reflex if it has one,
  the wire's announced types against ours, the end.

Each safety part comes with a test that injects the fault and asserts that no motion
command leaves the executive after the trigger, having first asserted that motion was being
commanded (tests/test_safety.py, tests/integration/).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from executive.seam.ports import (
    AdapterError,
    JointStream,
    Motion,
    NoCommands,
    Reflex,
    RobotAdapter,
    RobotCommands,
    RobotSnapshot,
    SafetyEvent,
)
from executive.seam.profile import RobotProfile


class Commands(NoCommands):
    """Its one-shot verbs: each one it lacks raises, naming the capability (the validator has
    refused the leaf that would call it already)."""

    robot = "the newbot"


class Adapter:
    """The robot behind the seam (``ports.RobotAdapter``): the template's shape, to fill."""

    name = "newbot"  # its spec's name
    # its command topics on the executive's DDS domain, where another controller would show
    # up (executive.service.peers); empty for another transport
    command_topics: frozenset[str] = frozenset()

    def __init__(self, profile: RobotProfile, interface: str) -> None:
        self.profile = profile
        self.interface_name = interface  # the wire variant it speaks, for status
        self.capabilities = profile.capabilities  # the profile's, less what its wire lacks
        # one per spec stream (``arm``): the joints of profile.topics["arm"], in wire order
        self.streams: Sequence[JointStream] = ()
        self.commands: RobotCommands = Commands()

    def snapshot(self) -> RobotSnapshot:
        """The robot's state now, every source of the spec with its receive time."""
        raise NotImplementedError("snapshot: the robot's state as a RobotSnapshot")

    def on_safety_event(self, callback: SafetyEvent) -> None:
        """Call ``callback(code, message)`` on the receiving thread for an e-stop or an
        undecodable sample on a safety source."""
        raise NotImplementedError("on_safety_event: the fast path from the wire's thread")

    def safe_stop(self) -> None:
        """After the hold: nothing more to send for a robot of joint streams only. A robot
        with a base, a walk or a task stops it here, never raising."""

    def motion(self) -> Motion:
        """What the robot reports about moving now (its measured joint speeds)."""
        raise NotImplementedError("motion: the robot's own word on moving")

    def leftovers(self) -> tuple[str, ...] | None:
        """What a dead instance may have left it doing, one sentence each; None until heard."""
        raise NotImplementedError("leftovers: read from the robot at start")

    def make_safe_now(self) -> tuple[str, ...]:
        """Sent at once on start: only what stops motion and takes nothing from anyone."""
        return ()

    def make_safe(self) -> tuple[str, ...]:
        """Sent once this executive is the robot's only controller: what undoes a dead
        instance's leftovers (control held, a task running)."""
        return ()

    def install_reflex(self, streamer: Any, on_trip: Callable[[Any], None]) -> Reflex | None:
        """A native e-stop reflex that holds the streams before Python runs (the Atom's, in
        C); None: the robot has no e-stop signal for one to listen to."""
        return None

    def wire_mismatches(self) -> list[str] | None:
        """Every way the wire's announced types differ from ours (executive.wire.typewatch),
        or None if nothing new (a wire that announces no types)."""
        return None

    def close(self) -> None:
        """Release what ``open`` made (readers, writers, a session), not what it was given."""


def open(  # the name executive.seam.registry.open_adapter calls
    profile: RobotProfile, *, interface: str | None = None, **options: Any
) -> RobotAdapter:
    """The adapter for ``profile``, speaking ``interface`` (None: the default variant). The
    service passes every robot the same options (``participant``: its DDS participant;
    ``zenoh_config``, ``zenoh_overrides``): take what the wire needs, ignore the rest.

    Not written yet: refuses (``Adapter(profile, interface or "v1")`` once it is)."""
    raise AdapterError(
        f"robot {profile.robot!r}: its adapter is not written yet ({__name__}); its profiles "
        "and missions validate, nothing can run on it"
    )
