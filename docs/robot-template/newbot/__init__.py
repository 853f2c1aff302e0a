"""A robot behind the seam: the template's (docs/robots.md, "Adding a robot").

The same rooms as every robot's folder: ``robot.py`` (what it is, its spec: the one file the
registry reads), ``adapter.py`` (``open``: the seam's ports on its wire), ``interface.py``
(its wire's variants and words). Where it has them: ``settings.py`` (its own options in a
profile), ``streams.py`` (its joint streams), ``state.py``, ``commands.py`` and ``sim/``
(its simulator).
"""
