"""One robot id, one executive (executive/service/fleet_claim.py, issue 35): claims on real
zenoh sessions through real routers on loopback ports of the test's own (in-process
sessions in router mode: the claim logic, not the service; the service and its processes:
tests/integration/test_fleet_duplicate.py).

A newcomer finds a live holder and is refused, and both sides say so; two executives that
claimed the id apart (two sites' routers not yet joined) both leave it when the routers
join; the tokens go with a closed session."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import zenoh
from structlog.testing import capture_logs

from executive.harness.fleet import client_config_file, free_port
from executive.operator.fleet import FleetClient, FleetError
from executive.service.config import FleetConfig
from executive.service.fleet import FleetPlane
from executive.service.fleet_claim import (
    HOLDER,
    REFUSED,
    Claim,
    holders_of,
    parse_token,
    request_key,
    token_key,
)
from executive.service.protocol import Answer, Code
from executive.wire.zenoh_session import close_session, load_config, open_session

ROBOT = "atom-1"


def config(mode: str, listen: int | None = None, connect: tuple[int, ...] = ()) -> zenoh.Config:
    return load_config(
        None,
        {
            "mode": json.dumps(mode),
            "listen/endpoints": json.dumps([f"tcp/127.0.0.1:{listen}"] if listen else []),
            "connect/endpoints": json.dumps([f"tcp/127.0.0.1:{p}" for p in connect]),
            "scouting/multicast/enabled": "false",
            "scouting/gossip/enabled": "false",
        },
    )


@pytest.fixture
def zenoh_net() -> Iterator[Callable[..., zenoh.Session]]:
    """``open(mode, listen=, connect=)``: sessions that are closed when the test ends."""
    with ExitStack() as scope:

        def open_(mode: str, listen: int | None = None, connect: tuple[int, ...] = ()) -> Any:
            session = open_session(config(mode, listen, connect))
            scope.callback(close_session, session)
            return session

        yield open_


def wait(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def answers(name: str) -> Callable[[Any], Answer]:
    """A request server's ``answer`` that says whose it is."""
    return lambda _request: Answer(Code.OK, name)


def test_the_key_space() -> None:
    assert token_key("fleet", ROBOT, HOLDER, "ab") == "fleet/atom-1/holder/ab"
    assert request_key("site/a", ROBOT, "ab") == "site/a/atom-1/request/ab"
    assert parse_token("site/a", "site/a/atom-1/refused/ab") == (ROBOT, REFUSED, "ab")
    assert parse_token("fleet", "fleet/atom-1/status") is None
    assert parse_token("fleet", "fleet/atom-1/other/ab") is None  # a kind this one knows not
    assert parse_token("fleet", "other/atom-1/holder/ab") is None


@pytest.mark.dds
def test_a_newcomer_is_refused_a_live_id_and_both_say_so(
    zenoh_net: Callable[..., zenoh.Session],
) -> None:
    port = free_port()
    zenoh_net("router", listen=port)
    first = Claim(zenoh_net("client", connect=(port,)), "fleet", ROBOT, "a" * 32)
    assert first.take() and first.held and first.problems() == []
    second = Claim(zenoh_net("client", connect=(port,)), "fleet", ROBOT, "b" * 32)
    with capture_logs() as logs:
        assert not second.take() and not second.held
        assert wait(lambda: first.refused == {"b" * 32}), first.refused
    assert second.holder == "a" * 32
    assert second.problems() == [
        "fleet plane: off it: robot id 'atom-1' is held by another executive (aaaaaaaa); "
        "give this executive its own fleet.robot_id and restart it"
    ]
    assert first.held and "bbbbbbbb" in first.problems()[0]
    observer = zenoh_net("client", connect=(port,))
    assert holders_of(observer, "fleet", ROBOT, 5.0) == ["a" * 32]  # the refused holds nothing
    said = {(e["log_level"], e["instance"], e.get("holder") or e.get("other")) for e in logs}
    assert ("error", "b" * 32, "a" * 32) in said, logs  # the newcomer, naming the holder
    assert ("error", "a" * 32, "b" * 32) in said, logs  # the holder, naming the newcomer


@pytest.mark.dds
def test_two_that_claimed_apart_both_leave_when_their_routers_join(
    zenoh_net: Callable[..., zenoh.Session],
) -> None:
    """Two sites, their routers not (yet) connected: each executive claims the id on its
    own; when a router joins the two, each sees the other's holder token and leaves."""
    site_a, site_b = free_port(), free_port()
    zenoh_net("router", listen=site_a)
    zenoh_net("router", listen=site_b)
    changed: list[str] = []
    a = Claim(
        zenoh_net("client", connect=(site_a,)),
        "fleet",
        ROBOT,
        "a" * 32,
        lambda: changed.append("a"),
    )
    b = Claim(
        zenoh_net("client", connect=(site_b,)),
        "fleet",
        ROBOT,
        "b" * 32,
        lambda: changed.append("b"),
    )
    assert a.take() and b.take()  # neither router knows the other's holder
    zenoh_net("router", listen=free_port(), connect=(site_a, site_b))  # the sites join
    assert wait(lambda: not a.held and not b.held), (a.held, b.held)
    assert {"a", "b"} <= set(changed)
    a.settle()
    b.settle()
    observer = zenoh_net("client", connect=(site_a,))
    assert wait(lambda: holders_of(observer, "fleet", ROBOT, 5.0) == []), "a holder is left"
    assert "claimed at once" in a.problems()[0] and "bbbbbbbb" in a.problems()[0]
    assert "claimed at once" in b.problems()[0] and "aaaaaaaa" in b.problems()[0]


@pytest.mark.dds
def test_a_closed_holder_frees_the_id_at_once(zenoh_net: Callable[..., zenoh.Session]) -> None:
    port = free_port()
    zenoh_net("router", listen=port)
    session = open_session(config("client", connect=(port,)))
    assert Claim(session, "fleet", ROBOT, "a" * 32).take()
    observer = zenoh_net("client", connect=(port,))
    assert holders_of(observer, "fleet", ROBOT, 5.0) == ["a" * 32]
    close_session(session)  # an executive stopped (or killed: its connection goes)
    assert wait(lambda: holders_of(observer, "fleet", ROBOT, 5.0) == [], 2.0)
    assert Claim(zenoh_net("client", connect=(port,)), "fleet", ROBOT, "c" * 32).take()


@pytest.mark.dds
def test_planes_that_claimed_apart_stop_answering_when_their_routers_join(
    zenoh_net: Callable[..., zenoh.Session], tmp_path: Path
) -> None:
    """The fleet plane on top of it: each executive answers for the id on its own site;
    once the sites join, neither answers a request for it, and the operator is told why."""
    site_a, site_b = free_port(), free_port()
    zenoh_net("router", listen=site_a)
    zenoh_net("router", listen=site_b)
    with ExitStack() as scope:
        planes: dict[str, FleetPlane] = {}
        for name, port in (("a", site_a), ("b", site_b)):
            zconfig = client_config_file(tmp_path / f"{name}.json5", port)
            plane = FleetPlane(FleetConfig(ROBOT, str(zconfig)), answer=answers(name))
            plane.start()
            scope.callback(plane.close)
            planes[name] = plane
        assert wait(lambda: all(p.held() for p in planes.values())), "not both on their site"
        operator = FleetClient(
            load_config(client_config_file(tmp_path / "op.json5", site_a)), view=False
        )
        scope.callback(operator.close)
        assert operator.request(ROBOT, "status")["message"] == "a"
        zenoh_net("router", listen=free_port(), connect=(site_a, site_b))  # the sites join
        assert wait(lambda: not any(p.held() for p in planes.values())), "one still answers"
        assert wait(lambda: not holders_of(operator.session, "fleet", ROBOT, 5.0))
        with pytest.raises(FleetError, match=r"holds robot id 'atom-1' \(refused to 2 exec"):
            operator.request(ROBOT, "status")
        fields = {"request_id": "r", "verb": "status"}  # to the one it had found: no one
        with pytest.raises(FleetError, match="left the fleet plane before it answered"):
            operator.query(ROBOT, fields, 2.0, holder=planes["a"].instance)
        assert all(ROBOT in p.problems()[0] for p in planes.values())


@pytest.mark.dds
def test_a_request_to_a_holder_whose_queryable_lags_its_token_is_answered(
    zenoh_net: Callable[..., zenoh.Session], tmp_path: Path
) -> None:
    """An executive's token can reach a view before its queryable (declared together,
    routed apart): a request sent between them is asked again while the token stays, not
    refused as "left" (the fleet bench's first request met it once in CI)."""
    port = free_port()
    zenoh_net("router", listen=port)
    executive = zenoh_net("client", connect=(port,))
    instance = "a" * 32
    assert Claim(executive, "fleet", ROBOT, instance).take()  # the token, no queryable yet
    operator = FleetClient(load_config(client_config_file(tmp_path / "op.json5", port)), view=False)
    asked: list[float] = []

    def answer(query: zenoh.Query) -> None:
        asked.append(time.monotonic())
        query.reply(query.key_expr, json.dumps({"message": "late"}))

    timer = threading.Timer(
        0.4, lambda: executive.declare_queryable(request_key("fleet", ROBOT, instance), answer)
    )
    try:
        assert wait(lambda: holders_of(operator.session, "fleet", ROBOT, 5.0) == [instance])
        began = time.monotonic()
        timer.start()
        fields = {"request_id": "r", "verb": "status"}
        assert operator.query(ROBOT, fields, 5.0, holder=instance)["message"] == "late"
        assert len(asked) == 1 and asked[0] - began >= 0.4  # asked once it could be
    finally:
        timer.cancel()
        operator.close()
