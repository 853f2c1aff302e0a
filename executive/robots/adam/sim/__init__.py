"""The simulated PND Adam: a separate process speaking the Adam's wire on the Adam's topics.

Run it with ``python -m executive.robots.adam.sim --profile adam-pro`` (``cli.main``); drive
it like the robot (``rt/lowcmd`` with the profile's N motors, mode 1; ``rt/handcmd``);
make it misbehave with ``--fault``, ``--stdin-faults`` or ``AdamSimClient``
(``client``); check what it received with ``Recording`` (``record``).

Modules: ``node`` (the DDS node and the robot's rules), ``wire`` (LowCmd_/LowState_ as
numpy records for the profile's N), ``faults`` (the Adam's fault kinds), ``topics`` (the
sim's own status and fault topics), ``record``, ``client``, ``cli``. The rest (joint model,
scheduler, battery, recorder, fault syntax, fault requests and status, the client, the
common CLI options) is the simulator kit's (``executive.robots.simkit``).
"""
