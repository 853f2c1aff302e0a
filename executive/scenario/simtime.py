"""A scenario in simulated time: the service's own code against the robot's own simulator,
stepped in lockstep with the tick, as fast as the CPU allows.

What runs is what the service runs (``Runtime.build``: the adapter, the tree, the leaves,
the safety monitor, the motion streamer in its Python mode, the run record and its
checkpoints), on a ``SimClock`` and the robot's in-process wire
(``executive.seam.lockstep``: the Atom's ``SimAtom`` on an ``executive.wire.loop``). No
thread ticks: one loop moves the clock from one thing due to the next, in this order
when several are due at once:

1. the simulator's jobs (its physics, each state topic at its rate, its faults);
2. the scenario's events (a fault, a button, an operator's request);
3. the motion streamer's period (every engaged joint stream, from its trajectories);
4. the tick (``Runtime.tick``: requests, the tree, then the run record).

So per tick, the streamer's periods and the simulator's jobs up to the tick's time run
first, then the tick, exactly as often as in real time (500 Hz, 50 Hz, each state topic
at the profile's rate). A request is applied at the next tick, as the service applies it
(and wakes the loop at once when it idles, as ``Runtime.wake_if_idle`` does). Nothing
depends on how fast this machine is: the same scenario gives the same run, tick by tick,
on every run (the simulator's randomness is seeded: ``world: {seed: N}``).

A scenario's run starts as soon as the executive has heard every safety source (a
mission is refused before), and is started as a request would start it. It ends when the
run has ended and no timed event is left, ``tail`` seconds later (the hold settling, the
base stopping), or at the scenario's ``timeout``, whatever the mission is doing then.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import py_trees
from py_trees.common import Status

from behaviours.actions.checkpoint import SINK
from executive.clock import SimClock
from executive.core.runtime import Runtime
from executive.core.tree import Executive, forget_blackboards, node_path
from executive.mission.build import build
from executive.mission.builders import BUILDERS
from executive.mission.loader import MissionLoader
from executive.records.checkpoints import Checkpoints
from executive.records.mcaprecord import McapRecorder
from executive.records.runchannels import RunChannels, catalogue
from executive.records.runrecord import RunRecorder
from executive.scenario import nodes
from executive.scenario.model import Event, Scenario
from executive.scenario.story import Fired, Outcome, Pose, missed, read_story
from executive.seam.lockstep import LockstepPart, LockstepRobot
from executive.seam.ports import RobotSnapshot
from executive.seam.profile import RobotProfile, load_profile
from executive.seam.registry import part

READY_WITHIN_S = 10.0  # simulated s the robot has to be heard before the run is given up
ENDED = (Status.SUCCESS, Status.FAILURE)


def lockstep_part(profile: RobotProfile) -> LockstepPart:
    """The robot's simulated-time part (``RobotSpec.lockstep``); LookupError if none."""
    found = part(profile.robot, "lockstep")
    if found is None:
        raise LookupError(f"robot {profile.robot!r} has no lockstep part")
    robot: LockstepPart = found  # type: ignore[assignment]  # an object, not a callable
    return robot


def joints_by_name(snap: RobotSnapshot) -> dict[str, float]:
    """The measured joints of a snapshot, by profile joint name."""
    out = {}
    for name, (stream, index) in snap.layout.items():
        stamped = snap.joints.get(stream)
        if stamped is not None and index < len(stamped.sample):
            out[name] = float(stamped.sample[index])
    return out


def base_pose(snap: RobotSnapshot) -> Pose | None:
    """The base's pose the robot reported last (None: it reports none)."""
    base = snap.base
    pose = base.sample.pose if base is not None else None
    return None if pose is None else (float(pose[0]), float(pose[1]), float(pose[2]))


class _Trigger:
    """Waits for one of the nodes ``ref`` names in the running tree to start or end
    (``when``): an event's or a body check's."""

    def __init__(
        self, when: str, ref: str, tree: list[tuple[str, py_trees.behaviour.Behaviour]]
    ) -> None:
        self.when = when
        self.nodes = [n for path, n in tree if nodes.matches(ref, path)]

    def due(self) -> bool:
        if self.when == "on_start":
            return any(n.status is not Status.INVALID for n in self.nodes)
        return any(n.status in ENDED for n in self.nodes)


class SimulatedRun:
    """One scenario, run once in simulated time (``run()``), its files in ``workdir``."""

    def __init__(self, scenario: Scenario, workdir: Path, *, mcap: bool = False) -> None:
        self.scenario = scenario
        self.workdir = workdir
        self.mcap = mcap
        self.profile = load_profile(scenario.profile)
        self.part = lockstep_part(self.profile)
        self.clock = SimClock()
        self.fired = {e.index: Fired(e) for e in scenario.events}
        self._actions: list[tuple[float, int, Event]] = []  # (due, index, event): a heap
        self._triggers: list[tuple[_Trigger, Event]] = []
        self._body: list[tuple[_Trigger, int]] = []  # expect.body's checks, by index
        self.body: dict[int, dict[str, float]] = {}  # the joints when each check's node came
        self.body_base: dict[int, Pose | None] = {}  # and the base's pose then
        self._requests: list[tuple[Fired, Future[Any]]] = []
        self._next_tick = 0.0
        self._started_at: float | None = None
        self._run_id = ""
        self._end_at = math.inf
        self.error = ""
        self.timed_out = ""

    # -- assembly ---------------------------------------------------------------------

    def _open(self) -> tuple[LockstepRobot, Runtime, RunRecorder, RunChannels | None]:
        s = self.scenario
        robot = self.part.open(
            self.profile, self.clock, s.world, s.base, self.workdir / "sim-record.jsonl"
        )
        runtime = Runtime.build(
            self.profile, robot.interface, participant=robot.participant, clock=self.clock
        )
        ex = runtime.executive
        recorder = RunRecorder(self.workdir)
        ex.context.extras[SINK] = Checkpoints(recorder, lambda: ex.run)
        channels = None
        if self.mcap:
            mcap = McapRecorder(self.workdir, catalogue(self.profile).values(), clock=self.clock)
            channels = RunChannels(ex, self.profile, [mcap], clock=self.clock)
            channels.attach(runtime.streamer)

        def on_change(executive: Executive) -> None:
            recorder.on_change(executive)
            if channels is not None:
                channels.on_change(executive)

        ex.on_change = on_change
        # a request or a latch ticks an idle loop at once (Runtime.wake_if_idle)
        ex.on_request = ex.monitor.on_latch = self._wake_if_idle(runtime)
        return robot, runtime, recorder, channels

    def _wake_if_idle(self, runtime: Runtime) -> Callable[[], None]:
        def wake() -> None:
            if runtime.ticker.period > runtime.busy_period:
                self._next_tick = min(self._next_tick, self.clock())

        return wake

    # -- the run ----------------------------------------------------------------------

    def run(self) -> Outcome:
        wall, cpu = time.perf_counter(), time.process_time()
        robot, runtime, recorder, channels = self._open()
        ex = runtime.executive
        try:
            self._loop(robot, runtime, recorder, channels)
            joints = joints_by_name(ex.state_now())
            base = base_pose(ex.state_now())
        finally:
            self._close(robot, runtime, recorder, channels)
        record = self.workdir / "runs" / f"{self._run_id}.jsonl"
        story = read_story(record) if self._run_id and record.is_file() else None
        for fired in self.fired.values():
            if fired.at is None and not fired.missed:
                fired.missed = missed(fired.event, started=self._started_at is not None)
        files = {"sim record": robot.record()}
        if self._run_id:
            files["run record"] = record
            if self.mcap:
                files["run MCAP"] = self.workdir / "runs" / f"{self._run_id}.mcap"
        return Outcome(
            story=story,
            fired=[self.fired[i] for i in sorted(self.fired)],
            joints=joints,
            body=self.body,
            base=base,
            body_base=self.body_base,
            record=files["sim record"],
            files=files,
            error=self.error,
            timed_out=self.timed_out,
            simulated=True,
            duration=self.clock() - (self._started_at or 0.0),
            wall=time.perf_counter() - wall,
            cpu=time.process_time() - cpu,
        )

    def _loop(
        self,
        robot: LockstepRobot,
        runtime: Runtime,
        recorder: RunRecorder,
        channels: RunChannels | None,
    ) -> None:
        clock, streamer, ex = self.clock, runtime.streamer, runtime.executive
        period = streamer.period
        next_stream = 0.0
        actions = self._actions
        while True:
            sim_due = robot.due()
            action_due = actions[0][0] if actions else math.inf
            now = min(sim_due, action_due, next_stream, self._next_tick)
            if now >= self._end_at:
                clock.advance(self._end_at)
                return
            clock.advance(now)
            if sim_due <= now:
                robot.run_due(now)
            elif action_due <= now:
                _, _, event = heapq.heappop(actions)
                self._apply(event, robot, runtime)
            elif next_stream <= now:
                streamer.step(now)
                next_stream = now + period
            else:
                runtime.tick()
                recorder.on_tick(ex)
                if channels is not None:
                    channels.on_tick(ex)
                # a checkpoint's line is on the disk before the next tick, as it is within
                # a tick or two on the robot: its leaf's ticks do not depend on this machine
                recorder.flush()
                self._next_tick = now + runtime.ticker.period
                self._after_tick(ex, now)

    def _after_tick(self, ex: Executive, now: float) -> None:
        for fired, future in [r for r in self._requests if r[1].done()]:
            self._requests.remove((fired, future))
            error = future.exception()
            if error is not None:
                fired.reply = f"failed: {type(error).__name__}: {error}"
            else:
                ok, message = future.result()
                fired.reply = message if ok else message or "refused"
        if self._started_at is None:
            self._start(ex, now)
            return
        # every tick of the run, its last included: a node that ended with the run (the
        # mission's last) has ended, as the run's record tells it (``--realtime``)
        for trigger, event in [t for t in self._triggers if t[0].due()]:
            self._triggers.remove((trigger, event))
            self._schedule(event, now + event.seconds)
        for trigger, index in [b for b in self._body if b[0].due()]:
            self._body.remove((trigger, index))
            snap = ex.state_now()
            self.body[index], self.body_base[index] = joints_by_name(snap), base_pose(snap)
        ended = ex.run is None or ex.run.run_id != self._run_id
        if ended:  # the run is over: a node's start or end never comes now
            self._triggers.clear()
            self._body.clear()
        if ended and not self._actions and not self._requests and self._end_at == math.inf:
            self._end_at = now + self.scenario.tail
        if now - self._started_at >= self.scenario.timeout and self._end_at == math.inf:
            self.timed_out = self._where(ex)
            self._end_at = now
            if ex.run is not None:
                ex.stop_mission(f"the scenario's time limit ({self.scenario.timeout:g} s)")

    def _start(self, ex: Executive, now: float) -> None:
        """Start the mission once the robot is heard (as a start request: the next tick)."""
        if self._run_id:  # submitted: started by this tick, or refused
            return
        if ex.not_ready() or ex.blockers():
            if now >= READY_WITHIN_S:
                why = "; ".join(ex.blockers() or ex.not_ready())
                self.error = f"the robot was not ready within {READY_WITHIN_S:g} s: {why}"
                self._end_at = now
            return
        s = self.scenario
        result = MissionLoader(self.profile, s.missions_dir).check(s.mission_file, args=s.params)
        if result.mission is None:
            self.error = "; ".join(str(d) for d in result.errors) or "the mission did not load"
            self._end_at = now
            return
        root = build(result.mission, BUILDERS, clock=ex.context.pauses.mission_time)
        meta = {"file": str(s.mission_file), "params": dict(s.params), "scenario": str(s.file)}
        self._run_id = "pending"
        future = ex.submit(lambda: ex.start_mission(s.mission, root, meta))
        future.add_done_callback(lambda f: self._started(f, ex))

    def _started(self, future: Future[Any], ex: Executive) -> None:
        """On the tick that applied the start: the run's id, its events set going."""
        ok, message = future.result()
        if not ok:
            self.error = f"the start was refused: {message}"
            self._end_at = self.clock()
            self._run_id = ""
            return
        assert ex.run is not None
        self._run_id = ex.run.run_id
        self._started_at = ex.run.started_at
        tree = [(nodes.mission_path(node_path(n)), n) for n in ex.run.root.iterate()]
        for event in self.scenario.events:
            if event.when == "at":
                self._schedule(event, self._started_at + event.seconds)
            else:
                self._triggers.append((_Trigger(event.when, event.node, tree), event))
        for check in self.scenario.expect.body:
            self._body.append((_Trigger(check.when, check.node, tree), check.index))

    def _schedule(self, event: Event, at: float) -> None:
        heapq.heappush(self._actions, (max(at, self.clock()), event.index, event))

    def _apply(self, event: Event, robot: LockstepRobot, runtime: Runtime) -> None:
        """Do what ``event`` says, now (between two ticks, as a person or a fault would)."""
        now = self.clock()
        ex = runtime.executive
        fired = self.fired[event.index]
        fired.at = now - (self._started_at or 0.0)
        fired.t = now
        motion = runtime.adapter.motion()
        fired.moving = None if motion.moving is None else motion.reasons
        try:
            if event.action == "fault":
                robot.fault(event.value, now)
            elif event.action == "clear":
                robot.clear(event.value, now)
            elif event.action == "press":
                robot.press(event.value, now)
            else:
                self._requests.append((fired, ex.submit(_request(ex, event.value))))
        except ValueError as e:  # checked before the run: the simulator refused it anyway
            fired.reply = f"refused by the simulator: {e}"

    @staticmethod
    def _where(ex: Executive) -> str:
        """Where the running mission is (its deepest running node), by mission path."""
        if ex.run is None:
            return ""
        tip = ex.run.root.tip()
        return nodes.mission_path(node_path(tip)) if tip is not None else ex.run.name

    def _close(
        self,
        robot: LockstepRobot,
        runtime: Runtime,
        recorder: RunRecorder,
        channels: RunChannels | None,
    ) -> None:
        ex = runtime.executive
        if ex.run is not None:
            ex.stop_mission("the scenario ended")
        recorder.close()
        if channels is not None:
            channels.close()
        robot.close()
        runtime.adapter.close()
        forget_blackboards(ex.tree.root)


def _request(ex: Executive, verb: str) -> Callable[[], tuple[bool, str]]:
    """An operator's request as the service applies it on the tick thread."""
    if verb == "pause":
        return lambda: ex.pause("scenario")
    if verb == "resume":
        return ex.resume
    if verb == "stop":
        return lambda: ex.stop_mission("stopped by request")
    return ex.reset
