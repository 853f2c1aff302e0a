"""A mission as BehaviorTree.CPP elements and XML: what ``atom-executive export`` writes
and what ``executive.mission.btcpp_import`` checks an import against (the round trip)."""

from __future__ import annotations

from executive.language.model import Mission
from executive.mission import btcpp


def export_trees(mission: Mission, *, params: bool = True) -> btcpp.Trees:
    """The trees of ``mission`` as BehaviorTree.CPP elements (built with placeholder
    leaves: the same py_trees tree the service builds, never ticked); with ``params``
    its parameters are ports (``{param}``), else every field is its value."""
    from executive.mission.build import build, placeholder_builders

    root = build(mission, placeholder_builders(), for_display=not mission.complete)
    others: dict[str, btcpp.Element] = {}
    terms = btcpp.Terms.of(mission) if params else None
    main = btcpp.mission_elements(root, others, mission.file, terms=terms)
    return btcpp.Trees(btcpp.tree_id(mission.name), main, mission.description, others)


def export_xml(mission: Mission, *, params: bool = True) -> str:
    """The mission as a ``BTCPP_format="4"`` document with our leaf kinds' models and,
    with ``params``, its parameters as the main tree's ports."""
    models = btcpp.leaf_models()
    if params:
        models.append(btcpp.params_model(mission))
    return btcpp.to_xml(export_trees(mission, params=params), models)
