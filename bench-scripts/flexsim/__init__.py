"""flexsim: a discrete-event simulator of PostgreSQL's lock protocols that
replays traced transactions (issue 34).  See docs/simulator.md.

Modules: trace (the names of flexlab.locktrace, the trace format's
reader), compile (traces to replayable programs, in named passes), engine
(event loop, cores, cache lines; no lock), one module per protocol: lwlock
(the LWLock and its wait loop, with the served and LSN-wait policies),
spinlock, wal, procarray (the XID clear), rows, hwlock (heavyweight locks);
model (one simulated point, assembling them, and its clients), synth
(synthetic traces), enginebench (the engine choice, measured).
"""
