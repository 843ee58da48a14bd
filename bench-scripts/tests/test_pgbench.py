"""pgbench's output (saved PostgreSQL 18 outputs in fixtures/) and the
latency percentiles of its per-transaction log."""

import json
import unittest

from common import FIXTURES, driver
from flexbench import pgbench
from flexbench.config import BenchError


class ParseTest(unittest.TestCase):
    def parse(self, name):
        return pgbench.parse_pgbench((FIXTURES / name).read_text())

    def test_progress_output(self):
        r = self.parse("pg18-progress.out")
        self.assertAlmostEqual(r["tps"], 769.545608)
        self.assertEqual(r["latency_avg_ms"], 2.595)
        self.assertEqual(r["latency_stddev_ms"], 3.093)
        self.assertEqual(r["transactions"], 769)
        self.assertEqual(r["failed"], 0)

    def test_plain_output_has_no_stddev(self):
        r = self.parse("pg18-plain.out")
        self.assertAlmostEqual(r["tps"], 47366.276604)
        self.assertEqual(r["latency_avg_ms"], 0.338)
        self.assertIsNone(r["latency_stddev_ms"])
        self.assertEqual(r["transactions"], 2841733)

    def test_failures_counted(self):
        r = self.parse("pg18-failures.out")
        self.assertEqual(r["failed"], 130)
        self.assertEqual(r["latency_avg_ms"], 0.801)

    def test_old_wording_is_refused(self):
        # PostgreSQL 13 and older: "excluding connections establishing".
        with self.assertRaisesRegex(BenchError, "cannot parse pgbench output"):
            self.parse("pg13-old-wording.out")

    def test_aborted_run_is_refused(self):
        with self.assertRaisesRegex(BenchError, "cannot parse pgbench output"):
            self.parse("truncated.out")

    def test_parse_command(self):
        p = driver("parse", str(FIXTURES / "pg18-plain.out"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["transactions"], 2841733)
        p = driver("parse", str(FIXTURES / "truncated.out"))
        self.assertNotEqual(p.returncode, 0)


class LatencyTest(unittest.TestCase):
    def test_percentiles_of_a_log(self):
        # 100 transactions of 1..100 ms (in µs), shuffled, one failed and one
        # skipped: nearest rank p50 = 50 ms, p95 = 95 ms, p99 = 99 ms
        lines = [f"{i % 4} {i} {((i * 37) % 100 + 1) * 1000} 0 1700000000 {i}" for i in range(100)]
        lines += ["0 100 failed 0 1700000001 5", "1 101 skipped 0 1700000001 6"]
        r = pgbench.latency_percentiles(lines)
        self.assertEqual(r, {"latency_p50_ms": 50.0, "latency_p95_ms": 95.0, "latency_p99_ms": 99.0,
                             "latency_samples": 100})
        self.assertEqual(pgbench.latency_percentiles([]), {"latency_samples": 0})

    def test_sampling_rate_keeps_the_log_small(self):
        self.assertEqual(pgbench.sampling_rate(None), 1.0)
        self.assertEqual(pgbench.sampling_rate(5000), 1.0)
        self.assertAlmostEqual(pgbench.sampling_rate(2_000_000), 0.01)
        self.assertEqual(pgbench.sampling_rate(10**12), 0.0001)
