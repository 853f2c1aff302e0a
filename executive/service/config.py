"""The service configuration: one YAML file, a default for everything.

Every key has a default, so an empty file (or none) is a valid config. Unknown keys
and bad values stop start-up with a message naming the key (``safety.max_state_age:
must be > 0``): a service engineer should never have to guess which line is wrong.
DDS network settings are not here: they are CycloneDDS's own (``CYCLONEDDS_URI``).
Every problem is one line, control characters shown escaped (``executive.text``): the
file may hold anything, and its keys and values end up on a terminal. ``data_dir`` is
checked at start-up too (``check_data_dir``): a directory the service can write in.

Config is checked as missions are: every number has a range that makes sense (``RANGES``,
each bound saying why), a key given twice is refused naming both lines, and every path
key is looked at before anything opens it: a device, a FIFO or a socket is refused in
one line naming the key (``executive.service.files``: ``profile: /dev/zero`` grew the
service without bound, a FIFO ``keys_file`` hung start-up). Any YAML either loads or is
a ``ConfigError`` whose lines each name a key (``tests/fuzz/test_fuzz_config.py``).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from executive.core.safety import SafetyConfig
from executive.records.mcaprecord import FoxgloveConfig
from executive.seam import registry
from executive.seam.profile import DEFAULT_PROFILE, ProfileError, builtin_profiles, load_profile
from executive.service import files
from executive.text import printable, yaml_problem


class ConfigError(ValueError):
    """A config that must not start the service; ``problems`` name their keys."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        # one line per problem, whatever the file held (a key with a newline or an escape)
        super().__init__("\n".join(printable(f"{source}: {p}") for p in problems))


@dataclass(frozen=True)
class Groot2Config:
    """The opt-in Groot2 publisher (executive/service/groot2.py): BehaviorTree.CPP's
    protocol on ``port`` (REP) and ``port + 1`` (PUB). Off unless the ``groot2`` mapping is
    given; on loopback unless ``bind`` says otherwise (the protocol has no authentication)."""

    port: int = 1667  # Groot2's default; 0 picks a free port (tests)
    bind: str = "127.0.0.1"


@dataclass(frozen=True)
class FleetConfig:
    """The fleet plane (executive/service/fleet.py): this executive's status, events and
    signed requests on zenoh under ``<prefix>/<robot_id>/``, through the routers its zenoh
    config connects to. Off unless the ``fleet`` mapping is given."""

    robot_id: str  # the robot's name on the fleet plane: one key chunk, unique in the fleet
    zenoh_config: str  # a zenoh JSON5 file: mode client, the site router's endpoint
    prefix: str = "fleet"  # the key expression the fleet's robots share


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
    # with no mission (3 s after one): the tree and the watchdog; a request or a latch
    # ticks at once (executive/core/runtime.py)
    idle_tick_hz: float = 10.0
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
    fleet: FleetConfig | None = None  # None: this executive is on no fleet plane
    groot2: Groot2Config | None = None  # None: no Groot2 publisher


@dataclass(frozen=True)
class Range:
    """A number key's accepted values: ``low`` (``> low`` when ``open_low``) to ``high``."""

    low: float
    high: float
    open_low: bool = False
    unit: str = ""

    def refuses(self, value: float) -> bool:
        too_low = value <= self.low if self.open_low else value < self.low
        return too_low or value > self.high

    def __str__(self) -> str:
        low = f"> {self.low:g}" if self.open_low else f">= {self.low:g}"
        return f"{low} and <= {self.high:g}{self.unit}"


RANGES: dict[str, Range] = {
    # the tick loop runs the tree and the safety watchdog: below 5 Hz a period nears the
    # 1 s after which the loop counts as stalled (core.runtime.STALL_S), and a tree ticked
    # that slowly reacts in seconds; above 1 kHz Python cannot keep up
    "tick_hz": Range(5.0, 1000.0, unit=" Hz"),
    # the same bounds with no mission, and at most tick_hz (checked with it)
    "idle_tick_hz": Range(5.0, 1000.0, unit=" Hz"),
    # joint streams: below 10 Hz a stream steps the joints instead of moving them (and the
    # robots' own command timeouts are shorter); a few kHz is what the robots take
    "stream_hz": Range(10.0, 4000.0, unit=" Hz"),
    # the status heartbeat: watch and status clients read silence as a dead service
    "status_hz": Range(0.5, 50.0, unit=" Hz"),
    "dds_retry_s": Range(0.0, 3600.0, open_low=True, unit=" s"),
    # a silence tolerated longer than 5 s is no safety check; 0 would trip at once
    "safety.max_state_age": Range(0.0, 5.0, open_low=True, unit=" s"),
    # percent: a critical level of 100 or more trips at a full battery, and never clears
    "safety.battery_critical": Range(0.0, 100.0, unit=" %"),
    # percent: a negative hysteresis clears the cause below the level that trips it, so it
    # flapped each tick and a reset went through at a critical battery
    "safety.battery_hysteresis": Range(0.0, 100.0, unit=" %"),
}


def _check_number(
    problems: list[str], key: str, value: Any, *, allow_none: bool = False
) -> float | None:
    """Append why ``value`` is not a number in ``RANGES[key]``; the number, or None."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problems.append(f"{key}: must be a number, got {value!r}")
        return None
    if RANGES[key].refuses(value):
        problems.append(f"{key}: must be {RANGES[key]}, got {value:g}")
        return None
    return float(value)


def _check_path(problems: list[str], key: str, value: Any, *, directory: bool = False) -> None:
    """Refuse a path key naming a device, a FIFO or a socket (or a directory where a file
    belongs, a file where a directory does), before anything opens it."""
    if isinstance(value, str) and (what := files.special(value, directory=directory)):
        problems.append(f"{key}: {value} is {what}")


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
    checked = {
        k: _check_number(
            problems,
            f"safety.{k}",
            values[k],
            allow_none=k == "max_state_age",  # null: each source's age from the profile
        )
        for k in ("max_state_age", "battery_critical", "battery_hysteresis")
        if k in values
    }
    critical = checked.get("battery_critical", SafetyConfig.battery_critical)
    hysteresis = checked.get("battery_hysteresis", SafetyConfig.battery_hysteresis)
    if critical is not None and hysteresis is not None and critical + hysteresis >= 100:
        problems.append(  # the cause would clear only above a full battery: never
            f"safety.battery_hysteresis: battery_critical + battery_hysteresis must be "
            f"below 100 %, got {critical:g} + {hysteresis:g}"
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


# a robot id or a prefix chunk: what a zenoh key expression takes verbatim (no wildcard,
# no ``$``, no separator), short enough to read in the fleet view
FLEET_CHUNK = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


def _fleet(raw: Any, problems: list[str]) -> FleetConfig | None:
    """The ``fleet`` mapping: robot_id and zenoh_config required, prefix one or more
    chunks joined by ``/``; each problem names its key."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append("fleet: must be a mapping (robot_id, zenoh_config, prefix)")
        return None
    known = {f.name for f in dataclasses.fields(FleetConfig)}
    before = len(problems)
    problems += [
        f"fleet.{k}: unknown key (known: {', '.join(sorted(known))})" for k in raw if k not in known
    ]
    robot_id = raw.get("robot_id")
    if not isinstance(robot_id, str) or not FLEET_CHUNK.fullmatch(robot_id):
        problems.append(
            "fleet.robot_id: must be a name of letters, digits, '_', '-' or '.' "
            f"(1..64, not starting with '-' or '.'), got {robot_id!r}"
        )
    prefix = raw.get("prefix", FleetConfig.prefix)
    if not isinstance(prefix, str) or not all(
        FLEET_CHUNK.fullmatch(chunk) for chunk in prefix.split("/")
    ):
        problems.append(
            f"fleet.prefix: must be key chunks joined by '/', no wildcards, got {prefix!r}"
        )
    zenoh = raw.get("zenoh_config")
    if not isinstance(zenoh, str) or not Path(zenoh).exists():
        problems.append(
            f"fleet.zenoh_config: must be the path of a zenoh JSON5 file, got {zenoh!r}"
        )
    else:
        _check_path(problems, "fleet.zenoh_config", zenoh)
    if len(problems) > before:
        return None
    return FleetConfig(**raw)


def _groot2(raw: Any, problems: list[str]) -> Groot2Config | None:
    """The ``groot2`` mapping (``{}`` for the defaults); each problem names its key."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append("groot2: must be a mapping (port, bind), e.g. {port: 1667}")
        return None
    known = {f.name for f in dataclasses.fields(Groot2Config)}
    before = len(problems)
    problems += [
        f"groot2.{k}: unknown key (known: {', '.join(sorted(known))})"
        for k in raw
        if k not in known
    ]
    port = raw.get("port", Groot2Config.port)
    # the PUB socket takes port + 1, so the last port is not one
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65534:
        problems.append(
            f"groot2.port: must be an integer 0..65534 (port + 1 is taken too), got {port!r}"
        )
    bind = raw.get("bind", Groot2Config.bind)
    try:
        ipaddress.ip_address(bind if isinstance(bind, str) else "")
    except ValueError:
        problems.append(
            f"groot2.bind: must be an IP address (127.0.0.1: this computer only), got {bind!r}"
        )
    if len(problems) > before:
        return None
    return Groot2Config(**raw)


def _interface(values: dict[str, Any], problems: list[str]) -> None:
    if not isinstance(values.get("interface"), str) or any(
        p.startswith(("profile:", "fsm_ids:")) for p in problems
    ):
        return  # a profile refused (a FIFO, a device) is never opened here either
    try:  # the variants are the robot's: its profile says which robot
        profile = load_profile(str(values.get("profile", DEFAULT_PROFILE)))
    except (ProfileError, ValueError):
        return  # reported under ``profile`` when the service loads it
    if why := registry.check_interface(profile.robot, values["interface"], profile):
        problems.append(f"interface: {why}")


def _idle_rate(values: dict[str, Any], problems: list[str]) -> None:
    """The idle rate is a slower tick, never a faster one (both numbers already checked)."""
    if any(p.startswith(("idle_tick_hz:", "tick_hz:")) for p in problems):
        return
    idle, full = values.get("idle_tick_hz"), values.get("tick_hz", ServiceConfig.tick_hz)
    if idle is not None and idle > full:
        problems.append(f"idle_tick_hz: must be at most tick_hz ({full:g} Hz), got {idle:g}")


def _scalars(values: dict[str, Any], problems: list[str]) -> None:
    for k in ("tick_hz", "idle_tick_hz", "status_hz", "dds_retry_s"):
        if k in values:
            _check_number(problems, k, values[k])
    _idle_rate(values, problems)
    if "stream_hz" in values:
        _check_number(problems, "stream_hz", values["stream_hz"], allow_none=True)
    _paths(values, problems)
    priority = values.get("stream_priority")
    if priority is not None and (
        isinstance(priority, bool) or not isinstance(priority, int) or not 1 <= priority <= 99
    ):
        problems.append(f"stream_priority: must be a SCHED_FIFO priority 1..99, got {priority!r}")
    for k in ("interface", "profile", "missions_dir", "data_dir"):
        if k in values and not isinstance(values[k], str):
            if k == "interface" and values[k] is None:  # its default: the robot's own
                continue
            problems.append(f"{k}: must be a string, got {values[k]!r}")
    if values.get("keys_file") is not None and not isinstance(values["keys_file"], str):
        problems.append("keys_file: must be a path")
    zenoh = values.get("zenoh_config")
    if zenoh is not None and (not isinstance(zenoh, str) or not Path(zenoh).exists()):
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


def _paths(values: dict[str, Any], problems: list[str]) -> None:
    """Every path key: a regular file or a directory as the key wants, never a device, a
    FIFO or a socket (``files.special``); a built-in profile name is no path."""
    profile = values.get("profile")
    if isinstance(profile, str) and profile not in builtin_profiles():
        _check_path(problems, "profile", profile)
    _check_path(problems, "zenoh_config", values.get("zenoh_config"))
    _check_path(problems, "keys_file", values.get("keys_file"))
    _check_path(problems, "missions_dir", values.get("missions_dir"), directory=True)
    _check_path(problems, "data_dir", values.get("data_dir"), directory=True)


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
    sections = ("safety", "foxglove", "fleet", "groot2")
    values = {k: v for k, v in data.items() if k in known and k not in sections}
    safety = _safety(data.get("safety"), problems)
    foxglove = _foxglove(data.get("foxglove"), problems)
    fleet = _fleet(data.get("fleet"), problems)
    groot2 = _groot2(data.get("groot2"), problems)
    _scalars(values, problems)
    if problems:
        raise ConfigError(source, problems)
    return ServiceConfig(**values, safety=safety, foxglove=foxglove, fleet=fleet, groot2=groot2)


def load_config(path: str | Path | None) -> ServiceConfig:
    """Load the config file (None: all defaults)."""
    if path is None:
        return ServiceConfig()
    source = str(path)
    try:
        data = files.load_unique(files.read_text(path))
    except OSError as e:
        raise ConfigError(source, [f"cannot read: {e.strerror}"]) from None
    except ValueError as e:  # files.NotAFileError (a FIFO, a device, too large), a NUL
        raise ConfigError(source, [f"cannot read: {e}"]) from None
    except files.DuplicateKeyError as e:
        raise ConfigError(
            source, [f"{e.key}: given twice (lines {e.first} and {e.line})"]
        ) from None
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
