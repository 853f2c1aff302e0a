"""DDS Security on loopback, set up as deploy/README.md tells a deployment to.

A CA and identities made by deploy/security/make-pki.sh; the service runs with the
executive's identity (its CYCLONEDDS_URI: the loopback config plus the generated
``executive.security.xml``); the simulated Atom runs without security, as the firmware
does. Each identity is a process of its own: CycloneDDS matches the endpoints of one
process locally, without the security plugins, so only between processes does
security decide anything.

What it shows:
- an operator identity with its HMAC key starts a mission, and the mission moves the
  unsecured robot: rt/* stays open both ways (commands out, state in);
- an unauthenticated participant (on the domain: it reads the sim) cannot send a request,
  cannot read the status, and cannot fake one (the status topic is protected, so an
  open reader would also have meant an open writer);
- the "monitor" identity reads the status but may not create a request writer; a
  monitor that signs itself more permissions with its own CA gets nothing at all;
- an operator identity with a wrong HMAC key is refused by the executive's HMAC check.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from executive.harness.stack import LOOPBACK_URI, Stack
from executive.service.auth import write_key_file
from executive.wire import dds

ROOT = Path(__file__).resolve().parents[2]
MAKE_PKI = ROOT / "deploy" / "security" / "make-pki.sh"
PROBE_SECONDS = 8.0  # each probe's window; a secured match on loopback takes about 1 s
# serial: every participant's DDS Security handshake is public-key crypto; beside two other
# test files on a 2-core machine a CLI's first request once waited out its 20 s
pytestmark = [pytest.mark.dds, pytest.mark.serial]


@dataclass
class Secured:
    """The sim (no security) and the service (the executive's identity) on one domain."""

    stack: Stack
    pki: Path

    def uri(self, name: str) -> str:
        """CYCLONEDDS_URI for identity ``name``: the loopback config, then its Security."""
        return loopback_plus(self.pki / f"{name}.security.xml")

    def run(self, uri: str, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            env={**self.stack.env(), "CYCLONEDDS_URI": uri},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def cli(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        """``atom-executive ARGS`` as identity ``name``."""
        proc = self.run(self.uri(name), "-m", "executive.cli", *args, "--timeout", "20")
        out, err = proc.communicate(timeout=60)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def loopback_plus(fragment: Path) -> str:
    """The loopback config, then ``fragment``, which must not touch the network settings."""
    domain = ET.parse(fragment).getroot().find("{https://cdds.io/config}Domain")
    assert domain is not None and [e.tag for e in domain] == ["{https://cdds.io/config}Security"]
    return f"{LOOPBACK_URI},{fragment.as_uri()}"


def _make_pki(out: Path, *names: str) -> None:
    subprocess.run(["bash", str(MAKE_PKI), str(out), *names], check=True, capture_output=True)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    # A domain of its own, leased as the dds_domain fixture leases one (but for the whole
    # module, which shares one service), and within 1..230: CycloneDDS 0.10's access
    # control refuses governance and permissions that name domain ids above 230.
    lease = dds.lease_domain(1, 230)
    tmp = tmp_path_factory.mktemp("dds-security")
    _make_pki(tmp / "pki", "executive", "operator", "monitor")
    stack = Stack(tmp / "stack", lease.domain)
    stack.workdir.mkdir()
    try:
        stack.start_sim("--amr-speed", "3.0", "--seed", "3")
        stack.write_config()
        secured = Secured(stack, tmp / "pki")
        # no wait for the status here: this process's participant has no identity, and
        # seeing the status is what an identity is needed for
        stack.start_service(env={"CYCLONEDDS_URI": secured.uri("executive")}, wait=False)
        yield secured
    finally:
        stack.close()
        lease.release()


@pytest.fixture(scope="module")
def probes(secured: Secured, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Four identities, at once, each its own process (tests/integration/security_probe.py)."""
    # the monitor's real identity, with permissions it signed itself with a CA of its own
    rogue = tmp_path_factory.mktemp("rogue-ca")
    _make_pki(rogue, "monitor:operator")
    fragment = (secured.pki / "monitor.security.xml").read_text()
    for item in ("PermissionsCA>file:{}/ca.pem", "file:{}/governance.p7s", "file:{}/monitor.per"):
        assert item.format(secured.pki) in fragment
        fragment = fragment.replace(item.format(secured.pki), item.format(rogue))
    forged = rogue / "forged-monitor.security.xml"
    forged.write_text(fragment)  # IdentityCA, certificate and key stay the real ones

    probe = ("-m", "tests.integration.security_probe", "--for", str(PROBE_SECONDS))
    procs = {
        "operator": secured.run(secured.uri("operator"), *probe),
        "monitor": secured.run(secured.uri("monitor"), *probe),
        "intruder": secured.run(LOOPBACK_URI, *probe, "--fake-status", "intruder:1"),
        "forged": secured.run(loopback_plus(forged), *probe),
    }
    results = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"{name}: {err}"
        results[name] = json.loads(out)
    return results


def _executive_ids(secured: Secured) -> list[str]:
    return [f"{socket.gethostname()}:{secured.stack.procs['executive'].pid}"]


def test_operator_with_identity_and_key_moves_the_unsecured_robot(secured: Secured) -> None:
    keys = str(secured.stack.workdir / "keys.yaml")
    started = secured.cli("operator", "start", "head_scan", "--key-file", keys)
    assert started.returncode == 0, started.stdout + started.stderr
    # rt/* both ways: the secured executive's commands reach the sim, which runs no
    # security, and the sim's state reaches the executive (stale state would be a SAFE_STOP)
    moved = secured.stack.sim.wait_status(lambda s: s.is_upper_control and s.upper.applied, 30)
    assert moved is not None, "no joint command from the secured executive reached the sim"
    status = secured.cli("operator", "status", "--json")
    assert status.returncode == 0, status.stderr
    document = json.loads(status.stdout)  # the versioned status document
    assert document["state"] == "RUNNING" and document["mission"] == "head_scan", document
    assert document["safety"]["condition"] == "CLEAR", document["safety"]
    stopped = secured.cli("operator", "stop", "--key-file", keys)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def test_operator_probe_reads_status_and_gets_replies(
    secured: Secured, probes: dict[str, Any]
) -> None:
    """The control: the probe itself works, so what the others are denied is denied."""
    operator = probes["operator"]
    assert operator["statuses"] == _executive_ids(secured), operator
    assert operator["reply"] is not None and operator["reply"]["code"] == 0, operator
    assert operator["sim_seen"], operator


def test_unauthenticated_participant_can_neither_request_nor_read_nor_fake_status(
    probes: dict[str, Any],
) -> None:
    intruder = probes["intruder"]
    assert intruder["sim_seen"], "the intruder must be on the domain for this to mean anything"
    assert intruder["client"] == "ok" and intruder["reply"] is None, intruder
    assert intruder["request"].startswith("no executive is listening"), intruder
    assert intruder["statuses"] == [], intruder
    assert intruder["fake_writer"] == "ok", intruder  # it may write all it likes ...
    for name in ("operator", "monitor"):  # ... no secured reader takes it
        assert "intruder:1" not in probes[name]["statuses"], probes[name]


def test_monitor_reads_status_but_may_not_write_requests(
    secured: Secured, probes: dict[str, Any]
) -> None:
    monitor = probes["monitor"]
    assert monitor["statuses"] == _executive_ids(secured), monitor
    assert monitor["client"].startswith("refused: [DDS_RETCODE_NOT_ALLOWED_BY_SECURITY]"), monitor
    assert monitor["reply"] is None, monitor


def test_monitor_with_self_signed_permissions_gets_nothing(probes: dict[str, Any]) -> None:
    """Its own CA lets it create a request writer; the executive's CA does not accept it."""
    forged = probes["forged"]
    assert forged["sim_seen"], forged
    assert forged["client"] == "ok", forged  # its own access control let it ...
    assert forged["request"].startswith("no executive is listening"), forged  # ... nobody else
    assert forged["statuses"] == [], forged


def test_operator_identity_with_a_wrong_hmac_key_is_refused(secured: Secured) -> None:
    """DDS Security lets the operator's request through; the HMAC check still stops it."""
    wrong = secured.stack.workdir / "wrong-keys.yaml"
    write_key_file(wrong, {"operator": bytes(32)})
    refused = secured.cli("operator", "start", "head_scan", "--key-file", str(wrong))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stdout.strip() == "refused: bad signature"
    listed = secured.cli("operator", "missions")  # read-only verbs need no key, as before
    assert listed.returncode == 0 and "head_scan" in listed.stdout.split(), listed.stderr
