"""Run the simulated PND Adam.

    python -m executive.robots.adam.sim --profile adam-pro
    python -m executive.robots.adam.sim --profile adam-lite --interface seed --record /tmp/a.jsonl
    python -m executive.robots.adam.sim --fault servo-error:left_elbow=0x21 --fault dropout:hand_state@3
    python -m executive.robots.adam.sim --stdin-faults     # then type: servo-error:left_knee=7

The DDS domain comes from ``--domain`` or ``ATOM_DDS_DOMAIN`` (the vendor's examples use
1); network settings from ``CYCLONEDDS_URI``. ``atom-executive sim --profile adam-*``
dispatches here (``main(argv)``).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import structlog

from executive.robots.adam.interface import DEFAULT_VARIANT, VARIANTS, AdamVariantError
from executive.robots.adam.sim.faults import HELP as FAULT_HELP
from executive.robots.adam.sim.faults import STATE_TOPICS, FaultError, FaultSpec
from executive.robots.atom.sim.cli import configure_logging
from executive.robots.atom.sim.faults import parse_fault
from executive.robots.profile import ProfileError, builtin_profiles
from executive.wire import dds

log = structlog.get_logger(__name__)
DESCRIPTION = (__doc__ or "").replace("``", "")


def _rate(text: str) -> tuple[str, float]:
    source, sep, hz = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r}: expected SOURCE=HZ, e.g. low_state=250")
    try:
        return source.strip(), float(hz)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: {hz!r} is not a number of Hz") from None


def _fault(text: str) -> FaultSpec:
    try:
        return parse_fault(text)
    except FaultError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    adam = [p for p in builtin_profiles() if p.startswith("adam")]
    p = argparse.ArgumentParser(
        prog="python -m executive.robots.adam.sim",
        description=DESCRIPTION,
        epilog=FAULT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--domain", type=int, default=None, help=f"DDS domain id (default: ${dds.DOMAIN_ENV} or 0)"
    )
    p.add_argument(
        "--profile",
        default="adam-pro",
        help=f"robot profile: {', '.join(adam)} or a path (default adam-pro)",
    )
    p.add_argument(
        "--interface",
        default=DEFAULT_VARIANT,
        choices=sorted(VARIANTS),
        help=f"interface variant (default {DEFAULT_VARIANT})",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    p.add_argument(
        "--rate",
        type=_rate,
        action="append",
        default=[],
        metavar="SOURCE=HZ",
        help=f"override a state rate; sources {', '.join(STATE_TOPICS)} (default: the profile's)",
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
    p.add_argument("--battery", type=float, default=85.0, help="battery %% at start (default 85)")
    p.add_argument(
        "--battery-drain", type=float, default=0.5, help="battery drain, %% per minute (0.5)"
    )
    p.add_argument(
        "--fault",
        type=_fault,
        action="append",
        default=[],
        metavar="SPEC",
        help="a fault active from start (repeatable; see below)",
    )
    p.add_argument(
        "--stdin-faults",
        action="store_true",
        help="read fault requests from stdin, one per line (see below)",
    )
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="PATH",
        help="write every command received as JSON lines (executive/robots/adam/sim/record.py)",
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="log level of the JSON log on stderr (default info)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    """Run the sim until SIGINT or SIGTERM; 2 on a configuration error."""
    from executive.robots.adam.sim.node import AdamSimConfig, SimAdam

    configure_logging(args.log_level)
    config = AdamSimConfig(
        profile=args.profile,
        interface=args.interface,
        seed=args.seed,
        rates=dict(args.rate),
        speed_scale=args.joint_speed_scale,
        noise=args.noise,
        battery=args.battery,
        battery_drain=args.battery_drain,
        faults=tuple(args.fault),
        record=args.record,
        stdin=sys.stdin if args.stdin_faults else None,
    )
    with dds.open_participant(args.domain) as participant:
        try:
            sim = SimAdam(participant, config)
        # a bad profile, variant, fault or rate; a record file it cannot write
        except (ProfileError, AdamVariantError, FaultError, ValueError, OSError) as e:
            log.error("cannot start the simulated Adam", error=str(e))
            print(f"adam sim: {e}", file=sys.stderr)  # noqa: T201 - CLI output
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


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m executive.robots.adam.sim [options]``."""
    return run(build_parser().parse_args(argv))
