"""The fleet plane's shipped zenoh configs (issue 24): each is one zenoh accepts, the
loopback ones never leave 127.0.0.1 and send no discovery packet, the deploy examples are
the modes the site layout says (docs/fleet.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from executive.wire.zenoh_session import load_config

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = ("zenoh-router-loopback.json5", "zenoh-fleet-loopback.json5")


def _get(config: object, key: str) -> object:
    return json.loads(config.get_json(key))  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", LOOPBACK)
def test_the_loopback_configs_stay_on_loopback_with_scouting_off(name: str) -> None:
    config = load_config(ROOT / "executive" / "resources" / name)
    endpoints = [*_get(config, "listen/endpoints"), *_get(config, "connect/endpoints")]  # type: ignore[misc]
    assert endpoints and all(e.startswith("tcp/127.0.0.1:") for e in endpoints), endpoints
    assert _get(config, "scouting/multicast/enabled") is False
    assert _get(config, "scouting/gossip/enabled") is False


def test_the_site_layout_examples_are_a_router_and_a_client() -> None:
    router = load_config(ROOT / "deploy" / "zenoh-router.json5")
    client = load_config(ROOT / "deploy" / "zenoh-fleet.json5")
    assert _get(router, "mode") == "router" and _get(router, "connect/endpoints")
    assert _get(client, "mode") == "client" and _get(client, "listen/endpoints") == []
