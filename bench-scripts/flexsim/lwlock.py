"""The LWLock protocol (lwlock.c) in flexsim, with its variants beside it.

An LWLock is its state word on its own cache line, the wait-list lock bit
on that line (LW_FLAG_LOCKED, a test-and-set spinlock: spinlock.py) and a
wait queue of [process, mode] entries in queue order.

  LWLockAttemptLock      attempt(): one visit of the line (the read of the
                         state and the compare-exchange; exchange retries
                         are not modelled)
  LWLockQueueSelf        queue(); LWLockDequeueSelf: dequeue()
  LWLockAcquire          acquire(): the wait loop below
  LWLockConditionalAcquire   conditional(): one attempt
  LWLockAcquireOrWait    acquire_or_wait(): the wait loop, returning
                         without the lock once woken
  LWLockWaitForVar       wait_for_var(): the wait loop on the variable
                         (WAL insertion locks' insertingAt, LW.var)
  LWLockUpdateVar        update_var(): wake the wait-until-free waiters
  LWLockRelease          release(); LWLockWakeup: wakeup()

The wait loop (attempt, queue, attempt again, sleep; woken, retry) is
written once, in wait_loop().  Each acquisition passes it a Wait policy:
what the attempts are, the mode it queues in, what it does once queued
(set LW_FLAG_RELEASE_OK, ask to be served, leave its LSN), and what a
woken waiter does (retry after setting LW_FLAG_RELEASE_OK again; return
without the lock; find its request served).  The policies differ where
lwlock.c's callers differ, and only there (model v3.1: docs/simulator.md,
"Model v3.1: the wait loop as lwlock.c has it").

The variants (GUCs of the patched tree):

  lwlock_shared_add = on        a shared attempt is one fetch-add, backed
                                out with a second if held exclusively
  lwlock_implementation = spinlock   every state change under the wait-list
                                bit taken as a spinlock (pre-9.5 LWLocks)
  lwlock_read_biased            BRAVO slots: slot_acquire(), revoke()
  procarray_group_clear = holder    Served: LWLockAcquireOrServed and
                                LWLockServeRequests (procarraylock.c)
  wal_flush_wait = lsn          LsnWait: LWLockAcquireOrWaitLSN (lsnlock.c),
                                and LWLockWakeup's rule for its waiters
                                (LWLockWakeupSkipsLSNWaiter)
"""

from .engine import BLOCK, SPIN, Line, ModelError, pay
from .spinlock import Spin, spin_acquire, spin_release

# lock modes
S, X, WUF = 0, 1, 2          # shared, exclusive, wait-until-free (LWLockAcquireOrWait, WaitForVar)


class TrancheStats:
    """A tranche's counters, as the patched tree's: acquisitions in shared,
    exclusive and wait-until-free mode (LWLockAcquireOrWait without the
    lock, LWLockWaitForVar), sleeps, and the time of each sleep."""
    __slots__ = ("acq_s", "acq_x", "acq_w", "sleeps", "wait_ns", "hold_x_ns", "hold_s_ns", "cas_retries",
                 "backouts", "instances")

    def __init__(self):
        self.acq_s = self.acq_x = self.acq_w = self.sleeps = 0
        self.wait_ns = self.hold_x_ns = self.hold_s_ns = 0.0
        self.cas_retries = self.backouts = 0
        self.instances = set()


class LW:
    __slots__ = ("key", "tranche", "line", "wl", "excl", "nshared", "waiters", "release_ok", "st",
                 "x_since", "hold_x_ns", "biased", "slot_holders", "revoker", "rebias_at", "readbiased",
                 "policy", "var", "lsn_flushed")

    def __init__(self, key, tranche, st, readbiased=False):
        self.key = key
        self.tranche = tranche
        self.line = Line(key)
        self.wl = Spin(self.line)            # LW_FLAG_LOCKED: the wait-list lock bit of the state word
        self.excl = None
        self.nshared = 0
        self.waiters = []                    # [proc, mode] in queue order ([proc, X, True]: servable)
        self.release_ok = True
        self.st = st
        self.x_since = 0.0
        self.hold_x_ns = 0.0
        # lwlock_read_biased
        self.readbiased = readbiased
        self.biased = readbiased
        self.slot_holders = 0
        self.revoker = None
        self.rebias_at = 0.0
        self.policy = None                   # a release policy (Served), or None
        self.var = 0                         # insertingAt (WAL insertion locks): LWLockWaitForVar's value
        self.lsn_flushed = None              # LsnWait's progress (the flushed LSN), read at a wakeup


# ---- the wait loop's policies ----------------------------------------------
class Wait:
    """How an acquisition waits (the policy of wait_loop).  LWLockAcquire's:
    attempt in its mode, queue in its mode; woken, set LW_FLAG_RELEASE_OK
    again (one atomic operation on the line) and retry."""
    queue_mode = None            # None: the acquisition's mode
    tag = None                   # what the wait-list entry carries besides [process, mode]

    @staticmethod
    def attempt(lwl, p, lk, mode):
        return lwl.attempt(p, lk, mode)

    recheck = attempt

    def queued(self, lwl, p, lk):
        pass

    def woken(self, lwl, p, lk):
        """A woken waiter: True to retry, False to return without the lock."""
        p.debt += lwl.sim.lw(p.core, lk.line)      # retrying: set LW_FLAG_RELEASE_OK again
        lk.release_ok = True
        return True


class WaitUntilFree(Wait):
    """LWLockAcquireOrWait: queued wait-until-free; once woken, return
    without the lock."""
    queue_mode = WUF

    def woken(self, lwl, p, lk):
        return False


class WaitForVar(Wait):
    """LWLockWaitForVar: the 'attempt' is a read of the line, done when the
    lock is free or its holder's variable has reached upto; queued
    wait-until-free, it sets LW_FLAG_RELEASE_OK (one atomic operation) and
    checks again (no cost); woken, it looks again, setting nothing."""
    queue_mode = WUF

    def __init__(self, upto):
        self.upto = upto

    def attempt(self, lwl, p, lk, mode):
        yield from pay(p)
        p.debt += lwl.sim.lr(p.core, lk.line)
        return lk.excl is None or bool(lk.var and lk.var >= self.upto)

    def recheck(self, lwl, p, lk, mode):
        return lk.excl is None or bool(lk.var and lk.var >= self.upto)
        yield

    def queued(self, lwl, p, lk):
        p.debt += lwl.sim.lw(p.core, lk.line)      # pg_atomic_fetch_or_u32(LW_FLAG_RELEASE_OK)
        lk.release_ok = True

    def woken(self, lwl, p, lk):
        return True


WAIT = Wait()
WAIT_UNTIL_FREE = WaitUntilFree()


class LWLocks:
    """The LWLock protocols of one configuration (variant)."""

    def __init__(self, sim, implementation="atomic", shared_add=False, nprocs_scan=None):
        self.sim = sim
        self.impl = implementation
        self.shared_add = shared_add and implementation == "atomic"
        self.nprocs_scan = nprocs_scan
        # lwlock_read_biased: each process's slot line, and the locks it
        # holds through its slot
        self.slot_lines = {}
        self.slot_held = {}

    def _slot(self, p):
        ln = self.slot_lines.get(p.pid)
        if ln is None:
            ln = self.slot_lines[p.pid] = Line(("slot", p.pid))
        return ln

    # the state change of an acquisition, decided at the time it is issued
    @staticmethod
    def _take(lk, p, mode, now):
        if mode == X:
            if lk.excl is not None or lk.nshared:
                return False
            lk.excl = p
            lk.x_since = now
            return True
        if lk.excl is not None:
            return False
        lk.nshared += 1
        return True

    def attempt(self, p, lk, mode, cond=False):
        """LWLockAttemptLock: True if p now holds lk (a generator)."""
        sim = self.sim
        line = lk.line
        if p.debt > 0.0:
            d = p.debt
            p.debt = 0.0
            yield d
        if self.impl == "spinlock":
            yield from spin_acquire(sim, p, lk.wl)
            got = self._take(lk, p, mode, sim.now)
            spin_release(sim, p, lk.wl)        # the count changes and the bit goes in one fetch-add
            return got
        if mode == S and self.shared_add and not cond:
            p.debt += sim.lw(p.core, line)     # fetch-add of a shared unit
            if lk.excl is None:
                lk.nshared += 1
                return True
            lk.st.backouts += 1
            p.debt += sim.lw(p.core, line)     # fetch-sub: back it out
            return False
        # the read of the state and the compare-exchange: one visit of the
        # line (a read followed by a locked operation on the same line takes
        # it with ownership, migratory sharing); the exchange succeeds on
        # that visit (compare-exchange retries are not modelled)
        p.debt += sim.lw(p.core, line)
        return self._take(lk, p, mode, sim.now)

    def queue(self, p, lk, mode, tag=None):
        """LWLockQueueSelf: wait-until-free waiters at the head of the
        queue, the others at its tail; the entry is [p, mode], and tag
        after them if given (a served request: True; an LSN waiter: its
        target)."""
        entry = [p, mode] if tag is None else [p, mode, tag]
        yield from spin_acquire(self.sim, p, lk.wl)
        if mode == WUF:
            lk.waiters.insert(0, entry)
        else:
            lk.waiters.append(entry)
        spin_release(self.sim, p, lk.wl)

    def dequeue(self, p, lk):
        """LWLockDequeueSelf after a successful second attempt."""
        yield from spin_acquire(self.sim, p, lk.wl)
        for i, w in enumerate(lk.waiters):
            if w[0] is p:
                del lk.waiters[i]
                break
        else:
            # somebody already took us off the list to wake us: absorb that
            # wakeup, and set RELEASE_OK again, which the waker cleared
            if p.sem > 0:
                p.sem -= 1
            lk.release_ok = True
            p.debt += self.sim.lw(p.core, lk.line)
        spin_release(self.sim, p, lk.wl)

    def wait_loop(self, p, lk, mode, how):
        """THE LWLock wait loop (LWLockAcquire's; LWLockAcquireOrWait,
        LWLockWaitForVar, LWLockAcquireOrServed and LWLockAcquireOrWaitLSN
        are the same loop): attempt; on failure queue, attempt again
        (dequeue on success), else sleep on the semaphore; woken, the
        policy decides (retry, or return without the lock).  The wait time
        is each sleep's, as the patched counters time it
        (LWLockStatsWaitStart/WaitDone around LWLockSleep).  A generator;
        returns (acquired, the number of times it slept)."""
        sim = self.sim
        st = lk.st
        sleeps = 0
        qmode = mode if how.queue_mode is None else how.queue_mode
        while True:
            got = yield from how.attempt(self, p, lk, mode)
            if got:
                break
            yield from self.queue(p, lk, qmode, how.tag)
            how.queued(self, p, lk)
            got = yield from how.recheck(self, p, lk, mode)
            if got:
                yield from self.dequeue(p, lk)
                break
            st.sleeps += 1
            sleeps += 1
            if p.debt > 0.0:
                d = p.debt
                p.debt = 0.0
                yield d
            t0 = sim.now
            yield BLOCK                                     # PGSemaphoreLock: the LWLock wait loop sleeps
            st.wait_ns += sim.now - t0
            if not how.woken(self, p, lk):
                return False, sleeps
        return True, sleeps

    # ---- the acquisitions ------------------------------------------------------
    def acquire(self, p, lk, mode):
        """LWLockAcquire (a generator); returns True if it slept."""
        sim = self.sim
        st = lk.st
        if lk.excl is p:
            # lwlock.c would wait for itself forever; here it is a replay
            # that names two locks as one: stop, do not stall
            raise ModelError(f"{p.name} acquires {lk.key} in mode {mode}, which it holds exclusively")
        if mode == X:
            st.acq_x += 1
            if lk.readbiased and lk.biased:
                yield from self.revoke(p, lk)
        else:
            st.acq_s += 1
            if lk.readbiased and lk.biased and lk.revoker is None:
                yield from self.slot_acquire(p, lk)
                return False
        _, sleeps = yield from self.wait_loop(p, lk, mode, WAIT)
        if mode == S and lk.readbiased and not lk.biased and lk.revoker is None and sim.now >= lk.rebias_at:
            lk.biased = True                        # a shared holder turns the bias back on
        return sleeps > 0

    def conditional(self, p, lk, mode):
        """LWLockConditionalAcquire (a generator): True if acquired."""
        got = yield from self.attempt(p, lk, mode, cond=True)
        if got:
            if mode == X:
                lk.st.acq_x += 1
            else:
                lk.st.acq_s += 1
        return got

    def acquire_or_wait(self, p, lk, how=WAIT_UNTIL_FREE):
        """LWLockAcquireOrWait(X) (a generator): True if acquired, False if it
        slept until the lock was free and did not take it (counted as a
        wait-until-free acquisition, as the patched counters do).  how:
        LsnWait for LWLockAcquireOrWaitLSN."""
        got, _ = yield from self.wait_loop(p, lk, X, how)
        if got:
            lk.st.acq_x += 1
        else:
            lk.st.acq_w += 1
        return got

    def wait_for_var(self, p, lk, upto):
        """LWLockWaitForVar (a generator): returns once lk is free or its
        holder's variable has reached upto (counted as a wait-until-free
        acquisition).  Returns whether the lock was free, the variable's
        value (newval) and the number of times it slept."""
        lk.st.acq_w += 1
        _, sleeps = yield from self.wait_loop(p, lk, X, WaitForVar(upto))
        return lk.excl is None, lk.var, sleeps

    # ---- release ---------------------------------------------------------------
    def release(self, p, lk):
        """LWLockRelease (a generator)."""
        sim = self.sim
        if lk.excl is p:
            mode = X
        elif lk.readbiased and self.slot_held.get(p.pid) and lk in self.slot_held[p.pid]:
            self.slot_held[p.pid].remove(lk)
            yield from self.slot_release(p, lk)
            return
        else:
            mode = S
        pol = lk.policy
        if mode == X and pol is not None and pol.serve_before_release:
            yield from pol.before_release(self, p, lk)
        if p.debt > 0.0:
            d = p.debt
            p.debt = 0.0
            yield d
        if self.impl == "spinlock":
            yield from spin_acquire(sim, p, lk.wl)
        p.debt += sim.lw(p.core, lk.line)
        if mode == X:
            lk.excl = None
            h = sim.now - lk.x_since
            lk.hold_x_ns += h
            lk.st.hold_x_ns += h
        else:
            lk.nshared -= 1
        if self.impl == "spinlock":
            spin_release(sim, p, lk.wl, cost=False)
        if lk.waiters and lk.release_ok and lk.excl is None and lk.nshared == 0:
            if pol is not None and pol.serves_when_free():
                yield from pol.serve_requests(self, p, lk, mode)
            else:
                yield from self.wakeup(p, lk)

    def wakeup(self, p, lk):
        """LWLockWakeup: wake the first waiter, or every shared one from the
        first and all wait-until-free ones; clear RELEASE_OK if a waiter
        that will retry was woken.  A waiter of LWLockAcquireOrWaitLSN (an
        entry with its target LSN) whose target lk.lsn_flushed() has not
        reached is woken only if it is the first such one
        (LWLockWakeupSkipsLSNWaiter: it takes the lock and flushes)."""
        sim = self.sim
        yield from spin_acquire(sim, p, lk.wl)
        W = lk.waiters
        wake = []
        new_ok = True
        woke = False
        woke_lsn_taker = False
        i = 0
        while i < len(W):
            w = W[i]
            q = w[0]
            m = w[1]
            if woke and m == X:
                i += 1
                continue
            if m == WUF and len(w) > 2 and lk.lsn_flushed() < w[2]:
                if woke_lsn_taker:
                    i += 1
                    continue
                woke_lsn_taker = True
            del W[i]
            wake.append(q)
            if m != WUF:
                new_ok = False
                woke = True
            if m == X:
                break
        lk.release_ok = new_ok
        spin_release(sim, p, lk.wl)
        for q in wake:
            p.debt += sim.C_POST
            sim.wake(q)

    def update_var(self, p, lk):
        """LWLockUpdateVar: under the wait-list lock (taken whether or not
        anyone waits), wake every wait-until-free waiter (the flushers
        waiting for this insertion)."""
        sim = self.sim
        yield from spin_acquire(sim, p, lk.wl)
        W = lk.waiters
        wake = [w[0] for w in W if w[1] == WUF]
        if wake:
            lk.waiters = [w for w in W if w[1] != WUF]
        spin_release(sim, p, lk.wl)
        for q in wake:
            p.debt += sim.C_POST
            sim.wake(q)

    # ---- read-biased (lwlock_read_biased) -------------------------------
    def slot_acquire(self, p, lk):
        sim = self.sim
        if p.debt > 0.0:
            d = p.debt
            p.debt = 0.0
            yield d
        slot = self._slot(p)
        p.debt += sim.lw(p.core, slot)             # announce in our slot
        p.debt += sim.lr(p.core, lk.line)          # check the bias (full barrier between)
        if not lk.biased or lk.revoker is not None:
            p.debt += sim.lw(p.core, slot)         # withdraw, and take the word
            yield from self.wait_loop(p, lk, S, WAIT)
            return
        lk.slot_holders += 1
        self.slot_held.setdefault(p.pid, []).append(lk)

    def slot_release(self, p, lk):
        sim = self.sim
        p.debt += sim.lw(p.core, self._slot(p))    # release store: the slot is free
        lk.slot_holders -= 1
        if lk.slot_holders == 0 and lk.revoker is not None:
            sim.kick(lk.revoker)
        return
        yield

    def revoke(self, p, lk):
        """A writer revokes the bias: clear it, scan every process's slots,
        wait (polling) until no reader holds the lock through one."""
        sim = self.sim
        yield from pay(p)
        t0 = sim.now
        lk.biased = False
        lk.revoker = p
        p.debt += sim.lw(p.core, lk.line)
        n = self.nprocs_scan or len(sim.procs)
        for q in sim.procs[:n]:
            p.debt += sim.lr(p.core, self._slot(q))
        yield from pay(p)
        while lk.slot_holders > 0:
            yield SPIN
        lk.revoker = None
        lk.rebias_at = sim.now + 9.0 * (sim.now - t0)


# ---- procarray_group_clear = holder (procarraylock.c) ------------------------
class Served(Wait):
    """LWLockAcquireOrServed and LWLockServeRequests: a process queues its
    request with the lock (a servable exclusive waiter, LW_FLAG_HAS_REQUESTS
    set with one atomic operation); a releaser serves the queued requests
    (serve(p, requests): the caller's work, ProcArray's XID clear) and wakes
    them.  version 2 (this design): the last release that leaves the lock
    free takes it, serves, releases, wakes, up to four batches; version 1
    (the first design, the 16-core run of 2026-11-22): an exclusive release
    serves before it lets go.  A served waiter finds p.served set."""
    MAX_BATCHES = 4
    tag = True                                    # a servable request

    def __init__(self, serve, version=2):
        self.serve = serve
        self.serve_before_release = version == 1
        self.version = version
        self.has_requests = False

    # the wait loop's policy
    def queued(self, lwl, p, lk):
        p.debt += lwl.sim.lw(p.core, lk.line)     # LW_FLAG_HAS_REQUESTS
        self.has_requests = True

    def woken(self, lwl, p, lk):
        if p.served:
            return False
        return super().woken(lwl, p, lk)          # not served: retry, as LWLockAcquire

    def acquire_or_served(self, lwl, p, lk):
        """LWLockAcquireOrServed: True if acquired, False if served."""
        p.served = False
        acquired, _ = yield from lwl.wait_loop(p, lk, X, self)
        if acquired and p.served:
            yield from lwl.release(p, lk)
            acquired = False
        if acquired:
            lk.st.acq_x += 1
        return acquired

    def _take_requests(self, lk):
        req = [w[0] for w in lk.waiters if w[1] == X and len(w) > 2]
        if req:
            lk.waiters = [w for w in lk.waiters if not (w[1] == X and len(w) > 2)]
        self.has_requests = False
        return req

    # the release's policy
    def serves_when_free(self):
        return self.version != 1 and self.has_requests

    def serve_requests(self, lwl, p, lk, released):
        """LWLockServeRequests (version 2): the last process out takes the
        lock from the free state, serves the queued requests, releases it
        and wakes them; up to four batches, then LWLockWakeup."""
        sim = lwl.sim
        batches = 0
        while True:
            yield from pay(p)
            p.debt += sim.lw(p.core, lk.line)
            if lk.excl is not None or lk.nshared:
                return
            lk.excl = p
            lk.x_since = sim.now
            batches += 1
            req = yield from self._serve_batch(sim, p, lk)
            yield from pay(p)
            p.debt += sim.lw(p.core, lk.line)
            lk.excl = None
            lk.st.hold_x_ns += sim.now - lk.x_since
            for q in req:
                p.debt += sim.C_POST
                sim.wake(q)
            if not (lk.waiters and lk.release_ok):
                return
            if not self.has_requests or batches >= self.MAX_BATCHES:
                break
        yield from lwl.wakeup(p, lk)

    def _serve_batch(self, sim, p, lk):
        """Take the servable waiters off the wait list (under the wait-list
        lock) and carry their requests out; returns them, marked served."""
        yield from spin_acquire(sim, p, lk.wl)
        req = self._take_requests(lk)
        spin_release(sim, p, lk.wl)
        if req:
            self.serve(p, req)
            for q in req:
                q.served = True
        return req

    def before_release(self, lwl, p, lk):
        """Version 1: an exclusive release serves the queued requests while
        it still holds the lock."""
        sim = lwl.sim
        if not self.has_requests:
            return
        req = yield from self._serve_batch(sim, p, lk)
        if req:
            yield from pay(p)
            for q in req:
                p.debt += sim.C_POST
                sim.wake(q)


# ---- wal_flush_wait = lsn (lsnlock.c) ------------------------------------------
class LsnWait(WaitUntilFree):
    """LWLockAcquireOrWaitLSN(lock, progress, target): LWLockAcquireOrWait
    whose wait-list entry carries its target LSN.  The lock's lsn_flushed
    (the progress, read at a wakeup) must be set; LWLockWakeup (wakeup())
    then leaves asleep every waiter short of its target but the first it
    meets (the most recently queued: wait-until-free waiters queue at the
    head), which takes the lock and flushes.  Every release of the lock
    follows the rule, as lsnlock.c's does."""

    def __init__(self, target):
        self.tag = target                          # the entry carries the target

    def queued(self, lwl, p, lk):
        if lk.lsn_flushed is None:
            raise ModelError(f"{p.name} waits for an LSN on {lk.key}, whose progress is not set")
