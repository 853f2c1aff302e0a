"""Status over DDS: published on change and as a heartbeat; late joiners get the latest."""

from __future__ import annotations

import time

import py_trees
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from behaviours.actions.basic import Log, Wait
from executive.service.protocol import STATUS_QOS, STATUS_TOPIC
from executive.service.status import StatusPublisher, state_line
from executive.wire import dds
from executive.wire.gen.own.atom_executive.msg import Status_
from tests.rigs import Rig


def test_status_tracks_a_mission_and_late_joiners_see_the_latest(rig: Rig, dds_domain: int) -> None:
    clock = [0.0]
    pub = StatusPublisher(
        rig.participant,
        rig.ex,
        interface_variant="seed",
        profile="atom-sdk",
        clock=lambda: clock[0],
    )
    assert pub.maybe_publish()
    assert not pub.maybe_publish()  # nothing changed, heartbeat not due
    clock[0] += 0.6
    assert pub.maybe_publish()  # heartbeat (2 Hz)
    mission = py_trees.composites.Sequence(
        "greet", memory=True, children=[Log("hello operator"), Wait(10)]
    )
    rig.ex.start_mission("greet", mission)
    rig.state()
    rig.ex.tick()
    assert pub.maybe_publish()
    with dds.open_participant(dds_domain) as late:
        reader = DataReader(late, Topic(late, STATUS_TOPIC, Status_), qos=STATUS_QOS)
        got = None
        for _ in range(200):
            samples = reader.take(N=10)
            if samples:
                got = samples[-1]
                break
            time.sleep(0.01)
        assert got is not None, "transient-local status reached the late joiner"
        assert got.state == "RUNNING" and got.mission == "greet" and got.run_id
        assert got.active_node.endswith("greet/Wait 10 s")
        assert got.feed == ["hello operator"]
        paths = [n.path for n in got.tree]
        assert paths[0] == "Atom" and "Atom/Priorities/Safety Watchdog" in paths
        assert any(n.path.endswith("Log") and n.status == "SUCCESS" for n in got.tree)
        assert got.interface_variant == "seed" and got.version
    assert state_line(rig.ex).startswith("RUNNING greet")
