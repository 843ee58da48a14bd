"""The builds the lab knows: ours (vanilla, patched, cassert) and a user's
own, made by `make build NAME= PATCHES= BASE=` (scripts/build.sh own).

A user's build is a PostgreSQL install in build/install/NAME whose
flexlock-build.json (RECORD) says what it is: the base it was laid on, the
base's commit, and each patch applied (file, subject, sha256).  This module
is the one reader and writer of that file, and the one place that checks a
build's name and a user's patches before anything is laid out or built.

A build "has the series" when it carries patches/ (patched, cassert, and a
user's build on one of them): only those have the lock statistics, the
flexlock extension, the variants' settings and traces.
"""

import datetime
import email.header
import hashlib
import json
import re
import subprocess
from pathlib import Path

from . import config
from .config import UsageError

OURS = ("vanilla", "patched", "cassert")
# what a user's build can be laid on; its cassert twin is laid on cassert
BASES = ("patched", "vanilla")
RECORD = "flexlock-build.json"
# build/install/ also holds make aarch64's cross build
RESERVED = OURS + ("aarch64",)
TWIN = "-cassert"
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


def record_path(name):
    return config.install_dir(name) / RECORD


def record(name):
    """A user's build's record, or None (ours, or no such build)."""
    if name in OURS:
        return None
    p = record_path(name)
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return None


def user_builds():
    """The user's builds installed (with a record that reads), by name."""
    d = config.BUILD / "install"
    if not d.is_dir():
        return []
    return sorted(p.parent.name for p in d.glob("*/" + RECORD)
                  if p.parent.name not in OURS and record(p.parent.name) is not None)


def known():
    """Ours, then the user's: the names a front-door command takes."""
    return list(OURS) + user_builds()


def is_known(name):
    return name in OURS or record(name) is not None


def base(name):
    """The build a build is compared with: patched's and cassert's is
    vanilla, a user's build's the base it was laid on; vanilla has none."""
    if name == "vanilla":
        return None
    if name in OURS:
        return "vanilla"
    r = record(name)
    if not r:
        return None
    if r.get("twin_of") and r["base"] != "cassert":
        # the assertion-enabled twin of a build on vanilla: no build of
        # ours is vanilla with assertions, so it has nothing to be compared with
        return None
    return r["base"]


def has_series(name):
    """Does the build carry the series (the lock statistics, variants)?"""
    if name in OURS:
        return name != "vanilla"
    r = record(name)
    return bool(r) and has_series(r["base"])


def describe(name):
    """One line: what a build is."""
    if name in OURS:
        return {"vanilla": "PostgreSQL as released", "patched": "vanilla + patches/",
                "cassert": "vanilla + patches/, assertions on"}[name]
    r = record(name)
    if not r:
        return "not a build"
    subjects = "; ".join(p["subject"] for p in r["patches"])
    n = len(r["patches"])
    twin = f", assertions on (the twin of {r['twin_of']})" if r.get("twin_of") else ""
    return f"{r['base']} + {n} patch{'es' if n != 1 else ''}{twin}: {subjects}"


def base_stamp(base):
    """What the base's install was built from (its build stamp), hashed;
    None where it has none (a bundle)."""
    p = config.install_dir(base) / ".flexlock-build"
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def check_current(name):
    """A build of the user's is compared with its base: refuse when the base
    has been built again from other source since the build was laid on it."""
    r = record(name)
    if not r or not r.get("base_stamp"):
        return
    now = base_stamp(r["base"])
    if now is not None and now != r["base_stamp"]:
        raise UsageError(f"the {r['base']} build has been built again since {name} was laid on it "
                         f"(commit {r['base_commit'][:12]}): comparing them would count the change of "
                         f"{r['base']} as {name}'s; make build NAME={name} PATCHES=... again")


def unknown_build(name, what="build"):
    """The error for a name that is no build of ours or the user's."""
    mine = user_builds()
    return UsageError(f"unknown {what} {name!r} (ours: {', '.join(OURS)}; "
                      + (f"yours: {', '.join(mine)}" if mine else "none of yours: make build NAME= PATCHES=") + ")")


# --- checking a user's input before anything is laid out ---------------------

def check_name(name):
    if not name:
        raise UsageError("make build: name the build, NAME=mine (letters, digits, '.', '_', '-')")
    if not NAME_RE.fullmatch(name):
        raise UsageError(f"NAME={name!r}: a build's name is a directory name: up to 40 letters, digits, "
                         f"'.', '_' or '-', starting with a letter or digit")
    if name.lower() in RESERVED:
        raise UsageError(f"NAME={name}: '{name.lower()}' is one of the lab's own builds; choose another name")
    if name.endswith(TWIN):
        raise UsageError(f"NAME={name}: names ending in '{TWIN}' are the assertion-enabled twins of builds "
                         f"(CASSERT=1 makes {name}); choose another name")


def _is_mail(text):
    head = text[:4000]
    return head.startswith("From ") or ("\nSubject:" in "\n" + head and "\nFrom:" in "\n" + head)


def _has_diff(text):
    return bool(re.search(r"^diff --git ", text, re.M)) or bool(
        re.search(r"^--- \S.*\n\+\+\+ \S", text, re.M) and re.search(r"^@@ -\d", text, re.M))


COVER_RE = re.compile(r"(v\d+-)?0000-cover-letter\.patch")


def patch_files(path):
    """The patch files PATCHES= names, in the order they apply, each with
    its kind: 'mail' (git format-patch: git am) or 'diff' (git apply).  In
    a directory, a cover letter (0000-cover-letter.patch) and hidden files
    are left out."""
    if not path:
        raise UsageError("make build: name the patches, PATCHES=dir (git format-patch files), file.patch or file.diff")
    p = Path(path)
    if not p.exists():
        raise UsageError(f"PATCHES={path}: no such file or directory")
    if p.is_dir():
        files = sorted((f for f in p.iterdir() if f.suffix in (".patch", ".diff") and f.is_file()
                        and not f.name.startswith(".") and not COVER_RE.fullmatch(f.name)),
                       key=lambda f: f.name)
        if not files:
            raise UsageError(f"PATCHES={path}: the directory holds no *.patch or *.diff files")
    else:
        files = [p]
    out = []
    for f in files:
        if re.search(r"[\x00-\x1f\x7f]", str(f.absolute())):
            raise UsageError(f"PATCHES: {str(f)!r}: a control character in a patch's path; rename it")
        try:
            # (bytes as they are: read_text would turn CRLF into LF)
            text = f.read_bytes().decode(errors="replace")
        except OSError as e:
            raise UsageError(f"PATCHES: cannot read {f}: {e.strerror}")
        if not _has_diff(text):
            raise UsageError(f"{f} is not a patch: it holds no diff (no 'diff --git' or ---/+++/@@ lines); "
                             f"make one with git format-patch or git diff")
        kind = "mail" if _is_mail(text) else "diff"
        if kind == "diff" and "\r\n" in text:
            raise UsageError(f"{f} has Windows line endings (CRLF), which git apply takes for changed lines; "
                             f"convert it (dos2unix) or send it as a git format-patch mail")
        bad = malformed(f)
        if bad:
            raise UsageError(f"{f} is not a well-formed patch: git apply says '{bad}'; make it again "
                             f"(git format-patch, or git diff --binary for binary files)")
        out.append((f.absolute(), kind, text))
    return out


def malformed(f):
    """git apply's complaint about a patch it cannot read, or None (the
    patch is parsed, not applied: it needs no tree)."""
    try:
        p = subprocess.run(["git", "apply", "--numstat", str(f)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode == 0:
        return None
    return re.sub(r"^error: ", "", (p.stderr.strip().splitlines() or ["unreadable"])[0])


MAIL_START = re.compile(r"^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001$", re.M)


def mails(text):
    """The mails of a file of git format-patch output (one, or several
    with --stdout); the whole text when it is not one."""
    starts = [m.start() for m in MAIL_START.finditer(text)]
    if len(starts) < 2:
        return [text]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


# A patch that says which PostgreSQL it was made against: the version in
# the context or removed lines of the files that hold it.
VERSION_HINTS = (
    ("configure.ac", re.compile(r"AC_INIT\(\[PostgreSQL\], \[(\d+)(?:devel|beta\d*|rc\d*|\.\d+)")),
    ("meson.build", re.compile(r"version: '(\d+)(?:devel|beta\d*|rc\d*|\.\d+)'")),
    ("configure", re.compile(r"PACKAGE_VERSION='(\d+)(?:devel|beta\d*|rc\d*|\.\d+)'")),
)


def target_version(text):
    """(major, file) a patch says it was made against, or None."""
    current = None
    for line in text.splitlines():
        m = re.match(r"^diff --git a/(\S+) ", line) or re.match(r"^--- (?:a/)?(\S+)", line)
        if m:
            current = m.group(1)
            continue
        if current is None or not line[:1] in (" ", "-") or line.startswith("---"):
            continue
        for fname, rx in VERSION_HINTS:
            if current == fname or current.endswith("/" + fname):
                v = rx.search(line)
                if v:
                    return int(v.group(1)), current
    return None


def check_versions(files, major):
    for f, _kind, text in files:
        t = target_version(text)
        if t and t[0] != major:
            raise UsageError(f"{f.name} is a patch against PostgreSQL {t[0]} (its hunk of {t[1]} says so); "
                             f"the lab builds PostgreSQL {major}: rebase it on REL_{major}_STABLE first")


def subject(f, kind, text):
    """A patch's subject: the mail's Subject without [PATCH ...], or the
    file's name for a plain diff."""
    if kind == "mail":
        m = re.search(r"^Subject: (.*(?:\n[ \t].*)*)", text, re.M)
        if m:
            raw = re.sub(r"\n[ \t]", " ", m.group(1))
            s = str(email.header.make_header(email.header.decode_header(raw)))
            return re.sub(r"^\s*\[[^\]]*\]\s*", "", s).strip()
    return f.name


def plan(name, path, base, major):
    """Check everything `make build` is given; the patch files in order."""
    check_name(name)
    if base not in BASES:
        raise UsageError(f"BASE={base}: a build is laid on 'patched' (the default: the counters, views, "
                         f"hold sampling and traces work) or 'vanilla'")
    files = patch_files(path)
    check_versions(files, major)
    b = config.install_dir(base)
    if not (b / "bin" / "postgres").is_file():
        raise UsageError(f"BASE={base}: the {base} build is not built ({b} is missing): run 'make {base}' first")
    return files


# --- where a patch did not apply ---------------------------------------------

def _names(header):
    """A ---/+++ line's path as given and with its first component
    stripped (git apply -p1): git names a file either way."""
    p = header[4:].split("\t")[0].strip()
    return {p, p.split("/", 1)[1]} if "/" in p else {p}


def hunks(text, path):
    """The hunks of `path` in a patch: (number, header, old start line).
    A file is known by its old name or its new one (a rename)."""
    out, old, current = [], set(), set()
    for line in text.splitlines():
        if line.startswith("--- "):
            old = _names(line)
        elif line.startswith("+++ "):
            current = (old | _names(line)) - {"/dev/null", "dev/null"}
        else:
            m = re.match(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@", line)
            if m and path in current:
                out.append((len(out) + 1, line.split(" @@")[0] + " @@", int(m.group(1))))
    return out


def where_it_failed(log_text, patch_text):
    """From git am's or git apply's output: the path and the hunk it could
    not place, as words; in a file of several mails, which mail."""
    which = ""
    ms = mails(patch_text)
    if len(ms) > 1:
        k = re.search(r"^Patch failed at (\d+) (.*)$", log_text, re.M)
        if k and 1 <= int(k.group(1)) <= len(ms):
            patch_text = ms[int(k.group(1)) - 1]
            which = f"mail {int(k.group(1))} of {len(ms)} ({k.group(2).strip()}): "
    return which + _where(log_text, patch_text)


def _where(log_text, patch_text):
    m = re.search(r"^error: patch failed: (\S+):(\d+)", log_text, re.M)
    if m:
        path, line = m.group(1), int(m.group(2))
        hs = hunks(patch_text, path)
        h = next((h for h in hs if h[2] == line), None)
        if h:
            return f"hunk {h[0]} of {len(hs)} ({h[1]}) of {path} does not match the base"
        return f"a hunk of {path} at line {line} does not match the base"
    m = re.search(r"^error: (\S+): does not exist in index", log_text, re.M) or \
        re.search(r"^error: (\S+): No such file or directory", log_text, re.M)
    if m:
        return f"{m.group(1)} does not exist in the base"
    m = re.search(r"^error: (\S+): already exists in (?:index|working directory)", log_text, re.M)
    if m:
        return f"{m.group(1)}, which it creates, already exists in the base"
    m = re.search(r"^error: (.*)$", log_text, re.M) or re.search(r"^fatal: (.*)$", log_text, re.M)
    return m.group(1) if m else "git could not apply it"


# --- the record ---------------------------------------------------------------

def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_record(name, base, base_commit, version, source, files, commits, twin_of=None, stamp=None):
    """files: (path, kind, text) as patch_files() gives them, of the copies
    applied; a file of several mails is an entry per mail."""
    patches = []
    for f, kind, text in files:
        ms = mails(text) if kind == "mail" else [text]
        for k, m in enumerate(ms, 1):
            e = {"file": f.name, "subject": subject(f, kind, m), "sha256": sha256(f),
                 "applied_with": "git am" if kind == "mail" else "git apply"}
            if len(ms) > 1:
                e["mail"] = k
            patches.append(e)
    rec = {
        "name": name,
        "base": base,
        "base_commit": base_commit,
        # the base's install when this build was laid on it (check_current)
        "base_stamp": stamp,
        "postgresql": version,
        "patches_given": str(Path(source).absolute()),
        "patches": patches,
        "commits": commits,
        "twin_of": twin_of,
        "built": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    record_path(name).write_text(json.dumps(rec, indent=2) + "\n")
    return rec
