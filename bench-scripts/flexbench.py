#!/usr/bin/python3
"""flexbench: A/B pgbench workloads across flexlock builds and lock variants.

Runs a matrix  build x variant x workload x clients x repetition  and writes a
run directory: runs.csv (one row per run), meta.json (machine, versions,
series, settings), summary.md (per workload, clients by build/variant: median
tps and the ratio to vanilla), plots/ (tps vs clients, PNG and SVG) and raw/
(every pgbench output, the lock statistics deltas).

Things compared are interleaved: for each workload and client count, every
repetition runs each build/variant once (A B A B ...), so drift of the machine
hits all of them.  One server per build runs for the whole matrix, on a
private Unix socket; a variant switch is ALTER SYSTEM plus a reload, or a
restart when a setting needs one.  Each workload has its own database,
initialised once per server and reused (reset_sql runs before every run).

Usage: flexbench.py run [options]     (flexbench.py run --help)
       flexbench.py list              workloads and presets
       flexbench.py parse FILE        parse one saved pgbench output
       flexbench.py report DIR        rewrite summary.md and plots from runs.csv
       flexbench.py lwlock [options]  LWLock micro-benchmark, compare-exchange
                                      vs fetch-add (flexlock_bench_lwlock)
"""

import argparse
import csv
import datetime
import hashlib
import json
import os
import platform
import pwd
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(os.environ.get("FLEXLOCK_TOP", Path(__file__).resolve().parent.parent))
BENCH = TOP / "bench-scripts"
WORKLOADS = BENCH / "workloads"
PRESETS = BENCH / "presets"
VARIANTS = Path(os.environ.get("FLEXBENCH_VARIANTS", TOP / "variants"))
BUILD = Path(os.environ.get("FLEXLOCK_BUILD", TOP / "build"))
KNOWN_BUILDS = ("vanilla", "patched", "cassert")

CSV_FIELDS = [
    "run", "build", "variant", "workload", "clients", "rep", "tps",
    "latency_avg_ms", "latency_stddev_ms", "transactions", "failed",
    "duration_s", "lw_acquires_per_txn", "lw_waits", "lw_waits_per_txn",
    "lw_wait_ms", "top_waits", "started_at",
]


class UsageError(Exception):
    """Bad input: reported before anything starts."""


class BenchError(Exception):
    """A failure while running: reported loudly, the run stops."""


# --- configuration files ----------------------------------------------------

def parse_conf(path):
    """key = value lines; '#' starts a comment; later keys override."""
    conf = {}
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            raise UsageError(f"{path}:{lineno}: expected 'key = value', got {line!r}")
        key, value = (part.strip() for part in line.split("=", 1))
        conf[key] = value.strip("'\"") if key != "session" else value
    return conf


def parse_settings(text):
    """'a=1, b=2' -> {'a': '1', 'b': '2'}"""
    out = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        if "=" not in item:
            raise UsageError(f"bad setting {item!r}: expected name=value")
        k, v = (p.strip() for p in item.split("=", 1))
        out[k] = v
    return out


class Workload:
    """A pgbench script with its init and settings: workloads/NAME.conf."""

    def __init__(self, name):
        conf_path = WORKLOADS / f"{name}.conf"
        if not conf_path.is_file():
            raise UsageError(f"unknown workload {name!r} (known: {', '.join(list_workloads())})")
        conf = parse_conf(conf_path)
        self.name = name
        self.description = conf.get("description", name)
        self.seed = conf.get("seed", "")
        self.script = WORKLOADS / conf.get("script", f"{name}.sql")
        if not self.script.is_file():
            raise UsageError(f"workload {name}: script {self.script} does not exist")
        self.pgbench_init = conf.get("pgbench_init")
        self.scale = int(conf.get("scale", "1"))
        self.init_sql = WORKLOADS / conf["init_sql"] if "init_sql" in conf else None
        self.reset_sql = conf.get("reset_sql")
        self.session = parse_settings(conf.get("session", ""))
        self.vars = parse_settings(conf.get("vars", ""))
        self.pgbench_args = shlex.split(conf.get("pgbench_args", ""))

    @property
    def dbname(self):
        return "wl_" + re.sub(r"[^a-z0-9]", "_", self.name.lower())


def list_workloads():
    return sorted(p.stem for p in WORKLOADS.glob("*.conf"))


def list_presets():
    return sorted(p.stem for p in PRESETS.glob("*.conf"))


def variant_conf(name):
    path = VARIANTS / f"{name}.conf"
    if not path.is_file():
        known = sorted(p.stem for p in VARIANTS.glob("*.conf"))
        raise UsageError(f"unknown variant {name!r} (known: {', '.join(known)})")
    return parse_conf(path)


def variant_settings(name):
    """GUCs of variants/NAME.conf (the same files make check uses)."""
    return {k: v for k, v in variant_conf(name).items() if not k.startswith("flexlock_test.")}


def variant_workloads(name):
    """The workloads a variant is benchmarked on: flexlock_test.bench_workloads
    (a placeholder GUC, harmless to the server), or all if unset."""
    w = variant_conf(name).get("flexlock_test.bench_workloads")
    return set(names(w)) if w else None


# --- pgbench output -----------------------------------------------------------

TPS_RE = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)$", re.M)
LAT_AVG_RE = re.compile(r"^latency average = ([0-9.]+) ms", re.M)
LAT_SD_RE = re.compile(r"^latency stddev = ([0-9.]+) ms", re.M)
TXN_RE = re.compile(r"^number of transactions actually processed: (\d+)", re.M)
FAILED_RE = re.compile(r"^number of failed transactions: (\d+)", re.M)


def parse_pgbench(text):
    """The figures of one pgbench run (PostgreSQL 18 wording).  Raises
    BenchError if the output has no tps line: a run we cannot read must not
    pass silently."""
    m = TPS_RE.search(text)
    if not m:
        raise BenchError("cannot parse pgbench output: no line 'tps = N (without initial connection time)'")
    out = {"tps": float(m.group(1))}
    for key, rx, conv in (("latency_avg_ms", LAT_AVG_RE, float),
                          ("latency_stddev_ms", LAT_SD_RE, float),
                          ("transactions", TXN_RE, int),
                          ("failed", FAILED_RE, int)):
        m = rx.search(text)
        out[key] = conv(m.group(1)) if m else None
    if out["transactions"] is None:
        raise BenchError("cannot parse pgbench output: no 'number of transactions actually processed'")
    return out


# --- servers -------------------------------------------------------------------

def run_user():
    """Servers refuse root: as root, run them as the unprivileged user."""
    if os.geteuid() != 0:
        return None
    return os.environ.get("FLEXLOCK_USER", "flexlock")


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
        raise BenchError(f"{shlex.join(cmd[-6:])} failed (exit {p.returncode}): "
                         f"{p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ''}")
    return p.stdout


class Server:
    def __init__(self, build, workdir, sockdir, base_settings, log):
        self.build = build
        self.bindir = BUILD / "install" / build / "bin"
        self.datadir = workdir / "data" / build
        self.sockdir = sockdir
        self.port = str(5432 + KNOWN_BUILDS.index(build) + 100)
        self.base = base_settings
        self.log = log
        self.variant = None
        self.user = run_user() or pwd.getpwuid(os.getuid()).pw_name
        self.running = False
        self.has_flexlock = False

    def bin(self, prog):
        return str(self.bindir / prog)

    def conn(self):
        return ["-h", str(self.sockdir), "-p", self.port, "-U", self.user]

    def initdb(self):
        self.datadir.parent.mkdir(parents=True, exist_ok=True)
        if run_user():
            shutil.chown(self.datadir.parent, self.user)
        sh(as_user([self.bin("initdb"), "-D", str(self.datadir), "-A", "trust",
                    "--no-instructions", "-E", "UTF8", "--locale=C"]), self.log)
        with open(self.datadir / "postgresql.conf", "a") as f:
            f.write("\n# flexbench\n")
            for k, v in self.base.items():
                f.write(f"{k} = '{v}'\n")

    def start(self):
        sh(as_user([self.bin("pg_ctl"), "-D", str(self.datadir), "-l", str(self.datadir / "server.log"),
                    "-o", f"-p {self.port} -k {self.sockdir}", "-w", "-t", "120", "start"]), self.log)
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
        previous = variant_settings(self.variant) if self.variant else {}
        for k in previous:
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

    def nondefault_settings(self):
        rows = self.psql("SELECT name || '=' || setting FROM pg_settings "
                         "WHERE source NOT IN ('default', 'override') ORDER BY name")
        return dict(r.split("=", 1) for r in rows.splitlines() if "=" in r)

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
        return snap


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
                 "counters": counters}


# --- the matrix ------------------------------------------------------------------

def machine_facts():
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    return {"cores": os.cpu_count(), "model": model, "memory_gib": round(mem / 2**30, 1),
            "kernel": platform.release(), "system": platform.system()}


def series_info():
    info = {"flexlock_commit": None, "series": [], "patches": {}}
    try:
        info["flexlock_commit"] = sh(["git", "-C", str(TOP), "describe", "--always", "--dirty"]).strip()
    except (BenchError, OSError):
        pass
    try:
        log = sh(["git", "-C", str(BUILD / "src"), "log", "--reverse", "--format=%H %s", "vanilla..HEAD"])
        info["series"] = log.strip().splitlines()
    except (BenchError, OSError):
        pass
    for p in sorted((TOP / "patches").glob("*.patch")):
        info["patches"][p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    origin = BUILD / "pristine.origin"
    if origin.is_file():
        info["source"] = origin.read_text().strip().split("\t")
    return info


def base_settings(max_clients):
    """Server settings sized for the machine."""
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


class Matrix:
    def __init__(self, args):
        self.args = args
        self.out = Path(args.out)
        self.rows = []
        self.servers = {}
        self.meta = {}
        self.sockdir = None

    def configs(self, workload=None):
        """(build, variant) pairs: vanilla only runs stock; a variant runs
        only on the workloads it names (flexlock_test.bench_workloads)."""
        out = []
        for b in self.args.builds:
            for v in self.args.variants:
                if b == "vanilla" and v != "stock":
                    continue
                only = variant_workloads(v)
                if workload and v != "stock" and only is not None and workload not in only:
                    continue
                out.append((b, v))
        return out

    def run(self):
        a = self.args
        workloads = [Workload(w) for w in a.workloads]
        total = sum(len(self.configs(w.name)) for w in workloads) * len(a.clients) * a.reps
        per_run = a.duration + a.warmup + 1.5

        self.out.mkdir(parents=True)
        (self.out / "raw").mkdir()
        (self.out / "plots").mkdir()
        log = self.out / "driver.log"
        workdir = BUILD / "bench" / self.out.name
        if workdir.exists():
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        self.sockdir = Path(tempfile.mkdtemp(prefix="flexbench-"))
        os.chmod(self.sockdir, 0o777)
        if run_user():
            for p in (BUILD / "bench", workdir):
                shutil.chown(p, run_user())

        self.meta = {
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_facts(),
            "preset": a.preset,
            "matrix": {"builds": a.builds, "variants": a.variants, "workloads": a.workloads,
                       "clients": a.clients, "reps": a.reps, "duration_s": a.duration,
                       "warmup_s": a.warmup, "scale": a.scale},
            "variants": {v: variant_settings(v) for v in a.variants},
            "workloads": {w.name: {"description": w.description, "seed": w.seed} for w in workloads},
            "builds": {},
            "settings": {},
        }
        self.meta.update(series_info())
        base = base_settings(max(a.clients))
        print(f"flexbench: {total} runs ({len(workloads)} workloads x {len(a.clients)} client counts x "
              f"{a.reps} reps x their builds/variants), about {fmt_time(total * per_run)}; "
              f"output in {self.out}", flush=True)

        csvf = open(self.out / "runs.csv", "w", newline="")
        writer = csv.DictWriter(csvf, fieldnames=CSV_FIELDS)
        writer.writeheader()
        try:
            for b in a.builds:
                srv = Server(b, workdir, self.sockdir, base, log)
                self.servers[b] = srv
                srv.initdb()
                srv.start()
                srv.setup_flexlock()
                self.meta["builds"][b] = {"version": srv.version(), "flexlock_stats": srv.has_flexlock}
            done = 0
            t0 = time.time()
            for w in workloads:
                self.init_workload(w, workdir)
                for c in a.clients:
                    for rep in range(1, a.reps + 1):
                        for (b, v) in self.configs(w.name):
                            row = self.one_run(w, c, rep, b, v, workdir)
                            writer.writerow(row)
                            csvf.flush()
                            self.rows.append(row)
                            done += 1
                            left = (time.time() - t0) / done * (total - done)
                            print(f"[{done:>4}/{total}] {w.name} clients={c} rep={rep} {b}/{v}: "
                                  f"{row['tps']:.0f} tps"
                                  + (f", {row['lw_waits_per_txn']} LWLock waits/txn" if row.get("lw_waits_per_txn") is not None else "")
                                  + f"  (left: about {fmt_time(left)})", flush=True)
        finally:
            csvf.close()
            for srv in self.servers.values():
                srv.stop()
            shutil.rmtree(self.sockdir, ignore_errors=True)
            self.meta["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            self.meta["runs"] = len(self.rows)
            (self.out / "meta.json").write_text(json.dumps(self.meta, indent=2) + "\n")
            if self.rows:
                report(self.out)

    def init_workload(self, w, workdir):
        scale = self.args.scale or w.scale
        for b, srv in self.servers.items():
            print(f"flexbench: {b}: initialising {w.name}", flush=True)
            srv.psql(f"CREATE DATABASE {w.dbname}")
            if w.pgbench_init:
                init = w.pgbench_init.replace("{scale}", str(scale))
                sh(as_user([srv.bin("pgbench")] + srv.conn() + ["-i", "-q"] + shlex.split(init) + [w.dbname]),
                   srv.log)
            if w.init_sql:
                sql = w.init_sql.read_text().replace("{datadir}", str(srv.datadir))
                tmp = workdir / f"{b}-{w.name}.init.sql"
                tmp.write_text(sql)
                os.chmod(tmp, 0o644)
                srv.psql_file(tmp, w.dbname)
            for k, v in w.session.items():
                srv.psql(f"ALTER DATABASE {w.dbname} SET {k} = '{v}'")
            srv.psql(f"VACUUM ANALYZE", w.dbname)
            srv.psql("CHECKPOINT")
            script = workdir / f"{b}-{w.name}.sql"
            script.write_text(w.script.read_text().replace("{datadir}", str(srv.datadir)))
            os.chmod(script, 0o644)
            if b not in self.meta["settings"]:
                self.meta["settings"][b] = srv.nondefault_settings()

    def one_run(self, w, clients, rep, build, variant, workdir):
        a = self.args
        srv = self.servers[build]
        srv.set_variant(variant, self.meta["variants"][variant])
        key = f"{build}/{variant}"
        self.meta["settings"].setdefault(key, srv.nondefault_settings())
        if w.reset_sql:
            srv.psql(w.reset_sql, w.dbname)
            srv.psql("CHECKPOINT")
        scale = self.args.scale or w.scale
        jobs = str(min(clients, os.cpu_count() or 1))
        cmd = [srv.bin("pgbench")] + srv.conn() + ["-n", "-c", str(clients), "-j", jobs,
                                                   "-D", f"scale={scale}"]
        for k, v in w.vars.items():
            cmd += ["-D", f"{k}={v}"]
        cmd += w.pgbench_args + ["-f", str(workdir / f"{build}-{w.name}.sql")]
        if a.warmup > 0:
            sh(as_user(cmd + ["-T", str(a.warmup), w.dbname]), check=True)
        before = srv.lock_snapshot()
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        run_id = f"{w.name}-c{clients}-r{rep}-{build}-{variant}"
        p = subprocess.run(as_user(cmd + ["-P", "1", "-T", str(a.duration), w.dbname]),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        (self.out / "raw" / f"{run_id}.txt").write_text(f"$ {shlex.join(cmd)}\n{p.stdout}")
        if p.returncode != 0:
            raise BenchError(f"pgbench failed for {run_id} (exit {p.returncode}); see raw/{run_id}.txt")
        res = parse_pgbench(p.stdout)
        after = srv.lock_snapshot()
        lrow, ldetail = lock_delta(before, after, res["transactions"])
        if ldetail:
            (self.out / "raw" / f"{run_id}.locks.json").write_text(json.dumps(ldetail, indent=1) + "\n")
        row = {"run": run_id, "build": build, "variant": variant, "workload": w.name,
               "clients": clients, "rep": rep, "duration_s": a.duration, "started_at": started}
        row.update(res)
        row.update(lrow)
        return row


def fmt_time(s):
    s = int(s)
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


# --- reports -----------------------------------------------------------------------

def load_rows(out):
    with open(Path(out) / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["clients"] = int(r["clients"])
        r["tps"] = float(r["tps"])
    return rows


def medians(rows):
    """{workload: {(build, variant): {clients: (median, min, max, n)}}}"""
    acc = {}
    for r in rows:
        acc.setdefault(r["workload"], {}).setdefault((r["build"], r["variant"]), {}) \
           .setdefault(r["clients"], []).append(r["tps"])
    return {w: {cfg: {c: (statistics.median(v), min(v), max(v), len(v)) for c, v in per.items()}
                for cfg, per in cfgs.items()}
            for w, cfgs in acc.items()}


def counters_table(out, family):
    """Markdown table: for each workload, clients and build/variant, the
    median tps and the median of each counter of FAMILY per 1000
    transactions (from raw/*.locks.json and runs.csv)."""
    out = Path(out)
    runs = out / "runs.csv"
    if not runs.is_file():
        raise UsageError(f"{out} is not a run directory (no runs.csv)")
    points = {}
    names = []
    with runs.open() as f:
        for row in csv.DictReader(f):
            stem = f"{row['workload']}-c{row['clients']}-r{row['rep']}-{row['build']}-{row['variant']}"
            locks = out / "raw" / f"{stem}.locks.json"
            if not locks.is_file() or not row["transactions"]:
                continue
            counters = json.loads(locks.read_text()).get("counters", {})
            txn = int(row["transactions"])
            vals = {}
            for k, v in counters.items():
                fam, _, name = k.partition(".")
                if fam != family:
                    continue
                if name not in names:
                    names.append(name)
                vals[name] = v * 1000.0 / txn if txn else 0.0
            key = (row["workload"], int(row["clients"]), f"{row['build']}/{row['variant']}")
            points.setdefault(key, []).append((float(row["tps"] or 0), vals))
    if not names:
        raise UsageError(f"no counters of family {family!r} in {out}/raw")
    lines = [f"| workload | clients | build/variant | tps | " + " | ".join(f"{n} /1000 txn" for n in names) + " |",
             "|---|---:|---|---:|" + "---:|" * len(names)]
    for (w, c, bv) in sorted(points):
        pts = points[(w, c, bv)]
        tps = statistics.median(t for t, _ in pts)
        cells = [f"{statistics.median(v.get(n, 0.0) for _, v in pts):.1f}" for n in names]
        lines.append(f"| {w} | {c} | {bv} | {tps:.0f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(out):
    """summary.md and plots from runs.csv (and meta.json if there)."""
    out = Path(out)
    rows = load_rows(out)
    meta = {}
    if (out / "meta.json").is_file():
        meta = json.loads((out / "meta.json").read_text())
    med = medians(rows)
    m = meta.get("machine", {})
    lines = ["# flexbench results", ""]
    if m:
        lines += [f"Machine: {m.get('cores')} cores ({m.get('model')}), {m.get('memory_gib')} GiB, "
                  f"Linux {m.get('kernel')}."
                  + (" **Figures from a 2-core machine: they show overheads and small-scale behaviour, "
                     "not the many-core scaling of the original experiments.**" if m.get("cores", 99) <= 2 else ""),
                  ""]
    if meta.get("builds"):
        lines += ["Builds: " + "; ".join(f"{b}: {i['version']}" for b, i in meta["builds"].items()), ""]
    if meta.get("matrix"):
        mx = meta["matrix"]
        lines += [f"Matrix: preset {meta.get('preset')}, {mx['reps']} repetitions of {mx['duration_s']} s "
                  f"(after {mx['warmup_s']} s warm-up), interleaved; tps is the median; ratio is to "
                  f"vanilla/stock (or, without vanilla, the build's stock) at the same client count.", ""]
    plots = []
    for w in sorted(med):
        # ratios to vanilla, or to the first build's stock run without one;
        # the base comes first, then the other builds and variants
        cfgs = sorted(med[w], key=lambda c: (c[0] != "vanilla", c[1] != "stock", c))
        base_cfg = cfgs[0] if cfgs[0][1] == "stock" else None
        base = med[w].get(base_cfg) if base_cfg else None
        info = meta.get("workloads", {}).get(w, {})
        lines += [f"## {w}", ""]
        if info:
            lines += [f"{info.get('description', '')} (seed {info.get('seed', '-')})", ""]
        head = ["clients"]
        for cfg in cfgs:
            head.append(f"{cfg[0]}/{cfg[1]}")
            if base and cfg != base_cfg:
                head.append("ratio")
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---:|" * len(head))
        for c in sorted({c for cfg in cfgs for c in med[w][cfg]}):
            cells = [str(c)]
            for cfg in cfgs:
                v = med[w][cfg].get(c)
                cells.append(f"{v[0]:.0f}" if v else "-")
                if base and cfg != base_cfg:
                    b = base.get(c)
                    cells.append(f"{v[0] / b[0]:.3f}" if v and b and b[0] > 0 else "-")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        plots += plot_workload(out, w, med[w], cfgs)
    (out / "summary.md").write_text("\n".join(lines))
    return plots


def plot_workload(out, w, per_cfg, cfgs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for cfg in cfgs:
        pts = sorted(per_cfg[cfg].items())
        xs = [c for c, _ in pts]
        ys = [v[0] for _, v in pts]
        lo = [v[0] - v[1] for _, v in pts]
        hi = [v[2] - v[0] for _, v in pts]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=f"{cfg[0]}/{cfg[1]}")
    xs_all = sorted({c for cfg in cfgs for c in per_cfg[cfg]})
    if len(xs_all) > 1 and xs_all[-1] / max(xs_all[0], 1) >= 8:
        ax.set_xscale("log", base=2)
    ax.set_xticks(xs_all)
    ax.set_xticklabels([str(x) for x in xs_all])
    ax.set_xlabel("clients")
    ax.set_ylabel("tps (median, min-max)")
    ax.set_title(w)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    (out / "plots").mkdir(exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / "plots" / f"{w}.{ext}"
        fig.savefig(p)
        paths.append(p)
    plt.close(fig)
    return paths


# --- command line --------------------------------------------------------------------

def positive_ints(text, what):
    vals = []
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        if not item.isdigit() or int(item) <= 0:
            raise UsageError(f"{what} must be positive integers, got {item!r}")
        vals.append(int(item))
    if not vals:
        raise UsageError(f"{what}: none given")
    return vals


def names(text):
    return [x for x in re.split(r"[,\s]+", text.strip()) if x]


def resolve(args):
    """Fill the run options from the preset, then check everything before
    anything starts."""
    preset = {}
    if args.preset:
        path = PRESETS / f"{args.preset}.conf"
        if not path.is_file():
            raise UsageError(f"unknown preset {args.preset!r} (known: {', '.join(list_presets())})")
        preset = parse_conf(path)

    def pick(opt, key, default):
        v = getattr(args, opt)
        return v if v is not None else preset.get(key, default)

    args.workloads = names(pick("workloads", "workloads", ""))
    if not args.workloads:
        raise UsageError("no workloads given (--workloads or --preset)")
    for w in args.workloads:
        Workload(w)
    args.clients = positive_ints(str(pick("clients", "clients", "1")), "clients")
    args.reps = positive_ints(str(pick("reps", "reps", "3")), "reps")[0]
    args.duration = positive_ints(str(pick("duration", "duration", "10")), "duration")[0]
    warm = str(pick("warmup", "warmup", "0"))
    if not warm.isdigit():
        raise UsageError(f"warmup must be a whole number of seconds, got {warm!r}")
    args.warmup = int(warm)
    scale = pick("scale", "scale", None)
    args.scale = positive_ints(str(scale), "scale")[0] if scale is not None else None
    args.builds = names(pick("builds", "builds", "vanilla patched"))
    for b in args.builds:
        if b not in KNOWN_BUILDS:
            raise UsageError(f"unknown build {b!r} (known: {', '.join(KNOWN_BUILDS)})")
        if not (BUILD / "install" / b / "bin" / "pgbench").is_file():
            raise UsageError(f"build {b!r} is not built ({BUILD / 'install' / b}): run 'make {b}' first")
    variants = pick("variants", "variants", None)
    if variants is None or variants == "all":
        args.variants = ["stock"] + sorted(p.stem for p in VARIANTS.glob("*.conf") if p.stem != "stock")
    else:
        args.variants = names(variants)
    for v in args.variants:
        variant_settings(v)
    if args.out is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        args.out = str(BENCH / "results" / f"{stamp}-{args.preset or 'custom'}")
    if Path(args.out).exists():
        raise UsageError(f"output directory {args.out} exists; name a new one with --out")
    return args


LW_FIELDS = ["workers", "shared_percent", "rep", "algorithm", "acquisitions",
             "acquisitions_per_sec", "ns_per_acquisition", "cas_retries", "backouts",
             "sleeps", "started_at"]


def lwlock_bench(args):
    """flexlock_bench_lwlock() on the patched build: for each worker count
    and shared percentage, every repetition runs both algorithms, in
    alternating order; medians and the fetch_add/exchange ratio."""
    workers = positive_ints(args.workers or "1,2,4,8,16", "--workers")
    shared = []
    for x in names(args.shared or "100,95"):
        if not x.isdigit() or int(x) > 100:
            raise UsageError(f"--shared: {x!r} is not a percentage from 0 to 100")
        shared.append(int(x))
    reps = positive_ints(args.reps or "3", "--reps")[0]
    seconds = float(args.seconds or 3)
    if not 0 < seconds <= 600:
        raise UsageError("--seconds must be in (0, 600]")
    build = args.build or "patched"
    if build not in KNOWN_BUILDS or build == "vanilla":
        raise UsageError(f"--build must be patched or cassert, not {build!r}")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or BENCH / "results" / f"lwlock-{stamp}")
    if out.exists():
        raise UsageError(f"{out} exists")
    out.mkdir(parents=True)
    log = out / "driver.log"
    work = Path(tempfile.mkdtemp(prefix="flexbench-lw-", dir=BUILD / "bench" if (BUILD / "bench").is_dir() else None))
    sock = Path(tempfile.mkdtemp(prefix="flexbench-lw-", dir="/tmp"))
    if run_user():
        for d in (work, sock, out):
            shutil.chown(d, run_user())
    settings = base_settings(8)
    settings["max_worker_processes"] = str(max(workers) + 8)
    srv = Server(build, work, sock, settings, log)
    rows = []
    try:
        srv.initdb()
        srv.start()
        srv.setup_flexlock()
        if not srv.has_flexlock:
            raise BenchError(f"{build}: the flexlock extension is not available")
        total = len(workers) * len(shared) * reps * 2
        n = 0
        for w in workers:
            for pct in shared:
                for rep in range(1, reps + 1):
                    algs = ["exchange", "fetch_add"] if rep % 2 else ["fetch_add", "exchange"]
                    for alg in algs:
                        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
                        r = srv.psql("SELECT shared_algorithm, acquisitions, acquisitions_per_sec, "
                                     "ns_per_acquisition, cas_retries, backouts, sleeps "
                                     f"FROM flexlock_bench_lwlock({w}, {seconds}, {pct}, '{alg}')")
                        f = r.split("|")
                        row = dict(zip(LW_FIELDS, [w, pct, rep, f[0], int(f[1]), float(f[2]), float(f[3]),
                                                   int(f[4]), int(f[5]), int(f[6]), started]))
                        rows.append(row)
                        n += 1
                        print(f"[{n:4}/{total}] workers={w} shared={pct}% rep={rep} {alg}: "
                              f"{row['acquisitions_per_sec']:.0f}/s, {row['ns_per_acquisition']:.0f} ns, "
                              f"retries {row['cas_retries']}, back-outs {row['backouts']}, sleeps {row['sleeps']}",
                              flush=True)
        settings_used = srv.nondefault_settings()
        version = srv.version()
    finally:
        srv.stop()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(sock, ignore_errors=True)
    with open(out / "runs.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=LW_FIELDS)
        wr.writeheader()
        wr.writerows(rows)
    meta = {"started": rows[0]["started_at"] if rows else None, "machine": machine_facts(),
            "build": build, "version": version, "settings": settings_used,
            "matrix": {"workers": workers, "shared_percent": shared, "reps": reps, "seconds": seconds},
            "series": series_info()}
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    med = lambda key, w, pct, alg: statistics.median(
        r[key] for r in rows if r["workers"] == w and r["shared_percent"] == pct and r["algorithm"] == alg)
    mf = meta["machine"]
    lines = ["# LWLock micro-benchmark: compare-exchange vs fetch-add", "",
             f"Machine: {mf['cores']} cores ({mf['model']}), {mf['memory_gib']} GiB, {mf['system']} {mf['kernel']}. "
             f"Build: {build} ({version}).", "",
             f"flexlock_bench_lwlock(workers, {seconds:g}, shared_percent, algorithm): background workers take "
             "and release one LWLock of their own in a loop (the rest of the mix exclusive). "
             f"{reps} repetitions, both algorithms in each, in alternating order; medians. "
             "ratio = fetch_add / exchange acquisitions per second; ns = worker time per acquisition.", ""]
    for pct in shared:
        lines += [f"## {pct}% shared", "",
                  "| workers | exchange acq/s | fetch_add acq/s | ratio | exchange ns | fetch_add ns "
                  "| exchange CAS retries | fetch_add back-outs | exchange sleeps | fetch_add sleeps |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for w in workers:
            ex, fa = med("acquisitions_per_sec", w, pct, "exchange"), med("acquisitions_per_sec", w, pct, "fetch_add")
            lines.append(f"| {w} | {ex:,.0f} | {fa:,.0f} | {fa / ex if ex else float('nan'):.3f} "
                         f"| {med('ns_per_acquisition', w, pct, 'exchange'):.0f} "
                         f"| {med('ns_per_acquisition', w, pct, 'fetch_add'):.0f} "
                         f"| {med('cas_retries', w, pct, 'exchange'):,.0f} "
                         f"| {med('backouts', w, pct, 'fetch_add'):,.0f} "
                         f"| {med('sleeps', w, pct, 'exchange'):,.0f} "
                         f"| {med('sleeps', w, pct, 'fetch_add'):,.0f} |")
        lines.append("")
    (out / "summary.md").write_text("\n".join(lines))
    print()
    print((out / "summary.md").read_text())
    print(f"flexbench: results in {out}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="flexbench", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a matrix")
    r.add_argument("--preset", help="presets/NAME.conf: " + ", ".join(list_presets()))
    r.add_argument("--workloads", help="comma or space separated workload names")
    r.add_argument("--clients", help="client counts, e.g. 1,2,4,8")
    r.add_argument("--reps", help="repetitions per point")
    r.add_argument("--duration", help="seconds per run")
    r.add_argument("--warmup", help="seconds of unmeasured pgbench before each run")
    r.add_argument("--scale", help="pgbench scale for workloads initialised by pgbench -i")
    r.add_argument("--builds", help="builds to compare (default: vanilla patched)")
    r.add_argument("--variants", help="variants/*.conf names for patched builds (default: all)")
    r.add_argument("--out", help="run directory to create (must not exist)")
    sub.add_parser("list", help="list workloads and presets")
    p = sub.add_parser("parse", help="parse a saved pgbench output")
    p.add_argument("file")
    rp = sub.add_parser("report", help="rewrite summary.md and plots of a run directory")
    rp.add_argument("dir")
    cp = sub.add_parser("counters", help="a counter family per point of a run directory, per 1000 transactions")
    cp.add_argument("dir")
    cp.add_argument("family", help="flexlock_counters family, e.g. walflush or groupclear")
    lw = sub.add_parser("lwlock", help="LWLock micro-benchmark: compare-exchange vs fetch-add")
    lw.add_argument("--workers", help="worker counts, e.g. 1,2,4,8,16")
    lw.add_argument("--shared", help="shared percentages, e.g. 100,95 (the rest exclusive)")
    lw.add_argument("--seconds", help="seconds per run (default 3)")
    lw.add_argument("--reps", help="repetitions (default 3)")
    lw.add_argument("--build", help="patched (default) or cassert")
    lw.add_argument("--out", help="run directory to create (must not exist)")
    args = ap.parse_args(argv)

    try:
        if args.cmd == "list":
            for w in list_workloads():
                wl = Workload(w)
                print(f"{w:16} seed {wl.seed or '-':4} {wl.description}")
            print("presets: " + ", ".join(list_presets()))
            return 0
        if args.cmd == "parse":
            print(json.dumps(parse_pgbench(Path(args.file).read_text())))
            return 0
        if args.cmd == "report":
            for p in report(args.dir):
                print(p)
            return 0
        if args.cmd == "counters":
            print(counters_table(args.dir, args.family))
            return 0
        if args.cmd == "lwlock":
            return lwlock_bench(args)
        args = resolve(args)
    except UsageError as e:
        print(f"flexbench: {e}", file=sys.stderr)
        print("usage: flexbench.py run [--preset NAME] [--workloads W,...] [--clients N,...] [--reps N] "
              "[--duration S] [--builds B,...] [--variants V,...] [--out DIR]", file=sys.stderr)
        return 2
    except BenchError as e:
        print(f"flexbench: {e}", file=sys.stderr)
        return 1

    matrix = Matrix(args)

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    # SIGINT too: a driver started in the background of a non-interactive
    # shell inherits SIGINT ignored, and Python then installs no handler.
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        matrix.run()
    except KeyboardInterrupt:
        print(f"\nflexbench: interrupted; servers stopped; {len(matrix.rows)} runs kept in {matrix.out}",
              file=sys.stderr)
        return 130
    except (BenchError, UsageError) as e:
        print(f"flexbench: {e}", file=sys.stderr)
        print(f"flexbench: {len(matrix.rows)} runs kept in {matrix.out}; log: {matrix.out / 'driver.log'}",
              file=sys.stderr)
        return 1
    print()
    print((matrix.out / "summary.md").read_text())
    print(f"flexbench: results in {matrix.out} (runs.csv, meta.json, summary.md); plots:")
    for p in sorted((matrix.out / "plots").glob("*.png")):
        print(f"  {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
