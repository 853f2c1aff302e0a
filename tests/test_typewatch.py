"""Interface mismatch: a robot speaking another variant is named, not silently unheard."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from executive.harness.stack import running_stack
from executive.robots.atom.adapter import AtomTypeWatch as TypeWatch
from executive.robots.atom.interface import Interface, Variant
from executive.robots.atom.topics import AtomIO

pytestmark = pytest.mark.dds


def poll_until(watch: TypeWatch, topics: set[str], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not topics <= watch.seen:
        assert time.monotonic() < deadline, f"never discovered {topics - watch.seen}"
        watch.poll()
        time.sleep(0.05)


def test_a_robot_on_another_variant_is_named_with_the_variant_that_matches(
    tmp_path: Path,
) -> None:
    with running_stack(tmp_path) as stack:
        stack.start_sim("--interface", "sdk-1.1.0")
        watch = TypeWatch(stack.dds, Interface())
        poll_until(watch, {"rt/upper/state", "rt/emergency/state", "rt/lower/state"})
        found = {m.topic: m for m in watch.mismatches}
        assert set(found) == {"rt/upper/state", "rt/emergency/state"}
        assert found["rt/emergency/state"].matches == ("sdk-1.1.0",)
        assert found["rt/upper/state"].matches == ("sdk-1.0.1", "sdk-1.1.0")
        assert "set `interface:` in the config" in str(found["rt/upper/state"])


def test_the_same_variant_is_no_mismatch(tmp_path: Path) -> None:
    with running_stack(tmp_path) as stack:
        stack.start_sim("--interface", "sdk-1.0.1")
        watch = TypeWatch(stack.dds, Interface(Variant("sdk-1.0.1")))
        own_io = AtomIO(stack.dds, watch.interface)  # never compared with ourselves
        poll_until(watch, {"rt/upper/state", "rt/set/fsm/id", "rt/upper/cmd"})
        assert watch.mismatches == []
        del own_io  # kept alive until here: its entities go with it


def test_the_service_refuses_missions_while_the_robot_speaks_another_variant(
    tmp_path: Path,
) -> None:
    with running_stack(tmp_path) as stack:
        stack.start_sim("--interface", "sdk-1.1.0")
        stack.start_service(ready=False)  # speaks the default, seed: it never hears the sim
        log = tmp_path / "executive.log"
        deadline = time.monotonic() + 15
        while "interface mismatch" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.1)
        reply = stack.client.request("start", {"mission": "head_scan"})
        assert reply.code != 0
        assert "refused: interface mismatch: rt/" in reply.message
        assert "it matches interface sdk-1.1.0" in reply.message
