"""The template robot, declared: what it is (its spec) and where its parts are.

Plain data: the registry (``executive.seam.registry``) imports it to load profiles and
validate missions with no middleware loaded; the parts named below as ``"module:attribute"``
are imported only when asked for (its adapter when the service opens the robot, its
simulator when ``atom-executive sim --profile P`` runs it). Say here, as the other robots'
``robot.py`` do, where the facts come from: the vendor's documents, its SDK, what was
measured.
"""

from __future__ import annotations

from executive.seam.spec import RobotSpec

ROBOT = RobotSpec(
    # the robot kind: its folder's name, the profile's ``robot:``, the key of its own options
    # in a profile (``newbot:``), what the status calls its adapter
    name="newbot",
    # one line: the robot, its transport, its source; docs/robots.md's robot list says the
    # same words (tests/test_robots_docs.py)
    description="The template robot: one arm of two joints, no wire yet (docs/robot-template)",
    # its joint streams (a command carrying joints) -> how many motors each carries: a number
    # where the wire fixes it (the profile's topics.<stream> must list as many), None where
    # the profile says. Empty: no joint command at all (the GRX's User API)
    streams={"arm": None},
    # its state sources, the adapter's keys for what it reads from the robot (a topic, a
    # key): the profile gives each its rate (rates.state_hz) and the age after which it is
    # silent (safety_sources), and the watchdog holds on silence
    sources=("arm_state",),
    # what it can do, from executive.seam.ports.CAPABILITIES: a profile may offer fewer,
    # never more; a mission leaf that needs another is refused at validation, naming both
    capabilities=frozenset({"joints"}),
    # True where one command carries every motor (the Adam's LowCmd_): moving any joint
    # streams them all, the others held where they were measured
    whole_body=False,
    # the largest FSM id its wire carries (0: no FSM, and the profile's fsm: is not read)
    fsm_id_max=0,
    # the largest navigation tag id its wire carries (0: no navigation)
    tag_max=0,
    # its parts, "module:attribute" ("" where it has none), relative to this package where
    # they start with ".":
    # open(profile, **options) -> the adapter (executive.seam.ports.RobotAdapter)
    adapter=".adapter:open",
    # (text[, profile]) -> why the service config's interface: is not one of its wire's
    # variants (or cannot serve the profile), or None; "": any text names its interface
    check_interface=".interface:check_interface",
    # (options, profile) -> ["key: message"] about its own options in a profile (under its
    # name, ``newbot:``); "": it takes none and a profile that gives some is refused
    check_options="",
    # main(argv) of its simulator, run by ``atom-executive sim --profile P``; "": none
    sim="",
    # () -> its wire's topic and field names, which tests/test_seam.py keeps out of every
    # module above the seam
    wire_words=".interface:wire_words",
    # its generated wire packages (executive/wire/gen/<name>) -> the folders of idl/ whose
    # .idl files make them (``make idl``, ``make idl-check``); empty: no IDL of its own
    idl={},
    # package: not given; the registry sets it to where it found this spec
)
