"""Real-time as shipped: the service asks for SCHED_FIFO by default, within what the unit
grants, and a refusal is one clear line and normal priority, not an error."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import structlog

from executive.motion.streamer import MotionStreamer
from executive.robots.atom import adapter as atom
from executive.seam.profile import load_profile
from executive.service.config import ServiceConfig, parse_config
from executive.wire import dds

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def test_the_default_asks_for_sched_fifo_within_the_units_limit() -> None:
    unit = (DEPLOY / "atom-executive.service").read_text()
    limit = int(re.search(r"^LimitRTPRIO=(\d+)", unit, re.M).group(1))  # type: ignore[union-attr]
    default = ServiceConfig().stream_priority
    assert default is not None and default >= 1 and default + 1 <= limit  # + 1: the reflex
    assert parse_config({"stream_priority": None}).stream_priority is None  # normal, if asked


@pytest.mark.dds
def test_a_refused_priority_is_one_line_naming_what_it_got_and_why(dds_domain: int) -> None:
    with dds.open_participant(dds_domain) as p, structlog.testing.capture_logs() as logs:
        profile = load_profile()
        adapter = atom.open(profile, participant=p)
        streamer = MotionStreamer(adapter.streams, profile, priority=100)  # no kernel grants 100
        streamer.start()
        deadline = time.monotonic() + 5
        while not streamer.stats.scheduling:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        streamer.stop()
    lines = [e for e in logs if e["event"].startswith("motion streamer")]
    assert len(lines) == 1, lines
    (line,) = lines
    assert line["event"] == "motion streamer runs at normal priority"
    assert line["log_level"] == "warning" and line["policy"] == "SCHED_OTHER"
    assert line["wanted"] == "SCHED_FIFO 100" and "outside 1..99" in line["reason"]
