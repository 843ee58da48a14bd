"""The lab's one command line (flexlab.cli, python3 -m flexlab): its
commands reach the benchmark's and the simulator's, with their options and
exit statuses, and the older flexbench.py form says the same."""

import os
import subprocess
import sys
import unittest

from common import BENCH, driver


def lab(*args):
    env = dict(os.environ, PYTHONPATH=str(BENCH))
    return subprocess.run([sys.executable, "-m", "flexlab"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, cwd="/")


class CliTest(unittest.TestCase):
    def test_help_lists_the_commands(self):
        p = lab("-h")
        self.assertEqual(p.returncode, 0, p.stderr)
        for cmd in ("bench", "trace", "profile", "sim", "layering"):
            self.assertIn(cmd, p.stdout)

    def test_bench_list_as_flexbench_py(self):
        p, q = lab("bench", "list"), driver("list")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, q.stdout)

    def test_usage_error_of_run(self):
        p = lab("bench", "run", "--workloads", "no-such-workload")
        self.assertEqual(p.returncode, 2)
        self.assertIn("flexbench: unknown workload 'no-such-workload'", p.stderr)
        self.assertIn("usage: flexlock-lab bench run", p.stderr)

    def test_trace_names_only(self):
        p = lab("trace", "--workload", "select-only", "--variant", "stock", "--names-only")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        p = lab("trace", "--workload", "select-only", "--variant", "no-such", "--names-only")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown variant 'no-such'", p.stderr)

    def test_sim_takes_its_modules_options(self):
        p = lab("sim", "predict")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--workload", p.stderr)
        p = lab("sim", "synth", "-h")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("usage: flexlock-lab sim synth", p.stdout)
        p = lab("sim", "no-such")
        self.assertEqual(p.returncode, 2)
        self.assertIn("invalid choice", p.stderr)


if __name__ == "__main__":
    unittest.main()
