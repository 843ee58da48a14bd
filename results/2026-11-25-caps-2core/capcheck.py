#!/usr/bin/python3
"""capcheck: predict many-core throughput from hold times measured here.

For each configuration (workload, variant, clients) of the committed 16-core
runs, run it on this machine with lock_stats_hold_sample on, measure the CPU
demand per transaction and the exclusive hold time per transaction of every
LWLock tranche, and predict the throughput at --cores C with the model in
results/2026-11-25-caps-2core/MODEL.md: the smallest of C / D and of
k / (h - n) over the tranches.  Writes points.csv and table.md (predicted
next to measured where the 16-core run has the point, with the error).

Uses the flexbench package (servers, workloads, variants) read-only, and its
module capmodel, the model's one implementation (flexbench's profile runs use
it too); the patched build must be installed (make patched).

Usage (from the top of the checkout):

    PYTHONPATH=bench-scripts python3 results/2026-11-25-caps-2core/capcheck.py \
        --out DIR [--secs 10] [--sample 100] [--cores 16,64] [--only NAME,...]
"""

import argparse
import csv
import json
import os
import shlex
import sys
from pathlib import Path

from flexbench import capmodel, config
from flexbench.config import Workload, variant_settings
from flexbench.machine import machine_facts
from flexbench.servers import Server, as_user, base_settings, prepare_run_user, sh

R16 = "2026-11-22-16core"

# (name, workload, variant, clients, measured tps on 16 cores, where)
POINTS = [
    ("walinsert-1/16", "insert-1000", "walinsert-1", 16, 1151, "walinsert"),
    ("walinsert-1/32", "insert-1000", "walinsert-1", 32, 1078, "walinsert"),
    ("walinsert-8/16", "insert-1000", "stock", 16, 3296, "walinsert"),
    ("walinsert-8/32", "insert-1000", "stock", 32, 3296, "walinsert"),
    ("walinsert-128/16", "insert-1000", "walinsert-128", 16, 2005, "walinsert"),
    ("walinsert-128/32", "insert-1000", "walinsert-128", 32, 2047, "walinsert"),
    ("walinsert-2/16", "insert-1000", "walinsert-2", 16, 1934, "walinsert-sweep"),
    ("walinsert-4/16", "insert-1000", "walinsert-4", 16, 2737, "walinsert-sweep"),
    ("walinsert-16/16", "insert-1000", "walinsert-16", 16, 2200, "walinsert-sweep"),
    ("walinsert-32/16", "insert-1000", "walinsert-32", 16, 1904, "walinsert-sweep"),
    ("walinsert-64/16", "insert-1000", "walinsert-64", 16, 2059, "walinsert-sweep"),
    ("xid-storm stock/16", "xid-storm", "stock", 16, 635777, "holder"),
    ("xid-storm stock/64", "xid-storm", "stock", 64, 601860, "holder"),
    ("xid-storm off/16", "xid-storm", "groupclear-off", 16, 576555, "holder"),
    ("xid-storm off/64", "xid-storm", "groupclear-off", 64, 458699, "holder"),
    ("xid-storm holder/16", "xid-storm", "groupclear-holder", 16, 525268, "holder"),
    ("xid-storm holder/64", "xid-storm", "groupclear-holder", 64, 324049, "holder"),
    ("btree-ordered exclusive/16", "btree-ordered", "stock", 16, 285417, "btree-recheck"),
    ("btree-ordered share/16", "btree-ordered", "btree-share-descent", 16, 329697, "btree-recheck"),
    ("select-only/16", "select-only", "stock", 16, 740129, "sharedadd"),
    ("select-only/64", "select-only", "stock", 64, 673241, "sharedadd"),
    # designs never run on many cores: predictions only
    ("walins-lockfree/16", "insert-1000", "walins-lockfree", 16, None, None),
    ("walins-lockfree-32/16", "insert-1000", "walins-lockfree-32", 16, None, None),
    ("walins-lockfree-32/64", "insert-1000", "walins-lockfree-32", 64, None, None),
    ("select-only seed003-pre95/16", "select-only", "seed003-pre95", 16, None, None),
    ("select-only seed003-pre95/64", "select-only", "seed003-pre95", 64, None, None),
    ("tpcc stock/16", "tpcc", "stock", 16, None, None),
    ("tpcc sharedadd-on/16", "tpcc", "sharedadd-on", 16, None, None),
]

# Variants the sweep needs beyond variants/*.conf
EXTRA_VARIANTS = {f"walinsert-{n}": {"wal_insert_locks": str(n)} for n in (2, 4, 16, 64)}


def settings_of(variant):
    if variant in EXTRA_VARIANTS:
        return EXTRA_VARIANTS[variant]
    return {k: v for k, v in variant_settings(variant).items() if not k.startswith("flexlock_test.")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--secs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--sample", type=int, default=capmodel.SAMPLE)
    ap.add_argument("--cores", default="16,64")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    cores = [int(c) for c in a.cores.split(",")]
    only = set(a.only.split(",")) if a.only else None
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    prepare_run_user()
    config.check_installed("patched")
    work = config.BUILD / "capcheck"
    sh(["rm", "-rf", str(work)])
    work.mkdir(parents=True)
    sock = work / "sock"
    sock.mkdir()
    if os.geteuid() == 0:
        sh(["chown", "-R", os.environ.get("FLEXLOCK_USER", "flexlock"), str(work)])
    log = out / "driver.log"
    base = base_settings(max(p[3] for p in POINTS))
    srv = Server("patched", work, sock, base, log)
    srv.initdb()
    srv.start()
    srv.setup_flexlock()
    capmodel.set_hold_sampling(srv, a.sample)
    ncpu = os.cpu_count()
    initialised = set()
    results = []
    try:
        for name, wname, variant, clients, measured, where in POINTS:
            if only and name not in only:
                continue
            w = Workload(wname)
            srv.set_variant(variant, settings_of(variant))
            if wname not in initialised:
                srv.psql(f"CREATE DATABASE {w.dbname}")
                if w.pgbench_init:
                    init = w.pgbench_init.replace("{scale}", str(w.scale))
                    sh(as_user([srv.bin("pgbench")] + srv.conn() + ["-i", "-q"] + shlex.split(init) + [w.dbname]), log)
                if w.init_sql:
                    tmp = work / f"{wname}.init.sql"
                    tmp.write_text(w.init_sql.read_text().replace("{scale}", str(w.scale)))
                    os.chmod(tmp, 0o644)
                    srv.psql_file(tmp, w.dbname)
                for k, v in w.session.items():
                    srv.psql(f"ALTER DATABASE {w.dbname} SET {k} = '{v}'")
                srv.psql("VACUUM ANALYZE", w.dbname)
                initialised.add(wname)
            fargs = []
            for src, weight in w.scripts:
                dst = work / f"{wname}-{src.name}"
                dst.write_text(src.read_text())
                os.chmod(dst, 0o644)
                fargs += ["-f", str(dst) if weight is None else f"{dst}@{weight}"]
            if w.reset_sql:
                srv.psql(w.reset_sql, w.dbname)
            srv.psql("CHECKPOINT")
            cmd = [srv.bin("pgbench")] + srv.conn() + ["-n", "-c", str(clients), "-j", str(min(clients, ncpu)),
                                                       "-D", f"scale={w.scale}"] + w.pgbench_args + fargs
            if a.warmup:
                sh(as_user(cmd + ["-T", str(a.warmup), w.dbname]))
            m = capmodel.measure(srv, cmd, w.dbname, a.secs, log)
            text, txns, busy_s, D, cs = m["output"], m["transactions"], m["busy_cpu_s"], m["D"], m["caps"]
            row = {"point": name, "workload": wname, "variant": variant, "clients": clients,
                   "tps_here": round(m["tps"], 1), "transactions": txns, "busy_cpu_s": round(busy_s, 2),
                   "cpu_us_per_txn": round(D * 1e6, 2),
                   "top_caps": ";".join(f"{c['tranche']}:{c['own_cap_tps']:.0f}:"
                                        f"{c['exclusive_hold_us_per_txn']:.2f}us:"
                                        f"{c['exclusive_hold_us_per_txn'] - c['own_exclusive_hold_us_per_txn']:.2f}us"
                                        for c in cs[:3]),
                   "walinsert_utilization": next((round(c["utilization"], 3) for c in cs
                                                  if c["tranche"] == "WALInsert"), None),
                   "measured_16": measured, "source": f"{R16}/{where}" if where else ""}
            for c, pr in capmodel.predict(D, cs, cores).items():
                row[f"cpu_cap_{c}"] = round(pr["cpu_cap"])
                row[f"pred_{c}"] = round(pr["pred"])
                row[f"binds_{c}"] = pr["binds"]
            row["error_16"] = round(row["pred_16"] / measured - 1, 3) if 16 in cores and measured else None
            results.append(row)
            (out / "raw").mkdir(exist_ok=True)
            (out / "raw" / f"{name.replace('/', '-').replace(' ', '_')}.json").write_text(
                json.dumps({"row": row, "caps": cs, "pgbench": text}, indent=1) + "\n")
            print(f"{name}: {m['tps']:.0f} tps here, D {D * 1e6:.1f} us/txn, "
                  f"pred16 {row.get('pred_16')} ({row.get('binds_16')}) vs {measured}: error {row['error_16']}",
                  flush=True)
    finally:
        srv.stop()
    keys = list(results[0].keys()) if results else []
    with open(out / "points.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=keys)
        wr.writeheader()
        wr.writerows(results)
    facts = machine_facts()
    lines = [f"# Predicted 16-core throughput from {facts['cores']}-core hold times",
             "",
             f"Machine: {facts['cores']} cores ({facts['model']}), {facts['memory_gib']} GiB; patched build; "
             f"lock_stats_hold_sample = {a.sample}; {a.secs} s per point after {a.warmup} s warm-up, one run each; "
             f"server settings as flexbench's ({', '.join(f'{k}={v}' for k, v in base.items() if k not in ('listen_addresses', 'log_line_prefix'))}).",
             "Model: MODEL.md (committed before this run).  **Predictions**, next to the 16-core measurement and "
             "the error (predicted / measured - 1).",
             "",
             "| point | tps here | CPU µs/txn | three lowest lock caps (tranche: cap tps, own hold µs/txn, nested µs/txn) | "
             + " | ".join(f"CPU cap {c}" for c in cores) + " | "
             + " | ".join(f"**predicted {c}** (binds)" for c in cores) + " | measured 16 | error |",
             "|---|---:|---:|---|" + "---:|" * len(cores) * 2 + "---:|---:|"]
    for r in results:
        capsdesc = "; ".join(f"{t.split(':')[0]}: {t.split(':')[1]}, {t.split(':')[2]}, {t.split(':')[3]}"
                             for t in r["top_caps"].split(";") if t)
        lines.append(f"| {r['point']} | {r['tps_here']:.0f} | {r['cpu_us_per_txn']} | {capsdesc} | "
                     + " | ".join(str(r[f'cpu_cap_{c}']) for c in cores) + " | "
                     + " | ".join(f"{r[f'pred_{c}']} ({r[f'binds_{c}']})" for c in cores)
                     + (f" | {r['measured_16']} | {r['error_16']:+.0%} |" if r['measured_16']
                        else " | (not run) | prediction |"))
    (out / "table.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
