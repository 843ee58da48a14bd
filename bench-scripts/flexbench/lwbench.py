"""The LWLock micro-benchmark: flexlock_bench_lwlock() on a patched build,
shared acquisition by compare-exchange (stock), fetch-add (lwlock_shared_add)
and read-biased slots (lwlock_read_biased).

For each worker count and shared percentage, every repetition runs every
algorithm, in rotating order; summary.md gives medians, the ratio of each
algorithm to exchange and of readbiased to fetch_add, and each algorithm's
scaling from one worker.  With --writer-readers, the writer's price:
flexlock_bench_lwlock_writer() times exclusive acquisitions while N readers
run, for each algorithm.
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


ALGORITHMS = ("exchange", "fetch_add", "readbiased")

WRITER_FIELDS = ["readers", "rep", "algorithm", "shared_acquisitions", "shared_per_sec", "writes",
                 "avg_write_us", "max_write_us", "started_at"]

LW_FIELDS = ["workers", "shared_percent", "rep", "algorithm", "acquisitions",
             "acquisitions_per_sec", "ns_per_acquisition", "cas_retries", "backouts",
             "sleeps", "started_at"]


def lwlock_bench(args):
    """flexlock_bench_lwlock() on the patched build: for each worker count
    and shared percentage, every repetition runs every algorithm, in
    rotating order; medians and the ratios (see the module's docstring)."""
    workers = positive_ints(args.workers or "1,2,4,8,16", "--workers")
    shared = []
    for x in names(args.shared or "100,95"):
        if not x.isdigit() or int(x) > 100:
            raise UsageError(f"--shared: {x!r} is not a percentage from 0 to 100")
        shared.append(int(x))
    algorithms = names(args.algorithms or ",".join(ALGORITHMS))
    for a in algorithms:
        if a not in ALGORITHMS:
            raise UsageError(f"--algorithms: {a!r} is not one of {', '.join(ALGORITHMS)}")
    if "exchange" not in algorithms:
        raise UsageError("--algorithms must include exchange (the stock algorithm, the base of the ratios)")
    writer_readers = []
    for x in names(args.writer_readers or ""):
        if not x.isdigit():
            raise UsageError(f"--writer-readers: {x!r} is not a number of readers")
        writer_readers.append(int(x))
    reps = positive_ints(args.reps or "3", "--reps")[0]
    seconds = float(args.seconds or 3)
    if not 0 < seconds <= 600:
        raise UsageError("--seconds must be in (0, 600]")
    build = args.build or "patched"
    if build not in KNOWN_BUILDS or build == "vanilla":
        raise UsageError(f"--build must be patched or cassert, not {build!r}")
    config.check_installed(build)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out = Path(args.out or config.RESULTS / f"{stamp}-lwlock")
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
    settings["max_worker_processes"] = str(max(workers + [r + 1 for r in writer_readers]) + 8)
    srv = Server(build, work, sock, settings, log)
    rows = []
    wrows = []
    try:
        srv.initdb()
        srv.start()
        srv.setup_flexlock()
        if not srv.has_flexlock:
            raise BenchError(f"{build}: the flexlock extension is not available")
        total = (len(workers) * len(shared) + len(writer_readers)) * reps * len(algorithms)
        n = 0
        # every repetition runs every algorithm, starting with a different one
        rotated = lambda rep: algorithms[(rep - 1) % len(algorithms):] + algorithms[:(rep - 1) % len(algorithms)]

        def measure(fields, prefix, convs, sql):
            # one run: the row of fields, from prefix, the query's columns and the start time
            started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
            cols = srv.psql(sql).split("|")
            return dict(zip(fields, prefix + [conv(c) for conv, c in zip(convs, cols)] + [started]))
        for w in workers:
            for pct in shared:
                for rep in range(1, reps + 1):
                    for alg in rotated(rep):
                        row = measure(LW_FIELDS, [w, pct, rep], (str, int, float, float, int, int, int),
                                      "SELECT shared_algorithm, acquisitions, acquisitions_per_sec, "
                                      "ns_per_acquisition, cas_retries, backouts, sleeps "
                                      f"FROM flexlock_bench_lwlock({w}, {seconds}, {pct}, '{alg}')")
                        rows.append(row)
                        n += 1
                        print(f"[{n:4}/{total}] workers={w} shared={pct}% rep={rep} {alg}: "
                              f"{row['acquisitions_per_sec']:.0f}/s, {row['ns_per_acquisition']:.0f} ns, "
                              f"retries {row['cas_retries']}, back-outs {row['backouts']}, sleeps {row['sleeps']}",
                              flush=True)
        for readers in writer_readers:
            for rep in range(1, reps + 1):
                for alg in rotated(rep):
                    row = measure(WRITER_FIELDS, [readers, rep], (str, int, float, int, float, float),
                                  "SELECT shared_algorithm, shared_acquisitions, shared_per_sec, writes, "
                                  "avg_write_us, max_write_us "
                                  f"FROM flexlock_bench_lwlock_writer({readers}, {seconds}, '{alg}')")
                    wrows.append(row)
                    n += 1
                    print(f"[{n:4}/{total}] writer with {readers} readers rep={rep} {alg}: "
                          f"{row['writes']} writes, avg {row['avg_write_us']:.1f} us, max {row['max_write_us']:.0f} us; "
                          f"readers {row['shared_per_sec']:.0f}/s", flush=True)
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
    if wrows:
        with open(out / "writer.csv", "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=WRITER_FIELDS)
            wr.writeheader()
            wr.writerows(wrows)
    meta = {"started": rows[0]["started_at"] if rows else None, "machine": machine_facts(),
            "build": build, "version": version, "settings": settings_used,
            "matrix": {"workers": workers, "shared_percent": shared, "reps": reps, "seconds": seconds,
                       "algorithms": algorithms, "writer_readers": writer_readers},
            "series": series_info()}
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    write_summary(out, rows, meta, wrows)
    write_readme(out, meta)
    print()
    print((out / "summary.md").read_text())
    print(f"flexbench: results in {out}")
    return 0


WRITER_NUMERIC = {"readers": int, "rep": int, "shared_acquisitions": int, "shared_per_sec": float, "writes": int,
                  "avg_write_us": float, "max_write_us": float}

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
    wrows = []
    if (out / "writer.csv").is_file():
        with open(out / "writer.csv", newline="") as f:
            wrows = list(csv.DictReader(f))
        for r in wrows:
            for k, conv in WRITER_NUMERIC.items():
                r[k] = conv(r[k])
    write_summary(out, rows, meta, wrows)
    write_readme(out, meta)
    return [out / "summary.md"]


def write_summary(out, rows, meta, wrows=()):
    if meta["matrix"].get("algorithms", ["exchange", "fetch_add"]) != ["exchange", "fetch_add"]:
        return write_summary_n(out, rows, meta, wrows)
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


def write_summary_n(out, rows, meta, wrows):
    """summary.md for runs of any set of algorithms (exchange among them)."""
    mx = meta["matrix"]
    workers, shared, reps, seconds = mx["workers"], mx["shared_percent"], mx["reps"], mx["seconds"]
    algs = mx["algorithms"]
    build, version = meta["build"], meta["version"]
    sel = lambda w, pct, alg: [r for r in rows
                               if r["workers"] == w and r["shared_percent"] == pct and r["algorithm"] == alg]
    med = lambda key, w, pct, alg: statistics.median(r[key] for r in sel(w, pct, alg))
    per_rep = lambda w, pct, alg: {r["rep"]: r["acquisitions_per_sec"] for r in sel(w, pct, alg)}

    def cmp(a, b, w, pct):
        k = stats.compare(per_rep(w, pct, a), per_rep(w, pct, b))
        return (f"{k['ratio']:.3f} [{k['low']:.3f}, {k['high']:.3f}] {k['verdict']}" if k else "-")

    mf = meta["machine"]
    others = [a for a in algs if a != "exchange"]
    lines = [f"# LWLock micro-benchmark: {', '.join(algs)}", "",
             f"Machine: {mf['cores']} cores ({mf['model']}), {mf['memory_gib']} GiB, {mf['system']} {mf['kernel']}. "
             f"Build: {build} ({version}).", "",
             f"flexlock_bench_lwlock(workers, {seconds:g}, shared_percent, algorithm): background workers take "
             "and release one LWLock in a loop (the rest of the mix exclusive); exchange = stock "
             "compare-exchange, fetch_add = lwlock_shared_add, readbiased = the lock's tranche read-biased "
             "(lwlock_read_biased). "
             f"{reps} repetitions, every algorithm in each, in rotating order; medians of acquisitions per "
             "second. a/b: the median of the per-repetition ratios with the order-statistic interval for "
             "that median and a verdict (stats.py). scaling: the median at N workers over the median at "
             "the fewest workers, for the same algorithm.", ""]
    base_w = min(workers)
    for pct in shared:
        head = ["workers"] + [f"{a} acq/s" for a in algs] + [f"{a}/exchange" for a in others]
        if "readbiased" in algs and "fetch_add" in algs:
            head.append("readbiased/fetch_add")
        head += [f"{a} scaling" for a in algs] + [f"{a} sleeps" for a in algs]
        lines += [f"## {pct}% shared", "", "| " + " | ".join(head) + " |",
                  "|" + "---:|" * len(head)]
        for w in workers:
            cells = [str(w)] + [f"{med('acquisitions_per_sec', w, pct, a):,.0f}" for a in algs]
            cells += [cmp(a, "exchange", w, pct) for a in others]
            if "readbiased" in algs and "fetch_add" in algs:
                cells.append(cmp("readbiased", "fetch_add", w, pct))
            cells += [f"{med('acquisitions_per_sec', w, pct, a) / med('acquisitions_per_sec', base_w, pct, a):.2f}"
                      for a in algs]
            cells += [f"{med('sleeps', w, pct, a):,.0f}" for a in algs]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    if wrows:
        readers = sorted({r["readers"] for r in wrows})
        wmed = lambda key, n, alg: statistics.median(
            r[key] for r in wrows if r["readers"] == n and r["algorithm"] == alg)
        lines += ["## The writer's price", "",
                  f"flexlock_bench_lwlock_writer(readers, {seconds:g}, algorithm): N workers take the lock in "
                  "shared mode in a loop while one more takes it exclusively every 1 ms and times each "
                  "acquisition (from the call to the return of LWLockAcquire). Medians over the repetitions "
                  "of the mean and the longest exclusive acquisition, in microseconds, and of the readers' rate.", "",
                  "| readers | " + " | ".join(f"{a} avg us | {a} max us | {a} readers acq/s" for a in algs) + " |",
                  "|" + "---:|" * (1 + 3 * len(algs))]
        for n in readers:
            cells = [str(n)]
            for a in algs:
                cells += [f"{wmed('avg_write_us', n, a):.1f}", f"{wmed('max_write_us', n, a):,.0f}",
                          f"{wmed('shared_per_sec', n, a):,.0f}"]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    (out / "summary.md").write_text("\n".join(lines))
