"""Firmware tasks by name (the ``tasks`` port: the GRX's task ids), confirmed by the robot.

A task is one of the profile's FSM states (its name or id). The request goes out at
start and again every ``RESEND`` s until the robot's task state (``snapshot.task``: the
state it reports and whether a task is in process) names it in a sample newer than the
request; with ``until: done`` the leaf then waits for the task to stop being in process.
A robot that never confirms fails the leaf with ``timeout``; one that reports a
different task once the first request is older than ``REFUSED_AFTER`` s fails it with
``task_refused`` (the GRX: an unknown or refused id leaves its task state unchanged).

A component (a module of the robot's firmware, e.g. the GRX's natural arm swing) is
named from the profile's robot options (``components``) and sent once: the robot
reports no component state, so nothing confirms it (``confirmed: false`` in the
feedback).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from py_trees.common import Status

from behaviours.base import RobotLeaf
from executive.language.kinds import NAME, Field, FieldType, show, timeout
from executive.language.leaf import LeafKind
from executive.language.model import Unresolved

if TYPE_CHECKING:
    from executive.language.leaf import LeafChecker, LeafInput
    from executive.language.model import Leaf

RESEND = 0.2  # s
REFUSED_AFTER = 1.0  # s: a fresh task state that is not ours, this long after asking


def _check(checker: LeafChecker, inp: LeafInput) -> dict[str, Any] | None:
    task, component = inp.value("task"), inp.value("component")
    args: dict[str, Any] = {
        "task": task,
        "fsm_id": None,
        "component": component,
        "until": inp.value("until"),
        "timeout": inp.value("timeout"),
    }
    if task is not None:
        args["fsm_id"] = task if isinstance(task, Unresolved) else checker.profile.fsm_id(task)
        continuous = _continuous(checker.profile)
        if args["until"] == "done" and args["fsm_id"] in continuous:
            checker.error(
                inp.where,
                f"{inp.path}.until",
                f"task {task!r} runs until another replaces it (profile "
                f"{checker.profile.name}'s continuous_tasks), so it is never done: "
                "use until: accepted",
            )
            return None
    if component is not None and not isinstance(component, Unresolved):
        known = _components(checker.profile.options)
        if component not in known:
            checker.error(
                inp.where,
                f"{inp.path}.component",
                f"component {component!r} is not in profile {checker.profile.name}'s "
                f"components ({', '.join(sorted(known)) or 'none'})",
            )
            return None
    return args


def _continuous(profile: Any) -> set[int]:
    """The ids of the profile's tasks that stay in process until replaced (walk...): a
    robot option (``continuous_tasks``); none where the profile names none."""
    options = profile.options
    names = options.get("continuous_tasks") if isinstance(options, Mapping) else None
    if not isinstance(names, list | tuple):
        return set()
    return {profile.fsm[str(n)].id for n in names if str(n) in profile.fsm}


def _components(options: Any) -> dict[str, int]:
    """The profile's robot options' component names -> ids (none if it has none)."""
    known = options.get("components") if isinstance(options, Mapping) else None
    return {str(k): int(v) for k, v in known.items()} if isinstance(known, Mapping) else {}


def _build(leaf: Leaf) -> RunTask:
    a = leaf.args
    if a.get("component") is not None:
        return RunTask(component=str(a["component"]), name=leaf.name, timeout=float(a["timeout"]))
    task: str | int = a["task"] if a.get("fsm_id") is None else a["fsm_id"]
    return RunTask(task, until=str(a["until"]), name=leaf.name, timeout=float(a["timeout"]))


def _label(a: Any) -> str:
    if a.get("component") is not None:
        return f"Run component {show(a['component'])}"
    return f"Run task {show(a.get('task'))}"


class RunTask(RobotLeaf):
    """Run a firmware task (or a component) and wait for the robot to confirm it.

    Reads the snapshot's ``task`` (task state, in process).
    """

    kinds = (
        LeafKind(
            name="run_task",
            doc="Runs a firmware task by the robot profile's name (confirmed by the robot's "
            "task state), or a component by name (sent, not confirmable).",
            fields=(
                NAME,
                Field("task", FieldType.FSM_STATE, "A task (FSM state) name, or its id."),
                Field(
                    "component",
                    FieldType.STRING,
                    "A component name from the profile's robot options (components).",
                    min_length=1,
                    max_length=80,
                ),
                Field(
                    "until",
                    FieldType.CHOICE,
                    "accepted (default): the robot reports the task; done: and then no longer "
                    "in process.",
                    default="accepted",
                    choices=("accepted", "done"),
                    refs=False,
                ),
                timeout("the robot to confirm the task"),
            ),
            one_of=("task", "component"),
            waits=True,
            args=("task", "fsm_id", "component", "until", "timeout"),
            requires="tasks",
            drives=("the FSM",),
            check=_check,
            build=_build,
            label=_label,
        ),
    )

    def __init__(
        self,
        task: str | int | None = None,
        *,
        component: str | None = None,
        until: str = "accepted",
        name: str | None = None,
        timeout: float = 5.0,
    ) -> None:
        label = _label({"task": task, "component": component})
        super().__init__(name or label, timeout)
        self.task = task
        self.component = component
        self.until = until
        self.task_id = -1
        self._sent_at = 0.0
        self._first_sent = 0.0
        self._seen = False

    def start(self) -> None:
        self._seen = False
        if self.component is not None:
            self._run_component()
            return
        assert self.task is not None
        try:
            self.task_id = self.ctx.profile.fsm_id(self.task)
        except KeyError:
            self.fail("unknown_task", f"task {self.task!r} is not in the robot profile")
            return
        self._send()
        self._first_sent = self._sent_at

    def _run_component(self) -> None:
        run = getattr(self.ctx.commands, "run_component", None)
        mid = _components(self.ctx.profile.options).get(str(self.component))
        if run is None or mid is None:
            self.fail("no_component", f"the robot has no component {self.component!r}")
            return
        run(mid)
        self.feedback_message = f"component {self.component} sent (confirmed: false)"

    def _send(self) -> None:
        self.ctx.commands.run_task(self.task_id)
        self._sent_at = self.ctx.clock()

    def poll(self) -> Status:
        if self.component is not None:
            return Status.SUCCESS
        task = self.robot.task
        fresh = task is not None and task.received >= self._sent_at
        if task is not None and fresh:
            state, in_process = task.sample
            if state == self.task_id:
                self._seen = True
                if self.until == "accepted" or not in_process:
                    return Status.SUCCESS
                self.feedback_message = f"task {self.task} in process"
                return Status.RUNNING
            if self._seen:
                return self.fail(
                    "task_replaced", f"task {self.task} was replaced by task {state} before done"
                )
            if self.ctx.clock() - self._first_sent >= REFUSED_AFTER:
                return self.fail(
                    "task_refused",
                    f"the robot stayed in task {state} {REFUSED_AFTER:g} s after being asked "
                    f"for {self.task} ({self.task_id})",
                )
        if not self._seen and self.ctx.clock() - self._sent_at >= RESEND:
            self._send()
        self.feedback_message = f"waiting for task {self.task} ({self.task_id})"
        return Status.RUNNING

    def timeout_message(self) -> str:
        seen = "in process" if self._seen else "never reported"
        return f"task {self.task} ({self.task_id}) {seen} within {self.timeout} s"
