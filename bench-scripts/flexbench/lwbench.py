"""The LWLock micro-benchmark: flexlock_bench_lwlock() on a patched build,
compare-exchange against fetch-add shared acquisition.

For each worker count and shared percentage, every repetition runs both
algorithms, in alternating order; summary.md gives medians and the
fetch_add/exchange ratio.
"""

import csv
import datetime
import json
import shutil
import statistics
import tempfile
from pathlib import Path

from . import config
from .config import BenchError, KNOWN_BUILDS, UsageError, names, positive_ints
from . import stats
from .machine import machine_facts
from .meta import series_info
from .report import write_readme
from .servers import Server, base_settings, prepare_run_user, run_user


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
    config.check_installed(build)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or config.BENCH / "results" / f"lwlock-{stamp}")
    if out.exists():
        raise UsageError(f"{out} exists")
    prepare_run_user()
    out.mkdir(parents=True)
    log = out / "driver.log"
    work = Path(tempfile.mkdtemp(prefix="flexbench-lw-", dir=config.BUILD / "bench" if (config.BUILD / "bench").is_dir() else None))
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
    write_summary(out, rows, meta)
    write_readme(out, meta)
    print()
    print((out / "summary.md").read_text())
    print(f"flexbench: results in {out}")
    return 0


NUMERIC = {"workers": int, "shared_percent": int, "rep": int, "acquisitions": int, "acquisitions_per_sec": float,
           "ns_per_acquisition": float, "cas_retries": int, "backouts": int, "sleeps": int}


def is_lwbench_dir(out):
    """A run directory of the micro-benchmark (its runs.csv has workers)."""
    path = Path(out) / "runs.csv"
    return path.is_file() and path.read_text().split("\n", 1)[0].startswith("workers,")


def report(out):
    """Rewrite summary.md of a micro-benchmark run from runs.csv and meta.json."""
    out = Path(out)
    with open(out / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k, conv in NUMERIC.items():
            r[k] = conv(r[k])
    meta = json.loads((out / "meta.json").read_text())
    write_summary(out, rows, meta)
    write_readme(out, meta)
    return [out / "summary.md"]


def write_summary(out, rows, meta):
    mx = meta["matrix"]
    workers, shared, reps, seconds = mx["workers"], mx["shared_percent"], mx["reps"], mx["seconds"]
    build, version = meta["build"], meta["version"]
    med = lambda key, w, pct, alg: statistics.median(
        r[key] for r in rows if r["workers"] == w and r["shared_percent"] == pct and r["algorithm"] == alg)
    mf = meta["machine"]
    lines = ["# LWLock micro-benchmark: compare-exchange vs fetch-add", "",
             f"Machine: {mf['cores']} cores ({mf['model']}), {mf['memory_gib']} GiB, {mf['system']} {mf['kernel']}. "
             f"Build: {build} ({version}).", "",
             f"flexlock_bench_lwlock(workers, {seconds:g}, shared_percent, algorithm): background workers take "
             "and release one LWLock of their own in a loop (the rest of the mix exclusive). "
             f"{reps} repetitions, both algorithms in each, in alternating order; medians. "
             "ratio: the median of the per-repetition ratios fetch_add / exchange of acquisitions per second "
             "(both algorithms run in each repetition, so each is a pair), with the order-statistic interval "
             "for that median and a verdict, as in the pgbench matrix (stats.py); "
             "ns = worker time per acquisition.", ""]
    for pct in shared:
        lines += [f"## {pct}% shared", "",
                  "| workers | exchange acq/s | fetch_add acq/s | ratio [interval] | verdict (coverage, pairs) "
                  "| exchange ns | fetch_add ns "
                  "| exchange CAS retries | fetch_add back-outs | exchange sleeps | fetch_add sleeps |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for w in workers:
            ex, fa = med("acquisitions_per_sec", w, pct, "exchange"), med("acquisitions_per_sec", w, pct, "fetch_add")
            per_rep = lambda alg: {r["rep"]: r["acquisitions_per_sec"] for r in rows
                                   if r["workers"] == w and r["shared_percent"] == pct and r["algorithm"] == alg}
            k = stats.compare(per_rep("fetch_add"), per_rep("exchange"))
            cmp = (f"{k['ratio']:.3f} [{k['low']:.3f}, {k['high']:.3f}] | {k['verdict']} "
                   f"({k['coverage']:.1%}, {k['n']})") if k else "- | -"
            lines.append(f"| {w} | {ex:,.0f} | {fa:,.0f} | {cmp} "
                         f"| {med('ns_per_acquisition', w, pct, 'exchange'):.0f} "
                         f"| {med('ns_per_acquisition', w, pct, 'fetch_add'):.0f} "
                         f"| {med('cas_retries', w, pct, 'exchange'):,.0f} "
                         f"| {med('backouts', w, pct, 'fetch_add'):,.0f} "
                         f"| {med('sleeps', w, pct, 'exchange'):,.0f} "
                         f"| {med('sleeps', w, pct, 'fetch_add'):,.0f} |")
        lines.append("")
    (out / "summary.md").write_text("\n".join(lines))
