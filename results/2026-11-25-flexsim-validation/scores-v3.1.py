"""The scores of model v3.1 beside v3's and the flat baseline's, from the
committed files of this directory (DECLARED-v3.1.md says what they are
worth: both runs were seen before v3.1 was written).

    python3 results/2026-11-25-flexsim-validation/scores-v3.1.py

The flat baseline (issue 43's): the throughput of the calibrations taken
on the idle 2-core run's machine before it, the 1-client one at 1 client
and the 2-client one (the simulator's input) at every higher client count,
for every variant: the rows of model_version "flat" that
`flexlab sim validate compare --calibrations` wrote (flexsim/baselines.py).
"""

import csv
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent


def rows(d, version):
    return [r for r in csv.DictReader(open(HERE / d / "validation.csv"))
            if r["model_version"] == version and r["calibration"] == "false" and r["predicted_tps"] != ""]


def err(pred, meas):
    return abs(float(pred) / float(meas) - 1)


def line(name, errs):
    return (f"| {name} | {statistics.median(errs):.1%} | {sum(e <= 0.2 for e in errs)} of {len(errs)} "
            f"| {sum(e <= 0.5 for e in errs)} of {len(errs)} |")


def by_clients(rs, pred):
    out = {}
    for r in rs:
        out.setdefault(int(r["clients"]), []).append(err(pred(r), r["measured_tps"]))
    return " ".join(f"{c}: {statistics.median(e):.0%}" for c, e in sorted(out.items()))


def main():
    flat_rows = {r["point"]: r["predicted_tps"] for r in rows("2core-idle2", "flat")}

    def flat(r):
        return flat_rows[r["point"]]
    print("## 2core-idle2 (56 points)\n")
    print("| predictor | median absolute error | within 20% | within 50% |\n|---|---:|---:|---:|")
    v3, v31 = rows("2core-idle2", "v3-t1126"), rows("2core-idle2", "v3.1-t1126")
    print(line("v3", [err(r["predicted_tps"], r["measured_tps"]) for r in v3]))
    print(line("v3.1", [err(r["predicted_tps"], r["measured_tps"]) for r in v31]))
    print(line("flat baseline", [err(flat(r), r["measured_tps"]) for r in v31]))
    print()
    print("By client count (median absolute error):\n")
    print(f"- v3: {by_clients(v3, lambda r: r['predicted_tps'])}")
    print(f"- v3.1: {by_clients(v31, lambda r: r['predicted_tps'])}")
    print(f"- flat baseline: {by_clients(v31, flat)}")
    print()
    for d, a, b in (("2core-idle2", "v3-t1126", "v3.1-t1126"), ("16core", "v3", "v3.1")):
        pa = {r["point"]: r for r in rows(d, a)}
        moved = [(r["point"], float(r["predicted_tps"]) / float(pa[r["point"]]["predicted_tps"]) - 1)
                 for r in rows(d, b) if r["predicted_tps"] != pa[r["point"]]["predicted_tps"]]
        big = sorted(moved, key=lambda m: -abs(m[1]))[:3]
        print(f"{d}: {len(moved)} of {len(pa)} scored predictions moved; the most: "
              + "; ".join(f"{p.split('/', 2)[2]} {m:+.1%}" for p, m in big))
    print("\n## 16core (64 scored points)\n")
    print("| predictor | median absolute error | within 20% | within 50% |\n|---|---:|---:|---:|")
    for v in ("v3", "v3.1"):
        print(line(v, [err(r["predicted_tps"], r["measured_tps"]) for r in rows("16core", v)]))


if __name__ == "__main__":
    main()
