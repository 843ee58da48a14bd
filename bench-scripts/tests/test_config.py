"""Workloads, presets and variants; bad input refused before anything
starts, with one clear line."""

import argparse
import tempfile
import unittest
from pathlib import Path

from common import driver
from flexbench import config
from flexbench.matrix import Matrix, estimate_seconds


class ConfTest(unittest.TestCase):
    def test_every_workload_loads(self):
        names = config.list_workloads()
        for required in ("tpcb-logged", "tpcb-unlogged", "insert-1000", "insert-10",
                         "wal-emit-small", "wal-emit-large", "select-only", "hot-rows",
                         "xid-storm", "btree-ordered", "btree-random", "copy-bulk"):
            self.assertIn(required, names)
        for n in names:
            w = config.Workload(n)
            self.assertTrue(w.script.is_file(), n)
            self.assertTrue(w.seed, f"{n} names its seed")

    def test_every_preset_resolves_its_workloads(self):
        for p in config.list_presets():
            conf = config.parse_conf(config.PRESETS / f"{p}.conf")
            for w in config.names(conf["workloads"]):
                config.Workload(w)
            config.positive_ints(conf["clients"], "clients")

    def test_big_machine_presets(self):
        """The presets for big machines: enough pairs for a verdict
        (min..max of 6 pairs covers 96.9%), and the time they state within
        10% of the driver's estimate."""
        big = [p for p in config.list_presets() if p.endswith("-big")]
        self.assertEqual(big, sorted([f"seed-00{i}-big" for i in range(5)] + ["walinsert-lockfree-big"]))
        for p in big:
            conf = config.parse_conf(config.PRESETS / f"{p}.conf")
            self.assertGreaterEqual(int(conf["reps"]), 6, p)
            self.assertGreaterEqual(int(conf["duration"]), 15, p)
            m = Matrix.__new__(Matrix)
            m.args = argparse.Namespace(builds=config.names(conf.get("builds", "vanilla patched")),
                                        variants=config.names(conf["variants"]))
            runs = sum(len(m.configs(w)) for w in config.names(conf["workloads"])) \
                * len(config.positive_ints(conf["clients"], "clients")) * int(conf["reps"])
            hours = estimate_seconds(runs, int(conf["duration"]), int(conf["warmup"])) / 3600
            self.assertAlmostEqual(float(conf["hours"]), hours, delta=0.1 * hours, msg=p)

    def test_preset_variants_dir(self):
        """A preset's variants_dir: its variants come from there (the
        statements preset's statements-top, not a file of variants/), and
        the variants of other presets are untouched."""
        old = config.VARIANTS
        try:
            args = argparse.Namespace(preset="statements", builds="cassert",
                                      out=str(Path(tempfile.gettempdir()) / "flexbench-no-such-run"))
            for k in ("workloads", "clients", "reps", "duration", "warmup", "scale", "variants",
                      "profile_holds", "profile_duration", "predict_cores", "machine_profile"):
                setattr(args, k, None)
            try:
                config.resolve(args)
            except config.UsageError as e:
                if "is not built" not in str(e):
                    raise
            self.assertEqual(config.VARIANTS, config.TOP / "bench-scripts" / "statements-variants")
            self.assertEqual(config.variant_settings("statements-top"),
                             {"shared_preload_libraries": "flexlock"})
            self.assertFalse((config.TOP / "variants" / "statements-top.conf").exists(),
                             "make check runs every file of variants/")
        finally:
            config.VARIANTS = old

    def test_variants_scoped_to_workloads(self):
        with tempfile.TemporaryDirectory() as d:
            old = config.VARIANTS
            config.VARIANTS = Path(d)
            try:
                (Path(d) / "stock.conf").write_text("flexlock_test.variant = 'stock'\n")
                (Path(d) / "x.conf").write_text("a = 1\nflexlock_test.bench_workloads = 'w1 w2'\n")
                (Path(d) / "y.conf").write_text("b = 2\n")
                m = Matrix.__new__(Matrix)
                m.args = argparse.Namespace(builds=["vanilla", "patched"], variants=["stock", "x", "y"])
                self.assertEqual(m.configs("w1"), [("vanilla", "stock"), ("patched", "stock"),
                                                   ("patched", "x"), ("patched", "y")])
                self.assertEqual(m.configs("w3"), [("vanilla", "stock"), ("patched", "stock"),
                                                   ("patched", "y")])
                self.assertEqual(config.variant_settings("x"), {"a": "1"})
            finally:
                config.VARIANTS = old


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


class MultiScriptTest(unittest.TestCase):
    """scripts = FILE@WEIGHT ...: several weighted scripts in one pgbench."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.old = config.WORKLOADS
        config.WORKLOADS = self.dir
        for f in ("a.sql", "b.sql", "w.sql"):
            (self.dir / f).write_text("SELECT 1;\n")

    def tearDown(self):
        config.WORKLOADS = self.old
        self.tmp.cleanup()

    def workload(self, conf):
        (self.dir / "w.conf").write_text(conf)
        return config.Workload("w")

    def test_weighted_scripts(self):
        w = self.workload("seed = 002\nscripts = a.sql@45 b.sql@4\nnopm_script = a.sql\n")
        self.assertEqual(w.scripts, [(self.dir / "a.sql", 45), (self.dir / "b.sql", 4)])
        self.assertEqual(w.script, self.dir / "a.sql")
        self.assertEqual(w.nopm_script, "a.sql")
        self.assertEqual(Matrix.script_args(w, "patched", Path("/wd")),
                         ["-f", "/wd/patched-w/a.sql@45", "-f", "/wd/patched-w/b.sql@4"])

    def test_single_script_unchanged(self):
        w = self.workload("seed = 000\n")
        self.assertEqual(w.scripts, [(self.dir / "w.sql", None)])
        self.assertIsNone(w.nopm_script)
        self.assertEqual(Matrix.script_args(w, "vanilla", Path("/wd")), ["-f", "/wd/vanilla-w.sql"])
        w = self.workload("script = b.sql\n")
        self.assertEqual(Matrix.script_args(w, "vanilla", Path("/wd")), ["-f", "/wd/vanilla-w.sql"])
        self.assertEqual(w.script, self.dir / "b.sql")

    def test_bad_scripts_refused(self):
        for conf, message in (
                ("script = a.sql\nscripts = a.sql@1 b.sql@1\n", r"either 'script' or 'scripts', not both"),
                ("scripts = a.sql@1 nosuch.sql@2\n", r"script .*nosuch\.sql does not exist"),
                ("scripts = a.sql@1 b.sql\n", r"expected FILE@WEIGHT, got 'b\.sql'"),
                ("scripts = a.sql@x\n", r"weight of a\.sql must be a whole number, got 'x'"),
                ("scripts = a.sql@-1\n", r"weight of a\.sql must be a whole number, got '-1'"),
                ("scripts = @3\n", r"expected FILE@WEIGHT, got '@3'"),
                ("scripts = a.sql@0 b.sql@0\n", r"every weight is zero"),
                ("scripts = a.sql@1 a.sql@2\n", r"a script is named twice"),
                ("scripts =\n", r"no scripts given"),
                ("scripts = a.sql@1 b.sql@1\nnopm_script = c.sql\n", r"nopm_script 'c\.sql' is not one of its scripts"),
                ("script = missing.sql\n", r"script .*missing\.sql does not exist")):
            with self.subTest(conf=conf):
                with self.assertRaisesRegex(config.UsageError, message):
                    self.workload(conf)


class TpccTest(unittest.TestCase):
    def test_tpcc_workload_and_preset(self):
        w = config.Workload("tpcc")
        self.assertEqual(w.seed, "002")
        self.assertEqual([(p.name, wt) for p, wt in w.scripts],
                         [("tpcc-neword.sql", 45), ("tpcc-payment.sql", 43), ("tpcc-ostat.sql", 4),
                          ("tpcc-delivery.sql", 4), ("tpcc-slev.sql", 4)])
        self.assertEqual(w.nopm_script, "tpcc-neword.sql")
        self.assertIn("{scale}", w.init_sql.read_text())
        for p, _ in w.scripts:
            text = p.read_text()
            self.assertIn("BEGIN;", text, p.name)
            self.assertRegex(text, r"(COMMIT|ROLLBACK);", p.name)
        conf = config.parse_conf(config.PRESETS / "tpcc.conf")
        self.assertEqual(config.names(conf["variants"]),
                         ["stock", "sharedadd-on", "walres-atomic", "walbuf-lockfree", "walins-lockfree",
                          "walins-lockfree-all", "walins-seed002"])
        m = Matrix.__new__(Matrix)
        m.args = argparse.Namespace(builds=["patched"], variants=config.names(conf["variants"]))
        self.assertEqual([v for _, v in m.configs("tpcc")], config.names(conf["variants"]),
                         "every variant of the preset runs tpcc")
        for v in ("walres-atomic", "walbuf-lockfree", "walins-lockfree", "walins-lockfree-all", "walins-seed002"):
            text = (config.VARIANTS / f"{v}.conf").read_text()
            self.assertTrue(text.startswith(f"# variants/{v}.conf — "), v)
            self.assertIn(f"flexlock_test.variant = '{v}'", text)
