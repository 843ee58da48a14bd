"""Predictions (item 5 of issue 34) for the designs never run on many cores,
with the stock settings beside each at the same cores and clients:

    python3 -m flexlab sim designs --out RESULTS [--only SUBSTRING]

writes RESULTS/predictions-<model version>.csv (workload, variant, cores,
clients, machine, predicted_tps, stock_predicted_tps, ratio, model_version,
per-transaction sleeps and wait of the top tranche) and .json (the
simulator's counters).  Machine (--machine): 16core-v4-current (the
16-core run's assumed constants with model v4's figures as named
assumptions, this series' code: the holder design of today) at every core
count; v1 and v3 predicted them with 16core-current (the same without v4's
figures).  Only designs whose workload has traces and whose settings the
simulator runs itself (or whose own traces exist) are predicted.
"""

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from . import params as P
from . import predict as PR

# (workload, variant): the designs of docs/findings.md never run on many cores
DESIGNS = [
    ("tpcb-logged", "groupclear-holder"),          # holder, last-out (redesigned after the 16-core run)
    ("tpcb-logged", "groupclear-off"),
    ("insert-1000", "walbuf-lockfree"),             # lock-free WAL buffer init
    ("insert-1000", "walres-atomic"),               # lock-free WAL reservation
    ("insert-1000", "walins-lockfree"),             # both
    ("insert-1000", "walins-lockfree-32"),
    ("insert-1000", "walinsert-32"),
    ("insert-1000", "walins-seed002"),              # seed 002's combination
    ("select-only", "lwlock-spinlock"),             # seed 003: LWLocks under a spinlock
    ("select-only", "readbiased-procarray"),        # the read-biased lock on ProcArrayLock
    ("select-only", "sharedadd-on"),
]
# and what cannot be predicted yet: (workload, variant, why)
NOT_PREDICTED = [
    ("xid-storm", "groupclear-holder", "no traces of xid-storm"),
    ("select-only", "seed003-pre95", "changes lock_fastpath, clock_sweep and relation_extend_pages, which the "
                                     "simulator takes from traces: needs traces taken with the variant"),
    ("select-only", "fastpath-off-lwspin", "lock_fastpath = off: needs its own traces"),
    ("copy-bulk", "extend-1page", "no traces of copy-bulk; relation_extend_pages changes the traced events"),
    ("select-only-big", "clock-spinlock-128mb", "no traces; clock_sweep changes the traced events"),
    ("tpcc", "readbiased-procarray", "no traces of tpcc"),
]
POINTS = [(16, 16), (16, 64), (64, 64), (192, 192)]
MACHINE = "16core-v4-current"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only")
    ap.add_argument("--machine", default=MACHINE, help=f"the machine profile (default {MACHINE})")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    fn = out / f"predictions-{P.MODEL_VERSION}.csv"
    jf = out / f"predictions-{P.MODEL_VERSION}.json"
    detail = json.loads(jf.read_text()) if jf.exists() else {}
    stock = {}
    rows = []
    t0 = time.time()

    def sim(w, v, c, n):
        key = f"{w}/{v}/{c}/{n}"
        if key not in detail:
            try:
                r = PR.simulate(w, v, c, n, machine=a.machine, seed=1)
            except PR.StallError as e:
                detail[key] = {"error": str(e), "tps": None}
                jf.write_text(json.dumps(detail, indent=1, default=str) + "\n")
                print(f"{key}: {e}", flush=True)
                return detail[key]
            detail[key] = {k: r[k] for k in ("tps", "transactions", "sim_ns", "events", "cpu_utilization",
                                             "tranches", "counters", "preemptions", "wakeups", "wall_s",
                                             "traces_variant")}
            jf.write_text(json.dumps(detail, indent=1, default=str) + "\n")
            print(f"{key}: {r['tps']:.0f} tps ({r['wall_s']:.0f} s; {time.time() - t0:.0f} s in all)", flush=True)
        return detail[key]

    for w, v in DESIGNS:
        if a.only and a.only not in f"{w}/{v}":
            continue
        for c, n in POINTS:
            s = sim(w, "stock", c, n)
            d = sim(w, v, c, n)
            if d.get("tps") is None or s.get("tps") is None:
                rows.append({"workload": w, "variant": v, "cores": c, "clients": n, "machine": a.machine,
                             "predicted_tps": "", "stock_predicted_tps": "", "ratio": "",
                             "model_version": P.MODEL_VERSION, "top_wait": "stalled: " + (d.get("error") or
                                                                                         s.get("error"))})
                continue
            nt = max(1, d["transactions"])
            top = max(d["tranches"].items(), key=lambda kv: kv[1]["wait_ns"], default=(None, None))
            rows.append({"workload": w, "variant": v, "cores": c, "clients": n, "machine": a.machine,
                         "predicted_tps": round(d["tps"]), "stock_predicted_tps": round(s["tps"]),
                         "ratio": f"{d['tps'] / s['tps']:.3f}" if s["tps"] else "",
                         "model_version": P.MODEL_VERSION,
                         "top_wait": (f"{top[0]} {top[1]['sleeps'] / nt:.2f} sleeps, "
                                      f"{top[1]['wait_ns'] / nt / 1000:.1f} us per txn"
                                      if top[0] and top[1]["wait_ns"] > 0 else "")})
    with open(fn, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    print(f"wrote {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
