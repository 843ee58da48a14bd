"""Machine facts, CPU time by state from /proc/stat, and the identity of
what ran: from git in a checkout, from bundle.json in a bundle."""

import hashlib
import json
import tempfile
import unittest
from pathlib import Path

from flexbench import config, machine, meta

STAT_BEFORE = "cpu  100 10 50 800 40 5 5 0 0 0\ncpu0 50 5 25 400 20 2 3 0 0 0\nintr 1 2 3\n"
STAT_AFTER = "cpu  400 30 160 1100 140 15 15 50 0 0\ncpu0 200 15 80 550 70 7 8 0 0 0\nctxt 123456\n"


class CPUTest(unittest.TestCase):
    def test_delta_of_proc_stat(self):
        before, after = machine.cpu_times(STAT_BEFORE), machine.cpu_times(STAT_AFTER)
        self.assertEqual(before, [100, 10, 50, 800, 40, 5, 5, 0])
        # deltas: user 300 + nice 20, system 110 + irq 10 + softirq 10, idle 300, iowait 100,
        # steal 50; total 900
        self.assertEqual(machine.cpu_delta(before, after),
                         {"cpu_user_pct": 35.6, "cpu_system_pct": 14.4, "cpu_idle_pct": 33.3,
                          "cpu_iowait_pct": 11.1, "cpu_steal_pct": 5.6})
        self.assertEqual(machine.cpu_delta(before, before), {})
        self.assertEqual(machine.cpu_delta(None, after), {})

    def test_context_switches(self):
        self.assertEqual(machine.context_switches(STAT_AFTER), 123456)
        self.assertIsNone(machine.context_switches(STAT_BEFORE))
        self.assertGreater(machine.context_switches(), 0)

    def test_this_machine(self):
        t = machine.cpu_times()
        self.assertEqual(len(t), 8)
        self.assertGreater(sum(t), 0)
        f = machine.machine_facts()
        self.assertGreaterEqual(f["cores"], 1)
        self.assertGreater(f["memory_gib"], 0)


class SeriesTest(unittest.TestCase):
    def test_bundle_json_when_not_a_checkout(self):
        with tempfile.TemporaryDirectory() as d:
            top = Path(d)
            (top / "patches").mkdir()
            (top / "patches" / "0001-x.patch").write_text("patch\n")
            (top / "build").mkdir()
            (top / "build" / "pristine.origin").write_text("18.6\tdebian\tpostgresql-18_18.6.orig.tar.bz2\n")
            (top / "bundle.json").write_text(json.dumps({
                "flexlock_commit": "abc1234", "series": ["1111 Add lock statistics"],
                "patches": {"0001-x.patch": "ignored: recomputed"},
                "postgresql": {"version": "18.6", "source": ["18.6", "debian"]},
                "builds": {"vanilla": {"configure": "-O2", "debug": "stripped"}},
                "created": "2026-11-22T18:00:00Z", "created_on": "Linux 6.1 x86_64"}))
            old = config.TOP, config.BUILD
            config.TOP, config.BUILD = top, top / "build"
            try:
                info = meta.series_info()
            finally:
                config.TOP, config.BUILD = old
            self.assertEqual(info["flexlock_commit"], "abc1234")
            self.assertEqual(info["series"], ["1111 Add lock statistics"])
            self.assertEqual(info["patches"]["0001-x.patch"], hashlib.sha256(b"patch\n").hexdigest())
            self.assertEqual(info["source"], ["18.6", "debian", "postgresql-18_18.6.orig.tar.bz2"])
            self.assertEqual(info["bundle"]["created_on"], "Linux 6.1 x86_64")

    def test_git_in_the_checkout(self):
        if not (config.TOP / ".git").exists():
            self.skipTest("not a git checkout")
        info = meta.series_info()
        self.assertTrue(info["flexlock_commit"])
        self.assertNotIn("bundle", info)
