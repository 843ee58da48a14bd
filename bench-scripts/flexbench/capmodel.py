"""The cap model: the throughput a configuration would reach on C cores,
predicted from one run of it on this machine with lock_stats_hold_sample on.
Defined in results/2026-11-25-caps-2core/MODEL.md (committed
before its check against the 16-core run), written out with its known errors
in results/README.md.  The one implementation: flexbench's
profile runs (a point's caps and predictions in summary.md) and
results/2026-11-25-caps-2core/capcheck.py both use it.

Over one run of T transactions:

  D     CPU demand: busy CPU seconds of the whole machine (user, nice,
        system, irq, softirq from /proc/stat) per transaction
  cap   of a sampled LWLock tranche: k / (h - n), the extension's
        flexlock_lock_caps(T).own_cap_tps (h: exclusive hold time per
        transaction, n: the part of it asleep on other locks, k: the
        tranche's interchangeable locks; no cap for buffer content locks)

  prediction at C cores = min(C / D, the lowest cap), and what binds
  ("CPU" or the tranche).
"""

import os
import time

from .config import BenchError
from .machine import cpu_times
from .pgbench import parse_pgbench
from .servers import as_user, sh

# the sampling interval of the profile runs: one LWLock acquisition in 100
SAMPLE = 100

CAPS_FIELDS = ["tranche", "instances", "exclusive_hold_us_per_txn", "own_exclusive_hold_us_per_txn",
               "own_cap_tps", "cap_tps", "utilization"]
HOLDS_FIELDS = ["tranche", "instances", "holds_timed", "hold_shared_ms", "hold_exclusive_ms",
                "hold_wait_shared_ms", "hold_wait_exclusive_ms", "avg_hold_shared_us", "avg_hold_exclusive_us",
                "seconds", "exclusive_per_second", "utilization", "mean_utilization", "shared_per_second",
                "exclusive_waiting"]


def busy_ticks(t):
    """Busy clock ticks of a /proc/stat 'cpu' line (machine.cpu_times())."""
    user, nice, system, _idle, _iowait, irq, softirq, _steal = t
    return user + nice + system + irq + softirq


def cpu_demand(t0, t1, transactions, hz):
    """(busy CPU seconds, D = busy CPU seconds per transaction) between two
    machine.cpu_times() readings."""
    busy = (busy_ticks(t1) - busy_ticks(t0)) / hz
    return busy, (busy / transactions if transactions else None)


def predict(D, caps, cores):
    """{C: {'cpu_cap', 'pred', 'binds'}} for each core count C: the CPU cap
    C / D and the prediction, the smallest of it and the lowest lock cap.
    caps: [{'tranche', 'own_cap_tps'}] (any order); D in seconds."""
    lowest = min(caps, key=lambda c: c["own_cap_tps"]) if caps else None
    out = {}
    for c in cores:
        cpu_cap = c / D if D else None
        if lowest is not None and (cpu_cap is None or lowest["own_cap_tps"] < cpu_cap):
            out[c] = {"cpu_cap": cpu_cap, "pred": lowest["own_cap_tps"], "binds": lowest["tranche"]}
        else:
            out[c] = {"cpu_cap": cpu_cap, "pred": cpu_cap, "binds": "CPU" if cpu_cap is not None else None}
    return out


def has_hold_sampling(srv):
    """Whether a server can profile: the GUC of patch 0017 and the
    extension's flexlock_lock_caps() (1.1)."""
    if not srv.has_flexlock:
        return False
    return srv.psql("SELECT (SELECT count(*) FROM pg_settings WHERE name = 'lock_stats_hold_sample') + "
                    "(SELECT count(*) FROM pg_proc WHERE proname = 'flexlock_lock_caps')") == "2"


def set_hold_sampling(srv, n):
    """lock_stats_hold_sample = n for every process of the server (ALTER
    SYSTEM and a reload; 0 or None: back to the default), and wait until a
    new session sees it."""
    if n:
        srv.psql(f"ALTER SYSTEM SET lock_stats_hold_sample = {int(n)}")
    else:
        srv.psql("ALTER SYSTEM RESET lock_stats_hold_sample")
    srv.psql("SELECT pg_reload_conf()")
    want = str(int(n or 0))
    for _ in range(100):
        if srv.psql("SHOW lock_stats_hold_sample") == want:
            return
        time.sleep(0.05)
    raise BenchError(f"{srv.build}: lock_stats_hold_sample did not become {want} after a reload")


def lock_caps(srv, transactions, seconds):
    """The capped tranches since the last reset, lowest own cap first:
    flexlock_lock_caps(transactions) and each one's utilization (exclusive
    hold seconds per second per lock, over `seconds`)."""
    rows = srv.psql("SELECT tranche, instances, exclusive_hold_us_per_txn, own_exclusive_hold_us_per_txn, "
                    f"own_cap_tps, cap_tps FROM flexlock_lock_caps({int(transactions)}) "
                    "WHERE own_cap_tps IS NOT NULL")
    out = []
    for r in rows.splitlines():
        name, k, h_us, own_us, own_cap, cap = r.split("|")
        k, h_us = int(k), float(h_us)
        out.append({"tranche": name, "instances": k, "exclusive_hold_us_per_txn": h_us,
                    "own_exclusive_hold_us_per_txn": float(own_us), "own_cap_tps": float(own_cap),
                    "cap_tps": float(cap) if cap else None,
                    "utilization": h_us / 1e6 * transactions / seconds / k if seconds else None})
    return sorted(out, key=lambda c: c["own_cap_tps"])


def lock_holds(srv):
    """Hold times and load of every sampled tranche since the last reset:
    flexlock_lwlocks' hold columns and flexlock_lock_load, one dict per
    tranche."""
    cols = HOLDS_FIELDS[1:]
    rows = srv.psql("SELECT l.tranche, d.instances, l.holds_timed, l.hold_shared_ms, l.hold_exclusive_ms, "
                    "l.hold_wait_shared_ms, l.hold_wait_exclusive_ms, l.avg_hold_shared_us, "
                    "l.avg_hold_exclusive_us, d.seconds, d.exclusive_per_second, d.utilization, "
                    "d.mean_utilization, d.shared_per_second, d.exclusive_waiting "
                    "FROM flexlock_lwlocks l JOIN flexlock_lock_load d USING (tranche_id, tranche) "
                    "WHERE l.holds_timed > 0 ORDER BY d.exclusive_per_second DESC NULLS LAST, l.tranche")
    out = []
    for r in rows.splitlines():
        vals = r.split("|")
        d = {"tranche": vals[0]}
        for k, v in zip(cols, vals[1:]):
            d[k] = None if v == "" else (int(v) if k in ("instances", "holds_timed") else float(v))
        out.append(d)
    return out


def measure(srv, cmd, db, seconds, log=None):
    """One measured run for the model: reset the lock statistics, run
    pgbench (cmd, without -T and the database) for `seconds`, and read CPU
    demand, caps and holds.  The server must already sample holds
    (set_hold_sampling).  Returns {'tps', 'transactions', 'busy_cpu_s', 'D',
    'caps', 'holds', 'output'}."""
    srv.psql("SELECT flexlock_reset()")
    t0 = cpu_times()
    text = sh(as_user(cmd + ["-T", str(seconds), db]), log)
    t1 = cpu_times()
    p = parse_pgbench(text)
    txns = p["transactions"]
    busy, D = cpu_demand(t0, t1, txns, os.sysconf("SC_CLK_TCK"))
    return {"tps": p["tps"], "transactions": txns, "busy_cpu_s": busy, "D": D,
            "caps": lock_caps(srv, txns, seconds), "holds": lock_holds(srv), "output": text}
