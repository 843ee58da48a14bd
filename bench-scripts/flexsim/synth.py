"""Synthetic lock traces (format version 1), for tests and for trying the
simulator before real traces exist: transactions shaped like the lab's
workloads, with CPU times of the order the 2-core hold-time profiles show.
They stand for nothing measured.

    python3 -m flexlab sim synth KIND [--txns N] [--seed S] > file.trace
    KIND: select-only, insert-N (N rows), xid, onelock (one lock, see below)
"""

import argparse
import random
import sys
import zlib


class Writer:
    def __init__(self, pid=1000, backend_type="client backend", interval=1):
        self.lines = [f"version\t1\t{pid}\t{backend_type}"]
        self.interval = interval
        self.seq = 0
        self.t = 0
        self.lsn = 0x1000000

    def begin(self):
        self.seq += 1
        self.t = 0
        self.lines.append(f"begin\t{self.seq}\t{1700000000000000 + self.seq}\t{self.interval}")

    def cpu(self, ns):
        self.t += int(ns)

    def acq(self, tranche, inst, mode="X", how="word"):
        self.lines.append(f"lw\t{self.t}\tacq\t{tranche}\t{inst}\t{mode}\t{how}\t0")

    def rel(self, tranche, inst):
        self.lines.append(f"lw\t{self.t}\trel\t{tranche}\t{inst}")

    def hold(self, tranche, inst, mode, ns, how="word"):
        self.acq(tranche, inst, mode, how)
        self.cpu(ns)
        self.rel(tranche, inst)

    def hw(self, locktype, mode, path, ident):
        self.lines.append(f"hw\t{self.t}\t{locktype}\t{mode}\t{path}\t{ident}")

    def row(self, op, rel, block, off):
        self.lines.append(f"row\t{self.t}\t{op}\t{rel}\t{block}\t{off}")

    def wal(self, nbytes, lock=0, copy_ns=100):
        self.acq("WALInsert", str(lock), "X")
        self.cpu(copy_ns // 2)
        self.lsn += nbytes
        self.lines.append(f"wal\t{self.t}\t{nbytes}\t{self.lsn}")
        self.cpu(copy_ns - copy_ns // 2)
        self.rel("WALInsert", str(lock))

    def flush(self, ns):
        start = self.t
        self.acq("WALWrite", "0", "X", "orwait")
        self.t += int(ns)
        self.rel("WALWrite", "0")
        self.lines.append(f"flush\t{self.t}\t{self.lsn}\t{self.t - start}\t1")

    def end(self, xid=False, outcome="commit"):
        self.lines.append(f"end\t{self.t}\t{outcome}\t{1 if xid else 0}")

    def text(self):
        return "\n".join(self.lines) + "\n"


def select_only(n=200, seed=1, scale_blocks=16000):
    rnd = random.Random(seed)
    w = Writer()
    for _ in range(n):
        w.begin()
        w.cpu(2000)
        for rel in ("16384/16397", "16384/16390"):
            w.hold("LockFastPath", "own", "X", 60)
            w.hw("relation", "AccessShareLock", "fastpath", rel)
            w.cpu(300)
        w.hold("ProcArray", "0", "S", 60)
        w.cpu(1500)
        for page in ("16397/0/3", f"16397/0/{rnd.randrange(4, 60)}", f"16390/0/{rnd.randrange(scale_blocks)}"):
            w.hold("BufferMapping", str(zlib.crc32(page.encode()) % 128), "S", 300)
            w.cpu(150)
            w.hold("BufferContent", page, "S", 600)
            w.cpu(500)
        w.cpu(1500)
        w.end()
    return w.text()


def insert(rows=1000, n=20, seed=1, fsync_ns=500000):
    w = Writer()
    blk = 0
    off = 0
    for _ in range(n):
        w.begin()
        w.cpu(20000)
        w.hw("relation", "RowExclusiveLock", "fastpath", "16384/16400")
        for _r in range(rows):
            off += 1
            if off > 226:
                off = 1
                blk += 1
            page = f"16400/0/{blk}"
            w.hold("BufferMapping", str(blk % 128), "S", 200) if off == 1 else None
            w.acq("BufferContent", page, "X")
            w.cpu(150)
            w.row("insert", "16400", blk, off)
            w.wal(59, copy_ns=150)
            w.cpu(50)
            w.rel("BufferContent", page)
            w.cpu(400)
        w.hold("XidGen", "0", "X", 80)
        w.wal(40, copy_ns=100)
        w.flush(fsync_ns)
        w.hold("ProcArray", "0", "X", 150, how="cond")
        w.cpu(3000)
        w.end(xid=True)
    return w.text()


def xid(n=200):
    w = Writer()
    for _ in range(n):
        w.begin()
        w.cpu(3000)
        w.hold("ProcArray", "0", "S", 60)
        w.hold("XidGen", "0", "X", 80)
        w.cpu(2000)
        w.wal(40, copy_ns=80)
        w.cpu(500)
        w.hold("ProcArray", "0", "X", 120, how="cond")
        w.cpu(1000)
        w.end(xid=True)
    return w.text()


def onelock(n=100, before_ns=1000, hold_ns=250, after_ns=0):
    """One exclusive lock per transaction, nothing else: for known answers."""
    w = Writer()
    for _ in range(n):
        w.begin()
        w.cpu(before_ns)
        w.hold("TestLock", "0", "X", hold_ns)
        w.cpu(after_ns)
        w.end()
    return w.text()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind")
    ap.add_argument("--txns", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if a.kind == "select-only":
        sys.stdout.write(select_only(a.txns, a.seed))
    elif a.kind.startswith("insert-"):
        sys.stdout.write(insert(int(a.kind.split("-")[1]), a.txns, a.seed))
    elif a.kind == "xid":
        sys.stdout.write(xid(a.txns))
    elif a.kind == "onelock":
        sys.stdout.write(onelock(a.txns))
    else:
        sys.exit(f"unknown kind {a.kind!r}")


if __name__ == "__main__":
    main()
