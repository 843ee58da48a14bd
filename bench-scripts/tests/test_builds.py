"""flexbench/builds.py: a user's own builds (make build).  The checks of a
name and of patches, the version a patch says it targets, where a patch
failed to apply (from git's words and the patch's hunks), subjects, the
record, and what the rest of the driver asks of a build (known, base,
series), in a build directory made up for the test."""

import json
import tempfile
import unittest
from pathlib import Path

from flexbench import builds, config, stats
from flexbench.config import UsageError

MAIL = """From 1234 Mon Sep 17 00:00:00 2001
From: A Hacker <a@example.org>
Date: Mon, 6 Jul 2026 10:00:00 +0200
Subject: [PATCH v3 2/3] Spin adaptively in LWLockWaitListLock,
 as the other spins do

Body.
---
 src/backend/storage/lmgr/lwlock.c | 2 +-

diff --git a/src/backend/storage/lmgr/lwlock.c b/src/backend/storage/lmgr/lwlock.c
index 1111111..2222222 100644
--- a/src/backend/storage/lmgr/lwlock.c
+++ b/src/backend/storage/lmgr/lwlock.c
@@ -10,3 +10,3 @@ first
 a
-b
+c
 d
@@ -50,2 +50,3 @@ second
 e
+f
 g
diff --git a/src/include/storage/lwlock.h b/src/include/storage/lwlock.h
--- a/src/include/storage/lwlock.h
+++ b/src/include/storage/lwlock.h
@@ -50,2 +50,3 @@ other file
 x
+y
 z
"""

DIFF = """--- a/README.md
+++ b/README.md
@@ -1,2 +1,2 @@
-old
+new
 same
"""

PG19 = """diff --git a/meson.build b/meson.build
--- a/meson.build
+++ b/meson.build
@@ -8,4 +8,4 @@
 project('postgresql',
   ['c'],
   version: '19devel',
-  license: 'PostgreSQL',
+  license: 'PostgreSQL License',
"""


class Inputs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, fn, pattern, *args):
        with self.assertRaises(UsageError) as cm:
            fn(*args)
        self.assertRegex(str(cm.exception), pattern)

    def test_names(self):
        for ok in ("mine", "fast-path.v3", "A_1"):
            builds.check_name(ok)
        self.refused(builds.check_name, r"name the build", "")
        for ours in ("vanilla", "patched", "cassert", "aarch64"):
            self.refused(builds.check_name, r"one of the lab's own builds", ours)
        for bad in ("a/b", "../x", "-x", "a b", "x" * 41, "é"):
            self.refused(builds.check_name, r"a build's name is a directory name", bad)
        self.refused(builds.check_name, r"assertion-enabled twins", "mine-cassert")
        # one of ours on a file system that ignores case
        self.refused(builds.check_name, r"'patched' is one of the lab's own builds", "Patched")

    def test_patch_files(self):
        (self.dir / "0002-b.patch").write_text(MAIL)
        (self.dir / "0001-a.patch").write_text(MAIL)
        (self.dir / "notes.txt").write_text("not a patch")
        (self.dir / "x.diff").write_text(DIFF)
        got = builds.patch_files(str(self.dir))
        self.assertEqual([(f.name, kind) for f, kind, _t in got],
                         [("0001-a.patch", "mail"), ("0002-b.patch", "mail"), ("x.diff", "diff")])
        self.refused(builds.patch_files, r"no such file or directory", str(self.dir / "nosuch"))
        self.refused(builds.patch_files, r"notes.txt is not a patch", str(self.dir / "notes.txt"))
        empty = self.dir / "empty"
        empty.mkdir()
        self.refused(builds.patch_files, r"holds no \*\.patch or \*\.diff files", str(empty))
        self.refused(builds.patch_files, r"name the patches", "")

    def test_what_a_series_directory_holds(self):
        """git format-patch --cover-letter and a Mac's ._ files: left out."""
        (self.dir / "v2-0000-cover-letter.patch").write_text("Subject: [PATCH v2 0/1] x\n\n*** BLURB ***\n")
        (self.dir / "._v2-0001-a.patch").write_text("\x00\x05\x16\x07")
        (self.dir / "v2-0001-a.patch").write_text(MAIL)
        self.assertEqual([f.name for f, _k, _t in builds.patch_files(str(self.dir))], ["v2-0001-a.patch"])

    def test_refused_before_git_sees_them(self):
        crlf = self.dir / "crlf.diff"
        crlf.write_bytes(DIFF.replace("\n", "\r\n").encode())
        self.refused(builds.patch_files, r"crlf.diff has Windows line endings \(CRLF\)", str(crlf))
        cut = self.dir / "cut.patch"
        cut.write_text(MAIL.split("@@ -50,2")[0] + "@@ -50,2 +50,3 @@\n e\n")
        self.refused(builds.patch_files, r"cut.patch is not a well-formed patch: git apply says '.*'", str(cut))
        odd = self.dir / "a\nb.patch"
        odd.write_text(MAIL)
        self.refused(builds.patch_files, r"a control character in a patch's path", str(odd))

    def test_several_mails_in_one_file(self):
        one = MAIL.replace("From 1234 ", "From " + "1" * 40 + " ")
        two = one.replace("Spin adaptively in LWLockWaitListLock,", "Second change,").replace("1" * 40, "2" * 40)
        text = one + two
        self.assertEqual(len(builds.mails(text)), 2)
        log = ("error: patch failed: src/include/storage/lwlock.h:50\n"
               "Patch failed at 0002 Second change, as the other spins do\n")
        self.assertEqual(builds.where_it_failed(log, text),
                         "mail 2 of 2 (Second change, as the other spins do): hunk 1 of 1 (@@ -50,2 +50,3 @@) "
                         "of src/include/storage/lwlock.h does not match the base")
        f = self.dir / "series.mbox.patch"
        f.write_text(text)
        old, config.BUILD = config.BUILD, self.dir
        try:
            (self.dir / "install" / "mbox").mkdir(parents=True)
            r = builds.write_record("mbox", "patched", "0" * 40, "18.6", str(f), builds.patch_files(str(f)), [])
        finally:
            config.BUILD = old
        self.assertEqual([(p["file"], p.get("mail"), p["subject"]) for p in r["patches"]],
                         [("series.mbox.patch", 1, "Spin adaptively in LWLockWaitListLock, as the other spins do"),
                          ("series.mbox.patch", 2, "Second change, as the other spins do")])

    def test_target_version(self):
        self.assertEqual(builds.target_version(PG19), (19, "meson.build"))
        self.assertIsNone(builds.target_version(MAIL))
        ac = ("--- a/configure.ac\n+++ b/configure.ac\n@@ -1,3 +1,3 @@\n"
              " AC_INIT([PostgreSQL], [18.6], [x])\n-a\n+b\n")
        self.assertEqual(builds.target_version(ac), (18, "configure.ac"))
        # an added line is what the patch makes, not what it was made on
        self.assertIsNone(builds.target_version(ac.replace(" AC_INIT", "+AC_INIT")))
        f = self.dir / "v1-0001-x.patch"
        f.write_text(PG19)
        self.refused(builds.check_versions, r"v1-0001-x.patch is a patch against PostgreSQL 19 \(its hunk of "
                                            r"meson.build says so\); the lab builds PostgreSQL 18: rebase it on "
                                            r"REL_18_STABLE first", builds.patch_files(str(f)), 18)
        builds.check_versions(builds.patch_files(str(f)), 19)

    def test_where_it_failed(self):
        self.assertEqual([h[:2] for h in builds.hunks(MAIL, "src/backend/storage/lmgr/lwlock.c")],
                         [(1, "@@ -10,3 +10,3 @@"), (2, "@@ -50,2 +50,3 @@")])
        log = ("error: patch failed: src/backend/storage/lmgr/lwlock.c:50\n"
               "error: src/backend/storage/lmgr/lwlock.c: patch does not apply\n"
               "Patch failed at 0001 Spin adaptively\n")
        self.assertEqual(builds.where_it_failed(log, MAIL),
                         "hunk 2 of 2 (@@ -50,2 +50,3 @@) of src/backend/storage/lmgr/lwlock.c does not match the base")
        self.assertEqual(builds.where_it_failed("error: src/x.c: does not exist in index\n", MAIL),
                         "src/x.c does not exist in the base")
        self.assertEqual(builds.where_it_failed("error: patch failed: README.md:1\n", DIFF),
                         "hunk 1 of 1 (@@ -1,2 +1,2 @@) of README.md does not match the base")
        self.assertEqual(builds.where_it_failed("", MAIL), "git could not apply it")
        # diff -u inside the tree (no a/ b/), and diff -ruN orig/ new/
        plain = "--- src/x.c.orig\n+++ src/x.c\n@@ -3,2 +3,2 @@\n-a\n+b\n c\n"
        self.assertEqual([h[:2] for h in builds.hunks(plain, "src/x.c")], [(1, "@@ -3,2 +3,2 @@")])
        ruN = "--- orig/src/x.c\n+++ new/src/x.c\n@@ -3,2 +3,2 @@\n-a\n+b\n c\n"
        self.assertEqual([h[:2] for h in builds.hunks(ruN, "src/x.c")], [(1, "@@ -3,2 +3,2 @@")])
        # a rename that also changes the file: git names the old path
        ren = "--- a/src/old.c\n+++ b/src/new.c\n@@ -7,2 +7,2 @@\n-a\n+b\n c\n"
        self.assertEqual(len(builds.hunks(ren, "src/old.c")), 1)

    def test_subject(self):
        f = self.dir / "0001-a.patch"
        self.assertEqual(builds.subject(f, "mail", MAIL),
                         "Spin adaptively in LWLockWaitListLock, as the other spins do")
        self.assertEqual(builds.subject(self.dir / "x.diff", "diff", DIFF), "x.diff")


class Installed(unittest.TestCase):
    """What the driver asks of a build, in a build directory of the test's:
    ours, and a user's on patched and on vanilla."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.old = config.BUILD
        config.BUILD = Path(self.tmp.name)
        for b in ("vanilla", "patched", "mine", "plain", "broken"):
            (config.BUILD / "install" / b / "bin").mkdir(parents=True)
            for prog in ("postgres", "pgbench"):
                (config.BUILD / "install" / b / "bin" / prog).write_text("")
        patch = Path(self.tmp.name) / "0001-a.patch"
        patch.write_text(MAIL)
        files = builds.patch_files(str(patch))
        builds.write_record("mine", "patched", "c0ffee" * 6 + "c0ff", "18.6", str(patch), files, ["abc Spin"])
        builds.write_record("plain", "vanilla", "beef" * 10, "18.6", str(patch), files, [])
        (config.BUILD / "install" / "broken" / builds.RECORD).write_text("{not json")

    def tearDown(self):
        config.BUILD = self.old
        self.tmp.cleanup()

    def test_known(self):
        # (a record that does not read is no build)
        self.assertEqual(builds.known(), ["vanilla", "patched", "cassert", "mine", "plain"])
        self.assertTrue(builds.is_known("mine"))
        self.assertFalse(builds.is_known("broken"))
        self.assertFalse(builds.is_known("nosuch"))
        self.assertRegex(str(builds.unknown_build("nosuch")), r"unknown build 'nosuch' \(ours: vanilla, patched, "
                                                              r"cassert; yours: mine, plain\)")

    def test_base_and_series(self):
        self.assertEqual([builds.base(b) for b in ("vanilla", "patched", "cassert", "mine", "plain")],
                         [None, "vanilla", "vanilla", "patched", "vanilla"])
        self.assertEqual([builds.has_series(b) for b in ("vanilla", "patched", "mine", "plain", "nosuch")],
                         [False, True, True, False, False])

    def test_twin_of_a_build_on_vanilla_has_no_base(self):
        patch = Path(self.tmp.name) / "0001-a.patch"
        (config.BUILD / "install" / "plain-cassert").mkdir(parents=True)
        builds.write_record("plain-cassert", "vanilla", "beef" * 10, "18.6", str(patch),
                            builds.patch_files(str(patch)), [], twin_of="plain")
        self.assertIsNone(builds.base("plain-cassert"))
        self.assertFalse(builds.has_series("plain-cassert"))
        self.assertIn("assertions on (the twin of plain)", builds.describe("plain-cassert"))

    def test_base_built_again(self):
        """A build compared with a base rebuilt from other source since it
        was laid on it is refused."""
        stamp = config.BUILD / "install" / "patched" / ".flexlock-build"
        stamp.write_text("one|flags\n")
        patch = Path(self.tmp.name) / "0001-a.patch"
        builds.write_record("mine", "patched", "c0ffee" * 6 + "c0ff", "18.6", str(patch),
                            builds.patch_files(str(patch)), [], stamp=builds.base_stamp("patched"))
        builds.check_current("mine")
        stamp.write_text("two|flags\n")
        with self.assertRaisesRegex(UsageError, r"the patched build has been built again since mine was laid on it "
                                                r"\(commit c0ffeec0ffee\).*make build NAME=mine PATCHES=\.\.\. again"):
            builds.check_current("mine")
        stamp.unlink()          # a bundle: no stamps, nothing to tell
        builds.check_current("mine")

    def test_record(self):
        r = json.loads((config.BUILD / "install" / "mine" / builds.RECORD).read_text())
        self.assertEqual(r["patches"][0]["subject"], "Spin adaptively in LWLockWaitListLock, as the other spins do")
        self.assertEqual(len(r["patches"][0]["sha256"]), 64)
        self.assertEqual(r["patches"][0]["applied_with"], "git am")
        self.assertEqual(builds.describe("mine"),
                         "patched + 1 patch: Spin adaptively in LWLockWaitListLock, as the other spins do")

    def test_reference_is_the_base(self):
        """The summary compares a user's build with the build it was laid
        on, ours with vanilla."""
        cfgs = {("vanilla", "stock"), ("patched", "stock"), ("mine", "stock"), ("plain", "stock")}
        self.assertEqual(stats.reference(("mine", "stock"), cfgs), ("patched", "stock"))
        self.assertEqual(stats.reference(("plain", "stock"), cfgs), ("vanilla", "stock"))
        self.assertEqual(stats.reference(("patched", "stock"), cfgs), ("vanilla", "stock"))
        self.assertIsNone(stats.reference(("vanilla", "stock"), cfgs))
        self.assertIsNone(stats.reference(("mine", "stock"), {("mine", "stock")}))

    def test_plan(self):
        patch = Path(self.tmp.name) / "0001-a.patch"
        self.assertEqual(len(builds.plan("new", str(patch), "patched", 18)), 1)
        with self.assertRaisesRegex(UsageError, r"BASE=cassert: a build is laid on 'patched'"):
            builds.plan("new", str(patch), "cassert", 18)
        with self.assertRaisesRegex(UsageError, r"the vanilla build is not built .*: run 'make vanilla' first"):
            (config.BUILD / "install" / "vanilla" / "bin" / "postgres").unlink()
            builds.plan("new", str(patch), "vanilla", 18)


if __name__ == "__main__":
    unittest.main()
