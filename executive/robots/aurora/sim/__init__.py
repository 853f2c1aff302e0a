"""The simulated Aurora (GR-3): the robot of seed 003 on its own wire, as its own process.

Runs in ``.venv-aurora`` (cyclonedds 11; ``make aurora-env``)::

    .venv-aurora/bin/python -m executive.robots.aurora.sim --domain 42 --record /tmp/a.jsonl

It speaks what the real robot speaks (``wire``: @appendable types in XCDR1, the vendor's
names, RELIABLE writers and BEST_EFFORT readers), so the vendor's own ``AuroraClient``
connects to it (tests/aurora). Groups and sizes are the GR-3's (left_leg 6, right_leg 6,
waist 3, head 2, manipulators 7, hands 6: ``--groups`` overrides); it publishes the eight
state topics the client waits for and obeys the FSMs as ``model`` says (group commands only
in FSM 10/11, velocity only in locomotion with source 2, FSM 9 freezes). The firmware's
setpoints move toward their command at ``--speed`` rad/s; the joints follow them in MuJoCo
on the GR-3's model (``body``: the profile's ``body:``, the Atom's ``simkit.physics``; the
hands, which the model lacks, are their setpoints), and a contact with itself or a
``--scene`` goes into the record and the status. ``--physics kinematic``: the joints are
the setpoints.

On start it prints one JSON line on stdout, ``{"ready": true, "pid", "control_port",
"domain"}``, once its endpoints exist. Faults and status go through that loopback UDP port
(``control``: FSM 9, a group's error, silence, an undecodable sample, clear); SIGUSR1 is a
shortcut for FSM 9. SIGTERM/SIGINT end it, the record (``record``) flushed.
"""
