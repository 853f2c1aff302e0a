"""The Fourier Aurora (the GR-3's control stack, seed 003) behind the seam, its wire in a
child process.

The Aurora speaks Fast DDS 3 with ``@appendable`` types in XCDR1, which the service's
cyclonedds 0.10.2 cannot match (``../shared/reference/robots.md`` 2.1, 2.1a) and one process
loads one ``cyclonedds``. So the adapter is two halves over a local link, in the same rooms
as every robot's folder (``docs/robots.md``, "Adding a robot"):

- ``robot.py``: what it is (its ``RobotSpec``) and where its parts are;
- ``adapter.py`` (the service, ``.venv``): ``AuroraAdapter``, the ports; it starts and
  supervises the child, turns its state into a ``RobotSnapshot`` and the ports' calls into
  link messages;
- ``bridge.py`` (the child, ``.venv-aurora``, cyclonedds 11.0.1): reads the robot's state
  topics and writes its commands through ``wire/``; it holds on its own on a trip (FSM 9, a
  group's error, a silent or undecodable state topic, a silent service) and tells the
  service afterwards; it holds and exits when the service dies;
- ``ipc.py``: the link (a Unix socket pair, length-prefixed JSON), both sides' only shared code;
- ``settings.py``: the profile's ``aurora:`` options, ``check_interface``;
- ``words.py``: its wire's words, read from its tables and IDL as text;
- ``wire/``, ``sim/``: the types, QoS and topic naming; the simulated Aurora.

This package imports nothing: the child and the simulator import its modules too, in an
environment without the service's packages.
"""
