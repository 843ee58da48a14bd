"""The command line of flexbench.py.

Usage: flexbench.py run [options]     (flexbench.py run --help)
       flexbench.py list              workloads and presets
       flexbench.py parse FILE        parse one saved pgbench output
       flexbench.py report DIR        rewrite summary.md and plots from runs.csv
       flexbench.py counters DIR FAM  a counter family per point, per 1000 transactions
       flexbench.py lwlock [options]  LWLock micro-benchmark, compare-exchange
                                      vs fetch-add vs read-biased (flexlock_bench_lwlock)
       flexbench.py machine-profile   cache-line transfer, semaphore wake-up and WAL
                                      flush times of this machine (machine-profile.json)
       flexbench.py trace [options]   lock traces of workloads with one client
                                      (lock_stats_trace; docs/lock-trace.md)
"""

import argparse
import json
import signal
import sys
from pathlib import Path

from . import __doc__ as package_doc
from .config import BenchError, UsageError, Workload, list_presets, list_workloads, positive_ints, resolve
from . import lwbench, machineprofile, trace
from .lwbench import lwlock_bench
from .matrix import Matrix
from .pgbench import parse_pgbench
from .report import counters_table, report
from .servers import prepare_run_user


def main(argv=None):
    ap = argparse.ArgumentParser(prog="flexbench", description=package_doc.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a matrix")
    r.add_argument("--preset", help="presets/NAME.conf: " + ", ".join(list_presets()))
    r.add_argument("--workloads", help="comma or space separated workload names")
    r.add_argument("--clients", help="client counts, e.g. 1,2,4,8")
    r.add_argument("--reps", help="repetitions per point")
    r.add_argument("--duration", help="seconds per run")
    r.add_argument("--warmup", help="seconds of unmeasured pgbench before each run")
    r.add_argument("--scale", help="pgbench scale for workloads initialised by pgbench -i")
    r.add_argument("--builds", help="builds to compare (default: vanilla patched)")
    r.add_argument("--variants", help="variants/*.conf names for patched builds (default: all)")
    r.add_argument("--out", help="run directory to create (must not exist)")
    r.add_argument("--profile-holds", action=argparse.BooleanOptionalAction, default=None,
                   help="after each point's timed runs, one profile run per build/variant with "
                        "lock_stats_hold_sample on: hold times, load, lock caps and predicted tps in "
                        "summary.md (default: on; the timed runs are untouched)")
    r.add_argument("--profile-duration", help="seconds of each profile run (default: the run's duration, "
                                              "at most 3)")
    r.add_argument("--predict-cores", help="core counts to predict throughput for (default 16,64)")
    r.add_argument("--machine-profile", action=argparse.BooleanOptionalAction, default=None,
                   help="before the runs, measure the machine's cache-line transfer, semaphore wake-up "
                        "and WAL flush times into machine-profile.json of the run directory (default: on "
                        "where bench-scripts/machine/pingpong is built or gcc can build it; about 20 s)")
    sub.add_parser("list", help="list workloads and presets")
    p = sub.add_parser("parse", help="parse a saved pgbench output")
    p.add_argument("file")
    rp = sub.add_parser("report", help="rewrite summary.md and plots of a run directory")
    rp.add_argument("dir")
    rp.add_argument("--predict-cores", help="core counts of the predictions (default: the run's, else 16,64)")
    cp = sub.add_parser("counters", help="a counter family per point of a run directory, per 1000 transactions")
    cp.add_argument("dir")
    cp.add_argument("family", help="flexlock_counters family, e.g. walflush or groupclear")
    lw = sub.add_parser("lwlock", help="LWLock micro-benchmark: compare-exchange, fetch-add, read-biased")
    lw.add_argument("--workers", help="worker counts, e.g. 1,2,4,8,16")
    lw.add_argument("--shared", help="shared percentages, e.g. 100,95 (the rest exclusive)")
    lw.add_argument("--seconds", help="seconds per run (default 3)")
    lw.add_argument("--reps", help="repetitions (default 3)")
    lw.add_argument("--algorithms", help="shared acquisition algorithms, from exchange,fetch_add,readbiased (default all three)")
    lw.add_argument("--writer-readers", help="also time exclusive acquisitions with these numbers of readers, e.g. 0,1,2")
    lw.add_argument("--build", help="patched (default) or cassert")
    lw.add_argument("--out", help="run directory to create (must not exist)")
    mp = sub.add_parser("machine-profile", help="measure the figures a model of this machine needs")
    mp.add_argument("--out", help="directory to write machine-profile.json and .md to "
                                  "(default: results/DATE-machine-HOST)")
    mp.add_argument("--reps", help="repetitions of each ping-pong (default 7)")
    mp.add_argument("--fsync-seconds", help="seconds per pg_test_fsync test (default 2)")
    mp.add_argument("--data-dir", help="directory pg_test_fsync writes in (default: build/bench/machine-profile, "
                                       "where the benchmark's data goes)")
    tr = sub.add_parser("trace", help="lock traces of workloads, one client, lock_stats_trace on")
    tr.add_argument("--workload", help="workload name(s), comma separated")
    tr.add_argument("--variant", help="variants/*.conf name(s), comma separated (every workload with every "
                                      "variant)")
    tr.add_argument("--pairs", help="WORKLOAD:VARIANT,... pairs to trace (instead of or beside the above); a "
                                    "VARIANT may be LABEL(guc=value;guc=value) for settings no variants/ file has")
    tr.add_argument("--pairs-file", help="a file of 'WORKLOAD VARIANT' lines to trace (presets/traces-16core.list)")
    tr.add_argument("--traced", help="transactions to trace per pair (default 1000, fewer if --max-events "
                                     "would be passed)")
    tr.add_argument("--max-events", help="events per pair at most (default 250000)")
    tr.add_argument("--sample", help="lock_stats_trace: trace one transaction in this many (default 10)")
    tr.add_argument("--txns", help="transactions of the traced run (default: traced x sample + 40)")
    tr.add_argument("--scale", help="pgbench scale (default: the workload's)")
    tr.add_argument("--warmup", help="seconds of untraced pgbench first (default 3)")
    tr.add_argument("--build", help="patched (default) or cassert")
    tr.add_argument("--out", help="results directory (default: results/DATE-traces); pairs already in it "
                                  "are refused, others added")
    args = ap.parse_args(argv)

    try:
        if args.cmd == "list":
            for w in list_workloads():
                wl = Workload(w)
                print(f"{w:16} seed {wl.seed or '-':4} {wl.description}")
            print("presets: " + ", ".join(list_presets()))
            return 0
        if args.cmd == "parse":
            print(json.dumps(parse_pgbench(Path(args.file).read_text())))
            return 0
        if args.cmd == "report":
            if lwbench.is_lwbench_dir(args.dir):
                paths = lwbench.report(args.dir)
            else:
                cores = positive_ints(args.predict_cores, "predict-cores") if args.predict_cores else None
                paths = report(args.dir, predict_cores=cores)
            for p in paths:
                print(p)
            return 0
        if args.cmd == "counters":
            print(counters_table(args.dir, args.family))
            return 0
        if args.cmd == "lwlock":
            return lwlock_bench(args)
        if args.cmd == "machine-profile":
            return machine_profile(args)
        if args.cmd == "trace":
            prepare_run_user()
            return trace.trace_command(args)
        args = resolve(args)
        prepare_run_user()
    except UsageError as e:
        print(f"flexbench: {e}", file=sys.stderr)
        if args.cmd != "run":
            return 2
        print("usage: flexbench.py run [--preset NAME] [--workloads W,...] [--clients N,...] [--reps N] "
              "[--duration S] [--builds B,...] [--variants V,...] [--out DIR] [--no-profile-holds] "
              "[--profile-duration S] [--predict-cores C,...] [--no-machine-profile]", file=sys.stderr)
        return 2
    except BenchError as e:
        print(f"flexbench: {e}", file=sys.stderr)
        return 1

    matrix = Matrix(args)

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    # SIGINT too: a driver started in the background of a non-interactive
    # shell inherits SIGINT ignored, and Python then installs no handler.
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        matrix.run()
    except KeyboardInterrupt:
        print(f"\nflexbench: interrupted; servers stopped; {len(matrix.rows)} runs kept in {matrix.out}",
              file=sys.stderr)
        return 130
    except (BenchError, UsageError) as e:
        print(f"flexbench: {e}", file=sys.stderr)
        print(f"flexbench: {len(matrix.rows)} runs kept in {matrix.out}; log: {matrix.out / 'driver.log'}",
              file=sys.stderr)
        return 1
    print()
    print((matrix.out / "summary.md").read_text())
    print(f"flexbench: results in {matrix.out} (runs.csv, meta.json, summary.md); plots:")
    for p in sorted((matrix.out / "plots").glob("*.png")):
        print(f"  {p}")
    return 0




def machine_profile(args):
    reps = positive_ints(args.reps, "reps")[0] if args.reps else 7
    secs = positive_ints(args.fsync_seconds, "fsync-seconds")[0] if args.fsync_seconds else 2
    out = Path(args.out) if args.out else machineprofile.default_out()
    if (out / "machine-profile.json").exists():
        raise UsageError(f"{out / 'machine-profile.json'} exists; name another directory with --out")
    prepare_run_user()
    prof = machineprofile.measure(out, reps=reps, fsync_secs=secs, datadir=args.data_dir)
    print(f"flexbench: {machineprofile.summary_line(prof)}")
    print(f"flexbench: machine profile in {out / 'machine-profile.json'} and {out / 'machine-profile.md'}")
    return 0
