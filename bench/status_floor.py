"""The floor under ``atom-executive status``: a bare Python process that imports
cyclonedds, reads the executive's status once and prints it.

    ATOM_DDS_DOMAIN=42 python -m bench.status_floor [--timeout 5]

Stock cyclonedds-python and the types ``idlc`` generates from ``idl/atom_executive``
(what any client program would have), none of the executive's own client code: a
participant, a reader of ``atom/executive/status`` with the topic's QoS (reliable,
transient-local, keep last 1: the service's last sample arrives at once), the first
sample taken, its state and mission printed. Exit 3 when no status came in time, as the
CLI's. ``bench/parts/cli.py`` times this process beside ``atom-executive status``.
"""

import os
import sys
import time

START = time.monotonic()

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

# the generated types only (idlc's output for idl/atom_executive), as a client would have them
from executive.wire.gen.own.atom_executive.msg import Status_  # noqa: E402

# the status topic's name and QoS as the service writes it (executive/service/status.py)
TOPIC = "atom/executive/status"
QOS = Qos(
    Policy.Reliability.Reliable(0),
    Policy.Durability.TransientLocal,
    Policy.History.KeepLast(1),
)


def main() -> int:
    timeout = float(sys.argv[sys.argv.index("--timeout") + 1]) if "--timeout" in sys.argv else 5.0
    participant = DomainParticipant(int(os.environ.get("ATOM_DDS_DOMAIN", "0")))
    reader = DataReader(participant, Topic(participant, TOPIC, Status_), qos=QOS)
    left = max(0.001, timeout - (time.monotonic() - START))
    for status in reader.take_iter(timeout=duration(seconds=left)):
        print(f"state: {status.state}\nmission: {status.mission}\nsafety: {status.safety}")
        return 0
    print("no executive answered in time", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
