"""The matrix: build x variant x workload x clients x repetition.

For each workload and client count, every repetition runs each build/variant
once in turn (A B A B ...), so drift of the machine hits all of them, and
runs of the same repetition are natural pairs (stats.py).  One server per
build runs for the whole matrix; a variant switch is ALTER SYSTEM plus a
reload, or a restart when a setting needs one.  Each workload has its own
database, initialised once per server and reused (reset_sql runs before every
run; init_sql and the scripts get {datadir}, init_sql also {scale}).  A
workload of several weighted scripts runs them all in one pgbench (-f
FILE@WEIGHT each); if it names its new-order script, runs.csv has new orders
per minute (nopm) beside tps.  Per run, beside tps: the machine's CPU time by state over the measured
interval (/proc/stat), latency percentiles from pgbench's sampled
per-transaction log, and the lock statistics deltas on patched builds.

Profile runs (--profile-holds, on by default): after the timed repetitions
of a workload and client count, one untimed run per build/variant with
lock_stats_hold_sample = capmodel.SAMPLE, whose CPU demand, hold times, load
and lock caps go to profile.csv, holds.csv and caps.csv, for the caps and
predictions of summary.md (capmodel).  The timed runs never sample holds.
A build without hold sampling (vanilla) is profiled on a build of the run
that has it (patched, else cassert) with the same variant's settings; where
that profile already ran (patched/stock for vanilla/stock) it is reused.
"""

import csv
import datetime
import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from . import builds, capmodel, config, machine, machineprofile
from .config import BenchError, Workload, variant_settings, variant_workloads
from .machine import CPU_FIELDS, context_switches, cpu_delta, cpu_times, machine_facts
from .meta import series_info
from .pgbench import LATENCY_FIELDS, latency_percentiles, nopm, parse_pgbench, pgbench_failure, sampling_rate
from .report import report
from .servers import Server, as_user, base_settings, lock_delta, run_user, sh, socket_dir

# what the machine did besides the CPU shares, per second of the measured
# run (a simulator's machine profile needs them: issue 43): the hypervisor's
# steal share, context switches of the whole machine, WAL written
RUN_RATE_FIELDS = ["cpu_steal_pct", "ctxt_per_s", "wal_bytes_per_s"]

CSV_FIELDS = [
    "run", "build", "variant", "workload", "clients", "rep", "tps",
    "latency_avg_ms", "latency_stddev_ms", "transactions", "failed",
    "duration_s", "lw_acquires_per_txn", "lw_waits", "lw_waits_per_txn",
    "lw_wait_ms", "top_waits", "started_at",
] + LATENCY_FIELDS + CPU_FIELDS + ["nopm"] + RUN_RATE_FIELDS

# profile.csv: one row per point (workload, clients, build/variant) and the
# profile run that stands for it; holds.csv and caps.csv: per profile run
# and tranche (capmodel.HOLDS_FIELDS, capmodel.CAPS_FIELDS)
PROFILE_FIELDS = ["workload", "clients", "build", "variant", "profile", "profile_build", "profile_variant",
                  "hold_sample", "duration_s", "tps", "transactions", "busy_cpu_s", "cpu_us_per_txn",
                  "started_at"]
PROFILE_KEY = ["profile", "workload", "clients", "profile_build", "profile_variant"]


def profile_seconds(profiles, duration, warmup):
    """What the estimate assumes per profile run: its seconds and warm-up
    plus about 1.5 s of reloads, reset, connection and statistics."""
    return profiles * (duration + warmup + 1.5)


def fmt_time(s):
    s = int(s)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


def estimate_seconds(runs, duration, warmup):
    """What the progress line and the estimate before starting assume per
    run: the measured and warm-up seconds plus about 1.5 s of reset,
    connection and statistics."""
    return runs * (duration + warmup + 1.5)


def workload_meta(w):
    """meta.json's entry for a workload: its scripts and weights only where
    it has several."""
    m = {"description": w.description, "seed": w.seed}
    if len(w.scripts) > 1 or w.scripts[0][1] is not None:
        m["scripts"] = " ".join(f"{path.name}@{weight}" for path, weight in w.scripts)
        if w.nopm_script:
            m["nopm_script"] = w.nopm_script
    return m


def load_workload(srv, w, scale, workdir):
    """A workload's database on a server: created, loaded (pgbench -i,
    init_sql), its session settings, vacuumed and analyzed, checkpointed."""
    srv.psql(f"CREATE DATABASE {w.dbname}")
    if w.pgbench_init:
        init = w.pgbench_init.replace("{scale}", str(scale))
        sh(as_user([srv.bin("pgbench")] + srv.conn() + ["-i", "-q"] + shlex.split(init) + [w.dbname]),
           srv.log)
    if w.init_sql:
        sql = w.init_sql.read_text().replace("{datadir}", str(srv.datadir)).replace("{scale}", str(scale))
        tmp = workdir / f"{srv.build}-{w.name}.init.sql"
        tmp.write_text(sql)
        os.chmod(tmp, 0o644)
        srv.psql_file(tmp, w.dbname)
    for k, v in w.session.items():
        srv.psql(f"ALTER DATABASE {w.dbname} SET {k} = '{v}'")
    srv.psql("VACUUM ANALYZE", w.dbname)
    srv.psql("CHECKPOINT")


class Matrix:
    def __init__(self, args):
        self.args = args
        self.out = Path(args.out)
        self.rows = []
        self.servers = {}
        self.meta = {}
        self.sockdir = None
        self.last_tps = {}
        self.holds_ok = {}
        self.profiles = {}
        self.profile_writers = None

    def configs(self, workload=None):
        """(build, variant) pairs: a build without the series (vanilla, or
        a user's build on it) only runs stock; a variant runs only on the
        workloads it names (flexlock_test.bench_workloads)."""
        out = []
        for b in self.args.builds:
            series = builds.has_series(b)
            for v in self.args.variants:
                if not series and v != "stock":
                    continue
                only = variant_workloads(v)
                if workload and v != "stock" and only is not None and workload not in only:
                    continue
                out.append((b, v))
        return out

    def profile_build(self, build):
        """The build a point of `build` is profiled on: itself if it samples
        holds, else patched, else cassert if the run has it; None without,
        and for a build of the user's that does not sample holds."""
        if self.holds_ok.get(build):
            return build
        if build not in config.KNOWN_BUILDS:
            # a build of the user's carries code ours lack: no stand-in
            return None
        return next((b for b in ("patched", "cassert") if self.holds_ok.get(b)), None)

    def profile_count(self, workloads):
        """Profile runs of a matrix, for the estimate: one per point, less
        vanilla/stock (a build without the series) where patched/stock or
        cassert/stock stands for it."""
        if not getattr(self.args, "profile_holds", False):
            return 0
        n = 0
        for w in workloads:
            cfgs = self.configs(w.name)
            n += sum(1 for b, v in cfgs
                     if not (not builds.has_series(b) and any(builds.has_series(c[0]) for c in cfgs)))
        return n * len(self.args.clients)

    def run(self):
        a = self.args
        workloads = [Workload(w) for w in a.workloads]
        total = sum(len(self.configs(w.name)) for w in workloads) * len(a.clients) * a.reps
        nprof = self.profile_count(workloads)

        self.out.mkdir(parents=True)
        (self.out / "raw").mkdir()
        (self.out / "plots").mkdir()
        log = self.out / "driver.log"
        workdir = config.BUILD / "bench" / self.out.name
        if workdir.exists():
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        (workdir / "txlog").mkdir()
        self.sockdir = socket_dir("flexbench-")
        if run_user():
            for p in (config.BUILD / "bench", workdir, workdir / "txlog"):
                shutil.chown(p, run_user())

        self.meta = {
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_facts(),
            "preset": a.preset,
            "matrix": {"builds": a.builds, "variants": a.variants, "workloads": a.workloads,
                       "clients": a.clients, "reps": a.reps, "duration_s": a.duration,
                       "warmup_s": a.warmup, "scale": a.scale,
                       "profile_holds": bool(getattr(a, "profile_holds", False)),
                       "profile_duration_s": getattr(a, "profile_duration", None),
                       "hold_sample": capmodel.SAMPLE, "predict_cores": getattr(a, "predict_cores", [16, 64])},
            "variants": {v: variant_settings(v) for v in a.variants},
            "workloads": {w.name: workload_meta(w) for w in workloads},
            "builds": {},
            "settings": {},
            "measures": {"cpu": "/proc/stat, whole machine, delta over the measured pgbench run",
                         "latency": "pgbench -l --sampling-rate, about "
                                    "20000 sampled transactions per run; nearest-rank percentiles"},
        }
        self.meta.update(series_info())
        base = base_settings(max(a.clients))
        est = estimate_seconds(total, a.duration, a.warmup)
        pest = profile_seconds(nprof, a.profile_duration, a.warmup) if nprof else 0
        print(f"flexbench: {total} runs ({len(workloads)} workloads x {len(a.clients)} client counts x "
              f"{a.reps} reps x their builds/variants), about {fmt_time(est + pest)}"
              + (f" ({fmt_time(pest)} of it {nprof} profile runs of {a.profile_duration} s with "
                 f"lock_stats_hold_sample = {capmodel.SAMPLE}; --no-profile-holds leaves them out)" if nprof else "")
              + f"; output in {self.out}", flush=True)

        if getattr(a, "machine_profile", False):
            self.meta["machine_profile"] = self.profile_machine()
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
                self.holds_ok[b] = capmodel.has_hold_sampling(srv)
                self.meta["builds"][b] = {"version": srv.version(), "flexlock_stats": srv.has_flexlock,
                                          "hold_sampling": self.holds_ok[b]}
                own = builds.record(b)
                if own:
                    # a user's own build (make build): its base and patches
                    self.meta["builds"][b]["own"] = own
            if getattr(a, "profile_holds", False):
                self.open_profile_files()
                missing = [b for b in a.builds if self.profile_build(b) is None]
                if missing:
                    print(f"flexbench: no profile runs for {', '.join(missing)}: no build of the run samples "
                          "hold times (add patched to --builds)", flush=True)
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
                                  + (f", {row['nopm']:.0f} NOPM" if row.get("nopm") is not None else "")
                                  + (f", p95 {row['latency_p95_ms']} ms" if row.get("latency_p95_ms") is not None else "")
                                  + (f", idle {row['cpu_idle_pct']}%" if row.get("cpu_idle_pct") is not None else "")
                                  + (f", {row['lw_waits_per_txn']} LWLock waits/txn" if row.get("lw_waits_per_txn") is not None else "")
                                  + f"  (left: about {fmt_time(left)})", flush=True)
                    if getattr(a, "profile_holds", False):
                        for (b, v) in self.configs(w.name):
                            self.profile_point(w, c, b, v, workdir)
        finally:
            csvf.close()
            if self.profile_writers:
                for f, _ in self.profile_writers.values():
                    f.close()
            for srv in self.servers.values():
                srv.stop()
            shutil.rmtree(self.sockdir, ignore_errors=True)
            self.meta["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            self.meta["runs"] = len(self.rows)
            (self.out / "meta.json").write_text(json.dumps(self.meta, indent=2) + "\n")
            if self.rows:
                report(self.out)

    def profile_machine(self):
        """machine-profile.json of the run directory (machineprofile), before
        any server starts; a failure is reported and the run goes on."""
        try:
            prof = machineprofile.measure(self.out, reps=5, fsync_secs=1)
        except (BenchError, config.UsageError, OSError, subprocess.SubprocessError) as e:
            print(f"flexbench: no machine profile: {e}", flush=True)
            return {"error": str(e)}
        line = machineprofile.summary_line(prof)
        print(f"flexbench: machine profile: {line} (machine-profile.json)", flush=True)
        return {"file": "machine-profile.json", "summary": line}

    def init_workload(self, w, workdir):
        scale = self.args.scale or w.scale
        for b, srv in self.servers.items():
            print(f"flexbench: {b}: initialising {w.name}", flush=True)
            load_workload(srv, w, scale, workdir)
            self.write_scripts(w, b, srv, workdir)
            if b not in self.meta["settings"]:
                self.meta["settings"][b] = srv.nondefault_settings()

    @staticmethod
    def script_paths(w, build, workdir):
        """[(path, weight)] where a build's copies of the workload's scripts
        are: BUILD-NAME.sql for one script (as always), else
        BUILD-NAME/FILE, keeping each file's name, as pgbench reports it."""
        if len(w.scripts) == 1 and w.scripts[0][1] is None:
            return [(workdir / f"{build}-{w.name}.sql", None)]
        return [(workdir / f"{build}-{w.name}" / src.name, weight) for src, weight in w.scripts]

    @staticmethod
    def write_scripts(w, build, srv, workdir):
        """The workload's scripts with {datadir} filled in, readable by the
        servers' user."""
        for (src, _), (dst, _) in zip(w.scripts, Matrix.script_paths(w, build, workdir)):
            if dst.parent != workdir:
                dst.parent.mkdir(exist_ok=True)
                os.chmod(dst.parent, 0o755)
            dst.write_text(src.read_text().replace("{datadir}", str(srv.datadir)))
            os.chmod(dst, 0o644)

    @staticmethod
    def script_args(w, build, workdir):
        """pgbench's -f arguments: -f FILE, or -f FILE@WEIGHT for each of
        several scripts."""
        args = []
        for path, weight in Matrix.script_paths(w, build, workdir):
            args += ["-f", str(path) if weight is None else f"{path}@{weight}"]
        return args

    def expected_tps(self, w, clients):
        """For the latency log's sampling rate: the last tps at this point,
        else at the nearest client count of the workload, scaled."""
        if (w, clients) in self.last_tps:
            return self.last_tps[(w, clients)]
        near = [(abs(c - clients), c, t) for (wl, c), t in self.last_tps.items() if wl == w]
        if near:
            _, c, t = min(near)
            return t * max(1.0, clients / c)
        return None

    def pgbench_cmd(self, w, clients, build, workdir):
        """pgbench's command for a run of w at `clients` on a build's server,
        without -T and the database."""
        srv = self.servers[build]
        scale = self.args.scale or w.scale
        jobs = str(min(clients, machine.cores()))
        cmd = [srv.bin("pgbench")] + srv.conn() + ["-n", "-c", str(clients), "-j", jobs,
                                                   "-D", f"scale={scale}"]
        for k, v in w.vars.items():
            cmd += ["-D", f"{k}={v}"]
        return cmd + w.pgbench_args + self.script_args(w, build, workdir)

    def prepare(self, w, build, variant):
        """The build's server on the variant, the workload reset."""
        srv = self.servers[build]
        srv.set_variant(variant, self.meta["variants"][variant])
        self.meta["settings"].setdefault(f"{build}/{variant}", srv.nondefault_settings())
        if w.reset_sql:
            srv.psql(w.reset_sql, w.dbname)
            srv.psql("CHECKPOINT")
        return srv

    def open_profile_files(self):
        self.profile_writers = {}
        for name, fields in (("profile", PROFILE_FIELDS),
                             ("holds", PROFILE_KEY + capmodel.HOLDS_FIELDS),
                             ("caps", PROFILE_KEY + capmodel.CAPS_FIELDS)):
            f = open(self.out / f"{name}.csv", "w", newline="")
            wr = csv.DictWriter(f, fieldnames=fields)
            wr.writeheader()
            self.profile_writers[name] = (f, wr)

    def write_profile(self, name, rows):
        f, wr = self.profile_writers[name]
        wr.writerows({k: float(f"{v:.6g}") if isinstance(v, float) else v for k, v in r.items()} for r in rows)
        f.flush()

    def profile_point(self, w, clients, build, variant, workdir):
        """The profile run of a point (after its timed runs): hold sampling
        on, one run of --profile-duration s after the warm-up, off again;
        its CPU demand, holds, load and caps to profile.csv, holds.csv and
        caps.csv.  Points of a build without hold sampling are profiled on
        another build with the same variant, or share its profile."""
        a = self.args
        pb = self.profile_build(build)
        if pb is None:
            return
        pid = f"{w.name}-c{clients}-{pb}-{variant}-profile"
        prof = self.profiles.get(pid)
        if prof is None:
            t0 = time.time()
            srv = self.prepare(w, pb, variant)
            cmd = self.pgbench_cmd(w, clients, pb, workdir)
            if a.warmup > 0:
                sh(as_user(cmd + ["-T", str(a.warmup), w.dbname]), check=True)
            started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            capmodel.set_hold_sampling(srv, capmodel.SAMPLE)
            try:
                m = capmodel.measure(srv, cmd, w.dbname, a.profile_duration)
            finally:
                capmodel.set_hold_sampling(srv, 0)
            (self.out / "raw" / f"{pid}.txt").write_text(
                f"$ {shlex.join(cmd + ['-T', str(a.profile_duration), w.dbname])}\n{m['output']}")
            key = {"profile": pid, "workload": w.name, "clients": clients, "profile_build": pb,
                   "profile_variant": variant}
            self.write_profile("holds", [dict(key, **h) for h in m["holds"]])
            self.write_profile("caps", [dict(key, **c) for c in m["caps"]])
            prof = {"profile": pid, "profile_build": pb, "profile_variant": variant,
                    "hold_sample": capmodel.SAMPLE, "duration_s": a.profile_duration,
                    "tps": round(m["tps"], 1), "transactions": m["transactions"],
                    "busy_cpu_s": round(m["busy_cpu_s"], 3),
                    "cpu_us_per_txn": round(m["D"] * 1e6, 3) if m["D"] else None, "started_at": started}
            self.profiles[pid] = prof
            top = "; ".join(f"{c['tranche']} {c['own_cap_tps']:.0f}" for c in m["caps"][:3])
            print(f"       {w.name} clients={clients} {build}/{variant}: profile on {pb}/{variant}, "
                  f"{m['tps']:.0f} tps, CPU {prof['cpu_us_per_txn']} µs/txn, lowest caps: {top or 'none'} "
                  f"({time.time() - t0:.1f} s)",
                  flush=True)
        self.write_profile("profile", [dict(prof, workload=w.name, clients=clients, build=build,
                                            variant=variant)])

    def one_run(self, w, clients, rep, build, variant, workdir):
        a = self.args
        srv = self.prepare(w, build, variant)
        cmd = self.pgbench_cmd(w, clients, build, workdir)
        if a.warmup > 0:
            warm = sh(as_user(cmd + ["-T", str(a.warmup), w.dbname]), check=True)
            try:
                self.last_tps.setdefault((w.name, clients), parse_pgbench(warm)["tps"])
            except BenchError:
                pass
        run_id = f"{w.name}-c{clients}-r{rep}-{build}-{variant}"
        expected = self.expected_tps(w.name, clients)
        rate = sampling_rate(expected * a.duration) if expected else 0.01
        prefix = workdir / "txlog" / run_id
        logargs = ["-l", f"--log-prefix={prefix}"] + (["--sampling-rate", f"{rate:g}"] if rate < 1 else [])
        before = srv.lock_snapshot()
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        lsn0 = srv.wal_insert_lsn()
        cpu0, ctxt0, t0 = cpu_times(), context_switches(), time.monotonic()
        p = subprocess.run(as_user(cmd + logargs + ["-P", "1", "-T", str(a.duration), w.dbname]),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        cpu1, ctxt1, t1 = cpu_times(), context_switches(), time.monotonic()
        lsn1 = srv.wal_insert_lsn()
        (self.out / "raw" / f"{run_id}.txt").write_text(f"$ {shlex.join(cmd + logargs)}\n{p.stdout}")
        if p.returncode != 0:
            raise BenchError(f"pgbench failed for {run_id} (exit {p.returncode}: {pgbench_failure(p.stdout)}); "
                             f"see raw/{run_id}.txt")
        res = parse_pgbench(p.stdout)
        per_script = res.pop("scripts", {})
        if per_script:
            (self.out / "raw" / f"{run_id}.scripts.json").write_text(json.dumps(per_script, indent=1) + "\n")
        if w.nopm_script:
            if w.nopm_script not in per_script:
                raise BenchError(f"{run_id}: pgbench reported no transactions of {w.nopm_script}; "
                                 f"see raw/{run_id}.txt")
            res["nopm"] = nopm(per_script[w.nopm_script]["transactions"], a.duration)
        after = srv.lock_snapshot()
        lines = []
        for f in sorted(prefix.parent.glob(prefix.name + ".*")):
            lines += f.read_text().splitlines()
            f.unlink()
        self.last_tps[(w.name, clients)] = res["tps"]
        lrow, ldetail = lock_delta(before, after, res["transactions"])
        if ldetail:
            (self.out / "raw" / f"{run_id}.locks.json").write_text(json.dumps(ldetail, indent=1) + "\n")
        row = {"run": run_id, "build": build, "variant": variant, "workload": w.name,
               "clients": clients, "rep": rep, "duration_s": a.duration, "started_at": started}
        row.update(res)
        row.update(lrow)
        row.update(latency_percentiles(lines))
        row.update(cpu_delta(cpu0, cpu1))
        if ctxt0 is not None and ctxt1 is not None:
            row["ctxt_per_s"] = round((ctxt1 - ctxt0) / (t1 - t0))
        row["wal_bytes_per_s"] = round((lsn1 - lsn0) / (t1 - t0))
        return row
