"""Every run as an MCAP file Foxglove opens: ``<data_dir>/runs/<run_id>.mcap``.

Beside the JSON-lines run record (``executive.records.runrecord``), which tells what the tree
did, the MCAP file holds what the robot did and what it was told: the channels of
``executive.records.runchannels`` (measured joints, status, e-stop inputs, base and state
sources from the robot-neutral snapshot, so every robot's runs are recorded; every joint
target and one-shot command; the tree on change; events), each JSON with its JSON
Schema, so a user opens the file in Foxglove and scrubs the run, or reads it with the
``mcap`` library (``atom-executive timeline`` does).

A file spans the run plus ``PREROLL_S`` before its start (the robot as the run found it)
and ``TAIL_S`` after its end (an e-stop's hold settling, the base stopping). A new run
that starts within the tail ends the previous file there. Every channel is registered
when the file opens, so each file lists all of them, whether or not they carried
messages. The file's ``run`` metadata names the run, the mission, the profile and the
version; the ``result`` metadata, written at the end, the result and reason. A channel's
``static`` message (the robot's model) is the file's first message, stamped at its start.

Like ``RunRecorder``: no file I/O happens on the thread that calls ``begin``/``write``/
``end`` (the encoder thread of ``RunChannels``): they queue, bounded, and a writer thread
writes. A failing write (a full disk, a data dir gone read-only) or an item dropped
because the queue is full is counted, logged at most every 10 s, and reported through
``problems()``; the run goes on, and the next run tries a new file. A file the service
could not finish (it was killed) holds every chunk written before the kill; chunks are
small (``CHUNK_BYTES``) and flushed at least every ``FLUSH_S``, so little is lost, and
``executive.operator.timeline`` reads such a file as far as it goes.
"""

from __future__ import annotations

import collections
import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import structlog
from mcap.writer import CompressionType, Writer

from executive import __version__
from executive.core.tree import Executive
from executive.records import heap
from executive.records.batches import Batches
from executive.records.runchannels import (
    Channel,
    Message,
    RunChannels,
    Sink,
    catalogue,
)
from executive.seam.profile import RobotProfile

log = structlog.get_logger(__name__)

PREROLL_S = 1.0
TAIL_S = 2.0
CHUNK_BYTES = 256 * 1024  # a chunk is what a kill can cost: about a second of a busy run
FLUSH_S = 1.0
NEVER = 2**63 - 1  # a run's file open: wanted until its end (log_ns)
QUEUE_ITEMS = 16384  # ~20 s of a busy run's messages
WRITE_PERIOD_S = 0.1  # the writer's batches
LOG_INTERVAL = 10.0
PROFILE = "atom-executive"  # the MCAP header's profile: our own JSON channels


@dataclass(frozen=True)
class FoxgloveConfig:
    """The opt-in live view (``executive.records.foxglove_live``; the service config's
    ``foxglove``): off, and on loopback when on."""

    enabled: bool = False
    host: str = "127.0.0.1"  # the view is unauthenticated: another address is a choice
    port: int = 8765  # Foxglove's default; 0 picks a free port (tests)


class McapRecorder:
    """A ``Sink`` of ``RunChannels`` that writes each run to its own MCAP file."""

    def __init__(
        self,
        data_dir: str | Path,
        channels: Iterable[Channel],
        *,
        preroll_s: float = PREROLL_S,
        tail_s: float = TAIL_S,
        queue_items: int = QUEUE_ITEMS,
        clock: Callable[[], float] | None = None,
    ) -> None:
        # the wall clock a tail ends on: a simulated clock's own (a mission's test)
        self._now_ns: Callable[[], int] = getattr(clock, "wall_ns", time.time_ns)
        self.dir = Path(data_dir) / "runs"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.channels = list(channels)
        self.preroll_ns = int(preroll_s * 1e9)
        self.tail_ns = int(tail_s * 1e9)
        self.failed = 0  # writes that failed (a file that could not be opened counts once)
        self.trims = 0  # heap trims after a finished file (executive.records.heap)
        self.trim_s = 0.0  # the longest of them, s
        self.dropped = 0  # items dropped: the queue was full
        self.last_error = ""
        self._logged_at = -LOG_INTERVAL
        self._wanted_until: int | None = None  # the encoder's: log_ns until which a file wants
        # the writer thread's
        self._preroll: collections.deque[Message] = collections.deque()
        self._file: IO[bytes] | None = None
        self._writer: Writer | None = None
        self._ids: dict[str, int] = {}
        self._run = ""
        self._ends_at: int | None = None  # log_ns after which the open file is finished
        self._flushed_at = 0.0
        self._box: Batches[tuple[Any, ...]] = Batches(
            self._handle,
            name="mcap-writer",
            period=WRITE_PERIOD_S,
            limit=queue_items,
            on_error=self._failed,
            idle=self._tail_ended,
            final=self._finish,
        )

    def path(self, run_id: str) -> Path:
        return self.dir / f"{run_id}.mcap"

    # -- the sink: called from the encoder thread, never waits ----------------------------

    def _put(self, item: tuple[Any, ...]) -> None:
        if not self._box.put(item):
            self.dropped += 1
            self._problem(f"queue full ({self._box.limit} items): the disk is not keeping up")

    def wants(self, log_ns: int) -> bool:
        """A run's file is open, or in its tail (the encoder's view: begin and end are
        called from its thread)."""
        return self._wanted_until is not None and log_ns <= self._wanted_until

    def begin(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        self._wanted_until = NEVER
        self._put(("begin", run_id, info, log_ns))

    def end(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        self._wanted_until = log_ns + self.tail_ns
        self._put(("end", run_id, info, log_ns))

    def write(self, message: Message) -> None:
        self._put(("message", message))

    # -- the writer thread -------------------------------------------------------------

    def _handle(self, item: tuple[Any, ...]) -> None:
        if item[0] == "message":
            self._message(item[1])
        elif item[0] == "begin":
            self._begin(*item[1:])
        else:
            self._end(*item[1:])

    def _tail_ended(self) -> None:
        """After each batch: without traffic, a finished run's tail still ends on time."""
        if self._ends_at is not None and self._now_ns() > self._ends_at:
            self._finish()

    def _message(self, message: Message) -> None:
        # the last PREROLL_S, whatever is open: a run that starts in the previous one's
        # tail has its pre-roll too (those messages are then in both files)
        self._preroll.append(message)
        while self._preroll[0].log_ns < message.log_ns - self.preroll_ns:
            self._preroll.popleft()
        if self._ends_at is not None and message.log_ns > self._ends_at:
            self._finish()
        if self._writer is None:
            return
        self._add(message)
        now = time.monotonic()
        if now - self._flushed_at >= FLUSH_S and self._file is not None:
            self._flushed_at = now
            self._file.flush()

    def _add(self, message: Message) -> None:
        assert self._writer is not None
        channel_id = self._ids.get(message.topic)
        if channel_id is None:
            return  # not one of ours: nothing writes such a message
        self._writer.add_message(
            channel_id=channel_id,
            log_time=message.log_ns,
            data=message.data,
            publish_time=message.publish_ns,
        )

    def _begin(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        self._finish()
        self._run = run_id
        preroll = [m for m in self._preroll if m.log_ns >= log_ns - self.preroll_ns]
        try:
            self._open(run_id, info)
            start = min([log_ns, *(m.log_ns for m in preroll)])
            for channel in self.channels:
                if channel.static:  # what holds for the whole run: from the file's start
                    self._add(Message(channel.topic, start, start, channel.static))
            for message in preroll:
                self._add(message)
        except Exception as e:  # noqa: BLE001 - no file for this run; the next may work
            self._failed(e)
            self._abandon()

    def _open(self, run_id: str, info: dict[str, str]) -> None:
        self._file = self.path(run_id).open("wb")
        writer = Writer(self._file, chunk_size=CHUNK_BYTES, compression=CompressionType.ZSTD)
        writer.start(profile=PROFILE, library=f"atom-executive {__version__}")
        self._ids = {}
        for channel in self.channels:
            schema_id = writer.register_schema(
                name=channel.schema_name, encoding="jsonschema", data=channel.schema_data
            )
            self._ids[channel.topic] = writer.register_channel(
                topic=channel.topic, message_encoding="json", schema_id=schema_id
            )
        writer.add_metadata("run", {k: str(v) for k, v in info.items()})
        self._writer = writer
        self._flushed_at = time.monotonic()

    def _end(self, run_id: str, info: dict[str, str], log_ns: int) -> None:
        if run_id != self._run:
            return
        self._ends_at = log_ns + self.tail_ns
        if self._writer is not None:
            self._writer.add_metadata("result", {k: str(v) for k, v in info.items()})

    def _finish(self) -> None:
        """Write the summary and close the open file (if any)."""
        writer, file = self._writer, self._file
        self._writer, self._file, self._run, self._ends_at = None, None, "", None
        try:
            if writer is not None:
                writer.finish()  # type: ignore[no-untyped-call]  # mcap 1.6 leaves it unannotated
        except Exception as e:  # noqa: BLE001 - counted; the file is closed all the same
            self._failed(e)
        finally:
            if file is not None:
                try:
                    file.close()
                except OSError as e:
                    self._failed(e)
        if writer is not None:  # a run is done: what it freed goes back to the system
            self.trim_s = max(self.trim_s, heap.trim())
            self.trims += 1

    def _abandon(self) -> None:
        """Drop a file that failed: the rest of its run is not written."""
        file = self._file
        self._writer, self._file = None, None
        if file is not None:
            with contextlib.suppress(OSError):  # already failed and counted
                file.close()

    def _failed(self, e: BaseException) -> None:
        self.failed += 1
        what = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        self._problem(f"{self.path(self._run) if self._run else self.dir}: {what}")
        if self._writer is not None:
            self._abandon()

    def _problem(self, what: str) -> None:
        self.last_error = what
        now = time.monotonic()
        if now - self._logged_at >= LOG_INTERVAL:
            self._logged_at = now
            log.error("run MCAP not written", error=what, failed=self.failed, dropped=self.dropped)

    # -- reports and shutdown ------------------------------------------------------------

    def problems(self) -> list[str]:
        if not (self.failed or self.dropped):
            return []
        return [
            f"run MCAP files: {self.failed} writes failed, {self.dropped} dropped; "
            f"last: {self.last_error}"
        ]

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued item was handled; False on timeout."""
        return self._box.flush(timeout)

    def close(self, timeout: float = 2.0) -> None:
        """Write what is queued, finish the open file (bounded by ``timeout``) and stop."""
        self._box.close(timeout)


def record_runs(
    executive: Executive,
    profile: RobotProfile,
    data_dir: str | Path,
    live: FoxgloveConfig | None = None,
) -> RunChannels:
    """The service's recording: every run's MCAP file, and the live view if enabled.

    The caller wires ``on_tick``/``on_change`` into the tick loop and ``close()``s it
    after the runtime (the last run's end is then in its file)."""
    channels = catalogue(profile)  # any robot: its state is recorded from its snapshot
    sinks: list[Sink] = [McapRecorder(data_dir, channels.values())]
    notes: list[str] = []
    if live is not None and live.enabled:
        from executive.records.foxglove_live import start_live  # the SDK loads only when asked for

        view, notes = start_live(channels.values(), live.host, live.port)
        if view is not None:
            sinks.append(view)
    tap = RunChannels(executive, profile, sinks)
    tap.notes = notes
    tap.attach(executive.streamer)
    return tap
