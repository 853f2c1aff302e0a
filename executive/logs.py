"""Logging: structlog JSON lines, and structured journald entries under systemd.

One configuration for every process (service, simulator, CLI): events go to stderr as
JSON lines (``ts``, ``level``, ``event`` and fields). Under systemd (``JOURNAL_STREAM``
set, or ``journal=True``) each event is sent to journald instead, with its fields as
journal fields in upper case (``MISSION=``, ``RUN_ID=``, ``NODE=``, ``SAFETY_REASON=``),
so ``journalctl -u atom-executive MISSION=delivery`` finds a run's lines.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import structlog
from structlog.typing import EventDict, WrappedLogger

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


def _stderr_logger(*_args: Any) -> structlog.PrintLogger:
    """A logger on the *current* sys.stderr (resolved per logger, not at configure time)."""
    return structlog.PrintLogger(sys.stderr)


def configure(
    identifier: str = "atom-executive", *, level: str = "info", journal: bool | None = None
) -> None:
    """Configure structlog for this process (idempotent)."""
    use_journal = bool(os.environ.get("JOURNAL_STREAM")) if journal is None else journal
    renderer: Any = (
        JournaldRenderer(identifier) if use_journal else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True, key="ts"),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        # under journald the renderer has sent the entry; printing it too would duplicate it
        logger_factory=structlog.ReturnLoggerFactory() if use_journal else _stderr_logger,
        cache_logger_on_first_use=False,
    )
