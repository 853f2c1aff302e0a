"""The template robot's wire, as words: its interface variants and the names it uses.

Every topic (or key) and field name of a robot's wire is written once, in its interface
module (or the modules of its wire), and its adapter and simulator name them through these
constants. ``wire_words`` hands them to ``tests/test_seam.py``, which keeps every one of them
out of the modules above the seam. The template has no wire yet: its words are placeholders
for its state and command topics.
"""

from __future__ import annotations

# the wire variants it speaks (a vendor's releases differ): the service config's interface:
VARIANTS = ("v1",)
DEFAULT_VARIANT = "v1"

STATE_TOPIC = "newbot/arm/state"  # the arm_state source: measured joint positions
COMMAND_TOPIC = "newbot/arm/command"  # the arm stream's commands


def check_interface(text: str) -> str | None:
    """Why ``text`` is not an interface variant of this robot, or None if it is."""
    if text in VARIANTS:
        return None
    return f"unknown newbot interface variant {text!r}; known: {', '.join(VARIANTS)}"


def wire_words() -> set[str]:
    """Its topics and every field of its wire's types: what nothing above the seam may name."""
    return {STATE_TOPIC, COMMAND_TOPIC}
