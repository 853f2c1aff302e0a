"""The command-line pieces every simulator shares: its log, its common options, its run.

A robot's ``sim/cli.py`` builds its own parser (its own options, in its own order) from
these, so a flag that every sim has is spelt, typed and documented once:
``--domain``, ``--seed``, ``--rate``, ``--noise``, ``--joint-speed-scale``, ``--battery``,
``--battery-drain``, ``--fault``, ``--record``, ``--log-level``, and for a robot with a
body ``--physics``, ``--scene``, ``--contact-fault``; ``serve`` runs the sim it
is given until SIGINT or SIGTERM. ``add_sim_commands`` gives a sim on DDS its ``fault``
and ``status`` subcommands (``atom-executive sim [--profile P] fault SPEC``), which reach
the running sim over its own fault and status topics (``simkit.client``), whatever the
robot: the same command for each, no FIFO or stdin to find.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

import structlog
from cyclonedds.domain import DomainParticipant

from executive.robots.simkit import realtime
from executive.robots.simkit.faults import FaultError, FaultSpec, parse_clear, parse_fault
from executive.wire import dds

log = structlog.get_logger(__name__)


class Sim(Protocol):
    """What ``serve`` needs of a simulator (``simkit.node.SimNode`` has it)."""

    def run(self) -> None: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...


def configure_logging(level: str = "info") -> None:
    """JSON lines on stderr (stdout stays free for CLI output)."""
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )


def fault_arg(text: str) -> FaultSpec:
    """``--fault SPEC``: the spec parsed (syntax only; the sim validates it for its robot)."""
    try:
        return parse_fault(text)
    except FaultError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_domain(p: argparse.ArgumentParser, *, sub: bool = False) -> None:
    """``--domain``; on a subcommand (``sub``) it must not overwrite ``sim --domain N cmd``."""
    p.add_argument(
        "--domain",
        type=int,
        default=argparse.SUPPRESS if sub else None,
        help=f"DDS domain id (default: ${dds.DOMAIN_ENV} or 0)",
    )


def add_seed_rate(
    p: argparse.ArgumentParser, *, what: str, example: str, names: Sequence[str]
) -> None:
    """``--seed`` and ``--rate WHAT=HZ`` (repeatable; ``names``: the state rates there are)."""

    def rate(text: str) -> tuple[str, float]:
        name, sep, hz = text.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"{text!r}: expected {what}=HZ, e.g. {example}")
        try:
            return name.strip(), float(hz)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {hz!r} is not a number of Hz") from None

    p.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    p.add_argument(
        "--rate",
        type=rate,
        action="append",
        default=[],
        metavar=f"{what}=HZ",
        help=f"override a state rate; {what.lower()}s {', '.join(names)} (default: the profile's)",
    )


def add_joint_args(p: argparse.ArgumentParser) -> None:
    """``--noise`` and ``--joint-speed-scale`` (``simkit.joints``)."""
    p.add_argument(
        "--noise", type=float, default=0.0, help="joint measurement noise, rad std (default 0)"
    )
    p.add_argument(
        "--joint-speed-scale",
        type=float,
        default=2.0,
        help="joint speed limit as a multiple of the profile's velocity cap (default 2)",
    )


def add_body_args(p: argparse.ArgumentParser) -> None:
    """``--physics``, ``--scene`` and ``--contact-fault`` (``simkit.physics``)."""
    p.add_argument(
        "--physics",
        choices=["mujoco", "kinematic"],
        default="mujoco",
        help="how joints move: the robot's model in MuJoCo (PD at the commanded gains, "
        "gravity, limits, contacts) or a first-order lag, for speed (default mujoco)",
    )
    p.add_argument(
        "--scene",
        type=Path,
        default=None,
        metavar="FILE",
        help="scene YAML, {NAME: {box: {center: [x, y, z], size: [x, y, z]}} | {plane: {z: Z}}} "
        "in m, base frame (or that under scene:), beside the profile's floor",
    )
    p.add_argument(
        "--contact-fault",
        action="store_true",
        help="a contact (self or scene) raises a servo error on the joint that made it, as a "
        "firmware's collision detection would (default: recorded and published only)",
    )


def add_battery_args(p: argparse.ArgumentParser) -> None:
    """``--battery`` and ``--battery-drain`` (``simkit.battery``)."""
    p.add_argument("--battery", type=float, default=85.0, help="battery %% at start (default 85)")
    p.add_argument(
        "--battery-drain",
        type=float,
        default=0.5,
        help="battery drain, %% per minute (default 0.5)",
    )


def add_fault_arg(p: argparse.ArgumentParser, *, see: str) -> None:
    """``--fault SPEC`` (repeatable); ``see``: where the robot's kinds are listed."""
    p.add_argument(
        "--fault",
        type=fault_arg,
        action="append",
        default=[],
        metavar="SPEC",
        help=f"a fault active from start (repeatable; see {see})",
    )


def add_output_args(p: argparse.ArgumentParser, *, record: str) -> None:
    """``--record PATH`` (``record``: the module that documents it) and ``--log-level``."""
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="PATH",
        help=f"write every command received as JSON lines (see {record})",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log level of the JSON log on stderr (default info)",
    )


def config_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields every sim has, from the options every sim has (and ``--profile``,
    ``--interface``, which every sim has with its own choices)."""
    return {
        "profile": args.profile,
        "interface": args.interface,
        "seed": args.seed,
        "rates": dict(args.rate),
        "noise": args.noise,
        "speed_scale": args.joint_speed_scale,
        "battery": args.battery,
        "battery_drain": args.battery_drain,
        "faults": tuple(args.fault),
        "record": args.record,
    }


def serve(
    domain: int | None,
    start: Callable[[DomainParticipant], Sim],
    *,
    errors: tuple[type[Exception], ...],
    name: str,
    prog: str,
) -> int:
    """Start a sim on ``domain`` and run it until SIGINT or SIGTERM; 2 if it cannot start.

    ``errors``: what ``start`` raises for a bad configuration (said on stderr as
    ``prog: why``); ``name``: the sim in the log (``the simulated Atom``). Real-time where
    the environment asks, before the participant's threads exist (``simkit.realtime``).
    """
    if scheduling := realtime.take():
        log.info("scheduling", policy=scheduling)
    with dds.open_participant(domain) as participant:
        try:
            sim = start(participant)
        except errors as e:
            log.error(f"cannot start {name}", error=str(e))
            print(f"{prog}: {e}", file=sys.stderr)  # noqa: T201 - CLI output
            return 2

        def on_signal(signum: int, frame: FrameType | None) -> None:
            log.info("stopping", signal=signal.Signals(signum).name)
            sim.stop()

        previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            sim.run()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            sim.close()
    return 0


ClientFactory = Callable[[DomainParticipant, float], Any]  # a simkit.client.Client


def add_sim_commands(
    p: argparse.ArgumentParser, client: ClientFactory, *, robot: str, prog: str
) -> None:
    """``fault`` (set, ``--clear``, ``--clear-all``) and ``status`` subcommands on a sim's
    parser, talking to a running sim through ``client(participant, timeout)``."""
    sub = p.add_subparsers(dest="sim_command", metavar="{fault,status}")
    f = sub.add_parser(
        "fault",
        help="set or clear a fault in a running sim",
        description=f"Set (default) or clear faults in a running simulated {robot}.",
        epilog=p.epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_domain(f, sub=True)
    f.add_argument("specs", nargs="*", metavar="SPEC", help="fault specs (see below)")
    mode = f.add_mutually_exclusive_group()
    mode.add_argument("--clear", action="store_true", help="clear the given faults instead")
    mode.add_argument("--clear-all", action="store_true", help="clear every fault")
    f.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for the sim (default 10)"
    )
    f.set_defaults(handler=functools.partial(fault_command, client=client, prog=f"{prog} fault"))
    s = sub.add_parser("status", help="print a running sim's status as JSON")
    add_domain(s, sub=True)
    s.add_argument("--timeout", type=float, default=10.0, help="seconds to wait (default 10)")
    s.set_defaults(handler=functools.partial(status_command, client=client, prog=f"{prog} status"))


def _say(text: str, *, error: bool = False) -> None:
    print(text, file=sys.stderr if error else sys.stdout)


def fault_command(args: argparse.Namespace, client: ClientFactory, prog: str) -> int:
    """Apply the faults; print the sim's status as JSON. 2: bad specs; 1: no sim, refused."""
    from executive.robots.simkit.client import FaultRejectedError

    configure_logging("warning")
    if not args.clear_all and not args.specs:
        _say(f"{prog}: give a SPEC or --clear-all", error=True)
        return 2
    try:
        specs = (
            []
            if args.clear_all
            else [parse_clear(s) if args.clear else parse_fault(s) for s in args.specs]
        )
    except FaultError as e:
        _say(f"{prog}: {e}", error=True)
        return 2
    with dds.open_participant(args.domain) as participant:
        sim = client(participant, args.timeout)
        try:
            sim.wait_ready()
            if args.clear_all:
                sim.clear_all()
            for spec in specs:
                sim.request("clear" if args.clear else "set", spec)
        except (TimeoutError, FaultRejectedError) as e:
            _say(f"{prog}: {e}", error=True)
            return 1
        _say(json.dumps(status_dict(sim.status())))
    return 0


def status_command(args: argparse.Namespace, client: ClientFactory, prog: str) -> int:
    configure_logging("warning")
    with dds.open_participant(args.domain) as participant:
        try:
            status = client(participant, args.timeout).wait_ready()
        except TimeoutError as e:
            _say(f"{prog}: {e}", error=True)
            return 1
        _say(json.dumps(status_dict(status)))
    return 0


def status_dict(status: Any) -> Any:
    """A sim's status sample as JSON-able data (enums by name)."""
    if status is None:
        return None
    if hasattr(status, "__dataclass_fields__"):
        return {n: status_dict(getattr(status, n)) for n in status.__dataclass_fields__}
    if isinstance(status, list):
        return [status_dict(v) for v in status]
    if hasattr(status, "name") and hasattr(status, "value"):
        return status.name
    return status
