"""The event loop and the machine of flexsim: the scheduler, cores and cache lines.

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
the waker's cost of a semaphore post.  Model v4 adds what a core loses to
oversubscription, each measured by `make machine-profile`:

  refill       a process dispatched onto a core pays the refill of its
               working set, a function of how many dispatches that core
               made since the process last ran there (the ring curve; a
               process that ran elsewhere pays it at as many dispatches as
               working sets fill the core's L2: its own is in the other
               core's cache or the shared L3, not further)
  lone         a process dispatched onto an idle core runs its CPU time
               slower by lone_ratio until it leaves the core (a core woken
               from idle: frequency, caches the host reused)
  wake-up preemption
               a post to a sleeper when no core is idle makes the sleeper
               take the poster's core with probability wake_preempt, the
               poster going to the back of the run queue at its next step,
               whatever it holds

Cache lines: each Line serialises the atomic operations on it in the order
they are issued (the free_at time); an operation by a core that does not
hold the line (owner for writes, sharer for reads) pays the transfer time,
one that does pays the local time.  A compare-and-exchange that another
write got in front of fails and is retried (version numbers).

The engine knows no lock: the protocols are in their own modules
(spinlock.py, lwlock.py, wal.py, procarray.py, rows.py, hwlock.py; model.py
assembles them into a point).
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


class Machine:
    """The machine's constants, in ns (named, with their sources, in params.py)."""

    def __init__(self, cores, t_xfer, t_local, t_wake, c_post, c_switch, slice_ns, cpu_scale=1.0,
                 refill=None, lone_ratio=1.0, wake_preempt=0.0, refill_cold=None):
        self.cores = cores
        self.t_xfer = float(t_xfer)
        self.t_local = float(t_local)
        self.t_wake = float(t_wake)
        self.c_post = float(c_post)
        self.c_switch = float(c_switch)
        self.slice_ns = float(slice_ns)
        self.cpu_scale = float(cpu_scale)
        # [(dispatches in between, ns)], ascending; None: no refill charged
        self.refill = [(float(d), float(ns)) for d, ns in refill] if refill else None
        # the dispatches in between that stand for a process that last ran
        # on another core (None: the curve's last point)
        self.refill_cold = refill_cold
        self.lone_ratio = float(lone_ratio)
        self.wake_preempt = float(wake_preempt)

    def refill_ns(self, d):
        """The refill a process pays on a core that made d dispatches since
        it last ran there (None: it did not run there last): the curve
        interpolated linearly, flat beyond its ends."""
        pts = self.refill
        if d is None:
            if self.refill_cold is None:
                return pts[-1][1]
            d = self.refill_cold
        if d >= pts[-1][0]:
            return pts[-1][1]
        if d <= pts[0][0]:
            return pts[0][1]
        for (d0, n0), (d1, n1) in zip(pts, pts[1:]):
            if d <= d1:
                return n0 + (n1 - n0) * (d - d0) / (d1 - d0)
        return pts[-1][1]


class Line:
    __slots__ = ("free_at", "owner", "sharers", "version", "name")

    def __init__(self, name=None):
        self.free_at = 0.0
        self.owner = -1
        self.sharers = 0
        self.version = 0
        self.name = name


class Core:
    __slots__ = ("id", "proc", "tver", "busy_ns", "since", "ndisp")

    def __init__(self, i):
        self.id = i
        self.proc = None
        self.tver = 0
        self.busy_ns = 0.0
        self.since = 0.0
        self.ndisp = 0              # dispatches so far (refill: how many ran here in between)


class Proc:
    """A simulated process: its generator and its scheduling state (a model
    adds its processes' own state in a subclass, spawn(..., proc=))."""
    __slots__ = ("pid", "name", "gen", "core", "lastcore", "state", "ver", "cpu_left", "chunk_end", "debt",
                 "sem", "slice_end", "kind", "data", "cpu_ns", "txns", "lastdisp", "slow", "yield_now")

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
        self.data = None
        self.cpu_ns = 0.0
        self.txns = 0
        self.lastdisp = 0           # its last core's ndisp when it was dispatched there
        self.slow = 1.0             # CPU time multiplier until it leaves the core (lone)
        self.yield_now = False      # a wakee takes its core at its next step (wake-up preemption)


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
        self.cur = None             # the process whose step runs (the waker of a wake())
        self.refill_total = 0.0
        self.lone_dispatches = 0
        self.wake_preemptions = 0

    # ---- processes -------------------------------------------------------
    def spawn(self, name, kind, genfn, *args, start=0.0, proc=Proc):
        p = proc(len(self.procs), name, kind)
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
            self.cur = p
            try:
                req = gen.send(None)
            except StopIteration:
                self.cur = None
                p.state = DONE
                self._leave_core(p)
                return
            self.cur = None
            if p.yield_now:
                # a process it woke takes its core (wake-up preemption): it
                # goes to the back of the run queue with what it asked for
                p.yield_now = False
                if req != BLOCK or p.sem > 0:
                    # its request is run when it is back on a core, at the
                    # speed it was asked at (a spinner looks again then; a
                    # sleep that a kept post ends has ended)
                    if req == BLOCK:
                        p.sem -= 1
                    p.cpu_left = req * p.slow if req > 0.0 else 0.0
                    self._preempt(p)
                    if len(self.rq) == 1:
                        self._arm_slices()
                    return
                # it leaves its core anyway
            if req > 0.0:
                req *= p.slow
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
        core.ndisp += 1
        q.core = core.id
        q.state = RUN
        q.slice_end = now + self.SLICE
        left = q.cpu_left
        q.cpu_left = 0.0
        if switch:
            self.switches += 1
            left += self.C_SWITCH
        m = self.m
        if m.refill is not None:
            d = core.ndisp - q.lastdisp - 1 if q.lastcore == core.id and q.lastdisp else None
            r = m.refill_ns(d)
            left += r
            self.refill_total += r
        q.lastdisp = core.ndisp
        # a core that was idle (no switch: nobody ran on it) runs it slower
        q.slow = 1.0 if switch else m.lone_ratio
        if not switch and m.lone_ratio != 1.0:
            self.lone_dispatches += 1
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
            self._arm_slices()

    def _arm_slices(self):
        """Others wait: each running process is preempted at its slice's end."""
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
                w = self.cur
                if (self.m.wake_preempt > 0.0 and w is not None and w.state == RUN and not w.yield_now
                        and self.rng.random() < self.m.wake_preempt):
                    # model v4: q takes the waker's core at the waker's next step
                    self.wake_preemptions += 1
                    w.yield_now = True
                    q.state = READY
                    self.rq.appendleft(q)
                    if len(self.rq) == 1:
                        self._arm_slices()          # others wait: every running process's slice counts
                    return
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
