"""``atom-executive run`` as its own process: sd_notify over a real socket, clean refusals."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from executive.service.auth import write_key_file
from executive.service.client import ExecutiveClient
from executive.wire import dds

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.dds


def start(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "executive.cli",
            "run",
            "--data-dir",
            str(tmp_path / "data"),
            "--missions",
            str(ROOT / "missions"),
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_ready_watchdog_status_then_sigterm(tmp_path: Path, dds_domain: int) -> None:
    path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(30)
    proc = start(tmp_path, env={"NOTIFY_SOCKET": str(path), "WATCHDOG_USEC": "2000000"})
    try:
        messages: list[str] = []
        while not any(m.startswith("READY=1") for m in messages):
            messages.append(sock.recv(4096).decode())
        ready = next(m for m in messages if m.startswith("READY=1"))
        assert "STATUS=IDLE; 6 missions; seed; atom-sdk" in ready
        while "WATCHDOG=1" not in messages:  # pings follow from the tick loop
            messages.append(sock.recv(4096).decode())
        with dds.open_participant(dds_domain) as participant:  # and the service answers on DDS
            assert ExecutiveClient(participant).status(30).state == "IDLE"
        proc.terminate()
        assert proc.wait(30) == 0
        while not any(m.startswith("STOPPING=1") for m in messages):
            messages.append(sock.recv(4096).decode())
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ("tick_hz: -1\n", "tick_hz: must be >= 5 and <= 1000 Hz, got -1"),
        ("profile: /dev/zero\n", "profile: /dev/zero is a character device"),
        ("keys_file: {fifo}\n", "keys_file: {fifo} is a FIFO"),
        ("safety: {max_state_age: x}\n", "safety.max_state_age: must be a number"),
        ("profile: /nonexistent.yaml\n", "/nonexistent.yaml: cannot read"),
        ("keys_file: {keys}\n", "too open"),
    ],
)
def test_bad_start_up_input_stops_it_naming_the_key(
    tmp_path: Path, config: str, words: str
) -> None:
    keys = tmp_path / "keys.yaml"
    keys.write_text("operator: " + "ab" * 32 + "\n")
    keys.chmod(0o644)
    fifo = tmp_path / "keys.fifo"  # hung start-up without a line (issue 25)
    os.mkfifo(fifo, 0o600)
    path = tmp_path / "config.yaml"
    path.write_text(config.replace("{keys}", str(keys)).replace("{fifo}", str(fifo)))
    proc = start(tmp_path, "--config", str(path))
    out, _ = proc.communicate(timeout=60)  # /dev/zero grew it by ~200 MB/s, never ending
    assert proc.returncode == 2
    assert words.replace("{fifo}", str(fifo)) in out and "Traceback" not in out


def test_killed_mid_mission_and_restarted_it_comes_up_idle(tmp_path: Path, dds_domain: int) -> None:
    # without a robot's state a mission is refused (its safety sources are silent). The sim
    # alone, not the start_sim fixture: its controller's command writers are another
    # controller of the robot to the service's peer watch, and no mission starts beside one
    # (a start used to slip in before the watch had judged them; recovery now waits for it)
    sim = subprocess.Popen(
        [sys.executable, "-m", "executive.robots.atom.sim", "--seed", "3"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _killed_and_restarted(tmp_path, dds_domain)
    finally:
        sim.terminate()
        sim.wait(30)


def _killed_and_restarted(tmp_path: Path, dds_domain: int) -> None:
    key = os.urandom(32)
    write_key_file(tmp_path / "keys.yaml", {"operator": key})
    config = tmp_path / "config.yaml"
    config.write_text(f"keys_file: {tmp_path / 'keys.yaml'}\n")
    proc = start(tmp_path, "--config", str(config))
    try:
        with dds.open_participant(dds_domain) as participant:
            client = ExecutiveClient(participant, key=key)
            # it refuses missions until it has heard every safety source of the sim
            assert client.wait_status(lambda s: s.state == "IDLE" and not s.not_ready, 30)
            reply = client.request("start", {"mission": "head_scan"}, timeout=10)
            assert reply.code == 0
            assert client.wait_status(lambda s: s.state == "RUNNING" and s.active_node, 10)
    finally:
        proc.kill()
        proc.wait(10)
    # what the run did up to the kill is on disk: its start and its tree's transitions
    record = tmp_path / "data" / "runs" / f"{reply.message}.jsonl"
    events = [json.loads(line) for line in record.read_text().splitlines()]
    assert events[0]["event"] == "state" and events[0]["state"] == "RUNNING"
    assert any(e["event"] == "node" and e["status"] == "RUNNING" for e in events)
    proc = start(tmp_path, "--config", str(config))
    try:
        with dds.open_participant(dds_domain) as participant:
            status = ExecutiveClient(participant).wait_status(
                lambda s: s.executive_id.endswith(f":{proc.pid}"), 30
            )
            assert status is not None and status.state == "IDLE" and status.mission == ""
    finally:
        proc.terminate()
        proc.wait(30)


def _can_unshare_net() -> bool:
    try:
        return subprocess.run(["unshare", "--net", "true"], check=False).returncode == 0
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not _can_unshare_net(), reason="needs unshare --net (root or user namespaces)")
def test_at_boot_it_waits_for_the_network_then_comes_up(tmp_path: Path) -> None:
    """In a network namespace of its own with loopback down (as the robot's network is early
    at boot), the service retries DDS; once it has said so, loopback comes up and it says
    READY=1. The link goes up on the service's word, not after a fixed sleep: on a loaded
    machine the interpreter alone took longer than the sleep, and the retry never happened."""
    path = tmp_path / "notify"  # a socket path works across network namespaces
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(60)
    proc = subprocess.Popen(  # unshare execs the service: proc.pid is the service, in the netns
        [
            "unshare",
            "--net",
            sys.executable,
            "-m",
            "executive.cli",
            "run",
            "--data-dir",
            str(tmp_path / "data"),
            "--missions",
            str(ROOT / "missions"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "NOTIFY_SOCKET": str(path)},
    )
    out: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.append(line)
            if "DDS is not up yet; retrying" in line:
                break
        else:
            raise AssertionError("the service never said it was retrying:\n" + "".join(out))
        up = ["nsenter", f"--net=/proc/{proc.pid}/ns/net", "ip", "link", "set", "lo", "up"]
        subprocess.run(up, check=True)
        while not sock.recv(4096).decode().startswith("READY=1"):
            pass
        proc.terminate()
        rest, _ = proc.communicate(timeout=30)
        text = "".join(out) + rest
        assert proc.returncode == 0, text
        assert "DDS is up" in text, text
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()


def test_the_reload_request_follows_starts_rules_and_rereads_the_keys(
    tmp_path: Path, dds_domain: int
) -> None:
    """Issue 25: start skipped a bad mission file and reported it; ``reload`` refused the
    whole directory for it, so a new valid mission needed a restart. Now a reload lists
    what a restart would, says what it skipped, and takes a client added to the keys file."""
    import shutil

    missions = tmp_path / "missions"
    shutil.copytree(ROOT / "missions", missions)
    key, carol = os.urandom(32), os.urandom(32)
    write_key_file(tmp_path / "keys.yaml", {"operator": key})
    config = tmp_path / "config.yaml"
    config.write_text(f"keys_file: {tmp_path / 'keys.yaml'}\n")
    proc = start(tmp_path, "--config", str(config), "--missions", str(missions))
    try:
        with dds.open_participant(dds_domain) as participant:
            client = ExecutiveClient(participant, key=key)
            assert client.wait_status(lambda s: s.executive_id.endswith(f":{proc.pid}"), 30)
            before = json.loads(client.request("list_missions", timeout=10).payload)
            scan = (missions / "head_scan.yaml").read_text()
            (missions / "head_nod.yaml").write_text(scan.replace("head_scan", "head_nod"))
            (missions / "typo.yaml").write_text(scan.replace("head_center", "head_centre"))
            write_key_file(tmp_path / "keys.yaml", {"operator": key, "carol": carol})
            reply = client.request("reload", timeout=10)
            assert reply.code == 0, reply.message
            assert "skipped with errors (typo" in reply.message, reply.message
            assert (
                "unknown pose 'head_centre'" in reply.message and "2 client keys" in reply.message
            )
            names = json.loads(client.request("list_missions", timeout=10).payload)
            assert names == sorted([*before, "head_nod"])
            typo = client.request("validate", {"mission": "typo"}, timeout=10)
            assert typo.code == 6 and "head_centre" in typo.message + typo.payload  # INVALID
            as_carol = ExecutiveClient(participant, key=carol, client_id="carol")
            assert as_carol.request("reload", timeout=10).code == 0
    finally:
        proc.terminate()
        proc.wait(30)
    restarted = start(tmp_path, "--config", str(config), "--missions", str(missions))
    try:
        with dds.open_participant(dds_domain) as participant:
            client = ExecutiveClient(participant, key=key)
            assert client.wait_status(lambda s: s.executive_id.endswith(f":{restarted.pid}"), 30)
            assert json.loads(client.request("list_missions", timeout=10).payload) == names
    finally:
        restarted.terminate()
        restarted.wait(30)


def test_an_adapter_that_cannot_open_refuses_start_in_one_line(
    tmp_path: Path, dds_domain: int
) -> None:
    """The Aurora's bridge interpreter missing: exit 2 with the reason, not a traceback."""
    config = tmp_path / "config.yaml"
    config.write_text(f"profile: aurora\ndomain: {dds_domain}\n")
    missing = tmp_path / "no-such-python"
    proc = start(
        tmp_path,
        "--config",
        str(config),
        "--missions",
        str(ROOT / "missions" / "aurora"),
        env={"ATOM_AURORA_PYTHON": str(missing)},
    )
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2, out
    assert "Traceback" not in out
    line = next(x for x in out.splitlines() if x.startswith("atom-executive: "))
    assert "the aurora adapter did not open" in line and str(missing) in line
