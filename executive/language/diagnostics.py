"""Where a problem is and what it is: ``file:line:col: path.to.field: message``.

Loading a mission never stops at the first problem: every stage appends to one
``Diagnostics`` collector, so an integrator fixes a file in one pass instead of one
error per run. The line/column points at the YAML text itself (1-based, columns in
characters), so an editor can jump to it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, order=True, slots=True)
class Location:
    """A position in a source file; line and column are 1-based, columns in characters."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem. ``path`` names the field (``tree.sequence.children[2].wait.seconds``);
    it is empty for problems of the file as a whole (not UTF-8, not YAML)."""

    where: Location
    path: str
    message: str
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        path = f"{self.path}: " if self.path else ""
        tag = "warning: " if self.severity is Severity.WARNING else ""
        return f"{self.where}: {path}{tag}{self.message}"

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


class Diagnostics:
    """Collects the problems of one load in order, each once.

    The same subtree included twice with the same mistake would otherwise report it
    twice at the same place; duplicates carry no information, so they are dropped.
    """

    def __init__(self) -> None:
        self._items: dict[Diagnostic, None] = {}

    def error(self, where: Location, path: str, message: str) -> None:
        self._items[Diagnostic(where, path, message)] = None

    def warning(self, where: Location, path: str, message: str) -> None:
        self._items[Diagnostic(where, path, message, Severity.WARNING)] = None

    def extend(self, items: Iterable[Diagnostic]) -> None:
        for item in items:
            self._items[item] = None

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self._items)

    def error_count(self) -> int:
        return sum(1 for d in self._items if d.is_error)

    def items(self) -> tuple[Diagnostic, ...]:
        return tuple(self._items)


class MissionError(ValueError):
    """A mission that cannot be used; ``diagnostics`` lists every problem found."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics if d.is_error))
