"""The seam: what every layer above a robot may know of it, and nothing of its wire.

``ports`` (the capabilities a robot offers and the normalised snapshot it gives), ``profile``
(a robot's joints, limits, sources and options, from YAML), ``body`` and ``bodyframes`` (its
vendor model: kinematics, collisions, frames), ``registry`` (which robots there are and how to
open one). It imports no robot: the adapters under ``executive.robots`` import it.
"""
