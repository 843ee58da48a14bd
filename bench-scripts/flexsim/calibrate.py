"""The simulator's calibration on the traces' machine: the CPU time per
transaction of the backends and of pgbench, measured on their own processes
(utime + stime from /proc/PID/stat between two instants of a run, over the
transactions committed meanwhile), so that other work on the machine does
not enter it.  The simulator takes the client's time from it, and the
backend's time outside the traced transactions (its CPU time less the
traced transaction's).

    python3 -m flexlab sim calibrate --out FILE [--workloads a,b] [--secs 10]
                                 [--variant stock] [--clients N] [--build B]
    ./flexbench calibrate ...     (the same from a bundle: make bundle)

--clients: 1 (model v1 and v2's rule) or, for model v3, as many as the
machine has cores, so that no wake-up finds a core idle: the simulator
charges idle cores' wake-ups itself, and a 1-client run's processes are
charged (as system time, on a VM) for theirs; v3 also scales the traced CPU
time to the backend's CPU per transaction measured so (predict.py).

Uses the flexbench package (servers, workloads) and the patched build
(FLEXLOCK_BUILD).  Writes FILE (json): per workload the backend's and
pgbench's CPU microseconds per transaction, the transactions per second,
the load average before and after each run.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path


from flexbench import config, machine
from flexbench.config import Workload, variant_settings
from flexbench.servers import Server, as_user, base_settings, prepare_run_user, sh, socket_dir

HZ = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """utime + stime of a process, in seconds (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def find_descendant(pid, name):
    """The pid of a process called name among pid and its descendants."""
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/comm") as f:
                if f.read().strip() == name:
                    return p
            for t in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{t}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return None


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def measure(srv, w, cmd, secs, settle=2.0, clients=1):
    """Run pgbench (cmd, `clients` clients) for settle + secs + 1 s; between
    settle and settle + secs read the CPU time of its backends and of
    pgbench (all its threads) and the commits of the workload's database."""
    full = cmd + ["-T", str(int(settle + secs + 1)), w.dbname]
    proc = subprocess.Popen(as_user(full), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = {}

    def probe():
        time.sleep(settle)
        be = pg = None
        for _ in range(50):
            be = srv.psql(f"SELECT string_agg(pid::text, ' ') FROM pg_stat_activity WHERE datname = '{w.dbname}' "
                          "AND application_name = 'pgbench' AND pid <> pg_backend_pid()")
            be = [int(x) for x in (be or "").split()]
            pg = find_descendant(proc.pid, "pgbench")
            if len(be) == clients and pg:
                break
            time.sleep(0.1)
        if len(be) != clients or not pg:
            out["error"] = f"backends {be!r}, pgbench {pg!r}"
            return

        def backends_cpu():
            t = [proc_cpu(b) for b in be]
            return None if None in t else sum(t)

        def commits():
            return int(srv.psql(f"SELECT xact_commit FROM pg_stat_database WHERE datname = '{w.dbname}'"))
        srv.psql("SELECT pg_stat_clear_snapshot()")
        c0, b0, p0, t0 = commits(), backends_cpu(), proc_cpu(pg), time.monotonic()
        time.sleep(secs)
        c1, b1, p1, t1 = commits(), backends_cpu(), proc_cpu(pg), time.monotonic()
        if None in (b0, b1, p0, p1):
            return
        out.update(commits=c1 - c0, backend_s=b1 - b0, pgbench_s=p1 - p0, wall_s=t1 - t0)
    th = threading.Thread(target=probe)
    th.start()
    text = proc.communicate()[0]
    th.join()
    if proc.returncode != 0:
        raise RuntimeError(f"pgbench failed: {text[-500:]}")
    if not out or out.get("commits", 0) <= 0:
        raise RuntimeError(f"could not measure the backend and pgbench ({out})")
    # pg_stat_database counts commits as the backends report them (at most
    # once a second): the commits of the interval, within a second's worth
    n = out["commits"]
    return {"transactions": n, "backend_cpu_us_per_txn": out["backend_s"] / n * 1e6,
            "pgbench_cpu_us_per_txn": out["pgbench_s"] / n * 1e6, "tps": n / out["wall_s"],
            "wall_s": out["wall_s"]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--workloads", default="select-only,hot-rows,tpcb-logged,tpcb-unlogged,xid-storm,group-commit,"
                                            "insert-1000,wal-emit-small,wal-emit-large,btree-ordered")
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--variant", default="stock")
    ap.add_argument("--clients", type=int, default=1,
                    help="pgbench clients (and threads); model v3 calibrates with as many as the machine has "
                         "cores, so that no wake-up finds a core idle: the simulator charges those itself")
    ap.add_argument("--build", default="patched", choices=("patched", "cassert"),
                    help="the install whose server is measured (default patched; a bundle of make check ships cassert)")
    a = ap.parse_args(argv)
    prepare_run_user()
    config.check_installed(a.build)
    work = config.BUILD / "bench" / "flexsim-calibrate"   # where the benchmark's data goes
    sh(["rm", "-rf", str(work)])
    work.mkdir(parents=True)
    sock = socket_dir("flexsim-calibrate-")
    if os.geteuid() == 0:
        sh(["chown", "-R", os.environ.get("FLEXLOCK_USER", "flexlock"), str(work)])
    log = work / "driver.log"
    base = base_settings(4)
    srv = Server(a.build, work, sock, base, log)
    srv.initdb()
    srv.start()
    srv.setup_flexlock()
    gucs = {k: v for k, v in variant_settings(a.variant).items() if not k.startswith("flexlock_test.")}
    srv.set_variant(a.variant, gucs)
    result = {"format": "flexsim calibration 1", "variant": a.variant, "secs": a.secs, "reps": a.reps,
              "clients": a.clients, "cores": machine.cores(),
              "settings": {k: v for k, v in base.items() if k not in ("listen_addresses", "log_line_prefix")},
              "workloads": {}}
    try:
        for wname in a.workloads.split(","):
            w = Workload(wname)
            srv.psql(f"CREATE DATABASE {w.dbname}")
            if w.pgbench_init:
                init = w.pgbench_init.replace("{scale}", str(w.scale))
                sh(as_user([srv.bin("pgbench")] + srv.conn() + ["-i", "-q"] + shlex.split(init) + [w.dbname]), log)
            if w.init_sql:
                tmp = work / f"{wname}.init.sql"
                tmp.write_text(w.init_sql.read_text().replace("{scale}", str(w.scale)))
                os.chmod(tmp, 0o644)
                srv.psql_file(tmp, w.dbname)
            for k, v in w.session.items():
                srv.psql(f"ALTER DATABASE {w.dbname} SET {k} = '{v}'")
            srv.psql("VACUUM ANALYZE", w.dbname)
            fargs = []
            for src, weight in w.scripts:
                dst = work / f"{wname}-{src.name}"
                dst.write_text(src.read_text())
                os.chmod(dst, 0o644)
                fargs += ["-f", str(dst) if weight is None else f"{dst}@{weight}"]
            cmd = [srv.bin("pgbench")] + srv.conn() + ["-n", "-c", str(a.clients), "-j", str(a.clients),
                                                      "-D", f"scale={w.scale}"]
            for k, v in w.vars.items():
                cmd += ["-D", f"{k}={v}"]
            cmd += w.pgbench_args + fargs
            reps = []
            for r in range(a.reps):
                if w.reset_sql:
                    srv.psql(w.reset_sql, w.dbname)
                srv.psql("CHECKPOINT")
                la0 = loadavg()
                m = measure(srv, w, cmd, a.secs, clients=a.clients)
                m["loadavg_before"], m["loadavg_after"] = la0, loadavg()
                reps.append(m)
                print(f"{wname} rep {r + 1}: {m['tps']:.0f} tps, backend {m['backend_cpu_us_per_txn']:.1f} us/txn, "
                      f"pgbench {m['pgbench_cpu_us_per_txn']:.1f} us/txn (load {la0} -> {m['loadavg_after']})",
                      flush=True)
            med = {k: sorted(r[k] for r in reps)[len(reps) // 2]
                   for k in ("backend_cpu_us_per_txn", "pgbench_cpu_us_per_txn", "tps")}
            result["workloads"][wname] = {"median": med, "reps": reps}
    finally:
        srv.stop()
        shutil.rmtree(sock, ignore_errors=True)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
