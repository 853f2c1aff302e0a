"""Our wire module against a robot made only of the vendor's wheel: every type, exact values.

The robot (tests/aurora_vendor/robot.py, Fast DDS and the vendor's SWIG types) publishes
the eight state topics with the values below and records every command as its own types
decode it; our peer (tests/aurora/exchange_peer.py, the wire module on cyclonedds 11) prints
what it decoded and writes every command. Each end's codec is its own: the comparison is
between the values this test wrote down and what the other side's decoder made of them.
Edge values on purpose: int32/uint32/uint8 extremes, a subnormal and the largest double,
-0.0, non-ASCII strings, nested sequences of structs, the MotorMode enum.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from tests.aurora.harness import AURORA_PY, Processes, run

pytestmark = pytest.mark.dds

HEADER = {"stamp": {"sec": -2147483648, "nanosec": 4294967295}, "frame_id": "gr3/左臂 frame"}
EX = [
    {"arg_int": [-2147483648, 0, 2147483647], "arg_double": [5e-324, -0.0], "arg_string": ["ä", ""]}
]
GROUPS = [
    ("left_manipulator", [0.1, -0.25, 1e-310, 1.7976931348623157e308, -3.5, 2.0, 0.3]),
    ("head", [0.5, -0.5]),
]

COMMANDS: dict[str, dict[str, Any]] = {
    "whole_body_fsm_state_change_cmd": {"header": HEADER, "desired_state": 11},
    "upper_body_fsm_state_change_cmd": {"header": HEADER, "desired_state": 4},
    "velocity_source_cmd": {"header": HEADER, "desired_source": 2},
    "velocity_cmd": {"header": HEADER, "vx": 0.35, "vy": -0.1, "yaw": 0.2, "duration": 1.5},
    "robot_stand_pose_cmd": {
        "header": HEADER,
        "delta_z": -0.05,
        "delta_pitch": 0.01,
        "delta_yaw": -0.02,
    },
    "robot_control_group_cmd": {
        "header": HEADER,
        "group_cmd": [
            {
                "group_name": name,
                "group_motion_state": 1,
                "control_type": 0,
                "motor_mode": 255,
                "position": q,
                "velocity": [0.0] * len(q),
                "effort": [-1.25] * len(q),
            }
            for name, q in GROUPS
        ],
        "ex_data": EX,
    },
    "robot_motor_cfg_group_cmd": {
        "header": HEADER,
        "group_cmd": [
            {
                "group_name": "left_manipulator",
                "mode": 4,
                "pos_kp": [1.0, 2.0],
                "pos_ki": [0.0],
                "pos_kd": [0.5],
                "pd_kp": [100.0] * 7,
                "pd_kd": [2.5] * 7,
            }
        ],
        "ex_data": [],
    },
    "move_command_data": {
        "header": HEADER,
        "move_type": 3,
        "joint_commands": {
            "header": HEADER,
            "group_cmd": [{"group_name": "head", "group_motion_state": 2, "position": [0.1, 0.2]}],
            "ex_data": [],
        },
        "cartesian_commands": {
            "header": HEADER,
            "coordinate_system": 1,
            "cartesian_cmd": [
                {
                    "group_name": "right_manipulator",
                    "group_motion_state": 1,
                    "pose": [0.3, -0.2, 0.9, 0.0, 0.0, 0.0, 1.0],
                    "twist": [],
                    "wrench": [1.0],
                }
            ],
            "ex_data": EX,
        },
        "ex_data": EX,
    },
}

STATES: dict[str, dict[str, Any]] = {
    "aurora_state": {
        "header": HEADER,
        "velocity_command_source": 2,
        "whole_body_fsm_state": 11,
        "upper_body_fsm_state": 4,
        "allow_upper_body_override": True,
    },
    "robot_stand_pose_state": {
        "header": HEADER,
        "delta_z": -0.05,
        "delta_pitch": 0.125,
        "delta_yaw": -1e-300,
        "stable_level": 255,
    },
    "robot_control_group_state": {
        "header": HEADER,
        "group_motion_state": [0, 1, 2, 3, 0, 1, 2, 255],
        "group_state": [
            {
                "group_name": name,
                "joint_position": q,
                "joint_velocity": [-0.0] * len(q),
                "joint_effort": [3.25] * len(q),
                "motor_position": [],
                "motor_velocity": [1.0],
                "motor_effort": [],
            }
            for name, q in GROUPS
        ],
        "stable_level": 1,
        "ex_data": EX,
    },
    "robot_cartesian_state": {
        "header": HEADER,
        "coordinate_system": 1,
        "group_motion_state": [1, 2],
        "cartesian_state": [
            {
                "group_name": "left_manipulator",
                "pose": [0.3, 0.2, 0.9, 0.0, 0.0, 0.70710678118654757, 0.70710678118654757],
                "twist": [0.0] * 6,
                "wrench": [-1.5] * 6,
            }
        ],
        "stable_level": 0,
        "ex_data": [],
    },
    "robot_motor_cfg_group_state": {
        "header": HEADER,
        "group_state": [
            {
                "group_name": "left_manipulator",
                "mode": 3,
                "motor_error": [0, 4294967295, 7],
                "pos_kp": [1.0],
                "pos_ki": [],
                "pos_kd": [0.25],
                "pd_kp": [150.0] * 7,
                "pd_kd": [3.0] * 7,
            }
        ],
        "ex_data": EX,
    },
    "base_data_pub": {
        "header": HEADER,
        "quat_xyzw": [0.0, 0.0, 0.38268343236508978, 0.92387953251128674],
        "quat_wxyz": [0.92387953251128674, 0.0, 0.0, 0.38268343236508978],
        "rpy": [0.0, -0.0, 0.7853981633974483],
        "omega_W": [0.1, 0.2, 0.3],
        "acc_W": [0.0, 0.0, -9.81],
        "omega_B": [0.3, 0.2, 0.1],
        "acc_B": [9.81, 0.0, 0.0],
        "vel_W": [0.5, 0.0, 0.0],
        "pos_W": [1.0, 2.0, 0.95],
        "vel_B": [0.0, 0.5, 0.0],
    },
    "true_data_pub": {
        "header": HEADER,
        "vel_B": [0.25],
        "vel_W": [],
        "pos_W": [1.0, 2.0, 3.0],
        "contact_fz": [310.5, 322.25],
        "contact_prob": [1.0, 0.0],
    },
    "contact_data_pub": {
        "header": HEADER,
        "contact_force": [float(i) - 5.5 for i in range(12)],
        "contact_prob": [0.999, 0.001],
    },
}


def contains(got: Any, want: Any, path: str = "") -> list[str]:
    """Where ``got`` differs from ``want`` (every member ``want`` names; floats bit-exact)."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: {got!r} is not a struct"]
        return [d for k, v in want.items() for d in contains(got.get(k), v, f"{path}.{k}")]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{path}: {got!r} != {want!r}"]
        return [
            d
            for i, (g, w) in enumerate(zip(got, want, strict=True))
            for d in contains(g, w, f"{path}[{i}]")
        ]
    if isinstance(want, float):
        same = (
            isinstance(got, float)
            and got == want
            and math.copysign(1, got) == math.copysign(1, want)
        )
        return [] if same else [f"{path}: {got!r} != {want!r}"]
    return [] if got == want and type(got) is type(want) else [f"{path}: {got!r} != {want!r}"]


@pytest.mark.parametrize(
    ("namespace", "ros"), [("", False), ("gr3/SN001", True)], ids=["bare", "namespace-ros"]
)
def test_every_type_both_ways_with_exact_values(
    aurora_procs: Processes, dds_domain: int, tmp_path: Path, namespace: str, ros: bool
) -> None:
    states = tmp_path / "states.json"
    states.write_text(json.dumps(STATES))
    commands = tmp_path / "commands.json"
    commands.write_text(json.dumps(COMMANDS))
    naming = ["--namespace", namespace] + (["--ros"] if ros else [])
    robot = aurora_procs.vendor_robot(dds_domain, "--states", str(states), "--rate", "20", *naming)
    rc, out, err = run(
        AURORA_PY,
        [
            "tests/aurora/exchange_peer.py",
            "--domain",
            str(dds_domain),
            "--commands",
            str(commands),
            *naming,
        ],
    )
    assert rc == 0, (out, err)
    # the vendor's robot -> our wire module
    for topic, want in STATES.items():
        assert not contains(out["states"][topic], want, topic), contains(
            out["states"][topic], want, topic
        )
    # our wire module -> the vendor's robot (its record, as its own types decoded it)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(
        {c["topic"] for c in robot.lines() if "topic" in c}
    ) < len(COMMANDS):
        time.sleep(0.05)
    got = {c["topic"]: c["fields"] for c in robot.lines() if "topic" in c}
    assert sorted(got) == sorted(COMMANDS)
    for topic, want in COMMANDS.items():
        assert not contains(got[topic], want, topic), contains(got[topic], want, topic)


def test_fsm9_raised_by_the_vendor_robot_reaches_the_wire(
    aurora_procs: Processes, dds_domain: int
) -> None:
    """The adapter's fault path starts here: the vendor-built robot raises FSM 9 while an arm
    moves under our commands; our side reads 9, and what it sends after is refused there."""
    robot = aurora_procs.vendor_robot(dds_domain)
    rc, out, err = run(
        AURORA_PY,
        [
            "tests/aurora/sim_peer.py",
            "--domain",
            str(dds_domain),
            "--robot-pid",
            str(robot.proc.pid),
            "vendor",
        ],
    )
    assert rc == 0, err
    assert out == {
        "fsm11": True,
        "moving": True,
        "fsm9": True,
        "frozen": True,
        "motion_after_fsm9": 2,
    }
    lines = robot.lines()
    fault_t = next(line["t"] for line in lines if line.get("fault") == "fsm9")
    before = [
        c["result"]
        for c in lines
        if c.get("topic") == "robot_control_group_cmd" and c["t"] < fault_t
    ]
    after = [
        c["result"]
        for c in lines
        if c.get("topic") == "robot_control_group_cmd" and c["t"] > fault_t
    ]
    assert before == ["left_manipulator:moving"] and after == ["ignored_fsm"]
