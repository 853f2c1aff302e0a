"""The bridge's state listener in the Aurora's own environment (.venv-aurora, cyclonedds 11).

cyclonedds-python may call a reader's listener before the reader's Python object exists
(a robot already publishing when the bridge starts) and hands it None. That is no
undecodable sample: before, ``reader.take`` on None was counted as one, a safety source's
undecodable sample tripped the bridge before its hello, and the service refused to start
(a fresh-clone CI: "robot_control_group_state: undecodable sample (AttributeError: 'NoneType'
object has no attribute 'take')"). The samples stay in the reader; the next call takes them.
"""

from __future__ import annotations

import subprocess

from executive.harness.aurora import SIM_PYTHON

PROBE = """
import types
from executive.robots.aurora.bridge import Bridge
seen = []
fake = types.SimpleNamespace(
    _undecodable=lambda key, why: seen.append(("undecodable", key, why)),
    _receive=lambda key, sample: seen.append(("sample", key)),
)
for key in ("group_state", "aurora_state"):
    Bridge._receiver(fake, key)(None)
print(seen)
"""


def test_a_listener_called_before_its_reader_exists_is_no_undecodable_sample() -> None:
    done = subprocess.run(
        [str(SIM_PYTHON), "-c", PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
