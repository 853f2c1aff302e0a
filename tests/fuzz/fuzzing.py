"""How hard the fuzz tests try, chosen by ``ATOM_FUZZ``, and what they report.

``ATOM_FUZZ`` unset (or ``short``): the run ``make test`` does, a few hundred cases per
test, derandomized so it is the same run every time (a fuzz failure there is a
reproducible regression, never a flake). ``ATOM_FUZZ=long`` (``make fuzz``): at least
10,000 cases per test, random, failures saved in Hypothesis' example database and
replayed first next time.

The profiles are applied per test (``fuzz_settings``), never loaded globally, so the
other Hypothesis tests of the suite keep their own settings.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, settings

MODE = os.environ.get("ATOM_FUZZ", "short") or "short"
if MODE not in ("short", "long"):
    raise RuntimeError(f"ATOM_FUZZ={MODE!r}: expected 'short' or 'long'")
LONG = MODE == "long"
LONG_EXAMPLES = 10_000
# per test, generously: the long run is minutes per test on a loaded 2-core machine
TIMEOUT_S = 4 * 3600 if LONG else 300

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile(
    "atom-fuzz-short",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_HEALTH,
    print_blob=True,
)
settings.register_profile(
    "atom-fuzz-long",
    max_examples=LONG_EXAMPLES,
    deadline=None,
    suppress_health_check=_HEALTH,
    print_blob=True,
)
PROFILE = settings.get_profile(f"atom-fuzz-{MODE}")


def fuzz_settings(
    short_examples: int, long_examples: int = LONG_EXAMPLES, *, shrink: bool = True
) -> settings:
    """The profile, with ``short_examples`` cases in the short run and ``long_examples``
    (10,000 unless a test is one of several parametrized cases) in the long one.
    ``shrink=False`` reports a failing case as found (for cases that go through other
    processes, where shrinking would take many minutes)."""
    phases = tuple(p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain))
    return settings(PROFILE, max_examples=long_examples if LONG else short_examples, phases=phases)


@dataclass
class Stats:
    """What one fuzz test did, for the summary at the end of the run."""

    name: str
    cases: int = 0
    first: float | None = None  # monotonic time the first case began
    last: float = 0.0  # and the latest one ended
    busy: float = 0.0  # seconds inside the cases (the rest: generating them)
    _began: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """Wall time from the first case to the last: generation, shrinking, everything."""
        return self.last - self.first if self.first is not None else 0.0

    def begin(self) -> None:
        self._began = time.monotonic()
        if self.first is None:
            self.first = self._began

    def end(self, cases: int = 1) -> None:
        self.cases += cases
        self.last = time.monotonic()
        self.busy += self.last - self._began

    def line(self) -> str:
        rate = self.cases / self.seconds if self.seconds else 0.0
        top = ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common(12))
        notes = "; ".join(self.notes)
        return (
            f"{self.name}: {self.cases} cases in {self.seconds:.1f} s ({rate:.0f}/s; "
            f"{self.busy:.1f} s in the cases, the rest generating them)"
            + (f" [{top}]" if top else "")
            + (f" {notes}" if notes else "")
        )


STATS: dict[str, Stats] = {}


def stats(name: str) -> Stats:
    return STATS.setdefault(name, Stats(name))
