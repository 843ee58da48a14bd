"""The lab's one command line, flexlock-lab (`python3 -m flexlab` from
bench-scripts/ without installing):

  bench run|list|parse|report|counters|lwlock   the benchmark (make bench, make lwbench)
  trace [options]                               lock traces with one client (make trace)
  profile [options]                             this machine's figures (make machine-profile)
  sim predict|validate|calibrate|designs|reproduce|lwbench|enginebench|synth
                                                the simulator (make predict)
  layering code|calls|report ...                make layering's analysis
  server user|initdb|start                      the launcher's part of make server (scripts/server.sh)
  build plan|record|failure|info|list           a user's own builds (make build, flexbench/builds.py)

`flexlock-lab COMMAND -h` says more; the sim and layering commands take
the options of their modules (flexsim/NAME.py, flexbench/layering.py).
"""

import argparse
import importlib
import sys

# sim's subcommands: the simulator's modules with a command line
SIM_COMMANDS = {
    "predict": "simulated tps of a workload and variant on C cores with N clients (make predict)",
    "validate": "predictions of a run's points, compared with its measurements",
    "calibrate": "the CPU time per transaction of the backends and of pgbench on this machine",
    "designs": "predictions for the designs never run on many cores",
    "reproduce": "make predict against rows of a validation.csv",
    "lwbench": "the LWLock micro-benchmark, simulated",
    "enginebench": "the engine's speed, measured",
    "synth": "a synthetic trace",
}
# the commands whose options are another module's own command line
DELEGATED = {("sim", name): f"flexsim.{name}" for name in SIM_COMMANDS}
DELEGATED[("layering",)] = "flexbench.layering"


def build_parser():
    from flexbench import cli as bench

    ap = argparse.ArgumentParser(prog="flexlock-lab", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    b = sub.add_parser("bench", help="the benchmark: run, list, parse, report, counters, lwlock",
                       description=bench.DESCRIPTION)
    bench.add_bench_commands(b.add_subparsers(dest="bench_cmd", required=True, metavar="COMMAND"))
    bench.add_trace_options(sub.add_parser("trace", help="lock traces of workloads, one client, "
                                                         "lock_stats_trace on (docs/lock-trace.md)"))
    bench.add_profile_options(sub.add_parser("profile", help="cache-line transfer, semaphore wake-up and "
                                                             "WAL flush times of this machine"))
    s = sub.add_parser("sim", help="the simulator (docs/simulator.md)")
    ssub = s.add_subparsers(dest="sim_cmd", required=True, metavar="COMMAND")
    for name, what in SIM_COMMANDS.items():
        ssub.add_parser(name, help=what, add_help=False)
    sub.add_parser("layering", help="make layering's analysis (flexbench/layering.py)", add_help=False)
    sv = sub.add_parser("server", help="the launcher's part of make server: its user, initdb, start "
                                       "(flexbench/servers.py)")
    bench.add_server_commands(sv.add_subparsers(dest="server_cmd", required=True, metavar="COMMAND"))
    bd = sub.add_parser("build", help="a user's own builds: make build's checks and record, what a build is "
                                      "(flexbench/builds.py)")
    bench.add_build_commands(bd.add_subparsers(dest="build_cmd", required=True, metavar="COMMAND"))
    return ap


def run_module(module, argv, prog):
    """A command whose options are its module's own: module.main(argv)."""
    sys.argv[0] = prog      # (the module's argparse names itself after it)
    rc = importlib.import_module(module).main(argv)
    return rc or 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    from flexbench import machine
    if machine.confine_from_env("flexlock-lab"):
        return 2
    for key, module in DELEGATED.items():
        if tuple(argv[:len(key)]) == key:
            return run_module(module, argv[len(key):], "flexlock-lab " + " ".join(key))
    args = build_parser().parse_args(argv)
    from flexbench import cli as bench
    return bench.dispatch(args)
