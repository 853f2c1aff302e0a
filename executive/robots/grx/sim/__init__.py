"""The simulated Fourier GRX: a zenoh peer that is the robot's User API.

    python -m executive.robots.grx.sim --profile grx --zenoh-config FILE [--cfg KEY:VALUE]
    atom-executive sim --profile grx --zenoh-config FILE          # the same
    atom-executive sim --profile grx fault error 0x2310           # into a running sim
    atom-executive sim --profile grx fault clear-error
    atom-executive sim --profile grx status                       # its state as JSON

Publishes the four server maps (comm, robot, task, grx; msgpack, string keys) every 20 ms,
applies what arrives on the four client keys to ``model.GrxModel`` (the two-step task
protocol, walking from the virtual joystick), and takes fault commands (``model.HELP``)
on stdin, one per line, answering each with one JSON line on stdout, and from another
process as zenoh queries on ``COMMAND_KEY`` (``fault``, ``status``: the same commands, the
same answers), so ``atom-executive sim --profile P fault ...`` reaches every robot's sim
the same way, over the sim's own channel (the Atom's and the Adam's are DDS topics). The
first line on stdout is ``{"ready": true, ...}`` once the session is open and publishing.

Like the other simulators it runs until SIGINT, SIGTERM (or a ``quit`` line): a stdin that
is empty or closed (``< /dev/null``, started in the background, under a service manager)
only ends the commands. ``--until-stdin-closes`` makes the end of stdin a ``quit`` too:
``process.SimProcess`` starts it so, as a child process driven over those lines, so the
sim never outlives its driver.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import zenoh

from executive.robots.grx import interface as wire
from executive.robots.grx.settings import GrxSettings
from executive.robots.grx.sim.body import MODES, SimBody
from executive.robots.grx.sim.model import HELP, CommandError, GrxModel
from executive.robots.simkit import realtime
from executive.robots.simkit.physics import ContactEvent, load_scene
from executive.seam.body import BodyError
from executive.seam.profile import ProfileError, load_profile
from executive.wire.zenoh_session import ConfigError, close_session, load_config, open_session

GARBAGE = b"\xc1 not msgpack"  # 0xc1 is never used in msgpack
COMMAND_KEY = "atom-executive/sim/grx/command"  # the sim's own: no robot has it
_OUT = threading.Lock()


def say(answer: dict[str, Any]) -> None:
    """One JSON line on stdout (the answers and events a test or an operator reads)."""
    with _OUT:
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


class GrxSim:
    """The model on a zenoh session: subscribers for the client keys, a 50 Hz publisher."""

    def __init__(
        self,
        model: GrxModel,
        session: zenoh.Session,
        hz: float = 1 / wire.PERIOD,
        record: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``record``: every client map received, one JSON line each, stamped ``t`` on
        ``clock`` (simulated time in a scenario, ``executive.robots.grx.lockstep``)."""
        self.model = model
        self.clock = clock
        self.session = session
        self.period = 1.0 / hz
        self.record = record
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.overruns = 0
        self.publishers = {
            c: session.declare_publisher(
                wire.server_key(c), congestion_control=zenoh.CongestionControl.DROP
            )
            for c in wire.CATEGORIES
        }
        self.subscribers = [
            session.declare_subscriber(wire.client_key(c), self._receiver(c))
            for c in wire.CATEGORIES
        ]
        self.queryable = session.declare_queryable(COMMAND_KEY, self._on_query)

    def _on_query(self, query: zenoh.Query) -> None:
        """A command from ``fault``/``status`` in another process: answered as on stdin (a
        zenoh callback: nothing raises out of it)."""
        try:
            line = query.payload.to_bytes().decode("utf-8") if query.payload else "status"
            if line.strip() == "quit":  # a signal or the sim's own stdin ends it
                answer: dict[str, Any] = {"ok": False, "error": "quit: not from another process"}
            else:
                answer = self.command(line)
            say({"event": "command", "line": line.strip(), "answer": answer})
            query.reply(query.key_expr, json.dumps(answer, default=str).encode())
        except Exception as e:  # noqa: BLE001 - a zenoh callback must not raise
            say({"event": "command failed", "error": f"{type(e).__name__}: {e}"})

    def _receiver(self, category: str) -> Any:
        def receive(sample: zenoh.Sample) -> None:
            try:
                fields = wire.decode(sample.payload.to_bytes())
            except wire.DecodeError as e:
                say({"event": "undecodable", "category": category, "error": str(e)})
                return
            with self.lock:
                self.model.apply(category, fields)
                if self.record is not None:
                    line = {"t": self.clock(), "key": str(sample.key_expr), "fields": fields}
                    self.record.write(json.dumps(line, default=str) + "\n")
                    self.record.flush()

        return receive

    def run(self) -> None:
        """Publish every period until ``stopped``: deadlines on the monotonic clock."""
        deadline = time.monotonic()
        while not self.stopped.is_set():
            with self.lock:
                contacts = self.model.step(self.period)
                maps = self.model.server_maps()
                garbage, self.model.garbage = self.model.garbage, set()
            for event in contacts:
                self.contact(event)
            for category, fields in maps.items():
                payload = GARBAGE if category in garbage else wire.encode(fields)
                self.publishers[category].put(payload)
            deadline += self.period
            delay = deadline - time.monotonic()
            if delay < 0:
                self.overruns += 1
                deadline = time.monotonic()
            else:
                self.stopped.wait(delay)

    def contact(self, event: ContactEvent) -> None:
        """A contact of the body began or ended: said on stdout, and in the record."""
        body = self.model.body
        info = {**event.as_dict(), "joint": body.culprit(event) if body else None}
        say({"event": "contact", **info})
        if self.record is not None:
            with self.lock:
                self.record.write(json.dumps({"t": self.clock(), "contact": info}) + "\n")
                self.record.flush()

    def command(self, line: str) -> dict[str, Any]:
        if line.strip() == "quit":
            self.stopped.set()
            return {"ok": True}
        with self.lock:
            try:
                return self.model.command(line)
            except CommandError as e:
                return {"ok": False, "error": str(e)}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m executive.robots.grx.sim",
        description=(__doc__ or "").replace("``", ""),
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--profile", default="grx", help="robot profile (default grx)")
    p.add_argument(
        "--zenoh-config",
        type=Path,
        default=None,
        metavar="FILE",
        help="zenoh JSON5 config (default: executive/resources/zenoh-loopback.json5)",
    )
    p.add_argument(
        "--cfg",
        action="append",
        default=[],
        metavar="KEY:VALUE",
        help="override a config key with a JSON5 value, as zenohd --cfg (repeatable)",
    )
    p.add_argument(
        "--interface",
        default=None,
        choices=sorted(wire.SCHEMAS),
        help="the User API schema the robot speaks (default: the profile's grx.schema)",
    )
    p.add_argument("--hz", type=float, default=1 / wire.PERIOD, help="server map rate (50)")
    p.add_argument(
        "--task-seconds", type=float, default=0.5, help="how long a task is in process (0.5)"
    )
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        help="write every client map, and every contact of the body, as JSON lines here",
    )
    p.add_argument(
        "--physics",
        choices=MODES,
        default="mujoco",
        help="how the joints move: the body in MuJoCo (default) or not at all (kinematic)",
    )
    p.add_argument(
        "--scene", type=Path, default=None, help="scene YAML (obstacles) beside the profile's"
    )
    p.add_argument(
        "command",
        nargs="*",
        metavar="fault CMD... | status",
        help="send a command (the list below) to the running sim over zenoh (COMMAND_KEY) "
        "instead of running one; the sim's answer is printed as JSON",
    )
    p.add_argument("--timeout", type=float, default=10.0, help="fault/status: seconds to wait (10)")
    p.add_argument(
        "--until-stdin-closes",
        action="store_true",
        help="quit when stdin closes (the process driving the sim went away); without it "
        "the sim runs until SIGINT, SIGTERM or a quit line",
    )
    return p


class _SigtermError(Exception):
    """SIGTERM arrived: leave the command loop and close the session."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise _SigtermError


def send(args: argparse.Namespace) -> int:
    """``fault CMD...`` or ``status`` to a running sim: its answer as JSON on stdout; 1 if
    it refused the command or no sim answered, 2 on a bad command line."""
    verb, words = args.command[0], args.command[1:]
    if verb not in ("fault", "status") or (verb == "fault") != bool(words):
        sys.stderr.write("grx sim: expected 'fault CMD...' or 'status' (the commands: --help)\n")
        return 2
    line = " ".join(words) if verb == "fault" else "status"
    try:
        session = open_session(load_config(args.zenoh_config, args.cfg))
    except ConfigError as e:
        sys.stderr.write(f"grx sim {verb}: {e}\n")
        return 2
    try:
        deadline = time.monotonic() + args.timeout
        while time.monotonic() < deadline:  # the session may not have met the sim yet
            for reply in session.get(COMMAND_KEY, payload=line.encode(), timeout=1.0):
                if reply.ok is None:
                    continue
                answer = json.loads(reply.ok.payload.to_bytes())
                say(answer)
                return 0 if answer.get("ok", True) else 1
            time.sleep(0.2)
    finally:
        close_session(session)
    sys.stderr.write(f"grx sim {verb}: no simulated GRX answered within {args.timeout:g} s\n")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return send(args) if args.command else serve(args)


def model_of(args: argparse.Namespace) -> GrxModel:
    """The robot the options describe, its body stepped (ValueError saying what is wrong:
    the profile, another robot's profile, the physics or the scene)."""
    try:
        profile = load_profile(args.profile)
    except ProfileError as e:
        raise ValueError(str(e)) from None
    if profile.robot != "grx":
        raise ValueError(f"profile {profile.name!r} is for robot {profile.robot!r}")
    settings = GrxSettings.from_options(profile.options)
    if args.interface is not None:
        settings = replace(settings, schema=args.interface)
    try:
        body = SimBody(profile, args.physics, load_scene(args.scene)) if profile.topics else None
    except BodyError as e:
        raise ValueError(str(e)) from None
    return GrxModel(
        wire.schema(settings.schema),
        {name: s.id for name, s in profile.fsm.items()},
        settings,
        task_seconds=args.task_seconds,
        body=body,
    )


def serve(args: argparse.Namespace) -> int:
    """Run the sim until SIGINT, SIGTERM or a ``quit`` line; 2 on a bad profile or config.
    Real-time where the environment asks, before zenoh's threads exist (``simkit.realtime``)."""
    realtime.take()
    try:
        model = model_of(args)
        session = open_session(load_config(args.zenoh_config, args.cfg))
    except (ValueError, ConfigError) as e:
        sys.stderr.write(f"grx sim: {e}\n")
        return 2
    settings = model.settings
    body = model.body
    record = args.record.open("a", encoding="utf-8") if args.record else None
    sim = GrxSim(model, session, args.hz, record)
    publisher = threading.Thread(target=sim.run, name="grx-sim", daemon=True)
    publisher.start()
    # SIGINT too, explicitly: started in the background by a shell, a process inherits
    # SIGINT ignored and Python then raises no KeyboardInterrupt (kill -INT did nothing)
    previous = {s: signal.signal(s, _terminate) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        # inside the try: a signal as soon as the line is out (while it is still being
        # flushed) must end in the finally below, or the publisher runs on and the process
        # never exits (seen under load: kill -INT right after the ready line hung it)
        physics = body.mode if body is not None else "none"
        say(
            {
                "ready": True,
                "zid": str(session.zid()),
                "schema": settings.schema,
                "physics": physics,
            }
        )
        for line in sys.stdin:
            if not line.strip():
                continue
            say(sim.command(line))
            if sim.stopped.is_set():
                break
        if not args.until_stdin_closes:
            while not sim.stopped.wait(0.5):  # no more commands; publish until a signal
                pass
    except (KeyboardInterrupt, _SigtermError):
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sim.stopped.set()
        publisher.join(timeout=2)
        close_session(session)
        if record is not None:
            record.close()
    return 0
