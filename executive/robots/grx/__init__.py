"""The Fourier GRX behind the seam: its zenoh "User" API as ``ports.RobotAdapter``.

The same rooms as every robot's folder (``docs/robots.md``, "Adding a robot"):

- ``robot.py``: what it is (its ``RobotSpec``) and where its parts are;
- ``adapter.py``: ``open(profile)``, the adapter (``GrxAdapter``);
- ``interface.py``: keys, field names, the two schema versions (seed, m4), msgpack;
  ``check_interface``;
- ``state.py``: the four server maps as one ``RobotSnapshot``, their health;
- ``commands.py``: tasks (command, then flag), components, the virtual joystick stream;
- ``settings.py``: the profile's ``grx:`` options (schema, safe task, joystick rate, axes...),
  checked by ``check_options`` when the profile loads;
- ``sim/``: the simulated GRX (``python -m executive.robots.grx.sim``).
"""
