"""flexbench: A/B pgbench workloads across flexlock builds and lock variants.

The benchmark, behind flexlock-lab bench|trace|profile (flexlab.cli) and
bench-scripts/flexbench.py, one idea per module:

  config     paths, workloads, variants, presets, the run options
  pgbench    pgbench's output and its sampled per-transaction log
  machine    machine facts; CPU time by state from /proc/stat
  meta       the identity of what ran: git, or a bundle's bundle.json
  servers    the one launcher of the lab's servers (make server's too), their
             sizing and run user; the lock statistics around a run
  matrix     build x variant x workload x clients x repetition, interleaved
  stats      paired ratios, order-statistic intervals, verdicts
  capmodel   the cap model: CPU demand, lock caps, predicted tps on C cores
             (the profile runs; results/2026-11-25-caps-2core/capcheck.py
             uses it too)
  report     summary.md, plots, counters tables
  lwbench    the LWLock micro-benchmark
  trace      make trace: lock traces of workloads with one client
  locktrace  make trace's checks and summary of traces (read by flexlab.locktrace)
  machineprofile  make machine-profile: this machine's figures
  layering   make layering's analysis: objdump and callgrind, before/after
  cli        the benchmark's commands (argparse subparsers)
"""
