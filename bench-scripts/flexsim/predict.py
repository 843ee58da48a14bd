"""Predict one point: `make predict WORKLOAD=... VARIANT=... CORES=... CLIENTS=...`.

    python3 -m flexlab sim predict --workload W --variant V --cores C --clients N
        [--machine NAME] [--seed S] [--traces DIR] [--json]

Prints `predicted tps = N` and the per-tranche table (acquisitions, sleeps,
wait time per transaction, the hottest lock's exclusive utilization).  The
same arguments give the same figures (fixed seed, deterministic engine).

The machine: --machine names a profile of bench-scripts/flexsim/machines/;
by default 2core (this machine, measured) for 2 cores and 16core (the
16-core run of 2026-11-22: its assumed constants and the code it ran) for
16.  Any other count needs a profile named (16core-current: the 16-core
constants with this series' code, assumed for any count); the output names
the profile and whether its constants were measured or assumed.  The
traces: the workload's traces of the variant, or of stock settings when
the variant changes only protocols the simulator runs itself.
"""

import argparse
import csv
import json
import math
import os
import re
import statistics
import sys
import time
from pathlib import Path

from . import compile as C
from . import model as M
from . import params as P
from . import trace as T
from flexbench import config as bench_config

HERE = Path(__file__).resolve().parent

TOP = Path(os.environ.get("FLEXLOCK_TOP", HERE.parent.parent))
VARIANTS = TOP / "variants"

# settings whose protocols the simulator runs itself: a variant that changes
# only these replays the stock traces
SIM_ONLY = {"wal_insert_locks", "procarray_group_clear", "lwlock_shared_add", "wal_flush_wait",
            "wal_insert_reservation", "wal_buffer_init", "lwlock_implementation", "lwlock_read_biased"}
# what each machine profile runs: the 16-core run had the first holder design
MACHINE_SERIES = {"16core": {"flexsim.holder_version": "1"}, "16core-v4": {"flexsim.holder_version": "1"}}
# 16core-v4: 16core completed with model v4's figures as named assumptions
# (results/2026-11-25-flexsim-validation/assumptions-16core-v4.json)
MACHINE_FILE = {"16core-current": "16core", "16core-v4-current": "16core-v4"}
# variants of the 16-core run that have no config file (its walinsert sweep),
# and the names of stock settings in its A/A check and of the vanilla build
EXTRA_VARIANTS = {f"walinsert-{n}": {"wal_insert_locks": str(n)} for n in (1, 2, 4, 8, 16, 32, 64, 128)}
ALIASES = {"stock-again": "stock", "vanilla": "stock"}

# run length: enough simulated transactions, within an event budget
WARM_TXNS = 100
TARGET_TXNS = 1500
MIN_MEASURE_NS = 2e6
MAX_EVENTS = 6e6


class UsageError(Exception):
    pass


class StallError(Exception):
    """No progress: every process asleep or spinning for good (a bug of the
    model, reported rather than simulated forever)."""


STALL_NS = 60e9         # 60 simulated seconds without finishing the run


DEFAULT_MACHINE = {2: "2core", 16: "16core"}


def default_machine(cores):
    """The profile of a machine with that many cores, where the lab has one;
    no other count gets one without being asked (issue 43)."""
    if cores not in DEFAULT_MACHINE:
        raise UsageError(f"no machine profile of {cores} cores: name one with MACHINE= "
                         f"(16core-current: the 16-core run's assumed constants, for any count), "
                         f"or measure that machine (make machine-profile)")
    return DEFAULT_MACHINE[cores]


def profile_label(machine, prof):
    """What a profile is, for the output: its name, measured or assumed."""
    if prof.get("assumed"):
        return f"{machine} (assumed constants)"
    return f"{machine} (measured {str(prof.get('measured_at') or '')[:10]})"


def variant_settings(name):
    name = ALIASES.get(name, name)
    if name in EXTRA_VARIANTS and not (VARIANTS / f"{name}.conf").exists():
        return dict(EXTRA_VARIANTS[name])
    p = VARIANTS / f"{name}.conf"
    if not p.exists():
        known = sorted([x.stem for x in VARIANTS.glob("*.conf")] + list(EXTRA_VARIANTS) + list(ALIASES))
        raise UsageError(f"unknown variant {name!r} (known: {', '.join(known)})")
    out = {}
    for line in p.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or "=" not in line:
            continue
        k, v = (x.strip() for x in line.split("=", 1))
        v = v.strip("'\"")
        if not k.startswith("flexlock_test."):
            out[k] = v
    return out


def statements(workload):
    """Client statements per transaction of a workload's script (None for a
    workload of several scripts: round trips are then found by gap length)."""
    conf = bench_config.workload_conf(workload)
    if conf is None:
        raise UsageError(f"unknown workload {workload!r} (known: {', '.join(bench_config.list_workloads())})")
    text = conf.read_text()
    if re.search(r"^\s*scripts\s*=", text, re.M):
        return None
    m = re.search(r"^\s*script\s*=\s*(\S+)", text, re.M)
    script = conf.parent / (m.group(1) if m else f"{workload}.sql")
    n = 0
    for line in script.read_text().splitlines():
        s = line.strip()
        if not s or s.startswith("--") or s.startswith("\\"):
            continue
        if s.endswith(";"):
            n += 1
    return max(1, n)


def trace_dirs(root, workload, variant, settings):
    """The trace directory of (workload, variant) under root, else stock's
    when the variant changes only simulated protocols."""
    cands = [root / workload / variant, root / f"{workload}-{variant}"]
    for c in cands:
        if T.trace_files(str(c)):
            return c, variant
    if set(settings) <= SIM_ONLY:
        for c in (root / workload / "stock", root / f"{workload}-stock"):
            if T.trace_files(str(c)):
                return c, "stock"
        # else the traces of another variant that changes only simulated
        # protocols (first by name): what the simulator takes from a trace
        # is then the same as stock's
        wd = root / workload
        for c in sorted(wd.iterdir()) if wd.is_dir() else []:
            if c.is_dir() and T.trace_files(str(c)):
                try:
                    other = variant_settings(c.name)
                except UsageError:
                    continue
                if set(other) <= SIM_ONLY:
                    return c, c.name
    raise UsageError(f"no traces of {workload} with {variant} under {root}"
                     + ("" if set(settings) <= SIM_ONLY else
                        f" (it changes {', '.join(sorted(set(settings) - SIM_ONLY))}, "
                        "which the simulator takes from the traces: stock's will not do)"))


def build_traces(build, workload):
    """The newest traces of a build of the user's (make trace BUILD=NAME
    writes results/DATE-traces-NAME) that hold the workload."""
    from flexbench import builds, config as bc
    if not builds.is_known(build):
        raise UsageError(str(builds.unknown_build(build, "BUILD")))
    if not builds.has_series(build):
        raise UsageError(f"BUILD={build}: the {build} build has no lock traces (it lacks the series): "
                         f"predict a build laid on patched")
    if build in bc.KNOWN_BUILDS:
        return None
    # the traces of this build as it is: its record's commits in their meta.json
    want = (builds.record(build) or {}).get("commits")
    older = False
    for d in sorted(bc.RESULTS.glob(f"*-traces-{build}"), reverse=True):
        for meta in sorted((d / workload).glob("*/meta.json")):
            try:
                own = json.loads(meta.read_text()).get("own") or {}
            except ValueError:
                continue
            if own.get("commits") == want:
                return d
            older = True
    raise UsageError(f"no traces of {workload} on the {build} build as it is now under {bc.RESULTS}"
                     + (" (those there are of other patches)" if older else "")
                     + f": make trace BUILD={build} WORKLOAD={workload} VARIANT=stock first")


def set_traces_machine(name):
    global TRACES_MACHINE
    if name != TRACES_MACHINE:
        TRACES_MACHINE = name
        _cache.clear()


def default_traces():
    idx = HERE / "traces.json"
    if idx.exists():
        d = json.loads(idx.read_text())
        return (TOP / d["dir"]).resolve()
    return None


_warned = set()


# --calibration FILE: a calibration file of its own (make predict SCRIPT=),
# instead of calibration/MACHINE-stock.json
CALIBRATION_FILE = None


def load_calibration(workload, machine_name):
    """The calibration run of the traces' machine: calibration/MACHINE-stock.json
    when one was taken with that machine's profile (a later run on this
    machine, measured with its own profile), else 2core-stock.json (the
    traces' day)."""
    cal = HERE / "calibration" / f"{machine_name}-stock.json"
    if CALIBRATION_FILE:
        cal = Path(CALIBRATION_FILE)
    elif not machine_name or not cal.exists():
        if machine_name and not P.load_profile(P.machine_profile_path(machine_name)).get("assumed") \
                and machine_name not in _warned:
            # a measured machine without its own calibration: say so (a
            # companion profile of a calibrated one needs a copy of it, as
            # 2core-2026-11-26b1 has)
            _warned.add(machine_name)
            print(f"flexsim: no calibration/{machine_name}-stock.json: the CPU times of {cal.parent.name}/"
                  "2core-stock.json (the traces' day) are used", file=sys.stderr)
        machine_name = "2core"
        cal = HERE / "calibration" / "2core-stock.json"
    if not cal.exists():
        raise UsageError(f"no calibration ({cal}): run python3 -m flexlab sim calibrate")
    d = json.loads(cal.read_text())
    w = d["workloads"].get(workload)
    if w is None:
        raise UsageError(f"the calibration {cal.name} has no {workload}")
    return dict(w["median"], clients=d.get("clients", 1), cores=d.get("cores")), machine_name


def every_core_busy(cal):
    """Whether a calibration ran with every core busy (model v4.1): as many
    clients as cores at least, where it records its cores; else (before
    2026-11-28) more than one client, v3's test on the 2-core machine."""
    cores = cal.get("cores")
    return cal.get("clients", 1) >= cores if cores else cal.get("clients", 1) > 1


_cache = {}


def program_for(workload, variant, traces_root=None):
    nstat = statements(workload)
    settings = variant_settings(variant)
    root = Path(traces_root) if traces_root else default_traces()
    if root is None:
        raise UsageError("no traces: give --traces DIR (or TRACES=DIR), or commit flexsim/traces.json")
    d, used = trace_dirs(root, workload, variant, settings)
    key = str(d)
    if key not in _cache:
        traces = T.load_dir(d)
        _cache[key] = C.compile_traces(traces, statements=nstat, local_ns=trace_local_ns(),
                                       rt_gap_ns=30000.0)
    return _cache[key], settings, used, d


TRACES_MACHINE = "2core"


def trace_local_ns():
    """The local atomic cost of the traces' machine (by default 2core, the
    machine of the traces of 2026-11-25; --traces-machine names another)."""
    try:
        return P.const(P.load_profile(P.machine_profile_path(TRACES_MACHINE)), "uncontended_cas_ns")
    except P.ProfileError:
        return 10.0


def calibration_for(program, workload, machine_profile, machine_name=None):
    """The CPU time the traces do not show, on the traces' machine: the
    backend's per transaction outside the traced transaction (from the
    traces' begin lines: the time since the previous transaction less the
    wait for the client; else the 1-client calibration run's backend CPU
    less the traced CPU), and pgbench's per statement (the calibration
    run's pgbench CPU over the statements), each less the semaphore post it
    makes (the engine charges those)."""
    cal, cal_machine = load_calibration(workload, machine_name)
    R = program.mean("rts") + 1
    traced_cpu_us = (program.mean("cpu_ns") + _copy_ns(program)) / 1000.0
    prof2 = P.load_profile(P.machine_profile_path(cal_machine))      # the calibration machine's post
    post_us = P.const(prof2, "sem_wake_same_core_ns") / 2 / 1000.0
    if program.info.get("outside_backend_ns") is not None:
        backend_out = program.info["outside_backend_ns"] / 1000.0 - post_us
        source = "traces"
    else:
        backend_out = cal["backend_cpu_us_per_txn"] - traced_cpu_us - post_us
        source = "calibration run"
    client = cal["pgbench_cpu_us_per_txn"] / R - post_us
    # model v3: a calibration taken with every core busy (clients = cores)
    # measures the backend's CPU per transaction in the regime the
    # simulator's busy points run in; the traces (one client, a core woken
    # from idle at every round trip) may run slower: scale their CPU time so
    # that a transaction's backend CPU, traced and outside, is the
    # calibration's.  A 1-client calibration on more cores (v1 and v2's
    # rule) leaves it.  v4.1: every core busy is clients >= cores, so a
    # one-core machine's 1-client calibration scales its traces too (there
    # the traced wall time holds pgbench's turns on the same CPU);
    # calibrations that do not record their cores (before 2026-11-28):
    # more than one client, v3's test.
    trace_scale = 1.0
    if every_core_busy(cal) and traced_cpu_us + max(0.0, backend_out) > 0:
        trace_scale = cal["backend_cpu_us_per_txn"] / (traced_cpu_us + max(0.0, backend_out) + post_us)
    return {"c_backend_ns": max(0.0, backend_out) * 1000.0, "c_client_ns": max(0.0, client) * 1000.0,
            "trace_scale": trace_scale,
            "backend_outside_source": source, "statements": R, "traced_cpu_us": traced_cpu_us,
            "backend_cpu_us_per_txn": cal["backend_cpu_us_per_txn"],
            "pgbench_cpu_us_per_txn": cal["pgbench_cpu_us_per_txn"]}


def _copy_ns(program):
    tot = 0.0
    for t in program.txns:
        for op in t.ops:
            if op[0] == C.OP_WAL:
                tot += op[2]
            elif op[0] == C.OP_CLEAR:
                tot += op[1]
    return tot / len(program.txns)


def simulate(workload, variant, cores, clients, machine=None, seed=1, traces_root=None, scale=None,
             program=None, calib=None, max_events=MAX_EVENTS, target_txns=TARGET_TXNS):
    """One point: the result dict of model.Point.run with what went in."""
    if cores < 1 or clients < 1:
        raise UsageError("cores and clients must be at least 1")
    machine = machine or default_machine(cores)
    settings = variant_settings(variant)
    used, tdir = variant, None
    if program is None:
        program, settings, used, tdir = program_for(workload, variant, traces_root)
    profile_name = MACHINE_FILE.get(machine, machine)
    prof = P.load_profile(P.machine_profile_path(profile_name))
    settings = dict(settings)
    settings.update(MACHINE_SERIES.get(machine, {}))
    mach = P.machine_from_profile(prof, cores, scale)
    if calib is None:
        calib = calibration_for(program, workload, prof, profile_name)
    costs = P.costs(prof, calib, scale)
    pt = M.Point(program, mach, M.Variant(settings), costs, clients, seed=seed)
    t0 = time.perf_counter()
    res = run_point(pt, max_events, target_txns)
    res["wall_s"] = time.perf_counter() - t0
    res.update(workload=workload, variant=variant, cores=cores, clients=clients, machine=machine,
               model_version=P.MODEL_VERSION, traces=str(tdir) if tdir else None, traces_variant=used,
               seed=seed, machine_label=profile_label(machine, prof))
    return res


def run_point(pt, max_events=MAX_EVENTS, target_txns=TARGET_TXNS):
    """Warm up until WARM_TXNS transactions (or a quarter of the event
    budget), then measure until target_txns more, at least MIN_MEASURE_NS,
    within the event budget; and (model v4) never less than MIN_SLICES time
    slices, whatever the budget."""
    sim = pt.sim
    step = 1e6
    while pt.done < WARM_TXNS and sim.events < max_events / 4:
        sim.run(sim.now + step)
        step = min(step * 2, 50e6)
        if sim.now > STALL_NS:
            raise StallError(f"{pt.done} transactions in {sim.now / 1e9:.0f} simulated s: the simulation stalled")
    snap = pt._snapshot()
    t0 = sim.now
    ev0 = sim.events
    d0 = pt.done
    least = max(MIN_MEASURE_NS, P.MIN_SLICES * sim.SLICE)
    step = MIN_MEASURE_NS / 4
    while True:
        sim.run(sim.now + step)
        if sim.now - t0 >= least and (pt.done - d0 >= target_txns or sim.events - ev0 >= max_events):
            break
        if sim.now - t0 >= least and sim.events - ev0 >= 2 * max_events:
            break
        if sim.now - t0 > STALL_NS:
            raise StallError(f"{pt.done - d0} transactions in {(sim.now - t0) / 1e9:.0f} simulated s of "
                             "measurement: the simulation stalled")
        step = min(step * 1.5, 20e6)
    return pt._result(snap, sim.now - t0)


# the model's measured error beside a prediction: per core count, the
# comparison of v4 that stands for it (validation.csv's model_version)
MEASURED_ERROR = {
    2: ("v4-t1128c", "2core/stock/", "blind check (a)'s stock run, 2026-11-28, an AMD EPYC with 2 vCPUs",
        "2core-2026-11-28c"),
    16: ("v4", "2026-11-22-16core/", "the 16-core run of 2026-11-22, in sample: its measurements were known",
         "16core-v4"),
}
VALIDATION_CSV = TOP / "results" / "2026-11-25-flexsim-validation" / "validation.csv"


def measured_error(cores, clients, path=VALIDATION_CSV, machine=None):
    """What model v4 was measured to miss by near (cores, clients): a
    sentence, from the comparison that stands for that core count.  It
    names the profile that error was measured with where the prediction
    (on machine) used another: the error is that profile's, not this one's."""
    if cores not in MEASURED_ERROR:
        return (f"model v4's error on {cores} cores: never measured (it was measured on 2 cores, blind, and "
                "on 16, in sample)")
    version, prefix, what, scored = MEASURED_ERROR[cores]
    rows = []
    try:
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r["model_version"] == version and r["calibration"] == "false"
                    and r["point"].startswith(prefix) and r["predicted_tps"] and r["measured_tps"]]
    except OSError:
        pass
    if not rows:
        return f"model v4's error on {cores} cores: {path} has no rows of {version}"
    near = min({int(r["clients"]) for r in rows}, key=lambda c: (abs(math.log(c / clients)), c))
    errs = [abs(float(r["predicted_tps"]) / float(r["measured_tps"]) - 1) for r in rows
            if int(r["clients"]) == near]
    med = statistics.median(errs)
    other = f"; measured with the profile {scored}, this prediction used {machine}" \
        if machine and machine != scored else ""
    return (f"model v4's measured error at {cores} cores, {near} clients: median {100 * med:.0f}%, "
            f"{sum(e <= 0.2 for e in errs)} of {len(errs)} points within 20% ({what}{other})")


def table(res):
    n = max(1, res["transactions"])
    lines = [f"{'tranche':<16} {'acq/txn':>10} {'sleeps/txn':>11} {'wait us/txn':>12} {'hottest util':>13}"]
    for k, v in sorted(res["tranches"].items(), key=lambda kv: -kv[1]["wait_ns"]):
        lines.append(f"{k:<16} {v['acquires'] / n:>10.2f} {v['sleeps'] / n:>11.3f} {v['wait_ns'] / n / 1000:>12.2f} "
                     f"{v['hottest_utilization']:>13.3f}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="make predict", description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", required=True)
    ap.add_argument("--variant", default="stock")
    ap.add_argument("--cores", required=True)
    ap.add_argument("--clients", required=True)
    ap.add_argument("--machine")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--traces")
    ap.add_argument("--traces-machine", help="machine profile of the traces' machine (default 2core)")
    ap.add_argument("--calibration", help="a calibration file (flexlab sim calibrate) instead of the machine's")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--build", help="a build of yours (make build): its traces (make trace BUILD=), the newest "
                                    "unless --traces names them")
    a = ap.parse_args(argv)
    global CALIBRATION_FILE
    try:
        for name in ("cores", "clients", "seed"):
            v = getattr(a, name)
            if not re.fullmatch(r"[0-9]+", v or "") or int(v) < (0 if name == "seed" else 1):
                raise UsageError(f"{name.upper()} must be a positive integer, not {v!r}")
        cores, clients = int(a.cores), int(a.clients)
        if a.machine:
            P.machine_profile_path(MACHINE_FILE.get(a.machine, a.machine))
        if a.traces_machine:
            P.machine_profile_path(a.traces_machine)
            set_traces_machine(a.traces_machine)
        if a.calibration:
            if not Path(a.calibration).is_file():
                raise UsageError(f"no calibration file {a.calibration}")
            CALIBRATION_FILE = a.calibration
        traces = a.traces or os.environ.get("TRACES") or None
        if a.build and not traces:
            traces = build_traces(a.build, a.workload)
        res = simulate(a.workload, a.variant, cores, clients, a.machine, int(a.seed), traces)
    except (UsageError, StallError, P.ProfileError, T.TraceError) as e:
        print(f"make predict: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(res, indent=1, default=str))
        return 0
    on = f" on the {a.build} build, {res['traces']}" if a.build and a.build not in ("patched",) else ""
    print(f"flexsim {res['model_version']}: {res['workload']}, {res['variant']} (traces of {res['traces_variant']}{on}), "
          f"{cores} cores, {clients} clients, machine profile {res['machine_label']}; simulated {res['sim_ns'] / 1e6:.1f} ms, "
          f"{res['transactions']} transactions, {res['events']} events in {res['wall_s']:.1f} s")
    print(f"predicted tps = {res['tps']:.0f}  (a prediction; {measured_error(cores, clients, machine=res['machine'])})")
    n = max(1, res["transactions"])
    print(f"CPU utilization {res['cpu_utilization']:.2f}, preemptions {res['preemptions']}, "
          f"wakeups {res['wakeups']}, {res['slices']:.0f} time slices; per transaction: refill "
          f"{res['refill_ns'] / n / 1000:.2f} us, {res['lone_dispatches'] / n:.2f} dispatches onto an idle core, "
          f"{res['wake_preemptions'] / n:.3f} wake-up preemptions")
    print(table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
