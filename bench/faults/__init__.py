"""The fault matrix (``make faults``: ``python -m bench.faults``), each fault observed for real.

- ``matrix``: the command line, the rows in order, the report;
- ``atom``, ``grx``, ``adam``: each robot's rows, in stacks of their own;
- ``rows``: a row and what every row shares (a clean start, the run record's end, the
  service killed and restarted); ``watch``: the service seen from outside (the sim's
  record, raw requests, run records); ``stall``: the judgement of a blocked interpreter;
- ``aurora``: a fault raised by the Fourier Aurora to its first hold, against a plain DDS
  round trip (``python -m bench.faults.aurora``; not a row of the matrix).
"""
