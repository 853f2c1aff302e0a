"""A hostile Groot2 client, as its own process: ``python -m tests.integration.groot2_attacker
PORT SECONDS``. Prints how many requests its flood sent.

For SECONDS: a DEALER pipelining tree requests it never reads, random bytes on fresh TCP
connections, connections that send half a ZMTP greeting and stay open, a REQ that asks
and never reads, and malformed frames. It runs at nice 19: a real attacker's CPU is on
another computer, so what the service's tick loop shows is the publisher's own cost,
not a CPU this process took from it on a two-core test machine.
"""

from __future__ import annotations

import os
import random
import socket
import sys
import threading
import time

import zmq


def flood(port: int, stop: threading.Event, sent: list[int]) -> None:
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.SNDHWM, 100_000)
    s.connect(f"tcp://127.0.0.1:{port}")
    head = bytes((2, ord("T"), 0, 0, 0, 0))
    while not stop.is_set():
        try:
            s.send_multipart([b"", head], zmq.NOBLOCK)
            sent[0] += 1
        except zmq.Again:
            time.sleep(0.001)
    s.close(linger=0)


def garbage(port: int, stop: threading.Event) -> None:
    rng = random.Random(7)
    held: list[socket.socket] = []
    while not stop.is_set():
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=1)
            if rng.random() < 0.5:
                c.sendall(os.urandom(rng.randint(1, 4096)))
                c.close()
            else:
                c.sendall(b"\xff\x00\x00\x00\x00\x00\x00\x00\x01\x7f")  # half a greeting
                held.append(c)
        except OSError:
            pass
        time.sleep(0.002)
    for c in held:
        c.close()


def malformed(port: int, stop: threading.Event) -> None:
    context = zmq.Context.instance()
    half_open = context.socket(zmq.REQ)  # asks, never reads the reply
    half_open.setsockopt(zmq.LINGER, 0)
    half_open.connect(f"tcp://127.0.0.1:{port}")
    half_open.send(bytes((2, ord("S"), 1, 0, 0, 0)))
    s = context.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.connect(f"tcp://127.0.0.1:{port}")
    rng = random.Random(11)
    while not stop.is_set():
        frames = [os.urandom(rng.randint(0, 40)) for _ in range(rng.randint(1, 4))]
        s.send_multipart([b"", *frames], zmq.NOBLOCK)
        time.sleep(0.005)
    s.close(linger=0)
    half_open.close(linger=0)


def main() -> int:
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    os.nice(19)
    stop = threading.Event()
    sent = [0]
    threads = [
        threading.Thread(target=flood, args=(port, stop, sent)),
        threading.Thread(target=garbage, args=(port, stop)),
        threading.Thread(target=malformed, args=(port, stop)),
    ]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    print(sent[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
