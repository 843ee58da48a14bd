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


class MultiScriptParseTest(unittest.TestCase):
    """Several weighted scripts (-f FILE@WEIGHT): pgbench 18's per-script
    blocks, from real runs."""

    def test_two_scripts(self):
        r = pgbench.parse_pgbench((FIXTURES / "pg18-multi-script.out").read_text())
        self.assertAlmostEqual(r["tps"], 35027.129007)
        self.assertEqual(r["transactions"], 70031)
        self.assertEqual(sorted(r["scripts"]), ["a.sql", "b.sql"])
        a = r["scripts"]["a.sql"]
        self.assertEqual(a["transactions"], 52544)
        self.assertEqual(a["percent"], 75.0)
        self.assertAlmostEqual(a["tps"], 26280.725201)
        self.assertEqual((a["failed"], a["retried"], a["latency_avg_ms"]), (0, 0, 0.043))
        self.assertEqual(r["scripts"]["b.sql"]["transactions"], 17472)

    def test_tpcc_mix(self):
        r = pgbench.parse_pgbench((FIXTURES / "pg18-tpcc.out").read_text())
        self.assertAlmostEqual(r["tps"], 355.910076)
        self.assertEqual({k: v["transactions"] for k, v in r["scripts"].items()},
                         {"tpcc-neword.sql": 3186, "tpcc-payment.sql": 3039, "tpcc-ostat.sql": 314,
                          "tpcc-delivery.sql": 276, "tpcc-slev.sql": 299})
        self.assertEqual(pgbench.nopm(r["scripts"]["tpcc-neword.sql"]["transactions"], 20), 9558.0)

    def test_pg16_wording(self):
        # PostgreSQL 16 and older: the tps on the transactions line
        text = ((FIXTURES / "pg18-plain.out").read_text()
                + "SQL script 1: /x/neword.sql\n - weight: 45 (targets 45.0% of total)\n"
                  " - 450 transactions (45.0% of total, tps = 15.000000)\n"
                  " - number of failed transactions: 2 (0.444%)\n - latency average = 3.000 ms\n"
                  "SQL script 2: /x/other.sql\n - weight: 55 (targets 55.0% of total)\n"
                  " - 550 transactions (55.0% of total, tps = 18.333333)\n")
        s = pgbench.parse_pgbench(text)["scripts"]
        self.assertEqual(s["neword.sql"], {"transactions": 450, "percent": 45.0, "tps": 15.0, "failed": 2,
                                           "retried": None, "latency_avg_ms": 3.0})
        self.assertEqual(s["other.sql"]["transactions"], 550)

    def test_single_script_has_no_scripts_key(self):
        # runs.csv and the parse command of one-script runs are as before
        self.assertNotIn("scripts", pgbench.parse_pgbench((FIXTURES / "pg18-progress.out").read_text()))

    def test_script_block_without_count_is_refused(self):
        text = (FIXTURES / "pg18-plain.out").read_text() + "SQL script 1: a.sql\n - weight: 1\n"
        with self.assertRaisesRegex(BenchError, "no transaction count for SQL script a.sql"):
            pgbench.parse_pgbench(text)

    def test_nopm(self):
        self.assertEqual(pgbench.nopm(450, 30), 900.0)
        self.assertEqual(pgbench.nopm(1, 7), 8.6)
        self.assertIsNone(pgbench.nopm(None, 30))
        self.assertIsNone(pgbench.nopm(10, 0))
