"""What a run frees goes back to the system: ``executive.records.heap`` and its one caller.

The service's memory crept ~5 KiB a run (``make soak``) with no object left behind:
freed memory pinned in the malloc arenas of the threads that did the run's work. These
tests make that situation for real, in a thread's own arena, and show ``trim`` gives the
pages back; and that the run's recording trims once per finished run file.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from executive.records import heap
from executive.records.mcaprecord import McapRecorder
from executive.records.runchannels import catalogue
from executive.seam.profile import load_profile

CHUNK = 4096  # malloc'd (above pymalloc's 512 B), below the mmap threshold: in the arena
CHUNKS = 16384  # 64 MiB
KEEP_EVERY = 32  # one survivor in 128 KiB pins the whole run above it in a non-main arena


def anon_kib() -> int:
    """This process's resident anonymous memory (thread arenas among it), KiB."""
    total, anon = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5:
            anon = len(head) == 5  # a mapping without a name: anonymous
        elif head and head[0] == "Rss:" and anon:
            total += int(head[1])
    return total


@pytest.mark.skipif(not heap.available(), reason="no malloc_trim in this C library")
def test_trim_gives_back_what_a_thread_freed_and_its_arena_kept() -> None:
    kept: list[bytearray] = []
    before = anon_kib()

    def a_run() -> None:  # in its own thread: its own arena, as the service's threads
        chunks = [bytearray(CHUNK) for _ in range(CHUNKS)]
        kept.extend(chunks[::KEEP_EVERY])  # a few long-lived bytes among them

    worker = threading.Thread(target=a_run)
    worker.start()
    worker.join()
    held = anon_kib() - before
    assert held > 0.8 * CHUNK * CHUNKS / 1024, f"freed memory not kept ({held} KiB): no test"
    cpu = time.thread_time()
    heap.trim()
    took = time.thread_time() - cpu  # this thread's CPU, user and kernel: not the machine's load
    given_back = before + held - anon_kib()
    assert given_back > 0.8 * held, f"trim gave back {given_back} of {held} KiB"
    assert took < 0.5
    assert len(kept) == CHUNKS // KEEP_EVERY  # the survivors are still there


def test_the_run_recording_trims_once_per_finished_run(tmp_path: Path) -> None:
    recorder = McapRecorder(tmp_path, catalogue(load_profile()).values(), tail_s=0.0)
    try:
        for run in range(3):
            now = time.time_ns()
            recorder.begin(f"run{run}", {"mission": "m"}, now)
            recorder.end(f"run{run}", {"result": "SUCCEEDED"}, now + 1)
        deadline = time.monotonic() + 5
        while recorder.trims < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert recorder.trims == 3, recorder.trims
        assert all((tmp_path / "runs" / f"run{i}.mcap").stat().st_size > 0 for i in range(3))
    finally:
        recorder.close()
