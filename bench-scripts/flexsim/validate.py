"""The simulator's validation, in two steps so that predictions are
committed before they meet a measurement:

  python3 -m flexsim.validate predict --set sixteen|DIR --out RESULTS [--scale NAME=F ...] [--tag TAG]
      simulates every point of a set (sixteen: the 74 pgbench points of the
      16-core run of 2026-11-22; DIR: a flexbench run directory of this
      machine) and writes RESULTS/predictions-<model version>[-TAG].csv
      and .json (the simulator's own counters per point).  Reads the
      points' settings only, never their measured figures.

  python3 -m flexsim.validate compare --out RESULTS [--set ...]
      joins every predictions-*.csv of RESULTS with the measurements and
      writes RESULTS/validation.csv (point, workload, variant, cores,
      clients, measured_tps, predicted_tps, model_version, calibration)
      and RESULTS/comparison.md: the error of each point, the median
      absolute error and the share within 50% over the scored points, the
      issue's 14 clear pairs and which side of 1 each comes out, and each
      point's tranches, simulated beside measured.

Declared calibration points (kept out of the score, said before any
comparison): the A/A points (aa-calibration/) and the group-commit points
(overhead-groupcommit/, group-commit) of the 16-core run.
"""

import argparse
import csv
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flexsim import measured as MS  # noqa: E402
from flexsim import params as P  # noqa: E402
from flexsim import predict as PR  # noqa: E402

FIELDS = ["point", "workload", "variant", "cores", "clients", "measured_tps", "predicted_tps", "model_version",
          "calibration"]

# the 14 clear pairs of the 16-core run: (workload, variant, clients) against stock at the same
# clients, and the measured side of 1
CLEAR_PAIRS = [
    ("insert-1000", "walinsert-1", 16, "walinsert"), ("insert-1000", "walinsert-1", 32, "walinsert"),
    ("insert-1000", "walinsert-128", 16, "walinsert"), ("insert-1000", "walinsert-128", 32, "walinsert"),
    ("insert-1000", "walinsert-2", 16, "walinsert-sweep"), ("insert-1000", "walinsert-16", 16, "walinsert-sweep"),
    ("insert-1000", "walinsert-32", 16, "walinsert-sweep"), ("insert-1000", "walinsert-64", 16, "walinsert-sweep"),
    ("wal-emit-small", "walinsert-1", 16, "walinsert"), ("wal-emit-small", "walinsert-1", 32, "walinsert"),
    ("xid-storm", "groupclear-holder", 16, "holder"), ("xid-storm", "groupclear-holder", 64, "holder"),
    ("xid-storm", "groupclear-off", 64, "holder"),
    ("btree-ordered", "btree-share-descent", 16, "btree-recheck"),
]


def is_calibration(m):
    return m.run == "aa-calibration" or (m.run == "overhead-groupcommit" and m.workload == "group-commit")


def point_name(m, cores):
    base = "2026-11-22-16core" if cores == 16 else "2core"
    return f"{base}/{m.run}/{m.workload}/{m.build}-{m.variant}/c{m.clients}"


def row_variant(m):
    """The variant as variants/ names it (stock for stock settings, vanilla
    for the vanilla build; the A/A copy of stock is stock)."""
    if m.build == "vanilla":
        return "vanilla"
    return "stock" if m.variant == "stock-again" else m.variant


def points_of(setname):
    if setname == "sixteen":
        return MS.sixteen_core_points(), 16
    pts = MS.load_run(setname)
    return pts, 2


def cmd_predict(a):
    pts, cores = points_of(a.set)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    scale = {}
    for s in a.scale or []:
        k, v = s.split("=")
        scale[k] = float(v)
    tag = P.MODEL_VERSION + (f"-{a.tag}" if a.tag else "")
    rows, detail = [], {}
    cache = {}
    t_start = time.time()
    for i, m in enumerate(pts):
        if a.only and a.only not in point_name(m, cores):
            continue
        var = row_variant(m)
        key = (m.workload, var, m.clients)
        if key in cache:
            res = cache[key]
        else:
            res = PR.simulate(m.workload, var, cores, m.clients, machine=a.machine, seed=1,
                              traces_root=a.traces, scale=scale or None,
                              max_events=a.max_events or PR.MAX_EVENTS)
            cache[key] = res
        name = point_name(m, cores)
        rows.append({"point": name, "workload": m.workload, "variant": var, "cores": cores, "clients": m.clients,
                     "predicted_tps": round(res["tps"]), "model_version": tag,
                     "calibration": "true" if cores == 16 and is_calibration(m) else "false"})
        detail[name] = {k: res[k] for k in ("tps", "transactions", "sim_ns", "events", "cpu_utilization",
                                            "tranches", "counters", "preemptions", "wakeups", "wall_s",
                                            "machine", "traces_variant")}
        print(f"[{i + 1}/{len(pts)}] {name}: {res['tps']:.0f} tps ({res['wall_s']:.1f} s, "
              f"{time.time() - t_start:.0f} s in all)", flush=True)
    fn = out / f"predictions-{tag}.csv"
    with open(fn, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[k for k in FIELDS if k != "measured_tps"])
        w.writeheader()
        w.writerows(rows)
    (out / f"predictions-{tag}.json").write_text(json.dumps(detail, indent=1, default=str) + "\n")
    print(f"wrote {fn}")
    return 0


def _ratio_side(r):
    return "below 1" if r < 1 else "above 1"


def cmd_compare(a):
    out = Path(a.out)
    pts, cores = points_of(a.set)
    meas = {point_name(m, cores): m for m in pts}
    allrows = []
    for fn in sorted(out.glob("predictions-*.csv")):
        for r in csv.DictReader(open(fn)):
            m = meas.get(r["point"])
            if m is None:
                raise SystemExit(f"{fn}: point {r['point']} is not a measured point of {a.set}")
            r["measured_tps"] = round(m.tps)
            allrows.append(r)
    with open(out / "validation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in allrows:
            w.writerow({k: r[k] for k in FIELDS})
    versions = sorted({r["model_version"] for r in allrows})
    lines = [f"# Validation: {a.set}", ""]
    for v in versions:
        rows = [r for r in allrows if r["model_version"] == v]
        lines += summary(v, rows, meas, out, cores)
    (out / "comparison.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:60]))
    return 0


def summary(version, rows, meas, out, cores):
    scored = [r for r in rows if r["calibration"] == "false"]
    errs = [float(r["predicted_tps"]) / float(r["measured_tps"]) - 1 for r in scored]
    lines = [f"## Model {version}", ""]
    if errs:
        med = statistics.median(abs(e) for e in errs)
        within = sum(1 for e in errs if abs(e) <= 0.5)
        lines.append(f"Scored points: {len(errs)}; median absolute error **{med:.0%}**; within 50%: "
                     f"**{within} of {len(errs)} ({within / len(errs):.0%})**; calibration points "
                     f"{len(rows) - len(scored)}.")
        lines.append("")
    detail = {}
    jf = out / f"predictions-{version}.json"
    if jf.exists():
        detail = json.loads(jf.read_text())
    if cores == 16:
        by = {(r["point"].split("/")[1], r["workload"], r["variant"], int(r["clients"])): r for r in rows}
        lines += ["### The 14 clear pairs (variant / stock, patched build, same clients)", "",
                  "| workload | variant | clients | measured | predicted | same side of 1 |", "|---|---|---:|---:|---:|---|"]
        same = 0
        for w, v, c, d in CLEAR_PAIRS:
            a_ = by.get((d, w, v, c))
            b_ = by.get((d, w, "stock", c))
            if not a_ or not b_:
                lines.append(f"| {w} | {v} | {c} | - | - | (no prediction) |")
                continue
            mr = float(a_["measured_tps"]) / float(b_["measured_tps"])
            pr = float(a_["predicted_tps"]) / float(b_["predicted_tps"])
            ok = (mr < 1) == (pr < 1)
            same += ok
            lines.append(f"| {w} | {v} | {c} | {mr:.3f} | {pr:.3f} | {'yes' if ok else 'no'} |")
        lines += ["", f"Same side of 1: **{same} of {len(CLEAR_PAIRS)}**.", ""]
    lines += ["### Every point", "",
              "| point | measured tps | predicted tps | error | calibration | top simulated waits (sleeps/txn, us/txn) | "
              "top measured waits |", "|---|---:|---:|---:|---|---|---|"]
    for r in rows:
        m = meas[r["point"]]
        e = float(r["predicted_tps"]) / float(r["measured_tps"]) - 1
        sim = detail.get(r["point"], {}).get("tranches", {})
        n = max(1, detail.get(r["point"], {}).get("transactions", 1))
        st = sorted(sim.items(), key=lambda kv: -kv[1]["wait_ns"])[:3]
        mt = sorted(m.tranches.items(), key=lambda kv: -kv[1]["wait_us"])[:3]
        sdesc = "; ".join(f"{k} {v['sleeps'] / n:.2f}, {v['wait_ns'] / n / 1000:.1f}" for k, v in st
                          if v["wait_ns"] > 0)
        mdesc = "; ".join(f"{k} {v['sleeps']:.2f}, {v['wait_us']:.1f}" for k, v in mt if v["wait_us"] > 0.05)
        lines.append(f"| {r['point']} | {r['measured_tps']} | {r['predicted_tps']} | {e:+.0%} | {r['calibration']} | "
                     f"{sdesc or '-'} | {mdesc or '-'} |")
    lines.append("")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("predict")
    p.add_argument("--set", default="sixteen")
    p.add_argument("--out", required=True)
    p.add_argument("--machine")
    p.add_argument("--traces")
    p.add_argument("--scale", action="append")
    p.add_argument("--tag")
    p.add_argument("--only")
    p.add_argument("--max-events", type=float)
    c = sub.add_parser("compare")
    c.add_argument("--set", default="sixteen")
    c.add_argument("--out", required=True)
    a = ap.parse_args()
    return cmd_predict(a) if a.cmd == "predict" else cmd_compare(a)


if __name__ == "__main__":
    sys.exit(main())
