"""The benchmark's command lines: `flexlock-lab bench|trace|profile`
(flexlab.cli) and, for the bundle's launcher, flexbench.py's older form
(build_parser(): run, list, parse, report, counters, lwlock,
machine-profile, trace).

Each command is an argparse subparser whose defaults name the function
that runs it (cmd_*); dispatch() runs it and turns the driver's errors into
an exit status: a UsageError 2 (with the usage of `run`), a BenchError 1.
"""

import argparse
import json
import signal
import sys
from pathlib import Path

from . import __doc__ as package_doc
from .config import BenchError, UsageError, Workload, list_presets, list_workloads, positive_ints, resolve
from . import builds, config, lwbench, machine, machineprofile, trace
from .lwbench import lwlock_bench
from .matrix import Matrix
from .pgbench import parse_pgbench
from .report import counters_table, report
from . import servers
from .servers import prepare_run_user

DESCRIPTION = package_doc.split("\n\n")[0]


def add_bench_commands(sub):
    """The benchmark's subcommands: run, list, parse, report, counters, lwlock."""
    r = sub.add_parser("run", help="run a matrix")
    r.add_argument("--preset", help="presets/NAME.conf: " + ", ".join(list_presets()))
    r.add_argument("--workloads", help="comma or space separated workload names")
    r.add_argument("--clients", help="client counts, e.g. 1,2,4,8")
    r.add_argument("--reps", help="repetitions per point")
    r.add_argument("--duration", help="seconds per run")
    r.add_argument("--warmup", help="seconds of unmeasured pgbench before each run")
    r.add_argument("--scale", help="pgbench scale for workloads initialised by pgbench -i")
    r.add_argument("--builds", help="builds to compare (default: vanilla patched)")
    r.add_argument("--variants", help="variants/*.conf names for patched builds (default: all; stock when a "
                                      "build of yours, make build, is compared)")
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
                        "where bench-scripts/machine/pingpong is built or gcc can build it; about a minute)")
    r.set_defaults(func=cmd_run, usage=r.format_usage)
    sub.add_parser("list", help="list workloads and presets").set_defaults(func=cmd_list)
    p = sub.add_parser("parse", help="parse a saved pgbench output")
    p.add_argument("file")
    p.set_defaults(func=cmd_parse)
    rp = sub.add_parser("report", help="rewrite summary.md and plots of a run directory")
    rp.add_argument("dir")
    rp.add_argument("--predict-cores", help="core counts of the predictions (default: the run's, else 16,64)")
    rp.set_defaults(func=cmd_report)
    cp = sub.add_parser("counters", help="a counter family per point of a run directory, per 1000 transactions")
    cp.add_argument("dir")
    cp.add_argument("family", help="flexlock_counters family, e.g. walflush or groupclear")
    cp.set_defaults(func=cmd_counters)
    lw = sub.add_parser("lwlock", help="LWLock micro-benchmark: compare-exchange, fetch-add, read-biased")
    lw.add_argument("--workers", help="worker counts, e.g. 1,2,4,8,16")
    lw.add_argument("--shared", help="shared percentages, e.g. 100,95 (the rest exclusive)")
    lw.add_argument("--seconds", help="seconds per run (default 3)")
    lw.add_argument("--reps", help="repetitions (default 3)")
    lw.add_argument("--algorithms", help="shared acquisition algorithms, from exchange,fetch_add,readbiased (default all three)")
    lw.add_argument("--writer-readers", help="also time exclusive acquisitions with these numbers of readers, e.g. 0,1,2")
    lw.add_argument("--build", help="patched (default) or cassert")
    lw.add_argument("--out", help="run directory to create (must not exist)")
    lw.set_defaults(func=lwlock_bench)


def add_profile_options(mp):
    """`profile` (flexbench.py machine-profile): the figures a model of this machine needs."""
    mp.add_argument("--out", help="directory to write machine-profile.json and .md to "
                                  "(default: results/DATE-machine-HOST)")
    mp.add_argument("--reps", help="repetitions of each ping-pong (default 7)")
    mp.add_argument("--fsync-seconds", help="seconds per pg_test_fsync test (default 2)")
    mp.add_argument("--data-dir", help="directory pg_test_fsync writes in (default: build/bench/machine-profile, "
                                       "where the benchmark's data goes)")
    mp.add_argument("--from", dest="from_profile", metavar="PROFILE.json",
                    help="with --assume: measure nothing, complete this measured profile")
    mp.add_argument("--assume", metavar="FILE.json",
                    help="with --from: named assumptions ({\"constants\": {name: {value, unit, range, source}}}) "
                         "for the constants the profile could not measure (a one-CPU profile's cross-core figures)")
    mp.set_defaults(func=cmd_profile)


def add_trace_options(tr):
    """`trace`: lock traces of workloads, one client, lock_stats_trace on."""
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
    tr.add_argument("--build", help="patched (default), cassert, or a build of yours laid on patched (make build)")
    tr.add_argument("--out", help="results directory (default: results/DATE-traces); pairs already in it "
                                  "are refused, others added")
    tr.add_argument("--names-only", action="store_true",
                    help="check the workload and variant names, trace nothing (make trace, before it builds)")
    tr.set_defaults(func=cmd_trace)


def add_server_commands(sub):
    """make server's use of the launcher (scripts/server.sh): the run user,
    initdb and start of its data directory; messages start with flexlock:
    as the script's."""
    sub.add_parser("user", help="as root: create the unprivileged user servers run as, and let it reach "
                                "the build tree (scripts/lib.sh's ensure_test_user)").set_defaults(
                                    func=cmd_server_user)
    i = sub.add_parser("initdb", help="a data directory whose postgresql.conf includes flexlock-server.conf")
    i.add_argument("--build", required=True, help="ours (patched, vanilla, cassert) or one of yours (make build)")
    i.add_argument("--data", required=True, help="the data directory to make")
    i.set_defaults(func=cmd_server_initdb)
    s = sub.add_parser("start", help="write flexlock-server.conf (the lab's sizing, the port and socket, then "
                                     "the settings of standard input) and start the server")
    s.add_argument("--build", required=True, help="ours (patched, vanilla, cassert) or one of yours (make build)")
    s.add_argument("--data", required=True, help="its data directory")
    s.add_argument("--port", required=True, type=int)
    s.add_argument("--socket-dir", required=True)
    s.add_argument("--log", required=True, help="the server's log")
    s.set_defaults(func=cmd_server_start)


def add_build_commands(sub):
    """make build's use of flexbench/builds.py (scripts/build.sh own), and
    the scripts' questions about a build; messages start with flexlock:."""
    p = sub.add_parser("plan", help="check NAME, PATCHES and BASE of make build; print the patch files in order "
                                    "(KIND<tab>PATH, KIND mail or diff)")
    p.add_argument("--name", default="")
    p.add_argument("--patches", default="")
    p.add_argument("--base", default="patched")
    p.add_argument("--major", type=int, required=True, help="the major version the lab builds")
    p.set_defaults(func=cmd_build_plan)
    r = sub.add_parser("record", help="write build/install/NAME/" + builds.RECORD)
    r.add_argument("--name", required=True)
    r.add_argument("--base", required=True)
    r.add_argument("--base-commit", required=True)
    r.add_argument("--version", required=True)
    r.add_argument("--given", required=True, help="PATCHES as the user gave it")
    r.add_argument("--files", required=True, nargs="+", help="the patch files applied (make build's copies)")
    r.add_argument("--commits", required=True, help="a file of 'SHA SUBJECT' lines, the build's commits")
    r.add_argument("--twin-of")
    r.set_defaults(func=cmd_build_record)
    c = sub.add_parser("check", help="exit status 2, saying why, when a build of yours was laid on a base that "
                                     "has been built again since")
    c.add_argument("name")
    c.set_defaults(func=cmd_build_check)
    f = sub.add_parser("failure", help="where git am or git apply could not place a patch, as words")
    f.add_argument("--log", required=True)
    f.add_argument("--patch", required=True)
    f.set_defaults(func=cmd_build_failure)
    i = sub.add_parser("info", help="what a build is; exit status 2 when it is no build")
    i.add_argument("name")
    i.add_argument("--field", choices=("base", "has-series", "describe", "json", "last-commit"), default="describe")
    i.set_defaults(func=cmd_build_info)
    sub.add_parser("list", help="every build installed, ours and yours, with what it is").set_defaults(
        func=cmd_build_list)


def build_error(e):
    print(f"flexlock: {e}", file=sys.stderr)
    return 2


def cmd_build_plan(args):
    try:
        files = builds.plan(args.name, args.patches, args.base, args.major)
    except UsageError as e:
        return build_error(e)
    for f, kind, _text in files:
        print(f"{kind}\t{f}")
    return 0


def cmd_build_record(args):
    files = [f for p in args.files for f in builds.patch_files(p)]
    commits = Path(args.commits).read_text().splitlines()
    builds.write_record(args.name, args.base, args.base_commit, args.version, args.given, files, commits,
                        twin_of=args.twin_of, stamp=builds.base_stamp(args.base))
    return 0


def cmd_build_check(args):
    try:
        if not builds.is_known(args.name):
            raise builds.unknown_build(args.name)
        builds.check_current(args.name)
    except UsageError as e:
        return build_error(e)
    return 0


def cmd_build_failure(args):
    print(builds.where_it_failed(Path(args.log).read_text(errors="replace"),
                                 Path(args.patch).read_text(errors="replace")))
    return 0


def cmd_build_info(args):
    if not builds.is_known(args.name):
        return build_error(builds.unknown_build(args.name))
    if args.field == "base":
        print(builds.base(args.name) or "")
    elif args.field == "has-series":
        print("yes" if builds.has_series(args.name) else "no")
    elif args.field == "last-commit":
        r = builds.record(args.name) or {}
        print((r.get("commits") or [""])[-1].split(" ")[0])
    elif args.field == "json":
        print(json.dumps(builds.record(args.name) or {"name": args.name, "ours": True}, indent=2))
    else:
        print(builds.describe(args.name))
    return 0


def cmd_build_list(args):
    for b in builds.known():
        built = (config.install_dir(b) / "bin" / "postgres").is_file()
        print(f"{b:16} {builds.describe(b) if built else '(not built)'}")
    return 0


def build_parser(prog="flexbench"):
    """flexbench.py's command line: the benchmark's subcommands, and trace
    and machine-profile, which flexlock-lab has at its top level."""
    ap = argparse.ArgumentParser(prog=prog, description=DESCRIPTION)
    sub = ap.add_subparsers(dest="cmd", required=True)
    add_bench_commands(sub)
    add_profile_options(sub.add_parser("machine-profile", help="measure the figures a model of this machine needs"))
    add_trace_options(sub.add_parser("trace", help="lock traces of workloads, one client, lock_stats_trace on"))
    return ap


def main(argv=None):
    if machine.confine_from_env("flexbench"):
        return 2
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["calibrate"]:
        # the simulator's calibration (flexsim/calibrate.py, flexlock-lab sim
        # calibrate): a bundle records it on the machine it runs on
        from flexsim import calibrate
        sys.argv[0] = "flexbench calibrate"
        return calibrate.main(argv[1:]) or 0
    return dispatch(build_parser().parse_args(argv))


def dispatch(args):
    """Run the command args.func, its errors as an exit status."""
    try:
        return args.func(args)
    except UsageError as e:
        print(f"flexbench: {e}", file=sys.stderr)
        if getattr(args, "usage", None):
            print(args.usage().rstrip(), file=sys.stderr)
        return 2
    except BenchError as e:
        print(f"flexbench: {e}", file=sys.stderr)
        return 1


def cmd_list(args):
    for w in list_workloads():
        wl = Workload(w)
        print(f"{w:16} seed {wl.seed or '-':4} {wl.description}")
    print("presets: " + ", ".join(list_presets()))
    return 0


def cmd_parse(args):
    print(json.dumps(parse_pgbench(Path(args.file).read_text())))
    return 0


def cmd_report(args):
    if lwbench.is_lwbench_dir(args.dir):
        paths = lwbench.report(args.dir)
    else:
        cores = positive_ints(args.predict_cores, "predict-cores") if args.predict_cores else None
        paths = report(args.dir, predict_cores=cores)
    for p in paths:
        print(p)
    return 0


def cmd_counters(args):
    print(counters_table(args.dir, args.family))
    return 0


def cmd_trace(args):
    if args.names_only:
        trace.check_names(args)
        return 0
    prepare_run_user()
    return trace.trace_command(args)


def cmd_run(args):
    args = resolve(args)
    prepare_run_user()
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


def cmd_server_user(args):
    try:
        prepare_run_user(prefix="flexlock")
    except UsageError as e:
        print(f"flexlock: {e}", file=sys.stderr)
        return 1
    return 0


def cmd_server_initdb(args):
    """initdb's output on standard output (make server logs it); 1 if it fails."""
    srv = servers.Server(args.build, None, None, None, None, datadir=args.data)
    try:
        print(srv.initdb(conf="\n# make server (scripts/server.sh)\ninclude 'flexlock-server.conf'\n"), end="")
    except BenchError as e:
        print(getattr(e, "output", "") or e, end="")
        return 1
    return 0


def cmd_server_start(args):
    """On failure: the first complaint of the server's log on standard
    output (make server says what to do with it), exit status 1."""
    srv = servers.Server(args.build, None, args.socket_dir, None, None, datadir=args.data)
    conf = Path(args.data) / "flexlock-server.conf"
    conf.write_text(servers.server_conf(args.port, args.socket_dir, sys.stdin.read()))
    if servers.run_user():
        servers.shutil.chown(conf, srv.user)
    srv.server_log = Path(args.log)
    try:
        srv.start()
    except servers.ServerStartError as e:
        print(e.complaint)
        return 1
    return 0


def cmd_profile(args):
    reps = positive_ints(args.reps, "reps")[0] if args.reps else 7
    secs = positive_ints(args.fsync_seconds, "fsync-seconds")[0] if args.fsync_seconds else 2
    out = Path(args.out) if args.out else machineprofile.default_out()
    if (out / "machine-profile.json").exists():
        raise UsageError(f"{out / 'machine-profile.json'} exists; name another directory with --out")
    if bool(args.from_profile) != bool(args.assume):
        raise UsageError("--from and --assume go together: a measured profile and the assumptions that complete it")
    if args.assume:
        loaded = []
        for path in (args.from_profile, args.assume):
            try:
                loaded.append(json.loads(Path(path).read_text()))
            except (OSError, ValueError) as e:
                raise UsageError(f"{path}: {e}")
        prof = machineprofile.complete(loaded[0], loaded[1], origin=args.assume)
        out.mkdir(parents=True, exist_ok=True)
        machineprofile.write(out, prof)
        print(f"flexbench: {args.from_profile} with {len(prof['assumed_constants'])} named assumptions "
              f"({', '.join(prof['assumed_constants'])}) in {out / 'machine-profile.json'}")
        return 0
    prepare_run_user()
    prof = machineprofile.measure(out, reps=reps, fsync_secs=secs, datadir=args.data_dir)
    print(f"flexbench: {machineprofile.summary_line(prof)}")
    print(f"flexbench: machine profile in {out / 'machine-profile.json'} and {out / 'machine-profile.md'}")
    return 0
