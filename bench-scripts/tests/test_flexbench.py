"""Tests of the benchmark driver (bench-scripts/flexbench.py and the package
flexbench/), one module per module of the package:

  test_pgbench   parsing saved pgbench outputs (one script and several,
                 NOPM); latency percentiles of a log
  test_config    workloads, presets, variants; usage errors for bad input
  test_meta      machine facts, CPU time from /proc/stat, git or bundle.json
  test_stats     paired ratios, intervals and verdicts on known answers
  test_capmodel  the cap model's prediction and CPU demand on known answers
  test_report    summary.md, plots and counters tables from known runs.csv;
                 lock caps and predictions from known profile runs
  test_lwbench   the micro-benchmark's bad input
  test_machineprofile  pg_test_fsync's output, CPU pairs, the ping-pong tool,
                 the 16-core run's assumed profile
  test_locktrace the lock trace reader on a known trace and broken ones;
                 the trace command's bad input
  test_layering  make layering's analysis: objdump listings normalised,
                 callgrind profiles read, the verdict on the LWLock paths
  test_builds    a user's own builds (make build): names, patches, the
                 version a patch targets, where one failed, the record; a
                 build's base, series and reference in the summary
  test_cli       the one command line (python3 -m flexlab): its commands
                 reach the benchmark's and the simulator's; make server's
                 settings from the benchmark's launcher
  test_flexsim   the simulator (flexsim/): the trace reader, the compiler,
                 the engine on known answers, make predict's usage errors
  test_smoke     (FLEXBENCH_SMOKE=1, as make check sets it) end to end on the
                 cassert build: two interleaved variants with their profile
                 runs (lock caps, predictions), the micro-benchmark, an
                 interrupted run, a bundle-shaped directory

This module gathers them, for `PYTHONPATH=.. python3 -m unittest
test_flexbench` in this directory (make check sets PYTHONPATH to
bench-scripts/: the tests import its packages).
"""

import unittest

import test_builds
import test_capmodel
import test_cli
import test_config
import test_flexsim
import test_layering
import test_locktrace
import test_lwbench
import test_machineprofile
import test_meta
import test_pgbench
import test_report
import test_smoke
import test_stats

MODULES = (test_pgbench, test_config, test_meta, test_stats, test_capmodel, test_report, test_lwbench,
           test_machineprofile, test_locktrace, test_layering, test_flexsim, test_builds, test_cli, test_smoke)


def load_tests(loader, standard_tests, pattern):
    suite = unittest.TestSuite()
    for m in MODULES:
        suite.addTests(loader.loadTestsFromModule(m))
    return suite


if __name__ == "__main__":
    unittest.main()
