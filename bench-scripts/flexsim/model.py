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

import math
import random
import zlib
from collections import deque

from . import compile as C
from .engine import BLOCK, LW, LWImpl, S, SPIN, WUF, X, Line, Sim, Spin, TrancheStats, pay, spin_acquire, \
    spin_release

PAGE = 8192
PAGE_USABLE = PAGE - 24
WAL_BUFFERS = 2048              # wal_buffers = 16 MB, as both machines have (shared_buffers >= 512 MB)
WAL_WRITER_DELAY = 200e6        # ns
WAL_WRITER_FLUSH_AFTER = 128    # pages (1 MB)
LOCKMANAGER_PARTITIONS = 16


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


class Point:
    # tests break group commit with this: a flusher writes its own record only
    flush_own_only = False

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
        self.lwi = LWImpl(self.sim, variant.implementation, variant.shared_add)
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
        v = self.variant
        sim = self.sim
        self.lwi.nprocs_scan = self.clients + 8
        # WAL
        self.ins_locks = [self.lock(("WALInsert", str(i)), None) for i in range(v.wal_insert_locks)]
        self.bufmap = self.lock(("WALBufMapping", "0"), None)
        self.walwrite = self.lock(("WALWrite", "0"), None)
        self.procarray = self.lock(("ProcArray", "0"), None)
        self.insertpos = Spin(Line("insertpos"), "insertpos_lck")
        self.info_lck = Spin(Line("info_lck"), "info_lck")
        self.xlblocks_line = Line("xlblocks")
        self.init_reserved_line = Line("InitializeReserved")
        self._wallines = {}
        self.pos = 0                    # usable bytes reserved
        self.write_pos = 0
        self.flush_pos = 0
        self.rqst_write = 0
        self.async_lsn = 0
        self.init_upto = WAL_BUFFERS    # pages initialised: [0, init_upto)
        self.page_done = {}             # lock-free init: page -> spinners waiting for it
        self.init_reserved = WAL_BUFFERS
        self.pages_written_upto = 0
        self.group = []                 # procArrayGroupFirst
        self.group_line = Line("procArrayGroupFirst")
        self.completion_line = Line("xactCompletionCount")
        self.rows = {}
        self.row_ver = {}               # row -> its version number (a new one per transaction that takes it)
        self.xid_waiters = {}           # process -> those waiting for its transaction to end
        self.tuplocks = {}              # (row, version) -> [holder, FIFO waiters...]
        self.hw = {}
        self.hw_waiters = {}
        if v.group_clear == "holder":
            if v.holder_version == 1:
                self.procarray.served_hook = None
                self.serve_v1 = True
            else:
                self.procarray.served_hook = self._serve_requests
                self.serve_v1 = False
        else:
            self.serve_v1 = False
        if self.serve_v1:
            self.lwi.pre_release_x = {self.procarray: self._serve_v1}
        # processes
        self.thread_procs = []
        for i in range(self.threads):
            th = sim.spawn(f"pgbench-{i}", "client", _client_thread, self)
            th.data = deque()
            self.thread_procs.append(th)
        self.backends = []
        for c in range(self.clients):
            p = sim.spawn(f"backend-{c}", "backend", _backend, self, start=self.rng.random() * 20000.0)
            p.client = c
            p.thread = self.thread_procs[c % self.threads]
            p.rows = []
            p.hw = []
            self.backends.append(p)
        self.walwriter = sim.spawn("walwriter", "walwriter", _walwriter, self)
        self.walwriter.data = 0

    # ---- WAL -----------------------------------------------------------------
    def wal_insert(self, p, nbytes, copy_ns):
        sim = self.sim
        lwi = self.lwi
        n = len(self.ins_locks)
        if p.lock_try < 0:
            p.lock_try = (p.client + 1) % n
        lk = self.ins_locks[p.lock_try]
        slept = yield from lwi.acquire(p, lk, X)
        if slept:
            p.lock_try = (p.lock_try + 1) % n
        lk.var = 0
        size = (nbytes + 7) & ~7
        # ReserveXLogInsertLocation
        if self.variant.reservation == "atomic":
            yield from pay(p)
            p.debt += sim.lw(p.core, self.insertpos.line)
            start = self.pos
            self.pos += size
        else:
            before = self.insertpos.contended
            yield from spin_acquire(sim, p, self.insertpos)
            if self.insertpos.contended != before:
                self.counters["reserve_contended"] += 1
            start = self.pos
            self.pos += size
            spin_release(sim, p, self.insertpos)
        end = start + size
        first_page = start // PAGE_USABLE
        last_page = (end - 1) // PAGE_USABLE
        if last_page != first_page:
            # crossed a page: LogwrtRqst.Write advances under info_lck
            yield from spin_acquire(sim, p, self.info_lck)
            if self.rqst_write < end:
                self.rqst_write = end
            spin_release(sim, p, self.info_lck)
        # CopyXLogRecordToWAL: GetXLogBuffer for every page the record touches
        for pg in range(first_page, last_page + 1):
            if pg >= self.init_upto:
                lk.var = max(start, pg * PAGE_USABLE)      # WALInsertLockUpdateInsertingAt
                if any(w[1] == WUF for w in lk.waiters):
                    yield from lwi.wake_wuf(p, lk)
                yield from self.advance(p, pg)
        p.debt += sim.lw(p.core, self._walline(start))
        p.debt += copy_ns * self.backend_scale
        lk.var = 0
        yield from lwi.release(p, lk)
        p.last_lsn = end

    def _walline(self, pos):
        # the cache line a record starts in is shared with the record before it
        k = (pos // 64) & 4095
        ln = self._wallines.get(k)
        if ln is None:
            ln = self._wallines[k] = Line(("walbuf", k))
        return ln

    def advance(self, p, upto_page, opportunistic=False):
        """AdvanceXLInsertBuffer: initialise WAL buffer pages up to upto_page."""
        if self.variant.buffer_init == "lockfree":
            yield from self._advance_lockfree(p, upto_page, opportunistic)
            return
        sim = self.sim
        lwi = self.lwi
        yield from lwi.acquire(p, self.bufmap, X)
        n = 0
        while opportunistic or upto_page >= self.init_upto:
            old = self.init_upto - WAL_BUFFERS
            if old >= 0 and self.write_pos < (old + 1) * PAGE_USABLE:
                if opportunistic:
                    break
                yield from lwi.release(p, self.bufmap)
                yield from self._write_old_page(p, (old + 1) * PAGE_USABLE)
                yield from lwi.acquire(p, self.bufmap, X)
                continue
            if opportunistic and self.init_upto >= upto_page:
                break
            p.debt += self.costs.c_pageinit * self.machine.cpu_scale
            p.debt += sim.lw(p.core, self.xlblocks_line)
            self.init_upto += 1
            n += 1
        yield from lwi.release(p, self.bufmap)
        self.counters["walbuf_inits_writer" if opportunistic else "walbuf_inits_inserter"] += n

    def _advance_lockfree(self, p, upto_page, opportunistic):
        sim = self.sim
        n = 0
        while True:
            if not opportunistic and upto_page < self.init_upto:
                break
            if opportunistic and self.init_reserved >= upto_page:
                break
            pg = self.init_reserved
            if not opportunistic and pg > upto_page:
                # the page we need is being initialised by another: spin for it
                self.counters["pageinit_spins"] += 1
                yield from pay(p)
                if upto_page < self.init_upto:
                    continue                    # finished while we paid: no spin (its kick came too early)
                self.page_done.setdefault(upto_page, []).append(p)
                yield SPIN
                continue
            old = pg - WAL_BUFFERS
            if old >= 0 and (self.write_pos < (old + 1) * PAGE_USABLE or self.init_upto < old + 1):
                if opportunistic:
                    break
                if self.write_pos < (old + 1) * PAGE_USABLE:
                    yield from self._write_old_page(p, (old + 1) * PAGE_USABLE)
                else:
                    yield from pay(p)
                    yield 200.0
                continue
            yield from pay(p)
            p.debt += sim.lw(p.core, self.init_reserved_line)    # claim by compare-exchange
            if self.init_reserved != pg:
                continue
            self.init_reserved = pg + 1
            p.debt += self.costs.c_pageinit * self.machine.cpu_scale
            yield from pay(p)
            p.debt += sim.lw(p.core, self.xlblocks_line)
            self._page_finished(pg)
            n += 1
        self.counters["walbuf_inits_writer" if opportunistic else "walbuf_inits_inserter"] += n

    def _page_finished(self, pg):
        # InitializedUpTo advances over every finished page (in order)
        done = getattr(self, "_done_set", None)
        if done is None:
            done = self._done_set = set()
        done.add(pg)
        while self.init_upto in done:
            done.discard(self.init_upto)
            w = self.page_done.pop(self.init_upto, None)
            self.init_upto += 1
            if w:
                for q in w:
                    self.sim.kick(q)
        for k in [k for k in self.page_done if k < self.init_upto]:
            for q in self.page_done.pop(k):
                self.sim.kick(q)

    def _write_old_page(self, p, upto):
        """XLogWriteOutOldPage: wait for insertions, take WALWriteLock, write."""
        yield from self.wait_insertions(p, upto)
        yield from self.lwi.acquire(p, self.walwrite, X)
        if self.write_pos < upto:
            yield from self.xlog_write(p, upto, flush=False)
        yield from self.lwi.release(p, self.walwrite)

    def wait_insertions(self, p, upto):
        """WaitXLogInsertionsToFinish: returns the position up to which every
        insertion has finished."""
        sim = self.sim
        lwi = self.lwi
        if self.variant.reservation == "atomic":
            yield from pay(p)
            p.debt += sim.lr(p.core, self.insertpos.line)
            reserved = self.pos
        else:
            yield from spin_acquire(sim, p, self.insertpos)
            reserved = self.pos
            spin_release(sim, p, self.insertpos)
        if upto > reserved:
            upto = reserved
        finished = reserved
        for lk in self.ins_locks:
            lk.st.acq_x += 1          # LWLockWaitForVar counts as an acquisition in the lab's counters
            while True:
                yield from pay(p)
                p.debt += sim.lr(p.core, lk.line)
                if lk.excl is None:
                    break
                if lk.var and lk.var >= upto:
                    if lk.var < finished:
                        finished = lk.var
                    break
                yield from lwi.queue(p, lk, WUF)
                if lk.excl is None or (lk.var and lk.var >= upto):
                    yield from lwi.dequeue(p, lk)
                    continue
                self.counters["waitfinish_sleeps"] += 1
                lk.st.sleeps += 1
                t0 = sim.now
                yield from pay(p)
                yield BLOCK
                lk.st.wait_ns += sim.now - t0
        return finished

    def xlog_write(self, p, upto, flush):
        """XLogWrite: write the pages up to upto; fsync if flush (blocking I/O)."""
        sim = self.sim
        c = self.costs
        start_page = self.write_pos // PAGE_USABLE
        end_page = (upto - 1) // PAGE_USABLE + 1
        npages = max(1, end_page - start_page)
        p.debt += (c.c_write_call + npages * c.c_write_page) * self.machine.cpu_scale
        yield from pay(p)
        if upto > self.write_pos:
            self.write_pos = upto
        if flush:
            # fdatasync writes back every page written since the last one
            synced = max(1, end_page - self.flush_pos // PAGE_USABLE)
            self.counters["flushes"] += 1
            self.counters["flush_pages"] += synced
            sim.sleep_for(p, c.t_fsync + (synced - 1) * c.t_fsync_page)
            yield BLOCK
            if upto > self.flush_pos:
                self.flush_pos = upto

    def flush(self, p, record):
        """XLogFlush(record): group commit."""
        sim = self.sim
        lwi = self.lwi
        while True:
            if self.flush_pos >= record:
                return
            yield from spin_acquire(sim, p, self.info_lck)
            rq = max(record, self.rqst_write)
            spin_release(sim, p, self.info_lck)
            insertpos = yield from self.wait_insertions(p, rq)
            if self.variant.flush_wait == "lsn":
                got = yield from self._acquire_or_wait_lsn(p, record)
            else:
                got = yield from lwi.acquire_or_wait(p, self.walwrite)
            if not got:
                continue
            if self.flush_pos >= record:
                yield from lwi.release(p, self.walwrite)
                return
            yield from self.xlog_write(p, record if self.flush_own_only else max(insertpos, record), flush=True)
            yield from self._release_walwrite(p)
            return

    def _release_walwrite(self, p):
        if self.variant.flush_wait != "lsn":
            yield from self.lwi.release(p, self.walwrite)
            return
        # LWLockAcquireOrWaitLSN's release: wake the waiters whose target is
        # flushed, and one still short of it (the most recently queued), who
        # takes the lock and flushes
        sim = self.sim
        lk = self.walwrite
        yield from pay(p)
        p.debt += sim.lw(p.core, lk.line)
        lk.excl = None
        h = sim.now - lk.x_since
        lk.hold_x_ns += h
        lk.st.hold_x_ns += h
        if lk.waiters:
            yield from spin_acquire(sim, p, lk.wl)
            wake = []
            short = None
            keep = []
            for w in lk.waiters:
                q = w[0]
                if w[1] == WUF and q.last_lsn <= self.flush_pos:
                    wake.append(q)
                elif w[1] == WUF:
                    short = w
                    keep.append(w)
                else:
                    keep.append(w)
            if short is not None:
                keep.remove(short)
                wake.append(short[0])
            elif keep:
                wake.append(keep.pop(0)[0])
            lk.waiters = keep
            spin_release(sim, p, lk.wl)
            for q in wake:
                p.debt += sim.C_POST
                sim.wake(q)

    def _acquire_or_wait_lsn(self, p, record):
        sim = self.sim
        lwi = self.lwi
        lk = self.walwrite
        got = yield from lwi.attempt(p, lk, X)
        if got:
            lk.st.acq_x += 1
            return True
        yield from lwi.queue(p, lk, WUF)
        got = yield from lwi.attempt(p, lk, X)
        if got:
            yield from lwi.dequeue(p, lk)
            lk.st.acq_x += 1
            return True
        lk.st.sleeps += 1
        t0 = sim.now
        yield from pay(p)
        yield BLOCK
        lk.st.wait_ns += sim.now - t0
        return False

    def async_commit(self, p):
        """XLogSetAsyncXactLSN: under info_lck; wake the WAL writer when a
        page is full."""
        sim = self.sim
        yield from spin_acquire(sim, p, self.info_lck)
        if self.async_lsn < p.last_lsn:
            self.async_lsn = p.last_lsn
        spin_release(sim, p, self.info_lck)
        ww = self.walwriter
        full = (self.async_lsn // PAGE_USABLE) * PAGE_USABLE
        if full > self.flush_pos and ww.sem == 0:
            p.debt += sim.C_POST
            sim.wake(ww)

    # ---- ProcArrayEndTransaction --------------------------------------------
    def clear(self, p, hold):
        sim = self.sim
        lwi = self.lwi
        pa = self.procarray
        mode = self.variant.group_clear
        hold = hold * self.backend_scale
        if mode in ("on", "holder"):
            got = yield from lwi.conditional(p, pa, X)
            if got:
                self._do_clear(p, hold, 1)
                yield from lwi.release(p, pa)
                return
        if mode == "off":
            yield from lwi.acquire(p, pa, X)
            self._do_clear(p, hold, 1)
            yield from lwi.release(p, pa)
            return
        if mode == "holder":
            got = yield from self._acquire_or_served(p)
            if got:
                self.counters["self_cleared"] += 1
                self._do_clear(p, hold, 1)
                yield from lwi.release(p, pa)
            else:
                self.counters["served"] += 1
            return
        # ProcArrayGroupClearXid
        yield from pay(p)
        p.debt += sim.lw(p.core, self.group_line)
        first = not self.group
        self.group.append(p)
        if not first:
            p.served = False
            yield from pay(p)
            while not p.served:
                yield BLOCK
            return
        yield from lwi.acquire(p, pa, X)
        yield from pay(p)
        p.debt += sim.lw(p.core, self.group_line)       # take the whole list
        members = self.group
        self.group = []
        self._do_clear(p, hold, len(members))
        self.counters["groups"] += 1
        self.counters["group_members"] += len(members)
        yield from lwi.release(p, pa)
        for q in members:
            if q is not p:
                q.served = True
                p.debt += sim.C_POST
                sim.wake(q)

    def _do_clear(self, p, hold, n):
        p.debt += hold + (n - 1) * self.costs.c_member
        p.debt += self.sim.lw(p.core, self.completion_line)

    def _acquire_or_served(self, p):
        """LWLockAcquireOrServed(ProcArrayLock): True if acquired, False if served."""
        sim = self.sim
        lwi = self.lwi
        pa = self.procarray
        p.served = False
        acquired = True
        while True:
            got = yield from lwi.attempt(p, pa, X)
            if got:
                break
            yield from lwi.queue(p, pa, X)
            pa.waiters[-1].append(True)           # servable
            p.debt += sim.lw(p.core, pa.line)     # LW_FLAG_HAS_REQUESTS
            pa.has_requests = True
            got = yield from lwi.attempt(p, pa, X)
            if got:
                yield from lwi.dequeue(p, pa)
                break
            pa.st.sleeps += 1
            t0 = sim.now
            yield from pay(p)
            yield BLOCK
            pa.st.wait_ns += sim.now - t0
            if p.served:
                acquired = False
                break
            p.debt += sim.lw(p.core, pa.line)     # RELEASE_OK
            pa.release_ok = True
        if acquired and p.served:
            yield from lwi.release(p, pa)
            acquired = False
        if acquired:
            pa.st.acq_x += 1
        return acquired

    def _take_requests(self, pa):
        req = [w[0] for w in pa.waiters if w[1] == X and len(w) > 2]
        if req:
            pa.waiters = [w for w in pa.waiters if not (w[1] == X and len(w) > 2)]
        pa.has_requests = False
        return req

    def _serve_requests(self, p, pa, released):
        """LWLockServeRequests (holder mode, this design): the last process
        out takes the lock from the free state, clears the queued XIDs,
        releases it and wakes them; up to four batches."""
        sim = self.sim
        lwi = self.lwi
        batches = 0
        while True:
            yield from pay(p)
            p.debt += sim.lw(p.core, pa.line)
            if pa.excl is not None or pa.nshared:
                return
            pa.excl = p
            pa.x_since = sim.now
            batches += 1
            yield from spin_acquire(sim, p, pa.wl)
            req = self._take_requests(pa)
            spin_release(sim, p, pa.wl)
            if req:
                self._do_clear(p, self.costs.c_member, len(req))
                for q in req:
                    q.served = True
                self.counters["groups"] += 1
                self.counters["group_members"] += len(req)
            yield from pay(p)
            p.debt += sim.lw(p.core, pa.line)
            pa.excl = None
            pa.st.hold_x_ns += sim.now - pa.x_since
            for q in req:
                p.debt += sim.C_POST
                sim.wake(q)
            if not (pa.waiters and pa.release_ok):
                return
            if not pa.has_requests or batches >= 4:
                break
        yield from lwi.wakeup(p, pa)

    def _serve_v1(self, p, pa):
        """The first holder design (the 16-core run): an exclusive release
        serves the queued requests while it still holds the lock."""
        sim = self.sim
        if not pa.has_requests:
            return
        yield from spin_acquire(sim, p, pa.wl)
        req = self._take_requests(pa)
        spin_release(sim, p, pa.wl)
        if req:
            self._do_clear(p, self.costs.c_member, len(req))
            for q in req:
                q.served = True
            self.counters["groups"] += 1
            self.counters["group_members"] += len(req)
            yield from pay(p)
            for q in req:
                p.debt += sim.C_POST
                sim.wake(q)

    # ---- rows and heavyweight locks ---------------------------------------
    def _lockmgr(self, p, key):
        part = zlib.crc32(repr(key).encode()) % LOCKMANAGER_PARTITIONS    # deterministic across runs
        lk = self.lock(("LockManager", str(part)), p)
        yield from self.lwi.acquire(p, lk, X)
        p.debt += self.costs.c_lockmgr * self.machine.cpu_scale
        yield from self.lwi.release(p, lk)

    def row(self, p, key, bufheld=()):
        """Lock a row until the transaction ends, as heap_update and
        heap_lock_tuple do in READ COMMITTED (model v2).  A row held by
        another transaction H: let go of the buffer content locks held
        (bufheld: [lock, mode] in acquisition order; the trace, taken with one
        client, has the row event under the page's lock), take the heavyweight
        tuple lock of the version H locked (heap_acquire_tuplock: one
        lock-manager operation, then FIFO: the lock is granted by its releaser
        to the first in its queue), wait for H's transaction lock
        (XactLockTableWait: LockAcquire(ShareLock), which sleeps until H ends
        and grants it to every waiter, then LockRelease), and check again.  When
        H has ended and another took the row meanwhile, the tuple lock held is
        of an older version: let it go (the next in its queue is granted it and
        wakes) and queue for the newer version's (EvalPlanQual finds the latest
        version and heap_lock_tuple locks it), so every waiter of a row passes
        through every version's tuple lock, one at a time.  The row taken, the
        page locks are taken again in their order and the tuple lock let go."""
        h = self.rows.get(key)
        if h is None or h is p:
            self._take_row(p, key)
            return
        self.counters["row_waits"] += 1
        for lk, mode in reversed(bufheld):
            yield from self.lwi.release(p, lk)
        tl = None                               # the version whose tuple lock p holds
        while True:
            h = self.rows.get(key)
            if h is None or h is p:
                break
            tv = (key, self.row_ver[key])       # the version H's lock is on
            if tl != tv:
                if tl is not None:
                    yield from self._tuplock_release(p, tl)
                    tl = None
                    continue
                yield from self._tuplock_acquire(p, tv)
                tl = tv
                continue
            # XactLockTableWait(H)
            yield from self._lockmgr(p, ("transactionid", h.pid))
            if self.rows.get(key) is h:
                # H's end posts each process of its list once: block once for
                # that post (kept if it comes before the block); a stray post
                # only makes p look again, and it stays listed
                lst = self.xid_waiters.setdefault(h, [])
                if p not in lst:
                    lst.append(p)
                yield from pay(p)
                yield BLOCK
            yield from self._lockmgr(p, ("transactionid", h.pid))
        for lk, mode in bufheld:
            yield from self.lwi.acquire(p, lk, mode)
        self._take_row(p, key)
        if tl is not None:
            yield from self._tuplock_release(p, tl)

    def _take_row(self, p, key):
        if self.rows.get(key) is not p:
            self.rows[key] = p
            self.row_ver[key] = self.row_ver.get(key, 0) + 1
            p.rows.append(key)

    def _tuplock_acquire(self, p, tv):
        """LockTuple: granted at once if free, else queued (FIFO) until a
        release grants it."""
        yield from self._lockmgr(p, ("tuple",) + tv)
        q = self.tuplocks.get(tv)
        if q is None:
            self.tuplocks[tv] = [p]
            return
        q.append(p)
        self.counters["tuplock_waits"] += 1
        yield from pay(p)
        yield BLOCK                             # the grant's post (kept if it came first)
        while self.tuplocks[tv][0] is not p:    # a stray post: wait on
            yield BLOCK

    def _tuplock_release(self, p, tv):
        yield from self._lockmgr(p, ("tuple",) + tv)
        q = self.tuplocks[tv]
        q.remove(p)
        if q:
            p.debt += self.sim.C_POST            # granted to the next: ProcLockWakeup
            self.sim.wake(q[0])
        else:
            del self.tuplocks[tv]

    def hw_acquire(self, p, key, mode):
        sim = self.sim
        t0 = -1.0
        while True:
            holders = self.hw.get(key)
            conflict = False
            if holders:
                for q, m in holders:
                    if q is not p and C.hw_conflicts(mode, m):
                        conflict = True
                        break
            if not conflict:
                break
            if t0 < 0:
                t0 = sim.now
                self.counters["hw_waits"] += 1
            yield from self._lockmgr(p, key)
            if not any(q is not p and C.hw_conflicts(mode, m) for q, m in self.hw.get(key) or ()):
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
            yield from self._lockmgr(p, key)
            for q in w:
                p.debt += self.sim.C_POST
                self.sim.wake(q)

    def end(self, p):
        sim = self.sim
        yield from pay(p)                       # the transaction's CPU time up to its end holds its locks
        for key in p.rows:
            if self.rows.get(key) is p:
                del self.rows[key]
        p.rows.clear()
        w = self.xid_waiters.pop(p, None)
        if w:
            # the release of the transaction lock grants it to every waiter
            # (ProcLockWakeup, under its partition lock) and wakes them
            yield from self._lockmgr(p, ("transactionid", p.pid))
            for q in w:
                p.debt += sim.C_POST
                sim.wake(q)
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
                "stats": {k: (v.acq_s, v.acq_x, v.sleeps, v.wait_ns, v.hold_x_ns, v.cas_retries)
                          for k, v in self.stats.items()},
                "counters": dict(self.counters), "events": self.sim.events,
                "lockhold": {k: lk.hold_x_ns for k, lk in self.locks.items()},
                "preempt": self.sim.preemptions, "switches": self.sim.switches, "wakeups": self.sim.wakeups}

    def _result(self, snap, dt):
        txns = self.done - snap["done"]
        tps = txns / dt * 1e9 if dt > 0 else 0.0
        per = {}
        for k, v in self.stats.items():
            a0 = snap["stats"].get(k, (0, 0, 0, 0.0, 0.0, 0))
            acq = v.acq_s + v.acq_x - a0[0] - a0[1]
            if acq == 0 and v.sleeps == a0[2]:
                continue
            hottest = 0.0
            for key in v.instances:
                lk = self.locks[key]
                u = (lk.hold_x_ns - snap["lockhold"].get(key, 0.0)) / dt if dt > 0 else 0.0
                if u > hottest:
                    hottest = u
            per[k] = {"acquires": acq, "sleeps": v.sleeps - a0[2], "wait_ns": v.wait_ns - a0[3],
                      "hold_x_ns": v.hold_x_ns - a0[4], "cas_retries": v.cas_retries - a0[5],
                      "hottest_utilization": hottest, "instances": len(v.instances)}
        busy = self.sim.busy_ns() - snap["busy"]
        return {"tps": tps, "transactions": txns, "sim_ns": dt, "events": self.sim.events - snap["events"],
                "cpu_utilization": busy / (dt * self.machine.cores) if dt > 0 else 0.0,
                "tranches": per,
                "counters": {k: v - snap["counters"].get(k, 0) for k, v in self.counters.items()},
                "preemptions": self.sim.preemptions - snap["preempt"],
                "switches": self.sim.switches - snap["switches"],
                "wakeups": self.sim.wakeups - snap["wakeups"]}


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


def _walwriter(sim, p, pt):
    """The WAL writer: XLogBackgroundFlush when woken (an asynchronous commit
    filled a page) or every wal_writer_delay, then initialise buffers ahead."""
    last_flush = 0.0
    tok = 0
    while True:
        if p.sem > 0:
            p.sem = 0
        else:
            tok += 1
            mytok = tok

            def fire(arg, p=p):
                if p.data == arg and p.state == 2:
                    sim.wake(p)
            p.data = mytok
            sim.call_at(sim.now + WAL_WRITER_DELAY, fire, mytok)
            yield BLOCK
            p.data = -1
            p.sem = 0
        target = max(pt.async_lsn, pt.rqst_write)
        target -= target % PAGE_USABLE
        if target > pt.write_pos or (target > pt.flush_pos and sim.now - last_flush >= WAL_WRITER_DELAY):
            pages = (target - pt.flush_pos) // PAGE_USABLE
            do_flush = sim.now - last_flush >= WAL_WRITER_DELAY or pages >= WAL_WRITER_FLUSH_AFTER
            yield from pt.wait_insertions(p, target)
            yield from pt.lwi.acquire(p, pt.walwrite, X)
            if do_flush:
                last_flush = sim.now
                if target > pt.flush_pos:
                    yield from pt.xlog_write(p, target, flush=True)
            elif target > pt.write_pos:
                yield from pt.xlog_write(p, target, flush=False)
            yield from pt._release_walwrite(p)
        # initialise as many buffers ahead as are free
        ahead = pt.write_pos // PAGE_USABLE + WAL_BUFFERS
        if pt.init_upto < ahead:
            yield from pt.advance(p, ahead, opportunistic=True)


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
    while True:
        tp = txns[rng.randrange(ntx)]
        rowmap = {}
        bufheld.clear()
        for op in tp.ops:
            c = op[0]
            if c == 0:
                p.debt += op[1] * scale
            elif c == 1:
                lk = lock(op[1], p)
                if pins and lk.tranche == "BufferContent":
                    yield from pay(p)
                    p.debt += sim.lw(p.core, lk.line)            # PinBuffer
                if op[3] == "orwait":
                    yield from lwi.acquire_or_wait(p, lk)
                    if lk.excl is not p:
                        held_cond.add(lk)                        # did not get it: skip its release
                else:
                    yield from lwi.acquire(p, lk, op[2])
                    if lk.tranche == "BufferContent":
                        bufheld.append((lk, op[2]))
            elif c == 2:
                lk = lock(op[1], p)
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
            elif c == 13:
                lk = lock(op[1], p)
                yield from pay(p)
                p.debt += sim.lw(p.core, lk.line)                # PinBuffer / UnpinBuffer
            elif c == 12:
                lk = lock(op[1], p)
                got = yield from lwi.conditional(p, lk, op[2])
                if not got:
                    held_cond.add(lk)
                elif lk.tranche == "BufferContent":
                    bufheld.append((lk, op[2]))
            elif c == 3:
                yield from pt.wal_insert(p, op[1], op[2])
            elif c == 4:
                yield from pt.flush(p, p.last_lsn)
            elif c == 5:
                yield from pt.clear(p, op[1])
            elif c == 6:
                rel, rid = op[1], op[2]
                n = rowpop.get(rel)
                if n:
                    m = rowmap.get((rel, rid))
                    if m is None:
                        m = rowmap[(rel, rid)] = rng.randrange(n)
                    key = (rel, m)
                else:
                    key = (rel, rid)
                yield from pt.row(p, key, bufheld)
            elif c == 7:
                yield from pt.hw_acquire(p, op[1], op[2])
            elif c == 8:
                yield from pt.hw_release(p, op[1])
            elif c == 9:
                yield from pay(p)
                sim.sleep_for(p, op[1])
                yield BLOCK
            elif c == 10:
                pt.counters["rts"] += 1
                yield from pt.round_trip(p, False)
            elif c == 11:
                if op[2] and tp.flushes == 0 and tp.nwal:
                    yield from pt.async_commit(p)
                yield from pt.end(p)
        pt.done += 1
        p.txns += 1
        if pt.client:
            pt.counters["rts"] += 1
            yield from pt.round_trip(p, True)
