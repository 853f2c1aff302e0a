"""What the simulated Atom received: the kit's record format, the Atom's topics.

The sim writes with the kit's ``Recorder`` (``executive.robots.simkit.record``, whose
docstring describes every line). The Atom's lines:

- stream topics ``upper_cmd``, ``lower_cmd``, ``hands_cmd``; results ``applied``,
  ``ignored`` (valid, but the robot was not obeying: FSM, upper control, e-stop),
  ``non_finite``, ``out_of_range``, ``bad_gains``.
- one-shot commands: ``set_fsm_id``, ``switch_upper_control``, ``clear_errors``,
  ``amr_cmd``, ``remote_control``, each with what the sim did about it.
- the header's ``joints``: the joint names of ``upper``, ``lower`` and ``hands``.

``Recording`` is the kit's reader over these stream topics.
"""

from __future__ import annotations

from executive.robots.simkit import record

STREAM_TOPICS = ("upper_cmd", "lower_cmd", "hands_cmd")


class Recording(record.Recording):
    """A simulated Atom's record file, parsed (``Recording.load(path)``)."""

    stream_topics = STREAM_TOPICS


__all__ = ["STREAM_TOPICS", "Recording"]
