"""The DDS wire, robot-neutral: the generated types of every IDL in ``idl/`` (``gen/``, made
by Debian's ``idlc`` through ``generate.py``; ``make idl-check`` keeps them fresh) and the
precompiled XCDR codec (``codec.py``) every DDS adapter reads and writes through.

Which types a robot speaks is its adapter's business: the Atom's interface variants are
``executive.robots.atom.interface``, the PND Adam's ``executive.robots.adam.interface``.
"""
