"""BehaviorTree.CPP itself (PyPI ``behaviortreepy``, BT.CPP v4) and ``btview``, an independent
Groot2 client: the code we did not write that our XML and our publisher are proven against.

``behaviortreepy`` registers a node type without ports (its ``register_simple_action`` has
no ports argument), so its factory cannot create a leaf that has port attributes
("a port ... is found in the XML but not in the providedPorts()"). Our XML is therefore
given to BehaviorTree.CPP twice: as it is, to ``register_behavior_tree_from_text`` (its
``VerifyXML``: every node known, child counts, tree and model names), and with the
leaves' ports taken off, to ``create_tree``, which builds the tree and numbers its nodes;
the ports themselves are checked against our ``TreeNodesModel`` by the tests.
"""

from __future__ import annotations

import contextlib
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import behaviortreepy as bt
from btview.client import Groot2Client
from btview.model import BTNode, TreeModel

from executive.mission import btcpp
from executive.mission.registry import LEAVES


def factory() -> Any:
    """A BehaviorTree.CPP factory with our leaf kinds registered (as actions and
    conditions that succeed: the tests never need them to do anything)."""
    f = bt.BehaviorTreeFactory()
    for kind in LEAVES:
        register = f.register_simple_condition if kind.condition else f.register_simple_action
        register(btcpp.leaf_id(kind.name), lambda node: bt.NodeStatus.SUCCESS)
    return f


def without_leaf_ports(text: str) -> str:
    """The XML with our leaves' port attributes removed (see the module)."""
    root = ET.fromstring(text)
    for e in root.iter():
        if btcpp.kind_of(e.tag) is not None:
            for name in [a for a in e.attrib if a != "name" and not a.startswith("_")]:
                del e.attrib[name]
    return ET.tostring(root, encoding="unicode")


def free_pair() -> int:
    """A port P with P and P + 1 free on loopback (a Groot2 publisher takes both)."""
    for _ in range(100):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            if port >= 65535:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return int(port)
    raise RuntimeError("no free pair of ports")


@contextlib.contextmanager
def their_publisher(text: str) -> Iterator[int]:
    """BehaviorTree.CPP's own ``Groot2Publisher`` serving the tree of ``text`` (its leaves'
    ports removed, see the module): the port."""
    f = factory()
    f.register_behavior_tree_from_text(without_leaf_ports(text))
    tree = f.create_tree(ET.fromstring(text).attrib["main_tree_to_execute"])
    port = free_pair()
    publisher = bt.Groot2Publisher(tree, port)
    try:
        yield port
    finally:
        del publisher
        del tree


def fetch(port: int) -> tuple[TreeModel, str, dict[int, Any]]:
    """What a Groot2 client sees: btview's tree, the XML and the statuses by uid."""
    client = Groot2Client("127.0.0.1", port, timeout_ms=3000)
    try:
        xml = client.fetch_tree_xml()
        tree = client.fetch_tree()
        poll = client.poll()
        assert poll is not None
        return tree, xml, poll.statuses
    finally:
        client.close()


def paths(node: BTNode, prefix: str = "") -> Iterator[tuple[str, BTNode]]:
    """Every node under ``node`` with its path of names and registration IDs."""
    here = f"{prefix}/{node.registration}:{node.name}"
    yield here, node
    for child in node.children:
        yield from paths(child, here)
