"""A site's secure fleet layout: who belongs, their certificates, the router's access control.

The fleet plane crosses networks a site does not own, so a router lets in only those who
belong and lets each do only its part (issue 34). The site says who belongs in a
**roster** (YAML)::

    site: cafe                 # this router's name (its certificate: router.cafe)
    prefix: fleet              # the fleet's key prefix (as the robots' fleet.prefix)
    robots: [atom-1, adam-1]   # the robots it expects: a view lists one that never came
    operators: [alice]         # may read the fleet and send (signed) requests
    monitors: [wall]           # may only read
    routers: [lab]             # other sites' routers this one joins or lets join

and ``atom-executive fleet-site ROSTER --out DIR`` makes, with openssl (``RECIPE``, the
same commands docs/fleet.md lists):

- a site CA (``ca.pem``, ``ca-key.pem``; kept if there: one CA for every site of a
  company lets their routers join);
- a key and certificate per member, its common name ``<role>.<name>`` (``robot.atom-1``,
  ``operator.alice``, ``monitor.wall``, ``router.cafe``): what the router's access control
  knows it by;
- ``router.<site>.json5``: zenoh's router config: TLS only, mutual (``enable_mtls``: a
  peer without a certificate of the CA gets no session), and ``access_control``
  (``acl``): default deny; a robot may do anything, but only under ``<prefix>/<its id>/``
  (publish its status and events, hold its tokens, answer its own request channel), and
  hears of the views' subscriptions (else its session sends its status nowhere); an
  operator reads everything and queries the robots' request channels and the site's
  membership store; a monitor reads and queries only the store; another site's router
  passes everything under the prefix;
- ``<role>.<name>.json5``: each member's zenoh client config (TLS, its certificate).

Requests stay signed as before (HMAC keys, instance binding): the certificates say who
may speak on the plane, the keys who may command a robot.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from executive.service.config import FLEET_CHUNK
from executive.text import printable, yaml_problem

ROLES = ("robot", "operator", "monitor", "router")
ROSTER_KEYS = {"site", "prefix", "robots", "operators", "monitors", "routers"}
CURVE = "prime256v1"
CA_DAYS, CERT_DAYS = 3650, 825
MEMBERS = "@members"  # the membership store's key chunk (verbatim: no wildcard matches it)

# The openssl commands, as docs/fleet.md gives them: {name} is the member's file stem.
RECIPE = {
    "ca": [
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:{curve} -nodes",
        "-keyout ca-key.pem -out ca.pem -days {ca_days} -subj /CN={ca_name}",
        "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
    ],
    "key": [
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:{curve} -nodes",
        "-keyout {name}-key.pem -out {name}.csr -subj /CN={name}",
    ],
    "sign": [
        "openssl x509 -req -in {name}.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial",
        "-days {cert_days} -out {name}.pem -extfile {name}.ext",
    ],
}


class SiteError(ValueError):
    """A roster or a layout that cannot be made (the message names the file and key)."""


@dataclass(frozen=True)
class Roster:
    site: str
    prefix: str = "fleet"
    robots: tuple[str, ...] = ()
    operators: tuple[str, ...] = ()
    monitors: tuple[str, ...] = ()
    routers: tuple[str, ...] = ()
    source: str = "<roster>"

    def members(self) -> list[tuple[str, str]]:
        """(role, name) of everyone with a certificate, this site's router first."""
        return [
            ("router", self.site),
            *(("robot", r) for r in self.robots),
            *(("operator", o) for o in self.operators),
            *(("monitor", m) for m in self.monitors),
            *(("router", r) for r in self.routers),
        ]


def load_roster(path: str | Path) -> Roster:
    """The roster at ``path``; SiteError naming the file and key of what is wrong."""
    source = str(path)
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise SiteError(printable(f"{source}: cannot read the roster: {e.strerror}")) from None
    except yaml.YAMLError as e:
        raise SiteError(f"{printable(source)}: not YAML: {yaml_problem(e)}") from None
    return parse_roster(raw, source)


def parse_roster(raw: Any, source: str = "<roster>") -> Roster:
    if not isinstance(raw, dict):
        raise SiteError(printable(f"{source}: a roster is a mapping (site, robots, ...)"))
    problems = [f"{k}: unknown key" for k in raw if k not in ROSTER_KEYS]
    site = raw.get("site")
    if not isinstance(site, str) or not FLEET_CHUNK.fullmatch(site):
        problems.append(f"site: must be a name (letters, digits, '_', '-', '.'), got {site!r}")
        site = ""
    prefix = raw.get("prefix", "fleet")
    if not isinstance(prefix, str) or not all(FLEET_CHUNK.fullmatch(c) for c in prefix.split("/")):
        problems.append(f"prefix: must be key chunks joined by '/', got {prefix!r}")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("robots", "operators", "monitors", "routers"):
        value = raw.get(key) or []
        if not isinstance(value, list):
            problems.append(f"{key}: must be a list of names")
            continue
        seen: set[str] = {site} if key == "routers" else set()
        for i, name in enumerate(value):
            if not isinstance(name, str) or not FLEET_CHUNK.fullmatch(name):
                problems.append(f"{key}[{i}]: must be a name, got {name!r}")
            elif name in seen:
                problems.append(f"{key}[{i}]: {name!r} is listed twice (or is this site)")
            seen.add(name)
        lists[key] = tuple(v for v in value if isinstance(v, str))
    if problems:
        raise SiteError("\n".join(printable(f"{source}: {p}") for p in problems))
    return Roster(site=site, prefix=prefix, source=source, **lists)


def common_name(role: str, name: str) -> str:
    """What a member's certificate says it is (the access control's subject)."""
    return f"{role}.{name}"


# -- access control -------------------------------------------------------------------------

ALL = [
    "put",
    "delete",
    "declare_subscriber",
    "query",
    "reply",
    "declare_queryable",
    "liveliness_token",
    "liveliness_query",
    "declare_liveliness_subscriber",
]
READ_IN = ["declare_subscriber", "declare_liveliness_subscriber", "liveliness_query"]
READ_OUT = ["put", "delete", "liveliness_token", "reply"]
INTEREST = ["declare_subscriber", "declare_liveliness_subscriber"]


def acl(roster: Roster) -> dict[str, Any]:
    """zenoh's ``access_control`` for the roster (default deny; see the module)."""
    p = roster.prefix
    store = f"{p}/{MEMBERS}/*"
    rules: list[dict[str, Any]] = [
        _rule("read-in", READ_IN, ["ingress"], [f"{p}/**"]),
        _rule("read-out", READ_OUT, ["egress"], [f"{p}/**"]),
        _rule("store", ["query"], ["ingress"], [store]),
        _rule("store-out", ["reply"], ["egress"], [store]),
        _rule("request", ["query"], ["ingress"], [f"{p}/*/request/*"]),
        _rule("site", ALL, ["ingress", "egress"], [f"{p}/**", store]),
        # a robot's session puts only where someone listens: it must hear of the views'
        # subscriptions (``<prefix>/*/status``), which are no key of its own
        _rule("interest", INTEREST, ["egress"], [f"{p}/**"]),
    ]
    subjects: list[dict[str, Any]] = []
    policies: list[dict[str, Any]] = []

    def subject(sid: str, cns: list[str]) -> None:
        if cns:
            subjects.append({"id": sid, "cert_common_names": cns})

    for robot in roster.robots:  # one rule each: its own key space, both ways
        rules.append(_rule(f"robot-{robot}", ALL, ["ingress", "egress"], [f"{p}/{robot}/**"]))
        subject(f"robot-{robot}", [common_name("robot", robot)])
        policies.append({"rules": [f"robot-{robot}", "interest"], "subjects": [f"robot-{robot}"]})
    subject("operators", [common_name("operator", o) for o in roster.operators])
    subject("monitors", [common_name("monitor", m) for m in roster.monitors])
    subject("routers", [common_name("router", r) for r in roster.routers])
    ids = {s["id"] for s in subjects}
    if "operators" in ids:
        policies.append(
            {
                "rules": ["read-in", "read-out", "store", "store-out", "request"],
                "subjects": ["operators"],
            }
        )
    if "monitors" in ids:
        policies.append(
            {"rules": ["read-in", "read-out", "store", "store-out"], "subjects": ["monitors"]}
        )
    if "routers" in ids:
        policies.append({"rules": ["site"], "subjects": ["routers"]})
    return {
        "enabled": True,
        "default_permission": "deny",
        "rules": rules,
        "subjects": subjects,
        "policies": policies,
    }


def _rule(rid: str, messages: list[str], flows: list[str], keys: list[str]) -> dict[str, Any]:
    return {
        "id": rid,
        "messages": messages,
        "flows": flows,
        "permission": "allow",
        "key_exprs": keys,
    }


# -- configs --------------------------------------------------------------------------------


def tls(directory: Path, stem: str, *, listen: bool) -> dict[str, Any]:
    """``transport/link/tls``: the CA, this member's key and certificate, mutual."""
    key, cert = str(directory / f"{stem}-key.pem"), str(directory / f"{stem}.pem")
    out: dict[str, Any] = {
        "root_ca_certificate": str(directory / "ca.pem"),
        "enable_mtls": True,
        "connect_private_key": key,
        "connect_certificate": cert,
        "verify_name_on_connect": True,
    }
    if listen:
        out |= {"listen_private_key": key, "listen_certificate": cert}
    return out


def router_config(
    roster: Roster, directory: Path, listen: list[str], connect: list[str]
) -> dict[str, Any]:
    return {
        "mode": "router",
        "listen": {"endpoints": listen},
        "connect": {
            "endpoints": connect,
            "timeout_ms": -1,
            "exit_on_failure": False,
            "retry": {"period_init_ms": 500, "period_max_ms": 5000, "period_increase_factor": 2},
        },
        "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
        "transport": {
            "link": {
                "protocols": ["tls"],
                "tls": tls(directory, common_name("router", roster.site), listen=True),
            },
            # off: with it the router refuses sessions past about 350 (no SHM counters)
            "shared_memory": {"enabled": False},
        },
        "access_control": acl(roster),
    }


def client_config(directory: Path, stem: str, connect: list[str]) -> dict[str, Any]:
    return {
        "mode": "client",
        "connect": {
            "endpoints": connect,
            "timeout_ms": -1,
            "exit_on_failure": False,
            "retry": {"period_init_ms": 100, "period_max_ms": 1000, "period_increase_factor": 2},
        },
        "listen": {"endpoints": []},
        "scouting": {"multicast": {"enabled": False}, "gossip": {"enabled": False}},
        "transport": {"link": {"protocols": ["tls"], "tls": tls(directory, stem, listen=False)}},
    }


def write_json5(path: Path, config: dict[str, Any], what: str) -> Path:
    head = (
        f"// {what}\n// Made by `atom-executive fleet-site` (executive/service/fleet_site.py); "
        "standard zenoh 1.x JSON5.\n"
    )
    path.write_text(head + json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


# -- certificates ---------------------------------------------------------------------------


def _openssl(step: str, cwd: Path, **values: Any) -> None:
    words = " ".join(RECIPE[step]).format(
        curve=CURVE, ca_days=CA_DAYS, cert_days=CERT_DAYS, **values
    )
    out = subprocess.run(  # our own recipe, no shell
        words.split(), cwd=cwd, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SiteError(printable(f"openssl {step} failed: {out.stderr.strip()[-400:]}"))


def make_ca(directory: Path, name: str) -> None:
    """A CA in ``directory`` (ca.pem, ca-key.pem), unless one is there."""
    if (directory / "ca.pem").exists() and (directory / "ca-key.pem").exists():
        return
    _openssl("ca", directory, ca_name=f"fleet-ca.{name}")
    (directory / "ca-key.pem").chmod(0o600)


def make_cert(directory: Path, stem: str, hosts: list[str] = ()) -> None:  # type: ignore[assignment]
    """A key and certificate ``stem`` signed by the CA in ``directory``; ``hosts``: the
    names and addresses it is reached at (a router's: what clients verify)."""
    sans = [f"DNS:{stem}", *(f"IP:{h}" if _is_ip(h) else f"DNS:{h}" for h in hosts)]
    (directory / f"{stem}.ext").write_text(
        f"subjectAltName={','.join(sans)}\nbasicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n",
        encoding="utf-8",
    )
    _openssl("key", directory, name=stem)
    _openssl("sign", directory, name=stem)
    (directory / f"{stem}-key.pem").chmod(0o600)
    for leftover in (f"{stem}.csr", f"{stem}.ext"):
        (directory / leftover).unlink()


def _is_ip(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass
class Layout:
    """What ``make_site`` wrote: the router's config and each member's client config."""

    directory: Path
    router: Path
    clients: dict[str, Path] = field(default_factory=dict)  # common name -> its config

    def client(self, role: str, name: str) -> Path:
        return self.clients[common_name(role, name)]


def make_site(
    roster: Roster,
    directory: Path,
    *,
    host: str = "127.0.0.1",
    port: int = 7448,
    connect: list[str] = (),  # type: ignore[assignment]
) -> Layout:
    """The site's layout in ``directory`` (see the module): the CA (kept if there), a
    certificate per member (remade), the router's config listening on tls/HOST:PORT
    (connecting to ``connect``: other sites' routers), a client config per member."""
    if shutil.which("openssl") is None:
        raise SiteError("openssl is not installed (apt-get install openssl)")
    directory.mkdir(parents=True, exist_ok=True)
    make_ca(directory, roster.site)
    endpoint = f"tls/{host}:{port}"
    layout = Layout(directory, directory / f"{common_name('router', roster.site)}.json5")
    for role, name in roster.members():
        stem = common_name(role, name)
        if role == "router" and name != roster.site:
            continue  # another site's router: its site makes its certificate (same CA)
        make_cert(directory, stem, [host, "localhost"] if role == "router" else [])
        if role == "router":
            continue
        layout.clients[stem] = write_json5(
            directory / f"{stem}.json5",
            client_config(directory, stem, [endpoint]),
            f"zenoh client config of {stem} on site {roster.site}'s fleet plane",
        )
    write_json5(
        layout.router,
        router_config(roster, directory, [endpoint], list(connect)),
        f"zenoh router config of site {roster.site}: TLS with mutual authentication, "
        "access control from its roster",
    )
    return layout


# -- the command ------------------------------------------------------------------------------


def run(args: Any) -> int:
    try:
        roster = load_roster(args.roster)
        layout = make_site(
            roster, args.out, host=args.host, port=args.port, connect=list(args.connect)
        )
    except SiteError as e:
        print(f"atom-executive fleet-site: {e}")  # noqa: T201
        return 2
    print(  # noqa: T201 - the command's answer
        printable(
            f"site {roster.site}: CA {layout.directory / 'ca.pem'} (keep ca-key.pem offline)\n"
            f"router: atom-executive router --zenoh-config {layout.router} --roster "
            f"{args.roster}\n" + "\n".join(f"{cn}: {path}" for cn, path in layout.clients.items())
        )
    )
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("fleet-site")  # its summary: executive.cli.COMMANDS
    p.add_argument("roster", type=Path, help="the site's roster (YAML; docs/fleet.md)")
    p.add_argument("--out", type=Path, required=True, help="the directory to write (kept CA)")
    p.add_argument("--host", default="127.0.0.1", help="the router's address (its certificate)")
    p.add_argument("--port", type=int, default=7448, help="the router's TLS port")
    p.add_argument(
        "--connect",
        action="append",
        default=[],
        metavar="ENDPOINT",
        help="another site's router (tls/HOST:PORT) this one joins",
    )
    p.set_defaults(handler=run)
