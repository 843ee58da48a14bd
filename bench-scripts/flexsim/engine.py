"""The event loop, the machine and the lock primitives of flexsim.

A plain heapq loop (see docs/simulator.md for why not SimPy): events are
(time ns, sequence, kind, object, version) tuples.  Simulated processes are
Python generators that yield what they need from the machine:

  yield d      (d > 0) d ns of CPU time, on a core (compute, or a stall on a
               cache line); the scheduler may preempt in between
  yield BLOCK  leave the core until sim.wake(p) (a semaphore: a wake that
               comes before the block is kept, p.sem)
  yield SPIN   keep the core, burning it, until sim.kick(p) (a spinlock's
               release) or until preempted

Costs that need no decision by others accumulate in p.debt and are paid
(yielded) before the process's next interaction with shared state, so that
an interaction happens at the simulated time it would.

The machine: C cores, one run queue (FIFO) for the whole machine, time
slices (a process that has run its slice is preempted when others are
runnable, whatever it holds), wake-to-run latency for a process woken onto
an idle core, a context switch cost when a busy core changes process, and
the waker's cost of a semaphore post.

Cache lines: each Line serialises the atomic operations on it in the order
they are issued (the free_at time); an operation by a core that does not
hold the line (owner for writes, sharer for reads) pays the transfer time,
one that does pays the local time.  A compare-and-exchange that another
write got in front of fails and is retried (version numbers).

Spin: a test-and-set spinlock on a line (the waiters spin on the core, each
re-reads the line and tries again when the holder's release reaches it).
LW: an LWLock as lwlock.c has it (the state word on its own line, the
wait-list lock bit on that line, barging, a wait queue where a release that
leaves the lock free wakes the first waiter, or all shared ones from the
first, or every wait-until-free waiter; LW_FLAG_RELEASE_OK, which a woken
waiter sets again when it retries; the retry may lose to a barger), in the
implementations the variants switch: atomic (stock), shared-add,
spinlock-protected state (pre-9.5) and read-biased (BRAVO slots).
"""

import heapq
from collections import deque

class ModelError(Exception):
    """The simulation reached a state the protocols cannot: a bug of the model
    or of the program it replays."""


BLOCK = -1.0
SPIN = -2.0

# process states
RUN, READY, BLOCKED, WAKING, SPINNING, DONE = range(6)

# lock modes
S, X, WUF = 0, 1, 2          # shared, exclusive, wait-until-free (LWLockAcquireOrWait, WaitForVar)


class Machine:
    """The machine's constants, in ns (named, with their sources, in params.py)."""

    def __init__(self, cores, t_xfer, t_local, t_wake, c_post, c_switch, slice_ns, cpu_scale=1.0):
        self.cores = cores
        self.t_xfer = float(t_xfer)
        self.t_local = float(t_local)
        self.t_wake = float(t_wake)
        self.c_post = float(c_post)
        self.c_switch = float(c_switch)
        self.slice_ns = float(slice_ns)
        self.cpu_scale = float(cpu_scale)


class Line:
    __slots__ = ("free_at", "owner", "sharers", "version", "name")

    def __init__(self, name=None):
        self.free_at = 0.0
        self.owner = -1
        self.sharers = 0
        self.version = 0
        self.name = name


class Core:
    __slots__ = ("id", "proc", "tver", "busy_ns", "since")

    def __init__(self, i):
        self.id = i
        self.proc = None
        self.tver = 0
        self.busy_ns = 0.0
        self.since = 0.0


class Proc:
    __slots__ = ("pid", "name", "gen", "core", "lastcore", "state", "ver", "cpu_left", "chunk_end", "debt",
                 "sem", "slice_end", "kind", "slot", "served", "woken", "data", "cpu_ns", "txns",
                 "lock_try", "last_lsn", "thread", "xid", "rows", "hw", "slots", "client")

    def __init__(self, pid, name, kind):
        self.pid = pid
        self.name = name
        self.kind = kind
        self.gen = None
        self.core = None
        self.lastcore = -1
        self.state = BLOCKED
        self.ver = 0
        self.cpu_left = 0.0
        self.chunk_end = 0.0
        self.debt = 0.0
        self.sem = 0
        self.slice_end = 0.0
        self.slot = Line(("slot", pid))
        self.served = False
        self.woken = False
        self.data = None
        self.cpu_ns = 0.0
        self.txns = 0
        self.lock_try = -1
        self.last_lsn = 0
        self.thread = None
        self.xid = False
        self.rows = None
        self.hw = None
        self.slots = None
        self.client = -1


class Sim:
    def __init__(self, machine, rng):
        self.m = machine
        self.rng = rng
        self.now = 0.0
        self.heap = []
        self.seq = 0
        self.events = 0
        self.cores = [Core(i) for i in range(machine.cores)]
        self.idle = list(range(machine.cores - 1, -1, -1))      # a stack of idle core ids
        self.rq = deque()
        self.procs = []
        self.T_XFER = machine.t_xfer
        self.T_LOCAL = machine.t_local
        self.T_WAKE = machine.t_wake
        self.C_POST = machine.c_post
        self.C_SWITCH = machine.c_switch
        self.SLICE = machine.slice_ns
        self.preemptions = 0
        self.switches = 0
        self.wakeups = 0
        self.inline = 0
        self.until = 0.0

    # ---- processes -------------------------------------------------------
    def spawn(self, name, kind, genfn, *args, start=0.0):
        p = Proc(len(self.procs), name, kind)
        self.procs.append(p)
        p.gen = genfn(self, p, *args)
        p.state = WAKING
        self._push(start, 1, p, 0)
        return p

    def _push(self, t, kind, obj, ver):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, kind, obj, ver))

    def call_at(self, t, fn, arg=None):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, 3, fn, arg))

    def run(self, until):
        self.until = until
        heap = self.heap
        pop = heapq.heappop
        n = 0
        while heap:
            ev = heap[0]
            t = ev[0]
            if t > until:
                break
            pop(heap)
            n += 1
            self.now = t
            kind = ev[2]
            if kind == 0:
                p = ev[3]
                if ev[4] != p.ver:
                    continue
                if p.cpu_left > 0.0:
                    left = p.cpu_left
                    p.cpu_left = 0.0
                    if self.rq and t >= p.slice_end:
                        p.cpu_left = left
                        self._preempt(p)
                    else:
                        self._cpu(p, left)
                    continue
                self._step(p)
            elif kind == 1:
                self._arrive(ev[3])
            elif kind == 2:
                self._slice_timer(ev[3], ev[4])
            elif kind == 4:
                self._dispatch(ev[3], self.cores[ev[4]], False)    # onto the core reserved at the wake-up
            else:
                ev[3](ev[4])
        self.events += n
        if self.now < until:
            self.now = until

    def _step(self, p):
        gen = p.gen
        while True:
            try:
                req = gen.send(None)
            except StopIteration:
                p.state = DONE
                self._leave_core(p)
                return
            if req > 0.0:
                # nothing else happens before this process's next step: go
                # on at once (the same as an event, without the heap)
                t = self.now + req
                heap = self.heap
                if t <= self.until and heap and t < heap[0][0] and (t <= p.slice_end or not self.rq):
                    self.now = t
                    self.inline += 1
                    continue
                self._cpu(p, req)
                return
            if req == BLOCK:
                if p.sem > 0:
                    p.sem -= 1
                    continue
                p.state = BLOCKED
                self._leave_core(p)
                return
            if req == SPIN:
                if self.rq and self.now >= p.slice_end:
                    p.cpu_left = 0.0
                    self._preempt(p)
                    return
                p.state = SPINNING
                return
            # 0 or tiny negative: nothing to pay, go on

    def _cpu(self, p, d):
        now = self.now
        end = now + d
        if self.rq and end > p.slice_end:
            ce = p.slice_end if p.slice_end > now else now
            p.cpu_left = end - ce
            end = ce
        p.chunk_end = end
        self.seq += 1
        heapq.heappush(self.heap, (end, self.seq, 0, p, p.ver))

    def _leave_core(self, p):
        core = self.cores[p.core]
        p.lastcore = p.core
        p.core = None
        core.busy_ns += self.now - core.since
        if self.rq:
            self._dispatch(self.rq.popleft(), core, True)
        else:
            core.proc = None
            core.tver += 1
            self.idle.append(core.id)

    def _dispatch(self, q, core, switch):
        now = self.now
        core.proc = q
        core.since = now
        core.tver += 1
        q.core = core.id
        q.state = RUN
        q.slice_end = now + self.SLICE
        left = q.cpu_left
        q.cpu_left = 0.0
        if switch:
            self.switches += 1
            left += self.C_SWITCH
        q.ver += 1
        if left > 0.0:
            self._cpu(q, left)
        else:
            self.seq += 1
            heapq.heappush(self.heap, (now, self.seq, 0, q, q.ver))
        if self.rq:
            self.seq += 1
            heapq.heappush(self.heap, (q.slice_end, self.seq, 2, core, core.tver))

    def _preempt(self, p):
        """p (on a core) goes to the back of the run queue, its unfinished
        CPU time in p.cpu_left."""
        self.preemptions += 1
        core = self.cores[p.core]
        p.state = READY
        p.lastcore = p.core
        p.core = None
        p.ver += 1
        core.busy_ns += self.now - core.since
        self.rq.append(p)
        self._dispatch(self.rq.popleft(), core, True)

    def _slice_timer(self, core, tver):
        if core.tver != tver or not self.rq:
            return
        p = core.proc
        if p is None:
            return
        if p.state == SPINNING:
            p.cpu_left = 0.0
            self._preempt(p)
        elif p.state == RUN and p.chunk_end > self.now and p.slice_end <= self.now:
            p.cpu_left += p.chunk_end - self.now
            self._preempt(p)

    def _take_idle(self, p):
        """An idle core for p, taken off the idle list: its last one if idle."""
        idle = self.idle
        if p.lastcore >= 0 and p.lastcore in idle:
            idle.remove(p.lastcore)
            return p.lastcore
        return idle.pop()

    def _arrive(self, p):
        """p (woken, or new) becomes runnable: onto an idle core (its last one
        if idle), else the run queue."""
        if self.idle:
            self._dispatch(p, self.cores[self._take_idle(p)], False)
            return
        p.state = READY
        self.rq.append(p)
        if len(self.rq) == 1:
            now = self.now
            for core in self.cores:
                q = core.proc
                if q is None:
                    continue
                t = q.slice_end if q.slice_end > now else now
                self.seq += 1
                heapq.heappush(self.heap, (t, self.seq, 2, core, core.tver))

    def wake(self, q):
        """A semaphore post to q (the poster pays C_POST itself).  Where q
        runs is decided now, as Linux's select_task_rq does at the wake-up
        (model v3): a core idle at this moment is taken for q, which runs
        there after the wake-to-run latency of an idle core (an IPI, a vCPU
        leaving halt); with no core idle, q joins the run queue at once and
        runs when a core is free, usually the waker's as it blocks (the
        affine wake-up of a socket's sync wake), paying a context switch.
        (v1 and v2 decided at the end of the latency, and paid it on every
        wake-up: a core the waker left meanwhile was idle then.)"""
        if q.state == BLOCKED:
            q.state = WAKING
            self.wakeups += 1
            if self.idle:
                cid = self._take_idle(q)
                self.cores[cid].tver += 1           # reserved for q: no longer idle
                self.seq += 1
                heapq.heappush(self.heap, (self.now + self.T_WAKE, self.seq, 4, q, cid))
            else:
                self._arrive(q)
        else:
            q.sem += 1

    def kick(self, q):
        """A spinner sees the line change: it runs again (if still on its core)."""
        if q.state == SPINNING:
            q.state = RUN
            q.ver += 1
            self.seq += 1
            heapq.heappush(self.heap, (self.now, self.seq, 0, q, q.ver))

    def sleep_for(self, p, d):
        """Block p for d ns (I/O, a timeout); it is woken like any sleeper."""
        self.call_at(self.now + d, self._timeout, p)

    def _timeout(self, p):
        self.wake(p)

    def busy_ns(self):
        now = self.now
        return sum(c.busy_ns + ((now - c.since) if c.proc is not None else 0.0) for c in self.cores)

    # ---- cache lines -----------------------------------------------------
    def lw(self, core, line, changes=True):
        """A write (read-modify-write) of a line by a core: ns until it
        completes.  changes=False: an operation that takes the line but
        leaves its value (a failed compare-exchange or test-and-set)."""
        now = self.now
        if line.owner == core and line.sharers == (1 << core):
            cost = self.T_LOCAL
        else:
            cost = self.T_XFER
        start = line.free_at if line.free_at > now else now
        end = start + cost
        line.free_at = end
        line.owner = core
        line.sharers = 1 << core
        if changes:
            line.version += 1
        return end - now

    def lr(self, core, line):
        """A read of a line by a core: ns until it completes.  A read that
        misses waits for the writes queued before it and pays a transfer,
        but does not hold up the operations issued after it (once the owner
        has written the line back, the shared cache serves readers side by
        side)."""
        bit = 1 << core
        if line.sharers & bit:
            return 1.0
        now = self.now
        start = line.free_at if line.free_at > now else now
        line.sharers |= bit
        return start + self.T_XFER - now


def pay(p):
    """Yield p's accumulated cost: `yield from pay(p)` before an interaction."""
    d = p.debt
    if d > 0.0:
        p.debt = 0.0
        yield d


# ---- spinlocks -----------------------------------------------------------
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


# ---- LWLocks ---------------------------------------------------------------
class TrancheStats:
    __slots__ = ("acq_s", "acq_x", "sleeps", "wait_ns", "hold_x_ns", "hold_s_ns", "cas_retries", "backouts",
                 "instances")

    def __init__(self):
        self.acq_s = self.acq_x = self.sleeps = 0
        self.wait_ns = self.hold_x_ns = self.hold_s_ns = 0.0
        self.cas_retries = self.backouts = 0
        self.instances = set()


class LW:
    __slots__ = ("key", "tranche", "line", "wl", "excl", "nshared", "waiters", "release_ok", "st",
                 "x_since", "hold_x_ns", "biased", "slot_holders", "revoker", "rebias_at", "readbiased",
                 "served_hook", "var", "has_requests", "lsn_wait")

    def __init__(self, key, tranche, st, readbiased=False):
        self.key = key
        self.tranche = tranche
        self.line = Line(key)
        self.wl = Spin(self.line)            # LW_FLAG_LOCKED: the wait-list lock bit of the state word
        self.excl = None
        self.nshared = 0
        self.waiters = []                    # [proc, mode] in queue order
        self.release_ok = True
        self.st = st
        self.x_since = 0.0
        self.hold_x_ns = 0.0
        self.readbiased = readbiased
        self.biased = readbiased
        self.slot_holders = 0
        self.revoker = None
        self.rebias_at = 0.0
        self.served_hook = None
        self.var = 0                          # insertingAt (WAL insertion locks)
        self.has_requests = False
        self.lsn_wait = None


class LWImpl:
    """The LWLock protocols of one configuration (variant)."""

    def __init__(self, sim, implementation="atomic", shared_add=False, nprocs_scan=None):
        self.sim = sim
        self.impl = implementation
        self.shared_add = shared_add and implementation == "atomic"
        self.nprocs_scan = nprocs_scan
        self.pre_release_x = None

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

    def queue(self, p, lk, mode):
        yield from spin_acquire(self.sim, p, lk.wl)
        lk.waiters.append([p, mode])
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
        t0 = -1.0
        while True:
            got = yield from self.attempt(p, lk, mode)
            if got:
                break
            yield from self.queue(p, lk, mode)
            got = yield from self.attempt(p, lk, mode)
            if got:
                yield from self.dequeue(p, lk)
                break
            if t0 < 0.0:
                t0 = sim.now
            st.sleeps += 1
            if p.debt > 0.0:
                d = p.debt
                p.debt = 0.0
                yield d
            yield BLOCK
            p.debt += sim.lw(p.core, lk.line)      # retrying: set LW_FLAG_RELEASE_OK again
            lk.release_ok = True
        if t0 >= 0.0:
            st.wait_ns += sim.now - t0
        if mode == S and lk.readbiased and not lk.biased and lk.revoker is None and sim.now >= lk.rebias_at:
            lk.biased = True                        # a shared holder turns the bias back on
        return t0 >= 0.0

    def conditional(self, p, lk, mode):
        """LWLockConditionalAcquire (a generator): True if acquired."""
        got = yield from self.attempt(p, lk, mode, cond=True)
        if got:
            if mode == X:
                lk.st.acq_x += 1
            else:
                lk.st.acq_s += 1
        return got

    def acquire_or_wait(self, p, lk):
        """LWLockAcquireOrWait(X) (a generator): True if acquired, False if it
        slept until the lock was free and did not take it."""
        sim = self.sim
        got = yield from self.attempt(p, lk, X)
        if not got:
            yield from self.queue(p, lk, WUF)
            got = yield from self.attempt(p, lk, X)
            if got:
                yield from self.dequeue(p, lk)
            else:
                lk.st.sleeps += 1
                t0 = sim.now
                if p.debt > 0.0:
                    d = p.debt
                    p.debt = 0.0
                    yield d
                yield BLOCK
                lk.st.wait_ns += sim.now - t0
                return False
        lk.st.acq_x += 1
        return True

    def release(self, p, lk):
        """LWLockRelease (a generator)."""
        sim = self.sim
        if lk.excl is p:
            mode = X
        elif lk.readbiased and p.slots and lk in p.slots:
            p.slots.remove(lk)
            yield from self.slot_release(p, lk)
            return
        else:
            mode = S
        if mode == X and self.pre_release_x and lk in self.pre_release_x:
            yield from self.pre_release_x[lk](p, lk)
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
            if lk.served_hook is not None and lk.has_requests:
                yield from lk.served_hook(p, lk, mode)
            else:
                yield from self.wakeup(p, lk)

    def wakeup(self, p, lk):
        """LWLockWakeup: wake the first waiter, or every shared one from the
        first and all wait-until-free ones; clear RELEASE_OK if a waiter
        that will retry was woken."""
        sim = self.sim
        yield from spin_acquire(sim, p, lk.wl)
        W = lk.waiters
        wake = []
        new_ok = True
        woke = False
        i = 0
        while i < len(W):
            w = W[i]
            q = w[0]
            m = w[1]
            if woke and m == X:
                i += 1
                continue
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

    def wake_wuf(self, p, lk):
        """LWLockUpdateVar: wake every wait-until-free waiter (the flushers
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
        p.debt += sim.lw(p.core, p.slot)           # announce in our slot
        p.debt += sim.lr(p.core, lk.line)          # check the bias (full barrier between)
        if not lk.biased or lk.revoker is not None:
            p.debt += sim.lw(p.core, p.slot)       # withdraw, and take the word
            yield from self.acquire_word_shared(p, lk)
            return
        lk.slot_holders += 1
        if p.slots is None:
            p.slots = []
        p.slots.append(lk)

    def acquire_word_shared(self, p, lk):
        # the word path of a shared acquisition (after a failed slot attempt)
        t0 = -1.0
        while True:
            got = yield from self.attempt(p, lk, S)
            if got:
                break
            yield from self.queue(p, lk, S)
            got = yield from self.attempt(p, lk, S)
            if got:
                yield from self.dequeue(p, lk)
                break
            if t0 < 0.0:
                t0 = self.sim.now
            lk.st.sleeps += 1
            yield from pay(p)
            yield BLOCK
            lk.release_ok = True
        if t0 >= 0.0:
            lk.st.wait_ns += self.sim.now - t0

    def slot_release(self, p, lk):
        sim = self.sim
        p.debt += sim.lw(p.core, p.slot)           # release store: the slot is free
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
            p.debt += sim.lr(p.core, q.slot)
        yield from pay(p)
        while lk.slot_holders > 0:
            yield SPIN
        lk.revoker = None
        lk.rebias_at = sim.now + 9.0 * (sim.now - t0)
