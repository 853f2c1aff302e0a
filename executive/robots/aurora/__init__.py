"""The Fourier Aurora (the GR-3's control stack, seed 003) behind the seam, its wire in a
child process.

The Aurora speaks Fast DDS 3 with ``@appendable`` types in XCDR1, which the service's
cyclonedds 0.10.2 cannot match (``../shared/reference/robots.md`` 2.1, 2.1a) and one process
loads one ``cyclonedds``. So the adapter is two halves over a local link:

- ``interface.py`` (the service, ``.venv``): ``AuroraAdapter``, the ports; it starts and
  supervises the child, turns its state into a ``RobotSnapshot`` and the ports' calls into
  link messages;
- ``bridge.py`` (the child, ``.venv-aurora``, cyclonedds 11.0.1): reads the robot's state
  topics and writes its commands through ``wire/``; it holds on its own on a trip (FSM 9, a
  group's error, a silent or undecodable state topic, a silent service) and tells the
  service afterwards; it holds and exits when the service dies;
- ``ipc.py``: the link (a Unix socket pair, length-prefixed JSON), both sides' only shared code;
- ``settings.py``: the profile's ``aurora:`` options;
- ``wire/``, ``sim/``: the types, QoS and topic naming; the simulated Aurora.

This package's ``__init__`` imports only the standard library: the child and the simulator
import it too, in an environment without the service's packages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from executive.robots.aurora.settings import check as _check_settings
from executive.robots.aurora.settings import check_interface

if TYPE_CHECKING:
    from executive.robots.aurora.interface import AuroraAdapter
    from executive.seam.profile import RobotProfile

__all__ = ["check_interface", "check_options", "open"]


def check_options(options: Mapping[str, Any], profile: Mapping[str, Any]) -> list[str]:
    """Problems with a profile's ``aurora:`` mapping (``key: message``), given the whole
    profile's data (its fsm names)."""
    return _check_settings(options, profile)


def open(
    profile: RobotProfile, **options: Any
) -> AuroraAdapter:  # executive.seam.registry.open_adapter
    """The Aurora adapter for ``profile``: starts the bridge (``interface.open``)."""
    from executive.robots.aurora.interface import open as open_interface

    return open_interface(profile, **options)
