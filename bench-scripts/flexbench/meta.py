"""The identity of what was measured: the flexlock commit, the series'
commits and patch checksums, PostgreSQL's version and source.

In a checkout they come from git (the checkout and build/src); in a bundle
(FLEXLOCK_TOP is not a git checkout, or build/src is absent) from
<top>/bundle.json, written by scripts/bundle.sh.  Patch checksums are always
computed from <top>/patches, which a bundle carries too.
"""

import hashlib
import json
import subprocess

from . import config


def git(*args):
    """git output, or None; safe.directory=* because make check runs the
    driver as the unprivileged user on a checkout owned by another."""
    try:
        p = subprocess.run(["git", "-c", "safe.directory=*"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def series_info():
    top, build = config.TOP, config.BUILD
    info = {"flexlock_commit": None, "series": [], "patches": {}}
    bundle = top / "bundle.json"
    in_git = (top / ".git").exists() and (build / "src").is_dir()
    if not in_git and bundle.is_file():
        b = json.loads(bundle.read_text())
        info["flexlock_commit"] = b.get("flexlock_commit")
        info["series"] = b.get("series", [])
        info["bundle"] = {k: b[k] for k in ("created", "created_on", "builds") if k in b}
        if b.get("postgresql", {}).get("source"):
            src = b["postgresql"]["source"]
            info["source"] = src if isinstance(src, list) else str(src).split("\t")
    else:
        if (top / ".git").exists():
            info["flexlock_commit"] = git("-C", str(top), "describe", "--always", "--dirty")
        log = git("-C", str(build / "src"), "log", "--reverse", "--format=%H %s", "vanilla..HEAD") \
            if (build / "src").is_dir() else None
        info["series"] = log.splitlines() if log else []
    for p in sorted((top / "patches").glob("*.patch")):
        info["patches"][p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    origin = build / "pristine.origin"
    if origin.is_file():
        info["source"] = origin.read_text().strip().split("\t")
    return info
