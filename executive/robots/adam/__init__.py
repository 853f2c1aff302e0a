"""The PND Adam behind the seam (seed 002; ``../shared/reference/robots.md`` section 1).

The same rooms as every robot's folder (``docs/robots.md``, "Adding a robot"): ``robot.py``
(its spec), ``adapter.py`` (``open``, the adapter, ``check_interface``; what the Adam offers
on DDS and what it does not, in its docstring), ``interface.py`` (its wire types by
interface variant), ``streams.py`` (the body and hand streams), ``settings.py`` (its
``adam:`` options, the battery's range) and ``sim/`` (the simulated Adam).
"""
