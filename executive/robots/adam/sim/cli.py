"""Run the simulated PND Adam.

    python -m executive.robots.adam.sim --profile adam-pro
    python -m executive.robots.adam.sim --profile adam-lite --interface seed --record /tmp/a.jsonl
    python -m executive.robots.adam.sim --fault servo-error:left_elbow=0x21 --fault dropout:hand_state@3
    python -m executive.robots.adam.sim --stdin-faults     # then type: servo-error:left_knee=7
    atom-executive sim --profile adam-pro fault servo-error:left_knee=7   # into a running sim
    atom-executive sim --profile adam-pro fault --clear-all
    atom-executive sim --profile adam-pro status                          # its status as JSON

The DDS domain comes from ``--domain`` or ``ATOM_DDS_DOMAIN`` (the vendor's examples use
1); network settings from ``CYCLONEDDS_URI``. ``atom-executive sim --profile adam-*``
dispatches here (``main(argv)``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from executive.robots.adam.interface import DEFAULT_VARIANT, VARIANTS, AdamVariantError
from executive.robots.adam.sim.faults import HELP as FAULT_HELP
from executive.robots.adam.sim.faults import STATE_TOPICS
from executive.robots.simkit import cli as kit
from executive.robots.simkit.faults import FaultError
from executive.seam.profile import ProfileError, builtin_profiles

DESCRIPTION = (__doc__ or "").replace("``", "")


def build_parser() -> argparse.ArgumentParser:
    adam = [p for p in builtin_profiles() if p.startswith("adam")]
    p = argparse.ArgumentParser(
        prog="python -m executive.robots.adam.sim",
        description=DESCRIPTION,
        epilog=FAULT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kit.add_domain(p)
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
    kit.add_seed_rate(p, what="SOURCE", example="low_state=250", names=list(STATE_TOPICS))
    kit.add_joint_args(p)
    kit.add_battery_args(p)
    kit.add_fault_arg(p, see="below")
    p.add_argument(
        "--stdin-faults",
        action="store_true",
        help="read fault requests from stdin, one per line (see below)",
    )
    kit.add_output_args(p, record="executive/robots/adam/sim/record.py")
    p.set_defaults(handler=run)
    kit.add_sim_commands(p, _client, robot="Adam", prog="atom-executive sim --profile adam-*")
    return p


def _client(participant: Any, timeout: float) -> Any:
    from executive.robots.adam.sim.client import AdamSimClient

    return AdamSimClient(participant, timeout=timeout)


def run(args: argparse.Namespace) -> int:
    """Run the sim until SIGINT or SIGTERM; 2 on a configuration error."""
    from executive.robots.adam.sim.node import AdamSimConfig, SimAdam

    kit.configure_logging(args.log_level)
    config = AdamSimConfig(
        **kit.config_fields(args), stdin=sys.stdin if args.stdin_faults else None
    )
    return kit.serve(
        args.domain,
        lambda participant: SimAdam(participant, config),
        # a bad profile, variant, fault or rate; a record file it cannot write
        errors=(ProfileError, AdamVariantError, FaultError, ValueError, OSError),
        name="the simulated Adam",
        prog="adam sim",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m executive.robots.adam.sim [options] [fault SPEC... | status]``."""
    args = build_parser().parse_args(argv)
    result: int = args.handler(args)
    return result
