"""The service configuration: one YAML file, a default for everything.

Every key has a default, so an empty file (or none) is a valid config. Unknown keys
and bad values stop start-up with a message naming the key (``safety.max_state_age:
must be > 0``): a service engineer should never have to guess which line is wrong.
DDS network settings are not here: they are CycloneDDS's own (``CYCLONEDDS_URI``).
Every problem is one line, control characters shown escaped (``executive.text``): the
file may hold anything, and its keys and values end up on a terminal. ``data_dir`` is
checked at start-up too (``check_data_dir``): a directory the service can write in.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from executive import robots
from executive.core.safety import SafetyConfig
from executive.robots.profile import DEFAULT_PROFILE, ProfileError, load_profile
from executive.text import printable, yaml_problem


class ConfigError(ValueError):
    """A config that must not start the service; ``problems`` name their keys."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        # one line per problem, whatever the file held (a key with a newline or an escape)
        super().__init__("\n".join(printable(f"{source}: {p}") for p in problems))


@dataclass(frozen=True)
class FoxgloveConfig:
    """The opt-in live view (executive.records.foxglove_live): off, and on loopback when on."""

    enabled: bool = False
    host: str = "127.0.0.1"  # the view is unauthenticated: another address is a choice
    port: int = 8765  # Foxglove's default; 0 picks a free port (tests)


@dataclass(frozen=True)
class ServiceConfig:
    # the robot's wire variant (the Atom: preset[+axis=choice...]); None: the robot's default
    interface: str | None = None
    # a standard zenoh JSON5 config file, for a robot spoken to over zenoh (the GRX): its
    # endpoints, authentication and scouting, as CYCLONEDDS_URI configures DDS
    zenoh_config: str | None = None
    profile: str = "atom-sdk"  # built-in profile name or a path
    fsm_ids: dict[str, int] = field(default_factory=dict)  # confirm/override the profile's FSM ids
    domain: int | None = None  # DDS domain; None: ATOM_DDS_DOMAIN or 0
    tick_hz: float = 50.0
    stream_hz: float | None = None  # None: the profile's command rate
    # SCHED_FIFO 1..99 for the streamer thread; None: normal scheduling. On by default: where
    # the unit's LimitRTPRIO (or CAP_SYS_NICE) refuses it the streamer says so in one line
    # and runs at normal priority (executive/motion/realtime.py)
    stream_priority: int | None = 80
    missions_dir: str = "missions"
    data_dir: str = "/var/lib/atom-executive"
    status_hz: float = 2.0  # heartbeat of the status topic
    dds_retry_s: float = 60.0  # how long to wait for DDS at boot
    keys_file: str | None = None  # per-client HMAC keys for commands
    # found at start-up: upper-body control on and a base task running that no instance of
    # ours owns (a previous one was killed). "release": switch control off and cancel the
    # task (the robot's own controller takes over; nothing is left driven by nobody);
    # "report": leave both, say so in the log and the status
    previous_control: str = "release"
    safety: SafetyConfig = field(default_factory=SafetyConfig)
    foxglove: FoxgloveConfig = field(default_factory=FoxgloveConfig)


def _check_number(
    problems: list[str], key: str, value: Any, *, positive: bool = True, allow_none: bool = False
) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.append(f"{key}: must be a number, got {value!r}")
    elif positive and value <= 0:
        problems.append(f"{key}: must be > 0, got {value}")


def _safety(raw: Any, problems: list[str]) -> SafetyConfig:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        problems.append("safety: must be a mapping")
        return SafetyConfig()
    known = {f.name for f in dataclasses.fields(SafetyConfig)}
    for k in raw:
        if k not in known:
            problems.append(f"safety.{k}: unknown key (known: {', '.join(sorted(known))})")
    values = {k: v for k, v in raw.items() if k in known}
    for k in ("max_state_age", "battery_critical", "battery_hysteresis"):
        if k in values:
            _check_number(
                problems,
                f"safety.{k}",
                values[k],
                positive=k != "battery_hysteresis",
                allow_none=k == "max_state_age",  # null: each source's age from the profile
            )
    if "servo_errors" in values and not isinstance(values["servo_errors"], bool):
        problems.append("safety.servo_errors: must be true or false")
    return SafetyConfig(**values) if not problems else SafetyConfig()


def _foxglove(raw: Any, problems: list[str]) -> FoxgloveConfig:
    if raw is None:
        return FoxgloveConfig()
    if not isinstance(raw, dict):
        problems.append("foxglove: must be a mapping (enabled, host, port)")
        return FoxgloveConfig()
    known = {f.name for f in dataclasses.fields(FoxgloveConfig)}
    before = len(problems)
    problems += [
        f"foxglove.{k}: unknown key (known: {', '.join(sorted(known))})"
        for k in raw
        if k not in known
    ]
    if not isinstance(raw.get("enabled", False), bool):
        problems.append(f"foxglove.enabled: must be true or false, got {raw['enabled']!r}")
    if not isinstance(raw.get("host", ""), str) or raw.get("host") == "":
        problems.append(f"foxglove.host: must be an address, got {raw['host']!r}")
    port = raw.get("port", 0)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        problems.append(f"foxglove.port: must be an integer 0..65535, got {port!r}")
    if len(problems) > before:
        return FoxgloveConfig()
    return FoxgloveConfig(**raw)


def _interface(values: dict[str, Any], problems: list[str]) -> None:
    if not isinstance(values.get("interface"), str):
        return
    try:  # the variants are the robot's: its profile says which robot
        profile = load_profile(str(values.get("profile", DEFAULT_PROFILE)))
    except (ProfileError, ValueError):
        return  # reported under ``profile`` when the service loads it
    if why := robots.check_interface(profile.robot, values["interface"], profile):
        problems.append(f"interface: {why}")


def _scalars(values: dict[str, Any], problems: list[str]) -> None:
    for k in ("tick_hz", "status_hz", "dds_retry_s"):
        if k in values:
            _check_number(problems, k, values[k])
    if "stream_hz" in values:
        _check_number(problems, "stream_hz", values["stream_hz"], allow_none=True)
    priority = values.get("stream_priority")
    if priority is not None and (
        isinstance(priority, bool) or not isinstance(priority, int) or not 1 <= priority <= 99
    ):
        problems.append(f"stream_priority: must be a SCHED_FIFO priority 1..99, got {priority!r}")
    for k in ("interface", "profile", "missions_dir", "data_dir"):
        if k in values and not isinstance(values[k], str):
            problems.append(f"{k}: must be a string, got {values[k]!r}")
    if values.get("keys_file") is not None and not isinstance(values["keys_file"], str):
        problems.append("keys_file: must be a path")
    zenoh = values.get("zenoh_config")
    if zenoh is not None and (not isinstance(zenoh, str) or not Path(zenoh).is_file()):
        problems.append(f"zenoh_config: must be the path of a zenoh JSON5 file, got {zenoh!r}")
    if values.get("previous_control", "release") not in ("release", "report"):
        problems.append(
            f"previous_control: must be release or report, got {values['previous_control']!r}"
        )
    domain = values.get("domain")
    if domain is not None and (
        isinstance(domain, bool) or not isinstance(domain, int) or not 0 <= domain <= 232
    ):
        problems.append(f"domain: must be an integer 0..232, got {domain!r}")
    fsm = values.get("fsm_ids", {})
    if not isinstance(fsm, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 65535
        for k, v in fsm.items()
    ):
        problems.append("fsm_ids: must map FSM state names to integers 0..65535")
    _interface(values, problems)


def parse_config(data: Any, source: str = "<config>") -> ServiceConfig:
    """Validate a loaded YAML document into a ServiceConfig, reporting every problem."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(source, ["the config must be a mapping of keys"])
    problems: list[str] = []
    known = {f.name for f in dataclasses.fields(ServiceConfig)}
    problems += [
        f"{k}: unknown key (known: {', '.join(sorted(known))})" for k in data if k not in known
    ]
    values = {k: v for k, v in data.items() if k in known and k not in ("safety", "foxglove")}
    safety = _safety(data.get("safety"), problems)
    foxglove = _foxglove(data.get("foxglove"), problems)
    _scalars(values, problems)
    if problems:
        raise ConfigError(source, problems)
    return ServiceConfig(**values, safety=safety, foxglove=foxglove)


def load_config(path: str | Path | None) -> ServiceConfig:
    """Load the config file (None: all defaults)."""
    if path is None:
        return ServiceConfig()
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except OSError as e:
        raise ConfigError(source, [f"cannot read: {e.strerror}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(source, ["not UTF-8 text"]) from None
    except yaml.YAMLError as e:
        raise ConfigError(source, [f"not valid YAML: {yaml_problem(e)}"]) from None
    except RecursionError:  # "[[[[...": nested deeper than the parser goes
        raise ConfigError(source, ["not valid YAML: nested too deeply"]) from None
    return parse_config(data, source)


def check_data_dir(data_dir: str, source: str = "config") -> None:
    """Raise ConfigError naming ``data_dir`` unless the service can write its run records
    there (``<data_dir>/runs``), creating the directories if they are missing.

    Checked at start-up, before DDS and READY=1: found later, the same problem was a
    traceback out of the run recorder, after systemd had been told the service was up.
    Writability is tried, not inferred from the mode bits (root, ACLs, read-only mounts).
    """
    path = Path(data_dir)
    problem = _unwritable(path) or _unwritable(path / "runs")
    if problem is not None:
        raise ConfigError(source, [f"data_dir: {problem}"])


def _unwritable(path: Path) -> str | None:
    """Why the service cannot write files in ``path`` (made if missing), or None."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return f"{path} is not a directory"
    except OSError as e:
        return f"{path}: cannot create it: {e.strerror or e}"
    if not path.is_dir():
        return f"{path} is not a directory"
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".write-check-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return f"{path}: cannot write in it: {e.strerror or e}"
    return None
