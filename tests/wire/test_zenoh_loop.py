"""The in-process zenoh of simulated time (``executive.wire.zenoh_loop``) routes as zenoh
does: a put reaches every subscriber whose key expression intersects its key (wildcards
by zenoh's own ``KeyExpr``), the putting session's own included, at once, as the bytes put;
a closed session hears and puts nothing more; what would run on a thread runs as a job of
whoever drives the clock."""

from __future__ import annotations

from collections.abc import Callable

import msgpack  # type: ignore[import-untyped]  # no stubs; pyproject pins it
import pytest

from executive.clock import SimClock
from executive.robots.simkit.scheduler import Scheduler
from executive.wire.zenoh_loop import LoopSample, ZenohLoop

KEY = "fourier-grx/dynalink_interface/grx/client"


def test_a_put_reaches_every_matching_subscriber_at_once_its_own_session_too() -> None:
    clock = SimClock()
    net = ZenohLoop(clock, Scheduler(clock=clock).add)
    robot, executive = net.open(), net.open()
    heard: dict[str, list[tuple[str, dict[str, object]]]] = {"robot": [], "own": [], "all": []}

    def keep(name: str) -> Callable[[LoopSample], None]:
        def on(sample: LoopSample) -> None:
            fields = msgpack.unpackb(sample.payload.to_bytes(), raw=False)
            heard[name].append((str(sample.key_expr), fields))

        return on

    robot.declare_subscriber(KEY, keep("robot"))
    executive.declare_subscriber(KEY, keep("own"))
    robot.declare_subscriber("fourier-grx/dynalink_interface/*/client", keep("all"))
    robot.declare_subscriber("fourier-grx/dynalink_interface/task/server", keep("robot"))
    publisher = executive.declare_publisher(KEY, congestion_control=None)  # QoS: taken
    publisher.put(msgpack.packb({"virtual_joystick_axis_left": [0.0, 0.5]}))
    executive.put("fourier-grx/dynalink_interface/task/client", msgpack.packb({"x": 1}))
    axes = (KEY, {"virtual_joystick_axis_left": [0.0, 0.5]})
    assert heard["robot"] == [axes]
    assert heard["own"] == [axes]  # zenoh delivers to the putting session's subscribers too
    assert heard["all"] == [axes, ("fourier-grx/dynalink_interface/task/client", {"x": 1})]
    assert net.delivered == {KEY: 1, "fourier-grx/dynalink_interface/task/client": 1}


def test_a_closed_session_hears_and_puts_nothing_more() -> None:
    clock = SimClock()
    net = ZenohLoop(clock, Scheduler(clock=clock).add)
    a, b = net.open(), net.open()
    heard: list[bytes] = []
    a.declare_subscriber(KEY, lambda s: heard.append(s.payload.to_bytes()))
    publisher = b.declare_publisher(KEY)
    publisher.put(b"1")
    a.close()
    publisher.put(b"2")
    b.close()
    publisher.put(b"3")
    b.put(KEY, b"4")
    assert heard == [b"1"]
    assert net.delivered == {KEY: 2}  # the put after b closed never left it


def test_a_job_runs_at_its_rate_on_the_simulated_clock() -> None:
    clock = SimClock()
    scheduler = Scheduler(clock=clock)
    net = ZenohLoop(clock, scheduler.add)
    runs: list[float] = []
    net.every("publisher", 50.0, lambda now, periods: runs.append(now))
    while scheduler.due() < 0.11:
        clock.advance(scheduler.due())
        scheduler.run_due(clock())
    assert runs == pytest.approx([0.0, 0.02, 0.04, 0.06, 0.08, 0.1])
