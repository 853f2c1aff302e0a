"""The Aurora's tests: processes in .venv-aurora and .venv-aurora-vendor (``harness``)."""

from tests.aurora.harness import aurora_procs  # noqa: F401 - the fixture, shared
