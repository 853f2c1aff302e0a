"""The secure fleet layout (issue 34, 2), real processes on tls/127.0.0.1.

Certificates made here by ``atom-executive fleet-site``'s code (openssl): a site CA, the
router's, robots atom-1 and adam-1, an operator's and a monitor's. The router
(``atom-executive router``, its own process) runs the layout's config: TLS only, mutual
authentication, access control from the roster. atom-1's executive (the service, its own
process, no robot: this is about the plane) is on it with its own certificate, its
requests signed as ever. Raw zenoh sessions with one certificate or another try what a
peer should not be able to do, each beside what it may do (so a test that sees nothing
is not a test that could not see anything).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import zenoh

from executive.harness.fleet import (
    Site,
    fleet_client,
    fleet_mapping,
    free_port,
    secure_site,
    start_router,
)
from executive.harness.stack import Stack, running_stack
from executive.operator.fleet import FleetClient, FleetError
from executive.service.fleet_site import client_config, make_ca, make_cert
from executive.wire.zenoh_session import ConfigError, load_config, open_session

pytestmark = pytest.mark.dds

KEY = os.urandom(32)
ROBOTS = ("atom-1", "adam-1")
QUICK = {"connect/timeout_ms": "3000", "connect/exit_on_failure": "true"}


@dataclass
class Secure:
    site: Site
    atom: Stack
    operator: FleetClient
    work: Path

    def session(self, role: str, name: str) -> zenoh.Session:
        """A raw zenoh session with ``role`` ``name``'s certificate of the site."""
        return open_session(load_config(self.site.config(role, name), QUICK))


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secure]:
    work = tmp_path_factory.mktemp("secure")
    port = free_port()
    site = secure_site(work / "site", port, ROBOTS)
    with ExitStack() as scope:
        router = scope.enter_context(running_stack(work / "router"))
        start_router(router, port, site=site)
        atom = scope.enter_context(running_stack(work / "atom-1"))
        atom.key = KEY
        atom.write_config(fleet=fleet_mapping(atom, "atom-1", port, site=site))
        atom.start_service()
        operator = fleet_client(work, port, key=KEY, site=site)
        scope.callback(operator.close)
        assert operator.wait_for(lambda c: "atom-1" in c.robots, 30), (
            work / "atom-1" / "executive.log"
        ).read_text()[-3000:]
        yield Secure(site, atom, operator, work)


def collect(session: zenoh.Session, key: str) -> tuple[list[str], Any]:
    """Payloads put on ``key`` as ``session`` receives them, and the subscriber."""
    got: list[str] = []
    sub = session.declare_subscriber(key, lambda s: got.append(s.payload.to_string()))
    return got, sub


def test_the_operator_sees_the_robot_and_its_signed_requests_are_answered(
    secure: Secure,
) -> None:
    row = secure.operator.row("atom-1") or {}
    assert row["condition"] == "live" and row["kind"] == "atom", row
    watch = secure.session("operator", "operator")
    try:  # live, through a wildcard subscription as the view's (not only the store's record)
        seen, sub = collect(watch, "fleet/*/status")
        time.sleep(2.0)
        sub.undeclare()  # type: ignore[no-untyped-call]
    finally:
        watch.close()  # type: ignore[no-untyped-call]
    assert len(seen) >= 5, len(seen)  # 5 Hz
    reply = secure.operator.request("atom-1", "stop")  # signed with KEY, bound to atom-1
    assert reply["code"] in (0, 4), reply  # authentic: nothing runs, so REFUSED at most
    assert "signature" not in reply["message"], reply
    unsigned = secure.operator.send("atom-1", "stop", {}, "", 5.0)  # no nonce: not signed
    assert unsigned["code"] != 0 and unsigned["code"] != 4, unsigned  # refused as ever
    status = secure.operator.request("atom-1", "status")
    assert status["code"] == 0 and json.loads(status["payload"]), status


def test_a_peer_without_a_certificate_gets_no_session(secure: Secure) -> None:
    bare = client_config(
        secure.site.layout.directory, "none", [f"tls/127.0.0.1:{secure.site.port}"]
    )
    tls = bare["transport"]["link"]["tls"]
    del tls["connect_private_key"], tls["connect_certificate"]
    path = secure.work / "no-cert.json5"
    path.write_text(json.dumps(bare))
    with pytest.raises(ConfigError):
        open_session(load_config(path, QUICK))
    plain = secure.work / "plain-tcp.json5"  # TLS's port, spoken to in plain TCP
    plain.write_text(
        json.dumps(
            {
                "mode": "client",
                "connect": {"endpoints": [f"tcp/127.0.0.1:{secure.site.port}"]},
                "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
            }
        )
    )
    with pytest.raises(ConfigError):
        open_session(load_config(plain, QUICK))
    # the site's own operator certificate opens one (the refusals above are not a broken port)
    open_session(load_config(secure.site.config("operator", "operator"), QUICK)).close()  # type: ignore[no-untyped-call]


def test_a_certificate_from_another_ca_gets_no_session(secure: Secure) -> None:
    other = secure.work / "other-ca"
    other.mkdir()
    make_ca(other, "elsewhere")
    make_cert(other, "operator.operator")  # the very common name, from another CA
    config = client_config(other, "operator.operator", [f"tls/127.0.0.1:{secure.site.port}"])
    config["transport"]["link"]["tls"]["root_ca_certificate"] = str(
        secure.site.layout.directory / "ca.pem"  # it trusts the site's router, all the same
    )
    path = other / "client.json5"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError):
        open_session(load_config(path, QUICK))


def test_a_robot_can_neither_publish_another_robots_status_nor_answer_its_requests(
    secure: Secure,
) -> None:
    watch = secure.session("operator", "operator")
    adam = secure.session("robot", "adam-1")
    try:
        atom_seen, s1 = collect(watch, "fleet/atom-1/status")
        adam_seen, s2 = collect(watch, "fleet/adam-1/status")
        holder = secure.operator.instance("atom-1")
        forged_answer = adam.declare_queryable(
            f"fleet/atom-1/request/{holder}",
            lambda q: q.reply(q.key_expr, json.dumps({"code": 0, "message": "forged"})),
        )
        forged_token = adam.liveliness().declare_token("fleet/atom-1/holder/forged")
        time.sleep(1.0)
        for _ in range(5):
            adam.put("fleet/atom-1/status", "forged")
            adam.put("fleet/adam-1/status", json.dumps({"robot": "adam"}))  # its own: allowed
            time.sleep(0.1)
        time.sleep(1.0)
        assert adam_seen, "adam-1's own status never arrived: the test could not see a forgery"
        assert atom_seen and "forged" not in atom_seen, atom_seen[-3:]  # the real ones only
        answers = [
            r.ok.payload.to_string()
            for r in watch.get(
                f"fleet/atom-1/request/{holder}",
                payload=json.dumps({"verb": "status"}),
                target=zenoh.QueryTarget.ALL,
                consolidation=zenoh.ConsolidationMode.NONE,
                timeout=3.0,
            )
            if r.ok is not None
        ]
        assert answers and not any("forged" in a for a in answers), answers
        holders = [
            str(r.ok.key_expr)
            for r in watch.liveliness().get("fleet/atom-1/holder/*", timeout=2.0)
            if r.ok is not None
        ]
        assert holders == [f"fleet/atom-1/holder/{holder}"], holders
        forged_answer.undeclare()  # type: ignore[no-untyped-call]
        forged_token.undeclare()  # type: ignore[no-untyped-call]
        s1.undeclare()
        s2.undeclare()
    finally:
        adam.close()  # type: ignore[no-untyped-call]
        watch.close()  # type: ignore[no-untyped-call]


def test_a_monitor_reads_the_fleet_but_its_request_is_denied(secure: Secure) -> None:
    log = secure.atom.log_path("executive")
    monitor = fleet_client(
        secure.work, secure.site.port, key=KEY, site=secure.site, role=("monitor", "monitor")
    )
    try:
        assert monitor.wait_for(lambda c: "atom-1" in c.robots, 10), monitor.rows()
        assert (monitor.row("atom-1") or {})["condition"] == "live"
        assert monitor.load_stores() >= 1  # the membership store is a read: allowed
        holder = secure.operator.instance("atom-1")
        before = log.read_text(errors="replace").count('"fleet request"')
        with pytest.raises(FleetError):
            monitor.query("atom-1", {"verb": "stop"}, 3.0, holder=holder)
        # the operator's, the same moment: answered (the channel works; the monitor's is denied)
        assert secure.operator.request("atom-1", "stop")["code"] in (0, 4)
        time.sleep(0.5)
        after = log.read_text(errors="replace").count('"fleet request"')
        assert after == before + 1, (before, after)  # the operator's only
    finally:
        monitor.close()


def test_two_sites_joined_over_tls_see_each_others_robots(tmp_path: Path) -> None:
    """Router to router with mutual TLS (one company CA), each router's access control
    letting the other site's router pass: an operator of site B reads and commands a
    robot of site A."""
    pa, pb = free_port(), free_port()
    shared = tmp_path / "company"  # one CA directory: both sites' certificates from it
    a = secure_site(shared, pa, ("atom-1",), name="cafe", routers=("lab",))
    b = secure_site(shared, pb, (), name="lab", routers=("cafe",), connect=(pa,))
    with ExitStack() as scope:
        ra = scope.enter_context(running_stack(tmp_path / "router-a"))
        start_router(ra, pa, site=a)
        rb = scope.enter_context(running_stack(tmp_path / "router-b"))
        start_router(rb, pb, site=b)
        atom = scope.enter_context(running_stack(tmp_path / "atom-1"))
        atom.key = KEY
        atom.write_config(fleet=fleet_mapping(atom, "atom-1", pa, site=a))
        atom.start_service()
        operator = fleet_client(tmp_path, pb, key=KEY, site=b)
        scope.callback(operator.close)
        assert operator.wait_for(lambda c: "atom-1" in c.robots, 30), operator.rows()
        assert operator.request("atom-1", "stop")["code"] in (0, 4)


def test_a_robot_that_stops_cleanly_is_left_not_lost(secure: Secure) -> None:
    """Its goodbye crosses the access control (a robot hears of the views' interest)."""
    with ExitStack() as scope:
        adam = scope.enter_context(running_stack(secure.work / "adam-1"))
        adam.key = KEY
        adam.write_config(fleet=fleet_mapping(adam, "adam-1", secure.site.port, site=secure.site))
        adam.start_service()
        view = secure.operator
        assert view.wait_for(lambda c: (c.row("adam-1") or {}).get("condition") == "live", 30)
        adam.stop("executive")  # SIGTERM: a clean stop
        assert view.wait_for(lambda c: (c.row("adam-1") or {}).get("condition") == "left", 10), (
            view.row("adam-1")
        )
