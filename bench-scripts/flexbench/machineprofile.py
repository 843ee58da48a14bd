"""The machine profile: the figures a model of this machine's locks needs,
measured (flexbench.py machine-profile, make machine-profile, and at the
start of a run unless --no-machine-profile).

  line_transfer_ns         one cache line handed from one core to another:
                           two processes pinned to different physical cores
                           pass a counter in one shared line by read-then-
                           compare-and-exchange (pingpong handoff), ns per
                           one-way hand-off
  contended_cas_ns         two cores swapping one line as fast as they can
                           (read, compare-and-exchange, retry), ns per
                           successful swap (pingpong contended)
  contended_faa_ns         the same with fetch-and-add
  uncontended_cas_ns       read and compare-and-exchange of a line no other
                           core touches, one core (pingpong uncontended)
  uncontended_faa_ns       fetch-and-add likewise
  sem_wake_cross_core_ns   a POSIX unnamed semaphore in shared memory
                           (sem_init pshared = 1: PGSemaphore on Linux)
                           posted by a process on one core, ns until the
                           waiter on another core has returned from
                           sem_wait (pingpong sem, one-way)
  sem_wake_same_core_ns    the same with both processes on one CPU: a
                           post, a switch to the waiter
  wal_flush_us             pg_test_fsync of the patched install in the
                           directory where the benchmark's data goes: one 8kB
                           write and fdatasync (Linux's default
                           wal_sync_method), us per operation
  wal_flush_open_datasync_us  the same with open_datasync (O_DSYNC writes)
  wal_flush_two_writes_us  fdatasync after two 8kB writes
  wal_flush_page_us        what one more 8kB page adds to a flush: 1 MB
                           (128 pages) written into a preallocated 16 MB file
                           and fdatasync'd, against one page the same way,
                           (t(1 MB) - t(8 kB)) / 127; a WAL flush after a
                           group of commits writes and syncs many pages
  cpu_speed_ratio          per-core speed against the machine the traces
                           come from (only in assumed profiles)

Each constant is {value, unit, source, range, runs}: the median of the
runs, their minimum and maximum as the range.  The cross-core figures take
a few pairs of CPUs on different physical cores (and an SMT sibling pair,
reported apart), interleaved over the repetitions so that a noisy moment
hits all of them.  The machine section has what the figures depend on:
CPU model, family/model/stepping, cores (logical, physical, sockets, NUMA
nodes), clock, caches, memory, kernel, virtualisation, and the load average
before and after, since a busy machine inflates every figure.

A profile that is not measured but assumed (a machine that recorded none of
this) has the same format with "assumed": true and the reasoning in its
markdown.
"""

import datetime
import json
import os
import platform
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import time
from pathlib import Path

from . import config, machine
from .config import BenchError, UsageError
from .servers import as_user, run_user

FORMAT = "flexlock machine profile 1"
PINGPONG_SRC = config.BENCH / "machine" / "pingpong.c"

# Constants in the order of the markdown table.
CONSTANTS = [
    ("line_transfer_ns", "ns", "cache line hand-off between two cores, one way"),
    ("line_transfer_smt_ns", "ns", "the same between two SMT siblings of one core"),
    ("contended_cas_ns", "ns", "per successful compare-and-exchange, two cores on one line"),
    ("contended_faa_ns", "ns", "per fetch-and-add, two cores on one line"),
    ("uncontended_cas_ns", "ns", "read + compare-and-exchange, line in this core's cache"),
    ("uncontended_faa_ns", "ns", "fetch-and-add, line in this core's cache"),
    ("sem_wake_cross_core_ns", "ns", "semaphore post to the waiter running, other core"),
    ("sem_wake_same_core_ns", "ns", "semaphore post to the waiter running, same CPU"),
    ("wal_flush_us", "us", "8kB write + fdatasync (pg_test_fsync)"),
    ("wal_flush_open_datasync_us", "us", "8kB write with O_DSYNC (pg_test_fsync)"),
    ("wal_flush_two_writes_us", "us", "two 8kB writes + fdatasync (pg_test_fsync)"),
    ("wal_flush_page_us", "us", "one more 8kB page in a flush: (1 MB write + fdatasync - 8kB) / 127"),
    ("cpu_speed_ratio", "ratio", "per-core CPU speed against the development machine (assumed profiles only)"),
    ("slice_ns", "ns", "time slice: median run of a CPU-bound process between deschedulings, 2 on one CPU"),
    ("lone_work_ratio", "ratio", "a working-set walk right after a wake-up on an otherwise idle machine, over "
                                 "the same walk in a busy process (the lone client's regime)"),
    ("wake_preempt_share", "ratio", "share of semaphore posts to a sleeper on the poster's own CPU after which "
                                    "the poster loses the CPU within 200 us (wake-up preemption)"),
]

# the oversubscription curve (issue 43): K processes on one CPU taking turns
# through semaphores, each walking its own working set per turn
RING_K = [1, 2, 4, 8, 16, 32, 64]
RING_WORKSET_KB = [64, 256]
RING_TURNS = 16000
LONE_WORKSET_KB = 256


def pingpong_path():
    return config.BUILD / "machine" / "pingpong"


def build_pingpong(static=False, out=None):
    """Compile pingpong.c with the system's gcc into BUILD/machine/ (or out)."""
    gcc = shutil.which("gcc")
    if not gcc:
        raise UsageError("gcc is missing; it compiles bench-scripts/machine/pingpong.c ('make deps')")
    out = Path(out) if out else pingpong_path()
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [gcc, "-O2", "-Wall", "-o", str(out), str(PINGPONG_SRC)] + (["-static"] if static else [])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise BenchError(f"compiling {PINGPONG_SRC} failed: {p.stdout.strip()}")
    return out


def read(path):
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_topology():
    """{cpu: (package, core)} from sysfs, for the online CPUs."""
    topo = {}
    for d in sorted(Path("/sys/devices/system/cpu").glob("cpu[0-9]*")):
        cpu = int(d.name[3:])
        if read(d / "online") == "0":
            continue
        pkg = read(d / "topology" / "physical_package_id")
        core = read(d / "topology" / "core_id")
        if pkg is None or core is None:
            continue
        topo[cpu] = (int(pkg), int(core))
    try:
        allowed = os.sched_getaffinity(0)
        topo = {c: v for c, v in topo.items() if c in allowed}
    except (AttributeError, OSError):
        pass
    return topo


def cpu_pairs(topo, most=3):
    """(first CPU, [CPUs of other physical cores], SMT sibling or None):
    partners spread over the machine (the next core, the middle, the last)."""
    if not topo:
        n = os.cpu_count() or 1
        topo = {c: (0, c) for c in range(n)}
    cpus = sorted(topo)
    a = cpus[0]
    others = [c for c in cpus if topo[c] != topo[a]]
    # one CPU per other physical core
    seen, per_core = set(), []
    for c in others:
        if topo[c] not in seen:
            seen.add(topo[c])
            per_core.append(c)
    picks = []
    for idx in (0, len(per_core) // 2, len(per_core) - 1):
        if per_core and per_core[idx] not in picks:
            picks.append(per_core[idx])
    sibling = next((c for c in cpus if c != a and topo[c] == topo[a]), None)
    return a, picks[:most], sibling


def cpuinfo():
    info = {}
    text = read("/proc/cpuinfo") or ""
    first = text.split("\n\n", 1)[0]
    for line in first.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            info[k.strip()] = v.strip()
    mhz = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([0-9.]+)", text, re.M)]
    return info, mhz


def lscpu():
    try:
        p = subprocess.run(["lscpu"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           env=dict(os.environ, LC_ALL="C"), timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    out = {}
    for line in p.stdout.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def detect_virt(flags, ls):
    """Whether this is a virtual machine, by the CPU's hypervisor flag,
    lscpu's hypervisor vendor and systemd-detect-virt."""
    vm = "hypervisor" in flags
    hyper = ls.get("Hypervisor vendor")
    container = None
    if shutil.which("systemd-detect-virt"):
        for opt, key in (("--vm", "vm"), ("--container", "container")):
            p = subprocess.run(["systemd-detect-virt", opt], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
            v = p.stdout.strip()
            if p.returncode == 0 and v and v != "none":
                if key == "vm":
                    vm = True
                    hyper = hyper or v
                else:
                    container = v
    return vm, hyper, container


def cache_sizes():
    """{level: KiB} of CPU 0's unified or data caches (sysfs)."""
    out = {}
    for d in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        level, kind, size = read(d / "level"), read(d / "type"), read(d / "size")
        if not (level and size) or kind == "Instruction":
            continue
        m = re.match(r"(\d+)([KMG]?)", size)
        if m:
            kib = int(m.group(1)) * {"": 1 / 1024, "K": 1, "M": 1024, "G": 1024 * 1024}[m.group(2)]
            out[f"l{level}"] = kib
    return out


def machine_section():
    info, mhz = cpuinfo()
    ls = lscpu()
    flags = set(info.get("flags", "").split())
    topo = cpu_topology()
    vm, hyper, container = detect_virt(flags, ls)
    mem = 0
    for line in (read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    caches = cache_sizes()
    max_mhz = read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    numa = len(list(Path("/sys/devices/system/node").glob("node[0-9]*"))) or None
    clock = None
    clock_source = None
    if max_mhz:
        clock, clock_source = round(int(max_mhz) / 1000.0), "cpufreq cpuinfo_max_freq"
    elif ls.get("CPU max MHz"):
        clock, clock_source = round(float(ls["CPU max MHz"])), "lscpu CPU max MHz"
    elif mhz:
        clock, clock_source = round(statistics.median(mhz)), "/proc/cpuinfo cpu MHz (median of the CPUs)"
    sec = {
        "hostname": socket.gethostname(),
        "cpu_model": info.get("model name", ""),
        "vendor": info.get("vendor_id"),
        "family": int(info["cpu family"]) if info.get("cpu family", "").isdigit() else None,
        "model": int(info["model"]) if info.get("model", "").isdigit() else None,
        "stepping": int(info["stepping"]) if info.get("stepping", "").isdigit() else None,
        # the CPUs the profile's processes may use (CPUS confines them: a
        # smaller machine); confined_to and machine_cpus say so
        "logical_cpus": machine.cores(),
        "physical_cores": len(set(topo.values())) or None,
        "sockets": len({p for p, _ in topo.values()}) or None,
        "threads_per_core": int(ls["Thread(s) per core"]) if ls.get("Thread(s) per core", "").isdigit() else None,
        "numa_nodes": numa,
        "clock_mhz": clock,
        "clock_source": clock_source,
        "cpu_mhz_now": round(statistics.median(mhz)) if mhz else None,
        "l2_kib": caches.get("l2"),
        "l3_kib": caches.get("l3"),
        "memory_gib": round(mem / 2**30, 1),
        "kernel": platform.release(),
        "system": platform.system(),
        "arch": platform.machine(),
        "vm": vm,
        "hypervisor": hyper,
        "container": container,
    }
    sec.update(machine.confinement())
    return sec


def loadavg():
    t = read("/proc/loadavg")
    return [float(x) for x in t.split()[:3]] if t else None


def run_pingpong(binary, args, log):
    cmd = [str(binary)] + [str(a) for a in args]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    with open(log, "a") as f:
        f.write(f"$ {shlex.join(cmd)}\n{p.stdout}")
    if p.returncode != 0:
        raise BenchError(f"{shlex.join(cmd)} failed (exit {p.returncode}): {p.stdout.strip()}")
    return dict(kv.split("=", 1) for kv in p.stdout.split() if "=" in kv)


FSYNC_LINE = re.compile(r"^\s+(.+?)\s+([0-9.]+) ops/sec\s+([0-9]+) usecs/op\s*$")
FSYNC_SECTIONS = [("one_8kb", "Compare file sync methods using one 8kB write"),
                  ("two_8kb", "Compare file sync methods using two 8kB writes"),
                  ("open_sync_sizes", "Compare open_sync with different write sizes"),
                  ("non_write_fd", "Test if fsync on non-write file descriptor is honored"),
                  ("non_synced", "Non-sync'ed 8kB writes")]


def parse_pg_test_fsync(text):
    """{section: {method: usecs per op}} of pg_test_fsync's output."""
    out = {}
    section = None
    for line in text.splitlines():
        for key, head in FSYNC_SECTIONS:
            if line.startswith(head):
                section = key
                out[key] = {}
        m = FSYNC_LINE.match(line)
        if m and section:
            out[section][re.sub(r"\s+", " ", m.group(1).strip())] = float(m.group(3))
    if not out.get("one_8kb", {}).get("fdatasync"):
        raise BenchError("cannot parse pg_test_fsync's output: no fdatasync figure for one 8kB write")
    return out


def find_pg_test_fsync():
    """(build, path) of pg_test_fsync: the patched install's, else
    cassert's or vanilla's (the program is the same in all three)."""
    for b in ("patched", "cassert", "vanilla"):
        binary = config.install_dir(b) / "bin" / "pg_test_fsync"
        if binary.is_file():
            return b, binary
    raise UsageError(f"no install has pg_test_fsync ({config.install_dir('patched')}/bin): "
                     "run 'make patched' first")


def pg_test_fsync(datadir, secs, log):
    """pg_test_fsync on a file in datadir, as the servers' user;
    (build, {section: {method: us}})."""
    b, binary = find_pg_test_fsync()
    datadir.mkdir(parents=True, exist_ok=True)
    if run_user():
        shutil.chown(datadir, run_user())
    target = datadir / "pg_test_fsync.out"
    cmd = as_user([str(binary), "-f", str(target), "-s", str(secs)])
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=3600)
    with open(log, "a") as f:
        f.write(f"$ {shlex.join(cmd)}\n{p.stdout}")
    if target.exists():
        target.unlink()
    if p.returncode != 0:
        raise BenchError(f"pg_test_fsync failed (exit {p.returncode}): {p.stdout.strip().splitlines()[-1:]}")
    return b, parse_pg_test_fsync(p.stdout)


FLUSH_FILE_PAGES = 2048            # 16 MB, a WAL segment
FLUSH_BIG_PAGES = 128              # 1 MB


def flush_sizes(datadir, secs, log):
    """({pages: [us per write + fdatasync]}) for one page and 1 MB written at
    the next position of a preallocated, synced 16 MB file in datadir, as a
    WAL segment is, alternating the two sizes for about secs seconds each."""
    datadir.mkdir(parents=True, exist_ok=True)
    fn = datadir / "flexbench_flush.tmp"
    page = b"\x5a" * 8192
    fd = os.open(fn, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        zero = b"\0" * (8192 * 128)
        for i in range(FLUSH_FILE_PAGES // 128):
            os.pwrite(fd, zero, i * len(zero))
        os.fsync(fd)
        times = {1: [], FLUSH_BIG_PAGES: []}
        pos = 0
        deadline = time.monotonic() + 2 * secs
        while time.monotonic() < deadline or min(len(v) for v in times.values()) < 5:
            for n in (1, FLUSH_BIG_PAGES):
                if pos + n > FLUSH_FILE_PAGES:
                    pos = 0
                buf = page * n
                t0 = time.perf_counter()
                os.pwrite(fd, buf, pos * 8192)
                os.fdatasync(fd)
                times[n].append((time.perf_counter() - t0) * 1e6)
                pos += n
            if min(len(v) for v in times.values()) >= 2000:
                break
    finally:
        os.close(fd)
        fn.unlink(missing_ok=True)
    with open(log, "a") as f:
        for n, v in times.items():
            f.write(f"{n} page(s): {len(v)} writes + fdatasync, median {statistics.median(v):.1f} us, "
                    f"min {min(v):.1f}, max {max(v):.1f}\n")
    return times


def constant(runs, unit, source):
    nd = 4 if unit == "ratio" else 2
    runs = [round(float(r), nd) for r in runs if r is not None]
    if not runs:
        return None
    return {"value": round(statistics.median(runs), nd), "unit": unit, "source": source,
            "range": [min(runs), max(runs)], "runs": runs}


def measure(out, reps=7, fsync_secs=2, datadir=None, binary=None, progress=print):
    """Measure this machine; write out/machine-profile.json, .md and raw/.
    Returns the profile."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "raw"
    raw.mkdir(exist_ok=True)
    binary = Path(binary) if binary else pingpong_path()
    if not binary.is_file():
        if PINGPONG_SRC.is_file() and shutil.which("gcc"):
            try:
                binary = build_pingpong()
            except PermissionError:
                # another user's build tree (make check's suites run as the
                # servers' user): compiled beside the profile instead
                binary = build_pingpong(out=raw / "pingpong")
        else:
            raise UsageError(f"{binary} is missing ('make machine-profile' builds it; a bundle carries it)")
    datadir = Path(datadir) if datadir else config.BUILD / "bench" / "machine-profile"
    find_pg_test_fsync()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    load0 = loadavg()
    machine = machine_section()
    topo = cpu_topology()
    a, partners, sibling = cpu_pairs(topo)
    log = raw / "pingpong.txt"
    log.write_text("")
    r = {k: [] for k, _, _ in CONSTANTS}
    progress(f"flexbench: machine profile: {machine['cpu_model'] or 'CPU'}, {machine['logical_cpus']} CPUs; "
             f"{reps} repetitions of the ping-pongs (CPU {a} with {partners or 'no other core'}"
             + (f", SMT sibling {sibling}" if sibling is not None else "") + f"), then pg_test_fsync -s {fsync_secs}"
             + f" in {datadir}; load average {load0}", flush=True)
    for rep in range(reps):
        for b in partners:
            r["line_transfer_ns"].append(float(run_pingpong(binary, ["handoff", a, b, 20000], log)["ns"]))
        if sibling is not None:
            r["line_transfer_smt_ns"].append(float(run_pingpong(binary, ["handoff", a, sibling, 20000], log)["ns"]))
        if partners:
            c = run_pingpong(binary, ["contended", a, partners[0], 100], log)
            r["contended_cas_ns"].append(float(c["cas_ns"]))
            r["contended_faa_ns"].append(float(c["faa_ns"]))
        u = run_pingpong(binary, ["uncontended", a, 2000000], log)
        r["uncontended_cas_ns"].append(float(u["cas_ns"]))
        r["uncontended_faa_ns"].append(float(u["faa_ns"]))
        for b in partners:
            r["sem_wake_cross_core_ns"].append(float(run_pingpong(binary, ["sem", a, b, 2000], log)["ns"]))
        r["sem_wake_same_core_ns"].append(float(run_pingpong(binary, ["sem", a, a, 2000], log)["ns"]))
    ring = {(kb, k): [] for kb in RING_WORKSET_KB for k in RING_K}
    ring_work = {(kb, k): [] for kb in RING_WORKSET_KB for k in RING_K}
    for rep in range(reps):
        for kb in RING_WORKSET_KB:
            for k in RING_K:
                g = run_pingpong(binary, ["ring", a, k, kb, max(50, RING_TURNS // k)], log)
                ring[(kb, k)].append(float(g["ns"]))
                ring_work[(kb, k)].append(float(g["work_ns"]))
        r["slice_ns"].append(float(run_pingpong(binary, ["slice", a, 2, 500], log)["slice_ns"]))
        r["wake_preempt_share"].append(float(run_pingpong(binary, ["wakepreempt", a, 500], log)["share"]))
        if partners:
            ln = run_pingpong(binary, ["lone", a, partners[0], LONE_WORKSET_KB, 2000], log)
            r["lone_work_ratio"].append(float(ln["wake_work_ns"]) / float(ln["hot_work_ns"]))
    fs_build, fs = pg_test_fsync(datadir, fsync_secs, raw / "pg_test_fsync.txt")
    sizes = flush_sizes(datadir, fsync_secs, raw / "flush_sizes.txt")
    one, two = fs.get("one_8kb", {}), fs.get("two_8kb", {})
    load1 = loadavg()

    pp = f"bench-scripts/machine/pingpong.c, {reps} runs"
    src = {
        "line_transfer_ns": f"{pp} x {len(partners)} CPU pairs of different physical cores "
                            f"({', '.join(f'{a}-{b}' for b in partners)}): pingpong handoff, 20000 round trips",
        "line_transfer_smt_ns": f"{pp}: pingpong handoff {a}-{sibling}" if sibling is not None else None,
        "contended_cas_ns": f"{pp}: pingpong contended {a}-{partners[0]}, 100 ms" if partners else None,
        "contended_faa_ns": f"{pp}: pingpong contended {a}-{partners[0]}, 100 ms" if partners else None,
        "uncontended_cas_ns": f"{pp}: pingpong uncontended {a}, 2000000 iterations",
        "uncontended_faa_ns": f"{pp}: pingpong uncontended {a}, 2000000 iterations",
        "sem_wake_cross_core_ns": f"{pp} x {len(partners)} CPU pairs: pingpong sem, 2000 round trips",
        "sem_wake_same_core_ns": f"{pp}: pingpong sem {a}-{a}, 2000 round trips",
        "slice_ns": f"{pp}: pingpong slice {a} 2 500 (runs between gaps of more than 20 us, median)",
        "wake_preempt_share": f"{pp}: pingpong wakepreempt {a} 500",
        "lone_work_ratio": f"{pp}: pingpong lone {a}-{partners[0]} {LONE_WORKSET_KB} 2000, wake_work_ns / "
                           "hot_work_ns" if partners else None,
    }
    fs_src = f"pg_test_fsync -s {fsync_secs} of the {fs_build} install on {datadir}"
    consts = {}
    for key, unit, _ in CONSTANTS:
        if key.startswith("wal_") or key not in src:
            continue
        consts[key] = constant(r[key], unit, src[key]) if src.get(key) else None
    for key, val, what in (("wal_flush_us", one.get("fdatasync"), "one 8kB write, fdatasync"),
                           ("wal_flush_open_datasync_us", one.get("open_datasync"), "one 8kB write, open_datasync"),
                           ("wal_flush_two_writes_us", two.get("fdatasync"), "two 8kB writes, fdatasync")):
        consts[key] = constant([val], "us", f"{fs_src}: {what}") if val else None
    # per page: the medians' difference, and as range the same from the
    # quartiles (each size's lower against the other's upper quartile)
    q1 = statistics.quantiles(sizes[1], n=4)
    qb = statistics.quantiles(sizes[FLUSH_BIG_PAGES], n=4)
    k = FLUSH_BIG_PAGES - 1
    per = (statistics.median(sizes[FLUSH_BIG_PAGES]) - statistics.median(sizes[1])) / k
    consts["wal_flush_page_us"] = {
        "value": round(max(0.0, per), 3), "unit": "us",
        "source": f"flexbench machine profile in {datadir}: {len(sizes[1])} writes of 8 kB and "
                  f"{len(sizes[FLUSH_BIG_PAGES])} of 1 MB, each + fdatasync, into a preallocated 16 MB file: "
                  f"medians {statistics.median(sizes[1]):.1f} and {statistics.median(sizes[FLUSH_BIG_PAGES]):.1f} us; "
                  f"(1 MB - 8 kB) / {k}",
        "range": [round(max(0.0, (qb[0] - q1[2]) / k), 3), round(max(0.0, (qb[2] - q1[0]) / k), 3)],
        "runs": [round(statistics.median(sizes[1]), 1), round(statistics.median(sizes[FLUSH_BIG_PAGES]), 1)]}
    prof = {
        "format": FORMAT,
        "assumed": False,
        "measured_at": started,
        "machine": machine,
        "constants": consts,
        "conditions": {"loadavg_before": load0, "loadavg_after": load1, "reps": reps,
                       "cpu_first": a, "cpu_partners": partners, "cpu_smt_sibling": sibling},
        "pg_test_fsync": fs,
        "oversubscription": {
            "source": f"{pp}: pingpong ring {a} K WORKSET_KB max(50, {RING_TURNS} / K) iterations",
            "cpu": a,
            "rows": [{"workset_kb": kb, "k": k, "turn_ns": round(statistics.median(ring[(kb, k)]), 1),
                      "turn_ns_range": [round(min(ring[(kb, k)]), 1), round(max(ring[(kb, k)]), 1)],
                      "work_ns": round(statistics.median(ring_work[(kb, k)]), 1)}
                     for kb in RING_WORKSET_KB for k in RING_K]},
    }
    write(out, prof)
    return prof


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
    return str(v)


def markdown(prof, reasoning=None):
    m = prof["machine"]
    head = "assumed, not measured" if prof.get("assumed") else f"measured {prof.get('measured_at', '')}"
    if prof.get("assumed_constants"):
        head += f"; {len(prof['assumed_constants'])} constants assumed: {', '.join(prof['assumed_constants'])}"
    if m.get("confined_to"):
        head += f"; confined to CPU {','.join(map(str, m['confined_to']))} of {m.get('machine_cpus')}"
    lines = [f"# Machine profile: {m.get('hostname') or m.get('cpu_model')} ({head})", ""]
    facts = [
        ("CPU", f"{m.get('cpu_model') or '-'} (vendor {fmt(m.get('vendor'))}, family {fmt(m.get('family'))}, "
                f"model {fmt(m.get('model'))}, stepping {fmt(m.get('stepping'))})"),
        ("cores", f"{fmt(m.get('logical_cpus'))} logical, {fmt(m.get('physical_cores'))} physical, "
                  f"{fmt(m.get('sockets'))} socket(s), {fmt(m.get('numa_nodes'))} NUMA node(s), "
                  f"{fmt(m.get('threads_per_core'))} thread(s) per core"),
        ("clock", f"{fmt(m.get('clock_mhz'))} MHz ({m.get('clock_source') or '-'})"),
        ("caches", f"L2 {fmt(m.get('l2_kib'))} KiB, L3 {fmt(m.get('l3_kib'))} KiB"),
        ("memory", f"{fmt(m.get('memory_gib'))} GiB"),
        ("kernel", f"{m.get('system') or ''} {m.get('kernel') or '-'} {m.get('arch') or ''}".strip()),
        ("virtualisation", ("VM" + (f" ({m['hypervisor']})" if m.get("hypervisor") else "")
                            if m.get("vm") else ("no" if m.get("vm") is False else "unknown"))
                           + (f", container {m['container']}" if m.get("container") else "")),
    ]
    lines += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts] + [""]
    c = prof.get("conditions", {})
    if c.get("loadavg_before") is not None:
        lines += [f"Load average before {c['loadavg_before']} and after {c.get('loadavg_after')}: "
                  "figures taken on a busy machine are too high (a spinning partner loses its CPU).", ""]
    lines += ["| constant | value | range | unit | what | source |", "|---|---:|---|---|---|---|"]
    for key, unit, what in CONSTANTS:
        v = prof["constants"].get(key)
        if v is None:
            lines.append(f"| `{key}` | - | | {unit} | {what} | not measured here |")
            continue
        rng = v.get("range")
        lines.append(f"| `{key}` | {fmt(v['value'])} | {fmt(rng[0])} - {fmt(rng[1])} | {v['unit']} | {what} | "
                     f"{v['source']} |")
    lines.append("")
    ov = prof.get("oversubscription")
    if ov:
        lines += ["K processes on one CPU taking turns (each turn: a semaphore wake-up, the switch, a walk "
                  "of the process's working set), per turn: the whole turn and the walk alone (ns). "
                  "The walk grows as the K working sets evict each other; the turn's growth beyond K = 2 is "
                  "what oversubscription costs per switch.", "",
                  "| working set | K | turn ns (range) | walk ns |", "|---:|---:|---|---:|"]
        for row in ov["rows"]:
            rng = row["turn_ns_range"]
            lines.append(f"| {row['workset_kb']} KiB | {row['k']} | {fmt(row['turn_ns'])} ({fmt(rng[0])} - "
                         f"{fmt(rng[1])}) | {fmt(row['work_ns'])} |")
        lines += ["", f"Source: {ov['source']}.", ""]
    fs = prof.get("pg_test_fsync")
    if fs:
        lines += ["pg_test_fsync, us per operation:", ""]
        for sec, d in fs.items():
            lines.append(f"- {sec}: " + ", ".join(f"{k} {fmt(v)}" for k, v in d.items()))
        lines.append("")
    if reasoning:
        lines += [reasoning.rstrip(), ""]
    lines += ["The format: `bench-scripts/flexbench/machineprofile.py` and docs/benchmark.md (make machine-profile).", ""]
    return "\n".join(lines)


def complete(prof, assumptions, origin=None):
    """A measured profile completed with named assumptions for the
    constants it could not measure (a profile taken with CPUS confining it
    to one CPU has no cross-core figures): assumptions is
    {"constants": {name: {"value", "unit", "range": [lo, hi], "source"}}},
    "oversubscription": {"rows", "source"} for a ring curve not measured,
    and "machine": {field: {"value", "source"}} for a fact the profile lacks
    (None there: an assumed profile's L2, say).
    An assumption never replaces a measured figure.  The result lists
    them in "assumed_constants"; each keeps "assumed": true."""
    known = {k: unit for k, unit, _ in CONSTANTS}
    out = json.loads(json.dumps(prof))
    consts = out.setdefault("constants", {})
    names = []
    for name, a in sorted((assumptions.get("constants") or {}).items()):
        if name not in known:
            raise UsageError(f"assumption {name!r}: not a constant of a machine profile "
                             f"(have: {', '.join(known)})")
        if (consts.get(name) or {}).get("value") is not None:
            raise UsageError(f"assumption {name!r}: the profile measured it ({consts[name]['value']} "
                             f"{consts[name]['unit']}); an assumption does not replace a measurement")
        missing = [k for k in ("value", "range", "source") if a.get(k) in (None, "")]
        if missing:
            raise UsageError(f"assumption {name!r} lacks {', '.join(missing)} (a named assumption has a value, "
                             "a range and its reasons)")
        lo, hi = (float(x) for x in a["range"])
        v = float(a["value"])
        if not lo <= v <= hi:
            raise UsageError(f"assumption {name!r}: {v} lies outside its range {lo}-{hi}")
        unit = a.get("unit", known[name])
        if unit != known[name]:
            raise UsageError(f"assumption {name!r}: unit {unit!r}, a profile keeps it in {known[name]!r}")
        consts[name] = {"value": v, "unit": unit, "range": [lo, hi],
                        "source": "a named assumption: " + a["source"], "assumed": True}
        names.append(name)
    for field, a in sorted((assumptions.get("machine") or {}).items()):
        mach = out.setdefault("machine", {})
        if field not in mach:
            raise UsageError(f"assumption machine.{field}: not a fact of a machine profile "
                             f"(have: {', '.join(mach)})")
        if mach[field] is not None:
            raise UsageError(f"assumption machine.{field}: the profile has it ({mach[field]}); an assumption "
                             "does not replace a fact")
        if a.get("value") is None or not a.get("source"):
            raise UsageError(f"assumption machine.{field} lacks a value or its source")
        mach[field] = a["value"]
        out.setdefault("machine_assumed", {})[field] = "a named assumption: " + a["source"]
        names.append(f"machine.{field}")
    ov = assumptions.get("oversubscription")
    if ov:
        if out.get("oversubscription"):
            raise UsageError("assumption 'oversubscription': the profile measured the curve; an assumption "
                             "does not replace a measurement")
        if not ov.get("rows") or not ov.get("source"):
            raise UsageError("assumption 'oversubscription' lacks rows or source (the ring curve's rows "
                             "and the reasons they stand for this machine)")
        out["oversubscription"] = {"rows": ov["rows"], "source": "a named assumption: " + ov["source"],
                                   "assumed": True}
        names.append("oversubscription")
    out["assumed_constants"] = names
    if origin:
        out.setdefault("conditions", {})["assumptions"] = str(origin)
    return out


def write(out, prof, reasoning=None):
    out = Path(out)
    (out / "machine-profile.json").write_text(json.dumps(prof, indent=1) + "\n")
    (out / "machine-profile.md").write_text(markdown(prof, reasoning))


def default_out():
    stamp = datetime.date.today().isoformat()
    host = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname()) or "host"
    return config.RESULTS / f"{stamp}-machine-{host}"


def summary_line(prof):
    c = prof["constants"]

    def g(k):
        v = c.get(k)
        return fmt(v["value"]) if v else "-"
    return (f"line transfer {g('line_transfer_ns')} ns, uncontended CAS {g('uncontended_cas_ns')} ns, "
            f"semaphore wake {g('sem_wake_cross_core_ns')} ns (other core) / {g('sem_wake_same_core_ns')} ns "
            f"(same CPU), WAL flush {g('wal_flush_us')} us (fdatasync) / {g('wal_flush_open_datasync_us')} us "
            f"(open_datasync)")
