"""The core tree and the executive that runs one mission at a time in it.

    Parallel "<Robot>" [ GatherRobotState,
                         Selector(memory=False) [ SafetyWatchdog, MissionSlot, Idle ] ]

(py_trees_ros_tutorials' pattern: data gathering beside a priority selector, jobs
inserted into a slot at runtime and pruned when they end.) The watchdog is above the
slot, so a latched SAFE-STOP preempts whatever mission runs: every running leaf's
``terminate()`` runs and leaves the robot safe. Missions are built under the slot and
cannot reach the watchdog.

``Executive`` is tick-driven and single-threaded: requests from other threads are
queued and applied at the start of the next tick (check for cancel before each tick),
so the tree is only ever touched by the thread that ticks it.

The robot is an adapter (``executive.seam.ports.RobotAdapter``): the executive reads
its snapshot and calls its ports, and knows nothing of its wire.
"""

from __future__ import annotations

import enum
import queue
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import py_trees
import structlog
from py_trees.common import ParallelPolicy, Status

from behaviours import places
from behaviours.base import RobotLeaf
from behaviours.context import RobotContext
from behaviours.state import GatherRobotState
from executive.core.rest import HOLD_TOL_RAD, RestWatch
from executive.core.safety import (
    Activity,
    Cause,
    EstopFastPath,
    SafetyMonitor,
    SafetyReaction,
    SafetyWatchdog,
)
from executive.core.ticker import our_line
from executive.motion.streamer import HeldError, MotionStreamer
from executive.seam.ports import NavStatus, Reflex, RobotAdapter, RobotSnapshot, Trip

log = structlog.get_logger(__name__)


class ExecState(enum.Enum):
    IDLE = "IDLE"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    ABORTED = "ABORTED"
    SAFE_STOP = "SAFE_STOP"


class MissionSlot(py_trees.composites.Sequence):
    """Where the running mission's subtree sits; FAILURE when empty, so Idle runs.

    While ``paused`` the slot is RUNNING without ticking the mission: no leaf polls, sends
    or times out, and the watchdog above it still ticks first (a trip preempts a paused
    mission as any other)."""

    def __init__(self) -> None:
        super().__init__("Mission Slot", memory=True)
        self.paused = False

    def tick(self) -> Iterator[py_trees.behaviour.Behaviour]:
        if not self.children:
            self.status = Status.FAILURE
            yield self
            return
        if self.paused:
            self.status = Status.RUNNING
            yield self
            return
        yield from super().tick()


class Idle(py_trees.behaviour.Behaviour):
    """The lowest-priority branch: nothing to do. Always RUNNING."""

    def update(self) -> Status:
        return Status.RUNNING


@dataclass
class MissionRun:
    name: str
    run_id: str
    root: py_trees.behaviour.Behaviour
    started_at: float
    result: ExecState | None = None
    reason: str = ""
    # what its record says of it at its start (the service's: mission file, content hash,
    # parameters, ``recovered_from``): what ``atom-executive recover`` needs after a crash
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Paused:
    """What a pause holds (``Executive.pause``): since when, who asked, and what is held.

    ``since`` is the request: the mission's time stands still from then. The joints are
    *held* only from ``rest.rest_at`` on, once they were measured at rest (a body stopped
    mid-move rings for a while: ``executive.core.rest``); status says which."""

    since: float  # the executive's clock (monotonic)
    since_unix: float
    by: str
    what: list[str]
    base_paused: bool = False  # a PAUSE_TASK went out: RESUME_TASK on resume
    base_sent_at: float = -1.0
    rest: RestWatch = field(default_factory=RestWatch)
    drift_said: bool = False  # the log said a held joint moved past HOLD_TOL_RAD

    @property
    def held_since_unix(self) -> float | None:
        """Wall clock when every held joint came to rest; None while still coming to rest."""
        rest_at = self.rest.rest_at
        return None if rest_at is None else self.since_unix + (rest_at - self.since)


BASE_PAUSE_RESEND_S = 0.5  # a base still running while paused is asked again this often
# what a pause says it holds once it has paused the base's task: only then (a mission with no
# base task running has nothing of the base's to pause, and a pause must not claim one)
BASE_TASK_PAUSED = "base task (PAUSE_TASK)"


@dataclass
class Counters:
    ticks: int = 0
    overruns: int = 0
    tick_errors: int = 0
    runs: int = 0


def node_path(node: py_trees.behaviour.Behaviour) -> str:
    """``Atom/Mission Slot/delivery/Navigate to tag 3``: the names from the root down."""
    names = []
    current: py_trees.behaviour.Behaviour | None = node
    while current is not None:
        names.append(current.name)
        current = current.parent
    return "/".join(reversed(names))


def _failing_node(exc: BaseException) -> py_trees.behaviour.Behaviour | None:
    """The innermost behaviour on the traceback: the node whose code raised."""
    found = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        candidate = frame.f_locals.get("self")
        if isinstance(candidate, py_trees.behaviour.Behaviour):
            found = candidate
    return found


def _origin(exc: BaseException) -> str:
    """``file:line in function`` of ours where ``exc`` was raised: the innermost frame of
    the traceback in our code (a library's line says nothing of which call of ours failed);
    the raising line itself if none is ours, "" when it was never raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = our_line(frames)
    if ours or not frames:
        return ours
    return f"{frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}"


def forget_blackboards(root: py_trees.behaviour.Behaviour) -> None:
    """Unregister the blackboard clients of every node under ``root`` (once it is done with).

    py_trees keeps every client it ever made in ``Blackboard.clients`` and in its keys'
    metadata until told otherwise, so a service that builds a tree for every mission (and
    for every start it refuses) grew by a couple of KiB a mission (found by ``make soak``).
    """
    for node in root.iterate():
        for client in node.blackboards:
            client.unregister(clear=False)  # the robot's keys stay: the gatherer writes them
        node.blackboards.clear()


def dismantle(root: py_trees.behaviour.Behaviour) -> None:
    """Break the reference cycles of a tree nothing will tick again, so that reference
    counting frees it at once.

    Every py_trees node is a cycle by itself (``node.iterator``, its ``tick()`` generator,
    holds the node) and with its parent (``parent`` / ``children``, ``current_child``). A
    finished run's tree was freed only by a full collection of the cyclic collector, which
    came every ~100 runs: the run trees in between piled up (the service's Python heap a
    sawtooth of ~15,000 blocks) and pymalloc's arenas grew to the peak and kept it, the
    soak's residual growth (issue 25, 8).
    """
    for node in list(root.iterate()):
        node.iterator = iter(())  # not the node's tick(): that generator's frame holds it
        node.parent = None
        if isinstance(node, py_trees.composites.Composite):
            node.current_child = None
        node.children = []


def first_failure(root: py_trees.behaviour.Behaviour) -> tuple[str, str]:
    """(node path, reason) of the deepest failed robot leaf under ``root``."""
    for node in root.iterate():
        if (
            isinstance(node, RobotLeaf)
            and node.failure is not None
            and node.status is Status.FAILURE
        ):
            return node_path(node), str(node.failure)
    return node_path(root), "the mission failed"


@dataclass
class Executive:
    """The core tree with one mission slot, ticked by whoever owns it."""

    adapter: RobotAdapter
    context: RobotContext
    streamer: MotionStreamer
    monitor: SafetyMonitor
    clock: Callable[[], float] = time.monotonic
    on_change: Callable[[Executive], None] | None = None
    # called (on the requesting thread) when a request is queued: the runtime wakes the
    # tick loop, so a request never waits out an idle period
    on_request: Callable[[], None] | None = None
    state: ExecState = ExecState.IDLE
    run: MissionRun | None = None
    last_run: MissionRun | None = None
    counters: Counters = field(default_factory=Counters)
    # set by whoever watches discovery (executive.wire.typewatch); missions are refused while
    # the robot announces types we do not speak: they would never see its state
    interface_mismatches: tuple[str, ...] = ()
    # set by whoever watches discovery for other controllers of this robot (another
    # executive, another writer on its command topics): missions are refused meanwhile
    conflicts: tuple[str, ...] = ()
    # set by the service's look at what a previous instance left (executive/service/recovery.py)
    # until it has looked and made the robot safe: what it waits for ("recovering what ...");
    # missions and resets are refused meanwhile, "not ready: " and it ("": nothing to wait for)
    recovering: str = ""
    _requests: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = field(
        default_factory=queue.SimpleQueue
    )
    # set while the running mission is paused (``pause``/``resume``)
    paused: Paused | None = None
    # the longest a pause may last before the run ends (the profile's max_pause_s)
    max_pause_s: float = 300.0
    # what a trip sends after the hold (the adapter's safe_stop, through the command tap)
    safe_stop: Callable[[], object] | None = None
    # the e-stop reflex (hold and cancel in C, no GIL); None: the Python fast path holds
    reflex: Reflex | None = field(default=None, init=False, repr=False)
    # a fast-path trip (hold, then latch) and a start or reset (judge, then release) exclude
    # each other, so "latched" always means "held"
    _trip_lock: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)
    # every node of the core tree, as ``root.iterate()`` yields them, while the tree is the
    # same (a mission inserted or pruned makes it anew): ``nodes()``
    _nodes: tuple[py_trees.behaviour.Behaviour, ...] | None = field(
        default=None, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self.reaction = SafetyReaction(self.streamer.hold, self.safe_stop or self.adapter.safe_stop)
        self.watchdog = SafetyWatchdog(self.monitor, self.reaction, self.activity)
        # the hold must not wait for a tick, nor for the interpreter: a robot with a native
        # reflex (the Atom's, in C) holds and cancels first, then tells us; the adapter's
        # safety events (an e-stop, an undecodable safety sample) react on its own thread
        self.reflex = self.adapter.install_reflex(self.streamer, self._reflex_tripped)
        self.adapter.on_safety_event(EstopFastPath(self.monitor, self.reaction, self._trip_lock))
        self.slot = MissionSlot()
        self.selector = py_trees.composites.Selector(
            "Priorities", memory=False, children=[self.watchdog, self.slot, Idle("Idle")]
        )
        root = py_trees.composites.Parallel(
            self.adapter.name.capitalize(),
            policy=ParallelPolicy.SuccessOnAll(synchronise=False),
            children=[GatherRobotState(self.adapter.snapshot), self.selector],
        )
        self.tree = py_trees.trees.BehaviourTree(root)
        self.tree.setup(context=self.context)  # type: ignore[arg-type]  # py_trees types **kwargs as int

    def _reflex_tripped(self, trip: Trip) -> None:
        """The reflex has held and canceled: the rest of the reaction (STOP_REMOTE if remote
        driving; the streamer takes the reflex's hold), then the latch, as the fast path does."""
        cause = Cause(trip.code, trip.message)
        with self._trip_lock:
            try:
                self.reaction(cause.message)
            finally:
                self.monitor.trip([cause])

    # -- requests (any thread) ------------------------------------------------------------

    def submit(self, request: Callable[[], Any]) -> Future[Any]:
        """Queue ``request`` to run on the tick thread before the next tick."""
        future: Future[Any] = Future()
        self._requests.put((request, future))
        if self.on_request is not None:
            self.on_request()
        return future

    # -- on the tick thread ---------------------------------------------------------------

    def activity(self) -> Activity:
        return Activity(
            mission_running=self.run is not None,
            motion_engaged=bool(self.streamer.engaged()),
            control_confirmed=self.run is not None
            and self.context.control_acquired
            and self._control_seen,
        )

    _control_seen: bool = False

    def start_mission(
        self,
        name: str,
        root: py_trees.behaviour.Behaviour,
        meta: dict[str, Any] | None = None,
    ) -> tuple[bool, str]:
        with self._trip_lock:  # no fast-path trip between the judgement and the release
            refusal = self._refusal()
            if not refusal:
                self.streamer.release()
        if refusal:
            forget_blackboards(root)  # built for nothing
            dismantle(root)
            return False, refusal
        for node in root.iterate():
            node.setup(context=self.context)
        run = MissionRun(name, uuid.uuid4().hex[:12], root, self.clock(), meta=dict(meta or {}))
        self.tree.insert_subtree(root, self.slot.id, 0)
        self._nodes = None
        self.run = run
        self.context.control_acquired = False
        self.context.feed.clear()  # the feed is this run's; kept, it grew for good (bench/memory.py)
        self.context.pauses.clear()
        places.clear()  # a run's places are its own (behaviours/places.py)
        self.slot.paused, self.paused = False, None
        self._control_seen = False
        self.counters.runs += 1
        self._set_state(ExecState.RUNNING)
        log.info("mission started", mission=name, run_id=run.run_id)
        return True, run.run_id

    def _refusal(self) -> str:
        """Why a mission cannot start now ("" if it can)."""
        if self.monitor.latched:
            return "refused: SAFE_STOP is latched; reset first"
        if self.run is not None:
            return f"refused: mission {self.run.name!r} is running"
        blockers = [  # recovery's says why: "not ready: recovering what ..."
            "not ready: " + b if b == self.recovering else b for b in self.blockers()
        ]
        return "refused: " + "; ".join(blockers) if blockers else ""

    def blockers(self) -> list[str]:
        """What keeps any mission from starting now, whatever the executive is doing."""
        out = []
        if self.interface_mismatches:
            out.append("interface mismatch: " + "; ".join(self.interface_mismatches))
        if self.conflicts:
            out.append("another controller: " + "; ".join(self.conflicts))
        if self.recovering:  # after those: a robot we cannot hear or share is no look's fault
            out.append(self.recovering)
        if not_ready := self.not_ready():
            out.append("the robot's safety state is not known: " + "; ".join(not_ready))
        return out

    def not_ready(self) -> list[str]:
        """The safety sources that are silent or not understood now (DESIGN.md 4)."""
        return self.monitor.not_ready(self.state_now())

    def set_place(self, name: str, at: tuple[float, float, float], by: str) -> tuple[bool, str]:
        """A place for the running mission's ``reach`` (behaviours/places.py); refused
        while no mission runs: places belong to a run."""
        if self.run is None:
            return False, "refused: no mission is running (a place is set for the running one)"
        places.write(name, at, by)
        log.info("place set", place=name, at=list(at), by=by, run_id=self.run.run_id)
        return True, f"place {name} = [{at[0]:g}, {at[1]:g}, {at[2]:g}]"

    def stop_mission(self, reason: str = "stopped by request") -> tuple[bool, str]:
        if self.run is None:
            return False, "no mission is running"
        self._end(ExecState.ABORTED, reason)
        return True, reason

    # -- pause and resume (on the tick thread) ----------------------------------------------

    def pause(self, by: str = "request") -> tuple[bool, str]:
        """Hold the running mission where it is: the trajectories' clock stops (each joint
        stream goes on sending the sample it had reached), the base's task is paused if it
        runs one (the Atom: PAUSE_TASK; one accepted later is paused then) or the base is
        sent zero velocity (the GRX), and no leaf is ticked, so every timeout and wait
        stands still (``RobotContext.pauses``). The watchdog keeps ticking. The reply and
        ``Paused.what`` say what was held: a base task only once PAUSE_TASK went out.
        """
        if self.run is None:
            return False, "refused: no mission is running"
        if self.monitor.latched:
            return False, "refused: SAFE_STOP is latched"
        if self.paused is not None:
            return True, f"already paused ({', '.join(self.paused.what)})"
        if not self.streamer.pause():
            return False, "refused: motion is held"
        now = self.clock()
        self.slot.paused = True
        self.context.pauses.pause(now)
        what = [f"joint stream {t}" for t in self.streamer.engaged()]
        self.paused = Paused(now, time.time(), by, what)
        if getattr(self.context.commands, "pause_base", None) is not None:
            self._keep_base_paused(now)  # says "base task (PAUSE_TASK)" only if it sent one
        elif "base_velocity" in self.adapter.capabilities:
            self.context.commands.set_velocity(0.0, 0.0, 0.0)
            what.append("base (zero velocity)")
        what.append("timeouts and waits")
        log.info("mission paused", run_id=self.run.run_id, by=by, what=what)
        self._set_state(self.state)
        return True, "paused: " + ", ".join(what)

    def _keep_base_paused(self, now: float) -> None:
        """Ask a base that is (still, or newly: a goal accepted after the pause) running its
        task to pause it, again every ``BASE_PAUSE_RESEND_S`` until it reports PAUSED."""
        paused = self.paused
        pause_base = getattr(self.context.commands, "pause_base", None)
        if paused is None or pause_base is None:
            return
        base = self.adapter.snapshot().base
        if base is None or base.sample.status not in (NavStatus.RUNNING, NavStatus.QUEUING):
            return
        if now - paused.base_sent_at >= BASE_PAUSE_RESEND_S:
            pause_base()
            if not paused.base_paused:  # what the pause holds, as the reply and status say
                paused.what.append(BASE_TASK_PAUSED)
                if now > paused.since:  # a goal accepted after the pause: said when paused
                    log.info("base task paused", run_id=self.run.run_id if self.run else None)
            paused.base_paused, paused.base_sent_at = True, now

    def _watch_rest(self, paused: Paused, now: float) -> None:
        """Feed this tick's measured held joints to ``paused.rest``: the base still (not
        driving a task) and every engaged stream measured. Logs when the robot came to
        rest, and once if a held joint then moves past ``HOLD_TOL_RAD``."""
        parts = [self.streamer.measured(topic) for topic in self.streamer.engaged()]
        q = None
        if all(part is not None for part in parts):
            q = np.concatenate([p for p in parts if p is not None]) if parts else np.zeros(0)
        base = self.adapter.snapshot().base
        still = base is None or base.sample.status not in (NavStatus.RUNNING, NavStatus.QUEUING)
        rest = paused.rest
        if rest.add(now, q, still):
            log.info(
                "paused mission at rest",
                run_id=self.run.run_id if self.run else None,
                after_s=round(now - paused.since, 3),
            )
            self._set_state(self.state)  # status: held since now
        elif rest.at_rest and rest.drift > HOLD_TOL_RAD and not paused.drift_said:
            paused.drift_said = True
            log.warning(
                "a held joint moved while paused",
                moved_mrad=round(rest.drift * 1e3, 2),
                limit_mrad=HOLD_TOL_RAD * 1e3,
            )

    def resume(self) -> tuple[bool, str]:
        """Go on after a pause: each interrupted move re-planned from the measured pose at
        the same speed caps (``MotionStreamer.resume``), the base's task continued
        (RESUME_TASK), then the mission is ticked again where it was. Refused once the run
        is over (a SAFE_STOP while paused ends it; a reset does not bring it back)."""
        if self.monitor.latched:
            return False, "refused: SAFE_STOP is latched; the paused run is over"
        if self.run is None:
            last = self.last_run
            over = f" (run {last.run_id} ended {last.result.value})" if last and last.result else ""
            return False, f"refused: no mission is paused{over}"
        paused = self.paused
        if paused is None:
            return False, "refused: the mission is not paused"
        try:
            replanned = self.streamer.resume()
        except HeldError as e:
            return False, f"refused: {e}"
        now = self.clock()
        if paused.base_paused:
            resume_base = getattr(self.context.commands, "resume_base", None)
            if resume_base is not None:
                resume_base()
        length = self.context.pauses.resume(now)
        self.slot.paused, self.paused = False, None
        log.info("mission resumed", run_id=self.run.run_id, paused_s=round(length, 3))
        self._set_state(self.state)
        said = f"resumed after {length:.1f} s"
        return True, said + (f"; {'; '.join(replanned)}" if replanned else "")

    def _check_pause(self) -> None:
        """While paused: keep the base paused, watch the held joints come to rest and stay
        there (``Paused.rest``); past the profile's ``max_pause_s`` end the run (ABORTED,
        saying why: the robot is not left holding for hours)."""
        paused = self.paused
        if paused is None or self.run is None:
            return
        now = self.clock()
        self._keep_base_paused(now)
        self._watch_rest(paused, now)
        if now - paused.since > self.max_pause_s:
            self._end(
                ExecState.ABORTED,
                f"paused for {now - paused.since:.1f} s, longer than the profile's "
                f"max_pause_s ({self.max_pause_s:g} s): the run ends",
            )

    def reset(self) -> tuple[bool, str]:
        """Clear a latched SAFE-STOP if no cause is present *now*, and go idle.

        The e-stop fast path latches between ticks; a reset may arrive before any tick
        has seen that. So the stop is applied first (the mission preempted), and the
        causes are judged from the newest samples, not from the last tick's view of them
        (which predates the trip): otherwise a reset in that window was accepted with
        the e-stop still pressed, and left the mission running (found by bench/estop.py).
        """
        if self.monitor.latched and self.state is not ExecState.SAFE_STOP:
            self._settle()
        if self.recovering:  # what a dead instance left is not made safe yet: keep the latch
            return False, "refused: not ready: " + self.recovering
        # judged and released with no fast-path trip in between: a trip after the judgement
        # would otherwise be cleared by it, and its hold undone by the release
        with self._trip_lock:
            state = self.state_now()
            present = self.monitor.evaluate(state, self.activity())
            present += [Cause("not_ready", str(why)) for why in self.monitor.silent(state)]
            ok, message = self.monitor.reset(present)
            release = ok and self.state is ExecState.SAFE_STOP
            if release:
                if self.reflex is not None:
                    self.reflex.reset()  # first: the streamer stays held while it is tripped
                self.streamer.release()
        if release:
            self._release_robot()
            self._set_state(ExecState.IDLE)
        return ok, message

    def state_now(self) -> RobotSnapshot:
        """The robot's newest state (what the next tick would gather)."""
        return self.adapter.snapshot()

    def nodes(self) -> tuple[py_trees.behaviour.Behaviour, ...]:
        """Every node of the core tree, as ``tree.root.iterate()`` yields them: what the
        records and the status look at after each tick, walked once per tree, not per look
        (py_trees' recursive generator over a 100-node tree cost more than the tick's own
        leaves; issue 31, bench/parts/tick.py)."""
        if self._nodes is None:
            self._nodes = tuple(self.tree.root.iterate())
        return self._nodes

    def _tick_tree(self) -> None:
        """``tree.tick()``, without its visitors' walk of the whole tree when it has none
        (the executive adds no visitor or tick handler: the walk found nothing to do)."""
        tree = self.tree
        if tree.visitors or tree.pre_tick_handlers or tree.post_tick_handlers:
            tree.tick()
            return
        for _ in tree.root.tick():
            pass
        tree.count += 1

    def tick(self) -> None:
        """Apply queued requests, then tick the tree once and settle the mission's end."""
        while True:
            try:
                request, future = self._requests.get_nowait()
            except queue.Empty:
                break
            try:
                future.set_result(request())
            except Exception as e:  # noqa: BLE001 - a bad request must not stop the ticking
                future.set_exception(e)
        try:
            self._tick_tree()
        except Exception as e:  # noqa: BLE001 - any leaf bug: halt, hold, report, keep serving
            self._tick_failed(e)
            return
        finally:
            self.counters.ticks += 1
        self._settle()

    def _settle(self) -> None:
        if not self.context.control_acquired:
            self._control_seen = False
        elif not self._control_seen:
            control = self.adapter.snapshot().control
            self._control_seen = control is not None and control.sample
        if self.monitor.latched:
            if self.run is not None:
                self._end(
                    ExecState.SAFE_STOP, "; ".join(map(str, self.monitor.reasons)), release=False
                )
            elif self.state is not ExecState.SAFE_STOP:
                self._set_state(ExecState.SAFE_STOP)
            return
        if self.run is None:
            return
        if self.paused is not None:
            self._check_pause()
            return
        status = self.run.root.status
        if status is Status.SUCCESS:
            self._end(ExecState.SUCCEEDED, "")
        elif status is Status.FAILURE:
            path, reason = first_failure(self.run.root)
            self._end(ExecState.FAILED, f"{path}: {reason}")

    def _tick_failed(self, exc: Exception) -> None:
        node = _failing_node(exc)
        self.internal_fault(exc, node_path(node) if node is not None else "tree")
        self.tree.root.stop(Status.INVALID)  # every running leaf's terminate() runs once
        self._settle()  # latched: the mission ends SAFE_STOP, control kept until the reset

    def internal_fault(self, exc: BaseException, where: str) -> None:
        """Our own software failed (an exception anywhere in the tick loop, a stalled tick):
        the same reaction as a trip, then SAFE_STOP latched with cause ``internal``.

        Callable from any thread: the reaction and the latch are thread-safe, and the tick
        thread settles the mission at its next tick (if it ever ticks again; if it does not,
        the systemd watchdog pings have stopped and systemd restarts the service).
        """
        self.counters.tick_errors += 1
        cause = Cause("internal", f"{where}: {type(exc).__name__}: {exc}")
        try:
            self.reaction(cause.message)  # hold and cancel first, as for any trip
        finally:
            self.monitor.trip([cause])
        log.error("internal fault", where=where, error=repr(exc), at=_origin(exc))

    def _end(self, result: ExecState, reason: str, *, release: bool = True) -> None:
        run = self.run
        assert run is not None
        if run.root.status is Status.RUNNING:
            run.root.stop(Status.INVALID)  # every running leaf's terminate() runs once
        self.tree.prune_subtree(run.root.id)
        self._nodes = None
        forget_blackboards(run.root)
        places.clear()
        if self.paused is not None:  # a run that ends paused: nothing of the pause is left
            self.slot.paused, self.paused = False, None
            self.context.pauses.resume()
            self.streamer.unpause()
        run.result, run.reason = result, reason
        previous, self.last_run, self.run = self.last_run, run, None
        if previous is not None:  # kept until now for the status (last_run); freed at once
            dismantle(previous.root)
        if release:
            self._release_robot()
        log.info(
            "mission ended", mission=run.name, run_id=run.run_id, result=result.value, reason=reason
        )
        self._set_state(result)

    def _release_robot(self) -> None:
        """Hand control back if a mission took it, and stop publishing joint streams."""
        if self.context.control_acquired:
            self.context.commands.request_control(False)
            self.context.control_acquired = False
        for topic in self.streamer.engaged():
            self.streamer.disengage(topic)

    def _set_state(self, state: ExecState) -> None:
        self.state = state
        if self.on_change is not None:
            self.on_change(self)
