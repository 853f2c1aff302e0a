"""HMAC authentication: good requests pass; forged, stale, replayed or unknown ones do not."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from executive.auth import (
    WINDOW_NS,
    Authenticator,
    KeyFileError,
    load_keys,
    new_nonce,
    sign,
    write_key_file,
)

KEY = bytes(range(32))


@dataclass(frozen=True)
class Req:
    request_id: str
    client_id: str
    verb: str
    args: str
    timestamp_ns: int
    nonce: str
    signature: str = ""


def signed(now: int, **changes: object) -> Req:
    r = replace(Req("r1", "operator", "start", '{"mission": "wave"}', now, new_nonce()), **changes)  # type: ignore[arg-type]
    return replace(
        r, signature=sign(KEY, r.request_id, r.client_id, r.verb, r.args, r.timestamp_ns, r.nonce)
    )


def test_good_request_then_replay() -> None:
    now = 10**18
    auth = Authenticator({"operator": KEY}, clock_ns=lambda: now)
    req = signed(now)
    assert auth.check(req) is None
    assert auth.check(req) == "replayed request (nonce already used)"


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (lambda r: replace(r, args='{"mission": "other"}'), "bad signature"),
        (lambda r: replace(r, verb="reset"), "bad signature"),
        (lambda r: replace(r, signature="00" * 32), "bad signature"),
        # non-ASCII text: compare_digest raised TypeError on it (found by tests/fuzz)
        (lambda r: replace(r, signature="é" * 64), "bad signature"),
        (lambda r: replace(r, signature="\ud800"), "bad signature"),
        (lambda r: replace(r, client_id="mallory"), "unknown client 'mallory'"),
    ],
)
def test_tampered_requests_are_refused(tamper: object, why: str) -> None:
    now = 10**18
    auth = Authenticator({"operator": KEY}, clock_ns=lambda: now)
    assert auth.check(tamper(signed(now))) == why  # type: ignore[operator]


def test_stale_and_future_timestamps_are_refused() -> None:
    now = 10**18
    auth = Authenticator({"operator": KEY}, clock_ns=lambda: now)
    assert "window" in (auth.check(signed(now - WINDOW_NS - 1)) or "")
    assert "window" in (auth.check(signed(now + WINDOW_NS + 1)) or "")


def test_key_file_permissions_and_content(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    write_key_file(path, {"operator": KEY})
    assert load_keys(path) == {"operator": KEY}
    os.chmod(path, 0o644)
    with pytest.raises(KeyFileError, match="too open"):
        load_keys(path)
    os.chmod(path, 0o600)
    path.write_text("operator: zz\n")
    with pytest.raises(KeyFileError, match="not hex"):
        load_keys(path)
    path.write_text("operator: abcd\n")
    with pytest.raises(KeyFileError, match="shorter"):
        load_keys(path)
    with pytest.raises(KeyFileError, match="cannot read"):
        load_keys(tmp_path / "none.yaml")
