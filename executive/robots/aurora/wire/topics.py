"""The Aurora's topics: which type each carries, who writes it, by interface variant.

``STATE`` topics are written by the robot (the vendor's ``AuroraClient`` refuses a robot
unless all eight exist); ``COMMAND`` topics are read by it (``move_command_data`` only on
GR-2/GR-3 and with the client's robot_name set). ``type_for(config, base)`` is the class to
create the topic with: the interface variant's and, in ROS-compatible mode, its twin named
``dds_::<Name>_``.
"""

from __future__ import annotations

from cyclonedds.idl import IdlStruct

from executive.robots.aurora.wire import types as idl
from executive.robots.aurora.wire.config import WireConfig

STATE: dict[str, type[IdlStruct]] = {
    "aurora_state": idl.AuroraState,
    "robot_stand_pose_state": idl.RobotStandPoseState,
    "robot_control_group_state": idl.RobotControlGroupState,
    "robot_cartesian_state": idl.RobotCartesianState,
    "robot_motor_cfg_group_state": idl.RobotMotorCfgGroupState,
    "base_data_pub": idl.BaseData,
    "true_data_pub": idl.TrueData,
    "contact_data_pub": idl.ContactData,
}

COMMAND: dict[str, type[IdlStruct]] = {
    "whole_body_fsm_state_change_cmd": idl.WholeBodyFsmStateChangeCmd,
    "upper_body_fsm_state_change_cmd": idl.UpperBodyFsmStateChangeCmd,
    "velocity_source_cmd": idl.VelocitySourceCmd,
    "velocity_cmd": idl.VelocityCmd,
    "robot_stand_pose_cmd": idl.RobotStandPoseCmd,
    "robot_control_group_cmd": idl.RobotControlGroupCmd,
    "robot_motor_cfg_group_cmd": idl.RobotMotorCfgGroupCmd,
    "move_command_data": idl.MoveCommand,
}

# the seed's types where they differ from the vendor client's
SEED: dict[str, type[IdlStruct]] = {
    "velocity_cmd": idl.VelocityCmdSeed,
    "robot_motor_cfg_group_cmd": idl.RobotMotorCfgGroupCmdSeed,
}


def type_for(config: WireConfig, base: str) -> type[IdlStruct]:
    """The class for topic ``base`` under ``config`` (KeyError naming it if unknown)."""
    if base in STATE:
        cls = STATE[base]
    elif base in COMMAND:
        cls = SEED.get(base, COMMAND[base]) if config.interface == "seed" else COMMAND[base]
    else:
        raise KeyError(f"no Aurora topic {base!r}; known: {', '.join([*STATE, *COMMAND])}")
    return idl.ROS[cls] if config.ros_compatible else cls
