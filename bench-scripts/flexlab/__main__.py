"""python3 -m flexlab: the lab's command line (flexlab.cli)."""

import sys

from .cli import main

sys.exit(main())
