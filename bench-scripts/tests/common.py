"""What the driver's tests share: the package on sys.path, the fixtures, and
running flexbench.py as a user would."""

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path.insert(0, str(BENCH))

FIXTURES = HERE / "fixtures"
DRIVER = [sys.executable, str(BENCH / "flexbench.py")]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def driver(*args, env=None, **kw):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(DRIVER + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=e, **kw)
