"""The PND Adam's wire checked against C that shares no code with the executive.

- ``cadam.c``: a hand-written CycloneDDS C program over the structs Debian's ``idlc -l c``
  makes from ``idl/pnd_adam/`` (one variant per build), linked with ``-lddsc``. It writes
  ``rt/lowstate``/``rt/handstate`` and prints what it wrote, and prints every
  ``rt/lowcmd``/``rt/handcmd`` sample it reads, each field by its C name.
- ``harness.py``: ``build``, ``exchange`` (our side: the codec, raw write and raw take, as the
  executive's readers and streamers use it), and the flattening used to compare field by field.
- ``conftest.py``: ``cadam_exe``, one build per variant per session.
- ``test_cadam.py``: type information identical to cyclonedds-python's; every field of every
  sample both ways, per variant, for 31/29/23 motors, XCDR1 and XCDR2 writers; a sample of
  another model is refused naming both lengths.
"""
