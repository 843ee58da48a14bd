"""Tests of the benchmark driver (bench-scripts/flexbench.py).

Parser tests on saved pgbench outputs, usage errors for bad input, the
report from a known runs.csv, and (with FLEXBENCH_SMOKE=1, as make check
sets it) an end-to-end run on the cassert build with tiny durations, two
interleaved variants, and an interrupted run.

Run: python3 -m unittest discover -s bench-scripts/tests -v
"""

import argparse
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
sys.path.insert(0, str(BENCH))
import flexbench  # noqa: E402

FIXTURES = HERE / "fixtures"
DRIVER = [sys.executable, str(BENCH / "flexbench.py")]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def driver(*args, env=None, **kw):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run(DRIVER + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=e, **kw)


class ParseTest(unittest.TestCase):
    def parse(self, name):
        return flexbench.parse_pgbench((FIXTURES / name).read_text())

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
        with self.assertRaisesRegex(flexbench.BenchError, "cannot parse pgbench output"):
            self.parse("pg13-old-wording.out")

    def test_aborted_run_is_refused(self):
        with self.assertRaisesRegex(flexbench.BenchError, "cannot parse pgbench output"):
            self.parse("truncated.out")

    def test_parse_command(self):
        p = driver("parse", str(FIXTURES / "pg18-plain.out"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["transactions"], 2841733)
        p = driver("parse", str(FIXTURES / "truncated.out"))
        self.assertNotEqual(p.returncode, 0)


class ConfTest(unittest.TestCase):
    def test_every_workload_loads(self):
        names = flexbench.list_workloads()
        for required in ("tpcb-logged", "tpcb-unlogged", "insert-1000", "insert-10",
                         "wal-emit-small", "wal-emit-large", "select-only", "hot-rows",
                         "xid-storm", "btree-ordered", "btree-random", "copy-bulk"):
            self.assertIn(required, names)
        for n in names:
            w = flexbench.Workload(n)
            self.assertTrue(w.script.is_file(), n)
            self.assertTrue(w.seed, f"{n} names its seed")

    def test_every_preset_resolves_its_workloads(self):
        for p in flexbench.list_presets():
            conf = flexbench.parse_conf(flexbench.PRESETS / f"{p}.conf")
            for w in flexbench.names(conf["workloads"]):
                flexbench.Workload(w)
            flexbench.positive_ints(conf["clients"], "clients")

    def test_variants_scoped_to_workloads(self):
        with tempfile.TemporaryDirectory() as d:
            old = flexbench.VARIANTS
            flexbench.VARIANTS = Path(d)
            try:
                (Path(d) / "stock.conf").write_text("flexlock_test.variant = 'stock'\n")
                (Path(d) / "x.conf").write_text("a = 1\nflexlock_test.bench_workloads = 'w1 w2'\n")
                (Path(d) / "y.conf").write_text("b = 2\n")
                m = flexbench.Matrix.__new__(flexbench.Matrix)
                m.args = argparse.Namespace(builds=["vanilla", "patched"], variants=["stock", "x", "y"])
                self.assertEqual(m.configs("w1"), [("vanilla", "stock"), ("patched", "stock"),
                                                   ("patched", "x"), ("patched", "y")])
                self.assertEqual(m.configs("w3"), [("vanilla", "stock"), ("patched", "stock"),
                                                   ("patched", "y")])
                self.assertEqual(flexbench.variant_settings("x"), {"a": "1"})
            finally:
                flexbench.VARIANTS = old

    def test_lock_delta(self):
        before = {"A": (10, 1, 0.5), "B": (5, 0, 0.0), "#counters": {"f.c": 3}}
        after = {"A": (30, 5, 2.5), "B": (25, 2, 4.0), "C": (5, 0, 0.0), "#counters": {"f.c": 7}}
        row, detail = flexbench.lock_delta(before, after, 10)
        self.assertEqual(row["lw_acquires_per_txn"], 4.5)
        self.assertEqual(row["lw_waits"], 6)
        self.assertEqual(row["lw_wait_ms"], 6.0)
        self.assertEqual(row["top_waits"], "B:2:4.0ms;A:4:2.0ms")
        self.assertEqual(detail["counters"], {"f.c": 4})
        self.assertEqual(flexbench.lock_delta(None, None, 10), ({}, {}))


class UsageTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.empty_build = Path(self.tmp.name) / "build"
        self.empty_build.mkdir()

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, args, message, env=None):
        out = Path(self.tmp.name) / "out"
        p = driver("run", *args, "--out", str(out), env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertRegex(p.stderr, message)
        self.assertIn("usage:", p.stderr)
        self.assertFalse(out.exists(), "nothing starts on bad input")

    def test_unknown_workload(self):
        self.refused(["--workloads", "nosuch", "--builds", "vanilla"], r"unknown workload 'nosuch' \(known: ")

    def test_build_not_built(self):
        self.refused(["--workloads", "select-only", "--builds", "vanilla"],
                     r"build 'vanilla' is not built .* run 'make vanilla' first",
                     env={"FLEXLOCK_BUILD": str(self.empty_build)})

    def test_unknown_build(self):
        self.refused(["--workloads", "select-only", "--builds", "fast"], r"unknown build 'fast'")

    def test_clients_not_a_number(self):
        self.refused(["--workloads", "select-only", "--clients", "1,two"],
                     r"clients must be positive integers, got 'two'")
        self.refused(["--workloads", "select-only", "--clients", "0"],
                     r"clients must be positive integers, got '0'")

    def test_unknown_preset_and_variant(self):
        self.refused(["--preset", "nosuch"], r"unknown preset 'nosuch'")
        # a build that make check has, so that the variant is what is wrong
        self.refused(["--workloads", "select-only", "--builds", "cassert", "--variants", "nosuch"],
                     r"unknown variant 'nosuch'")

    def test_output_dir_exists(self):
        p = driver("run", "--workloads", "select-only", "--builds", "vanilla",
                   "--out", self.tmp.name, env={"FLEXLOCK_BUILD": str(self.empty_build)})
        self.assertEqual(p.returncode, 2)
        p = driver("run", "--preset", "quick", "--builds", "cassert", "--out", self.tmp.name)
        if "is not built" not in p.stderr:
            self.assertRegex(p.stderr, r"output directory .* exists")


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


class ReportTest(unittest.TestCase):
    def test_table_ratio_and_plots(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d)
            rows = []
            for clients, (a, b) in {1: ((100, 110, 90), (150, 140, 160)), 4: ((300, 310, 290), (300, 300, 300))}.items():
                for rep in range(3):
                    for cfg, tps in (("vanilla/stock", a[rep]), ("patched/stock", b[rep])):
                        build, variant = cfg.split("/")
                        rows.append({"run": f"r{len(rows)}", "build": build, "variant": variant,
                                     "workload": "w", "clients": clients, "rep": rep + 1, "tps": tps})
            with open(out / "runs.csv", "w", newline="") as f:
                wr = csv.DictWriter(f, fieldnames=flexbench.CSV_FIELDS)
                wr.writeheader()
                for r in rows:
                    wr.writerow(r)
            (out / "meta.json").write_text(json.dumps({"machine": {"cores": 2, "model": "m", "memory_gib": 1,
                                                                    "kernel": "k"}}))
            flexbench.report(out)
            summary = (out / "summary.md").read_text()
            self.assertIn("| clients | vanilla/stock | patched/stock | ratio |", summary)
            self.assertIn("| 1 | 100 | 150 | 1.500 |", summary)
            self.assertIn("| 4 | 300 | 300 | 1.000 |", summary)
            self.assertIn("2-core machine", summary)
            self.assertEqual((out / "plots" / "w.png").read_bytes()[:8], PNG_MAGIC)
            self.assertIn("<svg", (out / "plots" / "w.svg").read_text())

    def test_counters_table(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d)
            (out / "raw").mkdir()
            with open(out / "runs.csv", "w", newline="") as f:
                wr = csv.DictWriter(f, fieldnames=flexbench.CSV_FIELDS)
                wr.writeheader()
                for rep, (txn, wakeups) in enumerate(((1000, 50), (2000, 300), (500, 20))):
                    wr.writerow({"run": f"r{rep}", "build": "patched", "variant": "walflush-lsn",
                                 "workload": "w", "clients": 4, "rep": rep + 1, "tps": 100 + rep,
                                 "transactions": txn})
                    (out / "raw" / f"w-c4-r{rep + 1}-patched-walflush-lsn.locks.json").write_text(json.dumps(
                        {"tranches": {}, "counters": {"walflush.wakeups": wakeups, "walinsert.waits_0": 7}}))
            table = flexbench.counters_table(out, "walflush")
            self.assertIn("| workload | clients | build/variant | tps | wakeups /1000 txn |", table)
            # per 1000 transactions: 50, 150, 40 -> median 50
            self.assertIn("| w | 4 | patched/walflush-lsn | 101 | 50.0 |", table)
            self.assertNotIn("waits_0", table)
            with self.assertRaises(flexbench.UsageError):
                flexbench.counters_table(out, "nosuchfamily")
            with self.assertRaises(flexbench.UsageError):
                flexbench.counters_table(out / "raw", "walflush")


@unittest.skipUnless(os.environ.get("FLEXBENCH_SMOKE"), "FLEXBENCH_SMOKE not set (make check sets it)")
class SmokeTest(unittest.TestCase):
    """End to end on the cassert build: two variants of the lock statistics
    timing, interleaved; then an interrupted run."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.variants = Path(cls.tmp.name) / "variants"
        cls.variants.mkdir()
        (cls.variants / "stock.conf").write_text("flexlock_test.variant = 'stock'\n")
        (cls.variants / "notiming.conf").write_text("lock_stats_timing = off\n")
        cls.env = {"FLEXBENCH_VARIANTS": str(cls.variants)}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_end_to_end(self):
        out = Path(self.tmp.name) / "run"
        p = driver("run", "--builds", "cassert", "--variants", "stock,notiming",
                   "--workloads", "insert-10,hot-rows", "--clients", "1,2", "--reps", "2",
                   "--duration", "1", "--warmup", "0", "--scale", "1", "--out", str(out),
                   env=self.env, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        # progress: one line per run with an estimate of what is left
        self.assertEqual(len([l for l in p.stdout.splitlines() if l.startswith("[")]), 16)
        self.assertRegex(p.stdout, r"\[ +16/16\] .*left: about")

        with open(out / "runs.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2 * 2 * 2 * 2)
        for r in rows:
            self.assertGreater(float(r["tps"]), 0)
            self.assertGreater(int(r["transactions"]), 0)
            self.assertGreater(float(r["lw_acquires_per_txn"]), 0, "lock statistics deltas recorded")
            self.assertTrue((out / "raw" / f"{r['run']}.txt").is_file())
        # interleaved: within a point, the variants alternate A B A B
        point = [r["variant"] for r in rows if r["workload"] == "insert-10" and r["clients"] == "2"]
        self.assertEqual(point, ["stock", "notiming", "stock", "notiming"])

        meta = json.loads((out / "meta.json").read_text())
        self.assertGreaterEqual(meta["machine"]["cores"], 1)
        self.assertIn("18.", meta["builds"]["cassert"]["version"])
        self.assertEqual(meta["settings"]["cassert/notiming"].get("lock_stats_timing"), "off")
        self.assertNotIn("lock_stats_timing", meta["settings"]["cassert/stock"])
        self.assertIn("max_connections", meta["settings"]["cassert"])

        summary = (out / "summary.md").read_text()
        self.assertIn("## insert-10", summary)
        self.assertIn("| clients | cassert/stock | cassert/notiming | ratio |", summary)
        for w in ("insert-10", "hot-rows"):
            self.assertEqual((out / "plots" / f"{w}.png").read_bytes()[:8], PNG_MAGIC)
            self.assertTrue((out / "plots" / f"{w}.svg").is_file())
        self.assertIn(str(out / "plots" / "insert-10.png"), p.stdout)

    def test_lwlock_micro_benchmark(self):
        out = Path(self.tmp.name) / "lw"
        p = driver("lwlock", "--build", "cassert", "--workers", "1,3", "--shared", "100,50",
                   "--seconds", "0.2", "--reps", "2", "--out", str(out), timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        with open(out / "runs.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2 * 2 * 2 * 2)
        for r in rows:
            self.assertGreater(int(r["acquisitions"]), 0)
        # both algorithms in every repetition, in alternating order
        point = [r["algorithm"] for r in rows if r["workers"] == "3" and r["shared_percent"] == "50"]
        self.assertEqual(point, ["exchange", "fetch_add", "fetch_add", "exchange"])
        self.assertTrue(all(int(r["backouts"]) == 0 for r in rows if r["algorithm"] == "exchange"))
        summary = (out / "summary.md").read_text()
        self.assertIn("## 50% shared", summary)
        self.assertIn("| workers | exchange acq/s | fetch_add acq/s | ratio |", summary)

    def test_interrupt_keeps_results_and_stops_servers(self):
        out = Path(self.tmp.name) / "interrupted"
        proc = subprocess.Popen(DRIVER + ["run", "--builds", "cassert", "--variants", "stock",
                                          "--workloads", "insert-10", "--clients", "1", "--reps", "20",
                                          "--duration", "1", "--warmup", "0", "--out", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, **self.env))
        deadline = time.time() + 300
        while time.time() < deadline:
            csvf = out / "runs.csv"
            if csvf.is_file() and len(csvf.read_text().splitlines()) >= 3:
                break
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 130, stderr)
        self.assertIn("interrupted; servers stopped", stderr)
        with open(out / "runs.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertGreaterEqual(len(rows), 2)
        self.assertLess(len(rows), 20)
        self.assertTrue((out / "summary.md").is_file())
        self.assertTrue((out / "meta.json").is_file())
        datadir = flexbench.BUILD / "bench" / out.name / "data" / "cassert"
        self.assertFalse((datadir / "postmaster.pid").exists(), "the server was stopped")


if __name__ == "__main__":
    unittest.main()
