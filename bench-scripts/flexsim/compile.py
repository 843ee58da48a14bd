"""From traced transactions to the programs the simulator replays.

A traced transaction is what one process did with one client: lock events
with the CPU time between them.  The simulator replays the CPU time and the
lock operations, but some protocols it runs itself, because what they do
depends on the other processes (these trace events are replaced by one
operation each):

  WAL insertion   a WALInsert hold with its `wal` records -> OP_WAL (bytes,
                  copy time); the simulator takes an insertion lock, reserves
                  the space, initializes WAL buffer pages as needed (the
                  WALBufMapping holds of the trace are dropped) and copies
  WAL flush       a `flush` (with the WALWrite holds and WaitForVar calls
                  inside it) -> OP_FLUSH; the simulator runs XLogFlush's
                  group commit; the I/O time of the trace is dropped
  XID clear       the exclusive ProcArray hold of a committing transaction
                  with an XID -> OP_CLEAR (the hold time); the simulator runs
                  the variant's procarray_group_clear protocol
  round trips     a wait for the client inside a transaction (a `client`
                  event) becomes OP_RT: the client's work and two wakeups,
                  simulated; traces without `client` events: a transaction
                  of R statements gets its R - 1 longest gaps as OP_RT

Everything else is an LWLock acquisition or release (OP_LW, OP_REL;
conditional ones OP_COND), a buffer pin or unpin (OP_PIN: an atomic
operation on the buffer descriptor's line, which its content lock shares), a heavyweight lock (OP_HW, OP_HWREL), a row lock
held to the end (OP_ROW), blocking I/O (OP_IO), and CPU time (OP_CPU).

Lock instances are canonicalised so that a lock means the same thing in
every replayed transaction, whenever it was traced:

  - a buffer page (BufferContent, BufferIO: relfilenode/fork/block) within
    TAIL_PAGES of the highest block of its relation seen so far in the trace
    is named by its distance from that end ('tail', rel, fork, d): the
    rightmost B-tree leaf, the last page of a growing table, are one page
    whoever replays them; other pages keep their block number;
  - a heap page a transaction inserted rows into (a `row insert` while its
    content lock is held exclusively) is the replaying client's own
    ('ctail', ...) page: PostgreSQL keeps a target block per backend and
    bulk extension spreads concurrent inserters over different pages;
  - a process's own fast-path lock (LockFastPath `own`) is the replaying
    client's own.

Keys that end in CLIENT are made per client by the simulator.
"""

from . import trace as T

OP_CPU, OP_LW, OP_REL, OP_WAL, OP_FLUSH, OP_CLEAR, OP_ROW, OP_HW, OP_HWREL, OP_IO, OP_RT, OP_END, OP_COND, \
    OP_PIN = range(14)
OP_NAMES = ["cpu", "lw", "rel", "wal", "flush", "clear", "row", "hw", "hwrel", "io", "rt", "end", "cond", "pin"]

CLIENT = "@client"
TAIL_PAGES = 2
WAL_TRANCHES = ("WALInsert", "WALBufMapping", "WALWrite")
# heavyweight lock types that cannot conflict in these workloads' traces or
# are modelled otherwise (row locks: OP_ROW)
HW_NO_CONFLICT = ("transactionid", "virtualxid")

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


class TxnProgram:
    __slots__ = ("ops", "trace_ns", "cpu_ns", "io_ns", "nlw", "nwal", "wal_bytes", "flushes", "rts", "source",
                 "xid")

    def __init__(self):
        self.ops = []
        self.trace_ns = 0
        self.cpu_ns = 0.0
        self.io_ns = 0.0
        self.nlw = 0
        self.nwal = 0
        self.wal_bytes = 0
        self.flushes = 0
        self.rts = 0
        self.source = ""
        self.xid = False


class Program:
    """The replayable transactions of one workload and variant."""

    def __init__(self, txns, rows, info, has_pins=False):
        self.has_pins = has_pins
        self.txns = txns
        self.rows = rows          # {relation: number of distinct rows its row events touched}
        self.info = info

    def mean(self, attr):
        return sum(getattr(t, attr) for t in self.txns) / len(self.txns) if self.txns else 0.0


def _page_parts(inst):
    parts = inst.split("/")
    if len(parts) != 3:
        return None
    try:
        return parts[0], parts[1], int(parts[2])
    except ValueError:
        return None


COLD_TXNS = 20         # a backend's first transactions (cold caches) are left out, as make trace's summary does


def compile_traces(traces, statements=1, local_ns=0.0, rt_gap_ns=None, backend_type="client backend"):
    """Programs from parsed traces (trace.Trace) of one workload and variant.

    statements: the client statements per transaction (round trips); None
    to find the round trips as gaps longer than rt_gap_ns.  local_ns: the
    local cost of one atomic operation on the traced machine, taken out of
    the CPU gap before each lock operation the simulator will perform
    itself (it adds its own)."""
    txns = []
    for tr in traces:
        if backend_type and tr.backend_type != backend_type:
            continue
        txns.extend(t for t in tr.txns if t.xacts_before is None or t.xacts_before >= COLD_TXNS)
    if not txns:
        raise T.TraceError("no transactions of a " + (backend_type or "any") + " in the traces")
    relmax = {}
    rowsets = {}
    out = []
    has_client = any(e[1] == T.K_CLIENT for tx in txns for e in tx.events) or \
        any(tx.client_wait_ns is not None for tx in txns)
    has_pins = any(e[1] == T.K_BUF for tx in txns for e in tx.events)
    for tx in txns:
        out.append(_compile_txn(tx, relmax, rowsets, None if has_client else statements, local_ns, rt_gap_ns,
                                has_client))
    rows = {rel: len(s) for rel, s in rowsets.items()}
    info = {"transactions": len(out), "traces": len(traces), "client_events": has_client, "pins": has_pins}
    outside = [tx.outside_ns - tx.client_wait_ns for tx in txns
               if tx.outside_ns is not None and tx.client_wait_ns is not None]
    if outside:
        info["outside_backend_ns"] = sorted(outside)[len(outside) // 2]
        info["outside_backend_mean_ns"] = sum(outside) / len(outside)
        info["client_wait_ns"] = sorted(tx.client_wait_ns for tx in txns if tx.client_wait_ns is not None)[
            len(outside) // 2]
    fs = [e for tx in txns for e in tx.events if e[1] == T.K_IO and e[2] == "fsync"]
    if fs:
        info["fsync_ns_median"] = sorted(e[3] for e in fs)[len(fs) // 2]
    return Program(out, rows, info, has_pins)


def _compile_txn(tx, relmax, rowsets, statements, local_ns, rt_gap_ns, has_client=False):
    ev = tx.events
    n = len(ev)
    drop = [False] * n
    repl = {}             # index -> op replacing the event
    io_windows = []       # (start, end) of time that is I/O, not CPU

    # WAL insertion: WALInsert holds with their wal records
    held_at = {}
    i = 0
    wal_seen = set()
    for i, e in enumerate(ev):
        k = e[1]
        if k == T.K_ACQ and e[2] == "WALInsert":
            held_at[e[3]] = i
        elif k == T.K_REL and e[2] == "WALInsert" and e[3] in held_at:
            a = held_at.pop(e[3])
            nbytes = 0
            nested = 0
            inner_open = {}
            for j in range(a + 1, i):
                ej = ev[j]
                if ej[1] == T.K_WAL:
                    nbytes += ej[2]
                    wal_seen.add(j)
                    drop[j] = True
                elif ej[1] == T.K_ACQ and ej[2] in ("WALBufMapping", "WALWrite"):
                    inner_open[ej[2]] = ej[0]
                    drop[j] = True
                elif ej[1] == T.K_REL and ej[2] in ("WALBufMapping", "WALWrite"):
                    if ej[2] in inner_open:
                        nested += ej[0] - inner_open.pop(ej[2])
                    drop[j] = True
                elif ej[1] == T.K_FLUSH:
                    nested += ej[3]
                    drop[j] = True
                elif ej[1] == T.K_WFV:
                    drop[j] = True
            drop[i] = True
            if nbytes:
                copy = max(0, e[0] - ev[a][0] - nested)
                repl[a] = (OP_WAL, nbytes, float(copy))
                io_windows.append((ev[a][0], e[0]))
            else:
                drop[a] = True
    for j, e in enumerate(ev):
        if e[1] == T.K_WAL and j not in wal_seen:
            repl[j] = (OP_WAL, e[2], 0.0)

    # flushes: the WALWrite holds and WaitForVar calls inside the window
    flush_windows = []
    for j, e in enumerate(ev):
        if e[1] == T.K_FLUSH and not drop[j]:
            start = e[0] - e[3]
            io_windows.append((start, e[0]))
            flush_windows.append((start, e[0]))
            # the op goes where the flush started: the first event in the window
            first = j
            for m in range(j - 1, -1, -1):
                if ev[m][0] < start:
                    break
                if ev[m][1] in (T.K_ACQ, T.K_REL, T.K_WFV, T.K_FAIL) and ev[m][2] in WAL_TRANCHES:
                    drop[m] = True
                    first = m
            if first == j:
                repl[j] = (OP_FLUSH,)
            else:
                drop[j] = True
                repl[first] = (OP_FLUSH,)
                drop[first] = False
    # I/O inside a flush (its write and fsync) is the flush's
    for j, e in enumerate(ev):
        if e[1] == T.K_IO and any(s_ <= e[0] <= t_ for s_, t_ in flush_windows):
            drop[j] = True
    # any other WAL lock event: the simulator makes its own
    for j, e in enumerate(ev):
        if e[1] in (T.K_ACQ, T.K_REL, T.K_WFV, T.K_FAIL) and e[2] in WAL_TRANCHES and j not in repl:
            drop[j] = True

    # the XID clear at commit: the last exclusive ProcArray hold
    if tx.xid_assigned:
        for j in range(n - 1, -1, -1):
            e = ev[j]
            if e[1] == T.K_ACQ and e[2] == "ProcArray" and e[4] == "X" and not drop[j]:
                for m in range(j + 1, n):
                    if ev[m][1] == T.K_REL and ev[m][2] == "ProcArray":
                        repl[j] = (OP_CLEAR, float(ev[m][0] - e[0]))
                        drop[m] = True
                        io_windows.append((e[0], ev[m][0]))
                        break
                break

    # page instances: the heap pages rows were inserted into (held X at the row event)
    heap_pages = set()
    held_pages = {}
    for e in ev:
        if e[1] == T.K_ACQ and e[2] == "BufferContent" and e[4] == "X":
            pp = _page_parts(e[3])
            if pp:
                held_pages[e[3]] = pp
        elif e[1] == T.K_REL and e[2] == "BufferContent":
            held_pages.pop(e[3], None)
        elif e[1] == T.K_ROW and e[2] == "insert":
            for inst, pp in held_pages.items():
                if pp[2] == e[4]:
                    heap_pages.add(inst)

    # A page is named once per transaction, against the highest block of its
    # relation seen before the transaction began: the acquisition and the
    # release of one page get one name, and two pages get two (a page the
    # transaction extended the relation by is named beyond the end, a
    # negative distance).  Naming against a maximum that moves within the
    # transaction gave a B-tree split's old and new rightmost leaf the same
    # name, held at once: the replaying process waited for itself.
    relmax0 = dict(relmax)
    names = {}

    def canon(tranche, inst):
        if tranche in ("BufferContent", "BufferIO"):
            key = names.get((tranche, inst))
            if key is not None:
                return key
            pp = _page_parts(inst)
            if pp is None:
                return (tranche, inst)
            rel = (pp[0], pp[1])
            if pp[2] > relmax.get(rel, -1):
                relmax[rel] = pp[2]
            mx = relmax0.setdefault(rel, pp[2])    # first seen in this transaction: its first page
            if inst in heap_pages:
                key = (tranche, ("ctail", pp[0], pp[1], mx - pp[2]), CLIENT)
            elif mx - pp[2] <= TAIL_PAGES:
                key = (tranche, ("tail", pp[0], pp[1], mx - pp[2]))
            else:
                key = (tranche, inst)
            names[(tranche, inst)] = key
            return key
        if tranche == "LockFastPath" and inst == "own":
            return (tranche, "own", CLIENT)
        return (tranche, inst)

    # the ops, with the CPU time between kept events
    prog = TxnProgram()
    prog.source = tx.source
    prog.trace_ns = tx.end_t
    prog.xid = tx.xid_assigned
    io_windows.sort()
    ops = []
    gaps = []            # (gap ns, index in ops where an RT could go)
    last_t = 0
    cond_keys = set()
    for j, e in enumerate(ev):
        if drop[j] and j not in repl:
            continue
        t = e[0]
        gap = _cpu_between(last_t, t, io_windows)
        op = repl.get(j)
        k = e[1]
        nline = 0
        if op is None:
            if k == T.K_ACQ:
                key = canon(e[2], e[3])
                mode = 1 if e[4] == "X" else 0
                if e[5] == "cond":
                    op = (OP_COND, key, mode)
                    cond_keys.add(key)
                else:
                    op = (OP_LW, key, mode, e[5])
                gap -= e[6]
                nline = 1
                prog.nlw += 1
            elif k == T.K_REL:
                op = (OP_REL, canon(e[2], e[3]))
                nline = 1
            elif k == T.K_FAIL:
                op = None          # a failed conditional attempt: its cost stays in the gap
            elif k == T.K_WFV:
                op = None
            elif k == T.K_HW:
                if e[2] not in HW_NO_CONFLICT and e[4] != "local":
                    op = (OP_HW, (e[2], e[5]), e[3])
            elif k == T.K_HWREL:
                if e[2] not in HW_NO_CONFLICT:
                    op = (OP_HWREL, (e[2], e[3]))
            elif k == T.K_ROW:
                if e[2] != "insert":
                    rowsets.setdefault(e[3], set()).add((e[4], e[5]))
                    op = (OP_ROW, e[3], (e[4], e[5]))
            elif k == T.K_IO:
                op = (OP_IO, float(e[3]))
                gap -= e[3]
                prog.io_ns += e[3]
            elif k == T.K_CLIENT:
                op = (OP_RT,)
                gap -= e[2]
                prog.rts += 1
            elif k == T.K_BUF:
                op = (OP_PIN, canon("BufferContent", e[3]))
        else:
            if op[0] == OP_WAL:
                prog.nwal += 1
                prog.wal_bytes += op[1]
            elif op[0] == OP_FLUSH:
                prog.flushes += 1
        if op is None:
            continue
        gap -= nline * local_ns
        if gap > 0:
            gaps.append((gap, len(ops)))
            ops.append((OP_CPU, float(gap)))
            prog.cpu_ns += gap
        ops.append(op)
        last_t = t if op[0] not in (OP_WAL, OP_CLEAR) else _window_end(io_windows, t)
    gap = _cpu_between(last_t, tx.end_t, io_windows)
    if gap > 0:
        gaps.append((gap, len(ops)))
        ops.append((OP_CPU, float(gap)))
        prog.cpu_ns += gap
    # round trips inside the transaction: the longest gaps
    if has_client:
        rt_at = []
    elif statements is None:
        rt_at = sorted(i for g, i in gaps if rt_gap_ns is not None and g >= rt_gap_ns)
    else:
        rt_at = sorted(i for g, i in sorted(gaps, reverse=True)[:max(0, statements - 1)])
    for i in rt_at:
        g = ops[i][1]
        ops[i] = (OP_RT,)
        prog.cpu_ns -= g
        prog.rts += 1
    ops.append((OP_END, tx.outcome == "commit", tx.xid_assigned))
    prog.ops = ops
    return prog


def _window_end(windows, t):
    for a, b in windows:
        if a == t:
            return b
    return t


def _cpu_between(a, b, windows):
    """b - a less the I/O windows that overlap [a, b)."""
    d = b - a
    for s, e in windows:
        lo = s if s > a else a
        hi = e if e < b else b
        if hi > lo:
            d -= hi - lo
    return d
