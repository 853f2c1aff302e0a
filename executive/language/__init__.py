"""The mission language's primitives, below the leaves that declare their kinds with them.

``diagnostics`` (located problems), ``yaml_source`` (safe, located YAML), ``kinds`` (field
types, ``Field``, ``NodeKind``, ``LeafKind``), ``values`` (a field's value checked against
its type), ``model`` (the validated mission), ``library`` (poses and gestures) and ``check``
(what a leaf kind's own check is handed). ``behaviours/`` imports these and nothing of
``executive.mission``; the registry, compiler, loader and builder there import the
behaviours. The ladder: ``executive.language`` < ``behaviours`` < ``executive.mission``.

This package imports none of its modules: importing one runs no other.
"""
