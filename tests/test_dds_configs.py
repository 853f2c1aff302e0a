"""The shipped CycloneDDS configs bound the receive threads' buffers (issue 25).

CycloneDDS keeps what a receive thread hands on in a buffer of ``Sizing/ReceiveBufferSize``
(1 MiB by default) whose pages become resident as messages fill it: with the default an
idle service's heap grew for minutes at the pace of discovery, which the soak's memory
verdict read as a leak (docs/benchmarks.md, "Soak"). The configs the service runs with set
a small buffer; CycloneDDS must accept the names (it refuses an unknown element).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NS = {"c": "https://cdds.io/config"}
SHIPPED = [
    ROOT / "executive" / "resources" / "cyclonedds-loopback.xml",
    ROOT / "deploy" / "cyclonedds-pc2.xml",
]
DEFAULT_CHUNK = 128 * 1024  # CycloneDDS 0.10's Sizing/ReceiveBufferChunkSize
MAX_RECEIVE_BUFFER = 256 * 1024  # well below the 1 MiB default whose filling looked like a leak
UNITS = {"B": 1, "KiB": 1024, "kB": 1000, "MiB": 1024**2, "MB": 1000**2}


def size(text: str) -> int:
    """Bytes of a CycloneDDS size ("160KiB", "65500B")."""
    match = re.fullmatch(r"\s*(\d+)\s*(B|KiB|kB|MiB|MB)\s*", text)
    assert match, f"not a CycloneDDS size: {text!r}"
    return int(match[1]) * UNITS[match[2]]


def sizing(path: Path) -> ET.Element:
    found = ET.parse(path).getroot().find("c:Domain/c:Sizing", NS)
    assert found is not None, f"{path.name}: no Domain/Sizing"
    return found


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_the_shipped_configs_bound_the_receive_buffer(path: Path) -> None:
    s = sizing(path)
    buffer = s.findtext("c:ReceiveBufferSize", namespaces=NS)
    assert buffer is not None, f"{path.name}: no Sizing/ReceiveBufferSize"
    chunk = size(s.findtext("c:ReceiveBufferChunkSize", str(DEFAULT_CHUNK) + "B", NS))
    # a buffer holds at least one chunk (CycloneDDS raises it to that) and some messages more
    assert chunk + 16 * 1024 <= size(buffer) <= MAX_RECEIVE_BUFFER, path.name
    # a chunk takes one whole datagram: the largest this config lets a participant send
    most = ET.parse(path).getroot().findtext("c:Domain/c:General/c:MaxMessageSize", "14720B", NS)
    assert size(most) <= chunk, path.name


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_cyclonedds_takes_the_sizing_as_written(path: Path, dds_domain: int) -> None:
    """The loopback network with this config's <Sizing> inline: a participant starts. A
    misspelt element (the same check with one) is refused, so the names are the library's."""

    def start(sizing_xml: str) -> subprocess.CompletedProcess[str]:
        uri = (
            ROOT / "executive" / "resources" / "cyclonedds-loopback.xml"
        ).as_uri() + f',<CycloneDDS><Domain id="any">{sizing_xml}</Domain></CycloneDDS>'
        code = "import sys; from cyclonedds.domain import DomainParticipant; "
        code += "DomainParticipant(int(sys.argv[1]))"
        return subprocess.run(
            [sys.executable, "-c", code, str(dds_domain)],
            env={**os.environ, "CYCLONEDDS_URI": uri},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    xml = ET.tostring(sizing(path), encoding="unicode").replace("ns0:", "")
    xml = re.sub(r'\sxmlns:ns0="[^"]*"', "", xml)
    ok = start(xml)
    assert ok.returncode == 0, ok.stderr
    wrong = start(xml.replace("ReceiveBufferSize>", "ReceiveBuferSize>"))
    assert wrong.returncode != 0
    assert "ReceiveBuferSize: unknown element" in wrong.stderr, wrong.stderr
