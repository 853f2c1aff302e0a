"""The Dobot Atom behind the seam: its DDS wire as ``ports.RobotAdapter``.

Each robot's folder has the same rooms for the same roles (``docs/robots.md``, "Adding a
robot"):

- ``robot.py``: what it is (its ``RobotSpec``) and where its parts are;
- ``adapter.py``: ``open(profile)``, the adapter that opens the rest on one participant,
  registers the fast path (an e-stop sample, an undecodable safety sample) and arms the C
  e-stop reflex; ``check_interface``;
- ``interface.py``: its wire types by interface variant; ``topics.py``: its topic table;
- ``state.py``: the six state topics as one ``RobotSnapshot``;
- ``streams.py``: the three joint command topics as ``JointStream`` ports;
- ``commands.py``: control, FSM, clearing errors and the base as ``RobotCommands``;
- ``reflex.py``, ``gamepad.py``: the e-stop reflex's topic and cancel; the gamepad bytes;
- ``sim/``: the simulated Atom, on the same wire.

The wire itself (``executive.wire.robot_io`` topics, ``executive.wire`` types and codec) is
what the simulated Atom speaks too, so both ends of the loopback share one table; the
C robot of ``tests/crobot`` and the vendor's layouts check that table independently.
"""
