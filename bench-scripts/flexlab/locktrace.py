"""The one reader of lock traces (format version 1, docs/lock-trace.md): one
file per backend, `version 1 <pid> <backend_type>` first, then
transactions from `begin` to `end`.  The simulator (flexsim.trace, the same
names) and make trace's checks and summary (flexbench.locktrace) read
traces through it.

parse_file(path) / parse_text(text, name) return a Trace: the file's pid and
backend type and its transactions, each a Txn with its events in order.
Anything the format does not allow is refused with TraceError naming the
file and line: a missing or unknown version line, a known line kind with too
few fields or a field that is not what the format says (an integer, a mode S
or X, an `acq` how the format lists), an event outside a transaction, a
`begin` inside one, an `end` without a `begin`, times that go backwards
within a transaction, and a file that ends inside a transaction.  Unknown
line kinds and extra trailing fields are ignored, as the format requires.

Events are tuples whose first two items are (t, kind); kind is one of the
K_* constants below:

  (t, K_ACQ, tranche, instance, mode, how, wait_ns)   mode 'S' or 'X'
  (t, K_FAIL, tranche, instance, mode, how)
  (t, K_REL, tranche, instance)
  (t, K_WFV, tranche, instance, wait_ns)
  (t, K_HW, locktype, mode, path, id)
  (t, K_HWREL, locktype, id)
  (t, K_ROW, op, relation, block, offset)
  (t, K_WAL, bytes, end_lsn)
  (t, K_FLUSH, upto_lsn, ns, did_write)
  (t, K_IO, kind, ns)
  (t, K_CLIENT, ns)                                    waited ns for the client, ending at t
  (t, K_BUF, pin, page)                                pin True / unpin False

`client` and `buf` are line kinds the trace patch added to version 1 (its
file header, docs/lock-trace.md); a `begin` may carry since_prev_end_ns
and client_wait_ns (the time since the process's previous transaction
ended, and of it the wait for the client), kept as Txn.outside_ns and
Txn.client_wait_ns (None when absent).  A Txn also keeps what a check of the
writer needs: the line of its `begin` (lineno), the number of lines between
its `begin` and `end` of any kind (lines), and the `end` line's count of
them and of the events dropped (end_events, None when absent or not a
count; dropped, 0 then).
"""

import lzma
import os

VERSION = 1

K_ACQ, K_FAIL, K_REL, K_WFV, K_HW, K_HWREL, K_ROW, K_WAL, K_FLUSH, K_IO, K_CLIENT, K_BUF = range(12)
KIND_NAMES = {K_ACQ: "lw acq", K_FAIL: "lw fail", K_REL: "lw rel", K_WFV: "lw wfv", K_HW: "hw",
              K_HWREL: "hwrel", K_ROW: "row", K_WAL: "wal", K_FLUSH: "flush", K_IO: "io", K_CLIENT: "client",
              K_BUF: "buf"}

ACQ_HOWS = ("word", "slot", "cond", "orwait", "served")
FAIL_HOWS = ("cond", "orwait")
HW_PATHS = ("fastpath", "table", "local")
ROW_OPS = ("update", "delete", "lock", "insert")


class TraceError(Exception):
    """A trace the format does not allow; the message names file and line."""


class Txn:
    __slots__ = ("seq", "unix_us", "interval", "events", "end_t", "outcome", "xid_assigned", "source",
                 "outside_ns", "client_wait_ns", "xacts_before", "lineno", "lines", "end_events", "dropped")

    def __init__(self, seq, unix_us, interval, source, lineno=None):
        self.lineno = lineno
        self.lines = 0
        self.end_events = None
        self.dropped = 0
        self.outside_ns = None
        self.client_wait_ns = None
        self.xacts_before = None
        self.seq = seq
        self.unix_us = unix_us
        self.interval = interval
        self.events = []
        self.end_t = None
        self.outcome = None
        self.xid_assigned = False
        self.source = source

    def __repr__(self):
        return f"Txn({self.source} seq {self.seq}, {len(self.events)} events, {self.end_t} ns, {self.outcome})"


class Trace:
    __slots__ = ("name", "pid", "backend_type", "txns")

    def __init__(self, name, pid, backend_type):
        self.name = name
        self.pid = pid
        self.backend_type = backend_type
        self.txns = []


def _int(name, lineno, field, what, lo=0):
    try:
        v = int(field)
    except ValueError:
        raise TraceError(f"{name}:{lineno}: {what} must be an integer, not {field!r}") from None
    if v < lo:
        raise TraceError(f"{name}:{lineno}: {what} must be at least {lo}, not {v}")
    return v


def _lw_mode(name, lineno, mode):
    """An LWLock event's mode, S or X."""
    if mode not in ("S", "X"):
        raise TraceError(f"{name}:{lineno}: lock mode must be S or X, not {mode!r}")
    return mode

def _need(name, lineno, f, n, usage):
    if len(f) < n:
        raise TraceError(f"{name}:{lineno}: '{f[0]}' line has {len(f) - 1} fields, needs {n - 1}: {usage}")


def parse_text(text, name="<trace>"):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise TraceError(f"{name}: empty file, not a lock trace (the first line must be 'version<TAB>1<TAB>pid<TAB>backend_type')")
    first = lines[0].split("\t")
    if first[0] != "version":
        raise TraceError(f"{name}:1: not a lock trace: the first line must be 'version<TAB>1<TAB>pid<TAB>backend_type', "
                         f"not {lines[0][:60]!r}")
    if len(first) < 4:
        raise TraceError(f"{name}:1: the version line needs version, pid and backend type")
    ver = _int(name, 1, first[1], "version")
    if ver != VERSION:
        raise TraceError(f"{name}:1: trace format version {ver}; this reader knows version {VERSION} only")
    tr = Trace(name, _int(name, 1, first[2], "pid"), first[3])
    cur = None
    last_t = 0
    for lineno, line in enumerate(lines[1:], start=2):
        if line == "":
            continue
        f = line.split("\t")
        k = f[0]
        if k == "begin":
            _need(name, lineno, f, 4, "begin <seq> <unix_us> <sample_interval>")
            if cur is not None:
                raise TraceError(f"{name}:{lineno}: 'begin' inside the transaction begun at line {cur_line}")
            cur = Txn(_int(name, lineno, f[1], "seq"), _int(name, lineno, f[2], "unix_us"),
                      _int(name, lineno, f[3], "sample_interval", 1), f"{name}:{lineno}", lineno)
            if len(f) >= 6 and f[4] != "" and f[5] != "":
                cur.outside_ns = _int(name, lineno, f[4], "since_prev_end_ns")
                cur.client_wait_ns = _int(name, lineno, f[5], "client_wait_ns")
            if len(f) >= 7 and f[6] != "":
                cur.xacts_before = _int(name, lineno, f[6], "xacts_before")
            cur_line = lineno
            last_t = 0
            continue
        if k not in ("lw", "hw", "hwrel", "row", "wal", "flush", "io", "end", "client", "buf"):
            continue            # unknown line kinds are ignored (the format's rule)
        if cur is None:
            raise TraceError(f"{name}:{lineno}: '{k}' line outside a transaction (no 'begin' before it)")
        _need(name, lineno, f, 2, f"{k} <t> ...")
        t = _int(name, lineno, f[1], "t")
        if t < last_t:
            raise TraceError(f"{name}:{lineno}: time goes backwards within a transaction ({t} ns after {last_t} ns)")
        last_t = t
        ev = cur.events
        if k == "lw":
            _need(name, lineno, f, 5, "lw <t> acq|fail|rel|wfv <tranche> <instance> ...")
            what = f[2]
            if what == "acq":
                _need(name, lineno, f, 8, "lw <t> acq <tranche> <instance> <mode> <how> <wait_ns>")
                mode, how = _lw_mode(name, lineno, f[5]), f[6]
                if how not in ACQ_HOWS:
                    raise TraceError(f"{name}:{lineno}: acquisition 'how' must be one of {', '.join(ACQ_HOWS)}, not {how!r}")
                ev.append((t, K_ACQ, f[3], f[4], mode, how, _int(name, lineno, f[7], "wait_ns")))
            elif what == "fail":
                _need(name, lineno, f, 7, "lw <t> fail <tranche> <instance> <mode> <how>")
                mode, how = _lw_mode(name, lineno, f[5]), f[6]
                if how not in FAIL_HOWS:
                    raise TraceError(f"{name}:{lineno}: failed acquisition 'how' must be cond or orwait, not {how!r}")
                ev.append((t, K_FAIL, f[3], f[4], mode, how))
            elif what == "rel":
                ev.append((t, K_REL, f[3], f[4]))
            elif what == "wfv":
                _need(name, lineno, f, 6, "lw <t> wfv <tranche> <instance> <wait_ns>")
                ev.append((t, K_WFV, f[3], f[4], _int(name, lineno, f[5], "wait_ns")))
            else:
                raise TraceError(f"{name}:{lineno}: lw event must be acq, fail, rel or wfv, not {what!r}")
        elif k == "hw":
            _need(name, lineno, f, 6, "hw <t> <locktype> <mode> <path> <id>")
            if f[4] not in HW_PATHS:
                raise TraceError(f"{name}:{lineno}: heavyweight lock path must be fastpath, table or local, not {f[4]!r}")
            ev.append((t, K_HW, f[2], f[3], f[4], f[5]))
        elif k == "hwrel":
            _need(name, lineno, f, 4, "hwrel <t> <locktype> <id>")
            ev.append((t, K_HWREL, f[2], f[3]))
        elif k == "row":
            _need(name, lineno, f, 6, "row <t> <op> <relation> <block> <offset>")
            if f[2] not in ROW_OPS:
                raise TraceError(f"{name}:{lineno}: row op must be one of {', '.join(ROW_OPS)}, not {f[2]!r}")
            ev.append((t, K_ROW, f[2], f[3], _int(name, lineno, f[4], "block"), _int(name, lineno, f[5], "offset")))
        elif k == "wal":
            _need(name, lineno, f, 4, "wal <t> <bytes> <end_lsn>")
            ev.append((t, K_WAL, _int(name, lineno, f[2], "bytes", 1), _int(name, lineno, f[3], "end_lsn")))
        elif k == "flush":
            _need(name, lineno, f, 5, "flush <t> <upto_lsn> <ns> <did_write>")
            ev.append((t, K_FLUSH, _int(name, lineno, f[2], "upto_lsn"), _int(name, lineno, f[3], "ns"),
                       _did_write(name, lineno, f[4])))
        elif k == "io":
            _need(name, lineno, f, 4, "io <t> <kind> <ns>")
            ev.append((t, K_IO, f[2], _int(name, lineno, f[3], "ns")))
        elif k == "client":
            _need(name, lineno, f, 3, "client <t> <ns>")
            ev.append((t, K_CLIENT, _int(name, lineno, f[2], "ns")))
        elif k == "buf":
            _need(name, lineno, f, 4, "buf <t> pin|unpin <relfilenode/fork/block>")
            if f[2] not in ("pin", "unpin"):
                raise TraceError(f"{name}:{lineno}: buf event must be pin or unpin, not {f[2]!r}")
            ev.append((t, K_BUF, f[2] == "pin", f[3]))
        elif k == "end":
            _need(name, lineno, f, 4, "end <t> commit|abort <xid_assigned>")
            if f[2] not in ("commit", "abort"):
                raise TraceError(f"{name}:{lineno}: end must say commit or abort, not {f[2]!r}")
            xa = f[3]
            if xa not in ("0", "1"):
                raise TraceError(f"{name}:{lineno}: xid_assigned must be 0 or 1, not {xa!r}")
            cur.end_t = t
            cur.outcome = f[2]
            cur.xid_assigned = xa == "1"
            cur.lines = lineno - cur_line - 1
            # (trailing fields: read where they are counts, as the
            # simulator, which needs neither, has always ignored them)
            if len(f) > 4 and f[4].isdigit():
                cur.end_events = int(f[4])
            if len(f) > 5 and f[5].isdigit():
                cur.dropped = int(f[5])
            tr.txns.append(cur)
            cur = None
    if cur is not None:
        raise TraceError(f"{name}: the file ends inside the transaction begun at line {cur_line} (no 'end')")
    return tr


def _did_write(name, lineno, field):
    if field not in ("0", "1"):
        raise TraceError(f"{name}:{lineno}: did_write must be 0 or 1, not {field!r}")
    return field == "1"


def parse_file(path):
    """One trace file, plain (.trace) or xz-compressed (.trace.xz)."""
    path = str(path)
    opener = lzma.open if path.endswith(".xz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="strict") as fh:
            text = fh.read()
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not a text file ({e})") from None
    except lzma.LZMAError as e:
        raise TraceError(f"{path}: not an xz file ({e})") from None
    return parse_text(text, path)


def trace_files(path):
    """The trace files of a directory: *.trace and *.trace.xz in it or in
    its traces/ subdirectory (make trace's layout), sorted by name."""
    out = []
    for d in (path, os.path.join(path, "traces")):
        if os.path.isdir(d):
            out += [os.path.join(d, n) for n in sorted(os.listdir(d))
                    if n.endswith(".trace") or n.endswith(".trace.xz")]
    return out


def load_dir(path):
    """Every trace file of a directory (trace_files), as Traces; a directory
    without one is refused."""
    files = trace_files(path)
    if not files:
        raise TraceError(f"{path}: no *.trace files")
    return [parse_file(f) for f in files]
