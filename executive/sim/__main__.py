"""``python -m executive.sim``: the same as ``atom-executive sim`` (tests start it this way)."""

import sys

from executive.sim.cli import main

sys.exit(main())
