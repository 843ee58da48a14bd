"""Heavyweight locks (lock.c) in flexsim.

  _lockmgr     one lock-manager operation: the tag's LockManager partition
               LWLock (LockHashPartitionLock), held for the profile's
               lock-manager time and, for a release, the posts to the
               waiters it grants (model v4.2: lock.c's CleanUpLock calls
               ProcLockWakeup before LWLockRelease(partitionLock), so a
               poster that its wakee preempts is descheduled holding the
               partition lock)
  hw_acquire   LockAcquire of a lock that may conflict (lock.c's
               LockConflicts table, hw_conflicts): sleeps until a
               release of a conflicting holder (ProcSleep)
  hw_release   LockRelease: wakes every waiter of the tag (ProcLockWakeup,
               under its partition lock), who look again

A mixin of model.Point: it uses the point's simulator, LWLocks (lwi),
costs and counters.
"""

import zlib

from .engine import BLOCK, pay
from .lwlock import X

LOCKMANAGER_PARTITIONS = 16

# heavyweight lock conflicts (lock.c's LockConflicts), by mode name
_MODES = ["AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
          "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"]
_CONFLICTS = {
    "AccessShareLock": {"AccessExclusiveLock"},
    "RowShareLock": {"ExclusiveLock", "AccessExclusiveLock"},
    "RowExclusiveLock": {"ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "ShareUpdateExclusiveLock": {"ShareUpdateExclusiveLock", "ShareLock", "ShareRowExclusiveLock",
                                 "ExclusiveLock", "AccessExclusiveLock"},
    "ShareLock": {"RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareRowExclusiveLock", "ExclusiveLock",
                  "AccessExclusiveLock"},
    "ShareRowExclusiveLock": {"RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
                              "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "ExclusiveLock": {"RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock", "ShareLock",
                      "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock"},
    "AccessExclusiveLock": set(_MODES),
}


def hw_conflicts(a, b):
    return b in _CONFLICTS.get(a, ())


class HwLocks:
    """The heavyweight locks of one point."""

    def _setup_hw(self):
        self.hw = {}
        self.hw_waiters = {}

    def _lockmgr(self, p, key, under=None):
        """One lock-manager operation on key's partition.  under: a function
        run with the partition lock held, returning the processes the
        operation wakes; they are posted before the partition lock is let
        go, as LockRelease and LockReleaseAll do (CleanUpLock ->
        ProcLockWakeup; model v4.2)."""
        part = zlib.crc32(repr(key).encode()) % LOCKMANAGER_PARTITIONS    # deterministic across runs
        lk = self.lock(("LockManager", str(part)), p)
        yield from self.lwi.acquire(p, lk, X)
        p.debt += self.costs.c_lockmgr * self.machine.cpu_scale
        for q in under() if under is not None else ():
            p.debt += self.sim.C_POST
            self.sim.wake(q)
        yield from self.lwi.release(p, lk)

    def hw_acquire(self, p, key, mode):
        sim = self.sim
        t0 = -1.0
        while True:
            holders = self.hw.get(key)
            conflict = False
            if holders:
                for q, m in holders:
                    if q is not p and hw_conflicts(mode, m):
                        conflict = True
                        break
            if not conflict:
                break
            if t0 < 0:
                t0 = sim.now
                self.counters["hw_waits"] += 1
            yield from self._lockmgr(p, key)
            if not any(q is not p and hw_conflicts(mode, m) for q, m in self.hw.get(key) or ()):
                continue                        # released meanwhile: try again
            self.hw_waiters.setdefault(key, []).append(p)
            yield from pay(p)
            yield BLOCK
        self.hw.setdefault(key, []).append((p, mode))
        p.hw.append(key)

    def hw_release(self, p, key):
        holders = self.hw.get(key)
        if holders:
            for i, (q, m) in enumerate(holders):
                if q is p:
                    del holders[i]
                    break
            if not holders:
                del self.hw[key]
        if key in p.hw:
            p.hw.remove(key)
        w = self.hw_waiters.pop(key, None)
        if w:
            yield from self._lockmgr(p, key, under=lambda: w)
