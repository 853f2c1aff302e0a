"""Authenticated commands: per-client HMAC keys, one service instance, a timestamp window
and single-use nonces.

A request that changes anything (start, stop, reset, reload) carries
``signature = hex(HMAC-SHA256(key[client_id], canonical(request)))`` where the canonical
form joins request_id, client_id, verb, args, timestamp_ns and nonce with newlines. The
service refuses a request whose client is unknown, whose signature is wrong, whose nonce
is not bound to this very service instance, whose timestamp is outside the window, or
whose nonce it has already seen (replay). Status and read-only verbs stay open to anyone
on the domain.

Replays across a restart, or to another service: instance binding
------------------------------------------------------------------
Nonces are remembered in memory, for twice the 30 s window. That alone let a captured
signed ``start`` be replayed to the *next* service instance: systemd restarts the unit
2 s after a kill -9, the new process remembers nothing, and the request was still
inside the window. So every service start draws a fresh random instance id (128 bits,
``Authenticator.instance``), and a command is accepted only if its nonce is
``<instance id>/<unique part>`` for *this* instance. The nonce is inside the signed
canonical form, so the binding cannot be changed without the key. A request signed for
instance A is refused by instance B whatever B remembers: this service after a kill -9
or a crash, the same service on another robot whose keys file holds the same operator
key, a second service on the domain. Inside one instance the window and the in-memory
nonces refuse replays as before; losing that memory at a restart is harmless precisely
because the instance id is lost with it.

Why not (only) persist the accepted nonces under the data dir: every command would wait
for a write and an fsync before it acts (and wear PC2's flash), the store needs bounds
and eviction, it trusts the wall clock not to step back across the restart, and it
protects one data dir only: a request captured on robot A still runs on robot B, and on
A itself after its data dir is wiped or was a tmpfs. ``executive_id`` (host:pid) is no
instance id either: in a container the service is PID 1 at every start, and pids are
reused.

Clients learn the instance id from the reply to the read-only ``status`` verb (its
payload's ``instance``), before each signed command (``ExecutiveClient.request``): one
more round trip, a millisecond on the robot's network. A client older than this gets
``refused: request not bound to this service instance ...`` and must be updated;
accepting its unbound nonces would reopen the replay. A new client talking to an older
service (no ``instance`` in the status reply) sends unbound nonces, which that service
accepts as before.

Keys live in a YAML file ``{client_id: hex key}`` (at least 16 bytes, hex) that must not
be readable by group or others; a looser file stops start-up, as sshd does with private
keys. The service's file holds every client's key; a client's own file (its
``--key-file``) has the same format and holds at least its own. ``atom-executive keygen
CLIENT`` writes a client's file and prints the line for the service's
(docs/operating.md, "Command keys").
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

from executive.service import files
from executive.text import printable, yaml_problem

WINDOW_NS = 30 * 10**9  # accepted clock difference between client and service
INSTANCE_SEP = "/"  # a bound nonce is "<instance id>/<unique part>"
SHOWN_INSTANCE = 32  # characters of a foreign instance id a refusal repeats
NOT_BOUND = (
    "request not bound to this service instance: the client is older than the service "
    "(update it; it must sign the instance id from a status reply into the nonce)"
)


class KeyFileError(ValueError):
    """A key file the service must not start with; the message is one printable line
    (the file may hold anything, and the message goes to a terminal)."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


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


def new_instance_id() -> str:
    """A service instance's id: random, 128 bits, drawn once per start."""
    return secrets.token_hex(16)


def new_nonce(instance: str | None = None) -> str:
    """A fresh nonce, bound to the service ``instance`` when given (what commands need;
    unbound nonces are for services older than instance binding)."""
    unique = secrets.token_hex(16)
    return unique if instance is None else f"{instance}{INSTANCE_SEP}{unique}"


def nonce_instance(nonce: str) -> str | None:
    """The instance id a nonce is bound to, or None for an unbound (old client's) nonce."""
    instance, sep, _ = nonce.partition(INSTANCE_SEP)
    return instance if sep else None


def other_instance(bound: str) -> str:
    """Why a request signed for another instance is refused (it names that instance)."""
    return (
        f"request signed for another service instance ({bound[:SHOWN_INSTANCE]!r}), not this "
        "one: the service has restarted since, or it was meant for another service; "
        "send the command again"
    )


def load_keys(path: str | Path) -> dict[str, bytes]:
    """Read ``{client_id: hex key}``; refuse files readable by group or others, anything
    but a regular file (a FIFO hung start-up; checked before the open, which does not
    wait either: ``files.read_text``), and a client id given twice (the last one won,
    silently), naming its line."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except OSError as e:
        raise KeyFileError(f"{p}: cannot read: {e.strerror}") from None
    if what := files.special(p):
        raise KeyFileError(f"{p}: {what}, not a key file")
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"{p}: permissions {stat.filemode(mode)} are too open; chmod 600 it")
    try:
        data = files.load_unique(files.read_text(p))
    except files.DuplicateKeyError as e:
        raise KeyFileError(
            f"{p}: line {e.line}: client {e.key!r} is given twice (first on line {e.first})"
        ) from None
    except yaml.YAMLError as e:
        raise KeyFileError(f"{p}: not a readable YAML key file: {yaml_problem(e)}") from None
    except OSError as e:
        raise KeyFileError(f"{p}: cannot read: {e.strerror or e}") from None
    except (ValueError, RecursionError) as e:  # files.NotAFileError, a NUL
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
    """Write a key file ``{client_id: hex key}`` with mode 600 (``keygen``, deployment
    tooling, tests). A new file is written beside ``path`` and renamed over it: the
    keys are never in a file others can read, even for an instant, and an existing
    file with a looser mode is replaced, not truncated and kept at its mode."""
    target = Path(path)
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o600)  # whatever the umask
            yaml.safe_dump({c: k.hex() for c, k in keys.items()}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


class Authenticator:
    """Checks signatures, the instance binding, the timestamp window and nonces;
    thread-safe. One per service start: ``instance`` is this start's id (a fresh random
    one unless given)."""

    def __init__(
        self,
        keys: Mapping[str, bytes],
        clock_ns: Callable[[], int] = time.time_ns,
        *,
        instance: str | None = None,
    ) -> None:
        self.keys = dict(keys)
        self.clock_ns = clock_ns
        self.instance = instance or new_instance_id()
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
        # after the signature (so the refusal is about an authentic request), before the
        # nonce memory, which another instance's requests must never reach
        bound = nonce_instance(str(request.nonce))
        if bound is None:
            return NOT_BOUND
        if bound != self.instance:  # public (in every status reply): nothing to time
            return other_instance(bound)
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
