"""Authenticated commands: per-client HMAC keys, a timestamp window and single-use nonces.

A request that changes anything (start, stop, reset, reload) carries
``signature = hex(HMAC-SHA256(key[client_id], canonical(request)))`` where the canonical
form joins request_id, client_id, verb, args, timestamp_ns and nonce with newlines. The
service refuses a request whose client is unknown, whose signature is wrong, whose
timestamp is outside the window, or whose nonce it has already seen (replay). Status and
read-only verbs stay open to anyone on the domain.

Keys live in a YAML file ``{client_id: hex key}`` that must not be readable by group or
others; a looser file stops start-up, as sshd does with private keys.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

WINDOW_NS = 30 * 10**9  # accepted clock difference between client and service


class KeyFileError(ValueError):
    """A key file the service must not start with."""


def canonical(
    request_id: str, client_id: str, verb: str, args: str, timestamp_ns: int, nonce: str
) -> bytes:
    return "\n".join([request_id, client_id, verb, args, str(timestamp_ns), nonce]).encode()


def sign(
    key: bytes, request_id: str, client_id: str, verb: str, args: str, timestamp_ns: int, nonce: str
) -> str:
    return hmac.new(
        key, canonical(request_id, client_id, verb, args, timestamp_ns, nonce), hashlib.sha256
    ).hexdigest()


def new_nonce() -> str:
    return secrets.token_hex(16)


def load_keys(path: str | Path) -> dict[str, bytes]:
    """Read ``{client_id: hex key}``; refuse files readable by group or others."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError as e:
        raise KeyFileError(f"{p}: cannot read: {e.strerror}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"{p}: permissions {stat.filemode(mode)} are too open; chmod 600 it")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise KeyFileError(f"{p}: not a readable YAML key file: {e}") from None
    if not isinstance(data, dict) or not data:
        raise KeyFileError(f"{p}: must map client ids to hex keys")
    keys: dict[str, bytes] = {}
    for client, hexkey in data.items():
        try:
            key = bytes.fromhex(str(hexkey))
        except ValueError:
            raise KeyFileError(f"{p}: {client}: key is not hex") from None
        if len(key) < 16:
            raise KeyFileError(f"{p}: {client}: key shorter than 16 bytes")
        keys[str(client)] = key
    return keys


def write_key_file(path: str | Path, keys: Mapping[str, bytes]) -> None:
    """Create a key file with safe permissions (for deployment tooling and tests)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        yaml.safe_dump({c: k.hex() for c, k in keys.items()}, f)


class Authenticator:
    """Checks signatures, the timestamp window and nonces; thread-safe."""

    def __init__(
        self, keys: Mapping[str, bytes], clock_ns: Callable[[], int] = time.time_ns
    ) -> None:
        self.keys = dict(keys)
        self.clock_ns = clock_ns
        self._seen: dict[str, int] = {}  # nonce -> expiry
        self._lock = threading.Lock()

    def check(self, request: Any) -> str | None:
        """None if the request is authentic and fresh, else why not."""
        key = self.keys.get(request.client_id)
        if key is None:
            return f"unknown client {request.client_id!r}"
        expected = sign(
            key,
            request.request_id,
            request.client_id,
            request.verb,
            request.args,
            request.timestamp_ns,
            request.nonce,
        )
        # as bytes: compare_digest refuses str with non-ASCII characters (a TypeError)
        if not hmac.compare_digest(
            expected.encode(), str(request.signature).encode("utf-8", "surrogatepass")
        ):
            return "bad signature"
        now = self.clock_ns()
        if abs(now - int(request.timestamp_ns)) > WINDOW_NS:
            return "timestamp outside the accepted window (check the clocks)"
        with self._lock:
            for nonce in [n for n, exp in self._seen.items() if exp < now]:
                del self._seen[nonce]
            if not request.nonce or request.nonce in self._seen:
                return "replayed request (nonce already used)"
            self._seen[request.nonce] = now + 2 * WINDOW_NS
        return None
