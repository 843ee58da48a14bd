"""Lock traces (flexbench/locktrace.py over flexlab/locktrace.py, the one
reader; flexbench.py trace): the reader and make trace's checks on a known
trace and on broken ones, and the trace command's bad input, refused before
anything starts."""

import lzma
import shutil
import tempfile
import unittest
from pathlib import Path

from common import FIXTURES, driver
from flexbench import locktrace
from flexlab.locktrace import parse_file

OK = FIXTURES / "locktrace-ok.trace"


class ReadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def variant(self, edit):
        """A copy of the known trace with edit(lines) applied."""
        lines = OK.read_text().splitlines()
        edit(lines)
        p = self.dir / "t.trace"
        p.write_text("\n".join(lines) + "\n")
        return p

    def test_known_trace(self):
        txns = locktrace.read_trace(OK)
        self.assertEqual(len(txns), 2)
        x = txns[0]
        tr = parse_file(OK)
        self.assertEqual((tr.pid, tr.backend_type, x.seq, x.interval), (4242, "client backend", 1, 10))
        self.assertEqual((x.outside_ns, x.client_wait_ns, x.xacts_before), (47137, 1366, 25))
        self.assertEqual((x.end_t, x.outcome, x.xid_assigned, x.end_events, x.dropped),
                         (542500, "commit", True, 26, 0))
        # the line of an unknown kind is ignored, but counted as a line
        self.assertEqual((len(x.events), x.lines), (25, 26))
        self.assertEqual(locktrace.check(txns), [])
        # holds with their nesting: the WAL insertion lock inside the page's
        hs = {(h[0], h[3]): h for h in locktrace.holds(x)}
        self.assertEqual(hs[("WALInsert", 111825)][5], 1)
        self.assertEqual(hs[("BufferContent", 106718)][5], 0)
        self.assertEqual(hs[("WALWrite", 131900)][4], 541950)
        s = locktrace.summary(txns)
        self.assertEqual(s["transactions"], 2)
        self.assertEqual(s["with_xid"], 1)
        self.assertEqual(s["rows_per_txn"], {"update": 0.5})
        self.assertEqual(s["wal_bytes_per_txn"], (179 + 34) / 2)
        self.assertEqual(s["flush_us_mean"], 410.1)
        self.assertEqual(s["flushes_written_by_self"], 1)
        self.assertEqual(s["lw_acquisitions_per_txn"]["BufferContent X"], 0.5)

    def test_xz(self):
        p = self.dir / "t.trace.xz"
        with lzma.open(p, "wt") as f:
            f.write(OK.read_text())
        self.assertEqual(len(locktrace.read_trace(p)), 2)

    def test_broken(self):
        cases = [
            # (edit, a problem check() reports)
            (lambda l: l.pop(2), "release of LockFastPath own at 527 that it does not hold"),
            (lambda l: l.pop(3), "LockFastPath own acquired and never released"),
            (lambda l: l.__setitem__(28, l[28].replace("\t26\t0", "\t27\t0")), "'end' counts 27 events"),
        ]
        for edit, message in cases:
            problems = locktrace.check(locktrace.read_trace(self.variant(edit)))
            self.assertTrue(any(message in p for p in problems), (message, problems))
        # a truncated transaction is only checked for its times and counts
        p = self.variant(lambda l: (l.pop(3), l.__setitem__(27, l[27].replace("\t26\t0", "\t25\t9"))))
        self.assertEqual(locktrace.check(locktrace.read_trace(p)), [])

    def test_not_a_trace(self):
        cases = [
            (lambda l: l.__setitem__(0, "version\t2\t4242\tclient backend"), "format version 2"),
            (lambda l: l.__setitem__(0, "hello"), "not a lock trace"),
            (lambda l: l.pop(28), "'begin' inside the transaction"),
            (lambda l: l.__setitem__(4, "hw\t26531\trelation"), "'hw' line has 2 fields"),
            (lambda l: l.insert(1, "lw\t1\trel\tX\t0"), "'lw' line outside a transaction"),
            (lambda l: l.pop(), "no 'end'"),
            # times going back: the reader's rule, not check()'s
            (lambda l: l.__setitem__(3, l[3].replace("\t527\t", "\t400\t")), "time goes backwards"),
        ]
        for edit, message in cases:
            with self.assertRaisesRegex(locktrace.TraceError, message):
                locktrace.read_trace(self.variant(edit))


class TraceUsageTest(unittest.TestCase):
    def test_bad_input(self):
        # every bad option is said whether or not the build is there (a
        # bench-only `make check` does not build the patched install)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            nobuild = {"FLEXLOCK_BUILD": str(Path(tmp) / "build")}
            for args, message in (([], r"nothing to trace"),
                                  (["--workload", "select-only"], r"give both --workload and --variant"),
                                  (["--workload", "nosuch", "--variant", "stock"], r"unknown workload 'nosuch'"),
                                  (["--workload", "select-only", "--variant", "nosuch"], r"unknown variant 'nosuch'"),
                                  (["--pairs", "select-only"], r"--pairs: expected WORKLOAD:VARIANT"),
                                  (["--pairs", "select-only:stock", "--build", "vanilla"],
                                   r"--build vanilla: the vanilla build has no lock_stats_trace \(it lacks the series\)"),
                                  (["--pairs", "select-only:stock", "--build", "nosuch"],
                                   r"unknown --build 'nosuch' \(ours: vanilla, patched, cassert; none of yours"),
                                  (["--pairs", "select-only:stock", "--sample", "0"],
                                   r"--sample must be a positive integer")):
                p = driver("trace", *args, "--out", str(out), env=nobuild)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertRegex(p.stderr, message)
                self.assertFalse(out.exists(), "nothing starts on bad input")
            # good options, and no build: said, with what to do
            p = driver("trace", "--pairs", "select-only:stock", "--out", str(out), env=nobuild)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertRegex(p.stderr, r"build 'patched' is not built .*run 'make patched' first")
            self.assertFalse(out.exists())

    def test_pgbench_failure_named(self):
        # a script whose table does not exist: pgbench's last line is only
        # "Run was aborted"; the error names the server's ERROR too
        import subprocess
        from unittest import mock
        from flexbench import trace as TR
        from flexbench.config import BenchError
        out = ("pgbench (18.6)\n"
               "pgbench: error: client 0 script 0 aborted in command 0 query 0: ERROR:  relation \"nosuch\" "
               "does not exist\n"
               "LINE 1: SELECT * FROM nosuch;\n"
               "transaction type: mine.sql\n"
               "number of transactions actually processed: 0/100\n"
               "pgbench: error: Run was aborted; the above results are incomplete.\n")
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(TR.subprocess, "run",
                                  return_value=subprocess.CompletedProcess([], 2, stdout=out)):
            with self.assertRaises(BenchError) as cm:
                TR.run_pgbench(["pgbench"], "db", 100, Path(tmp) / "log")
        self.assertIn('relation "nosuch" does not exist', str(cm.exception))
        self.assertIn("Run was aborted", str(cm.exception))
        self.assertEqual(TR.pgbench_failure(""), "no output")   # flexbench.pgbench's, imported


if __name__ == "__main__":
    unittest.main()
