"""The simulator's validation, in two steps so that predictions are
committed before they meet a measurement:

  python3 -m flexlab sim validate predict --set sixteen|DIR|PLAN --out RESULTS [--scale NAME=F ...] [--tag TAG]
      simulates every point of a set (sixteen: the 74 pgbench points of the
      16-core run of 2026-11-22; DIR: a flexbench run directory of this
      machine) and writes RESULTS/predictions-<model version>[-TAG].csv
      and .json (the simulator's own counters per point).  Reads the
      points' settings only, never their measured figures.

  python3 -m flexlab sim validate runs --plan PLAN
      runs the runs of a plan (a file of lines 'NAME flexbench-run-options';
      run NAME goes to the directory NAME next to the file) that have not
      been run.  --set PLAN names the plan's points: predict reads them
      from the plan's options (before any run), compare from its runs.

  python3 -m flexlab sim validate compare --out RESULTS [--set ...] [--calibrations M1,M2,...]
      joins every predictions-*.csv of RESULTS with the measurements and
      writes RESULTS/validation.csv (point, workload, variant, cores,
      clients, measured_tps, predicted_tps, model_version, calibration)
      and RESULTS/comparison.md: the error of each point, the median
      absolute error and the share within 50% over the scored points, the
      issue's 14 clear pairs and which side of 1 each comes out, and each
      point's tranches, simulated beside measured.  With --calibrations
      (the calibration runs the simulator was given, by machine name:
      flexsim/calibration/M-stock.json), the baselines of
      flexsim/baselines.py get rows too (model_version flat and usl,
      RESULTS/baselines.inputs.json says from what), and comparison.md
      opens with every version against them by client count.

  python3 -m flexlab sim validate sensitivity --out RESULTS [--set ...] [--only ...] [--params ...]
      the chosen points again with each parameter halved and doubled
      (RESULTS/sensitivity-<version>.csv; compare adds its table).

  python3 -m flexlab sim validate combine --out RESULTS
      RESULTS/validation.csv from every RESULTS/*/validation.csv, and
      RESULTS/scores.md: each set's versions against its baselines by
      client count.

Declared calibration points (kept out of the score, said before any
comparison): the A/A points (aa-calibration/) and the group-commit points
(overhead-groupcommit/, group-commit) of the 16-core run.
"""

import argparse
import csv
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path


from flexsim import baselines as B
from flexsim import measured as MS
from flexsim import params as P
from flexsim import predict as PR

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


def plan_runs(plan):
    """[(name, options)] of a plan: a file of lines 'NAME OPTIONS...', each
    run NAME a flexbench run (`flexlab bench run OPTIONS --out NAME`, the
    directory NAME next to the file), '#' starting a comment.  A plan is
    written and committed before its runs, with the predictions of their
    points (DECLARED-v4.md)."""
    plan = Path(plan)
    runs = []
    for i, ln in enumerate(plan.read_text().splitlines(), 1):
        ln = ln.split("#", 1)[0].strip()
        if not ln:
            continue
        name, *opts = shlex.split(ln)
        if "/" in name or name.startswith("-"):
            raise SystemExit(f"{plan}:{i}: a run's name comes first, a directory name, not {name!r}")
        if "--out" in opts:
            raise SystemExit(f"{plan}:{i}: --out is the run's name, the line's first word")
        runs.append((name, opts, i))
    if not runs:
        raise SystemExit(f"{plan}: no runs")
    return runs


def planned_points(plan):
    """The points the runs of a plan measure (as flexbench's matrix makes
    them), without measurements: what a prediction of the plan reads."""
    from flexbench import cli as FC
    from flexbench import config as FCF
    from flexbench.matrix import Matrix
    plan = Path(plan)
    pts = []
    for name, opts, i in plan_runs(plan):
        try:
            args = FCF.resolve_matrix(FC.build_parser().parse_args(["run", *opts, "--out", str(plan.parent / name)]))
        except FCF.UsageError as e:
            raise SystemExit(f"{plan}:{i}: {e}")
        mx = Matrix(args)
        for w in args.workloads:
            for b, v in mx.configs(w):
                for c in args.clients:
                    m = MS.MeasuredPoint()
                    m.run, m.workload, m.build, m.variant, m.clients = name, w, b, v, c
                    pts.append(m)
    return pts


def points_of(setname, planned=False):
    """(points, cores) of a set: sixteen, a flexbench run directory of this
    machine, or a plan file (planned: its points before they are measured;
    else the measured points of its runs)."""
    if setname == "sixteen":
        return MS.sixteen_core_points(), 16
    if Path(setname).is_file():
        if planned:
            return planned_points(setname), 2
        pts = []
        for name, _, _ in plan_runs(setname):
            d = Path(setname).parent / name
            if not (d / "runs.csv").is_file():
                raise SystemExit(f"{setname}: run {name} has not been run ({d}/runs.csv is missing)")
            pts += MS.load_run(d)
        return pts, 2
    pts = MS.load_run(setname)
    return pts, 2


def cmd_runs(a):
    """Run a plan's runs that have not been run, in the plan's order, each
    with flexbench (`flexlab bench run OPTIONS --out DIR/NAME`)."""
    plan = Path(a.plan)
    planned_points(plan)                          # every line checked before any run starts
    for name, opts, _ in plan_runs(plan):
        d = plan.parent / name
        if (d / "runs.csv").is_file():
            print(f"validate: {name} has been run ({d}), not again", flush=True)
            continue
        if d.exists():
            raise SystemExit(f"{d} exists but has no runs.csv (an interrupted run?): remove it to run {name}")
        cmd = [sys.executable, "-m", "flexlab", "bench", "run", *opts, "--out", str(d)]
        print(f"validate: {name}: {' '.join(cmd[1:])}", flush=True)
        rc = subprocess.run(cmd).returncode
        if rc != 0:
            raise SystemExit(f"validate: run {name} failed (exit {rc})")
    return 0


def cmd_predict(a):
    pts, cores = points_of(a.set, planned=True)
    if a.traces_machine:
        P.machine_profile_path(a.traces_machine)
        PR.set_traces_machine(a.traces_machine)
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
        name = point_name(m, cores)
        if key in cache:
            res = cache[key]
        else:
            try:
                res = PR.simulate(m.workload, var, cores, m.clients, machine=a.machine, seed=1,
                                  traces_root=a.traces, scale=scale or None,
                                  max_events=a.max_events or PR.MAX_EVENTS)
            except PR.UsageError as e:
                res = {"error": str(e)}                 # no traces of it: a row without a prediction
            except PR.StallError as e:
                # the model deadlocked or livelocked on the point: no
                # prediction, and a failure of the model (the score counts it)
                res = {"error": f"stalled: {e}"}
            cache[key] = res
        if "error" in res:
            rows.append({"point": name, "workload": m.workload, "variant": var, "cores": cores, "clients": m.clients,
                         "predicted_tps": "", "model_version": tag,
                         "calibration": "true" if cores == 16 and is_calibration(m) else "false"})
            detail[name] = {"error": res["error"]}
            print(f"[{i + 1}/{len(pts)}] {name}: not predicted ({res['error']})", flush=True)
            continue
        rows.append({"point": name, "workload": m.workload, "variant": var, "cores": cores, "clients": m.clients,
                     "predicted_tps": round(res["tps"]), "model_version": tag,
                     "calibration": "true" if cores == 16 and is_calibration(m) else "false"})
        detail[name] = {k: res[k] for k in ("tps", "transactions", "sim_ns", "events", "cpu_utilization",
                                            "tranches", "counters", "preemptions", "wakeups", "wall_s",
                                            "switches", "refill_ns", "lone_dispatches", "wake_preemptions",
                                            "slices",
                                            "machine", "traces_variant")}
        print(f"[{i + 1}/{len(pts)}] {name}: {res['tps']:.0f} tps ({res['wall_s']:.1f} s, "
              f"{time.time() - t_start:.0f} s in all)", flush=True)
    # what make predict needs besides a row's settings to reproduce it
    inputs = {"machine": a.machine, "traces": str(Path(a.traces).resolve().relative_to(PR.TOP))
              if a.traces else None, "traces_machine": a.traces_machine}
    if Path(a.set).exists():
        # the run directory or plan predicted (a plan's points name its runs,
        # not where they are: reproduce needs it)
        inputs["set"] = str(Path(a.set).resolve().relative_to(PR.TOP))
    (out / f"predictions-{tag}.inputs.json").write_text(json.dumps(inputs, indent=1) + "\n")
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


def baseline_rows(pts, cores, cals, flat_cals=None):
    """Rows of validation.csv for each baseline over the measured points,
    and for each baseline that could not be fitted, why.  flat_cals: the
    calibrations flat uses, where a declaration names fewer than USL's."""
    rows, why = [], {}
    for name in B.NAMES:
        use = flat_cals if name == "flat" and flat_cals else cals
        try:
            pred = [(m, B.predict(name, use, m.workload, cores, m.clients)) for m in pts]
        except B.BaselineError as e:
            why[name] = str(e)
            continue
        rows += [{"point": point_name(m, cores), "workload": m.workload, "variant": row_variant(m),
                  "cores": cores, "clients": m.clients, "measured_tps": round(m.tps),
                  "predicted_tps": "" if x is None else round(x), "model_version": name,
                  "calibration": "true" if cores == 16 and is_calibration(m) else "false"} for m, x in pred]
    return rows, why


def by_clients(allrows, why=None):
    """The table that opens comparison.md (and the results' README): per
    client count, each version's and each baseline's median absolute error
    over the scored points, and how many are within 20%."""
    scored = [r for r in allrows if r["calibration"] == "false" and r["predicted_tps"] != ""]
    versions = sorted({r["model_version"] for r in allrows if r["model_version"] not in B.NAMES},
                      key=version_key) + [b for b in B.NAMES if b in {r["model_version"] for r in allrows}]
    clients = sorted({int(r["clients"]) for r in scored})
    err = {}
    for r in scored:
        e = abs(float(r["predicted_tps"]) / float(r["measured_tps"]) - 1)
        for c in (int(r["clients"]), "all"):
            err.setdefault((r["model_version"], c), []).append(e)

    def cell(v, c):
        e = err.get((v, c))
        if not e:
            return "-"
        return f"{statistics.median(e):.0%} ({sum(x <= 0.2 for x in e)}/{len(e)})"
    lines = ["| clients | " + " | ".join(versions) + " |", "|---:|" + "---:|" * len(versions)]
    for c in clients + ["all"]:
        lines.append(f"| {c} | " + " | ".join(cell(v, c) for v in versions) + " |")
    lines += ["", "Each cell: the median absolute error over the scored points, and (within 20%/predicted)."]
    for name, reason in sorted((why or {}).items()):
        lines.append(f"{name}: not fitted: {reason}.")
    return lines


def version_key(v):
    """v1 < v1.1 < v1.2 < v2-t1126 < v3 < v3.1 (a tag after the number)."""
    num = v[1:].split("-")[0]
    return tuple(int(x) if x.isdigit() else 0 for x in num.split(".")), v


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
    why = {}
    if a.calibrations:
        try:
            cals = [B.load_calibration(n) for n in a.calibrations.split(",")]
            flat_cals = [B.load_calibration(n) for n in a.flat_calibrations.split(",")] \
                if a.flat_calibrations else None
        except (B.BaselineError, P.ProfileError) as e:
            raise SystemExit(f"--calibrations: {e}")
        brows, why = baseline_rows(pts, cores, cals, flat_cals)
        allrows += brows
        desc = [{"machine": c.machine, "cores": c.cores, "clients": c.clients} for c in cals]
        inputs = {"calibrations": desc, "not_fitted": why}
        if flat_cals:
            inputs["flat_calibrations"] = [{"machine": c.machine, "cores": c.cores, "clients": c.clients}
                                           for c in flat_cals]
        (out / "baselines.inputs.json").write_text(json.dumps(inputs, indent=1) + "\n")
    with open(out / "validation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in allrows:
            w.writerow({k: r[k] for k in FIELDS})
    versions = sorted({r["model_version"] for r in allrows if r["model_version"] not in B.NAMES})
    lines = [f"# Validation: {a.set}", ""]
    if a.calibrations:
        lines += ["## Every version against the baselines, by client count", "",
                  f"Baselines (flexsim/baselines.py) from the calibrations {a.calibrations}"
                  + (f" (flat from {a.flat_calibrations})" if a.flat_calibrations else "") + ".", ""]
        lines += by_clients(allrows, why) + [""]
    for v in versions:
        rows = [r for r in allrows if r["model_version"] == v]
        lines += summary(v, rows, meas, out, cores)
    for fn in sorted(out.glob("sensitivity-*.csv")):
        lines += sensitivity_summary(fn, allrows, cores)
    (out / "comparison.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:60]))
    return 0


def summary(version, rows, meas, out, cores):
    allscored = [r for r in rows if r["calibration"] == "false"]
    scored = [r for r in allscored if r["predicted_tps"] != ""]
    errs = [float(r["predicted_tps"]) / float(r["measured_tps"]) - 1 for r in scored]
    lines = [f"## Model {version}", ""]
    if errs:
        med = statistics.median(abs(e) for e in errs)
        within = sum(1 for e in errs if abs(e) <= 0.5)
        within20 = sum(1 for e in errs if abs(e) <= 0.2)
        lines.append(f"Scored points: {len(allscored)}, of them predicted {len(errs)} (the others have no "
                     f"traces); over the predicted ones: median absolute error **{med:.0%}**; within 50%: "
                     f"**{within} of {len(errs)} ({within / len(errs):.0%})**; within 20%: {within20} of "
                     f"{len(errs)}; calibration points {len(rows) - len(allscored)}.")
        lines.append("")
    rows = [r for r in rows if r["predicted_tps"] != ""] + [r for r in rows if r["predicted_tps"] == ""]
    detail = {}
    jf = out / f"predictions-{version}.json"
    if jf.exists():
        detail = json.loads(jf.read_text())
    if cores == 16:
        by = {(r["point"].split("/")[1], r["workload"], r["variant"], int(r["clients"])): r for r in rows}
        lines += ["### The 14 clear pairs (variant / stock, patched build, same clients)", "",
                  "| workload | variant | clients | measured | predicted | same side of 1 |", "|---|---|---:|---:|---:|---|"]
        same = clear = 0
        for w, v, c, d in CLEAR_PAIRS:
            a_ = by.get((d, w, v, c))
            b_ = by.get((d, w, "stock", c))
            if not a_ or not b_ or a_["predicted_tps"] == "" or b_["predicted_tps"] == "":
                mr = (f"{float(a_['measured_tps']) / float(b_['measured_tps']):.3f}" if a_ and b_ else "-")
                lines.append(f"| {w} | {v} | {c} | {mr} | - | (no prediction: no traces) |")
                continue
            mr = float(a_["measured_tps"]) / float(b_["measured_tps"])
            pr = float(a_["predicted_tps"]) / float(b_["predicted_tps"])
            ok = (mr < 1) == (pr < 1)
            same += ok
            # a clear pair is one whose ratio lies outside 0.9-1.1 (the
            # issue's definition): a prediction inside it says "no clear
            # difference", whichever side of 1 its noise falls on
            decided = ok and not 0.9 <= pr <= 1.1
            clear += decided
            lines.append(f"| {w} | {v} | {c} | {mr:.3f} | {pr:.3f} | {'yes' if ok else 'no'}"
                         f"{'' if decided or not ok else ' (predicted within 0.9-1.1)'} |")
        lines += ["", f"Same side of 1: **{same} of {len(CLEAR_PAIRS)}**; of them predicted clear (outside "
                      f"0.9-1.1, as the pair was measured): **{clear}**.", ""]
    elif any(r["variant"] != "stock" for r in rows):
        lines += run_pairs(rows, meas)
    lines += ["### Every point", "",
              "| point | measured tps | predicted tps | error | calibration | top simulated waits (sleeps/txn, us/txn) | "
              "top measured waits |", "|---|---:|---:|---:|---|---|---|"]
    for r in rows:
        m = meas[r["point"]]
        if r["predicted_tps"] == "":
            lines.append(f"| {r['point']} | {r['measured_tps']} | - | - | {r['calibration']} | "
                         f"(no traces of {r['workload']}) | - |")
            continue
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


def run_pairs(rows, meas):
    """The variant pairs of a 2-core set: each variant point against stock
    of the same run and clients, the measured ratio with its interval from
    the interleaved repetitions (flexbench.stats), the predicted ratio; a
    pair is clear when its interval excludes 1 and its ratio lies outside
    0.9-1.1 (issue 43), and predicted right when the prediction lies on the
    same side of 1 and outside 0.9-1.1."""
    from flexbench import stats
    by = {(r["point"].split("/")[1], r["workload"], r["variant"], int(r["clients"])): r for r in rows}
    lines = ["### Variant pairs (variant / stock of the same run, same clients)", "",
             "| run | workload | variant | clients | measured [interval, coverage] | clear | predicted | "
             "predicted clear, same side |", "|---|---|---|---:|---|---|---:|---|"]
    clear = right = 0
    for (run, w, v, c), a_ in sorted(by.items()):
        b_ = by.get((run, w, "stock", c))
        if v == "stock" or b_ is None:
            continue
        cmp = stats.compare(meas[a_["point"]].rep_tps, meas[b_["point"]].rep_tps)
        if cmp is None:
            continue
        is_clear = not (cmp["low"] <= 1 <= cmp["high"]) and not 0.9 <= cmp["ratio"] <= 1.1
        pr = (float(a_["predicted_tps"]) / float(b_["predicted_tps"])
              if a_["predicted_tps"] != "" and b_["predicted_tps"] != "" else None)
        ok = pr is not None and (pr < 1) == (cmp["ratio"] < 1) and not 0.9 <= pr <= 1.1
        clear += is_clear
        right += is_clear and ok
        lines.append(f"| {run} | {w} | {v} | {c} | {cmp['ratio']:.3f} [{cmp['low']:.3f}, {cmp['high']:.3f}, "
                     f"{cmp['coverage']:.0%}] | {'yes' if is_clear else 'no'} | "
                     f"{'-' if pr is None else f'{pr:.3f}'} | {('yes' if ok else 'no') if is_clear else '-'} |")
    lines += ["", f"Clear pairs measured: **{clear}**; of them predicted clear on the same side: **{right}**.", ""]
    return lines


# what the sensitivity runs halve and double: the machine profile's constants
# and the model's assumptions (params.ASSUMPTIONS), and the CPU time the
# traces do not show
SENSITIVITY = ["line_transfer_ns", "uncontended_cas_ns", "sem_wake_cross_core_ns", "sem_wake_same_core_ns",
               "wal_flush_us", "wal_flush_page_us", "cpu_speed_ratio", "slice_ns", "outside_cpu", "c_pageinit_ns",
               "c_write_call_ns",
               "c_write_page_ns", "c_member_ns", "c_lockmgr_ns"]


def cmd_sensitivity(a):
    """Every SENSITIVITY parameter halved and doubled, over the points whose
    name contains one of --only (comma separated; default all): writes
    RESULTS/sensitivity-<version>.csv (parameter, factor, point, predicted
    tps).  Reads no measurement."""
    pts, cores = points_of(a.set)
    out = Path(a.out)
    sel = [m for m in pts if not a.only or any(o in point_name(m, cores) for o in a.only.split(","))]
    params = a.params.split(",") if a.params else SENSITIVITY
    fn = out / f"sensitivity-{P.MODEL_VERSION}.csv"
    done = set()
    if fn.exists():
        for r in csv.DictReader(open(fn)):
            done.add((r["parameter"], r["factor"], r["point"]))
    new = not fn.exists()
    with open(fn, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["parameter", "factor", "point", "predicted_tps"])
        if new:
            w.writeheader()
        for prm in params:
            for fac in (0.5, 2.0):
                cache = {}
                for m in sel:
                    name = point_name(m, cores)
                    if (prm, str(fac), name) in done:
                        continue
                    var = row_variant(m)
                    key = (m.workload, var, m.clients)
                    if key not in cache:
                        try:
                            PR.program_for(m.workload, var, a.traces)
                        except PR.UsageError:
                            cache[key] = None               # no traces of it
                            continue
                        cache[key] = PR.simulate(m.workload, var, cores, m.clients, machine=a.machine, seed=1,
                                                 traces_root=a.traces, scale={prm: fac},
                                                 max_events=a.max_events or PR.MAX_EVENTS)["tps"]
                    if cache[key] is None:
                        continue
                    w.writerow({"parameter": prm, "factor": fac, "point": name, "predicted_tps": round(cache[key])})
                    f.flush()
                print(f"{prm} x {fac}: {len(cache)} simulations", flush=True)
    return 0


def _scores(pred, rows, cores):
    """(median abs error, share within 50%, clear pairs on the measured side)
    of predictions {point: tps} over the scored rows they cover."""
    errs = [pred[r["point"]] / float(r["measured_tps"]) - 1 for r in rows
            if r["calibration"] == "false" and r["point"] in pred and pred[r["point"]] is not None]
    med = statistics.median(abs(e) for e in errs) if errs else None
    within = sum(1 for e in errs if abs(e) <= 0.5) / len(errs) if errs else None
    same = n = 0
    if cores == 16:
        by = {(r["point"].split("/")[1], r["workload"], r["variant"], int(r["clients"])): r for r in rows}
        for w, v, c, d in CLEAR_PAIRS:
            a_, b_ = by.get((d, w, v, c)), by.get((d, w, "stock", c))
            if not a_ or not b_ or a_["point"] not in pred or b_["point"] not in pred:
                continue
            n += 1
            mr = float(a_["measured_tps"]) / float(b_["measured_tps"])
            same += (mr < 1) == (pred[a_["point"]] / pred[b_["point"]] < 1)
    return med, within, same, n, len(errs)


def sensitivity_summary(fn, allrows, cores):
    version = fn.stem.split("-", 1)[1]
    rows = [r for r in allrows if r["model_version"] == version]
    base = {r["point"]: float(r["predicted_tps"]) for r in rows if r["predicted_tps"] != ""}
    sens = {}
    for r in csv.DictReader(open(fn)):
        sens.setdefault((r["parameter"], float(r["factor"])), {})[r["point"]] = float(r["predicted_tps"])
    if not sens:
        return []
    pts = set().union(*[set(v) for v in sens.values()])
    b = _scores({k: v for k, v in base.items() if k in pts}, rows, cores)
    lines = [f"## Sensitivity of {version} ({len(pts)} points; each parameter halved and doubled)", "",
             f"Baseline over these points: median absolute error {b[0]:.0%}, within 50% {b[1]:.0%}, "
             f"clear pairs {b[2]} of {b[3]}.", "",
             "| parameter | x0.5: median abs error | within 50% | pairs | median change of tps | "
             "x2: median abs error | within 50% | pairs | median change of tps |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for prm in dict.fromkeys(k[0] for k in sens):
        cells = []
        for fac in (0.5, 2.0):
            pr = sens.get((prm, fac), {})
            sc = _scores(pr, rows, cores)
            ch = statistics.median(pr[k] / base[k] - 1 for k in pr if base.get(k)) if pr else 0.0
            cells.append(f"{sc[0]:.0%} | {sc[1]:.0%} | {sc[2]} of {sc[3]} | {ch:+.0%}" if sc[0] is not None
                         else "- | - | - | -")
        lines.append(f"| {prm} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def cmd_combine(a):
    """RESULTS/validation.csv: the rows of every RESULTS/*/validation.csv,
    the 2-core check's first, then the 16-core run's (each in its order)."""
    out = Path(a.out)
    parts = []
    for fn in out.glob("*/validation.csv"):
        rows = list(csv.DictReader(open(fn)))
        parts.append((min((int(r["cores"]) for r in rows), default=0), str(fn), rows))
    with open(out / "validation.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for _, _, rows in sorted(parts):
            for r in rows:
                w.writerow({k: r[k] for k in FIELDS})
    print(f"wrote {out / 'validation.csv'}: {sum(len(p[2]) for p in parts)} rows")
    lines = ["# Every model version against the baselines, by client count", "",
             "Written by `python3 -m flexlab sim validate combine`, from each set's validation.csv; the "
             "baselines (flexsim/baselines.py) from the calibrations each set's baselines.inputs.json names.", ""]
    for _, fn, rows in sorted(parts):
        inp = Path(fn).parent / "baselines.inputs.json"
        if not inp.exists():
            continue
        d = json.loads(inp.read_text())
        cals = [f"{c['machine']} ({c['clients']} client{'s' * (c['clients'] != 1)} on {c['cores']} cores)"
                for c in d["calibrations"]]
        lines += [f"## {Path(fn).parent.name}", "", "Calibrations: " + ", ".join(cals) + ".", ""]
        lines += by_clients(rows, d.get("not_fitted")) + [""]
    (out / "scores.md").write_text("\n".join(lines))
    print(f"wrote {out / 'scores.md'}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("predict")
    p.add_argument("--set", default="sixteen")
    p.add_argument("--out", required=True)
    p.add_argument("--machine")
    p.add_argument("--traces")
    p.add_argument("--traces-machine")
    p.add_argument("--scale", action="append")
    p.add_argument("--tag")
    p.add_argument("--only")
    p.add_argument("--max-events", type=float)
    se = sub.add_parser("sensitivity")
    se.add_argument("--set", default="sixteen")
    se.add_argument("--out", required=True)
    se.add_argument("--machine")
    se.add_argument("--traces")
    se.add_argument("--only")
    se.add_argument("--params")
    se.add_argument("--max-events", type=float)
    c = sub.add_parser("compare")
    c.add_argument("--set", default="sixteen")
    c.add_argument("--out", required=True)
    c.add_argument("--calibrations", help="the calibrations the simulator was given, by machine name "
                   "(flexsim/calibration/NAME-stock.json), for the baselines")
    c.add_argument("--flat-calibrations", help="the calibrations the flat baseline uses, where a declaration "
                   "names fewer than USL's (default: --calibrations)")
    ru = sub.add_parser("runs")
    ru.add_argument("--plan", required=True, help="a plan file (lines 'NAME flexbench run options')")
    cb = sub.add_parser("combine")
    cb.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    return {"predict": cmd_predict, "compare": cmd_compare, "sensitivity": cmd_sensitivity,
            "combine": cmd_combine, "runs": cmd_runs}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
