"""docs/robots.md keeps up with the robots (issue 33, 2).

Robots are found, not listed (``executive.seam.registry``): the page's list of robots is
the one place a person lists them, so it must say what the registry finds, each robot's
``description`` word for word; a robot added without its row fails here. And "Adding a
robot" names every file of the template (``docs/robot-template/``), no more: a file added
to the template, or one the steps name that is gone, fails here
(``tests/test_fifth_robot.py`` runs the steps' commands).
"""

from __future__ import annotations

import re
from pathlib import Path

from executive.seam.registry import SPECS

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "robots.md"
TEMPLATE = ROOT / "docs" / "robot-template"
ROW = re.compile(r"^\| `([^`]+)` \| (.+?) \|$", re.MULTILINE)


def section(title: str, doc: Path = DOC) -> str:
    """The text of docs/robots.md's ``## title`` (or another copy's), up to the next section."""
    text = doc.read_text(encoding="utf-8")
    head = f"\n## {title}\n"
    assert head in text, f"{doc} has no section {title!r}"
    return text.split(head, 1)[1].split("\n## ", 1)[0]


def listed_robots(text: str) -> dict[str, str]:
    """The robot list's rows: name -> description."""
    return dict(ROW.findall(text))


def template_files() -> set[str]:
    return {
        p.relative_to(ROOT).as_posix()
        for p in TEMPLATE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_robot_list_is_the_registrys() -> None:
    listed = listed_robots(section("The robots"))
    assert listed == {name: spec.description for name, spec in SPECS.items()}


def test_adding_a_robot_names_every_file_of_the_template() -> None:
    named = set(re.findall(r"`(docs/robot-template/[^`\s]+)`", section("Adding a robot")))
    files = template_files()
    assert len(files) >= 5, "the walk found the template"
    assert named == files, (
        f"named but not in the template: {sorted(named - files)}; "
        f"in the template but not named: {sorted(files - named)}"
    )
