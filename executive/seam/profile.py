"""The robot profile: the robot's body as validated data.

A profile (``executive/robots/profiles/*.yaml``) says which topic and index carries each joint,
its position limits, speed cap and default gains, the FSM ids and the rates. Missions
name joints; only the profile knows indices, so the two upper-body orders the vendor has
published are two profiles, not two code paths.

Loading validates everything and reports every problem at once, each naming its key
(``joints.left_knee.limits: ...``), so a bad profile stops start-up with a message a
service engineer can act on.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from executive.seam import registry
from executive.seam.body import BodySpec, NoBody
from executive.seam.body import parse_spec as parse_body
from executive.seam.registry import RobotSpec

PROFILES_DIR = Path(__file__).resolve().parents[1] / "robots" / "profiles"
DEFAULT_PROFILE = "atom-sdk"

GROUPS = ("legs", "torso", "arms", "head", "hands")
RESTART_SAFE_S = 5.0  # restart_safe_s when a profile gives none
RESTART_SAFE_MAX_S = 60.0
MAX_PAUSE_S = 300.0  # max_pause_s when a profile gives none: five minutes, then the run ends
STREAM_MODES = ("python", "native")  # stream_mode: who samples and writes each period
# stream_deadman_s when a profile gives none: the gap after which the Python thread, too,
# stops and resumes its moves where they were (streamer.SHIFT_AFTER_S)
STREAM_DEADMAN_S = 0.1
_TOP_KEYS = {
    "extends",
    "max_pause_s",
    "stream_mode",
    "stream_deadman_s",
    "robot",
    "capabilities",
    "name",
    "description",
    "motor_mode",
    "rates",
    "velocity_caps",
    "gains",
    "topics",
    "joints",
    "joint_sets",
    "fsm",
    "fsm_joint_control",
    "safety_sources",
    "tags",
    "tolerance",
    "restart_safe_s",
    "body",
    *registry.SPECS,  # the profile's robot's own options, under its name (``grx:``)
}
_JOINT_KEYS = {"group", "limits", "urdf_velocity", "kp", "kd"}


class ProfileError(ValueError):
    """A profile that cannot be used; ``problems`` lists every error, each naming its key."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: " + f"\n{source}: ".join(problems))


@dataclass(frozen=True)
class Joint:
    name: str
    group: str
    topic: str  # the joint stream carrying it (the robot's: "upper", "lower", "hands", "body")
    index: int  # motor index in that stream's command
    lower: float  # rad
    upper: float  # rad
    max_velocity: float  # rad/s, cap for planned motion
    kp: float
    kd: float

    def clamp(self, q: float) -> float:
        return min(max(q, self.lower), self.upper)

    def within(self, q: float, margin: float = 0.0) -> bool:
        return self.lower - margin <= q <= self.upper + margin


@dataclass(frozen=True)
class Tolerance:
    """How close a joint of one stream must come to count as arrived, in the stream's
    units (the profile's ``tolerance:``): the default of a move that gives none, the largest
    a mission may give, and the unit's name for messages."""

    default: float
    max: float
    unit: str


# a stream the profile gives no ``tolerance:`` for: radians (every Atom stream)
RAD_TOLERANCE = Tolerance(default=0.05, max=0.5, unit="rad")


@dataclass(frozen=True)
class FsmState:
    name: str
    id: int
    placeholder: bool


@dataclass(frozen=True)
class RobotProfile:
    name: str
    description: str
    motor_mode: int
    command_hz: float
    state_hz: Mapping[str, float]
    joints: Mapping[str, Joint]
    topics: Mapping[str, tuple[str, ...]]
    joint_sets: Mapping[str, tuple[str, ...]]
    fsm: Mapping[str, FsmState]
    fsm_joint_control: frozenset[str]
    # state topics the safety watchdog reads -> how old each may be (s) before it is silent
    safety_sources: Mapping[str, float]
    # AMR floor tags the robot's map has (None: not known, so not checked). Validation warns
    # about a navigate_to_tag outside it; the simulated Atom's default map is these tags.
    tags: frozenset[int] | None = None
    robot: str = "atom"  # the adapter (executive.seam.registry.SPECS)
    # what this robot can do (the spec's, or fewer where the profile says so)
    capabilities: frozenset[str] = frozenset()
    whole_body: bool = False  # one command carries every motor (executive.seam.registry.RobotSpec)
    # what only this robot's adapter reads: the mapping under the robot's name (``grx:``),
    # checked by the adapter's ``check_options`` when the profile loads
    options: Mapping[str, Any] = field(default_factory=dict)
    # joint stream -> its arrival tolerance (RAD_TOLERANCE for a stream not listed)
    tolerances: Mapping[str, Tolerance] = field(default_factory=dict)
    # after the executive dies mid-motion and starts again: how long (s) from the new
    # instance's start until the robot must be made safe and still (its recovery, the fault
    # matrix's bound). A robot the executive cannot stop (nothing to send) settles within it.
    restart_safe_s: float = RESTART_SAFE_S
    # the vendor's model (executive.seam.body), NoBody where none may be shipped, or None
    body: BodySpec | NoBody | None = None
    # the longest a running mission may stay paused (``atom-executive pause``) before the run
    # ends ABORTED, saying so: the base's own task and the arms' hold are not left for hours
    max_pause_s: float = MAX_PAUSE_S
    # the joint stream's periods in the native extension's thread, or in Python's
    # (executive.motion.native); the native side holds when Python has not renewed its
    # plans for stream_deadman_s
    stream_mode: str = "python"
    stream_deadman_s: float = STREAM_DEADMAN_S

    @property
    def sources(self) -> tuple[str, ...]:
        """The robot's state sources (the adapter's keys)."""
        return registry.spec(self.robot).sources

    def tolerance(self, joint: str) -> Tolerance:
        """The arrival tolerance of ``joint``'s stream, in that stream's units."""
        return self.tolerances.get(self.joints[joint].topic, RAD_TOLERANCE)

    def topic_joints(self, topic: str) -> list[Joint]:
        """The joints on ``topic`` in motor-index order."""
        return [self.joints[n] for n in self.topics[topic]]

    def limits(self, topic: str) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Lower and upper position limits of ``topic``'s motors, as arrays in index order."""
        joints = self.topic_joints(topic)
        return (
            np.array([j.lower for j in joints], dtype=np.float64),
            np.array([j.upper for j in joints], dtype=np.float64),
        )

    def gains(self, topic: str) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Default kp and kd of ``topic``'s motors, as arrays in index order."""
        joints = self.topic_joints(topic)
        return (
            np.array([j.kp for j in joints], dtype=np.float64),
            np.array([j.kd for j in joints], dtype=np.float64),
        )

    def expand(self, names: Iterable[str]) -> list[str]:
        """Joint names from joint names, joint sets, groups or ``all``; order kept, no repeats.

        Raises KeyError naming the first unknown name.
        """
        out: dict[str, None] = {}
        for name in names:
            if name in self.joints:
                out[name] = None
            elif name in self.joint_sets:
                out.update(dict.fromkeys(self.joint_sets[name]))
            elif name in GROUPS:
                out.update(dict.fromkeys(j.name for j in self.joints.values() if j.group == name))
            elif name == "all":
                out.update(dict.fromkeys(self.joints))
            else:
                raise KeyError(name)
        return list(out)

    def fsm_id(self, state: str | int) -> int:
        """The FSM id for a state name or number; KeyError for an unknown name."""
        if isinstance(state, int):
            return state
        return self.fsm[state].id

    def allows_joint_control(self, fsm_id: int) -> bool:
        """Whether the firmware applies joint commands in FSM state ``fsm_id``."""
        return any(self.fsm[n].id == fsm_id for n in self.fsm_joint_control)


def builtin_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))


def _locate(name_or_path: str | Path, relative_to: Path | None = None) -> Path:
    text = str(name_or_path)
    if text in builtin_profiles():
        return PROFILES_DIR / f"{text}.yaml"
    path = Path(text)
    if not path.is_absolute() and relative_to is not None:
        path = relative_to / path
    return path


def _read(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Read a profile file and the one it extends (top-level keys override, topics merge)."""
    if path in chain:
        raise ProfileError(str(path), [f"extends: cycle through {' -> '.join(map(str, chain))}"])
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ProfileError(str(path), [f"cannot read: {e.strerror}"]) from None
    except UnicodeDecodeError as e:
        raise ProfileError(str(path), [f"not UTF-8 text (byte {e.start})"]) from None
    except yaml.YAMLError as e:
        raise ProfileError(str(path), [f"not valid YAML: {e}"]) from None
    if not isinstance(data, dict):
        raise ProfileError(str(path), ["the profile must be a mapping of keys"])
    base_name = data.pop("extends", None)
    if base_name is None:
        return data
    if not isinstance(base_name, str):
        raise ProfileError(str(path), ["extends: must be a profile name or path"])
    base = _read(_locate(base_name, path.parent), (*chain, path))
    topics = {**(base.get("topics") or {}), **(data.get("topics") or {})}
    merged = {**base, **data}
    if topics:
        merged["topics"] = topics
    return merged


def load_profile(
    name_or_path: str | Path = DEFAULT_PROFILE, fsm_overrides: Mapping[str, int] | None = None
) -> RobotProfile:
    """Load and validate a profile by built-in name or path.

    ``fsm_overrides`` (from the service config) replaces or adds FSM ids, which is how a
    deployment confirms the placeholder ids against its firmware.
    """
    path = _locate(name_or_path)
    data = _read(path)
    if fsm_overrides:
        fsm = dict(data.get("fsm") or {})
        for state, state_id in fsm_overrides.items():
            fsm[state] = {"id": state_id, "placeholder": False}
        data["fsm"] = fsm
    return _Validator(str(path)).build(data)


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


class _Validator:
    """Builds a RobotProfile, collecting every problem instead of stopping at the first."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[str] = []
        self.spec: RobotSpec = registry.spec("atom")

    def bad(self, key: str, message: str) -> None:
        self.problems.append(f"{key}: {message}")

    def mapping(self, data: Mapping[str, Any], key: str) -> dict[str, Any]:
        value = data.get(key)
        if not isinstance(value, dict):
            self.bad(key, "missing or not a mapping")
            return {}
        return value

    def number(
        self, value: object, key: str, *, positive: bool = False, minimum: float | None = None
    ) -> float:
        if not _is_number(value):
            self.bad(key, f"must be a finite number, got {value!r}")
            return math.nan
        v = float(value)  # type: ignore[arg-type]
        if positive and v <= 0:
            self.bad(key, f"must be > 0, got {v}")
        if minimum is not None and v < minimum:
            self.bad(key, f"must be >= {minimum}, got {v}")
        return v

    def build(self, data: dict[str, Any]) -> RobotProfile:
        robot = data.get("robot", "atom")
        try:
            self.spec = registry.spec(str(robot))
        except KeyError as e:
            self.bad("robot", str(e.args[0]))
            raise ProfileError(self.source, self.problems) from None
        capabilities = self._capabilities(data.get("capabilities"))
        for key in sorted(set(data) - _TOP_KEYS):
            self.bad(key, f"unknown key (known: {', '.join(sorted(_TOP_KEYS - {'extends'}))})")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            self.bad("name", "missing or not a string")
        # a robot without joint streams describes no joints; one whose streams it only
        # reports (the GRX's user API: measured joints, no joint command) sends no motor
        # mode and has no command rate
        has_joints = bool(self.spec.streams)
        commands_joints = has_joints and bool({"joints", "hands"} & self.spec.capabilities)
        motor_mode = data.get("motor_mode", 0 if not commands_joints else None)
        if (
            not isinstance(motor_mode, int)
            or isinstance(motor_mode, bool)
            or not 0 <= motor_mode <= 255
        ):
            self.bad("motor_mode", f"must be an integer 0..255, got {motor_mode!r}")

        command_hz, state_hz = self._rates(self.mapping(data, "rates"), commands_joints)
        caps = self.mapping(data, "velocity_caps") if has_joints else {}
        gains = self.mapping(data, "gains") if has_joints else {}
        raw_joints = self.mapping(data, "joints") if has_joints else {}
        if has_joints:
            self._per_group(caps, gains, raw_joints)
        topics = self._topics(self.mapping(data, "topics") if has_joints else {})
        joints = self._joints(raw_joints, topics, caps, gains)
        joint_sets = self._joint_sets(data.get("joint_sets") or {}, joints)
        fsm = self._fsm(self.mapping(data, "fsm") if self.spec.fsm_id_max else {})
        joint_control = data.get("fsm_joint_control") or []
        if not isinstance(joint_control, list):
            self.bad("fsm_joint_control", "must be a list of FSM state names")
            joint_control = []
        for i, state in enumerate(joint_control):
            if state not in fsm:
                self.bad(f"fsm_joint_control[{i}]", f"unknown FSM state {state!r}")

        safety_sources = self._safety_sources(data.get("safety_sources"), state_hz)
        tags = self._tags(data.get("tags"))
        options = self._options(data)
        tolerances = self._tolerances(data.get("tolerance"), topics)
        restart_safe_s = self.number(
            data.get("restart_safe_s", RESTART_SAFE_S), "restart_safe_s", positive=True
        )
        if restart_safe_s > RESTART_SAFE_MAX_S:  # a bound nobody would accept on a robot
            self.bad(
                "restart_safe_s", f"must be at most {RESTART_SAFE_MAX_S:g} s, got {restart_safe_s}"
            )
        body = parse_body(data.get("body"), joints, self.bad)
        max_pause_s = self.number(
            data.get("max_pause_s", MAX_PAUSE_S), "max_pause_s", positive=True
        )
        stream_mode = data.get("stream_mode", "python")
        if stream_mode not in STREAM_MODES:
            self.bad(
                "stream_mode", f"must be one of {', '.join(STREAM_MODES)}, got {stream_mode!r}"
            )
        deadman_s = self.number(
            data.get("stream_deadman_s", STREAM_DEADMAN_S), "stream_deadman_s", positive=True
        )

        if self.problems:
            raise ProfileError(self.source, self.problems)
        return RobotProfile(
            name=str(name),
            description=str(data.get("description", "")),
            motor_mode=int(motor_mode),  # type: ignore[arg-type]
            command_hz=command_hz,
            state_hz=state_hz,
            joints=joints,
            topics=topics,
            joint_sets=joint_sets,
            fsm=fsm,
            fsm_joint_control=frozenset(joint_control),
            safety_sources=safety_sources,
            tags=tags,
            options=options,
            tolerances=tolerances,
            restart_safe_s=restart_safe_s,
            robot=self.spec.name,
            capabilities=capabilities,
            whole_body=self.spec.whole_body,
            body=body,
            max_pause_s=max_pause_s,
            stream_mode=str(stream_mode),
            stream_deadman_s=deadman_s,
        )

    def _options(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The robot's own mapping (``grx:``), checked by its adapter; another robot's is
        a mistake (a profile of one robot edited from another's)."""
        robot = self.spec.name
        for other in sorted(set(registry.SPECS) - {robot}):
            if other in data:
                self.bad(other, f"options of robot {other!r} in a profile of robot {robot!r}")
        raw = data.get(robot)
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            self.bad(robot, "must be a mapping of the robot's options")
            return {}
        for problem in registry.check_options(robot, raw, data):
            key, _, message = problem.partition(": ")
            self.bad(f"{robot}.{key}", message)
        return raw

    def _capabilities(self, raw: Any) -> frozenset[str]:
        """The spec's capabilities, or the subset a profile lists (a site without a base)."""
        if raw is None:
            return self.spec.capabilities
        if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
            self.bad("capabilities", "must be a list of capability names")
            return self.spec.capabilities
        for i, c in enumerate(raw):
            if c not in self.spec.capabilities:
                self.bad(
                    f"capabilities[{i}]",
                    f"{self.spec.name} has no {c!r} "
                    f"(it has: {', '.join(sorted(self.spec.capabilities))})",
                )
        return frozenset(raw) & self.spec.capabilities

    def _tags(self, raw: Any) -> frozenset[int] | None:
        """The optional ``tags:`` list: AMR tag ids (uint32 on the wire), each once."""
        if raw is None:
            return None
        if not isinstance(raw, list):
            self.bad("tags", f"must be a list of tag ids, got {raw!r}")
            return None
        seen: set[int] = set()
        for i, tag in enumerate(raw):
            if not isinstance(tag, int) or isinstance(tag, bool) or not 0 <= tag <= 0xFFFFFFFF:
                self.bad(f"tags[{i}]", f"must be a tag id 0..4294967295, got {tag!r}")
            elif tag in seen:
                self.bad(f"tags[{i}]", f"tag {tag} listed twice")
            else:
                seen.add(tag)
        return frozenset(seen)

    def _safety_sources(self, raw: Any, state_hz: Mapping[str, float]) -> dict[str, float]:
        """Every state topic must be listed: a topic the watchdog reads and nobody checks
        for silence is how a silent e-stop topic once went unnoticed (issue 10)."""
        if not isinstance(raw, dict):
            self.bad("safety_sources", "missing or not a mapping of state topic to max age (s)")
            return {}
        out: dict[str, float] = {}
        sources = self.spec.sources
        for topic in sources:
            if topic not in raw:
                self.bad(f"safety_sources.{topic}", "missing")
        for topic, age in raw.items():
            where = f"safety_sources.{topic}"
            if topic not in sources:
                self.bad(where, f"unknown state source (known: {', '.join(sources)})")
                continue
            out[topic] = self.number(age, where, positive=True)
            hz = state_hz.get(topic)
            if hz and out[topic] < 2.0 / hz:
                self.bad(where, f"{out[topic]:g} s is under two periods of {hz:g} Hz")
        return out

    def _rates(self, rates: dict[str, Any], has_joints: bool) -> tuple[float, dict[str, float]]:
        command_hz = (
            self.number(rates.get("command_hz"), "rates.command_hz", positive=True)
            if has_joints or "command_hz" in rates
            else 50.0
        )
        raw = rates.get("state_hz") or {}
        state_hz: dict[str, float] = {}
        if not isinstance(raw, dict):
            self.bad("rates.state_hz", "must be a mapping of topic to Hz")
            raw = {}
        sources = self.spec.sources
        for topic in sources:
            if topic not in raw:
                self.bad(f"rates.state_hz.{topic}", "missing")
        for topic, hz in raw.items():
            if topic not in sources:
                self.bad(
                    f"rates.state_hz.{topic}",
                    f"unknown state source (known: {', '.join(sources)})",
                )
            else:
                state_hz[topic] = self.number(hz, f"rates.state_hz.{topic}", positive=True)
        return command_hz, state_hz

    def _per_group(
        self, caps: dict[str, Any], gains: dict[str, Any], joints: Mapping[str, Any]
    ) -> None:
        """Caps and gains for every group a joint of the profile is in (a robot may have
        no hands: the GR-1)."""
        used = {j.get("group") for j in joints.values() if isinstance(j, dict)}
        for group in (g for g in GROUPS if g in used):
            if group not in caps:
                self.bad(f"velocity_caps.{group}", "missing")
            if not isinstance(gains.get(group), dict):
                self.bad(f"gains.{group}", "missing or not a mapping with kp and kd")
        for group in sorted(set(caps) - set(GROUPS)):
            self.bad(f"velocity_caps.{group}", f"unknown group (known: {', '.join(GROUPS)})")
        for group in sorted(set(gains) - set(GROUPS)):
            self.bad(f"gains.{group}", f"unknown group (known: {', '.join(GROUPS)})")

    def _tolerances(self, raw: object, topics: Mapping[str, Any]) -> dict[str, Tolerance]:
        """``tolerance: {stream: {default: x, max: y, unit: name}}``, in the stream's units."""
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            self.bad("tolerance", "must be a mapping of joint stream -> {default, max, unit}")
            return {}
        out: dict[str, Tolerance] = {}
        for stream, entry in raw.items():
            key = f"tolerance.{stream}"
            if stream not in self.spec.streams:
                known = ", ".join(self.spec.streams) or "none"
                self.bad(key, f"unknown joint stream (known: {known})")
                continue
            if not isinstance(entry, dict) or set(entry) != {"default", "max", "unit"}:
                self.bad(key, f"must be {{default: x, max: y, unit: name}}, got {entry!r}")
                continue
            default = self.number(entry["default"], f"{key}.default", positive=True)
            top = self.number(entry["max"], f"{key}.max", positive=True)
            unit = entry["unit"]
            if not isinstance(unit, str) or not unit:
                self.bad(f"{key}.unit", f"must be the name of the stream's unit, got {unit!r}")
                continue
            if default > top:
                self.bad(f"{key}.default", f"{default:g} is above max ({top:g})")
            out[str(stream)] = Tolerance(default, top, unit)
        return out

    def _topics(self, raw: dict[str, Any]) -> dict[str, tuple[str, ...]]:
        topics: dict[str, tuple[str, ...]] = {}
        streams = self.spec.streams
        for topic, size in streams.items():
            names = raw.get(topic)
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                self.bad(f"topics.{topic}", "missing or not a list of joint names")
                continue
            if size is not None and len(names) != size:
                self.bad(f"topics.{topic}", f"has {len(names)} joints, the wire carries {size}")
            if not names:
                self.bad(f"topics.{topic}", "lists no joint")
            seen: set[str] = set()
            for i, n in enumerate(names):
                if n in seen:
                    self.bad(f"topics.{topic}[{i}]", f"{n!r} listed twice")
                seen.add(n)
            topics[topic] = tuple(names)
        for topic in sorted(set(raw) - set(streams)):
            self.bad(f"topics.{topic}", f"unknown joint stream (known: {', '.join(streams)})")
        return topics

    def _joints(
        self,
        raw: dict[str, Any],
        topics: dict[str, tuple[str, ...]],
        caps: dict[str, Any],
        gains: dict[str, Any],
    ) -> dict[str, Joint]:
        where = {n: (t, i) for t, names in topics.items() for i, n in enumerate(names)}
        for topic, names in topics.items():
            for i, n in enumerate(names):
                if n not in raw:
                    self.bad(f"topics.{topic}[{i}]", f"{n!r} is not in joints")
        joints: dict[str, Joint] = {}
        for name, spec in raw.items():
            key = f"joints.{name}"
            if not isinstance(spec, dict):
                self.bad(key, "must be a mapping")
                continue
            for extra in sorted(set(spec) - _JOINT_KEYS):
                self.bad(f"{key}.{extra}", f"unknown key (known: {', '.join(sorted(_JOINT_KEYS))})")
            group = spec.get("group")
            if group not in GROUPS:
                self.bad(f"{key}.group", f"must be one of {', '.join(GROUPS)}, got {group!r}")
                continue
            limits = spec.get("limits")
            if not (
                isinstance(limits, list) and len(limits) == 2 and all(_is_number(v) for v in limits)
            ):
                self.bad(f"{key}.limits", f"must be [lower, upper] in rad, got {limits!r}")
                continue
            lo, hi = float(limits[0]), float(limits[1])
            if lo >= hi:
                self.bad(f"{key}.limits", f"lower {lo} is not below upper {hi}")
            cap = caps.get(group)
            cap_v = (
                self.number(cap, f"velocity_caps.{group}", positive=True)
                if cap is not None
                else math.nan
            )
            if "urdf_velocity" in spec:
                urdf_v = self.number(spec["urdf_velocity"], f"{key}.urdf_velocity", positive=True)
                cap_v = min(cap_v, urdf_v)
            group_gains = gains.get(group)
            g: dict[str, Any] = group_gains if isinstance(group_gains, dict) else {}
            kp = self.number(
                spec.get("kp", g.get("kp")),
                f"{key}.kp" if "kp" in spec else f"gains.{group}.kp",
                positive=True,
            )
            kd = self.number(
                spec.get("kd", g.get("kd")),
                f"{key}.kd" if "kd" in spec else f"gains.{group}.kd",
                minimum=0.0,
            )
            if name not in where:
                self.bad(
                    key,
                    "is on no joint stream (add it to "
                    + " or ".join(f"topics.{t}" for t in self.spec.streams)
                    + ")",
                )
                continue
            topic, index = where[name]
            joints[name] = Joint(name, group, topic, index, lo, hi, cap_v, kp, kd)
        return joints

    def _joint_sets(self, raw: object, joints: dict[str, Joint]) -> dict[str, tuple[str, ...]]:
        if not isinstance(raw, dict):
            self.bad("joint_sets", "must be a mapping of name to joint list")
            return {}
        sets: dict[str, tuple[str, ...]] = {}
        for set_name, names in raw.items():
            if set_name in joints or set_name in GROUPS or set_name == "all":
                self.bad(f"joint_sets.{set_name}", "name clashes with a joint, a group or 'all'")
            if not isinstance(names, list) or not names:
                self.bad(f"joint_sets.{set_name}", "must be a non-empty list of joint names")
                continue
            for i, n in enumerate(names):
                if n not in joints:
                    self.bad(f"joint_sets.{set_name}[{i}]", f"unknown joint {n!r}")
            sets[set_name] = tuple(names)
        return sets

    def _fsm(self, raw: dict[str, Any]) -> dict[str, FsmState]:
        fsm: dict[str, FsmState] = {}
        ids: dict[int, str] = {}
        for name, spec in raw.items():
            key = f"fsm.{name}"
            if not isinstance(spec, dict):
                self.bad(key, "must be a mapping with id (and placeholder)")
                continue
            state_id = spec.get("id")
            top = self.spec.fsm_id_max
            if (
                not isinstance(state_id, int)
                or isinstance(state_id, bool)
                or not 0 <= state_id <= top
            ):
                self.bad(
                    f"{key}.id", f"must be an integer 0..{top} on this robot, got {state_id!r}"
                )
                continue
            if state_id in ids:
                self.bad(f"{key}.id", f"{state_id} is also the id of {ids[state_id]!r}")
            ids[state_id] = name
            fsm[name] = FsmState(name, state_id, bool(spec.get("placeholder", False)))
        return fsm
