"""``atom-executive sim``: run the simulated Atom, inject faults into it, read its status.

    atom-executive sim                                 # the default robot, profile rates
    atom-executive sim --interface sdk-1.1.0 --seed 7 --record /tmp/sim.jsonl
    atom-executive sim --fault estop-soft --fault dropout:upper_state@3
    atom-executive sim fault servo-error:left_elbow_pitch=0x2310   # into a running sim
    atom-executive sim fault --clear servo-error
    atom-executive sim fault --clear-all
    atom-executive sim status                          # its status as JSON

``python -m executive.robots.atom.sim ...`` is the same command. The DDS domain comes from
``--domain`` or ``ATOM_DDS_DOMAIN``; network settings from ``CYCLONEDDS_URI``.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import structlog

from executive.robots.atom.interface import DEFAULT_PRESET, PRESETS, VariantError
from executive.robots.atom.sim.faults import HELP as FAULT_HELP
from executive.robots.atom.sim.faults import FaultError, FaultSpec, canonical_kind, parse_fault
from executive.robots.profile import STATE_TOPICS, ProfileError, builtin_profiles
from executive.wire import dds

log = structlog.get_logger(__name__)
# --help shows the module docstring (with its examples), without the reST quoting.
DESCRIPTION = (__doc__ or "").replace("``", "")


def _rate(text: str) -> tuple[str, float]:
    topic, sep, hz = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r}: expected TOPIC=HZ, e.g. upper_state=250")
    try:
        return topic.strip(), float(hz)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: {hz!r} is not a number of Hz") from None


def _fault(text: str) -> FaultSpec:
    try:
        return parse_fault(text)
    except FaultError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_domain(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--domain",
        type=int,
        default=None,
        help=f"DDS domain id (default: ${dds.DOMAIN_ENV} or 0)",
    )


def configure(p: argparse.ArgumentParser) -> None:
    """Add the sim's options and its ``fault``/``status`` subcommands to ``p``."""
    _add_domain(p)
    p.add_argument(
        "--interface",
        default=DEFAULT_PRESET,
        metavar="VARIANT",
        help=f"interface variant: preset[+axis=choice...], presets {', '.join(PRESETS)} "
        f"(default {DEFAULT_PRESET})",
    )
    p.add_argument(
        "--profile",
        default="atom-sdk",
        help=f"robot profile: {', '.join(builtin_profiles())} or a path (default atom-sdk)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    p.add_argument(
        "--rate",
        type=_rate,
        action="append",
        default=[],
        metavar="TOPIC=HZ",
        help=f"override a state rate; topics {', '.join(STATE_TOPICS)} (default: the profile's)",
    )
    p.add_argument(
        "--fsm", default="zero_torque", help="FSM state at start, name or id (default zero_torque)"
    )
    p.add_argument(
        "--noise", type=float, default=0.0, help="joint measurement noise, rad std (default 0)"
    )
    p.add_argument(
        "--joint-speed-scale",
        type=float,
        default=2.0,
        help="joint speed limit as a multiple of the profile's velocity cap (default 2)",
    )
    p.add_argument(
        "--amr-speed", type=float, default=1.0, help="AMR driving speed, m/s (default 1.0)"
    )
    p.add_argument(
        "--amr-turn-rate", type=float, default=2.0, help="AMR turning rate, rad/s (default 2.0)"
    )
    p.add_argument(
        "--tags",
        type=Path,
        default=None,
        help="AMR tag map YAML: tags: {ID: {x: X, y: Y}}, optional start: {x, y, yaw}, "
        "charger: ID (default: five tags on a 2 m x 1.5 m rectangle, 1 at the origin)",
    )
    p.add_argument("--battery", type=float, default=85.0, help="battery %% at start (default 85)")
    p.add_argument(
        "--battery-drain",
        type=float,
        default=0.5,
        help="battery drain, %% per minute (default 0.5)",
    )
    p.add_argument(
        "--fault",
        type=_fault,
        action="append",
        default=[],
        metavar="SPEC",
        help="a fault active from start (repeatable); see 'atom-executive sim fault --help'",
    )
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="PATH",
        help="write every command received as JSON lines (see executive/robots/atom/sim/record.py)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log level of the JSON log on stderr (default info)",
    )
    p.set_defaults(handler=run)

    sub = p.add_subparsers(dest="sim_command", metavar="{fault,status}")
    f = sub.add_parser(
        "fault",
        help="set or clear a fault in a running sim",
        description="Set (default) or clear faults in a running simulated Atom.",
        epilog=FAULT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_domain_sub(f)
    f.add_argument("specs", nargs="*", metavar="SPEC", help="fault specs (see below)")
    mode = f.add_mutually_exclusive_group()
    mode.add_argument("--clear", action="store_true", help="clear the given faults instead")
    mode.add_argument("--clear-all", action="store_true", help="clear every fault")
    f.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for the sim (default 10)"
    )
    f.set_defaults(handler=fault_cmd)
    s = sub.add_parser("status", help="print a running sim's status as JSON")
    _add_domain_sub(s)
    s.add_argument("--timeout", type=float, default=10.0, help="seconds to wait (default 10)")
    s.set_defaults(handler=status_cmd)


def _add_domain_sub(p: argparse.ArgumentParser) -> None:
    # SUPPRESS: a subcommand's default must not overwrite `sim --domain N fault ...`.
    p.add_argument(
        "--domain",
        type=int,
        default=argparse.SUPPRESS,
        help=f"DDS domain id (default: ${dds.DOMAIN_ENV} or 0)",
    )


def add_parser(sub: Any) -> None:
    """Register ``sim`` on the ``atom-executive`` subcommand parser."""
    p = sub.add_parser(
        "sim",
        help="run the simulated Atom on DDS (or inject faults into one)",
        description=DESCRIPTION,
        epilog=FAULT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    configure(p)


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


def run(args: argparse.Namespace) -> int:
    """Run the sim until SIGINT or SIGTERM; 2 on a configuration error."""
    from executive.robots.atom.sim.amr import TagMapError
    from executive.robots.atom.sim.config import SimConfig
    from executive.robots.atom.sim.node import SimAtom

    configure_logging(args.log_level)
    config = SimConfig(
        profile=args.profile,
        interface=args.interface,
        seed=args.seed,
        rates=dict(args.rate),
        fsm=args.fsm,
        noise=args.noise,
        speed_scale=args.joint_speed_scale,
        amr_speed=args.amr_speed,
        amr_turn_rate=args.amr_turn_rate,
        tags=args.tags,
        battery=args.battery,
        battery_drain=args.battery_drain,
        faults=tuple(args.fault),
        record=args.record,
    )
    with dds.open_participant(args.domain) as participant:
        try:
            sim = SimAtom(participant, config)
        # a bad profile, variant, tag map, fault or rate; a record file it cannot write
        except (ProfileError, VariantError, TagMapError, FaultError, ValueError, OSError) as e:
            log.error("cannot start the simulated Atom", error=str(e))
            print(f"atom-executive sim: {e}", file=sys.stderr)  # noqa: T201 - CLI output
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


def fault_cmd(args: argparse.Namespace) -> int:
    from executive.robots.atom.sim.client import FaultRejectedError, SimClient

    configure_logging("warning")
    if not args.clear_all and not args.specs:
        print("atom-executive sim fault: give a SPEC or --clear-all", file=sys.stderr)  # noqa: T201
        return 2
    try:
        specs = (
            []
            if args.clear_all
            else [_clear_spec(s) if args.clear else parse_fault(s) for s in args.specs]
        )
    except FaultError as e:
        print(f"atom-executive sim fault: {e}", file=sys.stderr)  # noqa: T201 - CLI output
        return 2
    with dds.open_participant(args.domain) as participant:
        client = SimClient(participant, timeout=args.timeout)
        try:
            client.wait_ready()
            if args.clear_all:
                client.clear_all()
            for spec in specs:
                client.request("clear" if args.clear else "set", spec)
        except (TimeoutError, FaultRejectedError) as e:
            print(f"atom-executive sim fault: {e}", file=sys.stderr)  # noqa: T201 - CLI output
            return 1
        print(json.dumps(_status_dict(client.status())))  # noqa: T201 - CLI output
    return 0


def _clear_spec(text: str) -> FaultSpec:
    """``KIND[:TARGET]`` for --clear (values and durations do not apply)."""
    kind, _, target = text.partition("=")[0].partition("@")[0].partition(":")
    return FaultSpec(canonical_kind(kind), target.strip())


def status_cmd(args: argparse.Namespace) -> int:
    from executive.robots.atom.sim.client import SimClient

    configure_logging("warning")
    with dds.open_participant(args.domain) as participant:
        try:
            status = SimClient(participant, timeout=args.timeout).wait_ready()
        except TimeoutError as e:
            print(f"atom-executive sim status: {e}", file=sys.stderr)  # noqa: T201 - CLI output
            return 1
        print(json.dumps(_status_dict(status)))  # noqa: T201 - CLI output
    return 0


def _status_dict(status: Any) -> Any:
    """A Status_ sample as JSON-able data (enums by name)."""
    if status is None:
        return None
    if hasattr(status, "__dataclass_fields__"):
        return {n: _status_dict(getattr(status, n)) for n in status.__dataclass_fields__}
    if isinstance(status, list):
        return [_status_dict(v) for v in status]
    if hasattr(status, "name") and hasattr(status, "value"):
        return status.name
    return status


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="atom-executive sim",
        description=DESCRIPTION,
        epilog=FAULT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    configure(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m executive.robots.atom.sim``: the same as ``atom-executive sim``."""
    args = build_parser().parse_args(argv)
    handler = args.handler
    result: int = handler(args)
    return result
