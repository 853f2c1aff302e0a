"""Simulated joints: one group per command topic, moving toward commanded targets.

The model is deliberately simple but has the properties a controller must cope with: a
joint does not teleport (velocity bounded by the profile's cap times ``speed_scale``,
acceleration bounded), it approaches the target like a PD loop (softer with a lower
kp), and it reports the torque such a loop would produce. Physics advances by the
scheduler's nominal period, not by measured wall time, so a given command sequence gives
the same trajectory on a loaded machine.

Commands are checked as a careful firmware would: a message with a non-finite number, a
q outside the profile's limits, kp <= 0 or kd < 0 is rejected whole and counted, never
partly applied. Whether a *valid* command is obeyed (the Atom's FSM, upper control, e-stop)
is the robot's sim's decision; ignored commands are counted too.
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from executive.seam.profile import RobotProfile

FloatArray = npt.NDArray[np.float64]

# Commands are float32 on the wire: a target clamped to a limit in float64 may round just
# outside it. Anything beyond this is out of range.
LIMIT_TOLERANCE = 1e-5
OMEGA = 20.0  # 1/s: bandwidth of the position loop at the profile's default kp
MAX_ACCEL = 50.0  # rad/s^2
# Closer than this to the target and slower than this, a joint snaps onto the target and
# the group stops integrating (see ``JointGroup.step``).
SETTLE_POSITION = 1e-6  # rad
SETTLE_VELOCITY = 1e-5  # rad/s


class Verdict(enum.Enum):
    APPLIED = "applied"
    IGNORED = "ignored"  # valid, but the robot is not in a state that obeys it
    NON_FINITE = "non_finite"
    OUT_OF_RANGE = "out_of_range"
    BAD_GAINS = "bad_gains"


@dataclass
class Counters:
    """Commands received on one topic, by what became of them.

    A robot's sim subclasses it with one field per way its commands can be refused (the
    field names are the results its record writes), so the status and the record's last
    line count the same things.
    """

    received: int = 0
    applied: int = 0

    def count(self, result: str) -> None:
        self.received += 1
        setattr(self, result, getattr(self, result) + 1)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class StreamCounters(Counters):
    """Joint commands received on one topic, by ``Verdict``."""

    ignored: int = 0
    non_finite: int = 0
    out_of_range: int = 0
    bad_gains: int = 0


COMMAND_FIELDS = ("q", "dq", "tau", "kp", "kd")


def command_floats(motors: Any) -> npt.NDArray[np.float32]:
    """The (n, 5) float32 matrix q, dq, tau, kp, kd of a ``MotorCmd_`` record array.

    On the wire each MotorCmd_ is a uint8 mode, padding and these five float32s, so this
    is a strided view of the received bytes, not a copy; any other layout is gathered.
    """
    dtype = motors.dtype
    fields = dtype.fields
    if dtype.itemsize == 24 and all(
        fields[f][0] == np.float32 and fields[f][1] == 4 + 4 * i
        for i, f in enumerate(COMMAND_FIELDS)
    ):
        view: npt.NDArray[np.float32] = motors.view(np.float32).reshape(-1, 6)[:, 1:]
        return view
    return np.stack([motors[f] for f in COMMAND_FIELDS], axis=1).astype(np.float32)


class JointGroup:
    """The joints of one profile topic (the Atom's ``upper``, the Adam's ``body``) in motor order."""

    def __init__(
        self,
        profile: RobotProfile,
        topic: str,
        rng: np.random.Generator,
        *,
        speed_scale: float = 2.0,
        initial_jitter: float = 0.0,
        noise: float = 0.0,
    ) -> None:
        joints = profile.topic_joints(topic)
        self.topic = topic
        self.names = [j.name for j in joints]
        self.lower, self.upper = profile.limits(topic)
        self.default_kp, self.default_kd = profile.gains(topic)
        self.vmax = speed_scale * np.array([j.max_velocity for j in joints], dtype=np.float64)
        self._rng = rng
        self.noise = noise
        start = np.clip(np.zeros(len(joints)), self.lower, self.upper)
        if initial_jitter > 0:
            start += rng.uniform(-initial_jitter, initial_jitter, len(joints))
        self.q: FloatArray = np.clip(start, self.lower, self.upper)
        self.dq: FloatArray = np.zeros(len(joints))
        self.ddq: FloatArray = np.zeros(len(joints))
        self.tau: FloatArray = np.zeros(len(joints))
        self.target: FloatArray | None = None  # None: hold where it is, no torque
        self.kp: FloatArray = self.default_kp.copy()
        self.kd: FloatArray = self.default_kd.copy()
        # the command's dq and tau (columns), a new array when they change: the firmware's
        # law has them (``simkit.physics``); the kinematic model does not use them
        self.ff: FloatArray = np.zeros((len(joints), 2))
        self.halts = 0  # e-stops so far: ``simkit.physics`` brakes on each
        self._omega: FloatArray = np.full(len(joints), OMEGA)
        self.frozen: npt.NDArray[np.bool_] = np.zeros(len(joints), dtype=bool)
        self._any_frozen = False
        self._neg_vmax = -self.vmax
        self._v = np.zeros(len(joints))  # scratch buffers: no allocation per step
        self._dv = np.zeros(len(joints))
        self.settled = True  # at rest: ``step`` has nothing to do
        self._last_command = b""
        self._last_gains = b""
        # Bounds of a valid command, columns as in ``command_floats``: q within the limits,
        # dq and tau finite, kp > 0, kd >= 0 (float32 max excludes Inf).
        big = np.finfo(np.float32).max
        n = len(joints)
        self._lb = np.empty((n, 5), dtype=np.float32)
        self._ub = np.empty((n, 5), dtype=np.float32)
        self._lb[:, 0] = self.lower - LIMIT_TOLERANCE
        self._ub[:, 0] = self.upper + LIMIT_TOLERANCE
        self._lb[:, 1:3] = -big
        self._lb[:, 3] = np.finfo(np.float32).smallest_subnormal
        self._lb[:, 4] = 0.0
        self._ub[:, 1:] = big

    def check(self, cmd: npt.NDArray[np.float32]) -> Verdict:
        """Whether a command (``command_floats``) is acceptable (APPLIED) or why it is not.

        One vectorised bounds test covers every rule, since NaN and Inf fail it too; only a
        failing command pays for finding out which rule it broke.
        """
        if ((cmd >= self._lb) & (cmd <= self._ub)).all():
            return Verdict.APPLIED
        if not np.isfinite(cmd).all():
            return Verdict.NON_FINITE
        q = cmd[:, 0]
        if (q < self.lower - LIMIT_TOLERANCE).any() or (q > self.upper + LIMIT_TOLERANCE).any():
            return Verdict.OUT_OF_RANGE
        return Verdict.BAD_GAINS

    def command(self, cmd: npt.NDArray[np.float32]) -> None:
        """Make a checked command the target (clipped into the limits it is within)."""
        raw = cmd.tobytes()
        if raw == self._last_command and self.target is not None:
            return  # a repeat: 500 Hz holds cost nothing
        self._last_command = raw
        ff = cmd[:, 1:3].astype(np.float64)
        if not np.array_equal(ff, self.ff):
            self.ff = ff
        target = np.clip(cmd[:, 0].astype(np.float64), self.lower, self.upper)
        if self.target is None or not np.array_equal(target, self.target):
            self.target = target
            self.settled = False
        gains = cmd[:, 3:5].tobytes()
        if gains != self._last_gains:
            self._last_gains = gains
            self.kp = cmd[:, 3].astype(np.float64)
            self.kd = cmd[:, 4].astype(np.float64)
            self._omega = OMEGA * np.clip(np.sqrt(self.kp / self.default_kp), 0.25, 4.0)
            self.settled = False

    def release(self) -> None:
        """Stop following targets: hold the current position, as after losing control."""
        self.target = None
        self._last_command = b""
        self.settled = False

    def halt(self) -> None:
        """Stop dead where it is (an e-stop brakes; it does not decelerate gently)."""
        self.target = None
        self._last_command = b""
        self.halts += 1
        self.dq.fill(0.0)
        self.ddq.fill(0.0)
        self.tau.fill(0.0)
        self.settled = False

    def freeze(self, mask: npt.NDArray[np.bool_]) -> None:
        """Joints in ``mask`` stop (their servo is in error) until unfrozen."""
        if not np.array_equal(mask, self.frozen):
            self.frozen = mask
            self._any_frozen = bool(mask.any())
            self.settled = False

    def step(self, dt: float) -> None:
        """Advance ``dt`` seconds.

        A group at rest on its target (or at rest without one) is *settled* and costs
        nothing until something changes: at 500 Hz on three topics that is most of the
        simulator's time.
        """
        if self.settled:
            return
        q, dq, ddq, tau = self.q, self.dq, self.ddq, self.tau
        v = self._v
        if self.target is None:
            v.fill(0.0)
        else:
            np.subtract(self.target, q, out=v)
            v *= self._omega
            np.minimum(v, self.vmax, out=v)
            np.maximum(v, self._neg_vmax, out=v)
        if self._any_frozen:
            v[self.frozen] = 0.0
        limit = MAX_ACCEL * dt
        dv = self._dv
        np.subtract(v, dq, out=dv)
        np.minimum(dv, limit, out=dv)
        np.maximum(dv, -limit, out=dv)
        # trapezoidal position update: q += (dq + dv / 2) * dt
        np.multiply(dv, 0.5 * dt, out=v)
        v += dq * dt
        q += v
        np.minimum(q, self.upper, out=q)
        np.maximum(q, self.lower, out=q)
        dq += dv
        np.multiply(dv, 1.0 / dt, out=ddq)
        if self.target is None:
            tau.fill(0.0)
            if not dq.any():
                self.settled = True
            return
        err = np.subtract(self.target, q, out=v)
        if self._any_frozen:
            err[self.frozen] = 0.0
        if np.abs(err).max() < SETTLE_POSITION and np.abs(dq).max() < SETTLE_VELOCITY:
            q += err  # snap onto the target (frozen joints: err is 0)
            dq.fill(0.0)
            ddq.fill(0.0)
            self.settled = True
        np.subtract(self.target, q, out=tau)
        tau *= self.kp
        tau -= self.kd * dq

    def measured(self) -> FloatArray:
        """The position as the encoders report it (with seeded noise when configured).

        The array is the group's own when there is no noise: copy it to keep it.
        """
        if self.noise > 0:
            return self.q + self._rng.normal(0.0, self.noise, self.q.shape)
        return self.q
