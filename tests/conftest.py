"""Shared fixtures: every DDS test gets its own domain on loopback.

The domain ids of one run start at a random offset and advance per test, so two runs on
one machine (or a leftover process from an earlier test) never share a domain. All DDS
traffic stays on 127.0.0.1 through the project's loopback CycloneDDS config.
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from executive import dds

pytest_plugins = ["tests.rigs"]  # the in-process executive rig fixture

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK_CONFIG = ROOT / "executive" / "resources" / "cyclonedds-loopback.xml"

# Every process a test starts inherits these: loopback only, whatever the caller had set.
os.environ["CYCLONEDDS_URI"] = LOOPBACK_CONFIG.as_uri()

_domains = itertools.count(random.SystemRandom().randrange(1, dds.MAX_DOMAIN_ID))


@pytest.fixture
def dds_domain(monkeypatch: pytest.MonkeyPatch) -> int:
    """A DDS domain id no other test of this run uses; exported as ATOM_DDS_DOMAIN."""
    domain = 1 + next(_domains) % dds.MAX_DOMAIN_ID
    monkeypatch.setenv(dds.DOMAIN_ENV, str(domain))
    return domain


@pytest.fixture
def participant(dds_domain: int) -> Iterator[dds.DomainParticipant]:
    """A participant on the test's own domain, deleted when the test ends."""
    with dds.open_participant(dds_domain) as p:
        yield p
