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
