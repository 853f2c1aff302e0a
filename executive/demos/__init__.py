"""The demos: ``python -m executive.demos [--profile P]`` (``make demo``), one module a robot
(``atom``, ``adam``, ``grx``, ``aurora``) and ``fleet``; what they share is ``kit``. They
drive the service and its simulated robot as processes through ``executive.harness``.
"""
