"""The benchmark kit: every figure of ``docs/benchmarks.md``, the fault matrix and the soak.

Run from the repository's root, each as ``python -m bench.NAME``:

- ``bench.run`` (``make bench``): the parts of ``bench/parts/``, one table of verdicts;
- ``bench.faults`` (``make faults``): the fault matrix, ``bench/faults/``;
- ``bench.soak`` (``make soak``): missions back to back with faults, resets and restarts;
- ``bench/oneoff/``: measurements ``make bench`` does not run.

What they share: ``harness`` (the environment, statistics, the CPU hog, the machine, the
service's scheduling and log, tables, the command line), ``episode`` (the e-stop episode),
``robot`` (the bench's stand-in robot), ``estop_peer`` and ``service_probe`` (the
processes beside the service), ``floor`` (the C floors, ``bench/floor_c/``).
"""
