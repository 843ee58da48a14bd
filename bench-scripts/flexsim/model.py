"""One simulated point: a program (compiled traces) replayed by N clients on
C cores with a variant's protocols.

What runs (processes of the engine): N backends, each replaying randomly
chosen traced transactions; pgbench's threads (min(N, cores) of them, as
flexbench runs pgbench), which take each statement's result, spend the
client's CPU time and send the next statement; the WAL writer.

The protocols the simulator runs itself (see compile.py for how the trace
hands them over): WAL insertion (an insertion lock chosen as xlog.c does,
the reservation under insertpos_lck or by fetch-add, WAL buffer pages
initialised under WALBufMappingLock or claimed lock-free, the old page
written out first if it is not), XLogFlush (WaitXLogInsertionsToFinish, then
LWLockAcquireOrWait on WALWriteLock or the LSN wait, the write and fsync of
everything inserted so far: group commit), the WAL writer
(XLogBackgroundFlush on a timer or when an asynchronous commit fills a
page, and the pages it initialises ahead), ProcArrayEndTransaction in each
procarray_group_clear mode, row locks held to the end of the transaction
(a conflicting updater sleeps on the holder's transaction lock, through a
LockManager partition lock) and heavyweight lock conflicts.
"""

import random
from collections import deque

from . import compile as C
from .engine import BLOCK, Proc, Sim, pay
from .hwlock import HwLocks
from .lwlock import LW, LWLocks, TrancheStats
from .procarray import ProcArrayClear
from .rows import Rows
from .wal import Wal, walwriter


class Variant:
    """The protocol settings of a variant (GUC values)."""

    def __init__(self, settings=None):
        s = dict(settings or {})
        self.settings = s
        self.wal_insert_locks = int(s.get("wal_insert_locks", 8))
        self.group_clear = s.get("procarray_group_clear", "on")
        self.holder_version = int(s.get("flexsim.holder_version", 2))
        self.shared_add = s.get("lwlock_shared_add", "off") == "on"
        self.flush_wait = s.get("wal_flush_wait", "acquire_or_wait")
        self.reservation = s.get("wal_insert_reservation", "spinlock")
        self.buffer_init = s.get("wal_buffer_init", "lock")
        self.implementation = s.get("lwlock_implementation", "atomic")
        rb = s.get("lwlock_read_biased", "")
        self.read_biased = {t.strip().lower() for t in rb.split(",") if t.strip()}
        self.fastpath = s.get("lock_fastpath", "on") == "on"


class Costs:
    """CPU and I/O costs of the protocols the simulator runs itself (ns)."""

    def __init__(self, c_pageinit=800.0, c_write_call=2000.0, c_write_page=400.0, t_fsync=1e6,
                 c_member=60.0, c_client=3000.0, c_backend=3000.0, c_lockmgr=400.0, pins=True,
                 t_fsync_page=0.0, trace_scale=1.0):
        """c_client: pgbench's CPU per statement; c_backend: the backend's
        CPU per transaction outside the traced transaction."""
        self.c_pageinit = c_pageinit
        self.c_write_call = c_write_call
        self.c_write_page = c_write_page
        self.t_fsync = t_fsync
        self.t_fsync_page = t_fsync_page      # what each page after the first adds to a flush
        # the backend's CPU time from the traces (and outside them) against
        # what it is with every core busy (model v3: calibrate.py with as
        # many clients as cores), on top of the machine's speed
        self.trace_scale = trace_scale
        self.c_member = c_member
        self.c_client = c_client
        self.c_backend = c_backend
        self.c_lockmgr = c_lockmgr
        self.pins = pins


class Backend(Proc):
    """A backend process: what the protocols keep of it (PGPROC's fields and
    the backend's own state)."""
    __slots__ = ("client", "thread", "rows", "hw", "served", "last_lsn", "lock_try")

    def __init__(self, pid, name, kind):
        super().__init__(pid, name, kind)
        self.client = -1            # the client it serves (per-client lock names)
        self.thread = None          # the pgbench thread of its client
        self.rows = None            # rows it holds locked until its transaction ends
        self.hw = None              # heavyweight locks it holds
        self.served = False         # PGPROC's lwServed / procArrayGroupMember: its request was served
        self.last_lsn = 0           # the end of its last WAL record (XactLastRecEnd)
        self.lock_try = -1          # the WAL insertion lock it tries first (MyLockNo)


class Point(Wal, ProcArrayClear, Rows, HwLocks):
    """One point: the engine, the LWLocks of the variant and the protocols
    of wal.py, procarray.py, rows.py and hwlock.py, with the processes that
    run them."""

    def __init__(self, program, machine, variant, costs, clients, seed=1, threads=None, row_population=None,
                 client=True):
        self.program = program
        self.machine = machine
        self.variant = variant
        self.costs = costs
        self.clients = clients
        self.rng = random.Random(seed)
        # the backend's traced CPU time (and its time between transactions)
        # on this machine: the machine's speed and the traces' own scale
        self.backend_scale = machine.cpu_scale * costs.trace_scale
        self.sim = Sim(machine, self.rng)
        self.threads = threads or max(1, min(clients, machine.cores))
        self.stats = {}
        self.locks = {}
        self.done = 0
        self.lwi = LWLocks(self.sim, variant.implementation, variant.shared_add)
        self.row_population = row_population or {}
        self.client = client            # False: no pgbench (a micro-benchmark's workers loop by themselves)
        self.counters = {k: 0 for k in ("waitfinish_sleeps", "walbuf_inits_inserter", "walbuf_inits_writer",
                                        "flushes", "flush_pages", "group_members", "groups", "served",
                                        "self_cleared", "row_waits", "tuplock_waits", "hw_waits", "rts", "reserve_contended",
                                        "pageinit_spins")}
        self._setup()

    # ---- locks -------------------------------------------------------------
    def tranche(self, name):
        st = self.stats.get(name)
        if st is None:
            st = self.stats[name] = TrancheStats()
        return st

    def lock(self, key, p):
        if len(key) == 3:                     # per client
            key = (key[0], key[1], p.client)
        lk = self.locks.get(key)
        if lk is None:
            tr = key[0]
            lk = self.locks[key] = LW(key, tr, self.tranche(tr),
                                      readbiased=tr.lower() in self.variant.read_biased
                                      or "all" in self.variant.read_biased)
            self.tranche(tr).instances.add(key)
        return lk

    def _setup(self):
        sim = self.sim
        self.lwi.nprocs_scan = self.clients + 8
        self._setup_wal()
        self._setup_procarray()
        self._setup_rows()
        self._setup_hw()
        # processes
        self.thread_procs = []
        for i in range(self.threads):
            th = sim.spawn(f"pgbench-{i}", "client", _client_thread, self)
            th.data = deque()
            self.thread_procs.append(th)
        self.backends = []
        for c in range(self.clients):
            p = sim.spawn(f"backend-{c}", "backend", _backend, self, start=self.rng.random() * 20000.0,
                          proc=Backend)
            p.client = c
            p.thread = self.thread_procs[c % self.threads]
            p.rows = []
            p.hw = []
            self.backends.append(p)
        self.walwriter = sim.spawn("walwriter", "walwriter", walwriter, self)
        self.walwriter.data = 0

    # ---- the transaction's end ---------------------------------------------------
    def end(self, p):
        yield from pay(p)                       # the transaction's CPU time up to its end holds its locks
        for key in p.rows:
            if self.rows.get(key) is p:
                del self.rows[key]
        p.rows.clear()
        w = self.xid_waiters.pop(p, None)
        if w:
            # the release of the transaction lock grants it to every waiter
            # and wakes them (ProcLockWakeup, under its partition lock)
            yield from self._lockmgr(p, ("transactionid", p.pid), under=lambda: w)
        for key in list(p.hw):
            yield from self.hw_release(p, key)

    # ---- the client ------------------------------------------------------------
    def round_trip(self, p, boundary):
        """The backend sends its result and waits for the next statement;
        pgbench's thread spends the client's time and sends it.  At a
        transaction's end (boundary) the backend also spends its time
        outside the traced transaction (sending, reading and parsing the
        next statement; within a transaction that time is in the trace)."""
        sim = self.sim
        c = self.costs
        scale = self.backend_scale
        if boundary:
            p.debt += 0.5 * c.c_backend * scale
        th = p.thread
        th.data.append(p)
        p.debt += sim.C_POST
        sim.wake(th)
        yield from pay(p)
        yield BLOCK
        if boundary:
            p.debt += 0.5 * c.c_backend * scale

    # ---- running -----------------------------------------------------------------
    def run(self, warmup_ns, measure_ns, max_events=None):
        sim = self.sim
        sim.run(warmup_ns)
        snap = self._snapshot()
        t0 = sim.now
        ev0 = sim.events
        target = t0 + measure_ns
        step = measure_ns / 20
        while sim.now < target:
            sim.run(min(target, sim.now + step))
            if max_events and sim.events - ev0 > max_events:
                break
        return self._result(snap, sim.now - t0)

    def _snapshot(self):
        return {"done": self.done, "busy": self.sim.busy_ns(),
                "stats": {k: (v.acq_s + v.acq_x + v.acq_w, v.sleeps, v.wait_ns, v.hold_x_ns, v.cas_retries)
                          for k, v in self.stats.items()},
                "counters": dict(self.counters), "events": self.sim.events,
                "lockhold": {k: lk.hold_x_ns for k, lk in self.locks.items()},
                "preempt": self.sim.preemptions, "switches": self.sim.switches, "wakeups": self.sim.wakeups,
                "refill": self.sim.refill_total, "lone": self.sim.lone_dispatches,
                "wake_preempt": self.sim.wake_preemptions}

    def _result(self, snap, dt):
        txns = self.done - snap["done"]
        tps = txns / dt * 1e9 if dt > 0 else 0.0
        per = {}
        for k, v in self.stats.items():
            a0 = snap["stats"].get(k, (0, 0, 0.0, 0.0, 0))
            acq = v.acq_s + v.acq_x + v.acq_w - a0[0]
            if acq == 0 and v.sleeps == a0[1]:
                continue
            hottest = 0.0
            for key in v.instances:
                lk = self.locks[key]
                u = (lk.hold_x_ns - snap["lockhold"].get(key, 0.0)) / dt if dt > 0 else 0.0
                if u > hottest:
                    hottest = u
            per[k] = {"acquires": acq, "sleeps": v.sleeps - a0[1], "wait_ns": v.wait_ns - a0[2],
                      "hold_x_ns": v.hold_x_ns - a0[3], "cas_retries": v.cas_retries - a0[4],
                      "hottest_utilization": hottest, "instances": len(v.instances)}
        busy = self.sim.busy_ns() - snap["busy"]
        return {"tps": tps, "transactions": txns, "sim_ns": dt, "events": self.sim.events - snap["events"],
                "cpu_utilization": busy / (dt * self.machine.cores) if dt > 0 else 0.0,
                "tranches": per,
                "counters": {k: v - snap["counters"].get(k, 0) for k, v in self.counters.items()},
                "preemptions": self.sim.preemptions - snap["preempt"],
                "switches": self.sim.switches - snap["switches"],
                "wakeups": self.sim.wakeups - snap["wakeups"],
                "refill_ns": self.sim.refill_total - snap["refill"],
                "lone_dispatches": self.sim.lone_dispatches - snap["lone"],
                "wake_preemptions": self.sim.wake_preemptions - snap["wake_preempt"],
                "slices": dt / self.sim.SLICE if self.sim.SLICE else 0.0}


def _client_thread(sim, th, pt):
    q = th.data
    c_client = pt.costs.c_client * pt.machine.cpu_scale
    while True:
        if not q:
            yield BLOCK
            continue
        be = q.popleft()
        th.debt += c_client
        yield from pay(th)
        th.debt += sim.C_POST
        sim.wake(be)


def _backend(sim, p, pt):
    lwi = pt.lwi
    txns = pt.program.txns
    rng = pt.rng
    scale = pt.backend_scale
    pins = pt.costs.pins and not pt.program.has_pins        # pins of the trace, else one around each content lock
    ntx = len(txns)
    lock = pt.lock
    held_cond = set()
    bufheld = []                                            # content locks held: [lock, mode]
    rowpop = pt.row_population
    # the opcodes (compile.py), bound to locals for the dispatch
    OP_CPU, OP_LW, OP_REL, OP_PIN, OP_COND, OP_WAL, OP_FLUSH, OP_CLEAR, OP_ROW, OP_HW, OP_HWREL, OP_IO, OP_RT, \
        OP_END = C.OP_CPU, C.OP_LW, C.OP_REL, C.OP_PIN, C.OP_COND, C.OP_WAL, C.OP_FLUSH, C.OP_CLEAR, C.OP_ROW, \
        C.OP_HW, C.OP_HWREL, C.OP_IO, C.OP_RT, C.OP_END
    while True:
        tp = txns[rng.randrange(ntx)]
        rowmap = {}
        bufheld.clear()
        for op in tp.ops:
            c = op.op
            if c == OP_CPU:
                p.debt += op.ns * scale
            elif c == OP_LW:
                lk = lock(op.key, p)
                if pins and lk.tranche == "BufferContent":
                    yield from pay(p)
                    p.debt += sim.lw(p.core, lk.line)            # PinBuffer
                if op.how == "orwait":
                    got = yield from lwi.acquire_or_wait(p, lk)
                    if not got:
                        held_cond.add(lk)                        # did not get it: skip its release
                else:
                    yield from lwi.acquire(p, lk, op.mode)
                    if lk.tranche == "BufferContent":
                        bufheld.append((lk, op.mode))
            elif c == OP_REL:
                lk = lock(op.key, p)
                if lk in held_cond:
                    held_cond.discard(lk)
                    continue
                if bufheld and lk.tranche == "BufferContent":
                    for i in range(len(bufheld) - 1, -1, -1):
                        if bufheld[i][0] is lk:
                            del bufheld[i]
                            break
                yield from lwi.release(p, lk)
                if pins and lk.tranche == "BufferContent":
                    p.debt += sim.lw(p.core, lk.line)            # UnpinBuffer
            elif c == OP_PIN:
                lk = lock(op.key, p)
                yield from pay(p)
                p.debt += sim.lw(p.core, lk.line)                # PinBuffer / UnpinBuffer
            elif c == OP_COND:
                lk = lock(op.key, p)
                got = yield from lwi.conditional(p, lk, op.mode)
                if not got:
                    held_cond.add(lk)
                elif lk.tranche == "BufferContent":
                    bufheld.append((lk, op.mode))
            elif c == OP_WAL:
                yield from pt.wal_insert(p, op.bytes, op.copy_ns)
            elif c == OP_FLUSH:
                yield from pt.flush(p, p.last_lsn)
            elif c == OP_CLEAR:
                yield from pt.clear(p, op.hold_ns)
            elif c == OP_ROW:
                rel, rid = op.relation, op.row
                n = rowpop.get(rel)
                if n:
                    m = rowmap.get((rel, rid))
                    if m is None:
                        m = rowmap[(rel, rid)] = rng.randrange(n)
                    key = (rel, m)
                else:
                    key = (rel, rid)
                yield from pt.row(p, key, bufheld)
            elif c == OP_HW:
                yield from pt.hw_acquire(p, op.key, op.mode)
            elif c == OP_HWREL:
                yield from pt.hw_release(p, op.key)
            elif c == OP_IO:
                yield from pay(p)
                sim.sleep_for(p, op.ns)
                yield BLOCK
            elif c == OP_RT:
                pt.counters["rts"] += 1
                yield from pt.round_trip(p, False)
            elif c == OP_END:
                if op.xid and tp.flushes == 0 and tp.nwal:
                    yield from pt.async_commit(p)
                yield from pt.end(p)
        pt.done += 1
        p.txns += 1
        if pt.client:
            pt.counters["rts"] += 1
            yield from pt.round_trip(p, True)

