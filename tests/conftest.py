"""Shared fixtures: every DDS test gets its own domain on loopback.

Each test leases a domain that no other process on the machine holds (executive.wire.dds
.lease_domain), so two runs, a demo and a benchmark never share one. All DDS
traffic stays on 127.0.0.1 through the project's loopback CycloneDDS config.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive.robots.simkit import realtime
from executive.wire import dds

pytest_plugins = ["tests.rigs"]  # the in-process executive rig fixture

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK_CONFIG = ROOT / "executive" / "resources" / "cyclonedds-loopback.xml"

# Every process a test starts inherits these: loopback only, whatever the caller had set.
os.environ["CYCLONEDDS_URI"] = LOOPBACK_CONFIG.as_uri()
# ... and the simulated robots run as robots do, on a computer of their own: SCHED_FIFO, so
# three workers and CPU hogs beside them do not silence their state (executive.robots.simkit
# .realtime). Below the service's real-time threads (its stream 80, its reflex 81).
os.environ.setdefault(realtime.ENV, "30")

# ... and the signals as systemd hands them to the service: default. A shell that starts
# the run in the background (a script's `make test &`) leaves SIGINT and SIGQUIT ignored,
# nohup SIGHUP, and a process started with a signal ignored keeps it ignored (exec resets
# only the handled ones): the service then rightly leaves such a signal alone, and the
# signal tests saw a SIGQUIT that did nothing (killed after 20 s).
for _sig in (signal.SIGHUP, signal.SIGQUIT):
    if signal.getsignal(_sig) == signal.SIG_IGN:
        signal.signal(_sig, signal.SIG_DFL)
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# Tests whose assertions are about time (latency figures, events lost, stalls detected):
# `make test` runs them alone, after the parallel run of the rest (pyproject: serial).
# test_native_stream.py's bounds are a period or two (2-4 ms) of a SCHED_FIFO thread, as the
# service runs it; but this kernel does not preempt kernel work (dmesg: "Dynamic Preempt:
# none"), so a neighbour's syscalls delay even a real-time thread's wake: bench/floor_c/loop.c
# alone at SCHED_FIFO 80 missed 32 periods in 30 s (max 5.1 ms late) beside a pip install.
SERIAL_FILES = frozenset(
    {
        "test_estop_c_bench.py",
        "test_fault_bench.py",
        "test_native_stream.py",
        "test_realtime_service.py",
        "test_reflex_fault_row.py",
        "test_reflex_on_sim.py",
        "test_watchdog_hang.py",
        "test_reflex.py",
    }
)


@pytest.hookimpl(tryfirst=True)  # marked before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)
        # a test on a leased domain opens DDS participants: not make test-fast's (whatever
        # its file is marked)
        if "dds_domain" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.dds)


@pytest.fixture
def dds_domain(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A DDS domain no other test, run or demo on this machine uses meanwhile (a lease);
    exported as ATOM_DDS_DOMAIN for the processes the test starts."""
    lease = dds.lease_domain()
    monkeypatch.setenv(dds.DOMAIN_ENV, str(lease.domain))
    yield lease.domain
    lease.release()


@pytest.fixture
def participant(dds_domain: int) -> Iterator[dds.DomainParticipant]:
    """A participant on the test's own domain, deleted when the test ends."""
    with dds.open_participant(dds_domain) as p:
        yield p
