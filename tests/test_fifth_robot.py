"""A fifth robot is one folder and one profile (issue 33, 2): the template, made a robot.

In a copy of this checkout (its files as they are now, committed in a new git repository),
the commands of docs/robots.md's "Adding a robot" (its shell block, NAME = ``fifth``) copy
``docs/robot-template/`` into ``executive/robots/fifth/`` and
``executive/robots/profiles/fifth.yaml``. Then, in processes running that copy's code:

- its registry lists the four robots and the fifth, found in its folder;
- the template's mission validates on the new profile, and one that moves a joint the
  profile does not have is refused, naming the joint (the validation is real);
- the template's adapter has every member of ``RobotAdapter`` with the ports' parameters,
  and ``open`` refuses, saying that the adapter is not written yet;
- the repository's checks that hold for every robot hold for it (the ladder, the seam's
  words, the demos, the profile keys' table), and only its row in docs/robots.md's list
  of robots is missing (test_robots_docs);
- ``git status`` shows the folder and the profile, nothing else.

And a robot packaged elsewhere: the same template as a package of its own, declared by a
distribution's entry point (a ``.dist-info`` written here; nothing is installed), is found
by the registry and validates the template's mission, in a process whose path holds it;
and the service, given its profile, stops at start-up saying that its adapter is not
written (the one test here that starts DDS).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from executive.seam.registry import SPECS
from tests.test_robots_docs import DOC, listed_robots, section

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "docs" / "robot-template"
MISSION = "docs/robot-template/move.yaml"
CLI = Path(sys.executable).parent / "atom-executive"  # the console script of this venv
NAME = "fifth"

# run with the copy's code: what its registry finds, its new robot's profile and adapter
INSPECT = """
import importlib, inspect, json, sys
from executive.seam import registry
from executive.seam.ports import AdapterError, RobotAdapter
from executive.seam.profile import load_profile

name, profile = sys.argv[1], sys.argv[2]
spec = registry.spec(name)
loaded = load_profile(profile)
try:
    registry.open_adapter(loaded)
    refused = None
except AdapterError as e:
    refused = str(e)
adapter = importlib.import_module(spec.package + ".adapter").Adapter(loaded, "v1")
methods = {n: v for n, v in vars(RobotAdapter).items() if callable(v) and not n.startswith("_")}
members = set(RobotAdapter.__annotations__) | set(methods)
print(json.dumps({
    "robots": str(registry.ROBOTS),
    "specs": {n: [s.package, s.description] for n, s in registry.SPECS.items()},
    "joints": sorted(loaded.joints),
    "refused": refused,
    "missing": sorted(m for m in members if not hasattr(adapter, m)),
    "parameters": sorted(
        m for m, f in methods.items()
        if hasattr(adapter, m)
        and list(inspect.signature(f).parameters)[1:]
        != list(inspect.signature(getattr(adapter, m)).parameters)
    ),
}))
"""


def run(
    cmd: list[str], cwd: Path, path: list[Path] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``cmd`` in ``cwd`` with ``path`` first on its Python path; none of this run's pytest
    settings leak into a pytest it starts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(map(str, path))
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def git(cwd: Path, *args: str) -> str:
    done = run(["git", "-c", "user.name=test", "-c", "user.email=test@localhost", *args], cwd=cwd)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def copy_of_the_checkout(dest: Path) -> Path:
    """This checkout's files as they are now (tracked and new, not ignored), committed in a
    new repository at ``dest``."""
    names = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, names.split("\0")):
        if (ROOT / name).is_file():  # a tracked file deleted in the checkout stays out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--no-gpg-sign", "--no-verify", "-m", "the checkout")
    return dest


def adding_a_robot() -> str:
    """The shell commands of docs/robots.md's "Adding a robot"."""
    found = re.search(r"```sh\n(.*?)\n\s*```", section("Adding a robot"), re.DOTALL)
    assert found, "docs/robots.md, Adding a robot: no sh block"
    return textwrap.dedent(found.group(1))


def inspect_robot(tree: Path, path: list[Path], name: str, profile: str) -> dict[str, Any]:
    done = run([sys.executable, "-c", INSPECT, name, profile], cwd=tree, path=path)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_template_is_a_fifth_robot_in_one_folder_and_one_profile(tmp_path: Path) -> None:
    tree = copy_of_the_checkout(tmp_path / "repo")
    steps = run(["bash", "-euc", adding_a_robot().replace("NAME", NAME)], cwd=tree)
    assert steps.returncode == 0, steps.stderr

    # its registry finds the fifth in its folder, beside the four
    found = inspect_robot(tree, [tree], NAME, NAME)
    assert Path(found["robots"]) == tree / "executive" / "robots", "the copy's code ran"
    assert set(found["specs"]) == {*SPECS, NAME}
    assert found["specs"][NAME][0] == f"executive.robots.{NAME}"
    assert found["joints"] == ["elbow_pitch", "shoulder_pitch"]
    # its adapter: the ports' shape, and a refusal that says why until it is written
    assert found["missing"] == [], "members of RobotAdapter the template's adapter lacks"
    assert found["parameters"] == [], "the template's methods' parameters differ from the ports'"
    assert "not written yet" in found["refused"]
    assert f"executive.robots.{NAME}.adapter" in found["refused"]

    # a mission validates on it; one moving a joint it does not have is refused, naming it
    good = (tree / MISSION).read_text(encoding="utf-8")
    bad = good.replace("elbow_pitch: 1.2", "wrist_roll: 1.2")
    assert bad != good
    (tmp_path / "bad.yaml").write_text(bad, encoding="utf-8")
    done = run(
        [str(CLI), "validate", "--profile", NAME, MISSION, str(tmp_path / "bad.yaml")],
        cwd=tree,
        path=[tree],
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{MISSION}: ok (mission move_arm" in done.stderr
    assert "bad.yaml" in done.stdout
    assert re.search(r"move_joints\.joints\.wrist_roll: unknown joint", done.stdout), done.stdout
    assert "1 invalid, 1 error(s)" in done.stderr

    # the repository's checks of every robot hold for the fifth; its docs row is missing
    checks = run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_ladder.py",
            "tests/test_seam.py",
            "tests/test_demo_home.py",
            "tests/test_profile.py",
            "-k",
            f"{NAME} or word_list or demo or docs_table",
        ],
        cwd=tree,
        path=[tree],
    )
    assert checks.returncode == 0, checks.stdout[-3000:]
    assert re.search(r"\d+ passed", checks.stdout), checks.stdout[-3000:]
    docs = listed_robots(section("The robots", tree / DOC.relative_to(ROOT)))
    assert set(found["specs"]) - set(docs) == {NAME}

    # and nothing changed but the one folder and the one profile
    assert git(tree, "status", "--porcelain").splitlines() == [
        f"?? executive/robots/{NAME}/",
        f"?? executive/robots/profiles/{NAME}.yaml",
    ]
    new = git(tree, "ls-files", "--others", "--exclude-standard").split()
    folder = [
        f"executive/robots/{NAME}/{p.relative_to(TEMPLATE / 'newbot').as_posix()}"
        for p in (TEMPLATE / "newbot").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ]
    assert sorted(new) == sorted([*folder, f"executive/robots/profiles/{NAME}.yaml"])


def outside_package(tmp_path: Path) -> tuple[Path, Path]:
    """The template as a package of its own (``outsidebot``) in ``site``, named in the entry
    point group ``atom_executive.robots`` of a distribution whose metadata is there too, and
    its profile beside: (site, profile)."""
    site = tmp_path / "site"
    package = site / "outsidebot"
    shutil.copytree(TEMPLATE / "newbot", package, ignore=shutil.ignore_patterns("__pycache__"))
    for module in package.glob("*.py"):
        module.write_text(module.read_text().replace("newbot", "outsidebot"))
    profile = tmp_path / "outsidebot.yaml"
    profile.write_text((TEMPLATE / "newbot.yaml").read_text().replace("newbot", "outsidebot"))
    dist = site / "outsidebot-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: outsidebot\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[atom_executive.robots]\noutsidebot = outsidebot.robot:ROBOT\n"
    )
    return site, profile


def test_a_robot_packaged_elsewhere_is_found_by_its_entry_point(tmp_path: Path) -> None:
    site, profile = outside_package(tmp_path)
    found = inspect_robot(tmp_path, [site, ROOT], "outsidebot", str(profile))
    assert Path(found["robots"]) == ROOT / "executive" / "robots", "this checkout's registry"
    assert set(found["specs"]) == {*SPECS, "outsidebot"}
    assert found["specs"]["outsidebot"][0] == "outsidebot"
    assert "outsidebot.adapter" in found["refused"]

    done = run(
        [str(CLI), "validate", "--profile", str(profile), str(ROOT / MISSION)],
        cwd=tmp_path,
        path=[site, ROOT],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok (mission move_arm" in done.stderr


@pytest.mark.dds
def test_the_service_says_the_templates_adapter_is_not_written(
    tmp_path: Path, dds_domain: int
) -> None:
    """What docs/robots.md says of a robot whose adapter is the template's: the service
    stops at start-up on one line that says so (stdout, exit 2), rather than run without it."""
    site, profile = outside_package(tmp_path)
    missions, data = tmp_path / "missions", tmp_path / "data"
    missions.mkdir()
    data.mkdir()
    shutil.copy(ROOT / MISSION, missions)
    config = tmp_path / "config.yaml"
    config.write_text(
        f"profile: {profile}\ndomain: {dds_domain}\nmissions_dir: {missions}\ndata_dir: {data}\n"
    )
    done = run(
        [str(CLI), "run", "--config", str(config)], cwd=tmp_path, path=[site, ROOT], timeout=30
    )
    assert done.returncode == 2, done.stdout + done.stderr[-3000:]
    assert done.stdout.startswith(
        "atom-executive: the outsidebot adapter did not open: robot 'outsidebot': its adapter "
        "is not written yet (outsidebot.adapter)"
    ), done.stdout
