"""A site's secure layout (executive/service/fleet_site.py): the roster's checks, the
access control it gives zenoh, and certificates openssl verifies against the site's CA
with the common names the access control knows."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from executive.service.fleet_site import SiteError, acl, load_roster, make_site, parse_roster
from executive.wire.zenoh_session import load_config

ROSTER = {
    "site": "cafe",
    "robots": ["atom-1", "adam-1"],
    "operators": ["alice"],
    "monitors": ["wall"],
    "routers": ["lab"],
}


def test_a_bad_roster_names_its_file_and_keys(tmp_path: Path) -> None:
    path = tmp_path / "roster.yaml"
    path.write_text("site: 'a b'\nrobots: [atom-1, atom-1, 'x/y']\nextra: 1\n")
    with pytest.raises(SiteError) as e:
        load_roster(path)
    text = str(e.value)
    for part in ("extra: unknown key", "site: must be a name", "robots[1]", "robots[2]"):
        assert f"{path}: {part}" in text, text
    path.write_text("site: [\n")
    with pytest.raises(SiteError, match="not YAML"):
        load_roster(path)


def test_the_access_control_denies_by_default_and_gives_each_robot_its_own_keys() -> None:
    rules = acl(parse_roster(ROSTER))
    assert rules["enabled"] is True and rules["default_permission"] == "deny"
    by_id = {r["id"]: r for r in rules["rules"]}
    assert by_id["robot-atom-1"]["key_exprs"] == ["fleet/atom-1/**"]
    subjects = {s["id"]: s["cert_common_names"] for s in rules["subjects"]}
    assert subjects["robot-atom-1"] == ["robot.atom-1"]
    assert subjects["monitors"] == ["monitor.wall"] and subjects["routers"] == ["router.lab"]
    policies = {tuple(p["subjects"]): set(p["rules"]) for p in rules["policies"]}
    assert "request" in policies[("operators",)] and "request" not in policies[("monitors",)]
    assert policies[("robot-atom-1",)] == {"robot-atom-1", "interest"}
    assert all(r["permission"] == "allow" for r in rules["rules"])  # default deny does the rest


def test_the_layout_is_certificates_of_the_ca_and_configs_zenoh_accepts(tmp_path: Path) -> None:
    layout = make_site(parse_roster(ROSTER), tmp_path, port=17448)
    ca = tmp_path / "ca.pem"
    for cn in ("router.cafe", "robot.atom-1", "robot.adam-1", "operator.alice", "monitor.wall"):
        cert = tmp_path / f"{cn}.pem"
        ok = subprocess.run(
            ["openssl", "verify", "-CAfile", str(ca), str(cert)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert ok.returncode == 0, ok.stderr
        subject = subprocess.run(
            ["openssl", "x509", "-noout", "-subject", "-in", str(cert)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert subject.strip().endswith(f"CN = {cn}"), subject
        assert (tmp_path / f"{cn}-key.pem").stat().st_mode & 0o077 == 0  # keys: owner only
    assert not (tmp_path / "router.lab.pem").exists()  # the lab makes its own
    router = load_config(layout.router)
    assert json.loads(router.get_json("listen/endpoints")) == ["tls/127.0.0.1:17448"]
    assert json.loads(router.get_json("transport/link/tls/enable_mtls")) is True
    client = load_config(layout.client("robot", "atom-1"))
    assert json.loads(client.get_json("connect/endpoints")) == ["tls/127.0.0.1:17448"]
    before = ca.read_bytes()
    make_site(parse_roster(ROSTER), tmp_path, port=17448)  # again: the CA is kept
    assert ca.read_bytes() == before


def test_the_command_makes_the_layout_of_the_shipped_roster_example(tmp_path: Path) -> None:
    import sys

    root = Path(__file__).resolve().parents[1]
    example = root / "deploy" / "fleet-roster.example.yaml"
    out = subprocess.run(
        [sys.executable, "-m", "executive.cli", "fleet-site", str(example), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"--zenoh-config {tmp_path / 'router.cafe.json5'} --roster {example}" in out.stdout
    for cn in ("robot.atom-1", "robot.grx-1", "operator.alice", "monitor.wall-display"):
        assert (tmp_path / f"{cn}.json5").exists() and (tmp_path / f"{cn}.pem").exists(), cn
    bad = tmp_path / "bad.yaml"
    bad.write_text("robots: [a]\n")
    out = subprocess.run(
        [sys.executable, "-m", "executive.cli", "fleet-site", str(bad), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2 and f"{bad}: site: must be a name" in out.stdout, out.stdout
