#!/usr/bin/python3
"""flexbench: A/B pgbench workloads across flexlock builds and lock variants.

Runs a matrix  build x variant x workload x clients x repetition  and writes a
run directory: runs.csv (one row per run: tps, latency percentiles, CPU time
by state, lock statistics), meta.json (machine, versions, series, settings),
summary.md (per workload, clients by build/variant: median tps, the median of
the paired ratios to the reference with an order-statistic confidence
interval and a verdict; the counters of the variants' families), plots/ (tps
and ratios vs clients, PNG and SVG) and raw/ (every pgbench output, the lock
statistics deltas); with --profile-holds (the default) a profile run per
point with hold sampling on (profile.csv, holds.csv, caps.csv) and, in
summary.md, its lock caps and the predicted tps on more cores.  The code is
the package flexbench/ beside this file.

Usage: flexbench.py run [options]     (flexbench.py run --help)
       flexbench.py list              workloads and presets
       flexbench.py parse FILE        parse one saved pgbench output
       flexbench.py report DIR        rewrite summary.md and plots from runs.csv
       flexbench.py counters DIR FAM  a counter family per point, per 1000 transactions
       flexbench.py lwlock [options]  LWLock micro-benchmark, compare-exchange
                                      vs fetch-add vs read-biased (flexlock_bench_lwlock)
       flexbench.py machine-profile   as flexlock-lab profile
       flexbench.py trace [options]   as flexlock-lab trace
       flexbench.py calibrate [options]  as flexlock-lab sim calibrate (the simulator's
                                      CPU time per transaction on this machine)

The lab's command line is flexlock-lab (python3 -m flexlab, bench-scripts/flexlab/):
this script is its benchmark's commands as a bundle runs them (python3
bench-scripts/flexbench.py: Python finds the packages beside the script).
"""

import sys

from flexbench.cli import main

if __name__ == "__main__":
    sys.exit(main())
