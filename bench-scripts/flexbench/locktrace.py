"""Lock traces (lock_stats_trace, patch 0019) for make trace: reading the
files a traced server writes to pg_locktrace/<pid>.trace, checking them and
summarising them.

The format is docs/lock-trace.md, read by flexlab.locktrace, the one reader
(which refuses a file that breaks its rules: a line of a known kind short
of fields or with a field not what the format says, an event outside a
transaction, times going back ...).  read_trace() returns the transactions
of one file; check() says what else in them breaks the format's rules (a
release of an LWLock not held, a hold never released, an 'end' whose count
disagrees), so that a harness or a test fails loudly on a broken trace;
summary() gives the per-transaction figures a reader wants first.
"""

import collections
import statistics

from flexlab.locktrace import (K_ACQ, K_BUF, K_CLIENT, K_FAIL, K_FLUSH, K_HW, K_HWREL, K_IO, K_REL, K_ROW,
                               K_WAL, K_WFV, TraceError, parse_file)

__all__ = ["TraceError", "read_trace", "check", "holds", "summary"]

# the line kind of each event kind
LINE_KIND = {K_ACQ: "lw", K_FAIL: "lw", K_REL: "lw", K_WFV: "lw", K_HW: "hw", K_HWREL: "hwrel", K_ROW: "row",
             K_WAL: "wal", K_FLUSH: "flush", K_IO: "io", K_CLIENT: "client", K_BUF: "buf"}


def read_trace(path):
    """The transactions (flexlab.locktrace.Txn) of one trace file (.trace
    or .trace.xz); TraceError for a file the format does not allow."""
    return parse_file(path).txns


def check(txns):
    """What in these transactions breaks the format's rules that the reader
    does not check, as messages (empty: none).  An LWLock acquisition that
    holds (how other than 'served') must be released once within its
    transaction, a release must follow an acquisition of the same lock,
    'end' counts the lines before it.  A transaction that dropped events is
    only checked for its count."""
    problems = []
    for x in txns:
        where = f"{x.source}: transaction {x.seq}"
        if x.end_events is not None and x.end_events != x.lines:
            problems.append(f"{where}: 'end' counts {x.end_events} events, the transaction has {x.lines} lines")
        if x.dropped:
            continue
        held = collections.Counter()
        for e in x.events:
            k = e[1]
            if k == K_ACQ and e[5] != "served":
                held[(e[2], e[3])] += 1
            elif k == K_REL:
                key = (e[2], e[3])
                if held[key] <= 0:
                    problems.append(f"{where}: release of {e[2]} {e[3]} at {e[0]} that it does not hold")
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
    for e in x.events:
        k = e[1]
        if k == K_ACQ and e[5] != "served":
            open_[(e[2], e[3])].append((e[0], e[4], depth))
            depth += 1
        elif k == K_REL and open_[(e[2], e[3])]:
            t0, mode, d = open_[(e[2], e[3])].pop()
            depth -= 1
            out.append((e[2], e[3], mode, t0, e[0], d))
    return out


def summary(txns):
    """Per-transaction figures of a set of traced transactions."""
    done = [x for x in txns if x.end_t is not None]
    n = len(done)
    if not n:
        return {"transactions": 0}
    kinds = collections.Counter(LINE_KIND[e[1]] for x in done for e in x.events)
    acq = collections.Counter()
    hold_ns = collections.defaultdict(int)
    for x in done:
        for e in x.events:
            if e[1] == K_ACQ:
                acq[f"{e[2]} {e[4]}"] += 1
        for tranche, _, mode, t0, t1, _ in holds(x):
            hold_ns[f"{tranche} {mode}"] += t1 - t0
    wal = [sum(e[2] for e in x.events if e[1] == K_WAL) for x in done]
    # (did_write, ns) of each flush
    flushes = [(e[4], e[3]) for x in done for e in x.events if e[1] == K_FLUSH]
    client = [sum(e[2] for e in x.events if e[1] == K_CLIENT) for x in done]
    rows = collections.Counter(e[2] for x in done for e in x.events if e[1] == K_ROW)
    dur = [x.end_t for x in done]
    return {
        "transactions": n,
        "aborted": sum(1 for x in done if x.outcome != "commit"),
        "with_xid": sum(1 for x in done if x.xid_assigned),
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
