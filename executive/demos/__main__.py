"""``make demo [PROFILE=name]``: a robot's demo, chosen by its profile.

Each robot's demo is ``executive/demos/<robot>.py`` (above the service and the operator's
tools it drives, so a robot's own folder imports neither): its ``main(profile)`` runs its
mission against its simulator and the service on a leased loopback domain, plays the
operator and the trouble, and exits 0 only if every check held; ``fleet`` is three robots,
their executives and a router (``executive/demos/fleet.py``). Here only the dispatch (``python -m
executive.demos [--profile P]``, the default profile's robot without one); what the
demos share is ``executive.demos.kit``.
"""

from __future__ import annotations

import argparse
import importlib
import sys


def main(argv: list[str] | None = None) -> int:
    """``make demo [PROFILE=name]``: the demo of the profile's robot
    (``executive/demos/<robot>.py``), the default profile's without one."""
    from executive.seam.profile import DEFAULT_PROFILE, load_profile

    parser = argparse.ArgumentParser(prog="python -m executive.demos")
    parser.add_argument(
        "--profile",
        default=None,
        help="a built-in profile (default: the default profile); fleet: three robots on the "
        "fleet plane",
    )
    args = parser.parse_args(argv)
    if args.profile == "fleet":  # no robot's profile: three robots and a router (issue 24)
        fleet: int = importlib.import_module("executive.demos.fleet").main()
        return fleet
    profile = args.profile or DEFAULT_PROFILE
    robot = load_profile(profile).robot
    try:
        module = importlib.import_module(f"executive.demos.{robot}")
    except ModuleNotFoundError as e:
        if e.name != f"executive.demos.{robot}":
            raise
        print(f"no demo for robot {robot!r} (executive/demos/{robot}.py)", file=sys.stderr)  # noqa: T201
        return 2
    result: int = module.main(profile)
    return result


if __name__ == "__main__":
    sys.exit(main())
