"""Atom mission executive: YAML missions as py_trees behaviour trees driving a Dobot Atom over DDS."""

import os as _os
import time as _time

__version__ = "0.1.0"

# When this process ran its first line of our code (CLOCK_MONOTONIC, system-wide: other
# processes of the host compare it with their own time.monotonic()). The interpreter's own
# start is before it; every import of ours after. A restarted service measures how soon it
# made the robot safe from here (executive/service/recovery.py).
STARTED = _time.monotonic()

# MuJoCo here steps and checks bodies and never draws: unset, its import probes for an
# OpenGL library by starting a subprocess (glfw's version check), from the service too.
_os.environ.setdefault("MUJOCO_GL", "disable")
