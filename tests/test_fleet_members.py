"""Fleet membership's bookkeeping (executive/service/fleet_members.py): live, lost, left and
missing from the claim tokens and the goodbyes, in whatever order zenoh delivers them, and
a store's records merged into a view's own."""

from __future__ import annotations

from executive.service.fleet_members import LEFT, LIVE, LOST, MISSING, Member, Membership


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_gone_without_a_goodbye_is_lost_since_then() -> None:
    clock = Clock()
    changes: list[Member] = []
    m = Membership(clock=clock, on_change=changes.append)
    m.token("atom-1", "i1", True)
    m.status("atom-1", "i1", b'{"state": "IDLE"}')
    clock.now = 1005.0
    m.token("atom-1", "i1", False)
    member = m.member("atom-1")
    assert member is not None and member.condition == LOST and member.since == 1005.0
    assert member.status == b'{"state": "IDLE"}' and member.status_at == 1000.0
    assert [c.condition for c in changes] == [LIVE, LOST]


def test_a_goodbye_before_or_after_the_token_goes_is_left() -> None:
    clock = Clock()
    m = Membership(clock=clock)
    m.token("a", "i1", True)
    m.goodbye("a", "i1")
    m.token("a", "i1", False)
    assert (m.member("a") or Member("a")).condition == LEFT
    m.token("b", "i2", True)
    clock.now = 1001.0
    m.token("b", "i2", False)  # the token's withdrawal overtook the goodbye
    clock.now = 1002.0
    m.goodbye("b", "i2")
    b = m.member("b")
    assert b is not None and b.condition == LEFT and b.since == 1001.0
    m.status("b", "i2", b"{}")  # a late put of the executive that left
    assert (m.member("b") or Member("b")).condition == LEFT


def test_a_restarted_executive_is_live_again_under_its_new_instance() -> None:
    m = Membership(clock=Clock())
    m.token("a", "i1", True)
    m.token("a", "i1", False)
    m.token("a", "i2", True)
    a = m.member("a")
    assert a is not None and a.condition == LIVE and a.instance == "i2"
    m.token("a", "i1", False)  # the old one's withdrawal, late: the new one stays live
    assert (m.member("a") or Member("a")).condition == LIVE


def test_an_expected_robot_is_missing_until_it_comes() -> None:
    m = Membership(["ghost-1", "atom-1"], clock=Clock())
    assert [(x.robot_id, x.condition, x.since) for x in m.members()] == [
        ("atom-1", MISSING, None),
        ("ghost-1", MISSING, None),
    ]
    m.status("atom-1", "i1", b"{}")  # its status before its token's history: live
    assert (m.member("atom-1") or Member("x")).condition == LIVE


def test_a_stores_record_fills_in_what_the_view_did_not_see_and_never_overrides_it() -> None:
    m = Membership(clock=Clock())
    m.merge({"robot_id": "old", "condition": LOST, "since": 900.0, "instance": "i0"}, b"{}")
    old = m.member("old")
    assert old is not None and old.condition == LOST and old.since == 900.0
    m.token("new", "i1", True)  # seen live here, at 1000
    m.merge({"robot_id": "new", "condition": LOST, "since": 950.0, "instance": "i0"}, None)
    assert (m.member("new") or Member("x")).condition == LIVE
    m.merge({"robot_id": 3, "condition": "gone"}, None)  # nonsense: ignored
    assert {x.robot_id for x in m.members()} == {"old", "new"}
