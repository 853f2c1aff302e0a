"""The builder table: each mission leaf kind to its behaviour.

Each leaf kind declares its builder beside its behaviour (``LeafKind.build``, in the
class attribute ``kinds``); this is those builders as the table ``build`` takes. The
mission loader has already validated every argument against the registry and the robot
profile, so builders only translate names; constructors store parameters and do no I/O
(the behaviours connect in ``setup(context=...)``).
"""

from __future__ import annotations

from executive.language.leaf import LeafBuilder
from executive.mission.registry import LEAVES

BUILDERS: dict[str, LeafBuilder] = {kind.name: kind.build for kind in LEAVES}
