"""Names a person got wrong: ``not_found("pose", "right_opn", known)`` says
``no pose 'right_opn' (did you mean 'right_open'?)``. Every message about a mission, pose,
gesture, profile or robot that was not found says it the same way: the CLI's, the
validator's and the service's replies alike."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'a'?)``, `` (did you mean 'a' or 'b'?)`` or "": the known names
    close to ``name`` (difflib), for any message about a name that was not found."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=3, cutoff=0.6)
    if not close:
        return ""
    # the best, and only those about as close: 'right_opn' is 'right_open', not also
    # 'right_point' and 'right_pinch'
    best = _ratio(name, close[0])
    close = sorted(
        (c for c in close if _ratio(name, c) >= best - 0.05), key=lambda c: (-_ratio(name, c), c)
    )
    shown = [repr(c) for c in close]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
    return f" (did you mean {listed}?)"


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def not_found(what: str, name: str, known: Iterable[str]) -> str:
    """``no mission 'x' (did you mean 'y'?)``, or ``... (known: a, b)`` when nothing is
    close and the list is short."""
    names = sorted(set(known))
    hint = did_you_mean(name, names)
    if not hint and names and len(names) <= 12:
        hint = f" (known: {', '.join(names)})"
    return f"no {what} {name!r}{hint}"
