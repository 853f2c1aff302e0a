"""deploy/security: what make-pki.sh produces, what the governance and permissions say,
and that the PC2 example and the unit's drop-in are what the README says they are.
No DDS here; tests/integration/test_dds_security.py runs the same files on loopback."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
SECURITY = DEPLOY / "security"
MAKE_PKI = SECURITY / "make-pki.sh"
CDDS = "{https://cdds.io/config}"
PROTECTED = {
    "enable_discovery_protection": "true",
    "enable_liveliness_protection": "true",
    "enable_read_access_control": "true",
    "enable_write_access_control": "true",
    "metadata_protection_kind": "ENCRYPT",
    "data_protection_kind": "ENCRYPT",
}
OPEN = {
    "enable_discovery_protection": "false",
    "enable_liveliness_protection": "false",
    "enable_read_access_control": "false",
    "enable_write_access_control": "false",
    "metadata_protection_kind": "NONE",
    "data_protection_kind": "NONE",
}


def make_pki(out: Path, *names: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(MAKE_PKI), str(out), *names],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("pki")
    done = make_pki(out, "executive", "operator", "monitor", "alice:operator")
    assert done.returncode == 0, done.stderr
    yield out


def signed_xml(p7s: Path, ca: Path) -> ET.Element:
    """The document inside an S/MIME file, after openssl checked the CA's signature."""
    verified = subprocess.run(
        ["openssl", "smime", "-verify", "-text", "-in", str(p7s), "-CAfile", str(ca)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr
    return ET.fromstring(verified.stdout.encode())


def shape(element: ET.Element) -> tuple[object, ...]:
    """An element as tags, attributes and stripped text, whitespace between elements ignored."""
    text = (element.text or "").strip()
    return (element.tag, sorted(element.attrib.items()), text, [shape(e) for e in element])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_and_modes(pki: Path) -> None:
    assert mode(pki / "private") == 0o700 and mode(pki / "private" / "ca.key") == 0o600
    assert not (pki / "ca.key").exists(), "the CA's key stays in private/"
    for name in ("executive", "operator", "monitor", "alice"):
        assert mode(pki / f"{name}.key") == 0o600
        for public in (f"{name}.pem", f"{name}.permissions.p7s", f"{name}.security.xml"):
            assert mode(pki / public) == 0o644


def test_permissions_name_the_certificate_subject_and_the_role(pki: Path) -> None:
    grants = {
        "executive": (
            {"atom/executive/status", "atom/executive/reply"},
            {"atom/executive/request"},
        ),
        "operator": ({"atom/executive/request"}, {"atom/executive/status", "atom/executive/reply"}),
        "alice": ({"atom/executive/request"}, {"atom/executive/status", "atom/executive/reply"}),
        "monitor": (set(), {"atom/executive/status"}),
    }
    for name, (publish, subscribe) in grants.items():
        x509 = ["openssl", "x509", "-in", str(pki / f"{name}.pem"), "-noout"]
        subject = subprocess.run(
            [*x509, "-subject", "-nameopt", "RFC2253"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert subject == f"subject=CN={name},O=Atom executive"
        grant = signed_xml(pki / f"{name}.permissions.p7s", pki / "ca.pem").find(
            "permissions/grant"
        )
        assert grant is not None
        assert grant.findtext("subject_name") == subject.removeprefix("subject=")
        assert grant.findtext("default") == "DENY"
        rule = grant.find("allow_rule")
        assert rule is not None
        topics = [
            {t.text for t in rule.iterfind(f"{k}/topics/topic")} for k in ("publish", "subscribe")
        ]
        assert topics == [publish, subscribe], name
        partitions = [p.text for p in rule.iterfind("*/partitions/partition")]
        assert partitions and not any(partitions), "the default partition only"


def test_governance_leaves_rt_open_and_protects_the_executive(pki: Path) -> None:
    rule = signed_xml(pki / "governance.p7s", pki / "ca.pem").find(
        "domain_access_rules/domain_rule"
    )
    assert rule is not None
    assert rule.findtext("allow_unauthenticated_participants") == "true"  # the firmware
    assert rule.findtext("rtps_protection_kind") == "NONE"  # else rt/* would be protected too
    assert rule.findtext("domains/id_range/max") == "230"  # CycloneDDS 0.10 accepts no more
    topic_rules = {
        r.findtext("topic_expression"): {c.tag: c.text for c in r if c.tag != "topic_expression"}
        for r in rule.iterfind("topic_access_rules/topic_rule")
    }
    assert list(topic_rules) == ["atom/executive/*", "rt/*", "atom_sim/*", "*"]  # first match wins
    assert topic_rules["atom/executive/*"] == PROTECTED and topic_rules["*"] == PROTECTED
    assert topic_rules["rt/*"] == OPEN and topic_rules["atom_sim/*"] == OPEN


def test_pc2_example_is_the_generated_executive_fragment(tmp_path: Path) -> None:
    done = make_pki(tmp_path, "executive", ATOM_PKI_PREFIX="/etc/atom-executive/security")
    assert done.returncode == 0, done.stderr
    generated = ET.parse(tmp_path / "executive.security.xml").getroot()
    example = ET.parse(DEPLOY / "cyclonedds-pc2-security.xml").getroot()
    assert shape(example) == shape(generated)
    domain = example.find(f"{CDDS}Domain")
    assert domain is not None and [e.tag for e in domain] == [f"{CDDS}Security"]  # no network


def test_drop_in_appends_the_identity_to_the_units_network_config(tmp_path: Path) -> None:
    unit = (DEPLOY / "atom-executive.service").read_text()
    network = re.search(r"^Environment=CYCLONEDDS_URI=(\S+)$", unit, re.M)
    drop_in = (SECURITY / "dds-security.conf").read_text()
    secured = re.findall(r"^Environment=CYCLONEDDS_URI=(\S+)$", drop_in, re.M)
    assert network is not None and "[Service]" in drop_in
    identity = "file:///etc/atom-executive/security/executive.security.xml"
    assert secured == [f"{network.group(1)},{identity}"]
    # and systemd takes it: the unit with the drop-in beside it verifies without a word
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: `make test` installs Debian's systemd package"
    script = shutil.which("atom-executive") or str(DEPLOY.parent / ".venv/bin/atom-executive")
    path = tmp_path / "atom-executive.service"
    path.write_text(unit.replace("/opt/atom-executive/.venv/bin/atom-executive", script))
    (tmp_path / "atom-executive.service.d").mkdir()
    (tmp_path / "atom-executive.service.d" / "dds-security.conf").write_text(drop_in)
    result = subprocess.run(
        [analyze, "verify", "--man=no", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr


def test_a_second_run_keeps_the_ca_and_the_identities(pki: Path) -> None:
    before = {p.name: p.read_bytes() for p in (pki / "ca.pem", pki / "operator.pem")}
    done = make_pki(pki, "operator", "bob:monitor")
    assert done.returncode == 0, done.stderr
    assert "created the CA" not in done.stdout and "created identity bob" in done.stdout
    assert {p.name: p.read_bytes() for p in (pki / "ca.pem", pki / "operator.pem")} == before
    signed_xml(pki / "bob.permissions.p7s", pki / "ca.pem")


@pytest.mark.parametrize(
    ("names", "words"),
    [(["eve/1"], "letters, digits"), (["eve:admin"], "no permissions template")],
)
def test_bad_names_are_refused(tmp_path: Path, names: list[str], words: str) -> None:
    done = make_pki(tmp_path, *names)
    assert done.returncode == 2 and words in done.stderr, done.stderr
