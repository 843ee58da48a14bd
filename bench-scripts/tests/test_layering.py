"""make layering's analysis (flexbench/layering.py) on known inputs: the
normalisation of objdump's listings, the line numbers of ereports, the
callgrind reader, and the report's verdict on the uncontended paths."""

import os
import tempfile
import unittest

from flexbench import layering as L

CODE = ["LWLockAcquire", "LWLockRelease"]
HELPERS = ["LWLockAttemptLock"]


class Normalise(unittest.TestCase):
    def setUp(self):
        L.set_functions(CODE, HELPERS)
        # LWLockAcquire's instructions at 0x100, 0x104, 0x108; its .cold at 0x900
        self.index = {0x100: ("LWLockAcquire", 0), 0x104: ("LWLockAcquire", 1),
                      0x108: ("LWLockAcquire", 2), 0x900: ("LWLockAcquire.cold", 0)}
        self.rodata = [(0x5000, 0x6000)]

    def n(self, text):
        return L.normalise(text, self.index, self.rodata)

    def test_branch_inside_a_listed_function_is_an_index(self):
        self.assertEqual(self.n("jne    108 <LWLockAcquire+0x8>"), "jne <LWLockAcquire:L2>")
        self.assertEqual(self.n("jmp    900 <LWLockAcquire.cold>"), "jmp <LWLockAcquire.cold>")

    def test_other_targets_keep_the_symbol_without_address_or_offset(self):
        self.assertEqual(self.n("call   4f30 <LWLockAttemptLock>"), "call <LWLockAttemptLock>")
        self.assertEqual(self.n("call   4f38 <PGSemaphoreLock+0x8>"), "call <PGSemaphoreLock+OFF>")

    def test_rip_relative_and_data(self):
        # a displacement is an address; the data it names keeps its symbol,
        # without a .N numbering
        self.assertEqual(self.n("mov    0x2f3d(%rip),%rax        # 7040 <MyProc>"),
                         "mov ADDR(%rip),%rax # <MyProc>")
        self.assertEqual(self.n("lea    0x12(%rip),%rdi        # 7100 <held_lwlocks.3>"),
                         "lea ADDR(%rip),%rdi # <held_lwlocks.N>")
        # inside a read-only object, or a string literal named after the
        # nearest symbol: .rodata
        self.assertEqual(self.n("lea    0x10(%rip),%rsi        # 5010 <__func__.2+0x10>"),
                         "lea ADDR(%rip),%rsi # <.rodata>")

    def test_immediates_are_kept(self):
        self.assertEqual(self.n("mov    $0x1000000,%eax"), "mov $0x1000000,%eax")

    def test_ereport_line_numbers(self):
        listing = ["mov $0x4d2,%esi", "lea ADDR(%rip),%rdi # <.rodata>", "call <errfinish>",
                   "mov $0x4d2,%esi"]
        self.assertEqual(L.source_lines(listing),
                         ["mov $LINE,%esi", "lea ADDR(%rip),%rdi # <.rodata>", "call <errfinish>",
                          "mov $0x4d2,%esi"])

    def test_parts(self):
        names = {"LWLockAcquire", "LWLockAcquire.cold", "LWLockAcquireOrWait", "LWLockAcquire.part.0"}
        self.assertEqual(L.parts_of("LWLockAcquire", names),
                         ["LWLockAcquire", "LWLockAcquire.cold", "LWLockAcquire.part.0"])
        self.assertEqual(L.base_of("LWLockRelease.cold"), "LWLockRelease")
        self.assertIsNone(L.base_of("LWLockReleaseAll"))


# A callgrind profile in its compressed form: main calls LWLockAcquire twice
# (inclusive 30) and LWLockRelease once (8); LWLockAcquire calls
# LWLockAttemptLock twice (10), pgstat_report_stat once (5).
PROFILE = """# callgrind format
version: 1
positions: line
events: Ir
summary: 70

fn=(1) main
0 9
cfn=(2) LWLockAcquire
calls=2 0
0 30
cfn=(3) LWLockRelease
calls=1 0
0 8
fn=(2)
0 15
cfn=(4) LWLockAttemptLock
calls=2 0
0 10
cfn=(5) pgstat_report_stat
calls=1 0
0 5
fn=(3)
0 8
fn=(4)
0 10
fn=(5)
0 5
totals: 47
"""


class Callgrind(unittest.TestCase):
    def setUp(self):
        L.set_functions(CODE, HELPERS)
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "p.out")
        with open(self.path, "w") as f:
            f.write(PROFILE)

    def tearDown(self):
        self.dir.cleanup()

    def test_parse(self):
        selfc, ncalls, callcost, edges, total, flush = L.parse_callgrind(self.path)
        self.assertEqual(total, 47)
        self.assertEqual(selfc["LWLockAcquire"], 15)
        self.assertEqual(ncalls["LWLockAcquire"], 2)
        self.assertEqual(callcost["LWLockAcquire"], 15)      # inclusive 30 = self 15 + calls 15
        self.assertEqual(edges["LWLockAcquire", "LWLockAttemptLock"], 2)
        self.assertEqual(flush, 5)

    def test_self_costs_must_add_up(self):
        with open(self.path, "w") as f:
            f.write(PROFILE.replace("totals: 47", "totals: 48"))
        with self.assertRaises(SystemExit) as e:
            L.parse_callgrind(self.path)
        self.assertIn("self costs add up to 47, not the total 48", str(e.exception))


class Report(unittest.TestCase):
    """The reading's last line: the uncontended paths unchanged, or not."""

    def setUp(self):
        L.set_functions(CODE, HELPERS)
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, rows):
        p = os.path.join(self.dir.name, name)
        with open(p, "w") as f:
            f.write("".join("\t".join(map(str, r)) + "\n" for r in rows))
        return p

    def reading(self, acquire_code="identical", acquire_incl_after=30):
        code = self.write("code.tsv", [
            ("LWLockAcquire", "LWLockAcquire", 40, 40, acquire_code, 0, 0),
            ("LWLockRelease", "LWLockRelease", 30, 30, "identical", 0, 0)])
        funcs = self.write("f.tsv", [
            ("before", "select", "LWLockAcquire", "LWLockAcquire", 2, 15, 30),
            ("after", "select", "LWLockAcquire", "LWLockAcquire", 2, 15, acquire_incl_after),
            ("before", "select", "LWLockRelease", "LWLockRelease", 1, 8, 8),
            ("after", "select", "LWLockRelease", "LWLockRelease", 1, 8, 8)])
        callees = self.write("c.tsv", [("before", "select", "LWLockAcquire", "LWLockAttemptLock", 2),
                                       ("after", "select", "LWLockAcquire", "LWLockAttemptLock", 2)])
        totals = self.write("t.tsv", [("before", "select", 1, 1000, 100, 900),
                                      ("after", "select", 1, 1000, 100, 900)])
        flush = self.write("fl.tsv", [("before", "empty", 100, 0), ("after", "empty", 100, 0),
                                      ("before", "select", 1000, 5), ("after", "select", 1000, 5)])
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            L.report(code, funcs, callees, totals, flush)
        return [x for x in buf.getvalue().splitlines() if x.startswith("- Uncontended paths")][0]

    def test_unchanged(self):
        self.assertTrue(self.reading().startswith("- Uncontended paths: unchanged."))

    def test_code_differs(self):
        r = self.reading(acquire_code="differs")
        self.assertIn("not shown unchanged.  Code differs in: LWLockAcquire.", r)

    def test_same_code_other_instructions(self):
        r = self.reading(acquire_incl_after=32)
        self.assertIn("Inclusive instructions per call differ in: none; and in LWLockAcquire, whose code "
                      "is identical", r)

    def test_constants_only(self):
        r = self.reading(acquire_code="constants")
        self.assertIn("unchanged.  The entry points' code is identical modulo addresses (but for "
                      "immediate constants in LWLockAcquire)", r)


class CommandLine(unittest.TestCase):
    def test_bins_named(self):
        with self.assertRaises(SystemExit):
            L.main(["--funcs", "A", "--helpers", "B", "code", "o", "l", "--bin", "before=x"])


if __name__ == "__main__":
    unittest.main()
