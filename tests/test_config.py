"""Service config: defaults for everything; every bad key named."""

from __future__ import annotations

from pathlib import Path

import pytest

from executive.config import ConfigError, ServiceConfig, load_config, parse_config


def test_no_file_and_empty_file_are_all_defaults(tmp_path: Path) -> None:
    assert load_config(None) == ServiceConfig()
    empty = tmp_path / "c.yaml"
    empty.write_text("")
    assert load_config(empty) == ServiceConfig()


def test_values_are_taken() -> None:
    cfg = parse_config(
        {
            "tick_hz": 100,
            "interface": "sdk-1.1.0",
            "safety": {"max_state_age": 0.2},
            "fsm_ids": {"stand": 5},
        }
    )
    assert cfg.tick_hz == 100 and cfg.variant.name == "sdk-1.1.0"
    assert cfg.safety.max_state_age == 0.2 and cfg.fsm_ids == {"stand": 5}


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"tick_hz": 0}, "tick_hz"),
        ({"tick_hz": "fast"}, "tick_hz"),
        ({"stream_hz": -1}, "stream_hz"),
        ({"stream_priority": 0}, "stream_priority"),
        ({"stream_priority": 100}, "stream_priority"),
        ({"stream_priority": True}, "stream_priority"),
        ({"stream_priority": "high"}, "stream_priority"),
        ({"interface": "sdk-9"}, "interface"),
        ({"interface": "seed+colour=red"}, "interface"),
        ({"domain": 500}, "domain"),
        ({"fsm_ids": {"stand": "two"}}, "fsm_ids"),
        ({"safety": {"max_state_age": 0}}, "safety.max_state_age"),
        ({"safety": {"battery_critical": float("nan")}}, "safety.battery_critical"),
        ({"safety": {"estop": False}}, "safety.estop"),
        ({"safety": {"servo_errors": "no"}}, "safety.servo_errors"),
        ({"tickrate": 5}, "tickrate"),
        ({"profile": 3}, "profile"),
    ],
)
def test_bad_values_name_their_key(data: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(data, "svc.yaml")
    assert any(p.startswith(f"{key}:") for p in err.value.problems), err.value.problems
    assert str(err.value).startswith("svc.yaml: ")


@pytest.mark.parametrize("text", ["- 1\n", "a: [\n", "\xff\xfe"])
def test_unreadable_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="latin-1")
    with pytest.raises(ConfigError):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
