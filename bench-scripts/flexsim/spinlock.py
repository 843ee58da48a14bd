"""Spinlocks (s_lock.h, s_lock.c: S_LOCK / s_lock, S_UNLOCK) in flexsim.

A test-and-set spinlock on a cache line: insertpos_lck, info_lck, an
LWLock's wait-list bit (LW_FLAG_LOCKED, taken by LWLockWaitListLock) and
the state change of lwlock_implementation = spinlock.  A process that finds
it held spins on its core (yield SPIN) until the release reaches it
(Sim.kick), re-reads the line and tries again; the holder's critical
section starts when its test-and-set completes.  Spinners keep their core,
so a preempted holder makes them burn their slices.  The spin delay of
s_lock (perform_spin_delay) is not modelled.
"""

from .engine import SPIN


class Spin:
    __slots__ = ("line", "held", "spinners", "acquires", "contended", "name")

    def __init__(self, line, name=None):
        self.line = line
        self.held = None
        self.spinners = []
        self.acquires = 0
        self.contended = 0
        self.name = name


def spin_acquire(sim, p, s):
    """Take a test-and-set spinlock: returns once the test-and-set that got
    it has completed (the holder's critical section starts then)."""
    s.acquires += 1
    first = True
    while True:
        if p.debt > 0.0:
            d = p.debt
            p.debt = 0.0
            yield d
        free = s.held is None
        c = sim.lw(p.core, s.line, free)    # test-and-set
        if free:
            s.held = p
            yield c
            return
        if first:
            s.contended += 1
            first = False
        yield c
        if s.held is None:
            continue
        s.spinners.append(p)
        yield SPIN
        p.debt += sim.lr(p.core, s.line)    # the spinner re-reads the line


def spin_release(sim, p, s, cost=True):
    if cost:
        p.debt += sim.lw(p.core, s.line)
    s.held = None
    if s.spinners:
        for q in s.spinners:
            sim.kick(q)
        s.spinners.clear()
