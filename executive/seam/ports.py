"""The seam between the executive and a robot: capability ports and one normalised snapshot.

Everything above this module (leaves, the safety monitor, the motion streamer, the tick
loop, status and requests) speaks these types and nothing else of a robot: no topic,
field name or enum number of any robot's wire appears there (``tests/test_seam.py``
enforces it). A robot is an adapter (``executive/robots/<name>/``) that turns its wire into a
``RobotSnapshot`` and the ports' calls into its wire.

The shape follows what the four robots of the seeds have in common
(``../shared/reference/robots.md`` section 5): control authority, a firmware state
machine or mode, joint groups streamed at a fixed rate, a base that navigates or walks,
fault clearing, and a robot-specific safe stop. A robot that lacks a port says so in its
``capabilities`` and the mission validator refuses a leaf that needs it, naming both.

``None`` in a snapshot field means "this robot does not report it" (or has not yet):
a leaf that needs it fails with ``no_state``, and the safety monitor skips the trigger.
Every field carries the monotonic time its source was received, so a leaf can ask for
state newer than its own command and the watchdog can judge silence.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

T = TypeVar("T")
FloatArray = npt.NDArray[np.float64]

# What a robot may offer; a leaf kind declares which one it needs (executive.mission).
CAPABILITIES = (
    "control",  # take and hand back control authority, confirmed by the robot
    "fsm",  # switch the firmware state machine / mode by profile name, confirmed
    "joints",  # stream joint targets (arm, head, torso, legs)
    "hands",  # stream finger targets
    "navigation",  # send the base to a tag, cancel, watch its status
    "base_velocity",  # drive or walk the base by velocity
    "clear_faults",  # ask the firmware to clear servo faults
    "battery",  # report the battery's charge
    "buttons",  # report an operator gamepad's buttons
    "tasks",  # run named firmware tasks (GRX task ids)
)


class AdapterError(RuntimeError):
    """A robot adapter could not open (a helper process or environment it needs is missing or
    failed to start); the message says why in a line, and the service refuses to start with it
    rather than with a traceback."""


@dataclass(frozen=True)
class Stamped(Generic[T]):
    """A value and the ``time.monotonic()`` at which it was received."""

    sample: T
    received: float

    def age(self, now: float | None = None) -> float:
        return (time.monotonic() if now is None else now) - self.received

    @property
    def value(self) -> T:
        return self.sample


@dataclass(frozen=True)
class ReaderHealth:
    """What a source could not make sense of: decode errors (and failed callbacks).

    ``undecodable`` is true while the newest thing the source delivered did not decode:
    then the state the executive holds for it is no longer the robot's.
    """

    topic: str  # the source's name on the wire (a DDS topic, a zenoh key), for messages
    errors: int = 0
    last_error: str = ""
    last_error_at: float | None = None  # monotonic
    callback_errors: int = 0
    undecodable: bool = False


@dataclass(frozen=True)
class Source:
    """One state source of the robot (a topic, a key): when it was last heard, its health."""

    key: str  # the adapter's short name, e.g. ``upper_state``; profiles use it
    name: str  # on the wire, e.g. ``rt/upper/state``: what an operator can look up
    received: float | None  # monotonic; None: never heard
    health: ReaderHealth


class NavStatus(enum.Enum):
    """Where the base's current navigation task is (robot-neutral)."""

    NONE = "none"
    QUEUING = "queuing"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    PAUSED = "paused"
    CANCELED = "canceled"


BUSY = frozenset({NavStatus.QUEUING, NavStatus.RUNNING, NavStatus.PAUSED})


@dataclass(frozen=True)
class BaseState:
    """The base as the navigation leaf needs it, and where it is.

    ``pose`` is (x m, y m, yaw rad) in the base's own map frame, as its odometry or
    localisation reports it; ``None`` where the robot reports none (the Adam has no base,
    the GRX's User API no odometry) or the value it sent is not a number.
    """

    tasking: bool  # the base has accepted a task and is working on it
    status: NavStatus
    task_id: int  # the command id of the task the status is about
    estop_pressed: bool = False  # the base's own emergency-stop button
    pose: tuple[float, float, float] | None = None  # x m, y m, yaw rad; None: not reported

    @property
    def busy(self) -> bool:
        return self.tasking or self.status in BUSY


@dataclass(frozen=True)
class RobotSnapshot:
    """The robot's state at one instant, as every robot reports it (``None``: not reported).

    ``joints`` holds each joint stream's measured positions in wire order;
    ``layout`` says where each joint is, so ``position(name)`` needs no robot knowledge.
    """

    taken: float  # monotonic
    joints: Mapping[str, Stamped[FloatArray]] = field(default_factory=dict)
    layout: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    control: Stamped[bool] | None = None
    fsm: Stamped[int] | None = None
    estop: Stamped[tuple[str, ...]] | None = None  # names of the e-stop inputs that are on
    battery: Stamped[float] | None = None  # percent
    alarms: Stamped[tuple[str, ...]] | None = None  # battery-management alarms, described
    servo_errors: Stamped[tuple[str, ...]] | None = None  # ``left_arm[2]=0x0010`` ...
    base: Stamped[BaseState] | None = None
    buttons: Stamped[frozenset[str]] | None = None  # gamepad buttons held now
    sources: Mapping[str, Source] = field(default_factory=dict)
    # the firmware task running now and whether it is still in process (the GRX's task id)
    task: Stamped[tuple[int, bool]] | None = None

    def position(self, joint: str) -> Stamped[float] | None:
        """The measured position of ``joint`` (None: unknown joint or no state yet)."""
        where = self.layout.get(joint)
        if where is None:
            return None
        stream = self.joints.get(where[0])
        if stream is None:
            return None
        return Stamped(float(stream.sample[where[1]]), stream.received)

    def positions(self, names: Iterable[str]) -> dict[str, float]:
        """Measured positions by joint name; joints without state are left out."""
        out: dict[str, float] = {}
        for name in names:
            where = self.layout.get(name)
            if where is None:
                continue
            stream = self.joints.get(where[0])
            if stream is not None:
                out[name] = float(stream.sample[where[1]])
        return out

    def health(self) -> dict[str, ReaderHealth]:
        return {k: s.health for k, s in self.sources.items()}


@dataclass(frozen=True)
class Velocity:
    """A base velocity command: forward, lateral and yaw rates as fractions in [-1, 1] of the
    robot's maximum (``RobotCommands.set_velocity``'s units), as sent or as seen on the wire."""

    forward: float
    lateral: float
    yaw: float

    @property
    def zero(self) -> bool:
        return not (self.forward or self.lateral or self.yaw)


@dataclass(frozen=True)
class TaskMotion:
    """The firmware task the robot reports running (the GRX's task state), in the profile's
    words: ``drives`` when it is a continuous task that moves the robot on the last velocity
    it was sent (the GRX's walk) rather than on its own."""

    id: int
    name: str | None  # the profile's fsm name for it; None: an id the profile does not name
    in_process: bool
    drives: bool


@dataclass(frozen=True)
class Motion:
    """What the robot itself reports about moving now (``None``: it does not report that).

    Built by the adapter (``RobotAdapter.motion``) from what its wire says, so the status can
    tell an operator the truth about motion without naming any robot's fields:

    - ``moving``: the adapter's judgement (None: nothing the robot reports says either way);
      ``reasons`` says why, in words an operator can check on the robot;
    - ``task``: the firmware task running and whether it drives the robot (the GRX);
    - ``velocity_sent``: the last base velocity this executive sent; ``velocity_seen``: the
      last one seen on the robot's velocity command key from any sender (the GRX's joystick);
    - ``base_speed``: (m/s, rad/s) from the base's reported pose; ``base_task``: the base's
      task id while it is busy with one (the Atom's navigation);
    - ``joint_speed``: the largest measured joint speed per joint stream (its units per s).
    """

    moving: bool | None
    reasons: tuple[str, ...] = ()
    task: Stamped[TaskMotion] | None = None
    velocity_sent: Stamped[Velocity] | None = None
    velocity_seen: Stamped[Velocity] | None = None
    base_task: Stamped[int] | None = None
    base_speed: Stamped[tuple[float, float]] | None = None
    joint_speed: Mapping[str, Stamped[float]] = field(default_factory=dict)


# -- ports ---------------------------------------------------------------------------------


class JointStream(Protocol):
    """One joint command stream of the robot (the Atom's upper body; the Adam's whole body).

    The streamer owns targets, trajectories, limits and the hold; the stream owns the
    wire: ``encode`` makes the command for positions in wire order (gains and mode from
    the profile, fixed at construction), ``write`` sends encoded bytes.
    """

    name: str  # the profile's name for it, e.g. ``upper``
    command_key: str  # the adapter's key of the writer it publishes on
    joints: tuple[str, ...]  # joint names in wire order

    def measured(self) -> Stamped[FloatArray] | None:
        """The newest measured positions (wire order), as received; None before any."""
        ...

    def encode(self, q: FloatArray) -> bytes: ...

    def decode_q(self, data: bytes) -> FloatArray:
        """The positions a command carries (to adopt what the reflex sent)."""
        ...

    def write(self, data: bytes) -> None: ...


class RobotCommands(Protocol):
    """One-shot commands to the robot. A robot without a capability raises
    ``NotImplementedError`` from its verb; the validator keeps missions from calling it."""

    def request_control(self, on: bool) -> None: ...
    def set_fsm(self, fsm_id: int) -> None: ...
    def clear_faults(self) -> int: ...
    def go_to_tag(self, tag: int, theta: float) -> int:
        """Send the base to ``tag`` with absolute heading ``theta``; the command's id."""
        ...

    def cancel_base(self) -> int:
        """Cancel the base's task (and stop any remote driving)."""
        ...

    def set_velocity(self, vx: float, vy: float, yaw: float, ttl: float = 0.5) -> None:
        """Walk or drive the base: forward, lateral and yaw rates as fractions in [-1, 1] of
        the robot's maximum, streamed by the adapter until ``ttl`` s pass without another
        call (then, or on all zeros, the robot is sent zero)."""
        ...

    def run_task(self, task_id: int) -> None:
        """Start the firmware task ``task_id`` (the GRX's TID); confirmed by ``snapshot().task``."""
        ...


class NoCommands:
    """A robot's verbs it does not have: each raises, naming the capability."""

    robot = "this robot"

    def _missing(self, capability: str) -> NotImplementedError:
        return NotImplementedError(f"{self.robot} has no {capability!r} capability")

    def request_control(self, on: bool) -> None:
        raise self._missing("control")

    def set_fsm(self, fsm_id: int) -> None:
        raise self._missing("fsm")

    def clear_faults(self) -> int:
        raise self._missing("clear_faults")

    def go_to_tag(self, tag: int, theta: float) -> int:
        raise self._missing("navigation")

    def cancel_base(self) -> int:
        raise self._missing("navigation")

    def set_velocity(self, vx: float, vy: float, yaw: float, ttl: float = 0.5) -> None:
        raise self._missing("base_velocity")

    def run_task(self, task_id: int) -> None:
        raise self._missing("tasks")


SafetyEvent = Callable[[str, str], None]  # (cause code, message): on the adapter's thread


class Trip(Protocol):
    """What a robot's native reflex reports after it has held (the Atom's, in C)."""

    code: str
    message: str


class Reflex(Protocol):
    """A robot's native e-stop reflex, once armed: only the executive's reset clears it."""

    def reset(self) -> None: ...


class RobotAdapter(Protocol):
    """A robot behind the seam. Built by ``executive.seam.registry.open_adapter`` from a profile.

    Threads: ``snapshot`` and the commands are called from the tick thread, the streams
    from the motion streamer, ``safe_stop`` from any thread (the safety fast path).
    """

    name: str  # the adapter's kind: ``atom``, ``adam``
    capabilities: frozenset[str]
    streams: Sequence[JointStream]
    commands: RobotCommands
    interface_name: str  # the wire variant it speaks, for status
    # where other controllers of the robot would show up (executive.service.peers): the names of
    # the robot's command topics on the executive's DDS domain; empty for other transports
    command_topics: frozenset[str]

    def snapshot(self) -> RobotSnapshot: ...

    def wire_mismatches(self) -> list[str] | None:
        """Polled by the service every 0.5 s: every way the robot's announced wire differs
        from what the adapter speaks (a wrong interface variant), or None if nothing new."""
        ...

    def on_safety_event(self, callback: SafetyEvent) -> None:
        """Call ``callback(code, message)`` the moment a safety input trips or a safety
        source delivers something undecodable, on the receiving thread (the fast path)."""
        ...

    def safe_stop(self) -> None:
        """The robot-specific part of DESIGN.md 4's reaction after the hold (the Atom:
        cancel the base's task and remote driving). Safe from any thread; never raises
        for a robot without a base."""
        ...

    def install_reflex(self, streamer: Any, on_trip: Callable[[Any], None]) -> Reflex | None:
        """Arm the robot's native e-stop reflex if it has one (None if not): it holds
        ``streamer``'s streams before Python runs, then calls ``on_trip(Trip)``."""
        ...

    def motion(self) -> Motion:
        """What the robot reports about moving now (the status' truth about motion). Called
        from the tick thread and, while the tick loop stalls, the supervisor's."""
        ...

    def leftovers(self) -> tuple[str, ...] | None:
        """What a previous instance of the executive may have left commanding the robot, read
        from the robot now (control on, a base task, a driving task, a moving body), one
        sentence each; None until the robot has been heard enough to tell. Asked once at
        start, before any mission of this instance (executive/service/recovery.py)."""
        ...

    def make_safe_now(self) -> tuple[str, ...]:
        """What can be sent at once on start, before anyone knows whether another controller
        is on the domain: only what stops motion and takes nothing another live controller
        holds (the GRX's zero axes; the Atom and the Adam have nothing such). What was sent,
        one sentence each; may be called more than once (before the robot is heard a send
        may reach nobody). Raises only what the wire raised."""
        ...

    def make_safe(self) -> tuple[str, ...]:
        """Undo what a previous instance may have left, once this executive knows it is the
        robot's only controller (the robot-specific part: the Atom hands control back, cancels
        its base's task and ends remote driving, the GRX is sent its safe task): each could
        take something from another live controller. What was sent, one sentence each. At
        start, before any mission; never sends what would set the robot moving. Raises only
        what the wire raised."""
        ...

    def close(self) -> None: ...
