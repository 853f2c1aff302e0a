"""The QoS that meets the vendor's Fast DDS endpoints (robots.md 2.1a, measured).

The vendor client's QoS helpers are no-ops (SWIG attribute assignment): its writers are
RELIABLE + TRANSIENT_LOCAL, its readers BEST_EFFORT + VOLATILE, KEEP_LAST 1. A peer whose
writers are RELIABLE/VOLATILE and write XCDR1, and whose readers are BEST_EFFORT/VOLATILE,
matches both that and the opposite (best-effort writers, reliable readers). Writers must ask
for XCDR1 (``use_cdrv0_representation``): cyclone 11 writes XCDR2 for appendable types by
default and the vendor's readers then never match (measured 0 of 40). Readers accept both.
"""

from __future__ import annotations

from cyclonedds.core import Policy, Qos
from cyclonedds.util import duration


def writer_qos(depth: int = 1) -> Qos:
    """RELIABLE, VOLATILE, KEEP_LAST ``depth``, XCDR1 only.

    Depth 1: the robot's readers keep one sample, so every command is a whole state (the
    group's full position vector), never a delta, and the newest one is the one that counts.
    """
    return Qos(
        Policy.Reliability.Reliable(duration(milliseconds=100)),
        Policy.Durability.Volatile,
        Policy.History.KeepLast(depth),
        Policy.DataRepresentation(use_cdrv0_representation=True),
    )


def reader_qos(depth: int = 1) -> Qos:
    """BEST_EFFORT, VOLATILE, KEEP_LAST ``depth``; XCDR1 or XCDR2."""
    return Qos(
        Policy.Reliability.BestEffort,
        Policy.Durability.Volatile,
        Policy.History.KeepLast(depth),
        Policy.DataRepresentation(use_cdrv0_representation=True, use_xcdrv2_representation=True),
    )
