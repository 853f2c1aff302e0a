"""Scheduling for the one thread that keeps a deadline: the motion streamer.

Linux lets each thread have its own scheduling, so the 500 Hz streamer can run under
``SCHED_FIFO`` while the tick loop, logging and requests stay ordinary threads. Measured
by ``bench/stream.py`` on a shared 2-core VM: a thread sleeping to 2 ms deadlines wakes
with a p99 lateness of ~0.57 ms at normal priority and ~0.16 ms under ``SCHED_FIFO``.

The service asks for it by default (``stream_priority: 80``). It was off while the e-stop
fast path was Python on CycloneDDS's receive thread: a FIFO thread taking one of two CPUs
delayed that thread's GIL-bound hold. The e-stop reflex (``executive.robots.native``) holds in C
without the GIL, so that trade is gone (docs/benchmarks.md).

Real-time priority needs ``RLIMIT_RTPRIO`` (systemd's ``LimitRTPRIO=``, see
``deploy/atom-executive.service``) or ``CAP_SYS_NICE``. Without either the streamer still
runs, at normal priority, and says so in one line: the service is degraded, not broken.
The kernel's real-time throttling (``sched_rt_runtime_us``, 95 % by default) keeps a
runaway FIFO thread from starving the machine; the streamer itself sleeps most of each
period.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urlparse
from xml.etree import ElementTree

PR_SET_NAME = 15
PR_SET_TIMERSLACK = 29
TIMER_SLACK_NS = 1000  # the kernel's default for a thread is 50 us, a fortieth of a period
FIFO_PRIORITIES = range(1, 100)  # sched_get_priority_min/max(SCHED_FIFO) on Linux


def _prctl(option: int, value: int | bytes) -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        arg = ctypes.c_char_p(value) if isinstance(value, bytes) else ctypes.c_ulong(value)
        libc.prctl(option, arg, 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl: nothing to tune
        pass


def name_thread(name: str) -> None:
    """Give the calling thread its name in the kernel (15 bytes), so ``top -H``,
    ``ps -L`` and ``chrt -p`` on the robot show ``motion-streamer``, not ``python``."""
    _prctl(PR_SET_NAME, name.encode()[:15])


def tight_timer() -> None:
    """Ask Linux to wake the calling thread within 1 us of its deadline instead of the
    default 50 us timer slack: measured by ``bench/stream.py``, the median lateness of the
    500 Hz period falls by that much."""
    _prctl(PR_SET_TIMERSLACK, TIMER_SLACK_NS)


def fifo(priority: int) -> str | None:
    """Put the calling thread under ``SCHED_FIFO`` at ``priority``; the reason it was
    refused, or None. On Linux ``sched_setscheduler(0, ...)`` applies to the calling
    thread only, not to the process."""
    if priority not in FIFO_PRIORITIES:
        return f"priority {priority} is outside 1..99"
    if not hasattr(os, "sched_setscheduler"):
        return "this platform has no sched_setscheduler"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except PermissionError:
        if _rtprio_limit() >= priority:  # the limit allows it: the cgroup does not
            return (
                f"SCHED_FIFO {priority} refused although RLIMIT_RTPRIO allows it: the "
                "service's cgroup has no real-time budget (cpu.rt_runtime_us, with "
                "CONFIG_RT_GROUP_SCHED); give it one or run it in the root cgroup"
            )
        return (
            f"SCHED_FIFO {priority} not permitted: give the service LimitRTPRIO={priority} "
            "or CAP_SYS_NICE (deploy/atom-executive.service)"
        )
    except OSError as e:
        return f"SCHED_FIFO {priority}: {e.strerror}"
    return None


def _rtprio_limit() -> int:
    """The soft RLIMIT_RTPRIO of this process (0 where there is none)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_RTPRIO)[0]
        return max(FIFO_PRIORITIES) if soft == resource.RLIM_INFINITY else int(soft)
    except (ImportError, AttributeError, OSError, ValueError):
        return 0


def policy() -> str:
    """The calling thread's scheduling, as ``chrt`` prints it: ``SCHED_FIFO 80``."""
    if not hasattr(os, "sched_getscheduler"):
        return "unknown"
    names = {os.SCHED_OTHER: "SCHED_OTHER", os.SCHED_FIFO: "SCHED_FIFO", os.SCHED_RR: "SCHED_RR"}
    which = os.sched_getscheduler(0)
    name = names.get(which, str(which))
    if which in (os.SCHED_FIFO, os.SCHED_RR):
        return f"{name} {os.sched_getparam(0).sched_priority}"
    return name


def fifo_permitted(priority: int) -> str | None:
    """Whether a thread of this process may run under ``SCHED_FIFO`` at ``priority``
    (the reason not, or None), tried on a throwaway thread so that the caller's own
    scheduling stays as it is."""
    result: list[str | None] = []
    probe = threading.Thread(target=lambda: result.append(fifo(priority)), name="rt-probe")
    probe.start()
    probe.join()
    return result[0]


def dds_realtime_threads(uri: str | None) -> list[tuple[str, int]]:
    """The CycloneDDS threads that ``CYCLONEDDS_URI`` puts in the realtime class, with
    their priorities: ``[("recv", 85)]``. CycloneDDS 0.10 aborts the whole process when it
    may not create such a thread (``pthread_create failed with error 1``), so the service
    checks them first and refuses to start with a message instead. Files that cannot be
    read or parsed are skipped: CycloneDDS reports those itself."""
    found: list[tuple[str, int]] = []
    for item in (uri or "").split(","):
        text = _xml_of(item.strip())
        if text is None:
            continue
        try:  # the operator's own DDS config: the trust CycloneDDS itself gives it
            root = ElementTree.fromstring(text)  # noqa: S314
        except ElementTree.ParseError:
            continue
        for thread in root.iter():
            if _local(thread.tag) != "Thread":
                continue
            sched = {_local(e.tag): (e.text or "").strip() for e in thread.iter()}
            if sched.get("Class", "").lower() == "realtime":
                priority = sched.get("Priority", "1")
                found.append((thread.get("name", "?"), int(priority) if priority.isdigit() else 1))
    return found


def _xml_of(item: str) -> str | None:
    """An item of ``CYCLONEDDS_URI``: a ``file://`` URI or inline XML."""
    if item.startswith("file://"):
        try:
            return Path(unquote(urlparse(item).path)).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    return item if item.startswith("<") else None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def check_dds_threads(uri: str | None) -> str | None:
    """Why CycloneDDS could not create its realtime threads here, or None."""
    for name, priority in dds_realtime_threads(uri):
        refused = fifo_permitted(priority)
        if refused is not None:
            return f"CYCLONEDDS_URI: Threads/Thread[@name={name!r}] asks for realtime: {refused}"
    return None
