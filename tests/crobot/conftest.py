"""The C robot's fixtures: ``crobot_exe`` (built once per variant) and ``start_crobot``."""

from tests.crobot.harness import crobot_exe, start_crobot  # noqa: F401 - the fixtures
