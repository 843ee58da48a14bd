"""flexlock_bench_lwlock simulated: N workers take and release one LWLock
in a loop (shared with the given probability, else exclusive), as
contrib_flexlock/lwbench.c does, on a machine profile; beside the measured
acquisitions per second of a `make lwbench` run directory where it has the
point.  A check of the engine's cache-line and LWLock model on the machine
the profile describes (for the 16-core run, declared calibration: its line
transfer constant was derived from these runs).

    python3 -m flexlab sim lwbench --machine 16core [--workers 1,4,8,16] [--shared 100,95]
        [--algorithms exchange,fetch_add] [--measured DIR]
"""

import argparse
import csv
import random
import statistics
import sys
from pathlib import Path


from flexsim import compile as C
from flexsim import model as M
from flexsim import params as P
from flexsim import synth
from flexsim import trace as T

LOOP_NS = 2.0        # the loop and the random pick between acquisitions, beside the two atomics


def program(shared_pct, seed=1, per_txn=2000, txns=8):
    rnd = random.Random(seed)
    w = synth.Writer()
    for _ in range(txns):
        w.begin()
        for _ in range(per_txn):
            w.cpu(LOOP_NS)
            w.hold("flexlock_lwbench", "0", "S" if rnd.randrange(100) < shared_pct else "X", 0)
        w.end()
    return C.compile_traces([T.parse_text(w.text(), "lwbench")], statements=1)


def simulate(machine_name, workers, shared_pct, algorithm, sim_us=300.0):
    prof = P.load_profile(P.machine_profile_path(machine_name))
    cores = int(prof["machine"]["logical_cpus"])
    mach = P.machine_from_profile(prof, cores)
    costs = M.Costs(c_client=0.0, c_backend=0.0, pins=False)
    settings = {"lwlock_shared_add": "on" if algorithm == "fetch_add" else "off"}
    if algorithm == "readbiased":
        settings["lwlock_read_biased"] = "flexlock_lwbench"
    pt = M.Point(program(shared_pct), mach, M.Variant(settings), costs, workers, seed=1, client=False)
    pt.sim.run(sim_us * 1e3 / 5)
    snap = pt._snapshot()
    t0 = pt.sim.now
    pt.sim.run(t0 + sim_us * 1e3)
    r = pt._result(snap, pt.sim.now - t0)
    st = r["tranches"].get("flexlock_lwbench", {"acquires": 0, "cas_retries": 0, "sleeps": 0})
    return st["acquires"] / (r["sim_ns"] / 1e9), st


def measured(d):
    out = {}
    rows = list(csv.DictReader(open(Path(d) / "runs.csv")))
    for r in rows:
        out.setdefault((int(r["workers"]), int(r["shared_percent"]), r["algorithm"]), []).append(
            float(r["acquisitions_per_sec"]))
    return {k: statistics.median(v) for k, v in out.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--machine", default="16core")
    ap.add_argument("--workers", default="1,4,8,16")
    ap.add_argument("--shared", default="100,95")
    ap.add_argument("--algorithms", default="exchange,fetch_add")
    ap.add_argument("--measured")
    a = ap.parse_args(argv)
    meas = measured(a.measured) if a.measured else {}
    print("| workers | shared % | algorithm | simulated acq/s | measured acq/s | sim / measured | sim CAS retries/acq |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for s in (int(x) for x in a.shared.split(",")):
        for n in (int(x) for x in a.workers.split(",")):
            for alg in a.algorithms.split(","):
                rate, st = simulate(a.machine, n, s, alg)
                m = meas.get((n, s, alg))
                print(f"| {n} | {s} | {alg} | {rate:,.0f} | {m:,.0f} | {rate / m:.2f} |" if m else
                      f"| {n} | {s} | {alg} | {rate:,.0f} | - | - |", end="")
                print(f" {st['cas_retries'] / max(1, st['acquires']):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
