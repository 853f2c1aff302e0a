"""``python -m executive.robots.grx.sim``: the simulated Fourier GRX (see the package)."""

import sys

from executive.robots.grx.sim import main

sys.exit(main())
