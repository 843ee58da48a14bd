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
        self.assertEqual(big, [f"seed-00{i}-big" for i in range(5)])
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
