"""The PND Adam's battery: a percent of the profile's pack voltage range, where the variant
reports a voltage (sdk-1.2's ``LowState_.battery_data``), and only then a capability.

The range is the simulated pack's (``executive/robots/simkit/battery.py``), computed from its
constants: the shipped profiles leave it unset (no datasheet figures).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from executive.mission.loader import MissionLoader
from executive.robots.adam.adapter import AdamAdapter
from executive.robots.adam.interface import AdamInterface
from executive.robots.adam.settings import battery_percent, check_options
from executive.robots.simkit import battery as pack
from executive.seam import registry
from executive.seam.ports import Stamped
from executive.seam.profile import ProfileError, RobotProfile, load_profile
from executive.wire import dds

EMPTY_V = pack.CELLS * pack.CELL_EMPTY_MV / 1000.0
FULL_V = pack.CELLS * pack.CELL_FULL_MV / 1000.0
SHIPPED = ("adam-pro", "adam-standard", "adam-lite", "adam-pro-sdkindex")


def battery_profile(tmp_path: Path, **overrides: Any) -> Path:
    """A profile extending adam-pro with the simulated pack's range and the capability."""
    data: dict[str, Any] = {
        "extends": "adam-pro",
        "name": "adam-pro-battery",
        "adam": {"battery_voltage": {"empty": EMPTY_V, "full": FULL_V}},
        "capabilities": ["joints", "hands", "battery"],
        **overrides,
    }
    data = {k: v for k, v in data.items() if v is not None or k == "capabilities"}
    path = tmp_path / "adam-pro-battery.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


# -- the profile option and the capability --------------------------------------------------


def test_the_spec_has_battery_and_no_shipped_profile_offers_it() -> None:
    assert "battery" in registry.spec("adam").capabilities
    for name in SHIPPED:
        p = load_profile(name)
        assert "battery" not in p.capabilities and "battery_voltage" not in p.options, name


def test_a_profile_with_the_range_offers_battery(tmp_path: Path) -> None:
    p = load_profile(battery_profile(tmp_path))
    assert "battery" in p.capabilities
    assert p.options["battery_voltage"] == {"empty": EMPTY_V, "full": FULL_V}


@pytest.mark.parametrize("capabilities", [["joints", "hands", "battery"], None])
def test_battery_without_the_range_is_refused(tmp_path: Path, capabilities: Any) -> None:
    """Listed, or the spec's (``capabilities: null``), battery needs the range."""
    path = battery_profile(tmp_path, adam=None, capabilities=capabilities)
    with pytest.raises(ProfileError) as err:
        load_profile(path)
    (problem,) = err.value.problems
    assert problem.startswith("adam.battery_voltage: missing, and the profile offers the battery")


def test_the_range_without_battery_loads(tmp_path: Path) -> None:
    """A site may know its pack and still not offer the capability."""
    p = load_profile(battery_profile(tmp_path, capabilities=["joints", "hands"]))
    assert "battery" not in p.capabilities


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"battery_volts": 5}, "battery_volts: unknown key (known: battery_voltage)"),
        ({"battery_voltage": [52.8, 66.4]}, "battery_voltage: must be {empty: V, full: V}"),
        ({"battery_voltage": {"empty": 52.8}}, "battery_voltage: must be {empty: V, full: V}"),
        ({"battery_voltage": {"empty": 0, "full": 60}}, "must be volts (finite, > 0)"),
        ({"battery_voltage": {"empty": True, "full": 60}}, "must be volts (finite, > 0)"),
        ({"battery_voltage": {"empty": 50, "full": math.inf}}, "must be volts (finite, > 0)"),
        ({"battery_voltage": {"empty": 60, "full": 50}}, "empty must be below full"),
    ],
)
def test_bad_options_name_the_key(options: dict[str, Any], says: str) -> None:
    problems = check_options(options, {"capabilities": ["joints", "hands"]})
    assert len(problems) == 1 and says in problems[0], problems


def test_validate_refuses_check_battery_without_the_capability(tmp_path: Path) -> None:
    mission = tmp_path / "m.yaml"
    mission.write_text(
        "mission: m\ntree:\n  sequence:\n    - check_battery: {min_level: 20}\n    - wait: {seconds: 1}\n"
    )
    shipped = MissionLoader(load_profile("adam-pro"), tmp_path).check(mission)
    assert not shipped.ok and shipped.mission is None
    (d,) = shipped.errors
    assert "check_battery needs the robot's 'battery' capability" in d.message
    assert "adam (profile adam-pro) has: hands, joints" in d.message
    assert MissionLoader(load_profile(battery_profile(tmp_path)), tmp_path).check(mission).ok


# -- the percent -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("volts", "percent"),
    [
        (EMPTY_V, 0.0),
        (FULL_V, 100.0),
        ((EMPTY_V + FULL_V) / 2, 50.0),
        (EMPTY_V - 5, 0.0),  # below the range: clamped
        (0.0, 0.0),  # an unfilled battery_data reads empty: the watchdog trips, not ignores
        (FULL_V + 5, 100.0),  # above (charging): clamped
        (math.nan, None),
        (math.inf, None),
        (-math.inf, None),
    ],
)
def test_percent_is_linear_and_clamped(volts: float, percent: float | None) -> None:
    got = battery_percent(volts, EMPTY_V, FULL_V)
    assert got == (None if percent is None else pytest.approx(percent))


class _Reader:
    """A ``LatestReader`` stand-in holding one decoded sample."""

    def __init__(self, latest: Stamped[Any] | None, real: Any) -> None:
        self.latest = latest
        self.health = real.health

    def poll(self) -> None:
        """Nothing to take: the sample is already decoded (the snapshot polls every reader)."""


def snapshot_at(profile: RobotProfile, participant: Any, volts: float, variant: str) -> Any:
    """The adapter's snapshot of an ``rt/lowstate`` sample encoded and decoded with its own
    codec, received at t=123.5."""
    adapter = AdamAdapter(profile, participant, AdamInterface(variant))
    codec = adapter.codecs["low_state"]
    record = codec.zeros()
    if variant == "sdk-1.2":
        record["battery_data"]["voltage"] = volts
    decoded = codec.decode(codec.encode(record))
    adapter.readers["low_state"] = _Reader(  # type: ignore[assignment]
        Stamped(decoded, 123.5), adapter.readers["low_state"]
    )
    return adapter.snapshot()


@pytest.mark.dds
@pytest.mark.parametrize(
    ("volts", "percent"),
    [
        (pack.Battery(level=85.0).pack_voltage, 85.0),
        (pack.Battery(level=5.0).pack_voltage, 5.0),
        (EMPTY_V - 1, 0.0),
        (FULL_V + 1, 100.0),
        (math.nan, None),
        (math.inf, None),
    ],
)
def test_snapshot_battery_from_a_decoded_low_state(
    tmp_path: Path, participant: dds.DomainParticipant, volts: float, percent: float | None
) -> None:
    snap = snapshot_at(load_profile(battery_profile(tmp_path)), participant, volts, "sdk-1.2")
    if percent is None:
        assert snap.battery is None
        return
    assert snap.battery is not None and snap.battery.received == 123.5
    # the wire's voltage is a float32 and the sim's cells whole millivolts: within 0.1 %
    assert snap.battery.sample == pytest.approx(percent, abs=0.1)
    assert 0.0 <= snap.battery.sample <= 100.0
    assert np.isfinite(snap.battery.sample)


@pytest.mark.dds
def test_no_battery_without_the_range_or_on_the_seed_variant(
    tmp_path: Path, participant: dds.DomainParticipant
) -> None:
    volts = pack.Battery(level=50.0).pack_voltage
    shipped = snapshot_at(load_profile("adam-pro"), participant, volts, "sdk-1.2")
    assert shipped.battery is None and shipped.servo_errors is not None
    profile = load_profile(battery_profile(tmp_path))
    seed = AdamAdapter(profile, participant, AdamInterface("seed"))
    assert seed.battery_voltage is None and "battery" not in seed.capabilities
    assert snapshot_at(profile, participant, volts, "seed").battery is None


def test_a_battery_profile_on_the_seed_interface_stops_start_up(tmp_path: Path) -> None:
    """The seed's LowState_ has no battery_data: a profile that offers the battery with it
    would validate check_battery and then never hear one. The config says so, naming both."""
    from executive.service.config import ConfigError, parse_config

    profile = str(battery_profile(tmp_path))
    with pytest.raises(ConfigError) as refused:
        parse_config({"profile": profile, "interface": "seed"})
    [problem] = refused.value.problems
    assert problem.startswith("interface: 'seed' reports no battery"), problem
    assert "adam.battery_voltage" in problem and "'sdk-1.2'" in problem
    assert parse_config({"profile": profile, "interface": "sdk-1.2"}).interface == "sdk-1.2"
    shipped = parse_config({"profile": "adam-pro", "interface": "seed"})  # offers no battery
    assert shipped.interface == "seed"
