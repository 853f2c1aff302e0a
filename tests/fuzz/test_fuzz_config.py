"""The service config, fuzzed in-process as the missions are (issue 25, problem 5).

Any YAML either loads, and then every number is inside its range (``config.RANGES``: the
battery cause cannot flap, the tick thread cannot overflow), or is a ``ConfigError``
whose every line names a key (or the file as a whole: not YAML, not a mapping), printable
and one line each; never another exception, never a wait (a path key naming a FIFO, a
socket or a device is refused before anything opens it). ``test_fuzz_cli.py`` runs the
loader through ``atom-executive run`` too; this is the loader alone, many more cases.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from executive.core.safety import SafetyConfig
from executive.records.mcaprecord import FoxgloveConfig
from executive.service.config import (
    RANGES,
    ConfigError,
    FleetConfig,
    ServiceConfig,
    load_config,
)
from tests.fuzz.fuzzing import TIMEOUT_S, fuzz_settings

pytestmark = pytest.mark.timeout(TIMEOUT_S)
ROOT = Path(__file__).resolve().parents[2]
TOP = [f.name for f in dataclasses.fields(ServiceConfig)]
NESTED = {
    "safety": [f.name for f in dataclasses.fields(SafetyConfig)],
    "foxglove": [f.name for f in dataclasses.fields(FoxgloveConfig)],
    "fleet": [f.name for f in dataclasses.fields(FleetConfig)],
}
KEYS = {*TOP, *(f"{k}.{n}" for k, names in NESTED.items() for n in names)}
WHOLE_FILE = ("the config must be a mapping", "cannot read", "not valid YAML")


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """Paths a key may name: special files of every kind, directories, files, nothing."""
    d = tmp_path_factory.mktemp("config-fuzz")
    os.mkfifo(d / "fifo")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(d / "sock"))
    (d / "zero").symlink_to("/dev/zero")
    (d / "file.yaml").write_text("a: 1\n")
    (d / "keys.yaml").write_text("operator: " + "ab" * 32 + "\n")
    (d / "keys.yaml").chmod(0o600)
    yield [
        "/dev/zero", "/dev/null", str(d / "fifo"), str(d / "sock"), str(d / "zero"),
        str(d), str(d / "file.yaml"), str(d / "keys.yaml"), str(d / "missing"),
        str(ROOT / "missions"), "atom-sdk", "grx", "adam-pro", "seed", "sdk-1.1.0", "",
        str(ROOT / "deploy" / "zenoh-grx.json5"),
    ]  # fmt: skip
    sock.close()


NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**20), 10**20),
    st.sampled_from([0, -50, 200, 1e-300, 1e-6, 1e5, 4000, 5, 0.5, 99.9, 100, 3600, 1000]),
)


def values(places: list[str]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        NUMBERS, st.booleans(), st.none(), st.text(max_size=12), st.sampled_from(places)
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(
                st.one_of(st.sampled_from(TOP), st.text(max_size=6)), inner, max_size=3
            ),
        ),
        max_leaves=6,
    )


@st.composite
def config_text(draw: st.DrawFn, places: list[str]) -> str:
    value = values(places)
    data: dict[Any, Any] = draw(
        st.dictionaries(st.one_of(st.sampled_from(TOP), st.text(max_size=8)), value, max_size=6)
    )
    for key, names in NESTED.items():
        if draw(st.booleans()):
            data[key] = draw(st.dictionaries(st.sampled_from(names), value, max_size=4))
    text = yaml.safe_dump(data, allow_unicode=True)
    kind = draw(st.sampled_from(["as is", "as is", "repeat a line", "cut", "garbage"]))
    lines = text.splitlines(keepends=True)
    if kind == "repeat a line" and lines:
        lines.append(draw(st.sampled_from(lines)))
    elif kind == "cut" and lines:
        lines = lines[: draw(st.integers(0, len(lines)))]
    elif kind == "garbage":
        lines.insert(draw(st.integers(0, len(lines))), draw(st.text(max_size=20)) + "\n")
    return "".join(lines)


def _names_a_key(problem: str) -> bool:
    if problem.startswith(WHOLE_FILE):
        return True
    key, sep, _ = problem.partition(": ")
    return bool(sep) and (key in KEYS or "unknown key" in problem or "given twice" in problem)


def _inside_ranges(cfg: ServiceConfig) -> None:
    for key, limits in RANGES.items():
        top, _, sub = key.partition(".")
        value = getattr(getattr(cfg, top), sub) if sub else getattr(cfg, top)
        if value is not None:
            assert math.isfinite(value) and not limits.refuses(value), (key, value)
    s = cfg.safety
    assert s.battery_critical + s.battery_hysteresis < 100


@fuzz_settings(300)
@given(data=st.data())
def test_any_yaml_loads_or_is_refused_naming_a_key(
    places: list[str], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    text = data.draw(config_text(places))
    path = tmp_path_factory.getbasetemp() / "fuzzed-config.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    try:
        cfg = load_config(path)
    except ConfigError as e:
        assert e.problems, text
        for problem in e.problems:
            assert _names_a_key(problem), (problem, text)
        for line in str(e).split("\n"):
            assert line.isprintable() and line.startswith(f"{path}: "), line
        return
    _inside_ranges(cfg)


def test_the_issues_cases_are_refused(places: list[str], tmp_path: Path) -> None:
    """The accepted configs issue 25 reported, each now a refusal naming its key."""
    cases = {
        "safety: {battery_hysteresis: -50}": "safety.battery_hysteresis",
        "safety: {battery_critical: 200}": "safety.battery_critical",
        "tick_hz: 1.0e-300": "tick_hz",
        "stream_hz: 1.0e-6": "stream_hz",
        "stream_hz: 1.0e+5": "stream_hz",
        "tick_hz: 1.0e+5": "tick_hz",
        "profile: /dev/zero": "profile",
        f"keys_file: {places[2]}": "keys_file",
    }
    for text, key in cases.items():
        path = tmp_path / "c.yaml"
        path.write_text(text + "\n")
        with pytest.raises(ConfigError) as err:
            load_config(path)
        assert [p for p in err.value.problems if re.match(rf"{re.escape(key)}: ", p)], text
