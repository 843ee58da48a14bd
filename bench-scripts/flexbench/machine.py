"""What the machine is (cores, model, memory, kernel) and what it did
during a run (CPU time by state and context switches, whole machine, from
/proc/stat)."""

import os
import platform
import sys
from pathlib import Path

# CPUS=list (make) / FLEXLOCK_CPUS: confine a command and everything it
# starts (servers, pgbench, the ping-pongs) to these CPUs, as a smaller
# machine (issue 43's blind check (b): one core predicting two)
CPUS_ENV = "FLEXLOCK_CPUS"


class CpuListError(Exception):
    pass


def parse_cpu_list(spec):
    """The CPUs of a list as taskset and cpusets write it ("0", "0,2",
    "0-3,6"), as a sorted list; CpuListError for anything else."""
    cpus = set()
    for part in spec.split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()):
            raise CpuListError(f"CPUS={spec!r}: not a CPU list (write it as taskset does: 0 or 0,2 or 0-3)")
        a, b = int(lo), int(hi) if sep else int(lo)
        if b < a:
            raise CpuListError(f"CPUS={spec!r}: {part} is an empty range")
        cpus.update(range(a, b + 1))
    return sorted(cpus)


def allowed_cpus():
    """The CPUs this process may run on (its affinity), sorted."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def cores():
    """How many CPUs this process and its children may use: the machine's,
    or fewer where CPUS confined them."""
    return len(allowed_cpus())


def confine(spec):
    """Confine this process, and so every process it starts, to the CPUs
    of spec (sched_setaffinity, inherited across fork and exec)."""
    want = parse_cpu_list(spec)
    have = allowed_cpus()
    missing = [c for c in want if c not in have]
    if missing:
        raise CpuListError(f"CPUS={spec}: no CPU {', '.join(map(str, missing))} here "
                           f"(this process may use {', '.join(map(str, have))})")
    os.sched_setaffinity(0, want)
    return want


def confine_from_env(prog):
    """confine() to $FLEXLOCK_CPUS where it is set, before a command starts
    anything: 0, or 2 with the reason printed after prog's name."""
    spec = os.environ.get(CPUS_ENV, "").strip()
    if spec:
        try:
            confine(spec)
        except CpuListError as e:
            print(f"{prog}: {e}", file=sys.stderr)
            return 2
    return 0


def confinement():
    """{confined_to, machine_cpus} where this process may use fewer CPUs
    than the machine has (CPUS), else {}: what a record of the cores adds."""
    if cores() == os.cpu_count():
        return {}
    return {"confined_to": allowed_cpus(), "machine_cpus": os.cpu_count()}


def machine_facts():
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    except OSError:
        pass
    facts = {"cores": cores(), "model": model, "memory_gib": round(mem / 2**30, 1),
            "kernel": platform.release(), "system": platform.system()}
    facts.update(confinement())
    return facts


CPU_FIELDS = ["cpu_user_pct", "cpu_system_pct", "cpu_idle_pct", "cpu_iowait_pct"]


def _proc_stat_fields(key, text=None):
    """The numbers of /proc/stat's line KEY (or of text, its contents), or
    None if it cannot be read or has no such line."""
    if text is None:
        try:
            text = Path("/proc/stat").read_text()
        except OSError:
            return None
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == key:
            return [int(x) for x in f[1:]]
    return None


def cpu_times(text=None):
    """The machine's CPU time by state (the 'cpu' line of /proc/stat, in
    clock ticks): user, nice, system, idle, iowait, irq, softirq, steal."""
    f = _proc_stat_fields("cpu", text)
    if f is None:
        return None
    vals = f[:8]
    return vals + [0] * (8 - len(vals))


def cpu_delta(before, after):
    """Percentages of the machine's CPU time over an interval: user (with
    nice), system (with irq and softirq), idle, iowait and steal.
    Empty if /proc/stat could not be read."""
    if before is None or after is None:
        return {}
    d = [a - b for a, b in zip(after, before)]
    total = sum(d)
    if total <= 0:
        return {}
    user, nice, system, idle, iowait, irq, softirq, steal = d
    pct = lambda x: round(100.0 * x / total, 1)
    return {"cpu_user_pct": pct(user + nice), "cpu_system_pct": pct(system + irq + softirq),
            "cpu_idle_pct": pct(idle), "cpu_iowait_pct": pct(iowait), "cpu_steal_pct": pct(steal)}


def context_switches(text=None):
    """The machine's context switches since boot (the 'ctxt' line of
    /proc/stat), or None."""
    f = _proc_stat_fields("ctxt", text)
    return f[0] if f else None
