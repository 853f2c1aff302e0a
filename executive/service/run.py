"""``atom-executive run``: the long-running service.

Start-up, in order, each failure stopping it with a message that names what is wrong:
config, robot profile, keys, missions; then DDS (retried while the network comes up);
then READY=1. While running, the tick loop publishes status and — only while ticks
keep completing — pings the systemd watchdog, so a hung loop gets the service
restarted (idle: nothing resumes).

Every signal has an answer. SIGTERM and SIGINT (a stop: exit 0) and every other signal
whose default would end the process (SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, ...: exit
128 + its number, so systemd's ``Restart=on-failure`` brings the service back) hold
motion, close the run and hand upper-body control back before the process exits: left
to its default, SIGUSR1 killed the service mid-mission with control on, the FSM left
in joint control and the run left RUNNING. SIGHUP is the daemon's reload (the unit's
``ExecReload=``): the keys file at once, the missions as the ``reload`` request reads
them, once no mission runs. SIGPIPE stays ignored (Python's default: a closed pipe is
an ``OSError`` where it is written). A signal a harness already handles (the bench's
probe uses SIGUSR1, the fault points SIGUSR2) is left to it.

A stop is bounded (``ShutdownGuard``): one still closing after ``SHUTDOWN_DUMP_S`` writes
every thread's stack to stderr (the journal says where it hung), and one still closing
after ``SHUTDOWN_EXIT_S``, motion held and control handed back, leaves at once with its exit
code, before systemd's SIGKILL (``TimeoutStopSec=10s``) would.

A handler takes no lock (``SignalFlag``): Python runs it on the main thread between two
bytecodes, and ``threading.Event.set`` there waited forever for the lock that the main
thread's own ``Event.wait`` held at that bytecode (a SIGUSR1 left the service running
mid-mission until its SIGKILL, once in a CI run; tests/test_signal_flag.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import faulthandler
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from cyclonedds.domain import DomainParticipant

from behaviours.actions.checkpoint import SINK
from executive import logs
from executive.core.runtime import Runtime
from executive.core.tree import Executive
from executive.mission.store import MissionStore
from executive.motion import realtime
from executive.records.checkpoints import Checkpoints
from executive.records.mcaprecord import record_runs
from executive.records.runchannels import RunChannels
from executive.records.runrecord import RunRecorder
from executive.seam.ports import AdapterError
from executive.seam.profile import ProfileError, RobotProfile, load_profile
from executive.service import faultpoints, notify
from executive.service.auth import Authenticator, KeyFileError, load_keys
from executive.service.config import ConfigError, ServiceConfig, check_data_dir, load_config
from executive.service.peers import PeerWatch
from executive.service.recover import Recoveries
from executive.service.recovery import PreviousInstance
from executive.service.requests import RequestServer
from executive.service.signalflag import SignalFlag
from executive.service.status import StatusPublisher, state_line
from executive.wire import dds

if TYPE_CHECKING:
    from executive.service.fleet import FleetPlane
    from executive.service.groot2 import Groot2Publisher

log = structlog.get_logger(__name__)

EXIT_CONFIG = 2
SHUTDOWN_DUMP_S = 5.0  # a stop still closing: every thread's stack to stderr
SHUTDOWN_EXIT_S = 8.0  # ... and, motion held, the process leaves (the unit SIGKILLs at 10 s)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)  # asked to stop: exit 0
# every other signal whose default action ends the process (signal(7): Term and Core),
# but those a fault raises in the process itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
# SIGABRT, SIGSYS: nothing safe runs after them) and SIGPIPE (ignored, as Python sets it)
FATAL_SIGNALS = (
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGALRM,
    signal.SIGVTALRM,
    signal.SIGPROF,
    signal.SIGIO,
    signal.SIGPWR,
    signal.SIGXCPU,
    signal.SIGXFSZ,
    signal.SIGTRAP,
    signal.SIGSTKFLT,
    *range(signal.SIGRTMIN, signal.SIGRTMAX + 1),
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run")  # its summary: executive.cli.COMMANDS
    p.add_argument("--config", type=Path, help="service config YAML (default: built-in defaults)")
    p.add_argument("--missions", type=Path, help="override missions_dir")
    p.add_argument("--data-dir", type=Path, help="override data_dir")
    p.set_defaults(handler=run)


def _fail(message: str) -> int:
    """Start-up refused: one line (one a problem) on stdout, nothing else. That is the
    operator's terminal, or under systemd the journal, where the ``<3>`` prefix files it at
    error priority (``SyslogLevelPrefix=``, on by default). A JSON log line on stderr said it
    a second time."""
    prefix = "<3>" if _stdout_is_journal() else ""
    first, *more = message.split("\n")  # a config's further problems, each naming its file
    print(prefix + f"\n{prefix}".join([f"atom-executive: {first}", *more]), flush=True)  # noqa: T201 - the operator's answer
    return EXIT_CONFIG


def _stdout_is_journal() -> bool:
    """Whether stdout is systemd's journal stream (``JOURNAL_STREAM``: its device:inode)."""
    try:
        device, inode = (int(x) for x in os.environ.get("JOURNAL_STREAM", "").split(":"))
        st = os.fstat(sys.stdout.fileno())
    except (ValueError, OSError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (device, inode)


def _load(
    args: argparse.Namespace,
) -> tuple[ServiceConfig, RobotProfile, Authenticator | None, MissionStore]:
    """Everything start-up reads from disk; raises with a message naming what is wrong."""
    config = load_config(args.config)
    if args.missions is not None:
        config = dataclasses.replace(config, missions_dir=str(args.missions))
    if args.data_dir is not None:
        config = dataclasses.replace(config, data_dir=str(args.data_dir))
    profile = load_profile(config.profile, fsm_overrides=config.fsm_ids)
    auth = Authenticator(load_keys(config.keys_file)) if config.keys_file else None
    store = MissionStore(config.missions_dir, profile)
    check_data_dir(config.data_dir, str(args.config or "config"))  # before DDS and READY
    return config, profile, auth, store


class _StartRefusedError(Exception):
    """Start-up cannot go on; the message is the operator's answer."""


def _open(config: ServiceConfig, profile: RobotProfile) -> tuple[DomainParticipant, Runtime, float]:
    """DDS, then the robot's adapter and the executive over it, and when DDS came up (the
    peer watch's settling counts from there); ``_StartRefusedError`` saying why not."""
    refused = realtime.check_dds_threads(os.environ.get("CYCLONEDDS_URI"))
    if refused is not None:  # CycloneDDS would abort the process, saying much less
        raise _StartRefusedError(refused)
    try:
        participant = dds.make_participant(config.domain, retry_for=config.dds_retry_s)
    except Exception as e:
        raise _StartRefusedError(f"DDS did not start within {config.dds_retry_s} s: {e}") from e
    since = time.monotonic()
    try:
        runtime = Runtime.build(
            profile,
            config.interface,
            participant=participant,
            tick_hz=config.tick_hz,
            idle_tick_hz=config.idle_tick_hz,
            stream_hz=config.stream_hz,
            stream_priority=config.stream_priority,
            safety=config.safety,
            zenoh_config=config.zenoh_config,
        )
    except AdapterError as e:  # e.g. the Aurora's bridge could not start: one line, no trace
        raise _StartRefusedError(f"the {profile.name} adapter did not open: {e}") from e
    return participant, runtime, since


def run(args: argparse.Namespace) -> int:
    logs.configure()
    try:
        config, profile, auth, store = _load(args)
    except (ConfigError, ProfileError, KeyFileError, ValueError) as e:
        return _fail(str(e))
    try:
        fleet = _fleet_plane(config)
    except ValueError as e:  # the fleet's zenoh config, refused by zenoh: named
        return _fail(str(e))
    signals = Signals()  # before the fault points: they take SIGUSR2 when armed
    try:
        fault_hooks = faultpoints.tick_hooks()
    except ValueError as e:
        return _fail(str(e))
    try:
        participant, runtime, discovering_since = _open(config, profile)
    except _StartRefusedError as e:
        return _fail(str(e))
    ex = runtime.executive
    adapter = runtime.adapter
    store.clock = ex.context.pauses.mission_time  # a pause freezes the missions' timeouts too
    peers = PeerWatch(participant, command_topics=adapter.command_topics, since=discovering_since)
    # first thing with the adapter open: what stops the robot and takes nothing from anyone
    # (the GRX's zero axes); missions and resets are refused until the rest is done
    previous = PreviousInstance(ex, config.previous_control, alone=peers.alone)
    previous.act_now()
    recorder = RunRecorder(config.data_dir)
    recorder.close_unfinished()  # runs a killed instance left RUNNING: ABORTED (crash)
    checkpoints = Checkpoints(recorder, lambda: ex.run)  # a mission's checkpoint leaves record
    ex.context.extras[SINK] = checkpoints  # through it (fsync'd by the recorder's thread)
    channels = record_runs(ex, profile, config.data_dir, config.foxglove)  # MCAP, live view
    publisher = StatusPublisher(
        participant,
        ex,
        interface_variant=adapter.interface_name,
        profile=profile.name,
        heartbeat_hz=config.status_hz,
        counters=lambda: (runtime.ticker.ticks, runtime.ticker.overruns),
    )
    server = RequestServer(
        participant, ex, store, auth=auth, status=lambda: _status_dict(publisher)
    )
    groot = _wire(runtime, publisher, recorder, previous, channels, config)
    runtime.after_tick.extend(fault_hooks)
    server.start()
    _join_fleet(fleet, server, publisher)
    runtime.start()
    notify.ready(f"IDLE; {len(store.names())} missions; {adapter.interface_name}; {profile.name}")
    log.info(
        "ready",
        missions=store.names(),
        interface=adapter.interface_name,
        profile=profile.name,
        domain=participant.domain_id if hasattr(participant, "domain_id") else None,
    )
    reloader = Reloader(store, auth, config.keys_file)
    server.reload_keys = reloader.keys
    server.recoveries = Recoveries(recorder.dir, checkpoints, ex)  # recover after a crash
    _supervise(signals, runtime, peers, publisher, reloader)
    guard = ShutdownGuard(signals.exit_code())
    notify.stopping()
    log.info(
        "stopping: holding motion and releasing control",
        signal=signal.Signals(signals.received).name if signals.received else None,
    )
    server.stop()
    if fleet is not None:
        fleet.close()
    runtime.close(released=guard.released.set)
    groot.close()
    faultpoints.hang_in_close()
    recorder.close()
    channels.close()  # after the runtime: the last run's end is in its file
    return signals.exit_code()


class _Groot2:
    """The Groot2 publisher when the config has one (ZeroMQ imported only then): its
    statuses after each tick; a port it cannot take is one of the status' problems."""

    def __init__(self, config: ServiceConfig, runtime: Runtime, publisher: StatusPublisher) -> None:
        self.publisher: Groot2Publisher | None = None
        if config.groot2 is None:
            return
        from executive.service.groot2 import start_groot2

        groot, refused = start_groot2(runtime.executive, config.groot2.port, config.groot2.bind)
        if groot is not None:
            runtime.after_tick.append(groot.on_tick)
        before = publisher.problems
        publisher.problems = lambda: before() + refused + (groot.problems() if groot else [])
        self.publisher = groot

    def close(self) -> None:
        if self.publisher is not None:
            self.publisher.close()


def _join_fleet(
    fleet: FleetPlane | None, server: RequestServer, publisher: StatusPublisher
) -> None:
    """What DDS gets, the fleet plane gets too (handed over, never sent from the tick
    thread); its requests are answered by the DDS server's own ``answer``; a robot id
    claimed by another executive too is one of the status' problems."""
    if fleet is None:
        return
    fleet.answer = server.answer
    if server.auth is not None:  # the instance commands are bound to (else its own)
        fleet.instance = server.auth.instance
    problems = publisher.problems
    publisher.problems = lambda: problems() + fleet.problems()
    publisher.writer = fleet.tee(publisher.writer)  # type: ignore[assignment]
    fleet.start()


def _fleet_plane(config: ServiceConfig) -> FleetPlane | None:
    """The fleet plane when the config has one (zenoh imported only then); ValueError
    naming ``fleet.zenoh_config`` if zenoh refuses that file."""
    if config.fleet is None:
        return None
    from executive.service.fleet import FleetPlane

    try:
        return FleetPlane(config.fleet)
    except ValueError as e:
        raise ValueError(f"fleet.zenoh_config: {e}") from None


class ShutdownGuard:
    """A stop that overruns says where it hung and, once motion is held, ends.

    Armed when the stop is acted on. At ``SHUTDOWN_DUMP_S`` faulthandler's own thread (it
    needs no GIL: a hang that holds it is dumped too) writes every thread's stack to stderr,
    under systemd the journal. At ``SHUTDOWN_EXIT_S``, once ``released`` is set (the hold
    sent, control handed back: ``Runtime.close``), the rest of the close (the stream's
    thread, DDS, the records' last flush) is abandoned, said loudly, and the process ends
    with the code the stop would have had; before ``released`` it waits for it, since
    leaving earlier is what systemd's SIGKILL does anyway. A process already in the
    interpreter's finalization runs no Python thread: there only the stacks are written.
    """

    def __init__(self, exit_code: int) -> None:
        self.exit_code = exit_code
        self.released = threading.Event()  # set by the stopping thread: no signal handler
        self.since = time.monotonic()
        faulthandler.dump_traceback_later(SHUTDOWN_DUMP_S, exit=False)
        threading.Thread(target=self._run, name="shutdown-guard", daemon=True).start()

    def _run(self) -> None:
        time.sleep(SHUTDOWN_EXIT_S)  # an orderly stop has ended the process long before
        if not self.released.is_set():
            log.critical(
                "stop overran before motion was held; every thread's stack is on stderr",
                seconds=round(time.monotonic() - self.since, 1),
            )
            self.released.wait()
        log.critical(
            "stop overran; motion held and control released: leaving without the rest of "
            "the close (every thread's stack is on stderr)",
            seconds=round(time.monotonic() - self.since, 1),
            exit_code=self.exit_code,
        )
        os._exit(self.exit_code)


class Signals:
    """The service's answer to every signal (the module's docstring): a stop or a reload
    is only noted here, on the main thread between two bytecodes (in ``SignalFlag``s,
    which take no lock); ``_supervise`` acts."""

    def __init__(self) -> None:
        self.stop = SignalFlag()
        self.reload = SignalFlag()
        self.received = 0  # the signal that stopped the service; 0: none yet
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._on_stop)
        for sig in FATAL_SIGNALS:
            if signal.getsignal(sig) == signal.SIG_DFL:  # not a harness's (bench, tests)
                signal.signal(sig, self._on_stop)
        if signal.getsignal(signal.SIGHUP) == signal.SIG_DFL:
            signal.signal(signal.SIGHUP, lambda *_: self.reload.set())

    def _on_stop(self, signum: int, _frame: object) -> None:
        if not self.received:
            self.received = signum
        self.stop.set()

    def exit_code(self) -> int:
        """0 when asked to stop (SIGTERM, SIGINT); 128 + the signal for any other, as if
        it had killed the process: systemd counts it a failure and restarts the unit."""
        return 0 if self.received in (0, *STOP_SIGNALS) else 128 + self.received


class Reloader:
    """What ``reload`` and SIGHUP re-read: the missions (``MissionStore.reload``: start's
    rules) and the keys file. A keys file that no longer loads keeps the keys in use."""

    def __init__(self, store: MissionStore, auth: Authenticator | None, keys_file: str | None):
        self.store = store
        self.auth = auth
        self.keys_file = keys_file

    def keys(self) -> tuple[bool, str]:
        if self.auth is None or self.keys_file is None:
            return True, "no keys_file"
        try:
            keys = load_keys(self.keys_file)
        except KeyFileError as e:
            log.error("keys not reloaded; keeping the keys in use", reason=str(e))
            return False, f"keys not reloaded, keeping the {len(self.auth.keys)} in use: {e}"
        self.auth.keys = keys  # one assignment: a request checks against the old or the new
        log.info("keys reloaded", clients=sorted(keys))
        return True, f"{len(keys)} client key{'s' if len(keys) != 1 else ''}"

    def missions(self) -> tuple[bool, str]:
        ok, message = self.store.reload()
        log.info("missions reloaded" if ok else "missions not reloaded", result=message)
        return ok, message


def _wire(
    runtime: Runtime,
    publisher: StatusPublisher,
    recorder: RunRecorder,
    previous: PreviousInstance,
    channels: RunChannels,
    config: ServiceConfig,
) -> _Groot2:
    """What follows each tick and each state change: records, status, the watchdog ping,
    the Groot2 publisher (returned: closed with the service)."""
    ex = runtime.executive
    last_line = [""]

    def on_change(executive: Executive) -> None:
        recorder.on_change(executive)
        channels.on_change(executive)
        line = state_line(executive)
        if line != last_line[0]:
            last_line[0] = line
            notify.status(line)

    ex.on_change = on_change
    publisher.problems = lambda: recorder.problems() + previous.problems() + channels.problems()
    publisher.recovery = previous.document  # what a previous instance left: found, sent
    runtime.while_stalled.append(publisher.maybe_publish)  # status goes on while no tick does
    ping_every = notify.watchdog_interval() or 1.0
    last_ping = [0.0]

    def after_tick() -> None:
        previous.on_tick()
        recorder.on_tick(ex)
        channels.on_tick(ex)
        publisher.maybe_publish()
        now = time.monotonic()
        if now - last_ping[0] >= ping_every / 2:  # only a loop that ticks pings
            last_ping[0] = now
            notify.watchdog()

    runtime.after_tick.append(after_tick)
    return _Groot2(config, runtime, publisher)


def _supervise(
    signals: Signals,
    runtime: Runtime,
    peers: PeerWatch,
    publisher: StatusPublisher,
    reloader: Reloader,
) -> None:
    """The main thread until a stop signal: discovery's types against ours, other
    controllers of the robot (executive/service/peers.py: conflicts refuse missions; a
    newcomer that stands by is one of the status' problems), the tick loop's health, and
    SIGHUP's reload (keys at once; missions once idle, as the ``reload`` request)."""
    ex = runtime.executive
    problems = publisher.problems
    publisher.problems = lambda: problems() + list(peers.verdict.notes)
    peers.watch(ex)  # at once (executive/service/peers.py: when it first looks)
    missions_due = False
    # often until the watch can say whether this executive is alone (recovery waits for it)
    while not signals.stop.wait(0.5 if peers.alone() is not None else 0.05):
        if signals.reload.is_set():
            signals.reload.clear()
            log.info("SIGHUP: reloading keys and missions")
            reloader.keys()
            missions_due = True
        if missions_due and ex.run is None:  # a run's missions stay until it ends
            missions_due = False
            reloader.missions()
        if (mismatches := runtime.adapter.wire_mismatches()) is not None:
            ex.interface_mismatches = tuple(mismatches)
            notify.status("INTERFACE MISMATCH: " + "; ".join(ex.interface_mismatches))
        peers.watch(ex)
        if not runtime.ticker.healthy():
            log.error("tick loop is not ticking; the watchdog ping has stopped")


def _status_dict(publisher: StatusPublisher) -> dict[str, Any]:
    s = publisher.snapshot()
    return {
        "state": s.state,
        "mission": s.mission,
        "run_id": s.run_id,
        "active_node": s.active_node,
        "safety": s.safety,
        "safety_reason": s.safety_reason,
        "last_result": s.last_result,
        "last_reason": s.last_reason,
    }
