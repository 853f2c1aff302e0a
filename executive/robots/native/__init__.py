"""The native core: the extension every DDS robot's safety path and stream run on (issues 14, 22).

An e-stop sample used to wait for the GIL: a Python listener, then three Python writes.
A tick holding the GIL (a long call, a collection) delayed every e-stop by as long, and a
hung interpreter held nothing. The extension (``_reflex``: C units behind ``reflex.h``,
which lists them) needs no Python. Robot-neutral: the adapter names its e-stop topic, its
joint streams' writers and what to cancel (the Atom's: ``executive.robots.atom.reflex``);
nothing here knows a robot's wire.

- the reflex (``install``): its own reader on the robot's e-stop topic with a C listener;
  a sample with any flag set, or one it cannot read (short, or an encapsulation a
  ``@final`` type never uses), makes it write the hold of every engaged joint stream and
  then the adapter's cancel (``Cancel``, if any: the Atom's base task), on the executive's
  own writers, and latch (DESIGN.md 4: hold, cancel, then everything else);
- the holds are bytes the motion streamer stores every period (``store_hold``): each
  engaged stream frozen at the measured position, or the hold it is already sending; at
  the trip the reflex puts in a newer measurement if one is waiting in the state reader
  (Python blocked: nothing refreshed the hold, and the arm went on towards its target);
- every joint command passes the gate (``publish``), which refuses one computed before a
  trip the streamer has not seen: nothing that moves leaves after the hold;
- the native stream (``executive.motion.native``): the extension's SCHED_FIFO thread
  samples and writes the streams' plans under the same gate, with a dead man; a robot
  without an e-stop topic (the Adam) gets a gate that only streams (``stream_gate``);
- with the streamer under SCHED_FIFO, CycloneDDS's thread that runs the reflex is put one
  priority above it the first time it calls the reflex (a refusal: one line, and it runs
  as it was);
- Python learns afterwards: ``on_trip`` runs on the reflex's dispatcher thread (or at
  once, when the sample was written from Python in this process) and the executive
  latches SAFE_STOP as it always has; ``reset()`` clears the latch with the executive's.

CycloneDDS delivers a sample to one reader after another on one thread, so a reader
whose Python listener waits for the GIL holds up the reflex's reader behind it (measured:
by the whole 4 s of a GIL-holding call). ``install`` therefore also moves the Python
callbacks of the executive's robot readers off the receive thread (``Core.divert``): they
run at once when the writing thread holds the GIL (a local write from Python, as before),
else on the dispatcher thread ``dds-to-python``.

Any other reader in the process with a Python listener holds the receive thread the same
way (the request server's, a test harness's): ``divert(readers)`` moves those too.

``Gate`` (``executive.motion.gate``) is what the streamer needs of it; ``PythonGate`` is
the stand-in without the extension (plain writes, never tripped). ``install`` returns None,
after one warning, when the extension is not built: the Python fast path
(``executive.core.safety.EstopFastPath``) holds instead, as before.
"""

from __future__ import annotations

import atexit
import os
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import structlog

from executive.motion.gate import Gate
from executive.wire.codec import Codec, DecodeError
from executive.wire.robot_io import RobotIO

log = structlog.get_logger(__name__)

try:
    from executive.robots.native import _reflex
except ImportError as e:  # not built: the Python fast path holds (install says so)
    _reflex = None  # type: ignore[assignment]
    MISSING: str | None = str(e)
else:
    MISSING = None

ENV = "ATOM_EXECUTIVE_REFLEX"  # "off": the Python fast path only (an A/B, or a way out)
DISPATCHER_THREAD = "dds-to-python"  # the kernel name of the thread Python callbacks run on


@dataclass(frozen=True)
class Trip:
    """What tripped the reflex and when (CLOCK_MONOTONIC ns, ``time.monotonic_ns``)."""

    code: str  # "estop" or "undecodable", as the Python fast path names them
    message: str
    sample_ns: int  # the sample taken off the reader
    first_hold_ns: int  # the first hold written (0: no stream was engaged)
    cancel_ns: int  # the cancel written (0: the robot has none)
    held: tuple[str, ...]  # the command keys held, in the order written
    measured: tuple[str, ...]  # of those, held at a measurement newer than the stored hold


@dataclass(frozen=True)
class Cancel:
    """What the reflex writes after the holds (a robot's base task, say): an encoded
    sample, where its id and its timestamp lie (0: nowhere; the reflex stamps both, the
    ids counting up from ``first_id``, the time as ``time.time_ns()``), and on which writer
    (a cyclonedds ``DataWriter``)."""

    writer: Any
    data: bytes
    id_at: int
    stamp_at: int
    first_id: int


@dataclass(frozen=True)
class Measured:
    """Where a stream's measured positions come from, for the reflex to hold at them."""

    state_key: str  # the state topic's key in the robot's ``RobotIO``
    cmd_field: str  # the command's motor array (a struct array with a float32 ``q``)
    state_field: str  # the state's motor array (the same)
    lower: Sequence[float]  # the profile's limits: the reflex clips as the streamer does
    upper: Sequence[float]
    max_age: float  # s: an older state sample is not a measurement


class Streamer(Protocol):
    """The motion streamer, as far as the reflex is concerned."""

    priority: int | None  # its SCHED_FIFO priority; the reflex's threads get one more

    def command_keys(self) -> tuple[str, ...]: ...

    def attach_gate(self, gate: Gate) -> None: ...


class StreamGate:
    """The gate of a robot without an e-stop topic (the Adam): the extension's Core with no
    reader, so the native stream (``executive.motion.native``) has its C side; it never
    trips. Commands go out through the Core's writes, as the reflex's do."""

    def __init__(self, core: _reflex.Core, keys: Sequence[str]) -> None:
        self._core = core
        self._keys = tuple(keys)

    def publish(self, slot: int, data: bytes, seen: int) -> bool:
        rc = self._core.publish(slot, data, seen)
        if rc < 0:
            from cyclonedds.core import DDSException

            raise DDSException(rc, f"write on {self._keys[slot]}")
        return rc == 1

    def store_hold(self, slot: int, data: bytes | None, fresh: bool = False) -> None:
        self._core.store_hold(slot, data, fresh)

    def fired(self, slot: int) -> bytes | None:
        return None

    def tripped(self) -> bool:
        return False

    def trips(self) -> int:
        return 0

    def close(self, *, restore: bool = True) -> None:
        """Stop; with ``restore`` the diverted readers get their Python listeners back."""
        self._core.close(restore=restore)


class Reflex(StreamGate):
    """The installed reflex (``install``); the gate the streamer publishes through, which
    trips."""

    def __init__(
        self, core: _reflex.Core, io: RobotIO, keys: Sequence[str], estop_key: str
    ) -> None:
        super().__init__(core, keys)
        self._estop = io.codec(estop_key)
        self._estop_topic = io.topics[estop_key].name
        self.on_trip: Callable[[Trip], None] | None = None

    # -- the gate (the streamer's thread, holding its lock): publish and store_hold are
    # the StreamGate's; what trips is the reflex's

    def load_hold(self, slot: int) -> bytes | None:
        return self._core.load_hold(slot)

    def fired(self, slot: int) -> bytes | None:
        return self._core.fired(slot)

    def tripped(self) -> bool:
        return bool(self._core.tripped())

    def trips(self) -> int:
        return int(self._core.trips())

    # -- the latch -------------------------------------------------------------------------

    def reset(self) -> None:
        """Clear the trip (with the executive's reset): the streamer may move again."""
        self._core.reset()

    def last_trip(self) -> Trip | None:
        t = self._core.last_trip()
        if t is None:
            return None
        code, message = self._judge(t)
        return Trip(
            code,
            message,
            t["t_sample"],
            t["t_first_hold"],
            t["t_cancel"],
            tuple(k for i, k in enumerate(self._keys) if t["held"] >> i & 1),
            tuple(k for i, k in enumerate(self._keys) if t["measured"] >> i & 1),
        )

    def _judge(self, t: dict[str, Any]) -> tuple[str, str]:
        """The reason as the Python fast path gives it, from the bytes the reflex judged: the
        same codec decides, so a reset is refused for the same cause."""
        try:
            record = self._estop.decode(t["data"])
        except (DecodeError, ValueError) as e:
            return "undecodable", f"{self._estop_topic}: undecodable sample ({e})"
        flags = [n for n in record.dtype.names or () if bool(record[n])]
        if flags:
            return "estop", f"emergency stop: {', '.join(flags)}"
        return "estop", f"emergency stop (reflex: why {t['why']}, detail {t['detail']:#x})"

    def _tripped(self) -> None:
        """From C, after the reflex has written (dispatcher thread, or the writing thread)."""
        trip = self.last_trip()
        if trip is None:
            return
        if self.on_trip is not None:
            self.on_trip(trip)
        log.info(  # after the latch: everything the reflex did is done by now
            "e-stop reflex held",
            reason=trip.message,
            held=list(trip.held),
            at_newer_measurement=list(trip.measured),
            sample_to_hold_us=round((trip.first_hold_ns - trip.sample_ns) / 1e3, 1)
            if trip.first_hold_ns
            else None,
            sample_to_cancel_us=round((trip.cancel_ns - trip.sample_ns) / 1e3, 1)
            if trip.cancel_ns
            else None,
            python_learned_ms=round((time.monotonic_ns() - trip.sample_ns) / 1e6, 3),
        )

    def stats(self) -> dict[str, int]:
        return self._core.stats() or {}


class Diversion:
    """Readers whose Python callbacks no longer run on CycloneDDS's receive thread
    (``divert``): at once when the writing thread holds the GIL, else on a dispatcher."""

    def __init__(self, core: _reflex.Core) -> None:
        self._core = core

    def stats(self) -> dict[str, int]:
        return self._core.stats() or {}

    def close(self, *, restore: bool = True) -> None:
        """Stop; with ``restore`` the readers get their own listeners back."""
        self._core.close(restore=restore)


_live: weakref.WeakSet[Reflex | Diversion | StreamGate] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Before the interpreter goes: no C thread may call into Python after this."""
    for reflex in list(_live):
        reflex.close(restore=False)


def bare_core(stream_writers: Sequence[int] = (), nflags: int = 1) -> _reflex.Core:
    """A core that watches no e-stop topic and cancels nothing: a gate for these writers'
    handles (``stream_writers``), or only the receive-thread diversion. The extension must
    be built (``_reflex`` not None)."""
    assert _reflex is not None, MISSING
    return _reflex.Core(
        participant=0,
        estop_topic=0,
        estop_qos_from=0,
        nflags=nflags,
        stream_writers=list(stream_writers),
        cancel_writer=0,
        cancel=b"",
        cancel_id_at=0,
        cancel_stamp_at=0,
        cancel_id=0,
        on_trip=None,
    )


def _divert(core: _reflex.Core, readers: Iterable[Any], *, python: bool = True) -> None:
    """Divert each reader; ``python`` False: the C listener only stamps arrivals (a
    polled reader has no Python listener, and its no-op default must not cost a wake and
    the GIL per sample)."""
    for reader in readers:
        callback = reader.get_listener().on_data_available if python else None
        core.divert(reader._ref, callback, reader)


def divert(readers: Iterable[Any]) -> Diversion | None:
    """Move the Python ``on_data_available`` of these cyclonedds ``DataReader`` objects off
    the receive thread (None, doing nothing, when the extension is not built)."""
    if _reflex is None:
        return None
    core = bare_core()
    _divert(core, readers)
    diversion = Diversion(core)
    _live.add(diversion)
    return diversion


def available() -> bool:
    """Whether ``install`` can arm the reflex here: the extension is built and not turned
    off (``ATOM_EXECUTIVE_REFLEX=off``). An adapter asks before it opens its readers: the
    e-stop topic the reflex watches in C needs no Python per sample."""
    return _reflex is not None and os.environ.get(ENV, "").strip().lower() != "off"


def install(
    io: RobotIO,
    streamer: Streamer,
    measured: Sequence[Measured],
    on_trip: Callable[[Trip], None],
    *,
    estop_key: str,
    cancel: Cancel | None,
) -> Reflex | None:
    """Arm the reflex on ``io`` (the executive's side) and route ``streamer`` through it.

    ``measured``: where each of the streamer's streams (``command_keys`` order) is measured;
    ``estop_key``: the robot's e-stop topic in ``io`` (its type's fields are the flags);
    ``cancel``: what to write after the holds (None: nothing).

    None when the extension is not built (one warning: the Python fast path holds instead)
    or the robot has no e-stop topic.
    """
    if _reflex is None:
        log.warning(
            "e-stop reflex not built: the Python fast path holds instead, and not while the "
            "interpreter is blocked (pip install -e . builds it)",
            error=MISSING,
        )
        return None
    if os.environ.get(ENV, "").strip().lower() == "off":
        log.warning("e-stop reflex off: the Python fast path holds instead", env=f"{ENV}=off")
        return None
    estop = io.readers.get(estop_key)
    if estop is None:
        log.info("e-stop reflex not armed: this robot has no e-stop topic")
        return None
    keys = streamer.command_keys()
    box: list[weakref.ref[Reflex]] = []

    def tripped() -> None:  # C holds this, not the Reflex: the Reflex can still be collected
        reflex = box[0]() if box else None
        if reflex is not None:
            reflex._tripped()

    # the hold goes first: CycloneDDS's delivering thread above the streamer
    rt = min(streamer.priority + 1, 99) if streamer.priority else 0
    core = _reflex.Core(
        participant=io.participant._ref,
        estop_topic=estop.reader.topic._ref,
        estop_qos_from=estop.reader._ref,
        nflags=io.codec(estop_key).size,
        stream_writers=[io.writers[k]._ref if k in io.writers else 0 for k in keys],
        cancel_writer=cancel.writer._ref if cancel is not None else 0,
        cancel=cancel.data if cancel is not None else b"",
        cancel_id_at=cancel.id_at if cancel is not None else 0,
        cancel_stamp_at=cancel.stamp_at if cancel is not None else 0,
        cancel_id=cancel.first_id if cancel is not None else 0,
        on_trip=tripped,
        rt_priority=rt,
        on_thread=_thread_scheduled,
    )
    reflex = Reflex(core, io, keys, estop_key)
    reflex.on_trip = on_trip
    box.append(weakref.ref(reflex))
    # the e-stop reader first: the dispatcher runs the callbacks in this order
    for key in sorted(io.readers, key=lambda k: k != estop_key):
        latest = io.readers[key]
        _divert(core, [latest.reader], python=not latest.polled)
    for slot, (key, m) in enumerate(zip(keys, measured, strict=True)):
        _measure(core, io, slot, key, m)
    streamer.attach_gate(reflex)
    _live.add(reflex)
    log.info("e-stop reflex armed", streams=list(keys), diverted=sorted(io.readers))
    return reflex


def stream_gate(streamer: Streamer, writers: Sequence[Any]) -> StreamGate | None:
    """Route ``streamer`` through a gate that only streams, on ``writers`` (its streams'
    DDS writers, in ``command_keys`` order): what its native mode runs on where there is
    no reflex. None, after one warning, when the extension is not built."""
    if _reflex is None:
        log.warning(
            "native stream gate not built: the Python streamer runs instead (pip install -e .)",
            error=MISSING,
        )
        return None
    core = bare_core([w._ref for w in writers])
    gate = StreamGate(core, streamer.command_keys())
    streamer.attach_gate(gate)
    _live.add(gate)
    return gate


def _thread_scheduled(name: str, tid: int, priority: int, error: str) -> None:
    """Once per CycloneDDS thread the reflex runs on: what it got, in one line."""
    if not error:
        log.info(
            "e-stop reflex thread scheduling", thread=name, tid=tid, policy=f"SCHED_FIFO {priority}"
        )
    else:
        log.warning(
            "e-stop reflex thread runs at normal priority",
            thread=name,
            tid=tid,
            wanted=f"SCHED_FIFO {priority}",
            reason=f"{error}: give the service LimitRTPRIO={priority} or CAP_SYS_NICE",
        )


def _q_offsets(codec: Codec, field: str) -> list[int] | None:
    """Where each motor's ``q`` lies in an encoded sample (header included), found by
    encoding distinct values: whatever the layout (gathered or not), as C peers write it.
    None if the type is not what the reflex can patch (float32 positions, each once)."""
    record = codec.zeros()
    motors = record[field]
    if motors.dtype.fields is None or motors.dtype.fields["q"][0] != np.dtype("<f4"):
        return None
    values = (1000.25 + 2.0 * np.arange(motors.shape[0])).astype("<f4")
    motors["q"] = values
    wire = codec.encode(record)
    found = []
    for v in values:
        at = wire.find(v.tobytes())
        if at < 0 or wire.find(v.tobytes(), at + 1) >= 0:
            return None
        found.append(at)
    return found


def _measure(core: _reflex.Core, io: RobotIO, slot: int, key: str, m: Measured) -> None:
    """Tell the reflex where stream ``slot``'s newest measurement is (if it can read it)."""
    reader = io.readers.get(m.state_key)
    if reader is None or key not in io.writers:
        return
    state, cmd = io.codec(m.state_key), io.codec(key)
    state_at, cmd_at = _q_offsets(state, m.state_field), _q_offsets(cmd, m.cmd_field)
    if state_at is None or cmd_at is None or len(state_at) != len(cmd_at):
        log.warning("the reflex holds this stream at its stored hold only", stream=key)
        return
    core.measure(
        slot,
        reader.reader._ref,
        m.max_age,
        4 + state.size,
        state_at,
        cmd_at,
        [float(x) for x in m.lower],
        [float(x) for x in m.upper],
    )
