"""The profile's grx: options: checked when the profile loads, every key named."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from executive.mission.loader import MissionLoader
from executive.robots.grx.settings import check_options, settings_of
from executive.seam.profile import PROFILES_DIR, ProfileError, load_profile

DATA = yaml.safe_load((PROFILES_DIR / "grx.yaml").read_text())


def test_the_shipped_profile_builds_its_settings() -> None:
    assert check_options(DATA["grx"], DATA) == []
    s = settings_of(load_profile("grx"))
    assert (s.schema, s.safe_task, s.joystick_hz, s.components) == (
        "seed",
        "ready",
        50.0,
        {"natural_arm_swing": 3407},
    )
    assert s.axes(0.5, -0.25, 1.5) == {
        "virtual_joystick_axis_left": [-0.25, 0.5],
        "virtual_joystick_axis_right": [1.0, 0.0],
    }


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"schema": "v9"}, "schema: must be one of seed, m4"),
        ({"safe_task": "dance"}, "safe_task: 'dance' is not in the profile's fsm"),
        ({"passive_tasks": "servo_off"}, "passive_tasks: must be a list"),
        ({"joystick_hz": 0}, "joystick_hz: must be a number in (0"),
        ({"axes": {"forward": {"stick": "left", "index": 2}}}, "axes.forward.index"),
        ({"components": {"wave": -1}}, "components.wave: must be an id"),
        ({"component_channel": "joy"}, "component_channel: must be one of"),
        ({"continuous_tasks": ["fly"]}, "continuous_tasks: 'fly' is not in"),
        ({"extra": 1}, "extra: unknown key"),
    ],
)
def test_each_key_is_checked(change: dict, problem: str) -> None:
    options = {**DATA["grx"], **change}
    assert any(p.startswith(problem) for p in check_options(options, DATA)), check_options(
        options, DATA
    )


def test_battery_needs_the_m4_schema(tmp_path: Path) -> None:
    data = copy.deepcopy(DATA)
    data["capabilities"].append("battery")
    path = tmp_path / "grx-battery.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ProfileError, match="grx.schema: the seed schema reports no battery"):
        load_profile(path)
    data["grx"]["schema"] = "m4"
    path.write_text(yaml.safe_dump(data))
    assert load_profile(path).capabilities >= {"battery"}


def test_the_grx_missions_validate() -> None:
    root = PROFILES_DIR.parents[2] / "missions" / "grx"
    loader = MissionLoader(load_profile("grx"), root)
    for name in ("stand_up", "walk_square", "wave"):
        result = loader.check(root / f"{name}.yaml")
        assert result.ok, [str(d) for d in result.diagnostics]
