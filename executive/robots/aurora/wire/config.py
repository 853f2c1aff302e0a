"""Where the Aurora's topics are: domain, names, interface variant; and the robot's numbers.

``WireConfig`` is everything that decides whether two peers meet: the DDS domain (the
vendor's default 123), the topic namespace (the seed's ``RobotName/SerialNumber/`` prefix when
the robot's SerialNumber is not "null", or the vendor client's free namespace; empty for bare
names), the vendor's ROS-compatible naming (``rt/`` topics, ``dds_::<Name>_`` types), the
interface variant (``INTERFACES``) and the CycloneDDS 11 configuration (the loopback
one with ``IgnoreTypeInformation`` by default). Standard library only (no cyclonedds).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# the interface variants (wire.types): what the vendor's client 0.1.8 sends, and seed 003 as written
INTERFACES = ("client-0.1.8", "seed")
DEFAULT_INTERFACE = "client-0.1.8"
VENDOR_DOMAIN = 123  # the vendor's examples, CLI and config.yaml
RESOURCES = Path(__file__).resolve().parents[3] / "resources"
LOOPBACK_CONFIG = RESOURCES / "cyclonedds11-loopback.xml"

# the control groups in the order the robot reports them (the vendor's client reads
# group_motion_state by index in this order) and the GR-3's sizes (robots.md 2.1a; the
# hands' 6 is an assumption: no vendor figure)
GROUP_NAMES = (
    "left_leg",
    "right_leg",
    "waist",
    "head",
    "left_manipulator",
    "right_manipulator",
    "left_hand",
    "right_hand",
)
GR3_GROUP_SIZES: dict[str, int] = {
    "left_leg": 6,
    "right_leg": 6,
    "waist": 3,
    "head": 2,
    "left_manipulator": 7,
    "right_manipulator": 7,
    "left_hand": 6,
    "right_hand": 6,
}

# whole-body FSM (AuroraState.whole_body_fsm_state, WholeBodyFsmStateChangeCmd)
FSM_DEFAULT = 0
FSM_JOINT_STAND = 1
FSM_PD_STAND = 2
FSM_LOCOMOTION = 3  # "user a" in the seed; RL locomotion in the vendor's API document
FSM_SECURITY_PROTECTION = 9
FSM_USER_CMD = 10  # whole body
FSM_UPPER_BODY_USER_CMD = 11  # upper body; the legs keep balancing
WHOLE_BODY_FSMS = frozenset(range(12))
# upper-body FSM (AuroraState.upper_body_fsm_state, UpperBodyFsmStateChangeCmd)
UPPER_FSMS = frozenset({0, 1, 2, 4})  # default, act (arm swing), remote, move command
# velocity_command_source
SOURCE_JOYSTICK = 0
SOURCE_NAVIGATION = 2  # what a DDS peer's velocity_cmd needs
# group_motion_state (state: per group; command: 1 move, 2 stop)
GROUP_IDLE = 0
GROUP_MOVING = 1
GROUP_STOPPED = 2
GROUP_ERROR = 3


def namespace_for(robot_name: str, serial_number: str) -> str:
    """The seed's prefix: ``RobotName/SerialNumber`` unless SerialNumber is "null" (or empty)."""
    if not serial_number or serial_number == "null":
        return ""
    return f"{robot_name}/{serial_number}"


@dataclass(frozen=True)
class WireConfig:
    """What both ends of the Aurora's DDS must agree on (see the module docstring)."""

    domain: int = VENDOR_DOMAIN
    namespace: str = ""
    ros_compatible: bool = False
    interface: str = DEFAULT_INTERFACE
    # a CycloneDDS 11 configuration: a path to an XML file, or the XML itself
    dds_config: str = str(LOOPBACK_CONFIG)

    def __post_init__(self) -> None:
        if self.interface not in INTERFACES:
            raise ValueError(f"interface: {self.interface!r} is not one of {', '.join(INTERFACES)}")
        if not 0 <= self.domain <= 232:
            raise ValueError(f"domain: {self.domain} is outside 0..232")
        if self.namespace.startswith("/") or self.namespace.endswith("/"):
            raise ValueError(f"namespace: {self.namespace!r} must not start or end with '/'")

    def topic(self, base: str) -> str:
        """The DDS topic name of ``base`` (e.g. ``aurora_state``) as the vendor names it."""
        name = f"{self.namespace}/{base}" if self.namespace else base
        return f"rt/{name}" if self.ros_compatible else name

    def dds_config_xml(self) -> str:
        """The configuration's XML text (read from the file when it is a path)."""
        if self.dds_config.lstrip().startswith("<"):
            return self.dds_config
        return Path(self.dds_config).read_text(encoding="utf-8")
