"""The micro-benchmark's bad input, refused before anything starts."""

import tempfile
import unittest
from pathlib import Path

from common import driver
from flexbench import lwbench


class LWLockUsageTest(unittest.TestCase):
    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            for args, message in ((["--shared", "101"], r"--shared: '101' is not a percentage"),
                                  (["--workers", "0"], r"--workers must be positive integers"),
                                  (["--seconds", "0"], r"--seconds must be in"),
                                  (["--build", "vanilla"], r"--build must be patched or cassert"),
                                  (["--algorithms", "exchange,nope"], r"--algorithms: 'nope' is not one of"),
                                  (["--algorithms", "fetch_add,readbiased"], r"--algorithms must include exchange"),
                                  (["--writer-readers", "x"], r"--writer-readers: 'x' is not a number")):
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


class LWLockSummaryTest(unittest.TestCase):
    """summary.md of a run of three algorithms, from made-up rows with known
    answers: ratios to exchange and readbiased/fetch_add, scaling, and the
    writer's price."""

    def test_three_algorithms(self):
        rate = {("exchange", 1): 60.0, ("fetch_add", 1): 66.0, ("readbiased", 1): 40.0,
                ("exchange", 2): 9.0, ("fetch_add", 2): 10.0, ("readbiased", 2): 76.0}
        rows = [{"workers": w, "shared_percent": 100, "rep": rep, "algorithm": a,
                 "acquisitions": 0, "acquisitions_per_sec": rate[(a, w)] * 1e6 * (1 + 0.01 * rep),
                 "ns_per_acquisition": 1.0, "cas_retries": 0, "backouts": 0, "sleeps": 0, "started_at": ""}
                for (a, w) in rate for rep in range(1, 6)]
        wrows = [{"readers": 1, "rep": rep, "algorithm": a, "shared_acquisitions": 0, "shared_per_sec": 1e6,
                  "writes": 100, "avg_write_us": us, "max_write_us": 10 * us, "started_at": ""}
                 for a, us in (("exchange", 0.7), ("fetch_add", 0.8), ("readbiased", 1.9)) for rep in range(1, 6)]
        meta = {"matrix": {"workers": [1, 2], "shared_percent": [100], "reps": 5, "seconds": 3,
                           "algorithms": ["exchange", "fetch_add", "readbiased"], "writer_readers": [1]},
                "build": "patched", "version": "x",
                "machine": {"cores": 2, "model": "m", "memory_gib": 1, "system": "s", "kernel": "k"}}
        with tempfile.TemporaryDirectory() as tmp:
            lwbench.write_summary(Path(tmp), rows, meta, wrows)
            text = (Path(tmp) / "summary.md").read_text()
        self.assertIn("| workers | exchange acq/s | fetch_add acq/s | readbiased acq/s | fetch_add/exchange "
                      "| readbiased/exchange | readbiased/fetch_add | exchange scaling | fetch_add scaling "
                      "| readbiased scaling |", text)
        two = [l for l in text.splitlines() if l.startswith("| 2 |")][0].split(" | ")
        self.assertTrue(two[6].startswith("7.600 "), two)    # readbiased / fetch_add at 2 workers
        self.assertEqual(two[9], "1.90", two)                # readbiased scaling 76 / 40
        self.assertEqual(two[7], "0.15", two)                # exchange scaling 9 / 60
        self.assertIn("## The writer's price", text)
        self.assertIn("| 1 | 0.7 | 7 | 1,000,000 | 0.8 | 8 | 1,000,000 | 1.9 | 19 | 1,000,000 |", text)
