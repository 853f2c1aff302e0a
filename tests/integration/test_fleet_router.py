"""The shipped loopback router takes a site's worth of sessions (issue 34, 3): with zenoh's
shared memory on (its default) a router refuses every session past about 350 ("No
available SHM counters"), which the scale benchmark met at 500 robots; the shipped router
configs turn it off. 400 bare client sessions from this process, each with a token."""

from __future__ import annotations

import json
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from executive.harness.fleet import free_port, start_router
from executive.harness.stack import running_stack
from executive.wire.zenoh_session import close_session, load_config, open_session

pytestmark = pytest.mark.dds

SESSIONS = 400


def test_the_router_takes_400_sessions(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "client.json5"
    config.write_text(
        json.dumps(
            {
                "mode": "client",
                "connect": {"endpoints": [f"tcp/127.0.0.1:{port}"], "timeout_ms": 5000},
                "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
            }
        )
    )
    with ExitStack() as scope:
        start_router(scope.enter_context(running_stack(tmp_path / "router")), port)
        sessions = []
        for i in range(SESSIONS):
            session = open_session(load_config(config))  # ConfigError: refused
            scope.callback(close_session, session)
            sessions.append((session, session.liveliness().declare_token(f"fleet/r{i}/holder/x")))
        watch = sessions[0][0]
        keys: set[str] = set()
        deadline = time.monotonic() + 30.0
        while len(keys) < SESSIONS and time.monotonic() < deadline:
            # a token declared last may reach the router after the first get asked (a
            # loaded CI saw 399): asked again until every one is there, or the deadline
            tokens = list(watch.liveliness().get("fleet/*/holder/*", timeout=5.0))
            keys = {str(t.ok.key_expr) for t in tokens if t.ok is not None}
        assert len(keys) == SESSIONS, len(keys)
