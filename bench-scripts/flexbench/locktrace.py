"""Lock traces (lock_stats_trace, patch 0019): reading, checking and
summarising the files a traced server writes to pg_locktrace/<pid>.trace.

The format is docs/lock-trace.md: text, one event per line, fields
separated by one tab, the first line of a file 'version 1 <pid>
<backend type>', a transaction from 'begin' to 'end'.  A reader ignores line
kinds it does not know and fields beyond those it knows.  read_trace()
returns the transactions of one file; check() says what in them breaks the
format's rules (times going back, a release of an LWLock not held, a hold
never released, an 'end' whose count disagrees), so that a harness or a test
fails loudly on a broken trace; summary() gives the per-transaction figures a
reader wants first.
"""

import collections
import lzma
import statistics
from pathlib import Path

VERSION = 1

# Line kinds of version 1 and the fields each has at least (after the kind).
MIN_FIELDS = {"begin": 3, "lw": 4, "hw": 5, "hwrel": 3, "row": 5, "wal": 3, "flush": 4,
              "io": 3, "end": 3, "client": 2, "buf": 3}


class TraceError(Exception):
    """A file that is not a lock trace of a version this reader knows."""


class Transaction:
    """One traced transaction: its begin fields, its events (kind, t,
    fields) in order, and its end."""

    def __init__(self, pid, backend_type, fields, lineno):
        self.pid = pid
        self.backend_type = backend_type
        self.lineno = lineno
        self.seq = int(fields[0])
        self.unix_us = int(fields[1])
        self.sample_interval = int(fields[2])
        self.since_prev_end_ns = int(fields[3]) if len(fields) > 3 else None
        self.client_wait_before_ns = int(fields[4]) if len(fields) > 4 else None
        self.xacts_before = int(fields[5]) if len(fields) > 5 else None
        self.events = []
        self.lines = 0          # lines between begin and end, any kind
        self.end = None         # (t, 'commit'|'abort', xid_assigned, events, dropped)

    @property
    def duration_ns(self):
        return self.end[0] if self.end else None

    @property
    def dropped(self):
        return self.end[4] if self.end and len(self.end) > 4 else 0


def open_text(path):
    path = Path(path)
    if path.suffix == ".xz":
        return lzma.open(path, "rt")
    return open(path)


def read_trace(path):
    """The transactions of one trace file (.trace or .trace.xz).  Raises
    TraceError for a file that does not start with a version line this
    reader knows, or a line of a known kind that lacks fields."""
    txns = []
    cur = None
    with open_text(path) as f:
        first = f.readline().rstrip("\n").split("\t")
        if len(first) < 4 or first[0] != "version":
            raise TraceError(f"{path}: the first line is not 'version<TAB>N<TAB>pid<TAB>type'")
        if first[1] != str(VERSION):
            raise TraceError(f"{path}: trace version {first[1]}, this reader knows {VERSION}")
        pid, btype = int(first[2]), first[3]
        for lineno, line in enumerate(f, 2):
            f_ = line.rstrip("\n").split("\t")
            kind = f_[0]
            if kind not in MIN_FIELDS:
                if cur is not None:
                    cur.lines += 1
                continue            # a kind of a later writer: ignored
            if len(f_) - 1 < MIN_FIELDS[kind]:
                raise TraceError(f"{path}:{lineno}: '{kind}' line with {len(f_) - 1} fields, "
                                 f"needs {MIN_FIELDS[kind]}")
            if kind == "begin":
                if cur is not None:
                    raise TraceError(f"{path}:{lineno}: 'begin' before the 'end' of the transaction "
                                     f"of line {cur.lineno}")
                cur = Transaction(pid, btype, f_[1:], lineno)
                continue
            if cur is None:
                raise TraceError(f"{path}:{lineno}: '{kind}' line outside a transaction")
            t = int(f_[1])
            if kind == "end":
                cur.end = (t, f_[2], int(f_[3])) + tuple(int(x) for x in f_[4:6])
                txns.append(cur)
                cur = None
            else:
                cur.events.append((kind, t, f_[2:]))
                cur.lines += 1
    if cur is not None:
        raise TraceError(f"{path}: the transaction of line {cur.lineno} has no 'end'")
    return txns


def check(txns):
    """What in these transactions breaks the format's rules, as messages
    (empty: none).  An LWLock acquisition that holds (how other than
    'served') must be released once within its transaction, a release must
    follow an acquisition of the same lock, times never go back, 'end'
    counts the lines before it.  A transaction that dropped events is only
    checked for its times."""
    problems = []
    for x in txns:
        where = f"pid {x.pid} transaction {x.seq} (line {x.lineno})"
        last = 0
        for kind, t, _ in x.events:
            if t < last:
                problems.append(f"{where}: time goes back at a '{kind}' line ({t} < {last})")
                break
            last = t
        if x.end[0] < last:
            problems.append(f"{where}: 'end' at {x.end[0]} before the last event at {last}")
        if len(x.end) > 3 and x.end[3] != x.lines:
            problems.append(f"{where}: 'end' counts {x.end[3]} events, the transaction has {x.lines} lines")
        if x.dropped:
            continue
        held = collections.Counter()
        for kind, t, f in x.events:
            if kind != "lw":
                continue
            key = (f[1], f[2])
            if f[0] == "acq" and f[4] != "served":
                held[key] += 1
            elif f[0] == "rel":
                if held[key] <= 0:
                    problems.append(f"{where}: release of {f[1]} {f[2]} at {t} that it does not hold")
                else:
                    held[key] -= 1
        for key, n in held.items():
            if n > 0:
                problems.append(f"{where}: {key[0]} {key[1]} acquired and never released ({n})")
    return problems


def holds(x):
    """[(tranche, instance, mode, acquired_t, released_t, depth)] of one
    transaction's LWLock holds: depth is how many other LWLocks it held when
    it took this one (0: none)."""
    open_ = collections.defaultdict(list)
    out = []
    depth = 0
    for kind, t, f in x.events:
        if kind != "lw":
            continue
        key = (f[1], f[2])
        if f[0] == "acq" and f[4] != "served":
            open_[key].append((t, f[3], depth))
            depth += 1
        elif f[0] == "rel" and open_[key]:
            t0, mode, d = open_[key].pop()
            depth -= 1
            out.append((f[1], f[2], mode, t0, t, d))
    return out


def summary(txns):
    """Per-transaction figures of a set of traced transactions."""
    done = [x for x in txns if x.end]
    n = len(done)
    if not n:
        return {"transactions": 0}
    kinds = collections.Counter(k for x in done for k, _, _ in x.events)
    acq = collections.Counter()
    hold_ns = collections.defaultdict(int)
    for x in done:
        for kind, t, f in x.events:
            if kind == "lw" and f[0] == "acq":
                acq[f"{f[1]} {f[3]}"] += 1
        for tranche, _, mode, t0, t1, _ in holds(x):
            hold_ns[f"{tranche} {mode}"] += t1 - t0
    wal = [sum(int(f[0]) for k, _, f in x.events if k == "wal") for x in done]
    # (did_write, ns) of each flush: fields upto, ns, did_write, ...
    flushes = [(int(f[2]), int(f[1])) for x in done for k, _, f in x.events if k == "flush"]
    client = [sum(int(f[0]) for k, _, f in x.events if k == "client") for x in done]
    rows = collections.Counter(f[0] for x in done for k, _, f in x.events if k == "row")
    dur = [x.duration_ns for x in done]
    return {
        "transactions": n,
        "aborted": sum(1 for x in done if x.end[1] != "commit"),
        "with_xid": sum(1 for x in done if x.end[2]),
        "truncated": sum(1 for x in done if x.dropped),
        "events_per_txn": round(sum(len(x.events) for x in done) / n, 2),
        "lines_per_txn": {k: round(v / n, 3) for k, v in sorted(kinds.items())},
        "duration_us_mean": round(statistics.mean(dur) / 1000, 3),
        "duration_us_median": round(statistics.median(dur) / 1000, 3),
        "client_wait_us_per_txn": round(statistics.mean(client) / 1000, 3),
        "lw_acquisitions_per_txn": {k: round(v / n, 3) for k, v in acq.most_common()},
        "lw_hold_us_per_txn": {k: round(v / n / 1000, 3)
                               for k, v in sorted(hold_ns.items(), key=lambda kv: -kv[1])},
        "rows_per_txn": {k: round(v / n, 3) for k, v in sorted(rows.items())},
        "wal_bytes_per_txn": round(statistics.mean(wal), 1),
        "flushes_per_txn": round(len(flushes) / n, 3),
        "flush_us_mean": round(statistics.mean(ns for _, ns in flushes) / 1000, 3) if flushes else None,
        "flushes_written_by_self": sum(1 for w, _ in flushes if w),
    }
