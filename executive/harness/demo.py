"""``make demo [PROFILE=name]``: a robot's demo, chosen by its profile.

Each robot's demo lives with the robot (``executive/robots/<robot>/demo.py``: its
``main(profile)`` runs its mission against its simulator and the service on a leased
loopback domain, plays the operator and the trouble, and exits 0 only if every check
held); ``fleet`` is three robots, their executives and a router
(``executive/harness/fleet_demo.py``). Here only the dispatch (``python -m
executive.harness.demo [--profile P]``, the default profile's robot without one); what the
demos share is ``executive.harness.demokit``.
"""

from __future__ import annotations

import argparse
import importlib
import sys


def main(argv: list[str] | None = None) -> int:
    """``make demo [PROFILE=name]``: the demo of the profile's robot
    (``executive/robots/<robot>/demo.py``), the default profile's without one."""
    from executive.seam.profile import DEFAULT_PROFILE, load_profile

    parser = argparse.ArgumentParser(prog="python -m executive.harness.demo")
    parser.add_argument(
        "--profile",
        default=None,
        help="a built-in profile (default: the default profile); fleet: three robots on the "
        "fleet plane",
    )
    args = parser.parse_args(argv)
    if args.profile == "fleet":  # no robot's profile: three robots and a router (issue 24)
        fleet: int = importlib.import_module("executive.harness.fleet_demo").main()
        return fleet
    profile = args.profile or DEFAULT_PROFILE
    module = importlib.import_module(f"executive.robots.{load_profile(profile).robot}.demo")
    result: int = module.main(profile)
    return result


if __name__ == "__main__":
    sys.exit(main())
