"""Lock traces of workloads: flexbench.py trace (make trace).

For each (workload, variant) pair: a server of the patched build with the
variant's settings, the workload's data loaded as `run` loads it, then one
pgbench client with lock_stats_trace on for the workload's database (so the
harness's own sessions are not traced), enough transactions that about
--traced of them are traced (fewer where a transaction has so many events
that --max-events would be passed), and the traces of the client backend
collected, compressed, into

    OUT/WORKLOAD/VARIANT/traces/PID.trace.xz   the pgbench backend's trace
    OUT/WORKLOAD/VARIANT/meta.json             settings, workload, machine,
                                               pgbench's figures traced and
                                               untraced, what was collected
    OUT/WORKLOAD/VARIANT/summary.json          per-transaction figures
                                               (locktrace.summary)
    OUT/WORKLOAD/VARIANT/relations.tsv         oid, relfilenode, kind and name
                                               of the database's relations
    OUT/WORKLOAD/VARIANT/pgbench-*.txt         pgbench's output

and OUT/README.md listing the pairs.  Before the traced run a probe of 50
transactions traced at 1 in 1 measures the events per transaction, from
which the number of transactions is chosen, and an untraced run of the
same length gives the workload's speed without tracing.  One client, so
that no event waits for another process; the traces are checked
(locktrace.check) and a broken one fails the run.
"""

import datetime
import json
import lzma
import os
import re
import resource
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from . import builds, config, locktrace
from .config import BenchError, UsageError, Workload, variant_settings
from .machine import machine_facts
from .matrix import Matrix, load_workload
from .meta import series_info
from .pgbench import parse_pgbench, pgbench_failure
from .servers import Server, as_user, base_settings, run_user, sh, socket_dir

PROBE_TXNS = 50
SKIP_FIRST = 20         # traced transactions of a backend's first ones: cold caches


VARIANT_SPEC = re.compile(r"^([A-Za-z0-9_.-]+)\((.*)\)$")


def parse_pairs(text):
    """'w:v,w2:v2' -> [(w, v), ...]"""
    pairs = []
    for item in filter(None, (x.strip() for x in text.replace(" ", ",").split(","))):
        if ":" not in item:
            raise UsageError(f"--pairs: expected WORKLOAD:VARIANT, got {item!r}")
        w, v = item.split(":", 1)
        pairs.append((w, v))
    return pairs


def read_pairs_file(path):
    """Pairs from a file: 'WORKLOAD VARIANT' per line, '#' comments."""
    pairs = []
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise UsageError(f"--pairs-file: cannot read {path}: {e.strerror}")
    for lineno, line in enumerate(text.splitlines(), 1):
        f = line.split("#", 1)[0].split()
        if not f:
            continue
        if len(f) != 2:
            raise UsageError(f"{path}:{lineno}: expected 'WORKLOAD VARIANT', got {line.strip()!r}")
        pairs.append((f[0], f[1]))
    return pairs


def variant_spec(spec):
    """(label, settings) of a variant: a variants/ config by name, or
    LABEL(guc=value;guc=value) for settings no config has (the 16-core run's
    walinsert-2, say)."""
    m = VARIANT_SPEC.match(spec)
    if not m:
        return spec, variant_settings(spec)
    settings = config.parse_settings(m.group(2).replace(";", ","))
    if not settings:
        raise UsageError(f"variant {spec!r}: no settings between the parentheses")
    return m.group(1), settings


def check_names(args):
    """The workloads and variants a trace command names exist (make trace
    asks before it builds); the pairs, in --pairs-file, --pairs, then
    workload x variant order."""
    pairs = read_pairs_file(args.pairs_file) if args.pairs_file else []
    if args.pairs:
        pairs += parse_pairs(args.pairs)
    pairs += [(w, v) for w in config.names(args.workload or "") for v in config.names(args.variant or "")]
    for w, v in pairs:
        Workload(w)
        variant_spec(v)
    check_build(args.build)
    return pairs


def check_build(build):
    """The build traced: ours with the series, or a user's laid on one."""
    build = build or "patched"
    if not builds.is_known(build):
        raise builds.unknown_build(build, "--build")
    if not builds.has_series(build):
        raise UsageError(f"--build {build}: the {build} build has no lock_stats_trace (it lacks the series): "
                         f"trace patched, cassert or a build of yours laid on patched")
    return build


def resolve(args):
    """The (workload, variant) pairs and numbers of a trace command, checked
    before anything starts."""
    pairs = []
    if args.pairs_file:
        pairs += read_pairs_file(args.pairs_file)
    if args.pairs:
        pairs += parse_pairs(args.pairs)
    if args.workload or args.variant:
        if not (args.workload and args.variant):
            raise UsageError("give both --workload and --variant (comma lists: every workload with every "
                             "variant), or --pairs WORKLOAD:VARIANT,...")
        for w in config.names(args.workload):
            for v in config.names(args.variant):
                pairs.append((w, v))
    if not pairs:
        raise UsageError("nothing to trace: give --workload and --variant, or --pairs")
    for w, v in pairs:
        Workload(w)
        variant_spec(v)
    build = check_build(args.build)
    nums = {}
    for opt, default in (("traced", 1000), ("max_events", 250000), ("sample", 10), ("txns", None),
                         ("scale", None), ("warmup", 3)):
        v = getattr(args, opt, None)
        if v is None:
            nums[opt] = default
        else:
            if not str(v).isdigit() or (int(v) <= 0 and opt != "warmup"):
                raise UsageError(f"--{opt.replace('_', '-')} must be a positive integer, got {v!r}")
            nums[opt] = int(v)
    config.check_installed(build)               # after every option: a bad one is said first
    if args.out is None:
        # a build of the user's: its own directory, where make predict BUILD= looks
        args.out = str(config.RESULTS / (f"{datetime.date.today().isoformat()}-traces"
                                         + ("" if build in config.KNOWN_BUILDS else f"-{build}")))
    return pairs, build, nums


def pgbench_cmd(srv, w, scale, workdir, build):
    cmd = [srv.bin("pgbench")] + srv.conn() + ["-n", "-c", "1", "-j", "1", "-D", f"scale={scale}"]
    for k, v in w.vars.items():
        cmd += ["-D", f"{k}={v}"]
    return cmd + w.pgbench_args + Matrix.script_args(w, build, workdir)


def run_pgbench(cmd, dbname, txns, log):
    """pgbench -t txns; (parsed figures, output, CPU seconds of pgbench and
    its runuser)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(as_user(cmd + ["-t", str(txns), dbname]), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "a") as f:
        f.write(f"$ {shlex.join(cmd + ['-t', str(txns), dbname])}\n{p.stdout}\n")
    if p.returncode != 0:
        raise BenchError(f"pgbench failed (exit {p.returncode}: {pgbench_failure(p.stdout)})")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return parse_pgbench(p.stdout), p.stdout, cpu


class Tracer:
    def __init__(self, pairs, build, nums, out):
        self.pairs = pairs
        self.build = build
        self.nums = nums
        self.out = Path(out)
        self.index = []

    def trace_dir(self, srv):
        return srv.datadir / "pg_locktrace"

    def clear_traces(self, srv):
        d = self.trace_dir(srv)
        if d.is_dir():
            for f in d.glob("*.trace"):
                f.unlink()

    def collect(self, srv):
        """({pid: (path, transactions)} of the client backends' traces,
        [(path, backend type, transactions)] of the others')."""
        got, others = {}, []
        d = self.trace_dir(srv)
        for f in sorted(d.glob("*.trace")) if d.is_dir() else []:
            with open(f) as fh:
                head = fh.readline().rstrip("\n").split("\t")
                n = sum(1 for line in fh if line.startswith("begin\t"))
            if len(head) < 4 or head[3] != "client backend":
                others.append((f, head[3] if len(head) > 3 else "?", n))
                continue
            try:
                got[int(f.stem)] = (f, locktrace.read_trace(f))
            except locktrace.TraceError as e:
                raise BenchError(f"a trace breaks the format: {e}") from None
        return got, others

    def set_trace(self, srv, dbname, n):
        if n:
            srv.psql(f"ALTER DATABASE {dbname} SET lock_stats_trace = {n}")
        else:
            srv.psql(f"ALTER DATABASE {dbname} RESET lock_stats_trace")

    def run(self):
        self.out.mkdir(parents=True, exist_ok=True)
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        t0 = time.time()
        for i, (w, v) in enumerate(self.pairs, 1):
            print(f"flexbench: trace [{i}/{len(self.pairs)}] {w} / {v}", flush=True)
            self.index.append(self.one(Workload(w), v))
            print(f"       {self.index[-1]['line']} ({time.time() - t0:.0f} s so far)", flush=True)
        self.write_readme(started)

    def one(self, w, spec):
        n = self.nums
        variant, settings = variant_spec(spec)
        scale = n["scale"] or w.scale
        dest = self.out / w.name / variant
        if dest.exists():
            raise UsageError(f"{dest} exists; trace into another --out or remove it")
        dest.mkdir(parents=True)
        (dest / "traces").mkdir()
        log = dest / "driver.log"
        workdir = config.BUILD / "bench" / f"trace-{self.out.name}-{w.name}-{variant}"
        if workdir.exists():
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        sockdir = socket_dir("flexbench-trace-")
        if run_user():
            for p in (config.BUILD / "bench", workdir):
                shutil.chown(p, run_user())
        srv = Server(self.build, workdir, sockdir, base_settings(1), log)
        try:
            srv.initdb()
            srv.start()
            srv.setup_flexlock()
            if srv.psql("SELECT count(*) FROM pg_settings WHERE name = 'lock_stats_trace'") != "1":
                raise BenchError(f"the {self.build} build has no lock_stats_trace (patch 0019): rebuild it")
            load_workload(srv, w, scale, workdir)
            Matrix.write_scripts(w, self.build, srv, workdir)
            srv.set_variant(variant, settings)
            cmd = pgbench_cmd(srv, w, scale, workdir, self.build)
            if w.reset_sql:
                srv.psql(w.reset_sql, w.dbname)
                srv.psql("CHECKPOINT")
            # warm-up: caches, the table's first pages, untraced
            if n["warmup"]:
                sh(as_user(cmd + ["-T", str(n["warmup"]), w.dbname]), log)

            # probe: events per transaction, every transaction traced
            self.clear_traces(srv)
            self.set_trace(srv, w.dbname, 1)
            run_pgbench(cmd, w.dbname, PROBE_TXNS + SKIP_FIRST, log)
            self.set_trace(srv, w.dbname, 0)
            got, _ = self.collect(srv)
            probe = [x for _, txns in got.values() for x in txns if (x.xacts_before or 0) >= SKIP_FIRST]
            if not probe:
                raise BenchError(f"{w.name}/{variant}: the probe traced no transaction "
                                 f"(pg_locktrace of {srv.datadir} is empty)")
            per_txn = sum(len(x.events) + 2 for x in probe) / len(probe)
            traced = max(20, min(n["traced"], int(n["max_events"] / per_txn)))
            sample = n["sample"]
            txns = n["txns"] or (traced * sample + SKIP_FIRST * 2)

            # untraced, then traced, the same number of transactions
            if w.reset_sql:
                srv.psql(w.reset_sql, w.dbname)
                srv.psql("CHECKPOINT")
            plain, plain_out, plain_cpu = run_pgbench(cmd, w.dbname, txns, log)
            (dest / "pgbench-untraced.txt").write_text(plain_out)
            if w.reset_sql:
                srv.psql(w.reset_sql, w.dbname)
                srv.psql("CHECKPOINT")
            self.clear_traces(srv)
            self.set_trace(srv, w.dbname, sample)
            res, res_out, res_cpu = run_pgbench(cmd, w.dbname, txns, log)
            self.set_trace(srv, w.dbname, 0)
            (dest / "pgbench-traced.txt").write_text(res_out)
            counters = srv.psql("SELECT counter || '=' || value FROM flexlock_counters "
                                "WHERE family = 'trace'") if srv.has_flexlock else ""
            got, others = self.collect(srv)
            if len(got) != 1:
                raise BenchError(f"{w.name}/{variant}: expected the trace of one client backend, "
                                 f"found {len(got)} ({', '.join(str(p) for p in got)})")
            pid, (path, all_txns) = next(iter(got.items()))
            problems = locktrace.check(all_txns)
            if problems:
                raise BenchError(f"{w.name}/{variant}: the trace {path} breaks the format: "
                                 + "; ".join(problems[:5]))
            kept = [x for x in all_txns if (x.xacts_before or 0) >= SKIP_FIRST]
            with open(path, "rb") as src, lzma.open(dest / "traces" / f"{pid}.trace.xz", "wb",
                                                    preset=6) as dst:
                shutil.copyfileobj(src, dst)
            summ = locktrace.summary(kept)
            summ["cold_transactions_skipped"] = len(all_txns) - len(kept)
            (dest / "summary.json").write_text(json.dumps(summ, indent=1) + "\n")
            rel = srv.psql("SELECT c.oid, c.relfilenode, c.relkind, n.nspname || '.' || c.relname "
                           "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                           "WHERE c.relfilenode <> 0 ORDER BY c.oid", w.dbname)
            (dest / "relations.tsv").write_text("oid\trelfilenode\trelkind\trelation\n"
                                                + rel.replace("|", "\t") + "\n")
            dbs = srv.psql("SELECT oid, datname FROM pg_database ORDER BY oid")
            events = sum(len(x.events) for x in all_txns)
            over = None
            if plain["tps"] and res["tps"] and events:
                # the traced run's extra time per event traced: recording
                # on the way, formatting and writing at each end
                over = round((1e9 / res["tps"] - 1e9 / plain["tps"]) * res["transactions"] / events, 1)
            gaps = [b[1] - a[1] for x in kept for a, b in zip(x.events, x.events[1:])]
            meta = {
                "workload": w.name, "variant": variant, "build": self.build,
                # a build of the user's (make build): its base and patches
                "own": builds.record(self.build),
                "scale": scale, "workload_conf": {"description": w.description, "seed": w.seed,
                                                  "session": w.session, "vars": w.vars,
                                                  "pgbench_args": w.pgbench_args},
                "variant_settings": settings,
                "settings": srv.nondefault_settings(),
                "databases": dict(r.split("|", 1) for r in dbs.splitlines() if "|" in r),
                "pgbench": cmd_str(cmd, w.dbname, txns),
                "clients": 1,
                "transactions": txns,
                "lock_stats_trace": sample,
                "probe": {"transactions": len(probe), "events_per_txn": round(per_txn, 1)},
                "traced": {"transactions": len(all_txns), "kept": len(kept),
                           "skipped_cold": len(all_txns) - len(kept), "events": events,
                           "file": f"traces/{pid}.trace.xz", "pid": pid,
                           "bytes": path.stat().st_size,
                           "bytes_xz": (dest / "traces" / f"{pid}.trace.xz").stat().st_size,
                           "counters": dict(c.split("=", 1) for c in counters.splitlines() if "=" in c)},
                "other_traces": [{"file": f.name, "backend_type": bt, "transactions": k} for f, bt, k in others],
                "untraced_run": {"tps": plain["tps"], "latency_avg_ms": plain["latency_avg_ms"],
                                 "transactions": plain["transactions"], "pgbench_cpu_s": round(plain_cpu, 3)},
                "traced_run": {"tps": res["tps"], "latency_avg_ms": res["latency_avg_ms"],
                               "transactions": res["transactions"], "pgbench_cpu_s": round(res_cpu, 3)},
                "trace_overhead_ns_per_event": over,
                "min_gap_ns": min(gaps) if gaps else None,
                "machine": machine_facts(),
                "version": srv.version(),
                "collected": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            }
            meta.update(series_info())
            (dest / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
            line = (f"{len(kept)} transactions traced of {txns} ({events / max(1, len(all_txns)):.0f} events "
                    f"each), {summ.get('duration_us_mean')} us each; {plain['tps']:.0f} tps untraced, "
                    f"{res['tps']:.0f} traced; {meta['traced']['bytes_xz'] / 1e6:.2f} MB xz")
            return {"workload": w.name, "variant": variant, "dir": f"{w.name}/{variant}",
                    "kept": len(kept), "txns": txns, "sample": sample,
                    "events_per_txn": summ.get("events_per_txn"),
                    "duration_us": summ.get("duration_us_mean"),
                    "tps_untraced": plain["tps"], "tps_traced": res["tps"],
                    "bytes_xz": meta["traced"]["bytes_xz"], "line": line}
        finally:
            srv.stop()
            shutil.rmtree(sockdir, ignore_errors=True)
            shutil.rmtree(workdir, ignore_errors=True)

    def write_readme(self, started):
        rows = []
        readme = self.out / "README.md"
        old = {}
        if (self.out / "index.json").is_file():
            old = {(r["workload"], r["variant"]): r for r in json.loads((self.out / "index.json").read_text())}
        for r in self.index:
            old[(r["workload"], r["variant"])] = r
        allrows = sorted(old.values(), key=lambda r: (r["workload"], r["variant"]))
        (self.out / "index.json").write_text(json.dumps(allrows, indent=1) + "\n")
        total = sum(r["bytes_xz"] for r in allrows)
        rows.append("| workload | variant | traced | of | events/txn | us/txn traced | tps untraced | tps traced "
                    "| xz MB |")
        rows.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in allrows:
            rows.append(f"| {r['workload']} | {r['variant']} | {r['kept']} | {r['txns']} | {r['events_per_txn']} "
                        f"| {r['duration_us']} | {r['tps_untraced']:.0f} | {r['tps_traced']:.0f} "
                        f"| {r['bytes_xz'] / 1e6:.2f} |")
        text = [f"# Lock traces ({self.out.name})", "",
                "`flexbench.py trace` (`make trace`): one pgbench client on the patched build with "
                "`lock_stats_trace` on for the workload's database; each directory WORKLOAD/VARIANT has the "
                "client backend's trace (traces/PID.trace.xz, format: docs/lock-trace.md), meta.json "
                "(settings, pgbench's figures traced and untraced, machine, series), summary.json "
                "(per-transaction figures of the traced transactions after the first "
                f"{SKIP_FIRST} of the backend, whose caches were cold) and relations.tsv.", "",
                f"Last written {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')} "
                f"(this invocation started {started}); {len(allrows)} traces, {total / 1e6:.1f} MB "
                "compressed.", ""] + rows + [""]
        readme.write_text("\n".join(text))


def cmd_str(cmd, dbname, txns):
    return shlex.join([Path(cmd[0]).name] + cmd[1:] + ["-t", str(txns), dbname])


def trace_command(args):
    pairs, build, nums = resolve(args)
    tr = Tracer(pairs, build, nums, args.out)
    tr.run()
    print(f"flexbench: traces in {tr.out} (README.md)")
    return 0
