"""``atom-executive sim``: run the simulated Atom, inject faults into it, read its status.

    atom-executive sim                                 # the default robot, profile rates
    atom-executive sim --interface sdk-1.1.0 --seed 7 --record /tmp/sim.jsonl
    atom-executive sim --fault estop-soft --fault dropout:upper_state@3
    atom-executive sim --scene executive/resources/scenes/atom-lab.yaml --contact-fault
    atom-executive sim --physics kinematic             # the first-order lag: no body
    atom-executive sim fault servo-error:left_elbow_pitch=0x2310   # into a running sim
    atom-executive sim fault --clear servo-error
    atom-executive sim fault --clear-all
    atom-executive sim status                          # its status as JSON

``python -m executive.robots.atom.sim ...`` is the same command. The DDS domain comes from
``--domain`` or ``ATOM_DDS_DOMAIN``; network settings from ``CYCLONEDDS_URI``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from executive.robots.atom.interface import DEFAULT_PRESET, PRESETS, VariantError
from executive.robots.atom.sim.faults import HELP as FAULT_HELP
from executive.robots.atom.topics import STATE_TOPICS
from executive.robots.simkit import cli as kit
from executive.robots.simkit.faults import FaultError
from executive.seam.profile import ProfileError, builtin_profiles

# --help shows the module docstring (with its examples), without the reST quoting.
DESCRIPTION = (__doc__ or "").replace("``", "")


def configure(p: argparse.ArgumentParser) -> None:
    """Add the sim's options and its ``fault``/``status`` subcommands to ``p``."""
    kit.add_domain(p)
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
    kit.add_seed_rate(p, what="TOPIC", example="upper_state=250", names=STATE_TOPICS)
    p.add_argument(
        "--fsm", default="zero_torque", help="FSM state at start, name or id (default zero_torque)"
    )
    kit.add_joint_args(p)
    kit.add_body_args(p)
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
    kit.add_battery_args(p)
    kit.add_fault_arg(p, see="'atom-executive sim fault --help'")
    kit.add_output_args(p, record="executive/robots/simkit/record.py")
    p.set_defaults(handler=run)
    kit.add_sim_commands(p, _client, robot="Atom", prog="atom-executive sim")


def _client(participant: Any, timeout: float) -> Any:
    from executive.robots.atom.sim.client import SimClient

    return SimClient(participant, timeout=timeout)


def add_parser(sub: Any) -> None:
    """Register ``sim`` on the ``atom-executive`` subcommand parser."""
    p = sub.add_parser(
        "sim",
        description=DESCRIPTION,
        epilog=FAULT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    configure(p)


def run(args: argparse.Namespace) -> int:
    """Run the sim until SIGINT or SIGTERM; 2 on a configuration error."""
    from executive.robots.atom.sim.amr import TagMapError
    from executive.robots.atom.sim.config import SimConfig
    from executive.robots.atom.sim.node import SimAtom

    kit.configure_logging(args.log_level)
    config = SimConfig(
        **kit.config_fields(args),
        fsm=args.fsm,
        amr_speed=args.amr_speed,
        amr_turn_rate=args.amr_turn_rate,
        tags=args.tags,
        physics=args.physics,
        scene=args.scene,
        contact_fault=args.contact_fault,
    )
    return kit.serve(
        args.domain,
        lambda participant: SimAtom(participant, config),
        # a bad profile, variant, tag map, fault, rate or scene; a record file it cannot
        # write (BodyError is a ValueError)
        errors=(ProfileError, VariantError, TagMapError, FaultError, ValueError, OSError),
        name="the simulated Atom",
        prog="atom-executive sim",
    )


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
