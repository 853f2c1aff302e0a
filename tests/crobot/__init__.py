"""A C robot: a stand-in for the Dobot Atom firmware on the wire.

Why
---
The Python simulator (``executive/robots/atom/sim``) shares the executive's codec, so a test against it
proves nothing about what a real firmware sends: a CycloneDDS 0.10 C writer puts the count
of trailing padding bytes in the XCDR1 encapsulation options (``00 01 00 01`` for the
3-byte ``EmergencyState_``, DESIGN.md 3.2), and no test noticed our decoder rejecting it.
``crobot.c`` is built at test time from ``idl/`` by Debian's ``idlc -l c`` and linked with
``-lddsc``; it writes plain C structs with ``dds_write``, so its bytes are a C firmware's.

Files
-----
- ``crobot.c``: the robot (one source for every interface variant; -D flags pick the code).
- ``harness.py``: ``build_crobot(variant, workdir)``, ``crobot_args(profile)``, ``CRobot``
  (the process), and the fixtures ``crobot_exe`` (session: one build per variant) and
  ``start_crobot`` (per test, on the ``dds_domain`` lease).
- ``conftest.py``: imports the fixtures. Another test folder gets them with one line in its
  conftest: ``from tests.crobot.harness import crobot_exe, start_crobot  # noqa: F401``.
- ``test_crobot.py``: the robot checked against stock cyclonedds-python readers and writers.

What it does (the firmware's rules, DESIGN.md 3.3)
---------------------------------------------------
Publishes ``rt/upper/state``, ``rt/lower/state``, ``rt/hands/state``, ``rt/amr/state``,
``rt/emergency/state`` and ``rt/main/nodes/state`` at the profile's rates (CycloneDDS's
default writer QoS: reliable, keep-last 1) and takes ``rt/upper/cmd``, ``rt/lower/cmd``,
``rt/hands/cmd``, ``rt/set/fsm/id``, ``rt/switch/upper/control``, ``rt/clear/errors``,
``rt/amr/cmd`` and ``rt/remote/control`` (reliable readers, keep-last 64) every 2 ms.

- An FSM switch is taken at once (``fsm_id`` in upper and lower state).
- Upper joints obey with upper control on and an FSM id of ``--joint-fsm``; lower joints
  with that FSM id; hands always; nothing while any e-stop flag is set. A stream that may
  no longer be commanded drops its target: the joints stay where they are.
- An obeyed joint moves toward its target at most ``--vmax`` rad/s (the harness passes
  twice the profile's fastest planned speed), clamped into ``--limits-*``.
- A command with NaN/Inf is ``non_finite``, a q outside the limits ``out_of_range``, kp <= 0
  or kd < 0 ``bad_gains``: rejected whole. Valid but not obeyed: ``ignored``.
- AMR: MOVE_TO_TAG shows TASKING/RUNNING with ``task_id`` = its ``command_id``, then after
  ``--amr-trip-s`` of un-halted time COMPLETED and DEVIDLE (the position's yaw becomes
  theta). A MOVE_TO_TAG while a task is active is refused (send CANCEL_TASK first);
  CANCEL_TASK shows CANCELED; PAUSE/RESUME_TASK, START/STOP_REMOTE (``work_mode`` 3) are
  honoured; the base's e-stop or any EmergencyState_ flag halts the task's clock. AMR
  enumerators are used by name, so the numbers are those of idlc's header for the variant.
- Battery: ``BmsState_.battery_level`` (rounded) in upper and lower state and
  ``basic_status.battery_level``; every BMS and AMR heartbeat counts its topic's samples.
  ``robot_type`` is "Atom".

Faults: one line on stdin, one JSON line back
---------------------------------------------
Every line gets ``{"event":"ok","command":LINE,"t":T}`` or ``{"event":"error","message":...}``;
the first line the robot prints is ``{"event":"ready",...}``, once every entity exists.
``t`` is when the line was handled. A fault that changes a published sample writes that
topic at once, out of turn (the periodic schedule is unchanged), and the reply adds
``written``: the time just before that ``dds_write``, from which a test times the
executive's reaction. ``silence TOPIC`` adds ``last``: when that topic's last sample went
out, from which a reader's silence counts. All on CLOCK_MONOTONIC (``time.monotonic()``).

=================================  =======================================================
``estop soft|hard|amr|di on|off``  an EmergencyState_ flag (``di``: four-flag variants only)
``bms upper|lower VALUE``          ``bms_alarms`` of that block (uint32, ``0x4`` works; 0
                                   clears)
``servo GROUP INDEX CODE``         ``error_code`` of a MainNodesState_ node: ``left_leg`` /
                                   ``right_leg`` 0-5, ``waist`` 0, ``left_arm`` /
                                   ``right_arm`` 0-6, ``head`` 0-1, ``ecat2can`` 0-1; code
                                   0 clears; ``rt/clear/errors`` clears them all
``amr-estop on|off``               ``amr_event.emergency_stop_pressed``; halts the task
``battery PERCENT``                the battery level (0-100)
``revoke``                         upper control taken away now (a request may retake it)
``refuse-control on|off``          requests for upper control are refused
``silence TOPIC|all``              stop publishing a state topic (``rt/upper/state`` or
                                   ``upper_state``); ``resume TOPIC|all`` starts it again
``clear``                          every fault above cleared (the battery level stays)
``flush``                          write the record out now (``CRobot.recording`` does)
``status``                         the robot's own view, in the reply (fsm_id, control,
                                   e-stops, battery, AMR, samples published per topic)
``probe``                          with ``--probe`` only: the e-stop benchmark's stamps
=================================  =======================================================

The probe (``--probe``; ``CRobot.probe()``), for ``bench/parts/estop_c.py``: the main loop takes
commands every 2 ms, too coarse a clock for a sub-millisecond figure, so a second reader
of each joint command topic and of ``rt/amr/cmd`` has a listener on CycloneDDS's receive
thread that stamps each arrival. An ``estop ... on`` arms it: it keeps the positions then
published, and the reply to ``probe`` gives ``written`` (that e-stop's write), ``hold``
(per stream, the arrival of the first command whose every q is within 1e-5 rad of those
positions: the executive's hold freezes the measured position) and ``cancel`` (the first
CANCEL_TASK), or null. The probe's readers have their own histories: the main loop, its
record and its counters see every command as without it.

The process leaves cleanly, record flushed, on end of stdin or SIGTERM/SIGINT.

Record (``--record FILE``): ``executive/robots/atom/sim/record.py``'s format
----------------------------------------------------------------
JSON lines, flushed every 100 ms, on ``flush`` and on exit; ``Recording.load`` parses it.
``t`` is CLOCK_MONOTONIC seconds (Python's ``time.monotonic()``) when the robot took the
command; ``sent`` is the sample's source timestamp mapped onto the same clock.

- ``{"t", "sim": {"impl": "c", "pid", "variant", "rates", "joint_fsm", "vmax", ...}}``
- ``{"t", "sent", "topic": "upper_cmd"|"lower_cmd"|"hands_cmd", "result", "dev",
  "change", "q", "tau", "kp"}`` for every joint command (``dev`` = max |q - measured|, ``change``
  = max |q - previous q|, null for the first), or ``{"t", "sent", "topic", "result",
  "dev", "same": true}`` when q dq tau kp kd all repeat the previous command's.
- ``{"t", "topic": "set_fsm_id"|"switch_upper_control"|"clear_errors"|"amr_cmd"|
  "remote_control", "fields": {C field names; enums by enumerator name}, "result"}``
- ``{"t", "fault": {"action": "set"|"clear"|"clear_all", "kind", "target", "value",
  "duration": 0, "source": "stdin"|"rt/clear/errors"}}``
- last: ``{"t", "counters": {"upper": {"received", "applied", "ignored", ...}, ...}}``

Not modelled: servo errors do not stop the joint they name (they only show in
``rt/main/nodes/state``); no IMU motion, battery drain, AMR travel or joint dynamics beyond
the speed cap; ``wireless_remote`` stays zero.
"""
