"""WAL insertion, XLogFlush and the WAL writer (xlog.c, walwriter.c) in flexsim.

What of PostgreSQL each routine models:

  wal_insert        XLogInsertRecord: WALInsertLockAcquire (the lock
                    MyProcNumber % wal_insert_locks, the next one after a
                    sleep), ReserveXLogInsertLocation (under insertpos_lck,
                    or one fetch-add with wal_insert_reservation = atomic),
                    CopyXLogRecordToWAL's GetXLogBuffer (the insertingAt
                    update, WALInsertLockUpdateInsertingAt, and
                    AdvanceXLInsertBuffer for a page not initialised yet),
                    WALInsertLockRelease
  advance           AdvanceXLInsertBuffer under WALBufMappingLock, page by
                    page, writing out the buffer's old page first
                    (XLogWriteOutOldPage: _write_old_page); or lock-free
                    (wal_buffer_init = lockfree: a page claimed by
                    compare-and-exchange)
  wait_insertions   WaitXLogInsertionsToFinish: LWLockWaitForVar on every
                    insertion lock
  flush             XLogFlush: the write request under info_lck,
                    WaitXLogInsertionsToFinish, LWLockAcquireOrWait on
                    WALWriteLock (or LWLockAcquireOrWaitLSN, wal_flush_wait =
                    lsn), then XLogWrite of everything inserted so far: group
                    commit
  xlog_write        XLogWrite: the write() calls and the fdatasync
  async_commit      XLogSetAsyncXactLSN
  walwriter         WalWriterMain / XLogBackgroundFlush

A mixin of model.Point: it uses the point's simulator, LWLocks (lwi),
variant, costs and counters.
"""

from .engine import BLOCK, SPIN, Line, pay
from .lwlock import X, LsnWait
from .spinlock import Spin, spin_acquire, spin_release

PAGE = 8192
PAGE_USABLE = PAGE - 24
WAL_BUFFERS = 2048              # wal_buffers = 16 MB, as both machines have (shared_buffers >= 512 MB)
WAL_WRITER_DELAY = 200e6        # ns
WAL_WRITER_FLUSH_AFTER = 128    # pages (1 MB)


class Wal:
    """The WAL of one point (its state and its protocols)."""
    # tests break group commit with this: a flusher writes its own record only
    flush_own_only = False

    def _setup_wal(self):
        v = self.variant
        self.ins_locks = [self.lock(("WALInsert", str(i)), None) for i in range(v.wal_insert_locks)]
        self.bufmap = self.lock(("WALBufMapping", "0"), None)
        self.walwrite = self.lock(("WALWrite", "0"), None)
        if self.variant.flush_wait == "lsn":
            # LWLockAcquireOrWaitLSN's progress: XLogCtl->logFlushResult
            self.walwrite.lsn_flushed = lambda: self.flush_pos
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
                yield from lwi.update_var(p, lk)
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
            free, inserting_at, sleeps = yield from lwi.wait_for_var(p, lk, upto)
            self.counters["waitfinish_sleeps"] += sleeps
            if not free and inserting_at < finished:
                finished = inserting_at     # its holder has passed upto, not finished
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
                got = yield from lwi.acquire_or_wait(p, self.walwrite, LsnWait(record))
            else:
                got = yield from lwi.acquire_or_wait(p, self.walwrite)
            if not got:
                continue
            if self.flush_pos >= record:
                yield from lwi.release(p, self.walwrite)
                return
            yield from self.xlog_write(p, record if self.flush_own_only else max(insertpos, record), flush=True)
            yield from lwi.release(p, self.walwrite)
            return

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


def walwriter(sim, p, pt):
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
            yield from pt.lwi.release(p, pt.walwrite)
        # initialise as many buffers ahead as are free
        ahead = pt.write_pos // PAGE_USABLE + WAL_BUFFERS
        if pt.init_upto < ahead:
            yield from pt.advance(p, ahead, opportunistic=True)
