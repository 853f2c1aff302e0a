"""The simulated Atom: a separate process speaking the robot's wire types on the robot's topics.

Run it with ``atom-executive sim`` (or ``python -m executive.robots.atom.sim``); drive it like the
robot; make it misbehave with ``SimClient`` (``executive.robots.atom.sim.client``) or
``atom-executive sim fault``; check what it received with ``Recording``
(``executive.robots.atom.sim.record``).

Modules: ``node`` (the DDS node and the firmware's rules), ``amr``, ``servos`` (the robot
model beyond joints and battery), ``faults`` (what an Atom can have), ``record`` (its
stream topics), ``topics`` (the sim's own DDS topics), ``client``, ``config``, ``cli``. The
rest (joint model, scheduler, battery, recorder, fault syntax, fault requests and status,
the client, the common CLI options) is the simulator kit's (``executive.robots.simkit``).
"""
