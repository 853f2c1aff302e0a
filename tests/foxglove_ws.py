"""A minimal Foxglove WebSocket client for tests: RFC 6455 over a plain socket.

foxglove-sdk brings a server and no client, and the live view's test must be a real
client on the wire (a handshake with the ``foxglove.sdk.v1`` subprotocol, masked client
frames, the server's binary message-data frames), not a call into the SDK. Loopback
only: ``connect`` refuses any other address.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import ipaddress
import json
import os
import socket
import struct
import time
from dataclasses import dataclass
from typing import Any

SUBPROTOCOL = "foxglove.sdk.v1"
GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455's, for Sec-WebSocket-Accept
MESSAGE_DATA = 0x01  # the server's binary opcode for a message on a subscription


@dataclass(frozen=True)
class Received:
    subscription: int
    log_time: int
    payload: bytes

    def json(self) -> Any:
        return json.loads(self.payload)


class FoxgloveClient:
    def __init__(self, host: str, port: int, timeout: float = 5.0) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"tests talk to loopback only, not {host}")
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self._buf = b""
        self.server_info: dict[str, Any] = {}
        self.channels: dict[str, dict[str, Any]] = {}  # topic -> advertised channel
        self.data: list[Received] = []
        self._next_sub = 1
        self._handshake(host, port)

    def _handshake(self, host: str, port: int) -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {SUBPROTOCOL}\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        while b"\r\n\r\n" not in self._buf:
            self._fill()
        head, self._buf = self._buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        if " 101 " not in lines[0]:
            raise ConnectionError(f"no upgrade: {lines[0]}")
        headers = {k.lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:])}
        accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
        if headers.get("sec-websocket-accept") != accept:
            raise ConnectionError("bad Sec-WebSocket-Accept")
        if headers.get("sec-websocket-protocol") != SUBPROTOCOL:
            raise ConnectionError(f"subprotocol {headers.get('sec-websocket-protocol')!r}")

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self._buf += chunk

    def _exact(self, n: int) -> bytes:
        while len(self._buf) < n:
            self._fill()
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def _frame(self) -> tuple[int, bytes]:
        """One whole message (continuation frames joined); control frames answered."""
        opcode, data = -1, b""
        while True:
            b0, b1 = self._exact(2)
            op, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            mask = self._exact(4) if b1 & 0x80 else b""
            payload = self._exact(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if op == 0x9:  # ping
                self._send(0xA, payload)
                continue
            if op == 0x8:
                raise ConnectionError("the server closed the connection")
            if op != 0:
                opcode = op
            data += payload
            if b0 & 0x80:
                return opcode, data

    def _send(self, opcode: int, data: bytes) -> None:
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            head = bytes([0x80 | opcode, 0x80 | n])
        elif n < 1 << 16:
            head = bytes([0x80 | opcode, 0x80 | 126]) + struct.pack(">H", n)
        else:
            head = bytes([0x80 | opcode, 0x80 | 127]) + struct.pack(">Q", n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + masked)

    def pump(self) -> None:
        """Read one message from the server and file it."""
        opcode, data = self._frame()
        if opcode == 0x1:
            msg = json.loads(data)
            if msg.get("op") == "serverInfo":
                self.server_info = msg
            elif msg.get("op") == "advertise":
                self.channels.update({c["topic"]: c for c in msg["channels"]})
        elif opcode == 0x2 and data[:1] == bytes([MESSAGE_DATA]):
            sub, log_time = struct.unpack("<IQ", data[1:13])
            self.data.append(Received(sub, log_time, data[13:]))

    def wait(self, predicate: Any, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                return False
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                self.pump()
            except TimeoutError:
                return bool(predicate())
        return True

    def subscribe(self, topic: str) -> int:
        """Subscribe to an advertised topic; the subscription id."""
        if not self.wait(lambda: topic in self.channels):
            raise LookupError(f"{topic} was never advertised; saw {sorted(self.channels)}")
        sub = self._next_sub
        self._next_sub += 1
        request = {
            "op": "subscribe",
            "subscriptions": [{"id": sub, "channelId": self.channels[topic]["id"]}],
        }
        self._send(0x1, json.dumps(request).encode())
        return sub

    def received(self, sub: int) -> list[Received]:
        return [r for r in self.data if r.subscription == sub]

    def close(self) -> None:
        with contextlib.suppress(OSError):  # the server may be gone first
            self._send(0x8, struct.pack(">H", 1000))
        self.sock.close()
