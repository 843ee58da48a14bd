"""Reproduce committed predictions: a row with `make predict`, or every
committed prediction set of the current model version.

    python3 -m flexlab sim reproduce RESULTS/validation.csv [--point NAME] [--version V]
    python3 -m flexlab sim reproduce --all [--jobs N]

runs `make predict WORKLOAD= VARIANT= CORES= CLIENTS=` from the top of the
checkout with the row's settings and the inputs its predictions were made
with (MACHINE=, TRACES=, TRACES_MACHINE= from predictions-<tag>.inputs.json
beside them; the default machine and traces where there is none) and checks that the `predicted tps = N`
it prints is the row's predicted_tps.  Without --point: the row of the
latest model version (or --version) whose prediction is quickest to
reproduce (fewest cores and clients, select-only first).  Exit 0 when equal.

--all re-runs every prediction set of the current model version committed
under results/: each predictions-<version>[-TAG].csv of a validation
(results/*-flexsim-validation/*/, with the inputs its .inputs.json names and
the points of the run its rows name) with `python3 -m flexlab sim validate
predict`, and each predictions-<version>.csv of results/*-flexsim-predictions/
with `python3 -m flexlab sim designs`, into a temporary directory, and compares
every predicted figure with the committed one.  Exit 0 when all are equal.
(v3's three sets: 16 minutes of CPU, 12 with 2 jobs; make predict-check.)
"""

import argparse
import concurrent.futures
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from . import baselines as B
from . import params as P

TOP = Path(__file__).resolve().parent.parent.parent


def read_rows(path):
    """The rows of a CSV file, as dicts (the file closed again)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def pick(rows, point=None, version=None):
    # the baselines' rows are not the simulator's: nothing to re-run
    rows = [r for r in rows if r["predicted_tps"] != "" and r["model_version"] not in B.NAMES]
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
        if f.exists() and preds.exists() and any(r["point"] == row["point"] for r in read_rows(preds)):
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
    m = re.search(r"^predicted tps = (\d+)(?:  \(a prediction; .*\))?$", p.stdout, re.M)
    got = int(m.group(1)) if m else None
    return " ".join(cmd[4:]), got, p


def committed_sets(version=None):
    """[(kind, path)] of the committed prediction sets of a model version
    (default: the current one): 'validation' or 'designs'."""
    version = version or P.MODEL_VERSION
    sets = []
    for f in sorted(TOP.glob("results/*-flexsim-validation/*/predictions-*.csv")):
        if f.stem[len("predictions-"):].split("-")[0] == version:
            sets.append(("validation", f))
    for f in sorted(TOP.glob("results/*-flexsim-predictions/predictions-*.csv")):
        if f.stem == f"predictions-{version}":
            sets.append(("designs", f))
    return sets


def rerun_command(kind, path, out):
    """The command that made a committed set, writing into out."""
    py = [sys.executable, "-m", "flexlab", "sim"]
    if kind == "designs":
        return py + ["designs", "--out", str(out)]
    tag = path.stem[len("predictions-"):]
    rows = read_rows(path)
    run = rows[0]["point"].split("/")
    # a point is 2026-11-22-16core/RUN/... (the 16-core run) or 2core/RUN/...
    # (a flexbench run of this lab, results/RUN)
    setname = "sixteen" if run[0] == "2026-11-22-16core" else str(TOP / "results" / run[1])
    inputs = path.with_name(f"predictions-{tag}.inputs.json")
    i = json.loads(inputs.read_text()) if inputs.exists() else {}
    if i.get("set"):
        setname = str(TOP / i["set"])       # a plan (its runs are next to it) or a run directory
    cmd = py + ["validate", "predict", "--set", setname, "--out", str(out)]
    if i.get("machine"):
        cmd += ["--machine", i["machine"]]
    if i.get("traces"):
        cmd += ["--traces", str(TOP / moved(i["traces"]))]
    if i.get("traces_machine"):
        cmd += ["--traces-machine", i["traces_machine"]]
    if "-" in tag:
        cmd += ["--tag", tag.split("-", 1)[1]]
    return cmd


def figures(kind, path):
    """{point: the predicted figures} of a set's CSV"""
    rows = read_rows(path)
    if kind == "designs":
        return {(r["workload"], r["variant"], r["cores"], r["clients"]):
                (r["predicted_tps"], r["stock_predicted_tps"], r["ratio"]) for r in rows}
    return {r["point"]: r["predicted_tps"] for r in rows}


def rerun_set(kind, path):
    """Re-run one committed set; returns (path, [differences], log tail)."""
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run(rerun_command(kind, path, out), cwd=TOP / "bench-scripts",
                           capture_output=True, text=True)
        new = Path(out) / path.name
        if p.returncode != 0 or not new.exists():
            return path, [f"the re-run failed (exit {p.returncode})"], (p.stdout + p.stderr)[-2000:]
        want, got = figures(kind, path), figures(kind, new)
        diffs = [f"{k}: committed {want.get(k)}, re-run {got.get(k)}"
                 for k in sorted(set(want) | set(got), key=str) if want.get(k) != got.get(k)]
        return path, diffs, ""


def rerun_all(jobs=2, version=None):
    """Re-run every committed set of the model version; prints each one's
    verdict, returns the number of sets that differ."""
    sets = committed_sets(version)
    if not sets:
        print(f"no committed prediction set of model {version or P.MODEL_VERSION}")
        return 1
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for (kind, _), (path, diffs, log) in zip(sets, ex.map(lambda s: rerun_set(*s), sets)):
            name = path.relative_to(TOP)
            if diffs:
                bad += 1
                print(f"{name}: {len(diffs)} figures differ")
                for d in diffs[:20]:
                    print("  " + d)
                if log:
                    print(log)
            else:
                print(f"{name}: every figure re-run identically ({len(figures(kind, path))} points)")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="?")
    ap.add_argument("--point")
    ap.add_argument("--version")
    ap.add_argument("--all", action="store_true", help="re-run every committed set of the current model version")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args(argv)
    if a.all:
        return 1 if rerun_all(a.jobs) else 0
    if not a.csv:
        ap.error("name a validation.csv, or --all")
    row = pick(read_rows(a.csv), a.point, a.version)
    cmd, got, p = run(row)
    want = int(row["predicted_tps"])
    print(f"{row['point']} ({row['model_version']}): validation.csv {want}, `make {cmd}` {got}")
    if got != want:
        sys.stderr.write(p.stdout + p.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
