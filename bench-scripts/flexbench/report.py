"""Reports of a run directory: summary.md, plots/, and the counters tables.

Everything here reads only the run directory (runs.csv, meta.json, raw/), so
`flexbench.py report DIR` rewrites the summary and plots of any run,
including runs made before a column existed (missing columns show as '-').
"""

import csv
import json
import statistics
from pathlib import Path

from .config import UsageError
from . import capmodel, stats

DEFAULT_PREDICT_CORES = [16, 64]

NUMERIC = {"clients": int, "rep": int, "tps": float, "transactions": int,
           "latency_p50_ms": float, "latency_p95_ms": float, "latency_p99_ms": float,
           "cpu_user_pct": float, "cpu_system_pct": float, "cpu_idle_pct": float, "cpu_iowait_pct": float,
           "cpu_steal_pct": float, "ctxt_per_s": float, "wal_bytes_per_s": float,
           "lw_waits_per_txn": float, "nopm": float}

# the counter family of each variant's GUC (flexlock_counters)
GUC_FAMILY = {"btree_leaf_exclusive_descent": "btree", "procarray_group_clear": "groupclear",
              "lwlock_shared_add": "sharedadd", "wal_flush_wait": "walflush", "wal_insert_locks": "walinsert",
              "wal_insert_reservation": "walreserve", "wal_buffer_init": "walbuffer",
              "lwlock_implementation": "lwspin", "lock_fastpath": "hwlock", "clock_sweep": "clocksweep",
              "relation_extend_pages": "extend"}


def load_rows(out):
    path = Path(out) / "runs.csv"
    if not path.is_file():
        raise UsageError(f"{out} is not a run directory (no runs.csv)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k, conv in NUMERIC.items():
            v = r.get(k)
            r[k] = conv(v) if v not in (None, "") else None
    return rows


def points(rows):
    """{workload: {(build, variant): {clients: {rep: row}}}}"""
    acc = {}
    for r in rows:
        acc.setdefault(r["workload"], {}).setdefault((r["build"], r["variant"]), {}) \
           .setdefault(r["clients"], {})[r["rep"]] = r
    return acc


def med(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def ordered(cfgs):
    """vanilla/stock first, then each build's stock, then its variants."""
    return sorted(cfgs, key=lambda c: (c[0] != "vanilla", c[0], c[1] != "stock", c[1]))


def comparisons(per_cfg):
    """{(cfg, clients): stats.compare(...)} for every configuration with a
    reference in the same workload."""
    out = {}
    for cfg, per in per_cfg.items():
        ref = stats.reference(cfg, per_cfg)
        if ref is None:
            continue
        for c, reps in per.items():
            refreps = per_cfg[ref].get(c)
            if refreps:
                cmp = stats.compare({r: row["tps"] for r, row in reps.items()},
                                    {r: row["tps"] for r, row in refreps.items()})
                if cmp:
                    out[(cfg, c)] = dict(cmp, ref=ref)
    return out


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def mb(v):
    return None if v is None else v / 1e6


def lock_details(out):
    """{run id: raw/RUN.locks.json} of a run directory."""
    d = {}
    for p in (Path(out) / "raw").glob("*.locks.json"):
        d[p.name[:-len(".locks.json")]] = json.loads(p.read_text())
    return d


def top_tranches(reps, details, n=3):
    """The tranches waited on longest over a point's runs: 'name waits/txn
    wait µs/txn p99 µs', from raw/*.locks.json (else runs.csv's top_waits).
    p99: the 99th percentile of the sleeps' duration, from the sleep-time
    histograms of all the point's runs together (left out where the build
    has none)."""
    waits, ms, hist, txns = {}, {}, {}, 0
    for row in reps.values():
        det = details.get(row["run"])
        if not det or not row.get("transactions"):
            continue
        txns += row["transactions"]
        for name, t in det.get("tranches", {}).items():
            waits[name] = waits.get(name, 0) + t["waits"]
            ms[name] = ms.get(name, 0.0) + t["wait_ms"]
        for name, buckets in det.get("wait_hist", {}).items():
            h = hist.setdefault(name, {})
            for b, c in buckets.items():
                h[int(b)] = h.get(int(b), 0) + c
    if not txns:
        tops = [row.get("top_waits") for row in reps.values() if row.get("top_waits")]
        return tops[0].replace(";", "; ") if tops else "-"
    top = sorted((x for x in ms if waits[x] > 0), key=lambda x: (-ms[x], -waits[x]))[:n]

    def p99(x):
        v = stats.hist_quantile_us(hist.get(x, {}), 0.99)
        if v is None:
            return ""
        return f" p99 {v:.3g} µs" if v < 1000 else f" p99 {v / 1000:.3g} ms"
    return "; ".join(f"{x} {waits[x] / txns:.3g}/txn {ms[x] * 1000 / txns:.3g} µs/txn{p99(x)}"
                     for x in top) or "none"


def load_profiles(out):
    """The profile runs of a run directory: ({(workload, clients, build,
    variant): profile.csv row}, {profile id: [caps.csv rows, lowest own
    cap first]}); both empty for a run without them (before 2026-11-25, or
    --no-profile-holds)."""
    out = Path(out)
    prof, caps = {}, {}
    if not (out / "profile.csv").is_file():
        return prof, caps
    with open(out / "profile.csv", newline="") as f:
        for r in csv.DictReader(f):
            for k in ("transactions", "clients", "hold_sample", "duration_s"):
                r[k] = int(r[k]) if r.get(k) else None
            for k in ("tps", "busy_cpu_s", "cpu_us_per_txn"):
                r[k] = float(r[k]) if r.get(k) else None
            prof[(r["workload"], r["clients"], r["build"], r["variant"])] = r
    if (out / "caps.csv").is_file():
        with open(out / "caps.csv", newline="") as f:
            for r in csv.DictReader(f):
                r["own_cap_tps"] = float(r["own_cap_tps"])
                caps.setdefault(r["profile"], []).append(r)
    for v in caps.values():
        v.sort(key=lambda c: c["own_cap_tps"])
    return prof, caps


def fmt_num(v):
    return "-" if v is None else f"{v:.3g}" if v < 100 else f"{v:.0f}"


def caps_table(w, cfgs, clients, prof, caps, cores):
    """The third table of a workload: per point its profile run's three
    lowest lock caps, CPU demand and CPU caps, and the predicted tps at
    each core count (capmodel); [] when no point of w has a profile."""
    if not any((w, c, b, v) in prof for c in clients for b, v in cfgs):
        return []
    lines = ["Lock caps and **predicted** throughput on more cores, from each point's profile run "
             "(capmodel; the model and its known errors: results/README.md). "
             "**Predictions, not measurements.**", "",
             "| clients | build/variant | profiled on | tps (profile) | three lowest lock caps, tps | CPU µs/txn | "
             + " | ".join(f"CPU cap {c} cores" for c in cores) + " | "
             + " | ".join(f"**predicted tps, {c} cores** (binds)" for c in cores) + " |",
             "|---:|---|---|---:|---|---:|" + "---:|" * (2 * len(cores))]
    for c in clients:
        for b, v in cfgs:
            p = prof.get((w, c, b, v))
            if p is None:
                continue
            cs = caps.get(p["profile"], [])
            D = p["cpu_us_per_txn"] / 1e6 if p.get("cpu_us_per_txn") else None
            pr = capmodel.predict(D, cs, cores)
            where = f"{p['profile_build']}/{p['profile_variant']}"
            lines.append(f"| {c} | {b}/{v} | {'same' if where == f'{b}/{v}' else where} | {fmt_num(p['tps'])} | "
                         + ("; ".join(f"{x['tranche']} {fmt_num(x['own_cap_tps'])}" for x in cs[:3]) or "none")
                         + f" | {fmt_num(p.get('cpu_us_per_txn'))} | "
                         + " | ".join(fmt_num(pr[k]["cpu_cap"]) for k in cores) + " | "
                         + " | ".join(f"{fmt_num(pr[k]['pred'])} ({pr[k]['binds'] or '-'})" for k in cores) + " |")
    return lines + [""]


def families(meta, details):
    """Counter families to show: those of the run's variants, else every
    family with a non-zero counter."""
    fams = []
    for settings in meta.get("variants", {}).values():
        for guc in settings:
            f = GUC_FAMILY.get(guc)
            if f and f not in fams:
                fams.append(f)
    if not fams:
        for det in details.values():
            for k, v in det.get("counters", {}).items():
                f = k.partition(".")[0]
                if v and f not in fams:
                    fams.append(f)
    return sorted(fams)


def counters_table(out, family):
    """Markdown table: for each workload, clients and build/variant, the
    median tps and the median of each counter of FAMILY per 1000
    transactions (from raw/*.locks.json and runs.csv); counters that are
    zero in every run are left out."""
    out = Path(out)
    rows = load_rows(out)
    details = lock_details(out)
    pts = {}
    cols = []
    for row in rows:
        det = details.get(f"{row['workload']}-c{row['clients']}-r{row['rep']}-{row['build']}-{row['variant']}")
        if not det or not row["transactions"]:
            continue
        txn = row["transactions"]
        vals = {}
        for k, v in det.get("counters", {}).items():
            fam, _, name = k.partition(".")
            if fam != family:
                continue
            if name not in cols:
                cols.append(name)
            vals[name] = v * 1000.0 / txn
        key = (row["workload"], row["clients"], f"{row['build']}/{row['variant']}")
        pts.setdefault(key, []).append((row["tps"] or 0.0, vals))
    if not cols:
        raise UsageError(f"no counters of family {family!r} in {out}/raw")
    cols = [n for n in cols if any(v.get(n) for p in pts.values() for _, v in p)]
    if not cols:
        raise UsageError(f"every counter of family {family!r} is zero in {out}/raw")
    lines = ["| workload | clients | build/variant | tps | " + " | ".join(f"{n} /1000 txn" for n in cols) + " |",
             "|---|---:|---|---:|" + "---:|" * len(cols)]
    for (w, c, bv) in sorted(pts):
        p = pts[(w, c, bv)]
        tps = statistics.median(t for t, _ in p)
        cells = [f"{statistics.median(v.get(n, 0.0) for _, v in p):.1f}" for n in cols]
        lines.append(f"| {w} | {c} | {bv} | {tps:.0f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def readme_text(out, meta, what=None):
    """A short README.md for a run directory: what ran, where and when,
    from meta.json (a flexbench run or an lwlock micro-benchmark)."""
    out = Path(out)
    mx = meta.get("matrix", {})
    m = meta.get("machine", {})
    lines = [f"# {out.name}", ""]
    if what:
        lines += [what, ""]
    lines += ["What ran:", ""]
    if "workers" in mx and mx.get("algorithms", ["exchange", "fetch_add"]) != ["exchange", "fetch_add"]:
        lines += [f"- `flexbench.py lwlock` (`make lwbench`): `flexlock_bench_lwlock()` on the "
                  f"{meta.get('build', '?')} build, {', '.join(mx['algorithms'])}",
                  f"- workers {', '.join(map(str, mx.get('workers', [])))}; "
                  f"shared {', '.join(f'{x}%' for x in mx.get('shared_percent', []))}; "
                  f"{mx.get('reps')} repetitions of {mx.get('seconds')} s, every algorithm in each, rotating order"]
        if mx.get("writer_readers"):
            lines.append(f"- the writer's price (`flexlock_bench_lwlock_writer()`) with "
                         f"{', '.join(map(str, mx['writer_readers']))} readers, same repetitions")
    elif "workers" in mx:
        lines += [f"- `flexbench.py lwlock` (`make lwbench`): `flexlock_bench_lwlock()` on the "
                  f"{meta.get('build', '?')} build, compare-exchange vs fetch-add",
                  f"- workers {', '.join(map(str, mx.get('workers', [])))}; "
                  f"shared {', '.join(f'{x}%' for x in mx.get('shared_percent', []))}; "
                  f"{mx.get('reps')} repetitions of {mx.get('seconds')} s, both algorithms in each, alternating order"]
    else:
        preset = meta.get("preset")
        lines.append("- `flexbench.py run`" + (f", preset `{preset}`" if preset else "")
                     + f": {meta.get('runs', '?')} runs of this matrix")
        builds = meta.get("builds", {})
        lines.append("- builds: " + ", ".join(f"{b} ({i.get('version', '?').replace('postgres (PostgreSQL) ', 'PostgreSQL ')})"
                                              for b, i in builds.items()) if builds else
                     "- builds: " + ", ".join(mx.get("builds", [])))
        variants = meta.get("variants", {})
        lines.append("- variants: " + ", ".join(
            f"{v}" + (f" ({', '.join(f'{k} = {x}' for k, x in st.items())})" if st else "")
            for v, st in variants.items()) if variants else "- variants: " + ", ".join(mx.get("variants", [])))
        lines.append("- workloads: " + ", ".join(mx.get("workloads", [])))
        lines.append(f"- clients {', '.join(map(str, mx.get('clients', [])))}; {mx.get('reps')} repetitions "
                     f"of {mx.get('duration_s')} s after {mx.get('warmup_s')} s of warm-up, "
                     "the builds/variants of a point interleaved")
    started, finished = meta.get("started"), meta.get("finished")
    lines.append("- when: " + (started or "?") + (f" to {finished}" if finished else "") + " (UTC)")
    if meta.get("flexlock_commit"):
        lines.append(f"- code: flexlock {meta['flexlock_commit']}, {len(meta.get('series', []))} patches")
    lines += ["", "Where:", "",
              f"- {m.get('cores', '?')} cores ({m.get('model', '?')}), {m.get('memory_gib', '?')} GiB, "
              f"{m.get('system', 'Linux')} {m.get('kernel', '?')}"]
    src = meta.get("source")
    if src:
        lines.append(f"- PostgreSQL {src[0]} from a {src[1]}" + (f" ({src[3]})" if len(src) > 3 else ""))
    files = [(f, d) for f, d in (("summary.md", "the tables"), ("plots", "tps and ratios against clients"),
                                   ("runs.csv", "one row per run"),
                                   ("meta.json", "machine, versions, series, settings"),
                                   ("raw", "each run's pgbench output and lock statistics deltas"),
                                   ("profile.csv", "each point's profile run with hold sampling on: "
                                                   "tps, CPU demand"),
                                   ("caps.csv", "the profile runs' lock caps"),
                                   ("holds.csv", "the profile runs' hold times and load per tranche"),
                                   ("driver.log", "the driver's log"))
             if (out / f).exists() or f == "summary.md"]
    lines += ["", "Files: " + "; ".join(f"`{f}{'/' if f in ('plots', 'raw') else ''}` ({d})" for f, d in files)
              + ".  `bench-scripts/flexbench.py report DIR` writes `summary.md` "
              + ("and the plots " if "workers" not in mx else "") + "again; readings of the results "
              "are in `results/README.md`.", ""]
    return "\n".join(lines)


def write_readme(out, meta, what=None):
    """README.md of a run directory, unless it has one."""
    path = Path(out) / "README.md"
    if not path.exists() and meta:
        path.write_text(readme_text(out, meta, what))


def report(out, predict_cores=None):
    """summary.md and plots from runs.csv (and meta.json, raw/ and the
    profile runs' CSV files if there), and README.md if the directory has
    none.  predict_cores: the core counts of the predictions (default: the
    run's --predict-cores, else 16 and 64).  Returns the plot paths."""
    out = Path(out)
    rows = load_rows(out)
    meta = json.loads((out / "meta.json").read_text()) if (out / "meta.json").is_file() else {}
    details = lock_details(out)
    pts = points(rows)
    prof, caps = load_profiles(out)
    cores = predict_cores or meta.get("matrix", {}).get("predict_cores") or DEFAULT_PREDICT_CORES
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
        for b, i in meta["builds"].items():
            own = i.get("own")
            if own:
                lines += [f"Build `{b}` is your own (make build): the {own['base']} build "
                          f"(commit {own['base_commit'][:12]}) with "
                          + "; ".join(f"{p['file']} ({p['subject']}, sha256 {p['sha256'][:12]})"
                                      for p in own["patches"])
                          + f". Its stock is compared with {own['base']}/stock.", ""]
    if meta.get("matrix"):
        mx = meta["matrix"]
        lines += [f"Matrix: preset {meta.get('preset')}, {mx['reps']} repetitions of {mx['duration_s']} s "
                  f"(after {mx['warmup_s']} s warm-up), interleaved; tps is the median of the repetitions.", ""]
    lines += [stats.method_text(), "",
              "Per run (second table of each workload, medians of the repetitions): latency percentiles from "
              "pgbench's per-transaction log sampled with --sampling-rate (about 20000 transactions a run); "
              "CPU time of the whole machine by state over the measured interval, from /proc/stat "
              "(user includes nice, system includes irq and softirq, steal is the hypervisor's), the "
              "machine's context switches per second (/proc/stat ctxt) and the WAL written per second "
              "(pg_current_wal_insert_lsn before and after); LWLock waits per transaction and "
              "the tranches waited on longest (waits and wait time per transaction), from the flexlock "
              "views (patched builds).", ""]
    if prof:
        mx = meta.get("matrix", {})
        sample = next(iter(prof.values())).get("hold_sample")
        others = sorted({f"{b}/{v} on {p['profile_build']}/{p['profile_variant']}"
                         for (_, _, b, v), p in prof.items() if p["profile_build"] != b})
        lines += [f"Lock caps and predictions (third table of each workload): after a point's timed "
                  f"repetitions, one profile run per build/variant, untimed, with lock_stats_hold_sample = "
                  f"{sample} ({mx.get('profile_duration_s', '?')} s after {mx.get('warmup_s', '?')} s warm-up; "
                  "the timed runs never sample holds): its CPU demand D (busy CPU seconds of the whole machine "
                  "per transaction), each sampled tranche's lock cap k / (h - n) from flexlock_lock_caps() "
                  "(profile.csv, caps.csv; hold times and load of every sampled tranche in holds.csv). "
                  "The CPU cap on C cores is C / D; the **predicted** tps on C cores is the smallest of it and "
                  "the lock caps, with what binds. The model and its known errors (+3% to +279% on insert-1000 "
                  "against a 16-core machine, convoys and hot buffer pages not modelled): "
                  "results/README.md."
                  + (" Builds without hold sampling are profiled on a build with it, with the same variant's "
                     "settings: " + ", ".join(others) + "; their caps and predictions are that build's."
                     if others else ""), ""]
    plots = []
    for w in sorted(pts):
        per_cfg = pts[w]
        cfgs = ordered(per_cfg)
        cmps = comparisons(per_cfg)
        info = meta.get("workloads", {}).get(w, {})
        lines += [f"## {w}", ""]
        if info:
            lines += [f"{info.get('description', '')} (seed {info.get('seed', '-')})", ""]
        # one row per client count and build/variant: as many columns
        # however many variants, so that it reads on a screen and in a diff
        lines += ["| clients | build/variant | tps | reference | ratio [interval] | verdict (coverage, pairs) |",
                  "|---:|---|---:|---|---:|---|"]
        clients = sorted({c for cfg in cfgs for c in per_cfg[cfg]})
        for c in clients:
            for cfg in cfgs:
                reps = per_cfg[cfg].get(c)
                if not reps:
                    continue
                ref = stats.reference(cfg, per_cfg)
                k = cmps.get((cfg, c))
                cells = [str(c), f"{cfg[0]}/{cfg[1]}", fmt(med(reps.values(), "tps"), ".0f"),
                         f"{ref[0]}/{ref[1]}" if ref else "-"]
                if k:
                    cells += [f"{k['ratio']:.3f} [{k['low']:.3f}, {k['high']:.3f}]",
                              f"{k['verdict']} ({k['coverage']:.1%}, {k['n']})"]
                else:
                    cells += ["-", "-"]
                lines.append("| " + " | ".join(cells) + " |")
        # new orders per minute beside tps, for workloads that have them
        has_nopm = any(r.get("nopm") is not None for per in per_cfg.values()
                       for reps in per.values() for r in reps.values())
        lines += ["", "| clients | build/variant | tps | " + ("NOPM | " if has_nopm else "")
                  + "p50 ms | p95 ms | p99 ms | CPU user % | system % "
                  "| idle % | iowait % | steal % | context switches/s | WAL MB/s | LWLock waits/txn "
                  "| top waited tranches |",
                  "|---:|---|---:|" + ("---:|" if has_nopm else "")
                  + "---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for c in clients:
            for cfg in cfgs:
                reps = per_cfg[cfg].get(c)
                if not reps:
                    continue
                rs = list(reps.values())
                lines.append(f"| {c} | {cfg[0]}/{cfg[1]} | {fmt(med(rs, 'tps'), '.0f')} "
                             + (f"| {fmt(med(rs, 'nopm'), '.0f')} " if has_nopm else "")
                             + f"| {fmt(med(rs, 'latency_p50_ms'), '.3f')} | {fmt(med(rs, 'latency_p95_ms'), '.3f')} "
                             f"| {fmt(med(rs, 'latency_p99_ms'), '.3f')} | {fmt(med(rs, 'cpu_user_pct'))} "
                             f"| {fmt(med(rs, 'cpu_system_pct'))} | {fmt(med(rs, 'cpu_idle_pct'))} "
                             f"| {fmt(med(rs, 'cpu_iowait_pct'))} | {fmt(med(rs, 'cpu_steal_pct'))} "
                             f"| {fmt(med(rs, 'ctxt_per_s'), '.0f')} | {fmt(mb(med(rs, 'wal_bytes_per_s')), '.2f')} "
                             f"| {fmt(med(rs, 'lw_waits_per_txn'), '.3g')} "
                             f"| {top_tranches(reps, details)} |")
        lines.append("")
        lines += caps_table(w, cfgs, clients, prof, caps, cores)
        plots += plot_workload(out, w, per_cfg, cfgs, cmps)
    fams = families(meta, details)
    if fams:
        named = any(GUC_FAMILY.get(g) for st in meta.get("variants", {}).values() for g in st)
        lines += ["## The mechanism: counters of the variants' families", "",
                  "`flexbench.py counters DIR FAMILY`: per point the median tps and the median of each "
                  "counter per 1000 transactions (flexlock_counters deltas over each run; counters zero in "
                  "every run left out)"
                  + ("." if named else "; the run's variants name no family, so every family with a "
                     "counter above zero."), ""]
        for f in fams:
            try:
                table = counters_table(out, f)
            except UsageError:
                continue
            lines += [f"### {f}", "", table, ""]
    (out / "summary.md").write_text("\n".join(lines))
    write_readme(out, meta)
    return plots


def plot_workload(out, w, per_cfg, cfgs, cmps):
    """plots/W.png and .svg: tps vs clients (median, min-max bars) and, below,
    each ratio to its reference with its interval."""
    try:
        import matplotlib
    except ImportError:
        print("flexbench: no plots: python3-matplotlib is not installed")
        return []
    matplotlib.use("Agg")
    # the same data give the same files: no date, fixed SVG ids
    matplotlib.rcParams["svg.hashsalt"] = "flexbench"
    import matplotlib.pyplot as plt

    with_ratio = bool(cmps)
    fig, axes = plt.subplots(2 if with_ratio else 1, 1, figsize=(7, 7.5 if with_ratio else 4.5),
                             sharex=True, squeeze=False)
    ax = axes[0][0]
    xs_all = sorted({c for cfg in cfgs for c in per_cfg[cfg]})
    for cfg in cfgs:
        pts = sorted(per_cfg[cfg].items())
        xs = [c for c, _ in pts]
        vals = [[r["tps"] for r in reps.values()] for _, reps in pts]
        ys = [statistics.median(v) for v in vals]
        ax.errorbar(xs, ys, yerr=[[y - min(v) for y, v in zip(ys, vals)], [max(v) - y for y, v in zip(ys, vals)]],
                    marker="o", capsize=3, label=f"{cfg[0]}/{cfg[1]}")
    ax.set_ylabel("tps (median, min-max)")
    ax.set_title(w)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    if with_ratio:
        rx = axes[1][0]
        for cfg in cfgs:
            ks = sorted((c, k) for (cf, c), k in cmps.items() if cf == cfg)
            if not ks:
                continue
            xs = [c for c, _ in ks]
            ys = [k["ratio"] for _, k in ks]
            ref = ks[0][1]["ref"]
            rx.errorbar(xs, ys, yerr=[[k["ratio"] - k["low"] for _, k in ks], [k["high"] - k["ratio"] for _, k in ks]],
                        marker="o", capsize=3, label=f"{cfg[0]}/{cfg[1]} vs {ref[0]}/{ref[1]}")
        rx.axhline(1.0, color="grey", linewidth=1)
        rx.set_ylabel("ratio (median of paired ratios,\norder-statistic interval)")
        rx.grid(True, alpha=0.3)
        rx.legend(fontsize="small")
    bottom = axes[-1][0]
    if len(xs_all) > 1 and xs_all[-1] / max(xs_all[0], 1) >= 8:
        bottom.set_xscale("log", base=2)
    bottom.set_xticks(xs_all)
    bottom.set_xticklabels([str(x) for x in xs_all])
    bottom.set_xlabel("clients")
    fig.tight_layout()
    (out / "plots").mkdir(exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / "plots" / f"{w}.{ext}"
        fig.savefig(p, metadata={"Date": None} if ext == "svg" else None)
        paths.append(p)
    plt.close(fig)
    return paths
