"""HMAC authentication: good requests pass; forged, stale, replayed or unknown ones do not,
nor ones signed for another instance of the service or by a client that binds none."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from executive.service.auth import (
    NOT_BOUND,
    WINDOW_NS,
    Authenticator,
    KeyFileError,
    load_keys,
    new_nonce,
    nonce_instance,
    sign,
    write_key_file,
)

KEY = bytes(range(32))
INSTANCE = "a" * 32  # the instance id of the Authenticators below


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
    r = Req("r1", "operator", "start", '{"mission": "wave"}', now, new_nonce(INSTANCE))
    r = replace(r, **changes)  # type: ignore[arg-type]
    return replace(
        r, signature=sign(KEY, r.request_id, r.client_id, r.verb, r.args, r.timestamp_ns, r.nonce)
    )


def authenticator(now: int, instance: str = INSTANCE) -> Authenticator:
    return Authenticator({"operator": KEY}, clock_ns=lambda: now, instance=instance)


def test_good_request_then_replay() -> None:
    now = 10**18
    auth = authenticator(now)
    req = signed(now)
    assert auth.check(req) is None
    assert auth.check(req) == "replayed request (nonce already used)"


def test_a_request_accepted_by_one_instance_is_refused_by_the_next() -> None:
    """The replay across a restart: instance A accepts a signed start; B (the service
    started again, remembering nothing, the request still inside the window) refuses the
    same bytes, saying why."""
    now = 10**18
    first, second = Authenticator({"operator": KEY}), Authenticator({"operator": KEY})
    assert first.instance != second.instance and len(first.instance) == 32
    req = signed(now, nonce=new_nonce(first.instance))
    assert authenticator(now, first.instance).check(req) is None
    why = authenticator(now + 8 * 10**9, second.instance).check(req)
    assert why is not None and why.startswith("request signed for another service instance")
    assert repr(first.instance) in why and "send the command again" in why


def test_an_unbound_nonce_is_refused_in_words() -> None:
    """An older client signs a bare nonce: refused, and told to update, not 'bad signature'."""
    now = 10**18
    assert authenticator(now).check(signed(now, nonce=new_nonce())) == NOT_BOUND
    assert authenticator(now).check(signed(now, nonce="")) == NOT_BOUND
    assert "update it" in NOT_BOUND


def test_the_binding_is_signed() -> None:
    """Re-binding a captured request to the running instance breaks its signature."""
    now = 10**18
    req = signed(now, nonce=new_nonce("b" * 32))
    rebound = replace(req, nonce=INSTANCE + req.nonce[32:])
    assert authenticator(now).check(rebound) == "bad signature"


def test_nonce_instance() -> None:
    assert nonce_instance(new_nonce(INSTANCE)) == INSTANCE
    assert nonce_instance(new_nonce()) is None
    assert nonce_instance("x/y/z") == "x" and nonce_instance("/y") == ""


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
    auth = authenticator(now)
    assert auth.check(tamper(signed(now))) == why  # type: ignore[operator]


def test_stale_and_future_timestamps_are_refused() -> None:
    now = 10**18
    auth = authenticator(now)
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


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("operator: [\n", "not a readable YAML key file: while parsing"),
        ('"\\x1b[2J\\nstate: IDLE": zz\n', "key is not hex"),  # YAML escapes: ESC, newline
        ("[" * 1000, "not a readable YAML key file"),  # RecursionError in PyYAML
    ],
    ids=["yaml-error", "escape-in-a-client-id", "nested-too-deep"],
)
def test_bad_key_files_are_one_printable_line(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "keys.yaml"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(KeyFileError, match=words) as err:
        load_keys(path)
    message = str(err.value)
    assert "\n" not in message and "\x1b" not in message, message


def test_a_client_id_given_twice_is_refused_naming_the_line(tmp_path: Path) -> None:
    """Two ``alice:`` lines were accepted, the last one winning without a word."""
    path = tmp_path / "keys.yaml"
    path.write_text(f"alice: {'ab' * 32}\nbob: {'cd' * 32}\nalice: {'ef' * 32}\n")
    path.chmod(0o600)
    with pytest.raises(KeyFileError) as err:
        load_keys(path)
    assert str(err.value) == f"{path}: line 3: client 'alice' is given twice (first on line 1)"


def test_a_fifo_or_a_device_is_no_key_file(tmp_path: Path) -> None:
    """A FIFO as keys_file hung start-up without a log line: refused before any open."""
    fifo = tmp_path / "keys.fifo"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(KeyFileError, match="keys.fifo: a FIFO, not a key file"):
        load_keys(fifo)
    with pytest.raises(KeyFileError, match="/dev/null: a character device, not a key file"):
        load_keys("/dev/null")
