"""The Aurora's DDS types (seed 003 as measured against the vendor's client 0.1.8).

Source of truth: ``idl/fourier_aurora/`` (the same types as IDL, for reading; cyclonedds 11's
Python classes are written here by hand because the project's idlc is 0.10.2's). Member order
and C++ types were read from the vendor wheel's SWIG prototypes
(``fourier_msgs.msg.*``: e.g. ``MotorCfgGroupCmd::mode(fourier_msgs::msg::MotorMode)``) and
checked value by value against a robot built from that wheel (tests/aurora_vendor).

Every struct is ``@appendable`` and travels as XCDR1 (``qos.writer_qos``): the vendor writes
and reads nothing else. Names are the vendor's (``fourier_msgs::msg::<Name>``); ``ROS``
holds the ROS-compatible variants (``fourier_msgs::msg::dds_::<Name>_``, the vendor's
``FOURIERDDS_ROS_COMPATIBLE=1``), copies that differ only in the top-level type name:
with type information ignored (the eProsima vendor id, cyclonedds11-loopback.xml) a topic
matches by that name, and nested names never reach the wire.

Two interface variants (``config.INTERFACES``): ``client-0.1.8`` (default: what the vendor's client
sends: ``VelocityCmd.duration``, ``MotorCfgGroupCmd`` with ``mode`` and position gains) and
``seed`` (seed 003 as written: no duration, ``pd_kp``/``pd_kd`` only). The two share type
names, so a peer must be configured with the one its robot speaks.
"""

# no ``from __future__ import annotations``: cyclonedds reads these classes' annotations as
# objects (a string annotation it resolves by module and fails on ``t.uint8``)
import dataclasses
import types as _types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import cyclonedds.idl.types as t
from cyclonedds.idl import IdlEnum, IdlStruct
from cyclonedds.idl.annotations import appendable

if TYPE_CHECKING:
    # what a sequence member holds, for mypy (which runs in .venv, against cyclonedds 0.10.2's
    # annotations, where sequence takes no argument); cyclonedds itself reads the real one
    sequence = list
else:
    from cyclonedds.idl.types import sequence


# -- builtin_interfaces / std_msgs -------------------------------------------------------------


@appendable
@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::Time"):
    sec: t.int32 = 0
    nanosec: t.uint32 = 0


@appendable
@dataclass
class Header(IdlStruct, typename="std_msgs::msg::Header"):
    stamp: Time = field(default_factory=Time)
    frame_id: str = ""


@appendable
@dataclass
class BaseDataType(IdlStruct, typename="std_msgs::msg::BaseDataType"):
    """Not in the seed; the vendor's ``ex_data`` element (order from the wheel)."""

    arg_int: sequence[t.int32] = field(default_factory=list)
    arg_double: sequence[float] = field(default_factory=list)
    arg_string: sequence[str] = field(default_factory=list)


# -- AuroraState.idl ---------------------------------------------------------------------------


@appendable
@dataclass
class AuroraState(IdlStruct, typename="fourier_msgs::msg::AuroraState"):
    header: Header = field(default_factory=Header)
    velocity_command_source: t.uint8 = 0  # 0 joystick, (1 handheld), 2 navigation
    whole_body_fsm_state: t.uint8 = 0  # 0..11; 9 security protection, 10 user cmd, 11 upper
    upper_body_fsm_state: t.uint8 = 0  # 0 default, 1 act (arm swing), 2 remote, 4 move command
    allow_upper_body_override: bool = False


@appendable
@dataclass
class RobotStandPoseState(IdlStruct, typename="fourier_msgs::msg::RobotStandPoseState"):
    header: Header = field(default_factory=Header)
    delta_z: float = 0.0
    delta_pitch: float = 0.0
    delta_yaw: float = 0.0
    stable_level: t.uint8 = 0


# -- AuroraCmd.idl -----------------------------------------------------------------------------


@appendable
@dataclass
class WholeBodyFsmStateChangeCmd(
    IdlStruct, typename="fourier_msgs::msg::WholeBodyFsmStateChangeCmd"
):
    header: Header = field(default_factory=Header)
    desired_state: t.uint8 = 0


@appendable
@dataclass
class UpperBodyFsmStateChangeCmd(
    IdlStruct, typename="fourier_msgs::msg::UpperBodyFsmStateChangeCmd"
):
    header: Header = field(default_factory=Header)
    desired_state: t.uint8 = 0


@appendable
@dataclass
class VelocitySourceCmd(IdlStruct, typename="fourier_msgs::msg::VelocitySourceCmd"):
    header: Header = field(default_factory=Header)
    desired_source: t.uint8 = 0


@appendable
@dataclass
class VelocityCmd(IdlStruct, typename="fourier_msgs::msg::VelocityCmd"):
    """Client 0.1.8: ``duration`` (s; the client's default 1.0) last."""

    header: Header = field(default_factory=Header)
    vx: float = 0.0
    vy: float = 0.0
    yaw: float = 0.0
    duration: float = 0.0


@appendable
@dataclass
class VelocityCmdSeed(IdlStruct, typename="fourier_msgs::msg::VelocityCmd"):
    """Seed 003: no duration."""

    header: Header = field(default_factory=Header)
    vx: float = 0.0
    vy: float = 0.0
    yaw: float = 0.0


@appendable
@dataclass
class RobotStandPoseCmd(IdlStruct, typename="fourier_msgs::msg::RobotStandPoseCmd"):
    """Topic ``robot_stand_pose_cmd`` (the seed names RobotStandPoseState: erratum 2.2)."""

    header: Header = field(default_factory=Header)
    delta_z: float = 0.0
    delta_pitch: float = 0.0
    delta_yaw: float = 0.0


# -- BaseData.idl, ContactData.idl, TrueData.idl -----------------------------------------------


@appendable
@dataclass
class BaseData(IdlStruct, typename="fourier_msgs::msg::BaseData"):
    header: Header = field(default_factory=Header)
    quat_xyzw: sequence[float] = field(default_factory=list)
    quat_wxyz: sequence[float] = field(default_factory=list)
    rpy: sequence[float] = field(default_factory=list)
    omega_W: sequence[float] = field(default_factory=list)
    acc_W: sequence[float] = field(default_factory=list)
    omega_B: sequence[float] = field(default_factory=list)
    acc_B: sequence[float] = field(default_factory=list)
    vel_W: sequence[float] = field(default_factory=list)
    pos_W: sequence[float] = field(default_factory=list)
    vel_B: sequence[float] = field(default_factory=list)


@appendable
@dataclass
class ContactData(IdlStruct, typename="fourier_msgs::msg::ContactData"):
    header: Header = field(default_factory=Header)
    contact_force: sequence[float] = field(default_factory=list)  # 6D x 2 feet
    contact_prob: sequence[float] = field(default_factory=list)  # 0..1 per foot


@appendable
@dataclass
class TrueData(IdlStruct, typename="fourier_msgs::msg::TrueData"):
    """Not in the seed; ``true_data_pub``, which the vendor's client waits for."""

    header: Header = field(default_factory=Header)
    vel_B: sequence[float] = field(default_factory=list)
    vel_W: sequence[float] = field(default_factory=list)
    pos_W: sequence[float] = field(default_factory=list)
    contact_fz: sequence[float] = field(default_factory=list)
    contact_prob: sequence[float] = field(default_factory=list)


# -- MotionControlState.idl --------------------------------------------------------------------


@appendable
@dataclass
class ControlGroupState(IdlStruct, typename="fourier_msgs::msg::ControlGroupState"):
    group_name: str = ""
    joint_position: sequence[float] = field(default_factory=list)
    joint_velocity: sequence[float] = field(default_factory=list)
    joint_effort: sequence[float] = field(default_factory=list)
    motor_position: sequence[float] = field(default_factory=list)
    motor_velocity: sequence[float] = field(default_factory=list)
    motor_effort: sequence[float] = field(default_factory=list)


@appendable
@dataclass
class RobotControlGroupState(IdlStruct, typename="fourier_msgs::msg::RobotControlGroupState"):
    header: Header = field(default_factory=Header)
    group_motion_state: sequence[t.uint8] = field(
        default_factory=list
    )  # 0 idle 1 moving 2 stopped 3 error
    group_state: sequence[ControlGroupState] = field(default_factory=list)
    stable_level: t.uint8 = 0
    ex_data: sequence[BaseDataType] = field(default_factory=list)


@appendable
@dataclass
class CartesianState(IdlStruct, typename="fourier_msgs::msg::CartesianState"):
    group_name: str = ""
    pose: sequence[float] = field(default_factory=list)  # x y z qx qy qz qw
    twist: sequence[float] = field(default_factory=list)
    wrench: sequence[float] = field(default_factory=list)


@appendable
@dataclass
class RobotCartesianState(IdlStruct, typename="fourier_msgs::msg::RobotCartesianState"):
    header: Header = field(default_factory=Header)
    coordinate_system: t.uint8 = 0  # 0 base_link, 1 world
    group_motion_state: sequence[t.uint8] = field(default_factory=list)
    cartesian_state: sequence[CartesianState] = field(default_factory=list)
    stable_level: t.uint8 = 0
    ex_data: sequence[BaseDataType] = field(default_factory=list)


# -- MotionControlCmd.idl ----------------------------------------------------------------------


@appendable
@dataclass
class ControlGroupCmd(IdlStruct, typename="fourier_msgs::msg::ControlGroupCmd"):
    group_name: str = ""
    group_motion_state: t.uint8 = 0  # 1 move, 2 stop (the rest ignored)
    control_type: t.uint8 = 0  # 0 joints, 1 motors
    motor_mode: t.uint8 = 0  # seed: 0 position, 1 effort (2.2: unresolved)
    position: sequence[float] = field(default_factory=list)
    velocity: sequence[float] = field(default_factory=list)
    effort: sequence[float] = field(default_factory=list)


@appendable
@dataclass
class RobotControlGroupCmd(IdlStruct, typename="fourier_msgs::msg::RobotControlGroupCmd"):
    header: Header = field(default_factory=Header)
    group_cmd: sequence[ControlGroupCmd] = field(default_factory=list)
    ex_data: sequence[BaseDataType] = field(default_factory=list)


@appendable
@dataclass
class CartesianCmd(IdlStruct, typename="fourier_msgs::msg::CartesianCmd"):
    group_name: str = ""
    group_motion_state: t.uint8 = 0
    pose: sequence[float] = field(default_factory=list)
    twist: sequence[float] = field(default_factory=list)
    wrench: sequence[float] = field(default_factory=list)


@appendable
@dataclass
class RobotCartesianCmd(IdlStruct, typename="fourier_msgs::msg::RobotCartesianCmd"):
    header: Header = field(default_factory=Header)
    coordinate_system: t.uint8 = 0
    cartesian_cmd: sequence[CartesianCmd] = field(default_factory=list)
    ex_data: sequence[BaseDataType] = field(default_factory=list)


@appendable
@dataclass
class MoveCommand(IdlStruct, typename="fourier_msgs::msg::MoveCommand"):
    """Client 0.1.8's ``move_command_data`` (GR-2/GR-3 only); the sim reads and records it."""

    header: Header = field(default_factory=Header)
    move_type: t.uint8 = 0
    joint_commands: RobotControlGroupCmd = field(default_factory=RobotControlGroupCmd)
    cartesian_commands: RobotCartesianCmd = field(default_factory=RobotCartesianCmd)
    ex_data: sequence[BaseDataType] = field(default_factory=list)


# -- MotorCfgCmd.idl / MotorCfgState.idl -------------------------------------------------------


class MotorMode(IdlEnum, typename="fourier_msgs::msg::MotorMode"):
    """Client 0.1.8's enum (a 32-bit enum on the wire)."""

    DISABLE = 0
    POSITION = 1
    VELOCITY = 2
    TORQUE = 3
    PD = 4


@appendable
@dataclass
class MotorCfgGroupCmd(IdlStruct, typename="fourier_msgs::msg::MotorCfgGroupCmd"):
    """Client 0.1.8: mode and the position loop's gains before the PD gains."""

    group_name: str = ""
    mode: MotorMode = MotorMode.DISABLE
    pos_kp: sequence[float] = field(default_factory=list)
    pos_ki: sequence[float] = field(default_factory=list)
    pos_kd: sequence[float] = field(default_factory=list)
    pd_kp: sequence[float] = field(default_factory=list)
    pd_kd: sequence[float] = field(default_factory=list)


@appendable
@dataclass
class RobotMotorCfgGroupCmd(IdlStruct, typename="fourier_msgs::msg::RobotMotorCfgGroupCmd"):
    header: Header = field(default_factory=Header)
    group_cmd: sequence[MotorCfgGroupCmd] = field(default_factory=list)
    ex_data: sequence[BaseDataType] = field(default_factory=list)


@appendable
@dataclass
class MotorCfgGroupCmdSeed(IdlStruct, typename="fourier_msgs::msg::MotorCfgGroupCmd"):
    """Seed 003: the PD gains only."""

    group_name: str = ""
    pd_kp: sequence[float] = field(default_factory=list)
    pd_kd: sequence[float] = field(default_factory=list)


@appendable
@dataclass
class RobotMotorCfgGroupCmdSeed(IdlStruct, typename="fourier_msgs::msg::RobotMotorCfgGroupCmd"):
    header: Header = field(default_factory=Header)
    group_cmd: sequence[MotorCfgGroupCmdSeed] = field(default_factory=list)
    ex_data: sequence[BaseDataType] = field(default_factory=list)


@appendable
@dataclass
class MotorCfgGroupState(IdlStruct, typename="fourier_msgs::msg::MotorCfgGroupState"):
    group_name: str = ""
    mode: MotorMode = MotorMode.DISABLE
    motor_error: sequence[t.uint32] = field(default_factory=list)
    pos_kp: sequence[float] = field(default_factory=list)
    pos_ki: sequence[float] = field(default_factory=list)
    pos_kd: sequence[float] = field(default_factory=list)
    pd_kp: sequence[float] = field(default_factory=list)
    pd_kd: sequence[float] = field(default_factory=list)


@appendable
@dataclass
class RobotMotorCfgGroupState(IdlStruct, typename="fourier_msgs::msg::RobotMotorCfgGroupState"):
    """Not in the seed; ``robot_motor_cfg_group_state``, which the vendor's client waits for."""

    header: Header = field(default_factory=Header)
    group_state: sequence[MotorCfgGroupState] = field(default_factory=list)
    ex_data: sequence[BaseDataType] = field(default_factory=list)


# -- the topic-level types by interface variant, and their ROS-compatible twins ---------------

# every top-level type, vendor variant first (the table the ROS twins are made from)
TOP_LEVEL: tuple[type[IdlStruct], ...] = (
    AuroraState,
    RobotStandPoseState,
    WholeBodyFsmStateChangeCmd,
    UpperBodyFsmStateChangeCmd,
    VelocitySourceCmd,
    VelocityCmd,
    VelocityCmdSeed,
    RobotStandPoseCmd,
    BaseData,
    ContactData,
    TrueData,
    RobotControlGroupState,
    RobotCartesianState,
    RobotControlGroupCmd,
    MoveCommand,
    RobotMotorCfgGroupCmd,
    RobotMotorCfgGroupCmdSeed,
    RobotMotorCfgGroupState,
)


def ros_type_name(name: str) -> str:
    """``a::b::Name`` -> ``a::b::dds_::Name_`` (the vendor's ``ros_datatype_mangling``)."""
    module, sep, base = name.rpartition("::")
    return f"{module}::dds_::{base}_" if sep else f"dds_::{name}_"


def _ros_twin(cls: type[IdlStruct]) -> type[IdlStruct]:
    """A copy of ``cls`` (same members, defaults, extensibility) named as the vendor's
    ROS-compatible mode names it. A copy, not a subclass: cyclone describes a subclass as a
    struct inheriting from its parent, and a sample of it from the vendor's robot then fails
    to deserialize (measured)."""
    name = ros_type_name(cls.__idl_typename__)
    own = {f.name: f for f in dataclasses.fields(cast(Any, cls))}

    def body(ns: dict[str, Any]) -> None:
        ns["__annotations__"] = dict(cls.__annotations__)
        for member, f in own.items():
            if f.default_factory is not dataclasses.MISSING:
                ns[member] = dataclasses.field(default_factory=f.default_factory)
            else:
                ns[member] = f.default
        ns["__module__"] = __name__
        ns["__doc__"] = f"{cls.__name__} under its ROS-compatible type name {name}."

    twin = _types.new_class(cls.__name__ + "Ros", (IdlStruct,), {"typename": name}, body)
    made: Any = appendable(dataclass(twin))
    return made  # type: ignore[no-any-return]


ROS: dict[type[IdlStruct], type[IdlStruct]] = {cls: _ros_twin(cls) for cls in TOP_LEVEL}
