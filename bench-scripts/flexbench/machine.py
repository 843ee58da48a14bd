"""What the machine is (cores, model, memory, kernel) and what it did
during a run (CPU time by state and context switches, whole machine, from
/proc/stat)."""

import os
import platform
from pathlib import Path


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
    return {"cores": os.cpu_count(), "model": model, "memory_gib": round(mem / 2**30, 1),
            "kernel": platform.release(), "system": platform.system()}


CPU_FIELDS = ["cpu_user_pct", "cpu_system_pct", "cpu_idle_pct", "cpu_iowait_pct"]


def cpu_times(text=None):
    """The machine's CPU time by state (the 'cpu' line of /proc/stat, in
    clock ticks): user, nice, system, idle, iowait, irq, softirq, steal."""
    if text is None:
        try:
            text = Path("/proc/stat").read_text()
        except OSError:
            return None
    for line in text.splitlines():
        f = line.split()
        if f and f[0] == "cpu":
            vals = [int(x) for x in f[1:9]]
            return vals + [0] * (8 - len(vals))
    return None


def cpu_delta(before, after):
    """Percentages of the machine's CPU time over an interval: user (with
    nice), system (with irq and softirq), idle, iowait; steal is the rest.
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
    if text is None:
        try:
            text = Path("/proc/stat").read_text()
        except OSError:
            return None
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "ctxt":
            return int(f[1])
    return None
