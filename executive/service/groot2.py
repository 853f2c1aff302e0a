"""The running tree for Groot2: BehaviorTree.CPP v4's Groot2 protocol, served by the service.

With ``groot2: {port: 1667}`` in the service config, Groot2 ("Connect", localhost:1667) and
terminal monitors such as ``btview snapshot -p 1667`` show the tree the service ticks (the
safety root with the mission in its slot) and every node's status at the last tick. The
protocol is BehaviorTree.CPP's own (``include/behaviortree_cpp/loggers/groot2_protocol.h``,
``src/loggers/groot2_publisher.cpp``): a ZeroMQ REP socket on the port, a PUB socket on the
next one (it carries only breakpoint notices, so ours never sends), every request a
6-byte header (protocol 2, the request type, a 32-bit id) that the reply echoes before a
16-byte tree UUID and the payload; an error is the frames ``["error", message]``.

- ``T``: the tree as ``WriteTreeToXML(tree, true, true)`` writes it: ``<root
  BTCPP_format="4">``, each node an element named by its model with ``name``, ``_uid``
  and its ports, the mission a ``SubTree`` (``_fullpath`` "Mission Slot") whose
  ``<BehaviorTree>`` follows, and a ``<TreeNodesModel>``. The mission's part is its export
  (``executive.mission.btcpp``) with the values it runs with: a running mission and
  ``atom-executive export --resolved`` are one tree to a client. UIDs are numbered as
  BehaviorTree.CPP's factory numbers them (pre-order from 1), so the same tree always has
  the same ones; a new mission is a new tree with a new UUID, which tells a connected
  client to ask for it again. A mission that ended stays in the slot until the next one
  starts (the same tree, the same UUID), so a client sees how it ended: which node failed.
- ``S``: 3 bytes a node (its uid, little-endian, and a status byte: 0 idle, 1 running,
  2 success, 3 failure; 10 + the result for a node gone idle after one, as
  BehaviorTree.CPP's publisher encodes it), of the last tick. A finished mission's nodes
  are all idle after their last result, as BehaviorTree.CPP resets a tree that finished
  (the failed leaf 13, its finished siblings 12, a halted one 11, one never ticked 0).
- ``B``: ``"name;name"`` -> msgpack ``{name: {key: value}}`` of the blackboard (the robot's
  snapshot as the status document states it); names that are no tree of ours are skipped.
- Hooks: inserting one is refused, with an error saying why (a breakpoint stops the tick
  that runs the safety watchdog; a replaced result fakes the robot's answer); removing
  one answers "Node ID not found", as for any hook that is not there; remove-all and
  disable-all succeed; the dump is ``[]``. Recording (``r`` start/stop, ``t``
  transitions: 9 bytes each, 6 of microseconds since the start, the uid, the status) as
  BehaviorTree.CPP records, from each tick's changes, at most 1000 kept.

Off the tick thread: the tick thread only hands over, after each tick, the statuses (one
bytes object) and, when the tree changed, its elements; the server thread renders the XML
(once per tree) and answers. Nothing a client sends reaches the tree. Every request is
bounded work (a reply is a copy of what is ready, the XML is cached), malformed frames
get an error reply, messages over ``MAX_MESSAGE`` bytes are refused by ZeroMQ itself,
and a flood is served at most ``MAX_RATE`` requests a second (the server thread sleeps
rather than hold the interpreter the tick thread needs). Loopback unless the config says
otherwise (``groot2.bind``): the protocol has no authentication.
"""

from __future__ import annotations

import collections
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgpack  # type: ignore[import-untyped]  # no stubs; pyproject pins it
import py_trees
import structlog
import zmq
from py_trees.common import Status

from behaviours.state import SNAPSHOT_KEY, GatherRobotState
from executive.core.safety import SafetyWatchdog
from executive.core.tree import Executive, Idle, MissionRun, MissionSlot
from executive.mission import btcpp

log = structlog.get_logger(__name__)

PROTOCOL = 2  # BT::Monitor::kProtocolID
HEADER = 6  # protocol, request type, 32-bit request id
MAX_MESSAGE = 64 * 1024  # a request is a header and a little JSON: more is refused
MAX_RATE = 1000.0  # requests a second at most; a faster client waits for its replies
POLL_S = 0.5  # the server thread's wake to look for a stop (no client: two wakes a second)
TRANSITIONS_KEPT = 1000  # BehaviorTree.CPP's publisher keeps as many
SLOT_PATH = "Mission Slot"

STATUS_BYTE = {Status.INVALID: 0, Status.RUNNING: 1, Status.SUCCESS: 2, Status.FAILURE: 3}
IDLE_AFTER = 10  # "idle after a result": 10 + that result (groot2_publisher.cpp)

REFUSED_HOOKS = (
    "hooks are not served here: a breakpoint would stop the tick that runs the safety "
    "watchdog, and a replaced result would fake the robot's answer"
)

CORE_MODELS = (
    btcpp.REACTIVE_PARALLEL,
    btcpp.Model(
        "Action",
        "GatherRobotState",
        doc="Writes the robot's snapshot to the blackboard every tick; always SUCCESS.",
    ),
    btcpp.Model(
        "Action",
        "SafetyWatchdog",
        doc="FAILURE while all is clear; RUNNING while a SAFE-STOP is latched (preempts the "
        "mission below it).",
    ),
    btcpp.Model(
        "Action",
        "MissionSlot",
        doc="The mission slot with no mission: FAILURE, so Idle runs.",
    ),
    btcpp.Model("Action", "Idle", doc="Nothing to do: always RUNNING."),
)


@dataclass(frozen=True)
class LiveTree:
    """One shape of the running tree: its UUID, elements (uid order) and the nodes whose
    status each shows. Made on the tick thread when the tree changes; read-only after."""

    uuid: bytes
    trees: btcpp.Trees
    elements: tuple[btcpp.Element, ...]
    nodes: tuple[Any, ...]  # py_trees nodes, read on the tick thread only
    models: tuple[btcpp.Model, ...]
    names: frozenset[str]  # the subtrees a blackboard request may name
    fullpaths: Mapping[str, str] = field(default_factory=dict)
    _xml: list[bytes] = field(default_factory=list)  # rendered once, by the server thread

    def xml(self) -> bytes:
        if not self._xml:
            text = btcpp.to_xml(self.trees, self.models, uids=True, fullpaths=self.fullpaths)
            self._xml.append(text.encode())
        return self._xml[0]


def live_tree(ex: Executive, run: MissionRun | None) -> LiveTree:
    """The executive's tree as elements: the core by its classes, ``run`` (the running
    mission, or the one that ended last) as its export, a ``SubTree`` in the slot. On the
    tick thread."""
    others: dict[str, btcpp.Element] = {}
    mission_id = btcpp.tree_id(run.name) if run is not None else ""

    def core(node: py_trees.behaviour.Behaviour) -> btcpp.Element:
        name = {"name": node.name}
        if isinstance(node, GatherRobotState):
            return btcpp.Element("GatherRobotState", name, node=node)
        if isinstance(node, SafetyWatchdog):
            return btcpp.Element("SafetyWatchdog", name, node=node)
        if isinstance(node, Idle):
            return btcpp.Element("Idle", name, node=node)
        if isinstance(node, MissionSlot):
            if run is None:
                return btcpp.Element("MissionSlot", name, node=node)
            body = btcpp.mission_elements(
                run.root, others, str(run.meta.get("file", "")), live=True
            )
            attrs = {"ID": mission_id, "_fullpath": SLOT_PATH}
            return btcpp.Element("SubTree", attrs, [body], node)
        return maker.generic(node, [core(c) for c in node.children])

    maker = btcpp.Maker(others, ".", live=True)
    root = core(ex.tree.root)
    main_id = btcpp.tree_id(ex.tree.root.name)
    elements = btcpp.number(root)
    models = {m.id: m for m in (*CORE_MODELS, *btcpp.leaf_models())}
    for e in elements:  # a class the core gained since: drawn as an action of its name
        if e.tag not in models and e.tag not in btcpp.BUILTIN_PORTS and e.tag != "SubTree":
            models[e.tag] = btcpp.Model("Action", e.tag)
    fullpaths = {main_id: ""}
    names = {main_id}
    if mission_id:
        fullpaths[mission_id] = SLOT_PATH
        names.add(SLOT_PATH)
    return LiveTree(
        uuid=uuid.uuid4().bytes,
        trees=btcpp.Trees(main_id, root, "", others),
        elements=tuple(elements),
        nodes=tuple(e.node for e in elements),
        models=tuple(models.values()),
        names=frozenset(names),
        fullpaths=fullpaths,
    )


class Statuses:
    """Each tick's statuses as the ``S`` reply's bytes, "idle after a result" included;
    while recording, each change as a transition. On the tick thread."""

    def __init__(self, tree: LiveTree) -> None:
        self.tree = tree
        self.uids = [e.uid for e in tree.elements]
        self.shown = [0] * len(self.uids)  # the byte each node shows now
        self.raw = [0] * len(self.uids)  # its status at the last tick (0-3)
        self.idle = [False] * len(self.uids)  # a finished mission's node: idle from now on

    def update(self, recording: Recording | None) -> bytes:
        now = time.monotonic()
        for i, node in enumerate(self.tree.nodes):
            raw = 0 if self.idle[i] else STATUS_BYTE.get(node.status, 0)
            if raw == 0:
                before = self.shown[i]
                shown = before if before >= IDLE_AFTER else (IDLE_AFTER + before if before else 0)
            else:
                shown = raw
            if recording is not None and raw != self.raw[i]:
                recording.add(now, self.uids[i], raw)
            self.shown[i], self.raw[i] = shown, raw
        return self._bytes()

    def finish(self, recording: Recording | None) -> bytes:
        """The mission in the slot ended (its last tick already counted): from now on its
        nodes are idle after their last result, as BehaviorTree.CPP resets a finished
        tree, and nothing ticks them again; the slot's ``SubTree`` shows what its tree's
        root does (the slot itself goes on as the empty slot, which this tree no longer
        shows). The statuses again."""
        for i, e in enumerate(self.tree.elements):
            if e.tag == "SubTree" and e.children:
                mission = {id(x) for x in e.walk()}
                self.idle = [id(x) in mission for x in self.tree.elements]
                self.update(recording)
                self.shown[i] = self.shown[i + 1]  # pre-order: its tree's root is next
        return self._bytes()

    def _bytes(self) -> bytes:
        out = bytearray(3 * len(self.uids))
        for i, uid in enumerate(self.uids):
            out[3 * i : 3 * i + 3] = (uid & 0xFF, uid >> 8, self.shown[i])
        return bytes(out)


class Recording:
    """Transitions since ``start`` (BehaviorTree.CPP's ``r``/``t``), the newest kept."""

    def __init__(self) -> None:
        self.since = time.monotonic()
        self.items: collections.deque[tuple[float, int, int]] = collections.deque(
            maxlen=TRANSITIONS_KEPT
        )
        self.lock = threading.Lock()

    def add(self, at: float, uid: int, status: int) -> None:
        with self.lock:
            self.items.append((at, uid, status))

    def take(self) -> bytes:
        with self.lock:
            items, self.items = self.items, collections.deque(maxlen=TRANSITIONS_KEPT)
        out = bytearray()
        for at, uid, status in items:
            usec = max(0, int((at - self.since) * 1e6))
            out += usec.to_bytes(8, "little")[:6] + uid.to_bytes(2, "little") + bytes((status,))
        return bytes(out)


@dataclass
class Served:
    """What the server thread answers from: replaced whole by the tick thread."""

    tree: LiveTree
    statuses: bytes


class Groot2Publisher:
    """Serves the executive's tree on ``bind:port`` (REP) and ``port + 1`` (PUB)."""

    def __init__(
        self,
        executive: Executive,
        port: int = 1667,
        bind: str = "127.0.0.1",
        blackboard: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self.executive = executive
        self.bind = bind
        self._blackboard = blackboard or (lambda: {})
        self._context = zmq.Context()
        self._server = self._socket(zmq.REP)
        self._publisher = self._socket(zmq.PUB)
        try:
            self.port = self._bind(self._server, port)
            self._bind(self._publisher, self.port + 1)
        except zmq.ZMQError:
            self._context.destroy(linger=0)
            raise
        self._run: tuple[str, bool] | None = None  # the run shown: its id, whether it ran
        self._statuses = Statuses(live_tree(executive, None))
        self._served = Served(self._statuses.tree, self._statuses.update(None))
        self.recording: Recording | None = None
        self.requests = 0
        self.errors = 0  # requests answered with an error
        self.tick_errors = 0  # ticks whose statuses (or tree) could not be served
        self.last_error = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="groot2", daemon=True)

    def _socket(self, kind: int) -> zmq.Socket[bytes]:
        s: zmq.Socket[bytes] = self._context.socket(kind)
        # a ZAP domain makes libzmq refuse unversioned (ZMTP 1.0) peers: random bytes on
        # the port otherwise parse as one, and a REP socket then waits forever for the
        # rest of a message from it, answering nobody (tests/integration/
        # test_groot2_service.py; a plain pyzmq REP socket and BehaviorTree.CPP's own
        # publisher do so too). Groot2 and every libzmq 3+ client speak ZMTP 3; with no
        # ZAP handler, the NULL mechanism admits them
        s.setsockopt(zmq.ZAP_DOMAIN, b"groot2")
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
        s.setsockopt(zmq.SNDTIMEO, 0)
        return s

    def _bind(self, s: zmq.Socket[bytes], port: int) -> int:
        if port == 0:  # tests: a free pair of ports (the PUB socket takes the next one)
            return int(s.bind_to_random_port(f"tcp://{self.bind}", 20000, 60000))
        s.bind(f"tcp://{self.bind}:{port}")
        return port

    def start(self) -> None:
        self._thread.start()
        log.info("groot2 publisher", bind=self.bind, port=self.port)

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
        self._context.destroy(linger=0)

    # -- the tick thread ----------------------------------------------------------------

    def on_tick(self) -> None:
        """After each tick: the statuses, and the tree when a mission came: the running
        one, else the one that ended last (one that started and ended between two ticks
        too), which stays, idle after its results, until the next one starts. A view
        never stops the robot: its own failure is counted and said in the status (the
        client keeps the last tree it was served), never raised into the tick loop."""
        try:
            ex = self.executive
            run = ex.run or ex.last_run
            now = None if run is None else (run.run_id, ex.run is not None)
            if now is not None and (self._run is None or now[0] != self._run[0]):
                self._statuses = Statuses(live_tree(ex, run))  # a new tree: a new UUID
            statuses = self._statuses.update(self.recording)  # the run's last tick too
            if now is not None and not now[1] and (self._run is None or self._run != now):
                statuses = self._statuses.finish(self.recording)  # ended: idle after it
            self._run = now
            self._served = Served(self._statuses.tree, statuses)  # one assignment: T, S agree
        except Exception as e:  # noqa: BLE001 - a view's bug is never the tick loop's
            self.tick_errors += 1
            if self.tick_errors == 1:
                log.error("groot2 publisher: a tick's tree not served", error=repr(e))
            self.last_error = f"{type(e).__name__}: {e}"

    def problems(self) -> list[str]:
        """What the status says of the publisher: ticks whose tree it could not serve."""
        if not self.tick_errors:
            return []
        return [f"groot2 publisher: {self.tick_errors} ticks not served; last: {self.last_error}"]

    # -- the server thread ----------------------------------------------------------------

    def _serve(self) -> None:
        poller = zmq.Poller()
        poller.register(self._server, zmq.POLLIN)
        spacing = 1.0 / MAX_RATE
        last = 0.0
        while not self._stop.is_set():
            try:
                if not poller.poll(int(POLL_S * 1000)):
                    continue
                frames = self._server.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                continue
            except zmq.ZMQError as e:  # the context closed under us: stopping
                if not self._stop.is_set():
                    log.error("groot2 server failed", error=str(e))
                return
            wait = last + spacing - time.monotonic()
            if wait > 0:
                time.sleep(wait)  # a flood waits here, without the interpreter
            last = time.monotonic()
            self.requests += 1
            try:
                reply = self.answer(frames)
            except Exception as e:  # noqa: BLE001 - a client's request never ends the server
                self.errors += 1
                reply = [b"error", f"{type(e).__name__}: {e}".encode()]
            try:
                self._server.send_multipart(reply, zmq.NOBLOCK)
            except zmq.ZMQError:  # the peer's queue is full or it left: REP resets
                self.errors += 1
                poller.unregister(self._server)
                self._server.close(linger=0)
                if not self._rebind():
                    return
                poller.register(self._server, zmq.POLLIN)

    def _rebind(self) -> bool:
        """A new REP socket on the same port (libzmq frees the old one's port in its own
        time: tried again until it can, or until the publisher stops); False if stopped."""
        while not self._stop.is_set():
            self._server = self._socket(zmq.REP)
            try:
                self._bind(self._server, self.port)
                return True
            except zmq.ZMQError:
                self._server.close(linger=0)
                self._stop.wait(0.1)
        return False

    def answer(self, frames: Sequence[bytes]) -> list[bytes]:
        """The reply frames to one request (any thread; reads only what is served)."""
        if not frames or len(frames[0]) != HEADER:
            return [b"error", b"wrong request header"]
        head = frames[0]
        kind = chr(head[1])
        served = self._served
        reply = [bytes((PROTOCOL,)) + head[1:HEADER] + served.tree.uuid]
        body = self._payload(kind, frames, served)
        if isinstance(body, str):  # an error message
            return [b"error", body.encode()]
        return reply + body

    def _payload(self, kind: str, frames: Sequence[bytes], served: Served) -> list[bytes] | str:
        if kind == "T":
            return [served.tree.xml()]
        if kind == "S":
            return [served.statuses]
        if kind in "BIURr" and len(frames) != 2:
            return "must be 2 parts message"
        if kind == "B":
            return [self._dump(frames[1].decode("utf-8", "replace"), served.tree)]
        if kind == "I":
            json.loads(frames[1])  # a malformed hook is said as such first
            return REFUSED_HOOKS
        if kind in "RU":
            hook = json.loads(frames[1])
            if not isinstance(hook, dict) or "uid" not in hook:
                return "[json.exception.out_of_range.403] key 'uid' not found"
            return "Node ID not found"
        if kind in "AX":
            return []
        if kind == "D":
            return [b"[]"]
        if kind == "r":
            return self._record(frames[1])
        if kind == "t":
            recording = self.recording
            return [recording.take() if recording is not None else b""]
        return "Request not recognized"

    def _record(self, command: bytes) -> list[bytes]:
        if command == b"start":
            self.recording = Recording()
            return [str(time.time_ns() // 1000).encode()]
        if command == b"stop":
            self.recording = None
        return []

    def _dump(self, names: str, tree: LiveTree) -> bytes:
        out: dict[str, Any] | None = None
        for name in names.split(";"):
            if name in tree.names:
                out = out or {}
                out[name] = dict(self._blackboard())
        return bytes(msgpack.packb(out))


def blackboard_of(executive: Executive) -> Callable[[], Mapping[str, Any]]:
    """The blackboard as a client may read it: the robot's snapshot (the one key the core
    tree writes) as the status document states it."""
    from executive.service.status import telemetry

    def read() -> Mapping[str, Any]:
        snap = py_trees.blackboard.Blackboard.storage.get(SNAPSHOT_KEY)
        if snap is None:
            return {}
        return {SNAPSHOT_KEY: telemetry(snap, executive.monitor.max_age, time.monotonic())}

    return read


def start_groot2(
    executive: Executive, port: int, bind: str
) -> tuple[Groot2Publisher | None, list[str]]:
    """The publisher on ``bind:port``, started, or None and why not (for the status):
    missions do not depend on it, so a port taken does not stop the service."""
    try:
        publisher = Groot2Publisher(executive, port, bind, blackboard_of(executive))
    except zmq.ZMQError as e:
        why = f"groot2 publisher not started on {bind}:{port}: {e}"
        log.error("groot2 publisher not started", bind=bind, port=port, error=str(e))
        return None, [why]
    publisher.start()
    return publisher, []
