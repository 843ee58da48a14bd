"""The lab's one command line (flexlab.cli, python3 -m flexlab): its
commands reach the benchmark's and the simulator's, with their options and
exit statuses, and the older flexbench.py form says the same; make
server's settings file and start errors come from the benchmark's
launcher."""

import os
import subprocess
import sys
import unittest
from pathlib import Path

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


class PredictScriptTest(unittest.TestCase):
    """make predict SCRIPT=: bad input refused in one line, before anything
    is built or written (the end-to-end run is test_smoke's)."""

    def test_bad_input(self):
        import tempfile
        top = BENCH.parent
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "mine.sql"
            script.write_text("SELECT 1;\n")
            out = Path(tmp) / "out"
            cases = [
                ([f"SCRIPT={tmp}/none.sql", "CORES=2", "CLIENTS=2"], "no such readable file"),
                ([f"SCRIPT={script}", "CLIENTS=2"], "CORES must be a positive integer, not ''"),
                ([f"SCRIPT={script}", "CORES=2", "CLIENTS=x"], "CLIENTS must be a positive integer, not 'x'"),
                ([f"SCRIPT={script}", "CORES=2", "CLIENTS=2", "SCALE=0"], "SCALE must be a positive integer"),
                ([f"SCRIPT={script}", "CORES=2", "CLIENTS=2", f"INIT={tmp}/none.sql"], "INIT="),
                ([f"SCRIPT={script}", "CORES=2", "CLIENTS=2", "VARIANT=no-such"], "no variants/no-such.conf"),
                ([f"SCRIPT={script}", "CORES=2", "CLIENTS=2", "PREDICT_BUILD=vanilla"], "need a patched server"),
            ]
            env = dict(os.environ, FLEXLOCK_PREDICT_DIR=str(out))
            for args, says in cases:
                with self.subTest(args):
                    p = subprocess.run(["make", "-s", "-C", str(top), "predict"] + args, capture_output=True,
                                       text=True, env=env)
                    self.assertNotEqual(p.returncode, 0)
                    self.assertIn(says, p.stderr)
                    self.assertEqual(len(p.stderr.strip().splitlines()), 2, p.stderr)   # and make's own line
                    self.assertFalse(out.exists())


class LauncherTest(unittest.TestCase):
    """make server's settings and start errors come from the benchmark's
    launcher (flexbench/servers.py)."""

    def test_make_server_sizing_is_the_benchmarks(self):
        from flexbench import servers
        conf = servers.server_conf(5418, "/tmp/it's", "# VARIANT=stock\n")
        base = servers.base_settings(servers.SERVER_CLIENTS)
        for k in ("shared_buffers", "max_wal_size", "min_wal_size", "checkpoint_timeout", "log_line_prefix"):
            self.assertIn(f"\n{k} = '{base[k]}'\n", conf)
        self.assertIn("\nmax_connections = '300'\n", conf)
        self.assertIn("\nlisten_addresses = 'localhost'\n", conf)
        self.assertIn("\nport = '5418'\n", conf)
        self.assertIn("\nunix_socket_directories = '/tmp/it''s'\n", conf)
        self.assertTrue(conf.endswith("\n# VARIANT=stock\n"))

    def test_first_complaint(self):
        import tempfile
        from flexbench import servers
        with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
            f.write("2026-11-28 11:13:33.421 UTC [1] FATAL:  an old one\n")
            f.flush()
            offset = f.tell()
            f.write("2026-11-28 11:13:34.000 UTC [2] LOG:  starting PostgreSQL 18\n"
                    "2026-11-28 11:13:34.421 UTC [2] LOG:  invalid value for parameter \"shared_buffers\": \"100TB\"\n"
                    "2026-11-28 11:13:34.421 UTC [2] FATAL:  configuration file contains errors\n")
            f.flush()
            self.assertEqual(servers.first_complaint(f.name, offset),
                             'invalid value for parameter "shared_buffers": "100TB"')
            self.assertEqual(servers.first_complaint(f.name), "an old one")
        self.assertEqual(servers.first_complaint("/nonexistent/server.log"), "")
