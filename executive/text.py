"""Text from missions and requests made safe for a terminal: ``printable(text)``.

Mission names, node names, feedback, log messages, reasons, client ids and reply
messages come from mission files and from anyone on the DDS domain. Printed as they are,
a ``\\x1b[2J`` in a mission's log message clears the operator's screen and can draw a
fake ``state: IDLE  safety: CLEAR`` over a RUNNING mission; a ``\\r`` or ``\\n`` can
overwrite or add a line; a bidi override (U+202E) can reorder what is shown.

``printable`` escapes every character ``str.isprintable`` refuses, as ``repr`` would
(``\\x1b``, ``\\n``, ``\\u202e``, ``\\ud800``), so it is shown, never interpreted: C0
and C1 controls (ESC, CSI ``\\x9b``, BEL, CR, LF, TAB, DEL), format characters
(bidi overrides, zero-width joiners), line and paragraph separators, lone surrogates
(which would also make ``print`` raise on a UTF-8 terminal), private-use and
unassigned code points. Ordinary text, non-ASCII letters included, passes unchanged;
backslashes are not doubled, so a name reads as written (``repr``'s quoting is for
round-trips, not for people).

Every place that prints such a string calls this one function (the operator CLI's
``status``, ``watch`` and replies, and the console log renderer in ``executive.logs``),
right before it reaches the terminal: the data itself stays as sent everywhere else
(JSON output, run records, the journal, replies).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["json_finite", "printable", "printable_lines", "yaml_problem"]


def _escape(char: str) -> str:
    """One character as ``repr`` writes it inside a string, without the quotes."""
    return char.encode("unicode_escape").decode("ascii")


def printable(text: object) -> str:
    """``text`` (made a str) with every non-printable character escaped; one line."""
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():  # the common case: nothing to do, no copy
        return s
    return "".join(c if c.isprintable() else _escape(c) for c in s)


def printable_lines(text: object) -> str:
    """Multi-line text (a traceback, a rendered tree) made safe line by line: its own
    line breaks kept, everything else as ``printable`` makes it."""
    s = text if isinstance(text, str) else str(text)
    return "\n".join(printable(line) for line in s.split("\n"))


def yaml_problem(error: Any) -> str:
    """A YAML parse error in one line: what and where (``str()`` of PyYAML's errors
    spans several lines, with a snippet of the document)."""
    what = ": ".join(
        str(part)
        for part in (getattr(error, "context", None), getattr(error, "problem", None))
        if part
    )
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    if not what:  # errors without the parts (ReaderError): the first line of the message
        what = next(iter(str(error).splitlines()), type(error).__name__)
    return printable(what + where)


def json_finite(value: Any) -> Any:
    """``value`` with every non-finite number (a sensor gone bad) as None, through dicts and
    lists: JSON has no NaN, and a reader's parser may refuse one (the status document, the
    run's MCAP messages)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_finite(v) for v in value]
    return value
