"""Logging: structlog JSON lines, and structured journald entries under systemd.

One configuration for every process (service, simulator, CLI): events go to stderr as
JSON lines (``ts``, ``level``, ``event`` and fields). Under systemd (``JOURNAL_STREAM``
set, or ``journal=True``) each event is sent to journald instead, with its fields as
journal fields in upper case (``MISSION=``, ``RUN_ID=``, ``NODE=``, ``SAFETY_REASON=``),
so ``journalctl -u atom-executive MISSION=delivery`` finds a run's lines.

Console mode (``console=True``: the operator CLI) renders events for a person at a
terminal, and there every field passes ``executive.text.printable`` first, keys and the
event included: a mission's log message or a client id holding ``\x1b[2J`` is shown as
those characters, never acted on by the terminal. A traceback keeps its own line
breaks, each line made printable; an exception's message (which may quote a mission)
stays on its one line, its newlines shown as ``\n``. JSON lines need nothing (``json.dumps`` escapes control
characters); the journal stores fields as given (``journalctl`` shows them as blobs
unless asked otherwise).

An event that can repeat many times a second (a tick overrun, a refused unsigned request)
goes through ``RateLimitedLog``: its first occurrence, then at most one line per 10 s with
the count since the previous line, so a healthy idle service logs almost nothing.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import structlog
from structlog.typing import EventDict, WrappedLogger

from executive.text import printable, printable_lines

_PRIORITY = {"critical": 2, "error": 3, "warning": 4, "info": 6, "debug": 7}


class JournaldRenderer:
    """Final processor: sends the event to journald and returns it unchanged as text."""

    def __init__(self, identifier: str) -> None:
        from systemd import journal

        self._send = journal.send
        self.identifier = identifier

    def __call__(self, logger: WrappedLogger, name: str, event_dict: EventDict) -> str:
        event = str(event_dict.pop("event", ""))
        level = str(event_dict.pop("level", "info"))
        fields = {k.upper(): str(v) for k, v in event_dict.items() if k not in {"timestamp"}}
        self._send(
            event,
            PRIORITY=str(_PRIORITY.get(level, 6)),
            SYSLOG_IDENTIFIER=self.identifier,
            **fields,
        )
        return event


class _Shown:
    """A field as the console shows it: ``ConsoleRenderer`` writes ``repr()`` of every
    value that is not a str, and this one's repr is its already printable text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


_QUOTED = frozenset(" \t=\"'\r\n")  # a str ConsoleRenderer shows quoted, as repr() writes it
_MULTILINE = frozenset({"exception", "stack"})  # tracebacks: their line breaks kept
_OWN = frozenset({"level", "timestamp"})  # set by our processors, columns of the renderer


def printable_fields(logger: WrappedLogger, name: str, event_dict: EventDict) -> EventDict:
    """Processor before the console renderer: every field, key and the event made
    printable, so nothing in an event can drive the terminal."""
    out: EventDict = {}
    for key, value in event_dict.items():
        if key in _MULTILINE:
            out[key] = printable_lines(value)
        elif key in _OWN or key == "event":
            out[key] = printable(value)
        elif isinstance(value, str):
            out[printable(key)] = _Shown(repr(value) if _QUOTED & set(value) else printable(value))
        else:
            out[printable(key)] = _Shown(printable(repr(value)))
    return out


def _exception_text(exc_info: tuple[Any, Any, Any]) -> str:
    """A traceback for the console: its frames line by line, and each exception's own text
    (message and notes, chained ones too) on one printable line."""
    text = "".join(traceback.format_exception(*exc_info))
    seen: set[int] = set()
    error = exc_info[1]
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        only = "".join(traceback.format_exception_only(type(error), error))
        text = text.replace(only, printable(only.rstrip("\n")) + "\n")
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    return printable_lines(text.rstrip("\n"))


def console_exception(logger: WrappedLogger, name: str, event_dict: EventDict) -> EventDict:
    """Processor: ``exc_info`` (as ``log.exception`` sets it) to an ``exception`` text."""
    exc_info = event_dict.pop("exc_info", None)
    if exc_info is True:
        exc_info = sys.exc_info()
    elif isinstance(exc_info, BaseException):
        exc_info = (type(exc_info), exc_info, exc_info.__traceback__)
    if isinstance(exc_info, tuple) and exc_info[1] is not None:
        event_dict["exception"] = _exception_text(exc_info)
    return event_dict


def _console_processors() -> list[Any]:
    return [
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
        console_exception,
        printable_fields,
        structlog.dev.ConsoleRenderer(
            colors=sys.stderr.isatty(), exception_formatter=structlog.dev.plain_traceback
        ),
    ]


def _stderr_logger(*_args: Any) -> structlog.PrintLogger:
    """A logger on the *current* sys.stderr (resolved per logger, not at configure time)."""
    return structlog.PrintLogger(sys.stderr)


def configure(
    identifier: str = "atom-executive",
    *,
    level: str = "info",
    journal: bool | None = None,
    console: bool = False,
) -> None:
    """Configure structlog for this process (idempotent): journald under systemd, else
    JSON lines on stderr, or with ``console`` lines for a person (fields made printable)."""
    use_journal = bool(os.environ.get("JOURNAL_STREAM")) if journal is None else journal
    rendering: list[Any]
    if use_journal:
        rendering = [
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
            structlog.processors.format_exc_info,
            JournaldRenderer(identifier),
        ]
    elif console:
        rendering = _console_processors()
    else:
        rendering = [
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ]
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            *rendering,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        # under journald the renderer has sent the entry; printing it too would duplicate it
        logger_factory=structlog.ReturnLoggerFactory() if use_journal else _stderr_logger,
        cache_logger_on_first_use=False,
    )


AGGREGATE_INTERVAL = 10.0  # s: at most one line per interval about one repeated event


class RateLimitedLog:
    """One repeated event, logged quietly: its first occurrence at once, then at most one
    line per ``interval`` carrying ``since_last_line``, the occurrences not logged since
    the previous line (as ``LatestReader`` logs a topic's undecodable samples).

    ``log(level, event, **fields)`` keys on ``event`` (or ``key=``, for one event whose
    kinds are counted apart); the keys are the caller's constants, never text from a
    request, so a flood of distinct senders costs one key, not one per sender. A burst
    that stops inside the interval leaves its count untold until the event comes again:
    quiet is the point, and a count is never lost, only carried to the next line.
    Thread-safe: DDS listeners and the request worker call it at once."""

    def __init__(
        self,
        logger: Any,
        interval: float = AGGREGATE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.interval = interval
        self.clock = clock
        self._logged_at: dict[str, float] = {}
        self._unlogged: dict[str, int] = {}
        self._lock = threading.Lock()

    def log(self, level: str, event: str, *, key: str | None = None, **fields: Any) -> bool:
        """Log ``event`` now, or count it for the next line; True if a line was written."""
        k = event if key is None else key
        now = self.clock()
        with self._lock:
            last = self._logged_at.get(k)
            if last is not None and now - last < self.interval:
                self._unlogged[k] = self._unlogged.get(k, 0) + 1
                return False
            self._logged_at[k] = now
            since = self._unlogged.pop(k, 0)
        getattr(self.logger, level)(event, **fields, since_last_line=since)
        return True

    def unlogged(self, key: str) -> int:
        """Occurrences of ``key`` counted since its last line (for tests and status)."""
        with self._lock:
            return self._unlogged.get(key, 0)
