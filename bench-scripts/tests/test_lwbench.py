"""The micro-benchmark's bad input, refused before anything starts."""

import tempfile
import unittest
from pathlib import Path

from common import driver


class LWLockUsageTest(unittest.TestCase):
    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            for args, message in ((["--shared", "101"], r"--shared: '101' is not a percentage"),
                                  (["--workers", "0"], r"--workers must be positive integers"),
                                  (["--seconds", "0"], r"--seconds must be in"),
                                  (["--build", "vanilla"], r"--build must be patched or cassert")):
                p = driver("lwlock", *args, "--out", str(out))
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertRegex(p.stderr, message)
                self.assertFalse(out.exists(), "nothing starts on bad input")

    def test_missing_install(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            (Path(tmp) / "build").mkdir()
            p = driver("lwlock", "--build", "patched", "--out", str(out),
                       env={"FLEXLOCK_BUILD": str(Path(tmp) / "build")})
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertRegex(p.stderr, r"build 'patched' is not built .*install/patched")
            self.assertFalse(out.exists())
