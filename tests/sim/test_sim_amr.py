"""The simulated AMR over real DDS: the documented task status sequence, cancel, queue, pause."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.sim.conftest import TIMEOUT, Sim

pytestmark = pytest.mark.dds


class StatusLog:
    """Every distinct (task_id, navigation_status, device_status) the AMR reported."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.nav = {m.value: m.name for m in sim.iface.NavigationStatus_}
        self.dev = {m.value: m.name for m in sim.iface.DeviceStatus_}
        self.seen: list[tuple[int, str, str]] = []
        self._lock = threading.Lock()
        sim.ctl.readers["amr_state"].add_callback(self._on)

    def _on(self, s: Any) -> None:
        entry = (
            int(s["task_id"]),
            self.nav[int(s["navigation_status"])],
            self.dev[int(s["device_status"])],
        )
        with self._lock:
            if not self.seen or self.seen[-1] != entry:
                self.seen.append(entry)

    def of(self, task_id: int) -> list[tuple[str, str]]:
        with self._lock:
            return [(n, d) for t, n, d in self.seen if t == task_id]

    def wait(self, task_id: int, nav: str, timeout: float = TIMEOUT) -> Any:
        code = next(v for v, n in self.nav.items() if n == nav)
        return self.sim.wait_state(
            "amr_state",
            lambda s: int(s["task_id"]) == task_id and int(s["navigation_status"]) == code,
            timeout,
        )


def test_move_to_tag_runs_the_documented_status_sequence(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim()
    log = StatusLog(sim)
    sim.amr("MOVE_TO_TAG", command_id=41, target_id=2, theta=math.pi / 2)
    done = log.wait(41, "COMPLETED")
    x, y, yaw = (float(v) for v in done["position"])
    assert (x, y) == pytest.approx((2.0, 0.0), abs=0.02)  # tag 2 of the default map
    assert yaw == pytest.approx(math.pi / 2, abs=0.01)
    sim.wait_state(
        "amr_state", lambda s: s["device_status"] == sim.iface.DeviceStatus_.DEVIDLE.value
    )
    statuses = [n for n, _ in log.of(41)]
    assert statuses == ["QUEUING", "RUNNING", "COMPLETED"]
    assert ("RUNNING", "TASKING") in log.of(41)
    assert log.of(41)[-1] == ("COMPLETED", "DEVIDLE")
    assert int(done["work_mode"]) == 0


def test_unknown_tag_fails(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(record=False)
    log = StatusLog(sim)
    sim.amr("MOVE_TO_TAG", command_id=7, target_id=999)
    failed = log.wait(7, "FAILED")
    assert int(failed["error_code"][0]) != 0
    assert [n for n, _ in log.of(7)][-1] == "FAILED"


def test_cancel_ends_the_task_canceled_and_stops_the_base(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(record=False)
    log = StatusLog(sim)
    sim.amr("MOVE_TO_TAG", command_id=3, target_id=2)
    running = log.wait(3, "RUNNING")
    sim.wait_state("amr_state", lambda s: float(s["position"][0]) > 0.2)
    sim.amr("CANCEL_TASK", command_id=4)
    canceled = log.wait(3, "CANCELED")
    x = float(canceled["position"][0])
    assert 0.0 < x < 1.95
    later = sim.fresh_state("amr_state")
    later = sim.fresh_state("amr_state")
    assert float(later["position"][0]) == pytest.approx(x, abs=1e-6)
    assert later["device_status"] == sim.iface.DeviceStatus_.DEVIDLE.value
    assert int(running["device_status"]) == sim.iface.DeviceStatus_.TASKING.value


def test_a_new_task_queues_behind_the_running_one(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim("--amr-speed", "3", "--amr-turn-rate", "6", record=False)
    log = StatusLog(sim)
    sim.amr("MOVE_TO_TAG", command_id=10, target_id=2)
    log.wait(10, "RUNNING")
    sim.amr("MOVE_TO_TAG", command_id=11, target_id=3)  # does not cancel task 10
    log.wait(10, "COMPLETED")
    done = log.wait(11, "COMPLETED")
    assert (float(done["position"][0]), float(done["position"][1])) == pytest.approx(
        (2.0, 1.5), abs=0.02
    )
    assert [n for n, _ in log.of(10)] == ["QUEUING", "RUNNING", "COMPLETED"]
    assert [n for n, _ in log.of(11)] == ["QUEUING", "RUNNING", "COMPLETED"]


def test_pause_and_resume(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim("--amr-speed", "2.5", "--amr-turn-rate", "6", record=False)
    log = StatusLog(sim)
    sim.amr("MOVE_TO_TAG", command_id=20, target_id=3)  # (2, 1.5): turn, then drive 2.5 m
    log.wait(20, "RUNNING")
    sim.amr("PAUSE_TASK", command_id=21)
    paused = log.wait(20, "PAUSED")
    held = sim.fresh_state("amr_state")
    held = sim.fresh_state("amr_state")
    assert list(held["position"]) == pytest.approx(list(paused["position"]), abs=1e-3)
    assert int(held["device_status"]) == sim.iface.DeviceStatus_.TASKING.value
    sim.amr("RESUME_TASK", command_id=22)
    log.wait(20, "COMPLETED")
    assert [n for n, _ in log.of(20)] == ["QUEUING", "RUNNING", "PAUSED", "RUNNING", "COMPLETED"]


def test_remote_driving(start_sim: Callable[..., Sim]) -> None:
    sim = start_sim(record=False)
    sim.amr("REMOTE_CONTROL", command_id=1, linear_vel=0.5)  # refused: not in remote mode
    sim.amr("START_REMOTE", command_id=2)
    sim.wait_state("amr_state", lambda s: int(s["work_mode"]) == 3)
    sim.amr("REMOTE_CONTROL", command_id=3, linear_vel=0.5, angular_vel=0.0)
    sim.wait_state("amr_state", lambda s: float(s["position"][0]) > 0.05)
    sim.amr("STOP_REMOTE", command_id=4)
    stopped = sim.wait_state("amr_state", lambda s: int(s["work_mode"]) == 0)
    x = float(stopped["position"][0])
    assert float(sim.fresh_state("amr_state")["position"][0]) == pytest.approx(x, abs=1e-6)


def test_tag_map_from_yaml(start_sim: Callable[..., Sim], tmp_path: Path) -> None:
    tags = tmp_path / "tags.yaml"
    tags.write_text(
        "tags:\n  100: {x: 1.0, y: 1.0}\n  101: {x: 0.0, y: -1.0}\nstart: {x: 1.0, y: 0.0, yaw: 0.0}\n"
    )
    sim = start_sim("--tags", str(tags), "--amr-speed", "3", "--amr-turn-rate", "6", record=False)
    assert float(sim.state("amr_state")["position"][0]) == pytest.approx(1.0)
    log = StatusLog(sim)
    sim.amr("MOVE_TO_TAG", command_id=5, target_id=100)
    done = log.wait(5, "COMPLETED")
    assert (float(done["position"][0]), float(done["position"][1])) == pytest.approx(
        (1.0, 1.0), abs=0.02
    )
    sim.amr("MOVE_TO_TAG", command_id=6, target_id=2)  # a default-map tag, not in this map
    log.wait(6, "FAILED")
