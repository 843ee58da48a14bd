"""flexlab: the lab's Python side, one command line (flexlock-lab, or
`python3 -m flexlab` from bench-scripts/ or with it on PYTHONPATH) and
what the benchmark and the simulator share.

  cli        the command line: bench, trace, profile, sim, server, layering
  locktrace  the lock-trace format (docs/lock-trace.md), read in one place

The front ends: flexbench/ (the benchmark: servers, matrices, reports) and
flexsim/ (the simulator).
"""
