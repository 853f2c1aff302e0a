"""The profile's aurora: options (executive/robots/aurora/settings.py): every problem named
by its key, and the shipped profile loads."""

from __future__ import annotations

from typing import Any

from executive.robots.aurora.settings import KEYS, AuroraSettings
from executive.robots.aurora.settings import check_options as check

GOOD: dict[str, Any] = {
    "interface": "client-0.1.8",
    "domain": None,
    "namespace": "GR3/SN001/",
    "ros_compatible": False,
    "control_fsm": "upper_body_user_cmd",
    "release_fsm": "pd_stand",
    "safety_fsm": "security_protection",
    "velocity_source": 2,
    "velocity_hz": 50,
    "max_velocity": {"forward": 0.5, "lateral": 0.3, "yaw": 0.6},
    "motor_cfg_mode": 4,
    "parent_timeout_s": 1.0,
}
FSM = {
    "fsm": {
        "pd_stand": {"id": 2},
        "security_protection": {"id": 9},
        "upper_body_user_cmd": {"id": 11},
        "upper_remote": {"id": 258},
    }
}


def test_good_options_build_settings() -> None:
    assert check(GOOD, FSM) == []
    s = AuroraSettings.from_options(GOOD)
    assert s.namespace == "GR3/SN001"
    assert s.max_velocity == (0.5, 0.3, 0.6)
    assert s.domain is None


def test_every_problem_names_its_key() -> None:
    bad = dict(
        GOOD,
        interface="sdk-9",
        domain=500,
        velocity_hz=0,
        namespace="a//b",
        max_velocity={"forward": 1},
        control_fsm="upper_remote",
        extra=1,
    )
    problems = check(bad, FSM)
    assert problems == ["extra: unknown key (known: " + ", ".join(KEYS) + ")"]
    del bad["extra"]
    problems = check(bad, FSM)
    keys = sorted(p.split(":")[0] for p in problems)
    assert keys == [
        "control_fsm",
        "domain",
        "interface",
        "max_velocity",
        "namespace",
        "velocity_hz",
    ]
    assert any("'upper_remote' is not a whole-body state" in p for p in problems)
    assert check({}, FSM)[0] == "interface: missing"
