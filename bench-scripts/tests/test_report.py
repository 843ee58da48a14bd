"""summary.md, plots and counters tables from runs.csv files with known
answers."""

import csv
import json
import tempfile
import unittest
from pathlib import Path

from common import PNG_MAGIC, driver
from flexbench import report
from flexbench.config import UsageError
from flexbench.matrix import CSV_FIELDS

OLD_FIELDS = CSV_FIELDS[:CSV_FIELDS.index("started_at") + 1]   # runs.csv before latency and CPU


def write_runs(out, rows, fields=CSV_FIELDS):
    with open(out / "runs.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        wr.writeheader()
        wr.writerows(rows)


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def run_rows(self, points):
        """points: {(workload, clients): {'build/variant': [tps by rep]}}"""
        rows = []
        for (w, clients), per in points.items():
            for rep in range(len(next(iter(per.values())))):
                for cfg, tps in per.items():
                    build, variant = cfg.split("/")
                    rows.append({"run": f"{w}-c{clients}-r{rep + 1}-{build}-{variant}", "build": build,
                                 "variant": variant, "workload": w, "clients": clients, "rep": rep + 1,
                                 "tps": tps[rep], "transactions": int(tps[rep]) * 5,
                                 "latency_p50_ms": 1.0 + rep, "latency_p95_ms": 2.5, "latency_p99_ms": 4.0,
                                 "latency_samples": 1000, "cpu_user_pct": 60.0, "cpu_system_pct": 30.0,
                                 "cpu_idle_pct": 9.0, "cpu_iowait_pct": 1.0})
        return rows

    def test_intervals_and_verdicts(self):
        write_runs(self.out, self.run_rows({
            # 20% faster, small spread, 6 pairs: faster
            ("w", 1): {"vanilla/stock": [100, 110, 90, 105, 95, 100],
                       "patched/stock": [121, 131, 109, 125, 115, 119]},
            # pure noise: no difference
            ("w", 4): {"vanilla/stock": [300, 310, 290, 305, 295, 300],
                       "patched/stock": [309, 301, 292, 296, 304, 300]},
            # a variant against patched/stock, three pairs: too few reps
            ("v", 4): {"patched/stock": [100, 100, 100], "patched/x": [80, 81, 79]},
        }))
        (self.out / "meta.json").write_text(json.dumps(
            {"machine": {"cores": 2, "model": "m", "memory_gib": 1, "kernel": "k"},
             "workloads": {"w": {"description": "a workload", "seed": "000"}}}))
        report.report(self.out)
        s = (self.out / "summary.md").read_text()
        # one row per client count and build/variant, whatever their number
        self.assertIn("| clients | build/variant | tps | reference | ratio [interval] "
                      "| verdict (coverage, pairs) |", s)
        self.assertIn("| 1 | vanilla/stock | 100 | - | - | - |\n"
                      "| 1 | patched/stock | 120 | vanilla/stock | 1.200 [1.190, 1.211] | faster (96.9%, 6) |\n", s)
        self.assertRegex(s, r"\| 4 \| patched/stock \| 300 \| vanilla/stock \| 1\.0\d\d \[0\.97\d, 1\.0\d\d\] "
                            r"\| no difference \(96\.9%, 6\) \|")
        self.assertIn("| 4 | patched/x | 80 | patched/stock | 0.800 [0.790, 0.810] | too few reps (75.0%, 3) |", s)
        for line in s.splitlines():
            if line.startswith("| clients | build/variant | tps | reference"):
                self.assertEqual(line.count("|"), 7, "six columns")
        self.assertIn("order-statistic (binomial) confidence interval", s)
        self.assertIn("2-core machine", s)
        # the second table: latency and CPU medians beside tps
        self.assertIn("| 1 | patched/stock | 120 | 3.500 | 2.500 | 4.000 | 60.0 | 30.0 | 9.0 | 1.0 | - | - |", s)
        for w in ("w", "v"):
            self.assertEqual((self.out / "plots" / f"{w}.png").read_bytes()[:8], PNG_MAGIC)
            self.assertIn("<svg", (self.out / "plots" / f"{w}.svg").read_text())
        # a README says what ran and where, and is never overwritten
        readme = (self.out / "README.md").read_text()
        self.assertIn("What ran:", readme)
        self.assertIn("- 2 cores (m), 1 GiB, Linux k", readme)
        (self.out / "README.md").write_text("mine\n")
        report.report(self.out)
        self.assertEqual((self.out / "README.md").read_text(), "mine\n")

    def test_nopm_beside_tps(self):
        """New orders per minute: a column of the second table for a
        workload that has them (tpcc) only; the others' tables unchanged."""
        rows = self.run_rows({("tpcc", 4): {"patched/stock": [300, 310, 290]},
                              ("w", 4): {"patched/stock": [100, 100, 100]}})
        for r in rows:
            if r["workload"] == "tpcc":
                r["nopm"] = r["tps"] * 0.45 * 60
        write_runs(self.out, rows)
        self.assertEqual(CSV_FIELDS[-1], "nopm", "a new column goes last: old columns keep their place")
        report.report(self.out)
        s = (self.out / "summary.md").read_text()
        self.assertIn("| clients | build/variant | tps | NOPM | p50 ms |", s)
        self.assertIn("| 4 | patched/stock | 300 | 8100 | 2.000 |", s)
        self.assertIn("| 4 | patched/stock | 100 | 2.000 |", s)
        self.assertEqual(s.count("| NOPM |"), 1)

    def test_old_runs_csv_and_report_command(self):
        # a run directory from before the latency and CPU columns (as the
        # 16-core results): the report still works, those cells are '-'
        rows = self.run_rows({("w", 16): {"patched/stock": [100] * 6, "patched/y": [90, 91, 89, 90, 92, 88]}})
        for r in rows:
            r["top_waits"] = "ProcArray:10:1.5ms"
        write_runs(self.out, rows, OLD_FIELDS)
        p = driver("report", str(self.out))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("w.png", p.stdout)
        s = (self.out / "summary.md").read_text()
        self.assertIn("| 16 | patched/y | 90 | patched/stock | 0.900 [0.880, 0.920] | slower (96.9%, 6) |", s)
        self.assertIn("| 16 | patched/y | 90 | - | - | - | - | - | - | - | - | ProcArray:10:1.5ms |", s)
        p = driver("report", str(self.out / "nosuch"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("is not a run directory", p.stderr)

    def test_counters_and_mechanism(self):
        (self.out / "raw").mkdir()
        rows = []
        for rep, (txn, wakeups) in enumerate(((1000, 50), (2000, 300), (500, 20))):
            rows.append({"run": f"w-c4-r{rep + 1}-patched-walflush-lsn", "build": "patched",
                         "variant": "walflush-lsn", "workload": "w", "clients": 4, "rep": rep + 1,
                         "tps": 100 + rep, "transactions": txn})
            (self.out / "raw" / f"w-c4-r{rep + 1}-patched-walflush-lsn.locks.json").write_text(json.dumps(
                {"tranches": {"WALWrite": {"acquires": txn, "waits": txn // 10, "wait_ms": txn / 100},
                              "ProcArray": {"acquires": txn, "waits": 1, "wait_ms": 0.001}},
                 "wait_hist": {"WALWrite": {"12": 99, "18": 1}},
                 "counters": {"walflush.wakeups": wakeups, "walflush.sleeps": 0, "walinsert.waits_0": 7,
                              "btree.leaf_relocks": 0}}))
        write_runs(self.out, rows)
        table = report.counters_table(self.out, "walflush")
        self.assertIn("| workload | clients | build/variant | tps | wakeups /1000 txn |", table)
        # per 1000 transactions: 50, 150, 40 -> median 50
        self.assertIn("| w | 4 | patched/walflush-lsn | 101 | 50.0 |", table)
        self.assertNotIn("waits_0", table)
        self.assertNotIn("sleeps", table, "a counter that is zero in every run is left out")
        with self.assertRaisesRegex(UsageError, "every counter of family 'btree' is zero"):
            report.counters_table(self.out, "btree")
        with self.assertRaises(UsageError):
            report.counters_table(self.out, "nosuchfamily")
        with self.assertRaises(UsageError):
            report.counters_table(self.out / "raw", "walflush")
        # summary.md carries the family of the run's variants and the top tranches
        (self.out / "meta.json").write_text(json.dumps({"variants": {"walflush-lsn": {"wal_flush_wait": "lsn"}}}))
        report.report(self.out)
        s = (self.out / "summary.md").read_text()
        self.assertIn("### walflush", s)
        self.assertNotIn("### walinsert", s)
        self.assertIn("| w | 4 | patched/walflush-lsn | 101 | 50.0 |", s)
        # 350 waits and 35 ms over 3500 transactions
        self.assertIn("WALWrite 0.1/txn 10 µs/txn p99 4.19 ms; ProcArray 0.000857/txn", s)
