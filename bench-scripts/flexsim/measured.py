"""Measured points to compare the simulator with: a flexbench run
directory's runs.csv and raw/*.locks.json (the 16-core run of 2026-11-22,
or a 2-core run of this lab), one point per (directory, workload, build,
variant, clients): the median tps of its repetitions and, summed over them,
per transaction, each tranche's acquisitions, sleeps and wait time and the
variant counters.
"""

import csv
import json
import statistics
from pathlib import Path

# the committed copy of ../shared/results/2026-11-22-16core (its runs.csv and
# raw/*.locks.json are the same files)
SIXTEEN = Path(__file__).resolve().parents[2] / "results" / "2026-11-22-16core"


class MeasuredPoint:
    __slots__ = ("run", "workload", "build", "variant", "clients", "tps", "reps", "transactions", "tranches",
                 "counters", "latency_ms", "cpu_idle", "rep_tps")

    def __repr__(self):
        return f"{self.run}:{self.workload}/{self.build}/{self.variant}/{self.clients}: {self.tps:.0f} tps"

    @property
    def name(self):
        return f"{self.run}/{self.workload}/{self.build}-{self.variant}/c{self.clients}"


def load_run(path):
    path = Path(path)
    rows = list(csv.DictReader(open(path / "runs.csv")))
    if not rows or "workload" not in rows[0]:
        return []
    groups = {}
    for r in rows:
        groups.setdefault((r["workload"], r["build"], r["variant"], int(r["clients"])), []).append(r)
    out = []
    for (w, b, v, c), rs in sorted(groups.items()):
        m = MeasuredPoint()
        m.run = path.name
        m.workload, m.build, m.variant, m.clients = w, b, v, c
        m.tps = statistics.median(float(r["tps"]) for r in rs)
        m.reps = [float(r["tps"]) for r in rs]
        m.rep_tps = {int(r["rep"]): float(r["tps"]) for r in rs if r.get("rep", "").isdigit()}
        m.latency_ms = statistics.median(float(r["latency_avg_ms"]) for r in rs)
        idle = [float(r["cpu_idle_pct"]) for r in rs if r.get("cpu_idle_pct") not in (None, "", "-")]
        m.cpu_idle = statistics.median(idle) if idle else None
        txn = 0
        tr = {}
        cn = {}
        for r in rs:
            f = path / "raw" / f"{r['run']}.locks.json"
            if not f.exists():
                continue
            txn += int(r["transactions"])
            d = json.loads(f.read_text())
            for t, v in d.get("tranches", {}).items():
                a = tr.setdefault(t, [0, 0, 0.0])
                a[0] += v["acquires"]
                a[1] += v["waits"]
                a[2] += v["wait_ms"]
            for k, v in d.get("counters", {}).items():
                cn[k] = cn.get(k, 0) + v
        m.transactions = txn
        m.tranches = {t: {"acquires": a[0] / txn, "sleeps": a[1] / txn, "wait_us": a[2] * 1000 / txn}
                      for t, a in tr.items()} if txn else {}
        m.counters = {k: v / txn for k, v in cn.items()} if txn else {}
        out.append(m)
    return out


def sixteen_core_points(root=SIXTEEN):
    """The 74 pgbench points of the 16-core run (every directory with a
    pgbench runs.csv), in directory order."""
    out = []
    for d in sorted(Path(root).iterdir()):
        if (d / "runs.csv").exists():
            out.extend(load_run(d))
    return out
