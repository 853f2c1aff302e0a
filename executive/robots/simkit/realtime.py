"""A simulated robot as a real one runs: on a computer of its own, not behind our load.

The robot's firmware publishes its state on time whatever the user computer is doing; a
simulated robot sharing the CPU with three test workers and four CPU hogs does not, and
the service then rightly latches ``stale_state`` on a robot that only the test starved
(issue 35: a fresh-clone CI beside four hogs, the state topics silent 0.5-0.64 s). With
``ATOM_ROBOT_FIFO=PRIO`` in its environment (tests/conftest.py sets it) a simulator takes
SCHED_FIFO PRIO for the whole process before it starts a thread, so every thread it makes
inherits it; a C robot of the tests is started under ``chrt`` (``command``). Unset, it runs
as any process does (the demos, the benchmarks, a user's ``atom-executive sim``).

Standard library only: the Aurora's simulator imports it in .venv-aurora.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

ENV = "ATOM_ROBOT_FIFO"


def priority() -> int | None:
    """The SCHED_FIFO priority the environment asks robots to take (None: none)."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= 99:
        raise ValueError(f"{ENV}={raw!r}: must be a SCHED_FIFO priority 1..99")
    return value


def take() -> str:
    """Take the asked priority for this process (its calling thread, and every thread made
    after); what it got, in words ("" when nothing was asked). Refused (no CAP_SYS_NICE,
    no RLIMIT_RTPRIO): said on stderr, and the simulator runs at normal priority."""
    wanted = priority()
    if wanted is None:
        return ""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(wanted))
    except OSError as e:
        sys.stderr.write(f"simulated robot: SCHED_FIFO {wanted} refused ({e}): normal priority\n")
        return "normal priority"
    return f"SCHED_FIFO {wanted}"


def command(argv: Sequence[str]) -> list[str]:
    """``argv`` to start a robot process that is not ours to change (a C robot, the vendor's
    client's robot), under ``chrt`` at the asked priority; unchanged when none is asked."""
    wanted = priority()
    return list(argv) if wanted is None else ["chrt", "-f", str(wanted), *argv]
