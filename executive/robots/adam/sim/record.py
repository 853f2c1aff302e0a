"""What the simulated Adam received: the kit's record format, the Adam's topics.

The sim writes with the kit's ``Recorder`` (``executive.robots.simkit.record``, whose
docstring describes every line), so every sim's records read alike. Streams are
``body_cmd`` (``rt/lowcmd``: q and kp of the N motors in the profile's order) and
``hand_cmd`` (``rt/handcmd``: the 12 positions in counts as q, kp 1). Results are the
Atom's but ``ignored``, plus ``bad_mode`` (a motor's mode is not 1); a command without
exactly N motors has no q to write, so it is an event line ``{"t", "topic": "body_cmd",
"fields": {"motors", "expected", "mode_pr"}, "result": "wrong_length"}``.

``Recording`` is the kit's reader over these stream topics.
"""

from __future__ import annotations

from executive.robots.simkit import record

BODY_TOPIC = "body_cmd"
HAND_TOPIC = "hand_cmd"
STREAM_TOPICS = (BODY_TOPIC, HAND_TOPIC)


class Recording(record.Recording):
    """A simulated Adam's record file, parsed (``Recording.load(path)``)."""

    stream_topics = STREAM_TOPICS


__all__ = ["BODY_TOPIC", "HAND_TOPIC", "STREAM_TOPICS", "Recording"]
