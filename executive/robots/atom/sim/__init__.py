"""The simulated Atom: a separate process speaking the robot's wire types on the robot's topics.

Run it with ``atom-executive sim`` (or ``python -m executive.robots.atom.sim``); drive it like the
robot; make it misbehave with ``SimClient`` (``executive.robots.atom.sim.client``) or
``atom-executive sim fault``; check what it received with ``Recording``
(``executive.robots.atom.sim.record``).

Modules: ``node`` (the DDS node and the firmware's rules), ``joints``, ``amr``,
``battery``, ``servos`` (the robot model), ``faults`` (fault specs and the active set),
``scheduler`` (one thread, many rates), ``record`` (command record and its reader),
``topics`` (the sim's own DDS topics), ``client``, ``config``, ``cli``.
"""
