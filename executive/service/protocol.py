"""The service's DDS protocol as a client sees it: topic names, their QoS, and which
request verbs change something (and so are signed and bound to an instance).

Its own module so a client (``executive.service.client``: the operator CLI's ``status``,
``watch``, ``missions``) learns them without importing the service that serves them
(``executive.service.requests`` and ``.status`` import the tree, py_trees and the
behaviours; issue 22, 3). The service imports them from here too: one home.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from cyclonedds.core import Policy, Qos
from cyclonedds.util import duration

STATUS_TOPIC = "atom/executive/status"
# reliable and transient-local with a history of one: a client that joins late
# (``atom-executive status``, ``cyclonedds subscribe``) gets the latest status at once
STATUS_QOS = Qos(
    Policy.Reliability.Reliable(0),
    Policy.Durability.TransientLocal,
    Policy.History.KeepLast(1),
)

REQUEST_TOPIC = "atom/executive/request"
REPLY_TOPIC = "atom/executive/reply"
REQUEST_QOS = Qos(
    Policy.Reliability.Reliable(duration(seconds=1)),
    Policy.History.KeepLast(64),
    Policy.Durability.Volatile,
)
# the verbs that command the robot: signed, and bound to the instance that runs them
MUTATING = frozenset({"start", "stop", "reset", "reload", "pause", "resume", "recover", "set"})


class Code(enum.IntEnum):
    """A reply's code (``Reply_.code``): 0 done, else why not."""

    OK = 0
    BAD_REQUEST = 1
    UNKNOWN_VERB = 2
    UNAUTHENTICATED = 3
    REFUSED = 4
    NOT_FOUND = 5
    INVALID = 6
    BUSY = 7
    INTERNAL = 8


@dataclass(frozen=True)
class Answer:
    """What the service answers a request: its code, a message for people, a payload."""

    code: Code
    message: str
    payload: Any = None
