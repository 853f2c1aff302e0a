"""DomainParticipant creation and the QoS profiles every robot topic uses.

There is no global participant: whoever needs DDS creates one here and passes it down
(the service, the simulated Atom, a test, the CLI), so two participants in one test
process can talk to each other and a participant's lifetime is explicit.

Network settings are CycloneDDS's own (``CYCLONEDDS_URI``); this module only chooses the
domain id: ``ATOM_DDS_DOMAIN`` when set, else 0, so test runs can each take their own.

Every participant made here says when it was created, in its USER_DATA QoS
(``atom-executive started_ns=<wall clock ns>``): discovery carries host and pid
(CycloneDDS's ``__Hostname`` and ``__Pid`` properties) but no time, and two executives on
one domain must agree on which was there first (executive/service/peers.py). It is set at
creation so the very first discovery message carries it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from cyclonedds.core import DDSException, Entity, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.util import duration

from executive.wire.loop import LoopReader, LoopWriter


def _log() -> Any:
    """This module's logger, structlog imported only when there is something to say (a
    retry): a CLI that reads the status never does, and structlog with its dependencies
    (rich, asyncio) is a fifth of its start-up (issue 22, 3)."""
    import structlog

    return structlog.get_logger(__name__)


DOMAIN_ENV = "ATOM_DDS_DOMAIN"
MAX_DOMAIN_ID = 232  # the highest id whose RTPS ports (7400 + 250 * id + ...) fit in 16 bits
STARTED_PREFIX = b"atom-executive started_ns="  # USER_DATA of every participant made here


def domain_id_from_env(default: int = 0) -> int:
    """The DDS domain id from ``ATOM_DDS_DOMAIN``; a bad value is an error naming the variable."""
    raw = os.environ.get(DOMAIN_ENV)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{DOMAIN_ENV}={raw!r} is not an integer domain id") from None
    if not 0 <= value <= MAX_DOMAIN_ID:
        raise ValueError(f"{DOMAIN_ENV}={value} is outside 0..{MAX_DOMAIN_ID}")
    return value


class DomainLease:
    """A DDS domain id held exclusively by this process until ``release()``.

    Concurrent test runs, demos and benchmarks on one machine must never share a domain
    (one run's injected e-stop would land in another's mission). A lease is an advisory
    lock on a file named after the domain in the temp folder: whoever holds it owns the
    domain; the kernel drops it if the process dies.
    """

    def __init__(self, domain: int, fd: int) -> None:
        self.domain = domain
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def lease_domain(first: int = 1, last: int = MAX_DOMAIN_ID) -> DomainLease:
    """Lease a free domain in first..last, starting the search at a random point."""
    span = last - first + 1
    start = random.SystemRandom().randrange(span)
    for i in range(span):
        domain = first + (start + i) % span
        path = os.path.join(tempfile.gettempdir(), f"atom-executive-dds-domain-{domain}.lock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return DomainLease(domain, fd)
    raise RuntimeError(f"every DDS domain in {first}..{last} is leased by another process")


def make_participant(
    domain_id: int | None = None, *, retry_for: float = 0.0, retry_every: float = 0.5
) -> DomainParticipant:
    """Create a participant, retrying for ``retry_for`` seconds.

    At boot the network may not be up when the service starts; CycloneDDS then fails to
    create the domain. Retrying here (rather than letting systemd restart us in a loop)
    keeps the start-up a single, logged wait.
    """
    did = domain_id_from_env() if domain_id is None else domain_id
    deadline = time.monotonic() + retry_for
    attempts = 0
    while True:
        try:
            participant = DomainParticipant(did, qos=participant_qos())
        except DDSException as e:
            if time.monotonic() >= deadline:
                raise
            if attempts == 0:
                _log().warning(
                    "DDS is not up yet; retrying", domain=did, error=str(e), for_s=retry_for
                )
            attempts += 1
            time.sleep(retry_every)
        else:
            if attempts:
                _log().info("DDS is up", domain=did, retries=attempts)
            return participant


def participant_qos(started_ns: int | None = None) -> Qos:
    """USER_DATA saying when the participant was created (see the module's docstring)."""
    stamp = time.time_ns() if started_ns is None else started_ns
    return Qos(Policy.Userdata(STARTED_PREFIX + str(stamp).encode()))


def close_participant(participant: DomainParticipant) -> None:
    """Delete the participant and every entity it owns, now.

    Always call this (or use ``open_participant``) before the process exits: if
    cyclonedds-python deletes a participant whose readers have listeners during
    interpreter shutdown, the listener thread waits for the GIL forever and the process
    hangs (seen with 0.10.2).
    """
    participant.__del__()


def delete_entities(entities: Iterable[Entity | LoopReader | LoopWriter]) -> None:
    """Detach the entities' listeners, then delete the entities, now. Idempotent. (An
    entity of the in-process wire, ``executive.wire.loop``, is closed.)

    In that order: CycloneDDS's delete closes an entity's handle *before* it waits for a
    callback in flight, so a callback racing the delete would read a closed handle; setting
    the listener waits for callbacks in flight and stops new ones. The old listener is kept
    until then: its ctypes callbacks must outlive any call into them.

    Never leave a reader with a listener to the garbage collector: cyclonedds-python 0.10.2
    deletes an entity in ``__del__`` only if its own weak registry still holds it, and the
    collector clears weak references before it runs ``__del__`` on a reference cycle. The
    reader then stays alive in C, its listener's callbacks are freed, and the next sample
    crashes the process on the receive thread (measured: 3 of 3 runs of
    ``tests/wire/test_reader_lifetime.py``'s loop without this).
    """
    ours: list[Entity] = []
    for entity in entities:
        if isinstance(entity, LoopReader):
            entity.close()
        elif not isinstance(entity, LoopWriter):
            ours.append(entity)
    if not ours:
        return
    if _on_a_dds_thread():
        # A listener's thread (a finalizer run there: its LatestReader's last reference
        # went with the callback's). Setting a listener waits for the callbacks in flight,
        # this one among them: it would wait for itself, and every thread deleting on this
        # participant with it (measured: a test worker hung in dds_delete). Deleted once
        # this callback has returned, from a thread of our own.
        threading.Thread(target=_delete_now, args=(ours,), name="dds-delete", daemon=True).start()
        return
    _delete_now(ours)


_listening = threading.local()


@contextmanager
def in_listener() -> Iterator[None]:
    """Marks a listener callback of ours: CycloneDDS runs one on its own thread or, for a
    writer in this process, on the writing thread, and a deletion inside must wait."""
    _listening.depth = getattr(_listening, "depth", 0) + 1
    try:
        yield
    finally:
        _listening.depth -= 1


def _on_a_dds_thread() -> bool:
    """Whether this thread is inside a listener callback: CycloneDDS's own thread (Python
    knows it only as a dummy) or one of ours marked by ``in_listener``."""
    return getattr(_listening, "depth", 0) > 0 or isinstance(
        threading.current_thread(), threading._DummyThread
    )


def _delete_now(entities: list[Entity]) -> None:
    for entity in entities:
        old = getattr(entity, "_listener", None)  # kept alive across set_listener(None)
        with contextlib.suppress(DDSException):  # already deleted, e.g. with its participant
            entity.set_listener(None)
        del old
    for entity in entities:
        with contextlib.suppress(DDSException):
            entity.__del__()  # dds_delete now; a later garbage collection does nothing


@contextmanager
def open_participant(
    domain_id: int | None = None, *, retry_for: float = 0.0
) -> Iterator[DomainParticipant]:
    """A participant that is deleted when the block ends, however it ends."""
    participant = make_participant(domain_id, retry_for=retry_for)
    try:
        yield participant
    finally:
        close_participant(participant)


# QoS, chosen to match whatever the firmware uses without knowing it:
# - A best-effort reader matches both best-effort and reliable writers, and for
#   high-rate state only the newest sample matters, so state readers are best-effort
#   with a history of one.
# - A reliable writer matches both kinds of reader. Commands are written reliably so a
#   one-shot command (FSM switch, AMR task, cancel) is not lost to a dropped packet;
#   keep-last bounds the queue so a slow reader can never block the motion streamer.
# - Readers accept both data representations a conforming peer may write for our @final
#   types (XCDR1, what CycloneDDS 0.10 C and stock Python write, and plain XCDR2), and the
#   codec decodes both in either byte order (executive.wire.codec; idl/README.md).
ACCEPTED_REPRESENTATIONS = Policy.DataRepresentation(
    use_cdrv0_representation=True, use_xcdrv2_representation=True
)
STATE_READER_QOS = Qos(
    Policy.Reliability.BestEffort,
    Policy.History.KeepLast(1),
    Policy.Durability.Volatile,
    ACCEPTED_REPRESENTATIONS,
)
STATE_WRITER_QOS = Qos(
    Policy.Reliability.BestEffort,
    Policy.History.KeepLast(1),
    Policy.Durability.Volatile,
)
STREAM_WRITER_QOS = Qos(  # 500 Hz joint commands: the next one supersedes a lost one
    Policy.Reliability.Reliable(duration(milliseconds=10)),
    Policy.History.KeepLast(1),
    Policy.Durability.Volatile,
)
EVENT_WRITER_QOS = Qos(  # one-shot commands: FSM, upper control, AMR, clear errors
    Policy.Reliability.Reliable(duration(milliseconds=100)),
    Policy.History.KeepLast(16),
    Policy.Durability.Volatile,
)
EVENT_READER_QOS = Qos(
    Policy.Reliability.Reliable(duration(milliseconds=100)),
    Policy.History.KeepLast(64),
    Policy.Durability.Volatile,
    ACCEPTED_REPRESENTATIONS,
)
