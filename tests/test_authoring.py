"""Authoring help: missions described, the pose and gesture libraries listed, "did you
mean" for unknown names, and keys made by ``keygen`` that the service and client read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml

from executive.cli import main
from executive.operator.authoring import format_missions
from executive.service.auth import Authenticator, load_keys, new_nonce, sign, write_key_file
from executive.suggest import did_you_mean, not_found

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = "\x1b[2J\x1b[Hstate: IDLE\x07"


def test_did_you_mean() -> None:
    assert did_you_mean("hom", ["home", "head_center"]) == " (did you mean 'home'?)"
    assert did_you_mean("delivery", ["deliver_drink", "head_scan"]) == (
        " (did you mean 'deliver_drink'?)"
    )
    assert did_you_mean("arm", ["arm_a", "arm_b", "head"]) == " (did you mean 'arm_a' or 'arm_b'?)"
    assert did_you_mean("right_opn", ["right_open", "right_pinch", "right_point"]) == (
        " (did you mean 'right_open'?)"
    )
    assert did_you_mean("zzz", ["home"]) == ""
    assert not_found("pose", "zzz", ["a", "b"]) == "no pose 'zzz' (known: a, b)"
    assert not_found("pose", "zzz", [str(i) for i in range(20)]) == "no pose 'zzz'"


def test_missions_are_described_with_parameter_types_and_defaults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["missions", "--dir", str(ROOT / "missions")]) == 0
    out = capsys.readouterr().out
    assert "greeting_wave\n    Wave at a visitor" in out
    assert "      waves (integer, 1..10): default 3 — How many times to wave." in out
    assert "fetch_drink" not in out.splitlines()  # a subtree is no mission
    assert main(["missions", "--dir", str(ROOT / "missions"), "--names"]) == 0
    names = capsys.readouterr().out.split()
    assert "head_scan" in names and all(" " not in n for n in names)


def test_a_reply_is_shown_as_text_whatever_it_holds() -> None:
    """A ``list_missions`` reply is anyone's to write on the domain."""
    text = format_missions(
        [
            "old_service_name",
            {"name": "m" + HOSTILE, "description": HOSTILE, "params": [{"name": HOSTILE}, 3]},
            42,
        ]
    )
    assert "\x1b" not in text and "\x07" not in text
    assert "old_service_name" in text and "m\\x1b[2J" in text and "42" in text


def test_poses_and_gestures_list_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    missions = str(ROOT / "missions")
    assert main(["poses", "--missions", missions]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "JOINTS", "FILE"]
    home = next(line for line in lines if line.startswith("home "))
    assert "torso" in home and "missions/poses/arms.yaml:" in home
    assert main(["gestures", "right_open", "--missions", missions]) == 0
    out = capsys.readouterr().out
    assert out.startswith("right_open  (missions/gestures/right_hand.yaml:")
    assert "    right_index: +0.400 rad" in out


@pytest.mark.parametrize("command", ["poses", "gestures"])
def test_the_library_from_another_directory_says_to_give_missions(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    """``./missions`` is the default: from elsewhere it said only "missions: not a directory"
    (issue 35, 7)."""
    monkeypatch.chdir(tmp_path)
    assert main([command]) == 2
    assert capsys.readouterr().err.strip() == (
        "atom-executive: missions: not a directory: give the mission directory with "
        "--missions DIR (default: ./missions)"
    )
    assert main([command, "--missions", str(ROOT / "missions")]) == 0
    assert main([command, "--missions", str(tmp_path)]) == 2  # a directory, no library
    assert "has no poses/ or gestures/: give the mission directory" in capsys.readouterr().err


def test_an_unknown_pose_or_gesture_gets_a_did_you_mean(
    capsys: pytest.CaptureFixture[str],
) -> None:
    missions = str(ROOT / "missions")
    assert main(["poses", "hom", "--missions", missions]) == 1
    assert capsys.readouterr().err.strip() == "atom-executive: no pose 'hom' (did you mean 'home'?)"
    assert main(["gestures", "right_opn", "--missions", missions]) == 1
    assert "(did you mean 'right_open'?)" in capsys.readouterr().err
    out = str(ROOT / "build" / "never-written.png")
    assert main(["pose", "preview", "right_reach_forwrd", "--missions", missions, "-o", out]) != 0
    err = capsys.readouterr().err
    assert "no pose or gesture 'right_reach_forwrd' (did you mean 'right_reach_forward'?)" in err
    assert not Path(out).exists()


def test_keygen_writes_a_private_key_the_service_line_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "config" / "alice.yaml"  # the folder is made too
    assert main(["keygen", "alice", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    client_key = load_keys(out)["alice"]
    assert len(client_key) == 32
    # the printed line, appended to the service's keys file, is the same key
    service_file = tmp_path / "keys.yaml"
    write_key_file(service_file, {"operator": os.urandom(32)})
    with service_file.open("a", encoding="utf-8") as f:
        f.write(captured.out)
    service_keys = load_keys(service_file)
    assert service_keys["alice"] == client_key and "operator" in service_keys
    assert captured.out.count("\n") == 1 and "add the line below" in captured.err.lower()
    # a command signed with the client's file passes the service's check
    auth = Authenticator(service_keys)
    nonce, stamp = new_nonce(auth.instance), auth.clock_ns()
    fields = ("r1", "alice", "stop", "{}", stamp, nonce)
    request = type(
        "R",
        (),
        dict(
            zip(
                ("request_id", "client_id", "verb", "args", "timestamp_ns", "nonce"),
                fields,
                strict=True,
            )
        ),
    )()
    request.signature = sign(client_key, *fields)
    assert auth.check(request) is None


def test_keygen_never_overwrites_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bob.yaml"
    out.write_text("bob: " + "ab" * 32 + "\n")
    out.chmod(0o644)  # a loose old file: --force replaces it, mode and all
    assert main(["keygen", "bob", "-o", str(out)]) == 2
    assert "exists" in capsys.readouterr().err and "ab" * 32 in out.read_text()
    assert main(["keygen", "bob", "-o", str(out), "--force"]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert load_keys(out)["bob"] != bytes.fromhex("ab" * 32)
    assert [p.name for p in tmp_path.iterdir()] == ["bob.yaml"]  # no temporary left


@pytest.mark.parametrize("client", ["", "two words", "bell\x07", "x" * 300])
def test_keygen_refuses_a_client_id_a_keys_file_cannot_carry(
    tmp_path: Path, client: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keygen", client, "-o", str(tmp_path / "k.yaml")]) == 2
    assert "\x07" not in capsys.readouterr().err
    assert not (tmp_path / "k.yaml").exists()


def test_keygen_line_quotes_what_yaml_would_misread(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for client in ("yes", "123", "a:b"):
        assert main(["keygen", client, "-o", str(tmp_path / f"{client}.yaml")]) == 0
        line = capsys.readouterr().out
        assert list(yaml.safe_load(line)) == [client], line
