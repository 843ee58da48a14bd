"""Servers: the one launcher of the lab's PostgreSQL servers (the
benchmark's, make trace's, the calibration's, and make server's through
`flexlock-lab server`), their sizing, the user they run as, and the lock
statistics read from a server before and after each run.

A server runs from its build's install as the unprivileged user; the
benchmark's on a private Unix socket, make server's also on localhost.
PostgreSQL refuses to run as root: as root, every server, initdb, psql and
pgbench runs as FLEXLOCK_USER (default flexlock) through runuser, and
prepare_run_user() creates that user and lets it reach the build tree
(scripts/lib.sh's ensure_test_user calls it).
"""

import os
import pwd
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from . import builds, config
from .config import BenchError
from .machine import machine_facts


def run_user():
    """Servers refuse root: as root, run them as the unprivileged user."""
    if os.geteuid() != 0:
        return None
    return os.environ.get("FLEXLOCK_USER") or "flexlock"


def prepare_run_user(prefix="flexbench"):
    """As root: make sure the unprivileged user exists (useradd) and can
    reach the build tree: search permission on each ancestor of BUILD, as
    given and with symbolic links resolved, that denies it (an ACL, else
    o+x), and say so, each line starting with prefix.  A bundle unpacked
    under /root needs this; make's targets call it through
    scripts/lib.sh's ensure_test_user."""
    user = run_user()
    if not user:
        return
    try:
        pwd.getpwnam(user)
    except KeyError:
        p = subprocess.run(["useradd", "--system", "--user-group", "--create-home", "--home-dir",
                            f"/var/lib/{user}", "--shell", "/bin/sh", user],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            raise config.UsageError(f"could not create the unprivileged user {user!r} to run servers "
                                    "(useradd failed); create it or set FLEXLOCK_USER")
        print(f"{prefix}: created unprivileged user {user!r} to run servers (PostgreSQL refuses root)")
    dirs = []
    for d in (Path(os.path.abspath(config.BUILD)), config.BUILD.resolve()):
        dirs += [a for a in list(reversed(d.parents)) + [d] if a not in dirs]
    for anc in dirs:
        if not anc.is_dir() or subprocess.run(["runuser", "-u", user, "--", "test", "-x", str(anc)]).returncode == 0:
            continue
        if shutil.which("setfacl") and subprocess.run(["setfacl", "-m", f"u:{user}:x", str(anc)],
                                                      stderr=subprocess.DEVNULL).returncode == 0:
            print(f"{prefix}: granted {user!r} search permission on {anc} (ACL)")
        else:
            try:
                os.chmod(anc, anc.stat().st_mode | 0o001)
            except OSError:
                raise config.UsageError(f"{user!r} cannot reach {anc}; move the directory or make it searchable")
            print(f"{prefix}: made {anc} searchable by others so {user!r} can reach the build tree")


def socket_dir(prefix="flexbench-"):
    """A fresh directory for a server's Unix socket under the system's
    temporary directory, writable by the servers' user: a socket's path
    must fit in 107 bytes, which a bundle unpacked deep in a tree exceeds.
    The caller removes it."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(d, 0o777)
    return d


def as_user(cmd):
    user = run_user()
    return (["runuser", "-u", user, "--"] + cmd) if user else cmd


def sh(cmd, log=None, check=True, input_text=None, timeout=None):
    """Run cmd; output to log (appended) or returned."""
    p = subprocess.run(cmd, input=input_text, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if log:
        with open(log, "a") as f:
            f.write(f"$ {shlex.join(cmd)}\n{p.stdout}\n")
    if check and p.returncode != 0:
        err = BenchError(f"{shlex.join(cmd[-6:])} failed (exit {p.returncode}): "
                         f"{p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ''}")
        err.output = p.stdout
        raise err
    return p.stdout


# what in a server's log says why it did not start
COMPLAINT = re.compile(r"(FATAL|PANIC|ERROR|LOG: +(invalid|unrecognized|parameter|could not))")


def first_complaint(log, offset=0):
    """The first complaint of a server's log after offset bytes, without
    its time, pid and level, at most 200 characters; '' if none."""
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    for line in text.splitlines():
        if COMPLAINT.search(line):
            line = re.sub(r"^[0-9-]+ [0-9:.]+ [A-Z]+ \[[0-9]+\] ", "", line)
            return re.sub(r"^(LOG|FATAL|PANIC|ERROR): +", "", line)[:200]
    return ""


class ServerStartError(BenchError):
    """pg_ctl start failed; complaint: the first complaint of the server's log."""

    def __init__(self, message, complaint):
        super().__init__(message + (f"; the server's log says: {complaint}" if complaint else ""))
        self.complaint = complaint


class Server:
    """One server of a build: initdb, start, stop, psql.  The benchmark's
    live in workdir/data/BUILD on a port of their build, with -p and -k
    given to pg_ctl; make server's (datadir given, port None) take their
    port and socket directory from its settings file."""

    def __init__(self, build, workdir, sockdir, base_settings, log, datadir=None, port=None):
        self.build = build
        self.bindir = config.install_dir(build) / "bin"
        if datadir is None:
            self.datadir = workdir / "data" / build
            self.port = str(5432 + builds.known().index(build) + 100)
        else:
            self.datadir = Path(datadir)
            self.port = str(port) if port else None
        self.server_log = self.datadir / "server.log"
        self.sockdir = sockdir
        self.base = base_settings
        self.log = log
        self.variant = None
        self.variant_gucs = {}
        self.user = run_user() or pwd.getpwuid(os.getuid()).pw_name
        self.running = False
        self.has_flexlock = False

    def bin(self, prog):
        return str(self.bindir / prog)

    def conn(self):
        return ["-h", str(self.sockdir), "-p", self.port, "-U", self.user]

    def initdb(self, conf=None):
        """initdb (trust, UTF8, locale C) as the run user, then conf (default:
        the base settings) appended to postgresql.conf; initdb's output to
        the log, or returned."""
        self.datadir.parent.mkdir(parents=True, exist_ok=True)
        if run_user():
            shutil.chown(self.datadir.parent, self.user)
        out = sh(as_user([self.bin("initdb"), "-D", str(self.datadir), "-A", "trust",
                          "--no-instructions", "-E", "UTF8", "--locale=C"]), self.log)
        if conf is None:
            conf = "\n# flexbench\n" + "".join(f"{k} = '{v}'\n" for k, v in self.base.items())
        with open(self.datadir / "postgresql.conf", "a") as f:
            f.write(conf)
        return out

    def start(self):
        """pg_ctl start, waiting up to 120 s; ServerStartError with the
        first complaint of the server's log if it does not start."""
        before = self.server_log.stat().st_size if self.server_log.exists() else 0
        opts = ["-o", f"-p {self.port} -k {self.sockdir}"] if self.port else []
        try:
            sh(as_user([self.bin("pg_ctl"), "-D", str(self.datadir), "-l", str(self.server_log)] + opts
                       + ["-w", "-t", "120", "start"]), self.log)
        except BenchError as e:
            raise ServerStartError(str(e), first_complaint(self.server_log, before)) from None
        self.running = True

    def stop(self, mode="fast"):
        if self.running:
            sh(as_user([self.bin("pg_ctl"), "-D", str(self.datadir), "-m", mode, "-w", "-t", "300", "stop"]),
               self.log, check=False)
            self.running = False

    def psql(self, sql, db="postgres"):
        return sh(as_user([self.bin("psql")] + self.conn() + ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                                              "-d", db, "-c", sql]), self.log).strip()

    def psql_file(self, path, db):
        sh(as_user([self.bin("psql")] + self.conn() + ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db,
                                                      "-f", str(path)]), self.log)

    def setup_flexlock(self):
        avail = self.psql("SELECT count(*) FROM pg_available_extensions WHERE name = 'flexlock'")
        if avail == "1" and self.psql("SELECT count(*) FROM pg_settings WHERE name = 'lock_stats_timing'") == "1":
            self.psql("CREATE EXTENSION IF NOT EXISTS flexlock")
            self.has_flexlock = True

    def set_variant(self, name, gucs):
        """ALTER SYSTEM the variant's GUCs (resetting the previous ones),
        reload, and restart if a setting needs it."""
        if self.variant == name:
            return
        for k in self.variant_gucs:
            if k not in gucs:
                self.psql(f"ALTER SYSTEM RESET {k}")
        for k, v in gucs.items():
            self.psql(f"ALTER SYSTEM SET {k} = '{v}'")
        self.psql("SELECT pg_reload_conf()")
        time.sleep(0.2)
        if self.psql("SELECT count(*) FROM pg_settings WHERE pending_restart") != "0":
            self.stop()
            self.start()
        for k, v in gucs.items():
            got = self.psql(f"SELECT current_setting('{k}')")
            if got != v and not (got in ("on", "off") and v in ("true", "false", "1", "0")):
                raise BenchError(f"{self.build}: variant {name}: {k} is {got!r} after applying {v!r}")
        self.variant = name
        self.variant_gucs = dict(gucs)

    def nondefault_settings(self):
        rows = self.psql("SELECT name || '=' || setting FROM pg_settings "
                         "WHERE source NOT IN ('default', 'override') ORDER BY name")
        return dict(r.split("=", 1) for r in rows.splitlines() if "=" in r)

    def wal_insert_lsn(self):
        """Where WAL insertion is, in bytes since the start of WAL."""
        return int(self.psql("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn"))

    def version(self):
        return sh([self.bin("postgres"), "--version"]).strip()

    def lock_snapshot(self):
        if not self.has_flexlock:
            return None
        rows = self.psql("SELECT tranche, acquire_shared + acquire_exclusive + wait_until_free, waits, "
                         "wait_time_ms FROM flexlock_lwlocks")
        snap = {}
        for r in rows.splitlines():
            name, acq, waits, ms = r.split("|")
            snap[name] = (int(acq), int(waits), float(ms))
        counters = self.psql("SELECT family || '.' || counter, value FROM flexlock_counters")
        snap["#counters"] = dict((c.split("|")[0], int(c.split("|")[1])) for c in counters.splitlines())
        snap["#counters"].update(self.hwlock_counters())
        snap["#hist"] = self.wait_histogram()
        return snap

    HWLOCK_SUMS = ("fastpath", "shared_table", "local", "fastpath_full", "fastpath_strong", "waits")

    def hwlock_counters(self):
        """Heavyweight lock counters summed over lock types and modes, as
        family hwlock (flexlock_hwlocks), plus the waits for relation
        extension locks and the time waited; {} where the extension has no
        such view."""
        cols = ", ".join(f"coalesce(sum({c}), 0)" for c in self.HWLOCK_SUMS)
        try:
            row = self.psql(f"SELECT {cols}, coalesce(sum(waits) FILTER (WHERE locktype = 'extend'), 0), "
                            f"coalesce(sum(wait_time_ms) * 1000, 0)::int8 FROM flexlock_hwlocks")
        except BenchError:
            return {}
        names = [f"hwlock.{c}" for c in self.HWLOCK_SUMS] + ["hwlock.extend_waits", "hwlock.wait_us"]
        return {n: int(v) for n, v in zip(names, row.split("|"))}

    def wait_histogram(self):
        """{tranche: {bucket: sleeps}} of the LWLock sleep-time histograms
        (all modes together), or {} where the extension has none."""
        try:
            rows = self.psql("SELECT tranche, bucket, sum(sleeps) FROM flexlock_lwlock_wait_histogram "
                             "GROUP BY 1, 2")
        except BenchError:
            return {}
        hist = {}
        for r in rows.splitlines():
            name, bucket, n = r.split("|")
            hist.setdefault(name, {})[int(bucket)] = int(n)
        return hist


def lock_delta(before, after, txns):
    """Deltas of the lock statistics over a run: totals and the top tranches."""
    if before is None or after is None:
        return {}, {}
    tranches = {}
    for name, val in after.items():
        if name.startswith("#"):
            continue
        acq, waits, ms = val
        b = before.get(name, (0, 0, 0.0))
        d = (acq - b[0], waits - b[1], ms - b[2])
        if any(d):
            tranches[name] = d
    counters = {k: v - before["#counters"].get(k, 0) for k, v in after["#counters"].items()}
    hist = {}
    for name, buckets in after.get("#hist", {}).items():
        b0 = before.get("#hist", {}).get(name, {})
        d = {b: n - b0.get(b, 0) for b, n in buckets.items() if n - b0.get(b, 0) > 0}
        if d:
            hist[name] = d
    acq = sum(d[0] for d in tranches.values())
    waits = sum(d[1] for d in tranches.values())
    ms = sum(d[2] for d in tranches.values())
    top = sorted(tranches.items(), key=lambda kv: (-kv[1][2], -kv[1][1]))[:3]
    row = {
        "lw_acquires_per_txn": round(acq / txns, 2) if txns else None,
        "lw_waits": waits,
        "lw_waits_per_txn": round(waits / txns, 4) if txns else None,
        "lw_wait_ms": round(ms, 3),
        "top_waits": ";".join(f"{n}:{d[1]}:{d[2]:.1f}ms" for n, d in top if d[1] > 0),
    }
    return row, {"tranches": {n: {"acquires": d[0], "waits": d[1], "wait_ms": round(d[2], 3)}
                              for n, d in tranches.items()},
                 "counters": counters,
                 "wait_hist": {n: {str(b): c for b, c in d.items()} for n, d in hist.items()}}


# make server's clients at most (make pgbench CLIENTS=N): its max_connections 300
SERVER_CLIENTS = 280


def base_settings(max_clients):
    """The sizing of every server the lab starts: shared_buffers a sixteenth
    of the memory (128 MB to 4 GB), max_connections the clients and 20 more
    (psql beside them, the superuser's reserve), WAL and checkpoints that
    keep checkpoints out of short runs; on the socket only."""
    facts = machine_facts()
    mem_mb = int(facts["memory_gib"] * 1024) or 2048
    shared = max(128, min(mem_mb // 16, 4096))
    return {
        "shared_buffers": f"{shared}MB",
        "max_connections": str(max_clients + 20),
        "max_wal_size": "8GB",
        "min_wal_size": "1GB",
        "checkpoint_timeout": "30min",
        "listen_addresses": "",
        "log_line_prefix": "%m [%p] ",
    }


def quote(value):
    """A value for postgresql.conf: in single quotes, a quote doubled."""
    return "'" + str(value).replace("'", "''") + "'"


def server_conf(port, sockdir, extra=""):
    """make server's settings file (flexlock-server.conf, written at every
    start): the sizing of every server of the lab for SERVER_CLIENTS
    clients, on localhost and the socket at port, then extra (the variant
    and settings make server was given)."""
    settings = base_settings(SERVER_CLIENTS)
    settings.update(listen_addresses="localhost", port=port, unix_socket_directories=sockdir)
    lines = ["# Written by 'make server' (scripts/server.sh, flexlock-lab server start) at every start;",
             "# ALTER SYSTEM overrides it.  The sizing of every server of the lab (flexbench/servers.py),",
             f"# for {SERVER_CLIENTS} clients:"]
    lines += [f"{k} = {quote(v)}" for k, v in settings.items()]
    return "\n".join(lines) + "\n" + extra
