"""Build the C robot per interface variant, start it on a test's domain, talk to it.

``build_crobot(variant, workdir)`` runs Debian's ``idlc -l c`` over the variant's ``.idl``
files (``tests.wire.c_interop.idl_files``, same output layout, so the variant headers'
``../../dobot_atom/x.h`` includes hold) and gcc over ``crobot.c`` with the variant's -D
flags. ``crobot_args(profile)`` turns a ``RobotProfile`` into the program's options.
``CRobot`` is the running process: ``fault("estop soft on")`` waits for its reply,
``recording()`` parses its record with ``executive.robots.atom.sim.record.Recording``.

Fixtures (import them into a conftest: ``from tests.crobot.harness import crobot_exe,
start_crobot``): ``crobot_exe`` (session) builds once per variant and returns the
executable; ``start_crobot`` (per test, on the ``dds_domain`` lease) starts robots and
stops them when the test ends, whatever happens.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np
import pytest

from executive.robots.atom.interface import AXES, Variant
from executive.robots.atom.sim.record import Recording
from executive.robots.simkit import realtime
from executive.seam.profile import RobotProfile, load_profile
from tests.wire.c_interop import IDL_DIR, _run, idl_files

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "crobot.c"
TIMEOUT = 15.0  # generous: the machine is shared

# The state topics the robot publishes, by the profile's key; hard-coded in crobot.c too.
STATE_TOPICS: dict[str, str] = {
    "upper_state": "rt/upper/state",
    "lower_state": "rt/lower/state",
    "hands_state": "rt/hands/state",
    "amr_state": "rt/amr/state",
    "emergency_state": "rt/emergency/state",
    "main_nodes_state": "rt/main/nodes/state",
}

# axis -> choice -> the crobot.c macro that choice needs (None: the default code path).
# Every axis and choice of executive.wire.AXES must be here: a new one fails the build
# with a message instead of compiling the robot for the wrong types.
AXIS_DEFINES: dict[str, dict[str, str | None]] = {
    "upper_state": {"with_imu": "CROBOT_UPPER_IMU", "no_imu": None},
    "set_fsm_id": {"with_action": "CROBOT_FSM_ACTION", "id_only": None},
    "emergency_state": {"three_flags": None, "four_flags": "CROBOT_ESTOP_DI"},
    "amr_command_type": {"seed": None, "move_to_charge": "CROBOT_AMR_MOVE_TO_CHARGE"},
}


class CRobotError(RuntimeError):
    """The C robot refused a command, died, or did not answer in time."""


def defines(variant: Variant) -> list[str]:
    """gcc -D flags for ``variant``."""
    flags = []
    for axis, choice in variant.choices.items():
        known = AXIS_DEFINES.get(axis, {})
        if axis not in AXIS_DEFINES or choice not in known:
            raise CRobotError(f"crobot.c has no code for interface axis {axis}={choice}")
        macro = known[choice]
        if macro is not None:
            flags.append(f"-D{macro}")
    assert set(AXIS_DEFINES) == set(AXES), "tests/crobot: AXIS_DEFINES is out of date"
    flags.append(f'-DCROBOT_VARIANT="{variant.name}"')
    return flags


def build_crobot(variant: Variant, workdir: Path, idl_dir: Path = IDL_DIR) -> Path:
    """idlc -l c over the variant's .idl files, then gcc; the executable's path."""
    idlc = shutil.which("idlc") or "/usr/bin/idlc"
    gcc = shutil.which("gcc") or "gcc"
    workdir.mkdir(parents=True, exist_ok=True)
    sources: list[Path] = []
    includes: list[str] = []
    for idl in idl_files(variant, idl_dir):
        rel = idl.relative_to(idl_dir)
        outdir = workdir / rel.parent  # keeps the variants' "../../dobot_atom/x.h" valid
        outdir.mkdir(parents=True, exist_ok=True)
        _run([idlc, "-l", "c", "-o", outdir, idl])
        sources.append(outdir / f"{idl.stem}.c")
        includes.append(f'#include "{rel.with_suffix(".h")}"')
    header = [
        f"/* Written by tests/crobot/harness.py for interface variant {variant.name}. */",
        "#ifndef CROBOT_IDL_H",
        "#define CROBOT_IDL_H",
        *includes,
        "#endif",
        "",
    ]
    (workdir / "crobot_idl.h").write_text("\n".join(header))
    exe = workdir / "crobot"
    _run([
        gcc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", workdir, *defines(variant),
        "-pthread", "-o", exe, SOURCE, *sources, "-lddsc", "-lm",
    ])  # fmt: skip
    return exe


def _csv(values: Any) -> str:
    return ",".join(f"{float(v):.6f}" for v in values)


def crobot_args(
    profile: RobotProfile | None = None,
    *,
    rates: Mapping[str, float] | None = None,
    fsm: str | int = "zero_torque",
    vmax: float | None = None,
    amr_trip_s: float = 1.0,
    battery: float = 85.0,
    limits: bool = True,
    initial: Mapping[str, Any] | None = None,
    probe: bool = False,
) -> list[str]:
    """The C robot's options for ``profile``: its rates (``rates`` overrides some, by key
    ``upper_state`` or topic name), the FSM ids that allow joint control, the start pose
    of ``executive/robots/atom/sim/joints.py`` (0 clipped into each joint's limits; ``initial``
    overrides a topic's), the joint limits, and a speed cap of twice the fastest planned
    joint speed, so the robot keeps up with any trajectory the executive plans. ``probe``:
    stamp the arrival of holds after an e-stop (``CRobot.probe``; the e-stop benchmark)."""
    profile = profile or load_profile()
    args: list[str] = []
    hz = dict(profile.state_hz)
    for key, value in (rates or {}).items():
        hz[next((k for k, n in STATE_TOPICS.items() if key in (k, n)), key)] = value
    for key, value in hz.items():
        args += ["--rate", f"{STATE_TOPICS[key]}={value:g}"]
    ids = sorted({profile.fsm[name].id for name in profile.fsm_joint_control})
    args += ["--fsm", str(profile.fsm_id(fsm)), "--joint-fsm", ",".join(map(str, ids))]
    for topic in ("upper", "lower", "hands"):
        lower, upper = profile.limits(topic)
        start = (initial or {}).get(topic)
        q = np.clip(np.zeros(len(lower)) if start is None else np.asarray(start), lower, upper)
        args += [f"--init-{topic}", _csv(q)]
        if limits:
            pairs = ",".join(f"{lo:.6f}:{hi:.6f}" for lo, hi in zip(lower, upper, strict=True))
            args += [f"--limits-{topic}", pairs]
    if vmax is None:
        vmax = 2.0 * max(j.max_velocity for j in profile.joints.values())
    args += ["--vmax", f"{vmax:g}", "--amr-trip-s", f"{amr_trip_s:g}", "--battery", f"{battery:g}"]
    args += ["--motor-mode", str(profile.motor_mode)]
    if probe:
        args.append("--probe")
    return args


class CRobot:
    """The C robot as a process: started on a domain, faults on its stdin, replies on its
    stdout (one JSON line each), its log (stderr) in a file, its record in another."""

    def __init__(
        self, exe: Path, domain: int, record: Path, args: list[str], log: Path | None = None
    ) -> None:
        self.exe = exe
        self.domain = domain
        self.record_path = record
        self.args = args
        self.log_path = log or record.with_suffix(".log")
        self.proc: subprocess.Popen[str] | None = None
        self.ready: dict[str, Any] = {}
        self._replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._lock = threading.Lock()

    # -- life cycle ------------------------------------------------------------------------

    def start(self, timeout: float = TIMEOUT) -> CRobot:
        cmd = [str(self.exe), str(self.domain), "--record", str(self.record_path), *self.args]
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen(
                realtime.command(cmd),  # the robot's firmware: its own CPU, not the tests'
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                bufsize=1,
                env=dict(os.environ),  # CYCLONEDDS_URI: the loopback config of tests/conftest.py
            )
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        self.ready = self._reply(timeout)
        if self.ready.get("event") != "ready":
            self.stop()
            raise CRobotError(f"expected ready, got {self.ready}; log:\n{self.log()}")
        return self

    def _pump(self, stdout: IO[str]) -> None:
        """Stdout lines to the reply queue (a thread: a full pipe would stall the robot)."""
        for line in stdout:
            try:
                self._replies.put(json.loads(line))
            except json.JSONDecodeError:
                self._replies.put({"event": "garbage", "line": line})
        self._replies.put(None)  # end of output: the process is gone

    def _reply(self, timeout: float) -> dict[str, Any]:
        try:
            reply = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise CRobotError(f"no reply within {timeout} s; log:\n{self.log()}") from None
        if reply is None:
            self._replies.put(None)  # every later call sees the end too
            raise CRobotError(f"the C robot exited ({self.returncode}); log:\n{self.log()}")
        return reply

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def stop(self, timeout: float = TIMEOUT) -> int:
        """End of stdin asks the robot to leave; SIGTERM, then SIGKILL if it does not."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            try:
                if self.proc.stdin is not None and not self.proc.stdin.closed:
                    self.proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout)
        return int(self.proc.returncode)

    def terminate(self, timeout: float = TIMEOUT) -> int:
        """SIGTERM (as systemd stops a service) and wait; the return code."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return int(self.proc.wait(timeout))

    def __enter__(self) -> CRobot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- talking to it ---------------------------------------------------------------------

    def command(self, line: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Send one line (see tests/crobot/__init__.py) and return its ``ok`` reply;
        CRobotError with the robot's message if it answered ``error``."""
        assert self.proc is not None and self.proc.stdin is not None
        with self._lock:
            if self.proc.poll() is not None:
                raise CRobotError(f"the C robot exited ({self.proc.returncode})")
            self.proc.stdin.write(line.strip() + "\n")
            self.proc.stdin.flush()
            reply = self._reply(timeout)
        if reply.get("event") != "ok":
            raise CRobotError(f"{line!r}: {reply.get('message', reply)}")
        return reply

    fault = command  # reads better for fault injection: robot.fault("estop soft on")

    def status(self) -> dict[str, Any]:
        """The robot's own view: fsm_id, upper_control, estop, battery, amr, published."""
        return self.command("status")

    def probe(self) -> dict[str, Any]:
        """With ``--probe``: the last e-stop's ``written`` time and the arrival of each
        stream's first hold (``hold``: upper, lower, hands) and of the first CANCEL_TASK
        (``cancel``) after it, CLOCK_MONOTONIC seconds (None: not yet); ``commands`` seen
        per stream. Stamped on CycloneDDS's receive thread as each command arrives."""
        return self.command("probe")

    def recording(self) -> Recording:
        """The record so far: flushed first (while running), so it holds every command the
        robot has taken up to this call."""
        if self.returncode is None:
            self.command("flush")
        return Recording.load(self.record_path)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""


# -- fixtures ----------------------------------------------------------------------------

_BUILDS: dict[str, Path] = {}  # variant name -> executable: one build per test session
_BUILD_LOCK = threading.Lock()


@pytest.fixture(scope="session")
def crobot_exe(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str | Variant], Path]:
    """``crobot_exe("sdk-1.1.0")``: the C robot for that variant, built once per session."""

    def get(variant: str | Variant) -> Path:
        v = Variant.parse(variant) if isinstance(variant, str) else variant
        with _BUILD_LOCK:
            exe = _BUILDS.get(v.name)
            if exe is None or not exe.exists():
                workdir = tmp_path_factory.mktemp(f"crobot-{v.name.replace('+', '-')}")
                exe = _BUILDS[v.name] = build_crobot(v, workdir)
            return exe

    return get


@pytest.fixture
def start_crobot(
    crobot_exe: Callable[[str | Variant], Path], dds_domain: int, tmp_path: Path
) -> Iterator[Callable[..., CRobot]]:
    """``start_crobot("seed", amr_trip_s=0.5)``: a running C robot on the test's domain
    (options: ``crobot_args``'s; ``profile=`` a RobotProfile), stopped after the test."""
    robots: list[CRobot] = []

    def start(
        variant: str | Variant = "seed", *, profile: RobotProfile | None = None, **options: Any
    ) -> CRobot:
        exe = crobot_exe(variant)
        record = tmp_path / f"crobot-record-{len(robots)}.jsonl"
        robot = CRobot(exe, dds_domain, record, crobot_args(profile, **options))
        robots.append(robot)
        return robot.start()

    try:
        yield start
    finally:
        for robot in robots:
            robot.stop()
