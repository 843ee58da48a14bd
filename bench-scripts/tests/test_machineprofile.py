"""The machine profile (flexbench/machineprofile.py, machine/pingpong.c):
pg_test_fsync's output parsed, CPU pairs chosen from a topology, the
ping-pong tool's figures and bad input, and the 16-core run's assumed
profile well formed; CPUS confining the lab to fewer CPUs, and a one-CPU
profile completed with named assumptions."""

import json
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from common import BENCH, FIXTURES, driver
import os
import sys

from flexbench import machine
from flexbench import machineprofile as mp


class ParseTest(unittest.TestCase):
    def test_pg_test_fsync(self):
        fs = mp.parse_pg_test_fsync((FIXTURES / "pg18-test-fsync.out").read_text())
        self.assertEqual(fs["one_8kb"]["fdatasync"], 1638)
        self.assertEqual(fs["one_8kb"]["open_datasync"], 1569)
        self.assertNotIn("fsync_writethrough", fs["one_8kb"])       # n/a
        self.assertEqual(fs["two_8kb"]["fdatasync"], 1700)
        self.assertEqual(fs["open_sync_sizes"]["1 * 16kB open_sync write"], 3300)
        self.assertEqual(fs["non_synced"]["write"], 7)
        with self.assertRaisesRegex(mp.BenchError, "no fdatasync figure"):
            mp.parse_pg_test_fsync("5 seconds per test\n")

    def test_cpu_pairs(self):
        # 4 CPUs, 2 cores with 2 threads each (0 and 2 share a core)
        smt = {0: (0, 0), 1: (0, 1), 2: (0, 0), 3: (0, 1)}
        self.assertEqual(mp.cpu_pairs(smt), (0, [1], 2))
        # 16 cores: the next, the middle and the last other core
        self.assertEqual(mp.cpu_pairs({c: (0, c) for c in range(16)}), (0, [1, 8, 15], None))
        # two sockets of two cores: core ids repeat across packages
        two = {0: (0, 0), 1: (0, 1), 2: (1, 0), 3: (1, 1)}
        self.assertEqual(mp.cpu_pairs(two), (0, [1, 2, 3], None))
        self.assertEqual(mp.cpu_pairs({0: (0, 0)}), (0, [], None))


@unittest.skipUnless(shutil.which("gcc"), "gcc is not installed")
class PingPongTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.bin = Path(cls.tmp.name) / "pingpong"
        subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(cls.bin), str(BENCH / "machine" / "pingpong.c")],
                       check=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_pp(self, *args):
        return subprocess.run([str(self.bin)] + [str(a) for a in args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=120)

    def test_figures(self):
        p = self.run_pp("uncontended", 0, 200000)
        self.assertEqual(p.returncode, 0, p.stderr)
        kv = dict(x.split("=") for x in p.stdout.split())
        self.assertEqual(kv["mode"], "uncontended")
        self.assertTrue(0 < float(kv["cas_ns"]) < 10000, kv)
        p = self.run_pp("sem", 0, 0, 200)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreater(float(dict(x.split("=") for x in p.stdout.split())["ns"]), 0)
        a, partners, _ = mp.cpu_pairs(mp.cpu_topology())
        if partners:
            for mode, arg in (("handoff", 2000), ("contended", 20), ("sem", 200)):
                p = self.run_pp(mode, a, partners[0], arg)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn(f"mode={mode} ", p.stdout)
            p = self.run_pp("lone", a, partners[0], 16, 200)
            self.assertEqual(p.returncode, 0, p.stderr)
            kv = dict(x.split("=") for x in p.stdout.split())
            self.assertTrue(0 < float(kv["hot_work_ns"]) and 0 < float(kv["wake_work_ns"]) < float(kv["ns"]), kv)

    def test_oversubscription_figures(self):
        """ring: K processes on one CPU each get every K-th turn (a lost
        wake-up would hang it: the timeout); slice: two spinners on one CPU
        take turns of more than 20 us."""
        for k in (1, 3):
            with self.subTest(k=k):
                p = self.run_pp("ring", 0, k, 16, 300)
                self.assertEqual(p.returncode, 0, p.stderr)
                kv = dict(x.split("=") for x in p.stdout.split())
                self.assertEqual((kv["mode"], kv["k"]), ("ring", str(k)))
                self.assertTrue(0 < float(kv["work_ns"]) < float(kv["ns"]), kv)
        p = self.run_pp("slice", 0, 2, 100)
        self.assertEqual(p.returncode, 0, p.stderr)
        kv = dict(x.split("=") for x in p.stdout.split())
        self.assertGreater(int(kv["runs"]), 0)
        self.assertGreater(float(kv["slice_ns"]), 20000)
        p = self.run_pp("wakepreempt", 0, 20)
        self.assertEqual(p.returncode, 0, p.stderr)
        kv = dict(x.split("=") for x in p.stdout.split())
        self.assertTrue(0 <= float(kv["share"]) <= 1, kv)

    def test_bad_input(self):
        for args, rc, message in ((["nosuch"], 2, "usage: pingpong"),
                                  (["handoff", 0, 1], 2, "usage: pingpong"),
                                  (["handoff", "x", 0, 10], 2, 'CPU_A must be an integer from 0 to'),
                                  (["uncontended", 0, 0], 2, "ITERATIONS must be an integer from 1"),
                                  (["handoff", 0, 0, 10], 1, "handoff needs two different CPUs"),
                                  (["sem", 0, 100000, 10], 2, "CPU_B must be an integer"),
                                  (["ring", 0, 65, 16, 10], 2, "K must be an integer from 1 to 64"),
                                  (["slice", 0, 1, 100], 2, "K must be an integer from 2 to 64"),
                                  (["lone", 0, 0, 16, 10], 1, "lone needs two different CPUs")):
            p = self.run_pp(*args)
            self.assertEqual(p.returncode, rc, (args, p.stderr))
            self.assertIn(message, p.stderr)


class AssumedTest(unittest.TestCase):
    def test_16core(self):
        d = BENCH.parent / "results" / "2026-11-22-16core"
        prof = json.loads((d / "machine-profile.json").read_text())
        self.assertEqual(prof["format"], mp.FORMAT)
        self.assertTrue(prof["assumed"])
        self.assertEqual(prof["machine"]["logical_cpus"], 16)
        # every constant the profile format had when it was written (the
        # ones added since, for issue 43, were not measured there)
        keys = [k for k, _, _ in mp.CONSTANTS if k not in ("slice_ns", "lone_work_ratio", "wake_preempt_share")]
        self.assertEqual(sorted(prof["constants"]), sorted(keys))
        given = {k: v for k, v in prof["constants"].items() if v}
        for k in ("line_transfer_ns", "sem_wake_cross_core_ns", "wal_flush_us", "uncontended_cas_ns"):
            self.assertIn(k, given)
        for k, v in given.items():
            lo, hi = v["range"]
            self.assertTrue(lo <= v["value"] <= hi, (k, v))
            self.assertTrue(v["source"], k)
        md = (d / "machine-profile.md").read_text()
        self.assertIn("assumed, not measured", md)
        self.assertIn("## The reasoning", md)

    def test_refuses_existing(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "machine-profile.json").write_text("{}")
            p = driver("machine-profile", "--out", tmp)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("exists", p.stderr)


class ConfineTest(unittest.TestCase):
    """CPUS=list (FLEXLOCK_CPUS): the lab's commands and what they start
    run on those CPUs only (issue 43's blind check (b))."""

    def test_parse(self):
        self.assertEqual(machine.parse_cpu_list("0"), [0])
        self.assertEqual(machine.parse_cpu_list("3,0-1"), [0, 1, 3])
        for bad in ("", "a", "1-", "-1", "2-1", "0;1"):
            with self.assertRaises(machine.CpuListError, msg=bad):
                machine.parse_cpu_list(bad)

    def test_children_inherit(self):
        # a grandchild (as a server started by the driver) runs on CPU 0 only
        code = ("from flexbench import machine; import subprocess; machine.confine_from_env('test'); "
                "print(machine.cores(), machine.machine_facts().get('confined_to')); "
                "print(subprocess.run(['grep', 'Cpus_allowed_list', '/proc/self/status'], "
                "capture_output=True, text=True).stdout.split()[-1])")
        env = dict(os.environ, FLEXLOCK_CPUS="0", PYTHONPATH=str(BENCH))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        first, second = p.stdout.split("\n")[:2]
        self.assertEqual(first, "1 [0]" if (os.cpu_count() or 1) > 1 else "1 None")
        self.assertEqual(second, "0")

    def test_bad_cpus(self):
        # the driver refuses before doing anything else, with what to write
        for spec, says in (("x", "not a CPU list"), ("4096", "no CPU 4096 here")):
            p = driver("list", env={"FLEXLOCK_CPUS": spec})
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(says, p.stderr)
            self.assertEqual(p.stdout, "")


class CompleteTest(unittest.TestCase):
    """A one-CPU profile completed with named assumptions (--from --assume)."""

    def measured(self):
        return {"format": mp.FORMAT, "assumed": False, "machine": {"logical_cpus": 1},
                "constants": {"line_transfer_ns": None,
                              "sem_wake_same_core_ns": {"value": 3000.0, "unit": "ns", "range": [2000, 4000],
                                                        "source": "pingpong"}}}

    def assume(self, **over):
        a = {"value": 20000.0, "unit": "ns", "range": [2000.0, 50000.0], "source": "a KVM guest's idle vCPU"}
        a.update(over)
        return {"constants": {"sem_wake_cross_core_ns": a}}

    def test_fills_missing(self):
        prof = mp.complete(self.measured(), self.assume(), origin="decl.json")
        c = prof["constants"]["sem_wake_cross_core_ns"]
        self.assertEqual((c["value"], c["range"], c["assumed"]), (20000.0, [2000.0, 50000.0], True))
        self.assertTrue(c["source"].startswith("a named assumption: "))
        self.assertEqual(prof["assumed_constants"], ["sem_wake_cross_core_ns"])
        self.assertEqual(prof["constants"]["sem_wake_same_core_ns"]["value"], 3000.0)
        self.assertIn("1 constants assumed", mp.markdown(prof))

    def test_refuses(self):
        cases = [({"constants": {"sem_wake_same_core_ns": self.assume()["constants"]["sem_wake_cross_core_ns"]}},
                  "does not replace a measurement"),
                 ({"constants": {"no_such_ns": {"value": 1, "range": [0, 2], "source": "x"}}}, "not a constant"),
                 (self.assume(value=60000.0), "outside its range"),
                 (self.assume(source=""), "lacks source"),
                 (self.assume(unit="us"), "unit")]
        for a, says in cases:
            with self.assertRaises(mp.UsageError, msg=says) as cm:
                mp.complete(self.measured(), a)
            self.assertIn(says, str(cm.exception))

    def test_curve(self):
        rows = [{"workset_kb": 256, "k": k, "turn_ns": t, "turn_ns_range": [t, t], "work_ns": 1.0}
                for k, t in ((1, 1000.0), (2, 3000.0), (4, 5000.0))]
        prof = mp.complete(self.measured(), {"oversubscription": {"rows": rows, "source": "another machine's"}})
        self.assertEqual(prof["oversubscription"]["rows"], rows)
        self.assertEqual(prof["assumed_constants"], ["oversubscription"])
        with self.assertRaises(mp.UsageError) as cm:
            mp.complete(prof, {"oversubscription": {"rows": rows, "source": "x"}})
        self.assertIn("measured the curve", str(cm.exception))

    def test_machine_fact(self):
        m = self.measured()
        m["machine"]["l2_kib"] = None
        prof = mp.complete(m, {"machine": {"l2_kib": {"value": 2048, "source": "the part's specification"}}})
        self.assertEqual((prof["machine"]["l2_kib"], prof["assumed_constants"]), (2048, ["machine.l2_kib"]))
        for a, says in (({"l2_kib": {"value": 1024, "source": "x"}}, "does not replace a fact"),
                        ({"l9_kib": {"value": 1, "source": "x"}}, "not a fact")):
            with self.assertRaises(mp.UsageError) as cm:
                mp.complete(prof, {"machine": a})
            self.assertIn(says, str(cm.exception))

    def test_command(self):
        with tempfile.TemporaryDirectory() as tmp:
            t = Path(tmp)
            (t / "m.json").write_text(json.dumps(self.measured()))
            (t / "a.json").write_text(json.dumps(self.assume()))
            p = driver("machine-profile", "--from", str(t / "m.json"), "--assume", str(t / "a.json"),
                       "--out", str(t / "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            prof = json.loads((t / "out" / "machine-profile.json").read_text())
            self.assertEqual(prof["assumed_constants"], ["sem_wake_cross_core_ns"])
            p = driver("machine-profile", "--assume", str(t / "a.json"), "--out", str(t / "out2"))
            self.assertEqual(p.returncode, 2)
            self.assertIn("go together", p.stderr)
            self.assertFalse((t / "out2").exists())


if __name__ == "__main__":
    unittest.main()
