"""What the vendor peers share: the loopback profile and SWIG values as plain JSON.

Runs under .venv-aurora-vendor only (the vendor's fourier-aurora-client 0.1.8: Fast DDS 3
and its SWIG ``fourier_msgs``); imports nothing of the project, so what these peers send
and record is the vendor's encoding and decoding, never ours.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROFILE_XML = HERE / "fastdds-loopback.xml"

if os.environ.get("FASTDDS_BUILTIN_TRANSPORTS") != "NONE":
    # DDSInterface turns the builtin transports on; this leaves their set empty (loopback only)
    sys.exit("run with FASTDDS_BUILTIN_TRANSPORTS=NONE (tests/aurora_vendor: loopback only)")

import fastdds  # noqa: E402

SKIP = {"compute_key", "swap"}

# topic -> (module under fourier_msgs.msg, type name)
STATE = {
    "aurora_state": ("AuroraState", "AuroraState"),
    "robot_stand_pose_state": ("AuroraState", "RobotStandPoseState"),
    "robot_control_group_state": ("MotionControlState", "RobotControlGroupState"),
    "robot_cartesian_state": ("MotionControlState", "RobotCartesianState"),
    "robot_motor_cfg_group_state": ("MotorCfgState", "RobotMotorCfgGroupState"),
    "base_data_pub": ("BaseData", "BaseData"),
    "true_data_pub": ("TrueData", "TrueData"),
    "contact_data_pub": ("ContactData", "ContactData"),
}
COMMAND = {
    "whole_body_fsm_state_change_cmd": ("AuroraCmd", "WholeBodyFsmStateChangeCmd"),
    "upper_body_fsm_state_change_cmd": ("AuroraCmd", "UpperBodyFsmStateChangeCmd"),
    "velocity_source_cmd": ("AuroraCmd", "VelocitySourceCmd"),
    "velocity_cmd": ("AuroraCmd", "VelocityCmd"),
    "robot_stand_pose_cmd": ("AuroraCmd", "RobotStandPoseCmd"),
    "robot_control_group_cmd": ("MotionControlCmd", "RobotControlGroupCmd"),
    "robot_motor_cfg_group_cmd": ("MotorCfgCmd", "RobotMotorCfgGroupCmd"),
    "move_command_data": ("MotionControlCmd", "MoveCommand"),
}


def types_of(module: str, name: str) -> tuple[Any, Any]:
    """The SWIG data class and its PubSubType class."""
    mod = importlib.import_module(f"fourier_msgs.msg.{module}")
    return getattr(mod, name), getattr(mod, name + "PubSubType")


def participant_qos() -> Any:
    """The "loopback" participant QoS of fastdds-loopback.xml."""
    factory = fastdds.DomainParticipantFactory.get_instance()
    if factory.load_XML_profiles_file(str(PROFILE_XML)) != fastdds.RETCODE_OK:
        raise RuntimeError(f"{PROFILE_XML}: Fast DDS could not load it")
    qos = fastdds.DomainParticipantQos()
    if factory.get_participant_qos_from_profile("loopback", qos) != fastdds.RETCODE_OK:
        raise RuntimeError(f"{PROFILE_XML}: no participant profile 'loopback'")
    return qos


def _accessors(obj: Any) -> list[str]:
    # the generated class defines one accessor per member, in the IDL's order
    return [
        n
        for n, v in type(obj).__dict__.items()
        if not n.startswith("_") and n not in SKIP and inspect.isfunction(v)
    ]


def to_plain(value: Any) -> Any:
    """A SWIG value as JSON-able data: structs as dicts (IDL order), sequences as lists."""
    if isinstance(value, bool | int | float | str):
        return value
    if type(value).__name__.endswith("_vector"):
        return [to_plain(v) for v in value]
    return {n: to_plain(getattr(value, n)()) for n in _accessors(value)}


def fill(obj: Any, values: dict[str, Any]) -> Any:
    """Set ``obj``'s members from ``values`` (as ``to_plain`` gives them); returns ``obj``."""
    module = sys.modules[type(obj).__module__]
    for name, value in values.items():
        accessor = getattr(obj, name)
        current = accessor()
        if isinstance(value, dict):
            accessor(fill(type(current)(), value))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            element = getattr(module, type(current).__name__.removesuffix("_vector"))
            accessor([fill(element(), v) for v in value])
        else:
            accessor(value)
    return obj
