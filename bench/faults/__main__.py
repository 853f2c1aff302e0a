"""``make faults``: ``python -m bench.faults`` runs the fault matrix (``bench.faults.matrix``)."""

import sys

from bench.faults.matrix import main

sys.exit(main())
