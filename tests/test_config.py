"""Service config: defaults for everything; every bad key named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from executive.service.config import (
    ConfigError,
    ServiceConfig,
    check_data_dir,
    load_config,
    parse_config,
)

ROOT = Path(__file__).resolve().parents[1]


def test_no_file_and_empty_file_are_all_defaults(tmp_path: Path) -> None:
    assert load_config(None) == ServiceConfig()
    empty = tmp_path / "c.yaml"
    empty.write_text("")
    assert load_config(empty) == ServiceConfig()


def test_values_are_taken() -> None:
    cfg = parse_config(
        {
            "tick_hz": 100,
            "interface": "sdk-1.1.0",
            "safety": {"max_state_age": 0.2},
            "fsm_ids": {"stand": 5},
        }
    )
    assert cfg.tick_hz == 100 and cfg.interface == "sdk-1.1.0"
    assert cfg.safety.max_state_age == 0.2 and cfg.fsm_ids == {"stand": 5}


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"tick_hz": 0}, "tick_hz"),
        ({"tick_hz": "fast"}, "tick_hz"),
        ({"stream_hz": -1}, "stream_hz"),
        ({"stream_priority": 0}, "stream_priority"),
        ({"stream_priority": 100}, "stream_priority"),
        ({"stream_priority": True}, "stream_priority"),
        ({"stream_priority": "high"}, "stream_priority"),
        ({"interface": "sdk-9"}, "interface"),
        ({"interface": "seed+colour=red"}, "interface"),
        ({"domain": 500}, "domain"),
        ({"fsm_ids": {"stand": "two"}}, "fsm_ids"),
        ({"safety": {"max_state_age": 0}}, "safety.max_state_age"),
        ({"safety": {"battery_critical": float("nan")}}, "safety.battery_critical"),
        ({"safety": {"estop": False}}, "safety.estop"),
        ({"safety": {"servo_errors": "no"}}, "safety.servo_errors"),
        ({"tickrate": 5}, "tickrate"),
        ({"profile": 3}, "profile"),
    ],
)
def test_bad_values_name_their_key(data: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(data, "svc.yaml")
    assert any(p.startswith(f"{key}:") for p in err.value.problems), err.value.problems
    assert str(err.value).startswith("svc.yaml: ")


@pytest.mark.parametrize("text", ["- 1\n", "a: [\n", "\xff\xfe"])
def test_unreadable_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="latin-1")
    with pytest.raises(ConfigError):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")


def test_a_yaml_error_is_one_line_naming_where(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("tick_hz: 50\nsafety: [\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).count("\n") == 0, str(err.value)
    assert "not valid YAML" in str(err.value) and "line 3" in str(err.value)


def test_problems_are_printable_lines(tmp_path: Path) -> None:
    """A key with an escape and a newline (YAML escapes in a quoted key) is named, shown."""
    path = tmp_path / "c.yaml"
    path.write_text('"\\x1b[2Jtick\\nstate: IDLE": 1\n')
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert "\x1b" not in message and "\n" not in message, message
    assert "\\x1b[2Jtick\\nstate: IDLE: unknown key" in message


# -- data_dir: checked at start-up, before DDS and READY ------------------------------------


def test_a_missing_data_dir_is_made(tmp_path: Path) -> None:
    check_data_dir(str(tmp_path / "a" / "b"))
    assert (tmp_path / "a" / "b" / "runs").is_dir()
    assert list((tmp_path / "a" / "b").iterdir()) == [tmp_path / "a" / "b" / "runs"]


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ("{file}", "is not a directory"),
        ("{file}/below", "cannot create it: Not a directory"),
        ("{runs_file}", "runs is not a directory"),
        ("/sys/atom-executive", "cannot create it"),  # read-only for root as well
        ("/sys", "cannot write in it"),
    ],
)
def test_a_data_dir_the_service_cannot_write_in_names_the_key(
    tmp_path: Path, where: str, words: str
) -> None:
    file = tmp_path / "file"
    file.write_text("")
    (tmp_path / "data" / "runs").parent.mkdir()
    (tmp_path / "data" / "runs").write_text("")
    path = where.format(file=file, runs_file=tmp_path / "data")
    with pytest.raises(ConfigError) as err:
        check_data_dir(path, "svc.yaml")
    assert str(err.value).startswith("svc.yaml: data_dir: "), str(err.value)
    assert words in str(err.value)


@pytest.mark.parametrize("from_config", [False, True])
def test_run_with_a_data_dir_it_cannot_use_is_one_line_and_exit_2(
    tmp_path: Path, from_config: bool
) -> None:
    """It was a traceback out of the run recorder, after DDS had come up."""
    file = tmp_path / "not-a-dir"
    file.write_text("")
    config = tmp_path / "c.yaml"
    config.write_text(f"data_dir: {file}\n")
    args = ["--config", str(config)] if from_config else ["--data-dir", str(file)]
    done = subprocess.run(
        [sys.executable, "-m", "executive.cli", "run", "--missions", str(ROOT / "missions"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done
    source = str(config) if from_config else "config"
    assert done.stdout == f"atom-executive: {source}: data_dir: {file} is not a directory\n"
    assert "Traceback" not in done.stderr and "READY" not in done.stderr, done.stderr


def test_a_refused_config_is_one_line_and_under_systemd_an_error_line_of_the_journal(
    tmp_path: Path,
) -> None:
    """docs/operating.md promises one line naming the key: it printed that line on stdout and a
    JSON log line saying it again on stderr (issue 35, 7). Under systemd (stdout the
    journal's stream, ``JOURNAL_STREAM``) the line carries ``<3>``: the journal files it at
    error priority, as the log line was."""
    config = tmp_path / "c.yaml"
    config.write_text("tick_hz: -3\n")
    argv = [sys.executable, "-m", "executive.cli", "run", "--config", str(config)]
    env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, env=env)
    assert done.returncode == 2, done
    line = f"atom-executive: {config}: tick_hz: must be >= 5 and <= 1000 Hz, got -3\n"
    assert (done.stdout, done.stderr) == (line, ""), done
    journal = tmp_path / "journal"
    with journal.open("w") as out:
        st = os.fstat(out.fileno())
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
        done = subprocess.run(argv, stdout=out, timeout=60, check=False, env=env)
    assert done.returncode == 2
    assert journal.read_text() == "<3>" + line


# -- issue 25: config checked like missions -------------------------------------------------


@pytest.mark.parametrize(
    ("data", "key", "words"),
    [  # each as reported: accepted, and then a flapping battery cause, a dead tick thread...
        ({"safety": {"battery_hysteresis": -50}}, "safety.battery_hysteresis", ">= 0"),
        ({"safety": {"battery_critical": 200}}, "safety.battery_critical", "<= 100"),
        ({"safety": {"battery_critical": 100}}, "safety.battery_hysteresis", "below 100"),
        ({"safety": {"battery_critical": 90, "battery_hysteresis": 10}}, "safety.battery_h", "100"),
        ({"safety": {"max_state_age": 1e9}}, "safety.max_state_age", "<= 5 s"),
        ({"tick_hz": 1.0e-300}, "tick_hz", ">= 5"),
        ({"tick_hz": 1.0e5}, "tick_hz", "<= 1000 Hz"),
        ({"idle_tick_hz": 1}, "idle_tick_hz", ">= 5"),
        ({"idle_tick_hz": "slow"}, "idle_tick_hz", "must be a number"),
        ({"idle_tick_hz": 60}, "idle_tick_hz", "at most tick_hz (50 Hz)"),
        ({"tick_hz": 20, "idle_tick_hz": 25}, "idle_tick_hz", "at most tick_hz (20 Hz)"),
        ({"stream_hz": 1.0e-6}, "stream_hz", ">= 10"),
        ({"stream_hz": 1.0e5}, "stream_hz", "<= 4000 Hz"),
        ({"status_hz": 1e-3}, "status_hz", ">= 0.5"),
        ({"status_hz": 1e6}, "status_hz", "<= 50"),
        ({"dds_retry_s": 0}, "dds_retry_s", "> 0"),
        ({"dds_retry_s": 1e12}, "dds_retry_s", "<= 3600"),
        ({"dds_retry_s": float("inf")}, "dds_retry_s", "must be a number"),
    ],
)
def test_numbers_out_of_their_range_are_refused(
    data: dict[str, object], key: str, words: str
) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(data, "svc.yaml")
    assert [p for p in err.value.problems if p.startswith(key) and words in p], err.value.problems


def test_the_edges_of_every_range_are_taken() -> None:
    cfg = parse_config(
        {
            "tick_hz": 5,
            "idle_tick_hz": 5,
            "stream_hz": 4000,
            "status_hz": 0.5,
            "dds_retry_s": 3600,
            "safety": {"battery_critical": 0, "battery_hysteresis": 0, "max_state_age": 5},
        }
    )
    assert (cfg.tick_hz, cfg.stream_hz, cfg.safety.battery_critical) == (5, 4000, 0)
    assert parse_config({"safety": {"battery_critical": 94.5, "battery_hysteresis": 5}})


@pytest.fixture
def specials(tmp_path: Path) -> dict[str, str]:
    """A FIFO, a socket, a character device (and a symbolic link to it), a directory."""
    import os
    import socket

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sock_path))
    sock.close()  # the socket file stays
    link = tmp_path / "zero-link"
    link.symlink_to("/dev/zero")
    return {
        "a FIFO": str(fifo),
        "a socket": str(sock_path),
        "a character device": "/dev/zero",
        "a character device ": str(link),
    }


@pytest.mark.parametrize(
    "key", ["profile", "zenoh_config", "keys_file", "missions_dir", "data_dir"]
)
def test_special_files_are_refused_for_every_path_key_in_one_line(
    specials: dict[str, str], key: str
) -> None:
    """Before any open: /dev/zero as the profile grew the service by ~200 MB/s (and it
    ignored SIGTERM); a FIFO keys_file hung start-up without a line."""
    for what, path in specials.items():
        data: dict[str, object] = {key: path}
        if key == "profile":
            data["interface"] = "seed"  # the interface check loads the profile: not this one
        with pytest.raises(ConfigError) as err:
            parse_config(data, "svc.yaml")
        assert err.value.problems == [f"{key}: {path} is {what.strip()}"], err.value.problems
        assert "\n" not in str(err.value)


def test_a_directory_where_a_file_belongs_and_a_file_where_a_directory_does(
    tmp_path: Path,
) -> None:
    file = tmp_path / "f"
    file.write_text("")
    with pytest.raises(ConfigError, match=f"keys_file: {tmp_path} is a directory"):
        parse_config({"keys_file": str(tmp_path)})
    with pytest.raises(ConfigError, match=f"missions_dir: {file} is not a directory"):
        parse_config({"missions_dir": str(file)})


def test_the_config_file_itself_must_be_a_regular_file(specials: dict[str, str]) -> None:
    for what, path in specials.items():
        with pytest.raises(ConfigError) as err:
            load_config(path)  # returns at once: nothing waits on the FIFO or reads /dev/zero
        assert err.value.problems == [f"cannot read: {what.strip()}, not a file"]


def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("tick_hz: 50\nprofile: atom-sdk\ntick_hz: 100\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert err.value.problems == ["tick_hz: given twice (lines 1 and 3)"]


def test_groot2_is_off_unless_set_and_on_loopback_unless_bind_says() -> None:
    from executive.service.config import Groot2Config

    assert ServiceConfig().groot2 is None
    assert parse_config({"groot2": None}).groot2 is None
    assert parse_config({"groot2": {}}).groot2 == Groot2Config(1667, "127.0.0.1")
    on = parse_config({"groot2": {"port": 1700, "bind": "10.0.0.5"}}).groot2
    assert on == Groot2Config(1700, "10.0.0.5")


@pytest.mark.parametrize(
    ("groot2", "said"),
    [
        ("yes", "groot2: must be a mapping"),
        ({"port": 65535}, "groot2.port: must be an integer 0..65534 (port + 1 is taken too)"),
        ({"port": "1667"}, "groot2.port: must be an integer"),
        ({"port": True}, "groot2.port: must be an integer"),
        ({"bind": "localhost"}, "groot2.bind: must be an IP address"),
        ({"bind": 127}, "groot2.bind: must be an IP address"),
        ({"host": "127.0.0.1"}, "groot2.host: unknown key (known: bind, port)"),
    ],
)
def test_a_bad_groot2_value_is_refused_naming_its_key(groot2: object, said: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config({"groot2": groot2}, "svc.yaml")
    assert any(p.startswith(said) for p in err.value.problems), err.value.problems
