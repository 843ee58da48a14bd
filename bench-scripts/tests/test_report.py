"""summary.md, plots and counters tables from runs.csv files with known
answers."""

import csv
import json
import tempfile
import unittest
from pathlib import Path

from common import PNG_MAGIC, driver
from flexbench import capmodel, report
from flexbench.config import UsageError
from flexbench.matrix import CSV_FIELDS, PROFILE_FIELDS, PROFILE_KEY

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
        # no profile runs (runs before 2026-11-25, --no-profile-holds): no caps table
        self.assertNotIn("predicted", s)
        self.assertNotIn("Lock caps", s)
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
        # a new column goes last: old columns keep their place
        self.assertEqual(CSV_FIELDS[CSV_FIELDS.index("nopm") - 4:CSV_FIELDS.index("nopm") + 1],
                         ["cpu_user_pct", "cpu_system_pct", "cpu_idle_pct", "cpu_iowait_pct", "nopm"])
        self.assertEqual(CSV_FIELDS[CSV_FIELDS.index("nopm") + 1:],
                         ["cpu_steal_pct", "ctxt_per_s", "wal_bytes_per_s"])
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
        self.assertIn("| 16 | patched/y | 90 | - | - | - | - | - | - | - | - | - | - | - | ProcArray:10:1.5ms |", s)
        p = driver("report", str(self.out / "nosuch"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("is not a run directory", p.stderr)

    def test_caps_and_predictions(self):
        """The third table: per point its profile run's three lowest lock
        caps, CPU demand, CPU caps and predictions (capmodel) at the run's
        --predict-cores; vanilla points profiled on patched/stock say so;
        'report --predict-cores' predicts for other core counts."""
        write_runs(self.out, self.run_rows({("w", 4): {"vanilla/stock": [1800, 1900, 1850],
                                                       "patched/stock": [1790, 1880, 1860],
                                                       "patched/x": [2000, 2100, 2050]},
                                            ("v", 1): {"patched/stock": [500, 500, 500]}}))
        profiles = [
            # vanilla/stock shares patched/stock's profile run
            ("w", 4, "vanilla", "stock", "w-c4-patched-stock-profile", "stock", 1700.0, 1000.0),
            ("w", 4, "patched", "stock", "w-c4-patched-stock-profile", "stock", 1700.0, 1000.0),
            ("w", 4, "patched", "x", "w-c4-patched-x-profile", "x", 1950.0, 100.0),
        ]
        with open(self.out / "profile.csv", "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=PROFILE_FIELDS)
            wr.writeheader()
            for w, c, b, v, pid, pv, tps, cpu_us in profiles:
                wr.writerow({"workload": w, "clients": c, "build": b, "variant": v, "profile": pid,
                             "profile_build": "patched", "profile_variant": pv, "hold_sample": 100,
                             "duration_s": 3, "tps": tps, "transactions": int(tps * 3),
                             "busy_cpu_s": cpu_us / 1e6 * tps * 3, "cpu_us_per_txn": cpu_us})
        with open(self.out / "caps.csv", "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=PROFILE_KEY + capmodel.CAPS_FIELDS)
            wr.writeheader()
            for tranche, cap in (("XidGen", 80000.0), ("WALInsert", 9000.0), ("WALWrite", 2000.0),
                                 ("ProcArray", 50000.0)):
                wr.writerow({"profile": "w-c4-patched-stock-profile", "workload": "w", "clients": 4,
                             "profile_build": "patched", "profile_variant": "stock", "tranche": tranche,
                             "instances": 1, "own_cap_tps": cap, "cap_tps": cap})
        (self.out / "meta.json").write_text(json.dumps(
            {"matrix": {"builds": ["vanilla", "patched"], "variants": ["stock", "x"], "workloads": ["w", "v"],
                        "clients": [1, 4], "reps": 3, "duration_s": 10, "warmup_s": 1,
                        "profile_duration_s": 3, "predict_cores": [16, 64]}}))
        report.report(self.out)
        s = (self.out / "summary.md").read_text()
        self.assertIn("| clients | build/variant | profiled on | tps (profile) | three lowest lock caps, tps "
                      "| CPU µs/txn | CPU cap 16 cores | CPU cap 64 cores | **predicted tps, 16 cores** (binds) "
                      "| **predicted tps, 64 cores** (binds) |", s)
        self.assertIn("**Predictions, not measurements.**", s)
        self.assertIn("results/README.md", s)
        # D = 1 ms: CPU caps 16000 and 64000; the WALWrite cap (2000) binds
        self.assertIn("| 4 | vanilla/stock | patched/stock | 1700 | WALWrite 2000; WALInsert 9000; ProcArray 50000 "
                      "| 1000 | 16000 | 64000 | 2000 (WALWrite) | 2000 (WALWrite) |", s)
        self.assertIn("| 4 | patched/stock | same | 1700 | WALWrite 2000; WALInsert 9000; ProcArray 50000 "
                      "| 1000 | 16000 | 64000 | 2000 (WALWrite) | 2000 (WALWrite) |", s)
        # no capped tranche: the CPU binds
        self.assertIn("| 4 | patched/x | same | 1950 | none | 100 | 160000 | 640000 | 160000 (CPU) "
                      "| 640000 (CPU) |", s)
        self.assertIn("vanilla/stock on patched/stock", s)
        self.assertEqual(s.count("**Predictions, not measurements.**"), 1, "workload v has no profile: no table")
        # other core counts, from the command line
        p = driver("report", "--predict-cores", "8", str(self.out))
        self.assertEqual(p.returncode, 0, p.stderr)
        s = (self.out / "summary.md").read_text()
        self.assertIn("| 4 | patched/x | same | 1950 | none | 100 | 80000 | 80000 (CPU) |", s)
        self.assertNotIn("64 cores", s)
        p = driver("report", "--predict-cores", "0", str(self.out))
        self.assertEqual(p.returncode, 2)

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
