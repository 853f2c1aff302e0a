"""The service's mission store: the mission files of one directory, loaded and checked.

Files are read when the store is (re)loaded, through one ``MissionLoader``; a start
builds from that snapshot, so editing a file on disk changes nothing until ``reload``.

One rule for the first load (the service's start) and every reload: the store takes the
directory, lists the missions this robot can run and skips the others, each reported
with why (the load's message, ``skipped()``, a log line each). A mission file with an
error (an unknown pose, not YAML) is skipped and said at once, in the reload's answer;
another robot's mission (one needing a capability this robot lacks, a directory shared
by several robots) is skipped and counted apart. Before, a reload refused the whole
directory for one bad file that a start would have skipped, so a new valid mission
needed a restart (issue 25); and what a reload kept differed from what a restart would
load. Only a directory that cannot be read refuses a reload (and the start), keeping
what was loaded.

Only missions valid for this robot are listed (``names``): an Adam service pointed at a
directory of Atom missions lists none of them, and says which capability or joint each
lacks.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import py_trees
import structlog

from executive.mission import checkpoints
from executive.mission.build import BuildError, build
from executive.mission.builders import BUILDERS
from executive.mission.loader import LoadResult, MissionLoader
from executive.mission.validate import NEEDS_CAPABILITY
from executive.seam.profile import RobotProfile

log = structlog.get_logger(__name__)
SHOWN_ERRORS = 5  # files whose first error a load's message repeats (skipped() has them all)


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
        self._loader, self._files, self._problems = loader, files, problems
        for name, why in problems.items():
            log.warning("mission skipped", mission=name, robot=self.profile.robot, problems=why[:3])
        real = {n: errs for n, errs in problems.items() if not _another_robots(errs)}
        others = len(problems) - len(real)
        notes = []
        if real:  # said at once, as the first load logs them: a typo is never silent
            first = [f"{errs[0]}" for errs in real.values()][:SHOWN_ERRORS]
            notes.append(f"{len(real)} skipped with errors ({', '.join(real)}): {'; '.join(first)}")
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
        prepared = self.prepare(name, params)
        return prepared.root, prepared.errors

    def prepare(self, name: str, params: dict[str, Any], checkpoint: str | None = None) -> Prepared:
        """Mission ``name`` built with ``params``, and what its run's record keeps of it
        (``meta``: the file, the sha256 of it and of its includes as loaded, the parameters
        as asked and as resolved, and ``library``: the sha256 of each pose and gesture
        library file and the entries the mission moves to, their joints as loaded). With
        ``checkpoint``: the mission recovery runs from that checkpoint
        (``executive.mission.checkpoints.resume_at``)."""
        if name in self._problems:
            return Prepared(None, self._problems[name])
        result = self._loader.check(self._files[name], args=params)
        mission = result.mission
        if mission is None:
            return Prepared(None, _errors(result) or [f"{name}: not a runnable mission"])
        sources = self._loader.sources(mission)
        root = self._loader.root_of(Path(mission.file).resolve())
        meta = {
            "file": mission.file,
            "content_hash": content_hash(sources),
            "sources": sources,
            "params": dict(params),
            "resolved": {k: v for k, v in mission.args.items()},
            "library": {
                "files": self._loader.library_sources(root),
                **checkpoints.library_record(mission, self._loader.library(root)),
            },
        }
        if checkpoint is not None:
            try:
                mission = checkpoints.resume_at(mission, checkpoint)
            except (KeyError, ValueError) as e:
                return Prepared(None, [str(e).strip("'\"")], meta)
        reaches = tuple(checkpoints.reaches(mission.root))
        try:
            return Prepared(build(mission, BUILDERS, clock=self.clock), [], meta, reaches)
        except BuildError as e:
            return Prepared(None, [str(e)], meta, reaches)


def content_hash(sources: dict[str, str]) -> str:
    """One sha256 over a mission's files' digests (``MissionLoader.sources``)."""
    text = json.dumps(sorted(sources.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Prepared:
    """A mission built for a run (``root``, None when it cannot be: ``errors`` say why) and
    what the run's record says of it (``meta``, ``MissionRun.meta``)."""

    root: py_trees.behaviour.Behaviour | None
    errors: list[str]
    meta: dict[str, Any] = field(default_factory=dict)
    # the moves of what is built to named poses and gestures (from a checkpoint: the part
    # recovery runs), with their joints as loaded: what recovery compares with the run's
    reaches: tuple[checkpoints.Reach, ...] = ()
