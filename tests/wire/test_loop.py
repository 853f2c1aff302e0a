"""The in-process wire of simulated time (``executive.wire.loop``) carries what DDS carries:
the encoded sample, at once, to every reader of the topic, each reader keeping its history,
stamped on the bus's simulated clock; ``RobotIO``, ``LatestReader`` and the raw codec
functions speak it as they speak DDS."""

from __future__ import annotations

import gc

import numpy as np

from executive.clock import SimClock
from executive.robots.atom.interface import Interface
from executive.robots.atom.topics import AtomIO
from executive.wire import dds, loop
from executive.wire.codec import raw_take, raw_take_stamped, raw_write
from executive.wire.robot_io import LatestReader, Side


def test_a_write_reaches_every_reader_at_once_each_with_its_history() -> None:
    clock = SimClock(2.0)
    bus = loop.LoopBus(clock)
    topic = loop.topic(bus, "rt/x", Interface().SwitchUpperControl_)
    writer = loop.writer(bus, topic, dds.EVENT_WRITER_QOS)
    state = loop.reader(bus, topic, dds.STATE_READER_QOS)  # keep last 1
    events = loop.reader(bus, topic, dds.EVENT_READER_QOS)  # keep last 64
    heard: list[int] = []
    events.on_data = lambda r: heard.append(len(r._samples))
    for flag in (True, False, True):
        writer.write(Interface().SwitchUpperControl_(flag=flag))
    assert heard == [1, 2, 3]  # on the writing thread, one call a sample
    assert [s.flag for s in events.take(N=64)] == [True, False, True]
    assert [s.flag for s in state.take(N=64)] == [True]  # only the newest
    late = loop.reader(bus, topic, dds.STATE_READER_QOS)
    assert late.take() == []  # volatile: no sample from before it was made
    writer.write(Interface().SwitchUpperControl_(flag=False))
    ((data, stamp),) = raw_take_stamped(late)
    assert stamp == clock.wall_ns() == round((SimClock.EPOCH + 2.0) * 1e9)
    assert Interface().SwitchUpperControl_.deserialize(data).flag is False


def test_raw_bytes_are_what_a_stock_reader_decodes() -> None:
    """The codec's bytes on the loop are read by cyclonedds-python's own deserializer (what
    we did not write), padded as a DDS writer pads them."""
    bus = loop.LoopBus(SimClock())
    robot = AtomIO(bus, side=Side.ROBOT, records=["upper_state"])
    stock = loop.reader(
        bus, loop.topic(bus, "rt/upper/state", Interface().UpperState_), dds.STATE_READER_QOS
    )
    record = robot.codec("upper_state").zeros()
    record["motor_state"]["q"] = np.arange(17) * 0.1
    record["fsm_id"] = 7
    robot.write_record("upper_state", record)
    (sample,) = stock.take()
    assert sample.fsm_id == 7
    assert np.allclose([m.q for m in sample.motor_state], np.arange(17) * 0.1, atol=1e-6)
    raw_write(robot.writers["upper_state"], robot.codec("upper_state").encode(record)[:-1])
    (data,) = raw_take(stock)
    assert len(data) % 4 == 0  # padded to 4, as the stock writer pads


def test_the_executive_side_reads_the_robot_side_on_simulated_time() -> None:
    clock = SimClock(10.0)
    bus = loop.LoopBus(clock)
    robot = AtomIO(bus, side=Side.ROBOT)
    executive = AtomIO(bus, records=["emergency_state"], polled=["emergency_state"])
    estop = executive.readers["emergency_state"]
    assert estop.latest is None
    record = robot.codec("emergency_state").zeros()
    robot.write_record("emergency_state", record)
    assert estop.latest is not None  # taken when written: the least delay (polled readers)
    clock.advance(10.2)
    record["soft_emergency_triggered"] = True
    robot.write_record("emergency_state", record)
    clock.advance(10.5)  # taken 0.3 s after it was written
    latest = estop.latest
    assert latest is not None and bool(latest.sample["soft_emergency_triggered"])
    assert abs(latest.received - 10.2) < 1e-6  # its arrival, on the simulated clock
    commands = AtomIO(bus, side=Side.ROBOT)  # the robot's command readers listen
    got: list[bool] = []
    commands.readers["switch_upper_control"].add_callback(lambda s: got.append(s.flag))
    executive.write("switch_upper_control", executive.interface.SwitchUpperControl_(flag=True))
    assert got == [True]


def test_a_reader_let_go_leaves_the_bus() -> None:
    bus = loop.LoopBus(SimClock())
    topic = loop.topic(bus, "rt/x", Interface().SwitchUpperControl_)
    reader = LatestReader(bus, topic, dds.STATE_READER_QOS)
    assert bus._readers["rt/x"]
    del reader
    gc.collect()
    assert not bus._readers["rt/x"]  # its finalizer closed the loop's reader (delete_entities)
