"""systemd notification glue: READY, WATCHDOG, STATUS, STOPPING.

Tiny on purpose (gunicorn's ``systemd.py`` is the model): it wraps systemd-python's
``sd_notify`` binding and does nothing when the service is not started by systemd
(no ``NOTIFY_SOCKET``), so the same code runs in a terminal, in tests and under the
unit. Tests drive it against a real datagram socket.
"""

from __future__ import annotations

import os

from systemd import daemon


def enabled() -> bool:
    return bool(os.environ.get("NOTIFY_SOCKET"))


def notify(*fields: str) -> bool:
    """Send ``KEY=value`` fields in one datagram; False when not under systemd."""
    if not enabled():
        return False
    return bool(daemon.notify("\n".join(fields)))


def ready(status: str) -> bool:
    return notify("READY=1", f"STATUS={status}")


def watchdog() -> bool:
    return notify("WATCHDOG=1")


def status(text: str) -> bool:
    return notify(f"STATUS={text}")


def stopping(text: str = "stopping") -> bool:
    return notify("STOPPING=1", f"STATUS={text}")


def watchdog_interval() -> float | None:
    """Half of WatchdogSec (the ping interval systemd asks for), or None if unset for us."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 2e6
    except ValueError:
        return None
