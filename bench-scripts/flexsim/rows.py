"""Row locks (heapam.c: heap_update, heap_lock_tuple, heap_acquire_tuplock;
lmgr.c: XactLockTableWait, LockTuple) in flexsim (model v2).

A row a transaction updated, deleted or locked stays locked until the
transaction ends (model.Point.end).  Another transaction that wants it runs
PostgreSQL's protocol in READ COMMITTED: let go of the buffer content locks
it holds, take the heavyweight tuple lock of the version the holder locked
(queued FIFO, granted by the releaser), wait for the holder's transaction
lock (XactLockTableWait), check again; the herd of EvalPlanQual passes
through every version's tuple lock one at a time.

A mixin of model.Point: it uses the point's simulator, LWLocks (lwi),
the lock manager (hwlock.HwLocks._lockmgr) and counters.
"""

from .engine import BLOCK, pay


class Rows:
    """The row locks of one point."""

    def _setup_rows(self):
        self.rows = {}
        self.row_ver = {}               # row -> its version number (a new one per transaction that takes it)
        self.xid_waiters = {}           # process -> those waiting for its transaction to end
        self.tuplocks = {}              # (row, version) -> [holder, FIFO waiters...]

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
        """UnlockTuple: granted to the next in the queue, who is posted
        under the partition lock (ProcLockWakeup)."""
        def ungrant():
            q = self.tuplocks[tv]
            q.remove(p)
            if q:
                return (q[0],)
            del self.tuplocks[tv]
            return ()

        yield from self._lockmgr(p, ("tuple",) + tv, under=ungrant)
