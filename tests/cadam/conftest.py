"""``cadam_exe(variant)``: the C side built once per Adam interface variant per session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cadam.harness import build


@pytest.fixture(scope="session")
def cadam_exe(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    built: dict[str, Path] = {}

    def get(variant: str) -> Path:
        if variant not in built:
            built[variant] = build(variant, tmp_path_factory.mktemp(f"cadam-{variant}"))
        return built[variant]

    return get
