"""The service's own files (its config, the keys file, the paths its config names): regular
files only, bounded, and YAML whose keys are unique.

A path key may name anything: ``profile: /dev/zero`` once grew the service by ~200 MB/s
and ignored SIGTERM (the read never ended), a FIFO as ``keys_file`` hung start-up without
a log line, and PyYAML keeps the last of two ``alice:`` lines without a word. So a path
is looked at before anything opens it (``special``), a file is read from a non-blocking
descriptor checked to be a regular file (``read_text``: it cannot be swapped between the
check and the read), and a mapping key given twice is an error naming both lines
(``load_unique``), as the mission loader does (``executive.language.yaml_source``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

MAX_BYTES = 1024 * 1024  # a config or keys file is a few KiB


class NotAFileError(ValueError):
    """Why a file cannot be read as the service's: one line, without the path (the
    caller names the file or the key)."""


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def special(path: str | Path, *, directory: bool = False) -> str | None:
    """What ``path`` is when it is neither a regular file (nor, with ``directory``, a
    directory) — ``"a FIFO"``, ``"a character device"``... — or None (also when it does
    not exist: that is for whoever opens it to say). Symbolic links are followed: a link
    to /dev/zero is a character device. Nothing is opened."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):  # missing, unreadable, a NUL in the name
        return None
    if (stat.S_ISREG(mode) and not directory) or (stat.S_ISDIR(mode) and directory):
        return None
    if stat.S_ISREG(mode):
        return "not a directory"
    return _kind(mode)


def read_text(path: str | Path, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of the regular file ``path``; ``NotAFileError`` (or ``OSError`` from
    the open) otherwise. Looked at first (opening a socket fails, a device may block), then
    opened non-blocking and looked at again, so a FIFO is refused, never waited on."""
    if what := special(path):
        raise NotAFileError(f"{what}, not a file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotAFileError(f"{_kind(mode)}, not a file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise NotAFileError(f"larger than {max_bytes // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise NotAFileError(f"not UTF-8 text (byte {e.start})") from None


class DuplicateKeyError(yaml.YAMLError):
    """A mapping key given twice; ``line`` and ``first`` are 1-based."""

    def __init__(self, key: object, line: int, first: int) -> None:
        super().__init__(f"line {line}: {key!r} given twice (first on line {first})")
        self.key, self.line, self.first = key, line, first


class _UniqueKeys(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping key it has already seen."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise DuplicateKeyError(key, line, seen[key])
                seen[key] = line
            except TypeError:  # an unhashable key: PyYAML's own error says so below
                continue
        return super().construct_mapping(node, deep=deep)


def load_unique(text: str) -> Any:
    """``yaml.safe_load`` that raises ``DuplicateKeyError`` for a key given twice."""
    return yaml.load(text, Loader=_UniqueKeys)  # noqa: S506 - a SafeLoader subclass
