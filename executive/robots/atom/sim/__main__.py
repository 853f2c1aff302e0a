"""``python -m executive.robots.atom.sim``: the same as ``atom-executive sim`` (tests start it this way)."""

import sys

from executive.robots.atom.sim.cli import main

sys.exit(main())
