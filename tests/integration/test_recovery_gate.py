"""Nothing starts before what a previous instance left is made safe (executive/service/recovery.py).

The executive's real assembly in this process against the simulated Atom as its own process,
with the service's ``PeerWatch`` and ``PreviousInstance`` wired as ``run()`` wires them. The
peer watch runs on a clock the test moves, so the window between "the robot is heard and the
look has found something" and "the peer watch says this executive is alone" lasts as long as
the test needs: in it, ``start`` and ``reset`` are refused saying what recovery waits for and
the status' ``not_ready`` says it; nothing is sent that needs the alone answer. Then the base
a dead controller left in remote-drive mode gets STOP_REMOTE, and a start is accepted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from executive.core.runtime import Runtime
from executive.mission.store import MissionStore
from executive.robots.atom.interface import Interface
from executive.seam.profile import load_profile
from executive.service.config import ServiceConfig
from executive.service.peers import SETTLE_S, PeerWatch
from executive.service.recovery import WHY, PreviousInstance
from executive.wire import dds
from tests.sim.conftest import Sim, wait_until

pytestmark = pytest.mark.dds

REMOTE = 3  # AMRState_.work_mode: remote control


PAUSE = """
mission: pause
description: Wait a while; moves nothing (a mission the gate can refuse and then accept).
tree:
  wait:
    seconds: 30
"""


def test_start_and_reset_wait_for_recovery_and_a_base_left_remote_driven_is_stopped(
    start_sim: Callable[..., Sim], dds_domain: int, tmp_path: Path
) -> None:
    sim = start_sim("--seed", "3")
    # a controller that dies with the base in remote-drive mode, driving it (the test's own
    # participant: the peer watch ignores this process's, as it does a killed instance's)
    sim.amr("START_REMOTE", 1)
    sim.wait_state("amr_state", lambda s: s["work_mode"] == REMOTE)
    x0 = float(sim.state("amr_state")["position"][0])
    for i in range(10):
        sim.amr("REMOTE_CONTROL", 2 + i, linear_vel=0.5)
        time.sleep(0.02)
    assert wait_until(lambda: abs(float(sim.state("amr_state")["position"][0]) - x0) > 0.01)

    profile = load_profile()
    (tmp_path / "missions").mkdir()
    (tmp_path / "missions" / "pause.yaml").write_text(PAUSE)
    store = MissionStore(tmp_path / "missions", profile)
    with dds.open_participant(dds_domain) as participant:
        now = [time.monotonic()]
        runtime = Runtime.build(
            profile,
            Interface(),
            participant=participant,
            stream_priority=ServiceConfig().stream_priority,  # as the service runs it
        )
        ex = runtime.executive
        watch = PeerWatch(
            participant,
            command_topics=runtime.adapter.command_topics,
            clock=lambda: now[0],
            since=now[0],
        )
        previous = PreviousInstance(ex, "release", alone=watch.alone)
        previous.act_now()
        runtime.after_tick.append(previous.on_tick)
        runtime.start()
        try:

            def start() -> tuple[bool, str]:
                root, errors = store.build("pause", {})
                assert root is not None, errors
                result: tuple[bool, str] = ex.submit(
                    lambda: ex.start_mission("pause", root)
                ).result(5)
                return result

            watch.poll()  # 0 s of discovery on the watch's clock: not known yet
            assert wait_until(lambda: "found" in ex.recovering), ex.recovering
            assert wait_until(lambda: not ex.not_ready()), ex.not_ready()  # the robot heard
            assert ex.recovering.startswith(WHY + "found the base is in remote-drive mode")
            assert ex.blockers() == [ex.recovering]  # the status' not_ready: recovery alone
            ok, message = start()
            why = "refused: not ready: recovering what a previous instance left: found the base"
            assert not ok and message == "refused: not ready: " + ex.recovering, message
            assert message.startswith(why), message
            ok, message = ex.submit(ex.reset).result(5)
            assert not ok and message == "refused: not ready: " + ex.recovering, message
            time.sleep(0.3)  # ticks go on: nothing needing the alone answer goes out
            assert sim.state("amr_state")["work_mode"] == REMOTE
            assert previous.outcome == "looking" and previous.sent == []

            now[0] += SETTLE_S + 0.1
            watch.poll()
            assert wait_until(lambda: previous.done), previous.document()
            assert previous.outcome == "made_safe", previous.document()
            assert previous.sent == ["the base's remote driving stopped (STOP_REMOTE)"]
            assert ex.recovering == "" and ex.blockers() == []
            sim.wait_state("amr_state", lambda s: s["work_mode"] != REMOTE)
            ok, run_id = start()
            assert ok, run_id
            assert ex.submit(lambda: ex.stop_mission("test over")).result(5)[0]
        finally:
            runtime.stop_supervisor()
            runtime.ticker.stop()
            runtime.streamer.stop()

    def kinds() -> list[tuple[float, str]]:
        rec = sim.recording()  # flushed every 100 ms: later on a loaded machine
        return [(e.t, e.fields.get("command_type", "")) for e in rec.event_commands("amr_cmd")]

    assert wait_until(lambda: any(kind == "STOP_REMOTE" for _, kind in kinds())), kinds()
    amr = kinds()
    stops = [t for t, kind in amr if kind == "STOP_REMOTE"]
    assert len(stops) == 1, amr
    # the base was being driven before; after the stop, nothing that drives it
    assert any(kind == "REMOTE_CONTROL" for t, kind in amr if t < stops[0]), amr
    assert [k for t, k in amr if t > stops[0] and k in ("REMOTE_CONTROL", "START_REMOTE")] == []
