"""Reproduce a row of a validation.csv with `make predict`.

    python3 -m flexsim.reproduce RESULTS/validation.csv [--point NAME] [--version V]

runs `make predict WORKLOAD= VARIANT= CORES= CLIENTS=` from the top of the
checkout with the row's settings and the inputs its predictions were made
with (MACHINE=, TRACES=, TRACES_MACHINE= from predictions-<tag>.inputs.json
beside them; the default machine and traces where there is none) and checks that the `predicted tps = N`
it prints is the row's predicted_tps.  Without --point: the row of the
latest model version (or --version) whose prediction is quickest to
reproduce (fewest cores and clients, select-only first).  Exit 0 when equal.
"""

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from . import params as P

TOP = Path(__file__).resolve().parent.parent.parent


def pick(rows, point=None, version=None):
    rows = [r for r in rows if r["predicted_tps"] != ""]
    if point:
        rows = [r for r in rows if r["point"] == point]
        if not rows:
            raise SystemExit(f"no predicted row {point!r}")
    version = version or (P.MODEL_VERSION if any(r["model_version"] == P.MODEL_VERSION for r in rows)
                          else sorted({r["model_version"] for r in rows})[-1])
    rows = [r for r in rows if r["model_version"] == version]
    if not rows:
        raise SystemExit(f"no predicted row of model version {version}")
    return min(rows, key=lambda r: (r["workload"] != "select-only", int(r["cores"]), int(r["clients"])))


def moved(path):
    """A directory an inputs file names under bench-scripts/results/, where
    the runs were until they moved to the top-level results/ (the files
    keep what was written when the predictions were made)."""
    old = "bench-scripts/results/"
    return "results/" + path[len(old):] if path.startswith(old) else path


def inputs_of(row):
    """The machine, traces and traces' machine a row's predictions were made
    with (predictions-<tag>.inputs.json beside the predictions-<tag>.csv that
    has the row's point), as make variables."""
    tag = row["model_version"]
    for d in sorted(TOP.glob("results/*-flexsim-validation/*/")):
        f = d / f"predictions-{tag}.inputs.json"
        preds = d / f"predictions-{tag}.csv"
        if f.exists() and preds.exists() and any(r["point"] == row["point"] for r in csv.DictReader(open(preds))):
            i = json.loads(f.read_text())
            out = []
            if i.get("machine"):
                out.append(f"MACHINE={i['machine']}")
            if i.get("traces"):
                out.append(f"TRACES={TOP / moved(i['traces'])}")
            if i.get("traces_machine"):
                out.append(f"TRACES_MACHINE={i['traces_machine']}")
            return out
    return []


def run(row):
    if row["model_version"].split("-")[0] != P.MODEL_VERSION:
        raise SystemExit(f"the row is of model {row['model_version']}, the code is {P.MODEL_VERSION}: "
                         "check out the commit of that version")
    cmd = ["make", "-s", "-C", str(TOP), "predict", f"WORKLOAD={row['workload']}", f"VARIANT={row['variant']}",
           f"CORES={row['cores']}", f"CLIENTS={row['clients']}"] + inputs_of(row)
    p = subprocess.run(cmd, capture_output=True, text=True)
    m = re.search(r"^predicted tps = (\d+)$", p.stdout, re.M)
    got = int(m.group(1)) if m else None
    return " ".join(cmd[4:]), got, p


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--point")
    ap.add_argument("--version")
    a = ap.parse_args(argv)
    row = pick(list(csv.DictReader(open(a.csv))), a.point, a.version)
    cmd, got, p = run(row)
    want = int(row["predicted_tps"])
    print(f"{row['point']} ({row['model_version']}): validation.csv {want}, `make {cmd}` {got}")
    if got != want:
        sys.stderr.write(p.stdout + p.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
