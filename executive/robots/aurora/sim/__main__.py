"""``python -m executive.robots.aurora.sim``: the simulated Aurora (see the package docstring)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from executive.robots.aurora.sim.model import AuroraModel
from executive.robots.aurora.sim.node import SimNode, group_sizes
from executive.robots.aurora.wire.config import (
    DEFAULT_INTERFACE,
    INTERFACES,
    LOOPBACK_CONFIG,
    VENDOR_DOMAIN,
    WireConfig,
)
from executive.robots.simkit import realtime

if TYPE_CHECKING:
    from executive.robots.aurora.sim.body import SimBody

DOMAIN_ENV = "ATOM_DDS_DOMAIN"  # what the tests' domain lease exports (executive.wire.dds)


def parse(argv: list[str] | None) -> argparse.Namespace:
    env_domain = os.environ.get(DOMAIN_ENV)
    p = argparse.ArgumentParser(prog="python -m executive.robots.aurora.sim", description=__doc__)
    p.add_argument(
        "--domain",
        type=int,
        default=int(env_domain) if env_domain else VENDOR_DOMAIN,
        help=f"DDS domain (default ${DOMAIN_ENV}, else the vendor's {VENDOR_DOMAIN})",
    )
    p.add_argument("--namespace", default="", help="topic prefix, e.g. gr3/SN001 (none)")
    p.add_argument("--ros", action="store_true", help="the vendor's ROS-compatible naming")
    p.add_argument("--interface", choices=INTERFACES, default=DEFAULT_INTERFACE)
    p.add_argument("--dds-config", default=str(LOOPBACK_CONFIG), help="CycloneDDS 11 XML")
    p.add_argument("--rate", type=float, default=100.0, help="state rate, Hz (100)")
    p.add_argument("--speed", type=float, default=1.0, help="joint speed limit, rad/s (1.0)")
    p.add_argument("--groups", default="", help="GROUP=SIZE,... over the GR-3's sizes")
    p.add_argument("--fsm", type=int, default=2, help="whole-body FSM at start (2, PD stand)")
    p.add_argument("--no-override", action="store_true", help="allow_upper_body_override false")
    p.add_argument("--record", default=None, help="JSON lines of every command taken")
    p.add_argument(
        "--physics",
        choices=("mujoco", "kinematic"),
        default="mujoco",
        help="joints in MuJoCo after the firmware's setpoints (default), or the setpoints",
    )
    p.add_argument("--profile", default="aurora", help="the robot's profile: its body (aurora)")
    p.add_argument("--scene", default=None, help="scene YAML (obstacles) beside the profile's")
    p.add_argument("--control-port", type=int, default=0, help="loopback UDP port (0: any)")
    return p.parse_args(argv)


def _body(args: argparse.Namespace, sizes: dict[str, int]) -> SimBody | None:
    """The GR-3's body for ``--physics mujoco`` (ValueError saying why not)."""
    if args.physics == "kinematic":
        if args.scene is not None:
            raise ValueError("a scene needs the body: --scene with --physics mujoco")
        return None
    from executive.robots.aurora.sim.body import SimBody  # mujoco: only when asked for
    from executive.robots.simkit.physics import load_scene
    from executive.seam.body import BodyError
    from executive.seam.profile import ProfileError, load_profile

    try:
        profile = load_profile(args.profile)
        scene = load_scene(Path(args.scene) if args.scene else None)
        return SimBody(profile, sizes, scene)
    except (ProfileError, BodyError) as e:
        raise ValueError(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    realtime.take()  # where the environment asks, before cyclonedds's threads exist
    try:
        config = WireConfig(
            domain=args.domain,
            namespace=args.namespace,
            ros_compatible=args.ros,
            interface=args.interface,
            dds_config=args.dds_config,
        )
        sizes = group_sizes(args.groups)
        body = _body(args, sizes)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)  # noqa: T201 - a command line
        return 2
    model = AuroraModel(
        sizes, speed=args.speed, fsm=args.fsm, allow_override=not args.no_override, body=body
    )
    sim = SimNode(model, config, rate=args.rate, record=args.record, control_port=args.control_port)

    def raise_fsm9() -> None:
        with sim.lock:
            sim.handle({"fault": "fsm9"}, time.monotonic())

    def fsm9(*_: object) -> None:
        # The handler runs on the main thread, which may hold sim.lock (not reentrant):
        # taking it here waited forever. A thread of its own waits for the lock instead.
        threading.Thread(target=raise_fsm9, name="sigusr1", daemon=True).start()

    signal.signal(signal.SIGTERM, lambda *_: sim.stop.set())
    signal.signal(signal.SIGINT, lambda *_: sim.stop.set())
    signal.signal(signal.SIGUSR1, fsm9)
    ready = {"ready": True, "pid": os.getpid(), "control_port": sim.control_port}
    print(json.dumps({**ready, "domain": config.domain}), flush=True)  # noqa: T201 - the ready line
    sim.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
