"""flexsim: a discrete-event simulator of PostgreSQL's lock protocols that
replays traced transactions (issue 34).  See docs/simulator.md.

Modules: trace (the names of flexlab.locktrace, the trace format's
reader), compile (traces to replayable programs), engine (event loop, cores,
cache lines, spinlocks, LWLocks), model (one simulated point: WAL,
ProcArray, rows, clients), synth (synthetic traces), enginebench (the
engine choice, measured).
"""
