"""The service's mission store: the mission files of one directory, loaded and checked.

Files are read when the store is (re)loaded, through one ``MissionLoader``; a start
builds from that snapshot, so editing a file on disk changes nothing until ``reload``.
A reload that finds a real error (an unknown pose, a file that is not YAML) is refused and
the store keeps what it had: a bad file never replaces a good one, and a typo in a new
mission is said at once, not skipped in silence. Another robot's missions are not errors:
a directory may be shared by several robots, and a mission that needs a capability this
robot lacks (its other errors, a pose this robot's library lacks, follow from that) is
skipped and reported. The first load takes the directory whatever it holds (the service
starts on what it can run) and reports the rest.

Only missions valid for this robot are listed (``names``); the others are skipped and
``skipped()`` says why (each load logs them once): an Adam service pointed at a directory
of Atom missions lists none of them, and says which capability or joint each lacks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import py_trees
import structlog

from behaviours.builders import BUILDERS
from executive.mission.build import BuildError, build
from executive.mission.loader import LoadResult, MissionLoader
from executive.mission.validate import NEEDS_CAPABILITY
from executive.robots.profile import RobotProfile

log = structlog.get_logger(__name__)


def _errors(result: LoadResult) -> list[str]:
    return [str(d) for d in result.errors]


def _another_robots(errors: list[str]) -> bool:
    """A mission written for another robot: the validator refused a capability this
    robot lacks (its other errors follow from that)."""
    return any(NEEDS_CAPABILITY in e for e in errors)


class MissionStore:
    """``MissionLibrary`` for the request server, over ``missions_dir/*.yaml``."""

    def __init__(
        self,
        directory: str | Path,
        profile: RobotProfile,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.directory = Path(directory)
        self.profile = profile
        self.clock = clock
        self._loader = MissionLoader(profile, self.directory)
        self._files: dict[str, Path] = {}
        self._problems: dict[str, list[str]] = {}
        ok, message = self.reload()
        if not ok:
            raise ValueError(message)

    def _scan(self, loader: MissionLoader) -> tuple[dict[str, Path], dict[str, list[str]]]:
        files: dict[str, Path] = {}
        problems: dict[str, list[str]] = {}
        for path in sorted(self.directory.glob("*.yaml")):
            result = loader.check(path)
            if result.mission is not None and result.mission.kind != "mission":
                continue
            files[path.stem] = path
            if not result.ok:
                problems[path.stem] = _errors(result)
        return files, problems

    def reload(self) -> tuple[bool, str]:
        if not self.directory.is_dir():
            return False, f"{self.directory}: not a directory"
        loader = MissionLoader(self.profile, self.directory)
        files, problems = self._scan(loader)
        real = {n: errs for n, errs in problems.items() if not _another_robots(errs)}
        if real and self._files:
            lines = [f"{name}: {e}" for name, errs in real.items() for e in errs]
            return (
                False,
                f"refused: {len(lines)} problems in {', '.join(real)}; keeping the loaded "
                "missions: " + "; ".join(lines[:5]),
            )
        self._loader, self._files, self._problems = loader, files, problems
        for name, why in problems.items():
            log.warning("mission skipped", mission=name, robot=self.profile.robot, problems=why[:3])
        others = len(problems) - len(real)
        notes = [f"{len(real)} with errors"] if real else []
        if others:
            notes.append(f"{others} skipped (another robot's: not valid for {self.profile.name})")
        return True, f"{len(files) - len(problems)} missions loaded" + "".join(
            f", {n}" for n in notes
        )

    def names(self) -> list[str]:
        """The missions this robot can run."""
        return sorted(set(self._files) - set(self._problems))

    def skipped(self) -> dict[str, list[str]]:
        """Missions in the directory that this robot cannot run, and why."""
        return {name: list(problems) for name, problems in sorted(self._problems.items())}

    def validate(self, name: str) -> list[str]:
        return list(self._problems.get(name, []))

    def build(
        self, name: str, params: dict[str, Any]
    ) -> tuple[py_trees.behaviour.Behaviour | None, list[str]]:
        if name in self._problems:
            return None, self._problems[name]
        result = self._loader.check(self._files[name], args=params)
        if result.mission is None:
            return None, _errors(result) or [f"{name}: not a runnable mission"]
        try:
            return build(result.mission, BUILDERS, clock=self.clock), []
        except BuildError as e:
            return None, [str(e)]
