"""``python -m executive.robots.adam.sim``: run the simulated PND Adam (see ``cli``)."""

import sys

from executive.robots.adam.sim.cli import main

sys.exit(main())
