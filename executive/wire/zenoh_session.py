"""zenoh sessions, configured the zenoh way: a standard JSON5 config file (the GRX's wire,
the fleet plane, the router and the fleet view all open theirs here).

``load_config`` reads the file (``zenoh.Config.from_file``; the shipped default is
``executive/resources/zenoh-loopback.json5``, loopback only) and applies ``KEY:VALUE``
overrides with ``Config.insert_json5``, the way ``zenohd --cfg`` does, so a test or the
demo moves endpoints to its own ports without writing a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import zenoh

LOOPBACK_CONFIG = Path(__file__).resolve().parents[1] / "resources" / "zenoh-loopback.json5"

ConfigSource = str | Path | zenoh.Config | None


class ConfigError(ValueError):
    """A zenoh config file or override that zenoh does not accept (the message says which)."""


def parse_override(text: str) -> tuple[str, str]:
    """``listen/endpoints:["tcp/127.0.0.1:7448"]`` -> (key, JSON5 value)."""
    key, sep, value = text.partition(":")
    if not sep or not key or not value:
        raise ConfigError(f"{text!r}: expected KEY:VALUE, e.g. 'connect/endpoints:[\"tcp/...\"]'")
    return key.strip(), value.strip()


def load_config(
    source: ConfigSource = None, overrides: Mapping[str, str] | Iterable[str] = ()
) -> zenoh.Config:
    """The config in ``source`` (a path, a Config, None: the loopback one) with overrides
    (``{key: json5}`` or ``"key:json5"`` strings) applied in order."""
    if isinstance(source, zenoh.Config):
        config = source
    else:
        path = Path(source) if source is not None else LOOPBACK_CONFIG
        try:
            config = zenoh.Config.from_file(str(path))
        except zenoh.ZError as e:
            raise ConfigError(f"{path}: not a zenoh config: {e}") from None
    pairs = (
        list(overrides.items())
        if isinstance(overrides, Mapping)
        else [parse_override(o) for o in overrides]
    )
    for key, value in pairs:
        try:
            config.insert_json5(key, value)
        except zenoh.ZError as e:
            raise ConfigError(f"{key}: {value}: {e}") from None
    return config


def open_session(config: zenoh.Config) -> zenoh.Session:
    """A zenoh session on ``config``; ConfigError if zenoh refuses it."""
    try:
        return zenoh.open(config)
    except zenoh.ZError as e:
        raise ConfigError(f"cannot open a zenoh session: {e}") from None


def close_session(session: zenoh.Session) -> None:
    """Close ``session`` (its subscribers stop, its publishers are undeclared)."""
    session.close()  # type: ignore[no-untyped-call]  # the stub leaves it unannotated
