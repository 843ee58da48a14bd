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

The compiler of one transaction is a sequence of passes over its events
(named_events gives trace.py's tuples named fields):

  fold_wal_insertions   WALInsert holds with their records -> OP_WAL
  fold_flushes          flush windows -> OP_FLUSH; other WAL lock events dropped
  fold_xid_clear        the commit's ProcArray hold -> OP_CLEAR
  inserted_pages        the heap pages the transaction inserted into
  PageNamer             lock instances, canonicalised (above)
  emit                  the ops (named tuples Op*, first field the opcode),
                        with the CPU time between kept events
  place_round_trips     OP_RT in the longest gaps (traces without client events)
"""

from collections import namedtuple

from . import trace as T

# ---- the ops of a program: named tuples whose first field is the opcode
OP_CPU, OP_LW, OP_REL, OP_WAL, OP_FLUSH, OP_CLEAR, OP_ROW, OP_HW, OP_HWREL, OP_IO, OP_RT, OP_END, OP_COND, \
    OP_PIN = range(14)
OP_NAMES = ["cpu", "lw", "rel", "wal", "flush", "clear", "row", "hw", "hwrel", "io", "rt", "end", "cond", "pin"]

OpCpu = namedtuple("OpCpu", "op ns")                    # CPU time
OpLw = namedtuple("OpLw", "op key mode how")            # LWLockAcquire (how: the trace's, e.g. orwait)
OpRel = namedtuple("OpRel", "op key")                   # LWLockRelease
OpWal = namedtuple("OpWal", "op bytes copy_ns")         # a WAL insertion, run by the simulator
OpFlush = namedtuple("OpFlush", "op")                   # XLogFlush of the process's last record
OpClear = namedtuple("OpClear", "op hold_ns")           # ProcArrayEndTransaction's XID clear
OpRow = namedtuple("OpRow", "op relation row")          # a row locked to the end of the transaction
OpHw = namedtuple("OpHw", "op key mode")                # a heavyweight lock
OpHwRel = namedtuple("OpHwRel", "op key")
OpIo = namedtuple("OpIo", "op ns")                      # blocking I/O
OpRt = namedtuple("OpRt", "op")                         # a round trip to the client
OpEnd = namedtuple("OpEnd", "op commit xid")            # the transaction's end
OpCond = namedtuple("OpCond", "op key mode")            # LWLockConditionalAcquire
OpPin = namedtuple("OpPin", "op key")                   # a buffer pin or unpin (the descriptor's line)

CLIENT = "@client"
TAIL_PAGES = 2
WAL_TRANCHES = ("WALInsert", "WALBufMapping", "WALWrite")
# heavyweight lock types that cannot conflict in these workloads' traces or
# are modelled otherwise (row locks: OP_ROW)
HW_NO_CONFLICT = ("transactionid", "virtualxid")

# ---- the trace's events, with named fields (trace.py's tuples, field by field)
KIND = 1                    # every event's second field: its kind, T.K_*
Acq = namedtuple("Acq", "t kind tranche instance mode how wait_ns")
Fail = namedtuple("Fail", "t kind tranche instance mode how")
Rel = namedtuple("Rel", "t kind tranche instance")
WaitForVar = namedtuple("WaitForVar", "t kind tranche instance wait_ns")
Hw = namedtuple("Hw", "t kind locktype mode path id")
HwRel = namedtuple("HwRel", "t kind locktype id")
Row = namedtuple("Row", "t kind op relation block offset")
Wal = namedtuple("Wal", "t kind bytes end_lsn")
Flush = namedtuple("Flush", "t kind upto_lsn ns did_write")
Io = namedtuple("Io", "t kind io ns")
Client = namedtuple("Client", "t kind ns")
Buf = namedtuple("Buf", "t kind pin page")
EVENT_TYPES = {T.K_ACQ: Acq, T.K_FAIL: Fail, T.K_REL: Rel, T.K_WFV: WaitForVar, T.K_HW: Hw, T.K_HWREL: HwRel,
               T.K_ROW: Row, T.K_WAL: Wal, T.K_FLUSH: Flush, T.K_IO: Io, T.K_CLIENT: Client, T.K_BUF: Buf}
LW_KINDS = (T.K_ACQ, T.K_REL, T.K_WFV, T.K_FAIL)      # events of an LWLock: tranche and instance


def named_events(events):
    """The pass that names the fields of a transaction's events."""
    return [EVENT_TYPES[e[KIND]]._make(e) for e in events]


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
    has_client = any(e[KIND] == T.K_CLIENT for tx in txns for e in tx.events) or \
        any(tx.client_wait_ns is not None for tx in txns)
    has_pins = any(e[KIND] == T.K_BUF for tx in txns for e in tx.events)
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
    fs = [e for e in (Io._make(e) for tx in txns for e in tx.events if e[KIND] == T.K_IO) if e.io == "fsync"]
    if fs:
        info["fsync_ns_median"] = sorted(e.ns for e in fs)[len(fs) // 2]
    return Program(out, rows, info, has_pins)


class _Folds:
    """What the folding passes decide about a transaction's events: the
    events dropped, the ops that replace events, and the time that is I/O
    (or a simulated protocol's), not CPU."""

    def __init__(self, n):
        self.drop = [False] * n
        self.repl = {}              # index -> op replacing the event
        self.io_windows = []        # (start, end) of time that is I/O, not CPU


def _compile_txn(tx, relmax, rowsets, statements, local_ns, rt_gap_ns, has_client=False):
    ev = named_events(tx.events)
    f = _Folds(len(ev))
    fold_wal_insertions(ev, f)
    fold_flushes(ev, f)
    if tx.xid_assigned:
        fold_xid_clear(ev, f)
    name = PageNamer(relmax, inserted_pages(ev))
    prog = TxnProgram()
    prog.source = tx.source
    prog.trace_ns = tx.end_t
    prog.xid = tx.xid_assigned
    gaps = emit(ev, f, name, rowsets, local_ns, tx.end_t, prog)
    place_round_trips(prog, gaps, statements, rt_gap_ns, has_client)
    prog.ops.append(OpEnd(OP_END, tx.outcome == "commit", tx.xid_assigned))
    return prog


def fold_wal_insertions(ev, f):
    """WAL insertion: a WALInsert hold with its wal records becomes one
    OP_WAL (the bytes, the copy time: the hold less the WALBufMapping and
    WALWrite holds and flushes inside it, which are dropped); a wal record
    outside a hold is an OP_WAL of no copy time."""
    drop = f.drop
    held_at = {}
    wal_seen = set()
    for i, e in enumerate(ev):
        k = e.kind
        if k == T.K_ACQ and e.tranche == "WALInsert":
            held_at[e.instance] = i
        elif k == T.K_REL and e.tranche == "WALInsert" and e.instance in held_at:
            a = held_at.pop(e.instance)
            nbytes = 0
            nested = 0
            inner_open = {}
            for j in range(a + 1, i):
                ej = ev[j]
                if ej.kind == T.K_WAL:
                    nbytes += ej.bytes
                    wal_seen.add(j)
                    drop[j] = True
                elif ej.kind == T.K_ACQ and ej.tranche in ("WALBufMapping", "WALWrite"):
                    inner_open[ej.tranche] = ej.t
                    drop[j] = True
                elif ej.kind == T.K_REL and ej.tranche in ("WALBufMapping", "WALWrite"):
                    if ej.tranche in inner_open:
                        nested += ej.t - inner_open.pop(ej.tranche)
                    drop[j] = True
                elif ej.kind == T.K_FLUSH:
                    nested += ej.ns
                    drop[j] = True
                elif ej.kind == T.K_WFV:
                    drop[j] = True
            drop[i] = True
            if nbytes:
                copy = max(0, e.t - ev[a].t - nested)
                f.repl[a] = OpWal(OP_WAL, nbytes, float(copy))
                f.io_windows.append((ev[a].t, e.t))
            else:
                drop[a] = True
    for j, e in enumerate(ev):
        if e.kind == T.K_WAL and j not in wal_seen:
            f.repl[j] = OpWal(OP_WAL, e.bytes, 0.0)


def fold_flushes(ev, f):
    """A flush becomes one OP_FLUSH where it started (the first WAL lock
    event in its window); the WALWrite holds, WaitForVar calls and I/O
    inside the window are the flush's; any other WAL lock event is dropped
    (the simulator makes its own)."""
    drop = f.drop
    repl = f.repl
    flush_windows = []
    for j, e in enumerate(ev):
        if e.kind == T.K_FLUSH and not drop[j]:
            start = e.t - e.ns
            f.io_windows.append((start, e.t))
            flush_windows.append((start, e.t))
            # the op goes where the flush started: the first event in the window
            first = j
            for m in range(j - 1, -1, -1):
                if ev[m].t < start:
                    break
                if ev[m].kind in LW_KINDS and ev[m].tranche in WAL_TRANCHES:
                    drop[m] = True
                    first = m
            if first == j:
                repl[j] = OpFlush(OP_FLUSH)
            else:
                drop[j] = True
                repl[first] = OpFlush(OP_FLUSH)
                drop[first] = False
    # I/O inside a flush (its write and fsync) is the flush's
    for j, e in enumerate(ev):
        if e.kind == T.K_IO and any(s_ <= e.t <= t_ for s_, t_ in flush_windows):
            drop[j] = True
    # any other WAL lock event: the simulator makes its own
    for j, e in enumerate(ev):
        if e.kind in LW_KINDS and e.tranche in WAL_TRANCHES and j not in repl:
            drop[j] = True


def fold_xid_clear(ev, f):
    """The XID clear at commit: the last exclusive ProcArray hold becomes
    OP_CLEAR (its hold time)."""
    n = len(ev)
    drop = f.drop
    for j in range(n - 1, -1, -1):
        e = ev[j]
        if e.kind == T.K_ACQ and e.tranche == "ProcArray" and e.mode == "X" and not drop[j]:
            for m in range(j + 1, n):
                if ev[m].kind == T.K_REL and ev[m].tranche == "ProcArray":
                    f.repl[j] = OpClear(OP_CLEAR, float(ev[m].t - e.t))
                    drop[m] = True
                    f.io_windows.append((e.t, ev[m].t))
                    break
            break


def inserted_pages(ev):
    """The heap pages rows were inserted into (held X at the row event)."""
    heap_pages = set()
    held_pages = {}
    for e in ev:
        if e.kind == T.K_ACQ and e.tranche == "BufferContent" and e.mode == "X":
            pp = _page_parts(e.instance)
            if pp:
                held_pages[e.instance] = pp
        elif e.kind == T.K_REL and e.tranche == "BufferContent":
            held_pages.pop(e.instance, None)
        elif e.kind == T.K_ROW and e.op == "insert":
            for inst, pp in held_pages.items():
                if pp[2] == e.block:
                    heap_pages.add(inst)
    return heap_pages


class PageNamer:
    """Lock instances, canonicalised (the module's docstring).  A page is
    named once per transaction, against the highest block of its relation
    seen before the transaction began: the acquisition and the release of
    one page get one name, and two pages get two (a page the transaction
    extended the relation by is named beyond the end, a negative distance).
    Naming against a maximum that moves within the transaction gave a
    B-tree split's old and new rightmost leaf the same name, held at once:
    the replaying process waited for itself."""

    def __init__(self, relmax, heap_pages):
        self.relmax = relmax                # the highest block of each relation, over the traces so far
        self.relmax0 = dict(relmax)         # ... before this transaction
        self.heap_pages = heap_pages
        self.names = {}

    def __call__(self, tranche, inst):
        if tranche in ("BufferContent", "BufferIO"):
            names = self.names
            relmax = self.relmax
            key = names.get((tranche, inst))
            if key is not None:
                return key
            pp = _page_parts(inst)
            if pp is None:
                return (tranche, inst)
            rel = (pp[0], pp[1])
            if pp[2] > relmax.get(rel, -1):
                relmax[rel] = pp[2]
            mx = self.relmax0.setdefault(rel, pp[2])    # first seen in this transaction: its first page
            if inst in self.heap_pages:
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


def _event_op(e, name, rowsets, prog):
    """The op of a kept event that no fold replaced (None: none), and the
    time of the gap before it that is not CPU (the traced wait or I/O)."""
    k = e.kind
    if k == T.K_ACQ:
        key = name(e.tranche, e.instance)
        mode = 1 if e.mode == "X" else 0
        prog.nlw += 1
        if e.how == "cond":
            return OpCond(OP_COND, key, mode), e.wait_ns
        return OpLw(OP_LW, key, mode, e.how), e.wait_ns
    if k == T.K_REL:
        return OpRel(OP_REL, name(e.tranche, e.instance)), 0
    if k == T.K_FAIL or k == T.K_WFV:
        return None, 0          # a failed conditional attempt: its cost stays in the gap
    if k == T.K_HW:
        if e.locktype not in HW_NO_CONFLICT and e.path != "local":
            return OpHw(OP_HW, (e.locktype, e.id), e.mode), 0
        return None, 0
    if k == T.K_HWREL:
        if e.locktype not in HW_NO_CONFLICT:
            return OpHwRel(OP_HWREL, (e.locktype, e.id)), 0
        return None, 0
    if k == T.K_ROW:
        if e.op != "insert":
            rowsets.setdefault(e.relation, set()).add((e.block, e.offset))
            return OpRow(OP_ROW, e.relation, (e.block, e.offset)), 0
        return None, 0
    if k == T.K_IO:
        prog.io_ns += e.ns
        return OpIo(OP_IO, float(e.ns)), e.ns
    if k == T.K_CLIENT:
        prog.rts += 1
        return OpRt(OP_RT), e.ns
    if k == T.K_BUF:
        return OpPin(OP_PIN, name("BufferContent", e.page)), 0
    return None, 0


def emit(ev, f, name, rowsets, local_ns, end_t, prog):
    """The ops, with the CPU time between kept events (less the I/O windows,
    the traced waits and, before a lock operation the simulator performs,
    the traced machine's local atomic); returns the gaps where a round trip
    could go: (gap ns, index in ops)."""
    drop = f.drop
    repl = f.repl
    io_windows = f.io_windows
    io_windows.sort()
    ops = prog.ops
    gaps = []
    last_t = 0
    for j, e in enumerate(ev):
        if drop[j] and j not in repl:
            continue
        t = e.t
        gap = _cpu_between(last_t, t, io_windows)
        op = repl.get(j)
        nline = 0
        if op is None:
            op, waited = _event_op(e, name, rowsets, prog)
            if op is not None:
                gap -= waited
                if op.op in (OP_LW, OP_COND, OP_REL):
                    nline = 1
        elif op.op == OP_WAL:
            prog.nwal += 1
            prog.wal_bytes += op.bytes
        elif op.op == OP_FLUSH:
            prog.flushes += 1
        if op is None:
            continue
        gap -= nline * local_ns
        if gap > 0:
            gaps.append((gap, len(ops)))
            ops.append(OpCpu(OP_CPU, float(gap)))
            prog.cpu_ns += gap
        ops.append(op)
        last_t = t if op.op not in (OP_WAL, OP_CLEAR) else _window_end(io_windows, t)
    gap = _cpu_between(last_t, end_t, io_windows)
    if gap > 0:
        gaps.append((gap, len(ops)))
        ops.append(OpCpu(OP_CPU, float(gap)))
        prog.cpu_ns += gap
    return gaps


def place_round_trips(prog, gaps, statements, rt_gap_ns, has_client):
    """Round trips inside the transaction, for traces without client
    events: the statements - 1 longest gaps, or (statements None) every gap
    of at least rt_gap_ns, become OP_RT."""
    ops = prog.ops
    if has_client:
        rt_at = []
    elif statements is None:
        rt_at = sorted(i for g, i in gaps if rt_gap_ns is not None and g >= rt_gap_ns)
    else:
        rt_at = sorted(i for g, i in sorted(gaps, reverse=True)[:max(0, statements - 1)])
    for i in rt_at:
        g = ops[i].ns
        ops[i] = OpRt(OP_RT)
        prog.cpu_ns -= g
        prog.rts += 1


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
