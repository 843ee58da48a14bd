"""What the driver's tests share: the fixtures, and running flexbench.py as a
user would.  The tests import the packages of bench-scripts/: run them with
it on PYTHONPATH (scripts/check.sh: PYTHONPATH=bench-scripts)."""

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent

FIXTURES = HERE / "fixtures"
DRIVER = [sys.executable, str(BENCH / "flexbench.py")]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def driver(*args, env=None, **kw):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(DRIVER + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=e, **kw)
