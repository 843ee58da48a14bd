"""End to end on the cassert build (FLEXBENCH_SMOKE=1, as make check sets
it): two interleaved variants with tiny durations, the micro-benchmark, an
interrupted run, and the driver run from a bundle-shaped directory."""

import csv
import json
import os
import re
import shutil
import signal
import sys
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from common import BENCH, DRIVER, PNG_MAGIC, driver
from flexbench import config


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
                   "--duration", "1", "--warmup", "0", "--scale", "1", "--profile-duration", "1",
                   "--predict-cores", "16,64", "--no-machine-profile", "--out", str(out), env=self.env,
                   timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        # progress: one line per run with an estimate of what is left
        self.assertEqual(len([l for l in p.stdout.splitlines() if l.startswith("[")]), 16)
        self.assertRegex(p.stdout, r"\[ +16/16\] .*left: about")

        with open(out / "runs.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2 * 2 * 2 * 2)
        for r in rows:
            self.assertGreater(float(r["tps"]), 0)
            # what the machine did: latency percentiles and CPU time by state
            self.assertGreater(int(r["latency_samples"]), 0)
            self.assertLessEqual(float(r["latency_p50_ms"]), float(r["latency_p95_ms"]))
            self.assertLessEqual(float(r["latency_p95_ms"]), float(r["latency_p99_ms"]))
            cpu = [float(r[k]) for k in ("cpu_user_pct", "cpu_system_pct", "cpu_idle_pct", "cpu_iowait_pct")]
            # (steal, the rest, is the hypervisor's: on a loaded host it
            # can be any share, so only the upper bound holds)
            self.assertTrue(all(c >= 0 for c in cpu) and sum(cpu) <= 100.5, cpu)
            self.assertGreater(cpu[0], 0)
            # what a machine profile needs of each point (issue 43): context
            # switches and WAL written per second, the hypervisor's steal
            self.assertGreater(float(r["ctxt_per_s"]), 0)
            self.assertGreaterEqual(float(r["wal_bytes_per_s"]), 0)
            if r["workload"] == "insert-10":
                self.assertGreater(float(r["wal_bytes_per_s"]), 100 * float(r["tps"]), "insert-10 writes WAL")
            self.assertGreaterEqual(float(r["cpu_steal_pct"]), 0)
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
        self.assertIn("| clients | build/variant | tps | reference | ratio [interval] "
                      "| verdict (coverage, pairs) |", summary)
        self.assertRegex(summary, r"\| 2 \| cassert/notiming \| \d+ \| cassert/stock \| \d\.\d{3} \[")
        self.assertIn("too few reps (50.0%, 2)", summary)
        self.assertIn("| 2 | cassert/notiming |", summary)
        self.assertEqual(list((out / "raw").glob("*log*")), [], "the latency logs are deleted")
        self.assertFalse(list((config.BUILD / "bench" / out.name / "txlog").iterdir()))
        for w in ("insert-10", "hot-rows"):
            self.assertEqual((out / "plots" / f"{w}.png").read_bytes()[:8], PNG_MAGIC)
            self.assertTrue((out / "plots" / f"{w}.svg").is_file())
        self.assertIn(str(out / "plots" / "insert-10.png"), p.stdout)

        # profile runs (on by default): one per point after its timed runs,
        # hold sampling on, recorded per point; hold sampling off again after
        self.assertIn("profile runs of 1 s with lock_stats_hold_sample = 100", p.stdout)
        self.assertEqual(len(re.findall(r"^ +\S+ clients=\d \S+: profile on cassert/", p.stdout, re.M)), 8)
        with open(out / "profile.csv", newline="") as f:
            prof = list(csv.DictReader(f))
        self.assertEqual(sorted((r["workload"], r["clients"], r["variant"]) for r in prof),
                         sorted((w, c, v) for w in ("insert-10", "hot-rows") for c in "12"
                                for v in ("stock", "notiming")))
        for r in prof:
            self.assertEqual(r["profile_build"], "cassert")
            self.assertEqual(r["hold_sample"], "100")
            self.assertGreater(int(r["transactions"]), 0)
            self.assertGreater(float(r["cpu_us_per_txn"]), 0)
            self.assertTrue((out / "raw" / f"{r['profile']}.txt").is_file())
        with open(out / "holds.csv", newline="") as f:
            holds = list(csv.DictReader(f))
        with open(out / "caps.csv", newline="") as f:
            caps = list(csv.DictReader(f))
        stock = {r["profile"] for r in prof if r["variant"] == "stock"}
        self.assertEqual({r["profile"] for r in holds} & stock, stock, "hold times of every stock point")
        # insert-10 writes WAL: WALWrite, WALInsert and XidGen have caps (a
        # read-only workload may hold no capped lock exclusively)
        writes = {r["profile"] for r in prof if r["variant"] == "stock" and r["workload"] == "insert-10"}
        self.assertEqual({r["profile"] for r in caps} & writes, writes, "lock caps of every insert-10 point")
        for r in holds:
            self.assertGreater(int(r["holds_timed"]), 0)
        for r in caps:
            self.assertGreater(float(r["own_cap_tps"]), 0)
        # the timed runs never sample holds
        self.assertNotIn("lock_stats_hold_sample", meta["settings"]["cassert/stock"])
        self.assertTrue(meta["matrix"]["profile_holds"])
        self.assertEqual(meta["matrix"]["predict_cores"], [16, 64])
        # summary.md: per point the three lowest caps, the CPU cap and the
        # predictions at 16 and 64 cores
        self.assertIn("| clients | build/variant | profiled on | tps (profile) | three lowest lock caps, tps "
                      "| CPU µs/txn | CPU cap 16 cores | CPU cap 64 cores | **predicted tps, 16 cores** (binds) "
                      "| **predicted tps, 64 cores** (binds) |", summary)
        self.assertEqual(summary.count("**Predictions, not measurements.**"), 2)
        for w in ("insert-10", "hot-rows"):
            section = summary.split(f"## {w}\n", 1)[1].split("\n## ", 1)[0]
            for c in (1, 2):
                for v in ("stock", "notiming"):
                    m = re.search(rf"^\| {c} \| cassert/{v} \| same \| \d+ \| (.*?) \| ([\d.]+) \| (\d+) \| (\d+) "
                                  rf"\| (\d+) \((\S+)\) \| (\d+) \((\S+)\) \|$", section, re.M)
                    self.assertIsNotNone(m, f"{w} {c} {v}: no caps row in\n{section}")
                    lowest, cpu_us, cap16, cap64, p16, b16, p64, b64 = m.groups()
                    self.assertAlmostEqual(int(cap16), 16e6 / float(cpu_us), delta=0.01 * int(cap16))
                    self.assertAlmostEqual(int(cap64), 4 * int(cap16), delta=4)
                    self.assertLessEqual(int(p16), int(cap16))
                    self.assertLessEqual(int(p64), int(cap64))
                    if v == "stock" and w == "insert-10":
                        self.assertRegex(lowest, r"^\w+ \d")
                    if lowest == "none":
                        self.assertEqual((p16, b16, p64, b64), (cap16, "CPU", cap64, "CPU"))
                    else:
                        cap = float(lowest.split(";")[0].split()[1])
                        self.assertEqual(int(p64), round(min(cap, int(cap64))), lowest)
                        self.assertEqual(b64, "CPU" if int(cap64) <= cap else lowest.split()[0])

    def test_predict_own_script(self):
        """make predict SCRIPT= end to end on the cassert build: the
        script traced and calibrated here, then stock and a variant
        predicted, each with the model's measured error beside it."""
        d = Path(self.tmp.name)
        (d / "kv-init.sql").write_text("CREATE TABLE kv (k int PRIMARY KEY, v int);\n"
                                       "INSERT INTO kv SELECT g, g FROM generate_series(1, 1000) g;\n")
        (d / "kv.sql").write_text("\\set k random(1, 1000)\nUPDATE kv SET v = v + 1 WHERE k = :k;\n")
        cores = len(os.sched_getaffinity(0))
        env = dict(os.environ, FLEXLOCK_PREDICT_DIR=str(d / "predict"), TRACE_ARGS="--traced 50 --warmup 0")
        p = subprocess.run(["make", "-s", "-C", str(BENCH.parent), "predict", f"SCRIPT={d / 'kv.sql'}",
                            f"INIT={d / 'kv-init.sql'}", f"CORES={cores}", "CLIENTS=4", "VARIANT=walinsert-1",
                            "PREDICT_BUILD=cassert", "CALIBRATE_ARGS=--secs 1 --reps 1"],
                           capture_output=True, text=True, env=env, timeout=900)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        heads = re.findall(r"^flexsim \S+: user-kv, (\S+) \(traces of \S+\), (\d+) cores, 4 clients, "
                           r"machine profile (\S+) \(measured", p.stdout, re.M)
        self.assertEqual([h[0] for h in heads], ["stock", "walinsert-1"])
        # this machine's profile, measured for the prediction
        self.assertTrue(all(h[2].endswith("machine/machine-profile.json") for h in heads), heads)
        figures = re.findall(r"^predicted tps = (\d+)  \(a prediction; model v4's (measured error at|error on) "
                             rf"{cores} cores", p.stdout, re.M)
        self.assertEqual(len(figures), 2, p.stdout)
        self.assertTrue(all(int(f[0]) > 0 for f in figures))
        cal = json.loads((d / "predict" / "calibration.json").read_text())
        self.assertEqual((cal["clients"], cal["cores"]), (cores, cores))
        self.assertGreater(cal["workloads"]["user-kv"]["median"]["tps"], 0)
        for v in ("stock", "walinsert-1"):
            self.assertTrue((d / "predict" / "traces" / "user-kv" / v / "summary.json").is_file(), v)

    def test_lwlock_micro_benchmark(self):
        out = Path(self.tmp.name) / "lw"
        p = driver("lwlock", "--build", "cassert", "--workers", "1,3", "--shared", "100,50",
                   "--seconds", "0.2", "--reps", "2", "--writer-readers", "1", "--out", str(out), timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        with open(out / "runs.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 2 * 2 * 2 * 3)
        for r in rows:
            self.assertGreater(int(r["acquisitions"]), 0)
        # every algorithm in every repetition, in rotating order
        point = [r["algorithm"] for r in rows if r["workers"] == "3" and r["shared_percent"] == "50"]
        self.assertEqual(point, ["exchange", "fetch_add", "readbiased", "fetch_add", "readbiased", "exchange"])
        self.assertTrue(all(int(r["backouts"]) == 0 for r in rows if r["algorithm"] != "fetch_add"))
        # the writer's price: one writer timed beside one reader, each algorithm
        with open(out / "writer.csv", newline="") as f:
            wrows = list(csv.DictReader(f))
        self.assertEqual(sorted(r["algorithm"] for r in wrows), sorted(["exchange", "fetch_add", "readbiased"] * 2))
        self.assertTrue(all(int(r["writes"]) > 0 and float(r["avg_write_us"]) > 0 for r in wrows), wrows)
        summary = (out / "summary.md").read_text()
        self.assertIn("## 50% shared", summary)
        self.assertIn("| workers | exchange acq/s | fetch_add acq/s | readbiased acq/s | fetch_add/exchange "
                      "| readbiased/exchange | readbiased/fetch_add |", summary)
        self.assertIn("too few reps", summary)
        self.assertIn("## The writer's price", summary)
        # 'report' rewrites the same summary from runs.csv and meta.json
        (out / "summary.md").unlink()
        p = driver("report", str(out))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual((out / "summary.md").read_text(), summary)

    def test_interrupt_keeps_results_and_stops_servers(self):
        out = Path(self.tmp.name) / "interrupted"
        proc = subprocess.Popen(DRIVER + ["run", "--builds", "cassert", "--variants", "stock",
                                          "--workloads", "insert-10", "--clients", "1", "--reps", "20",
                                          "--duration", "1", "--warmup", "0", "--no-machine-profile",
                                          "--out", str(out)],
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
        datadir = config.BUILD / "bench" / out.name / "data" / "cassert"
        self.assertFalse((datadir / "postmaster.pid").exists(), "the server was stopped")



    def test_bundle_layout(self):
        """The driver in a directory shaped like an unpacked bundle: only
        bench-scripts/ (no tests/, no results/), variants/, patches/,
        build/install/cassert, build/pristine.origin and bundle.json; no git.
        Its metadata comes from bundle.json; a missing install is refused
        with one line naming it."""
        b = Path(self.tmp.name) / "bundle"
        (b / "bench-scripts").mkdir(parents=True)
        shutil.copy2(BENCH / "flexbench.py", b / "bench-scripts")
        for d in ("flexbench", "workloads", "presets", "machine"):
            shutil.copytree(BENCH / d, b / "bench-scripts" / d, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(self.variants, b / "variants")
        shutil.copytree(config.TOP / "patches", b / "patches")
        (b / "build" / "install").mkdir(parents=True)
        (b / "build" / "install" / "cassert").symlink_to(config.BUILD / "install" / "cassert")
        if (config.BUILD / "pristine.origin").is_file():
            shutil.copy2(config.BUILD / "pristine.origin", b / "build")
        (b / "bundle.json").write_text(json.dumps({"flexlock_commit": "bundled-1234",
                                                   "series": ["abc Add lock statistics"],
                                                   "created_on": "test"}))
        env = {"FLEXLOCK_TOP": str(b), "FLEXLOCK_BUILD": str(b / "build"), "FLEXBENCH_VARIANTS": ""}
        p = subprocess.run([sys.executable, str(b / "bench-scripts" / "flexbench.py"), "run", "--builds", "patched",
                            "--variants", "stock", "--workloads", "insert-10"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={k: v for k, v in dict(os.environ, **env).items() if v})
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.splitlines()[0],
                         f"flexbench: build 'patched' is not built ({b}/build/install/patched): "
                         "this bundle does not contain it")
        out = b / "run"
        p = subprocess.run([sys.executable, str(b / "bench-scripts" / "flexbench.py"), "run", "--builds", "cassert",
                            "--variants", "stock,notiming", "--workloads", "insert-10", "--clients", "2",
                            "--reps", "2", "--duration", "1", "--no-profile-holds", "--out", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600,
                           env={k: v for k, v in dict(os.environ, **env).items() if v})
        self.assertEqual(p.returncode, 0, p.stdout[-2000:] + p.stderr[-2000:])
        meta = json.loads((out / "meta.json").read_text())
        self.assertEqual(meta["flexlock_commit"], "bundled-1234")
        self.assertEqual(meta["series"], ["abc Add lock statistics"])
        self.assertEqual(sorted(meta["patches"]), sorted(x.name for x in (config.TOP / "patches").glob("*.patch")))
        with open(out / "runs.csv", newline="") as f:
            self.assertEqual(len(list(csv.DictReader(f))), 4)
        self.assertTrue((out / "summary.md").is_file())
        # --no-profile-holds: no profile run, no caps table
        self.assertNotIn("profile on", p.stdout)
        self.assertFalse((out / "profile.csv").exists())
        self.assertNotIn("predicted", (out / "summary.md").read_text())
        self.assertFalse(meta["matrix"]["profile_holds"])
        # the machine profiled itself first (pingpong built from the bundle's source here; a
        # real bundle carries it built)
        self.assertIn("flexbench: machine profile: line transfer", p.stdout)
        self.assertEqual(meta["machine_profile"]["file"], "machine-profile.json")
        prof = json.loads((out / "machine-profile.json").read_text())
        self.assertFalse(prof["assumed"])
        self.assertGreater(prof["constants"]["uncontended_cas_ns"]["value"], 0)
        self.assertGreater(prof["constants"]["wal_flush_us"]["value"], 0)
        self.assertTrue((out / "machine-profile.md").is_file())
