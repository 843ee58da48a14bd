"""The model's parameters: where each comes from.

A point is simulated with
  - a machine: its constants from a machine profile (`make machine-profile`'s
    machine-profile.json, format "flexlock machine profile 1": measured on
    this machine, or named assumptions for the 16-core one), the number of
    cores asked for, and the model's rules for what a profile lacks;
  - the protocol costs the simulator charges itself (Costs), each a named
    assumption below with its range;
  - the workload's calibration: the CPU time the traces do not show, from
    the traces' machine: pgbench's per statement (a 1-client run,
    calibrate.py) and the backend's between transactions (the traces'
    begin lines).

MODEL_VERSION names the model: the code of flexsim and these rules.  A
change of either that moves a prediction is a new version (results keep
the version they were made with).
"""

import json
import math
import os
from pathlib import Path

from .engine import Machine
from .model import Costs

# v4: the machine's oversubscription (refill, the lone client, wake-up
# preemption, the measured slice) from the machine profile; each point
# simulated for ten slices at least (docs/simulator.md, "Model v4")
# v4.1: a calibration keeps every core busy when clients >= cores (v4
# tested clients > 1, wrong for a one-core machine's 1-client calibration;
# DECLARED-v4.1.md)
# v4.2: a lock-manager release posts the waiters it grants under the
# partition lock, as lock.c does (CleanUpLock -> ProcLockWakeup before
# LWLockRelease(partitionLock)); v4.1 posted them after letting it go, so a
# poster preempted by its wakee never held it (DECLARED-v4.2.md)
MODEL_VERSION = "v4.2"

HERE = Path(__file__).resolve().parent
MACHINES = HERE / "machines"

# Named assumptions of the model (not of a machine): value, range, source.
ASSUMPTIONS = {
    "c_pageinit_ns": (1000.0, (500.0, 2000.0),
                      "initialising one 8 kB WAL buffer page (MemSet and header) under WALBufMappingLock; "
                      "a memset of 8 kB at 10-20 GB/s is 0.4-0.8 us, plus the page's lines leaving other caches"),
    "c_write_call_ns": (3000.0, (1500.0, 6000.0),
                        "the write() system call of XLogWrite, beside the pages it copies"),
    "c_write_page_ns": (500.0, (250.0, 1000.0),
                        "copying one 8 kB WAL page into the page cache in write()"),
    "c_member_ns": (100.0, (50.0, 200.0),
                    "a group-clear leader (or a serving holder) clearing one more member's XID: a few stores "
                    "to the member's PGPROC and the dense xids array, each line fetched from the member's core"),
    "c_lockmgr_ns": (500.0, (250.0, 1000.0),
                     "a lock-manager operation under a LockManager partition lock when a row lock makes a "
                     "process wait (XactLockTableWait) or wakes one (ProcLockWakeup)"),
    "slice_ns": (None, None,
                 "the time slice where the profile has not measured it (model v4 takes the profile's slice_ns): "
                 "EEVDF's base slice, 0.75 ms x (1 + log2(min(cores, 8))), the kernel default on both machines "
                 "(Linux 6.18)"),
    "workset_kb": (256.0, (64.0, 256.0),
                   "the working set a backend or pgbench's thread walks between two of its dispatches, which "
                   "selects the profile's oversubscription curve (model v4): a transaction's catalog cache and "
                   "plan, executor state, the buffers it reads and its stack; the profile measures 64 and 256 KiB"),
}

# model v4: a simulated point runs at least this many time slices
MIN_SLICES = 10


class ProfileError(Exception):
    pass


def load_profile(path):
    with open(path) as f:
        d = json.load(f)
    if d.get("format") != "flexlock machine profile 1":
        raise ProfileError(f"{path}: not a flexlock machine profile (format {d.get('format')!r})")
    return d


def const(profile, name, default=None):
    c = (profile.get("constants") or {}).get(name)
    if c is None or c.get("value") is None:
        if default is None:
            raise ProfileError(f"machine profile lacks {name}")
        return default
    v = float(c["value"])
    return v * 1000.0 if c.get("unit") == "us" else v


def slice_ns(cores):
    return 0.75e6 * (1 + int(math.log2(max(1, min(cores, 8)))))


def machine_from_profile(profile, cores=None, scale=None):
    """A Machine for `cores` cores with a profile's constants.  scale: a
    dict of multipliers by constant name (sensitivity runs)."""
    scale = scale or {}
    ncores = cores or int(profile["machine"]["logical_cpus"])
    t_xfer = const(profile, "line_transfer_ns") * scale.get("line_transfer_ns", 1.0)
    t_local = const(profile, "uncontended_cas_ns") * scale.get("uncontended_cas_ns", 1.0)
    t_wake = const(profile, "sem_wake_cross_core_ns") * scale.get("sem_wake_cross_core_ns", 1.0)
    same = const(profile, "sem_wake_same_core_ns") * scale.get("sem_wake_same_core_ns", 1.0)
    speed = const(profile, "cpu_speed_ratio", 1.0) * scale.get("cpu_speed_ratio", 1.0)
    ws = ASSUMPTIONS["workset_kb"][0] * scale.get("workset_kb", 1.0)
    # model v4: the slice as measured, else the kernel's default
    slc = const(profile, "slice_ns", slice_ns(ncores))
    # a post on one CPU and the switch to its waiter: half each to the poster
    # and to the switch (a named assumption: the profile measures their sum)
    return Machine(ncores, t_xfer=t_xfer, t_local=t_local, t_wake=t_wake, c_post=same / 2, c_switch=same / 2,
                   slice_ns=slc * scale.get("slice_ns", 1.0), cpu_scale=1.0 / speed,
                   refill=refill_curve(profile, ws, scale.get("refill", 1.0)),
                   refill_cold=refill_cold(profile, ws),
                   lone_ratio=1.0 + (max(1.0, const(profile, "lone_work_ratio", 1.0)) - 1.0)
                   * scale.get("lone_work_ratio", 1.0),
                   wake_preempt=min(1.0, const(profile, "wake_preempt_share", 0.0)
                                    * scale.get("wake_preempt_share", 1.0)))


def refill_cold(profile, workset_kb):
    """Model v4: a process that last ran on another core finds its working
    set in that core's cache or the shared L3, as in the ring once as many
    other working sets as fill this core's L2 ran in between: that many
    dispatches (None where the profile does not know its L2: the curve's
    last point)."""
    l2 = (profile.get("machine") or {}).get("l2_kib")
    return math.ceil(l2 / workset_kb) if l2 else None


def refill_curve(profile, workset_kb, factor=1.0):
    """Model v4: what a dispatch costs beyond the switch, by how many other
    dispatches its core made since the process last ran there: the
    profile's ring curve at the working set nearest workset_kb, turn(K) -
    turn(2) with K - 1 others in between (K = 1, none: 0; at least 0).
    None for a profile without the curve (measured before 2026-11-28, or
    assumed)."""
    ov = profile.get("oversubscription")
    if not ov or not ov.get("rows"):
        return None
    sizes = sorted({r["workset_kb"] for r in ov["rows"]})
    kb = min(sizes, key=lambda x: (abs(x - workset_kb), x))
    turn = {r["k"]: r["turn_ns"] for r in ov["rows"] if r["workset_kb"] == kb}
    if 2 not in turn:
        return None
    return [(k - 1, max(0.0, (turn[k] - turn[2])) * factor if k > 1 else 0.0) for k in sorted(turn)]


def costs(profile, calib, scale=None):
    """The protocol costs, with a workload's calibration (c_client per
    statement, c_backend per transaction, ns) and the machine's flush time."""
    scale = scale or {}

    def a(name):
        return ASSUMPTIONS[name][0] * scale.get(name, 1.0)
    out = scale.get("outside_cpu", 1.0)
    return Costs(c_pageinit=a("c_pageinit_ns"),
                 c_write_call=a("c_write_call_ns"), c_write_page=a("c_write_page_ns"),
                 t_fsync=const(profile, "wal_flush_us") * scale.get("wal_flush_us", 1.0),
                 t_fsync_page=flush_page_ns(profile) * scale.get("wal_flush_page_us", 1.0),
                 c_member=a("c_member_ns"), c_client=calib["c_client_ns"] * out,
                 c_backend=calib["c_backend_ns"] * out, c_lockmgr=a("c_lockmgr_ns"),
                 trace_scale=calib.get("trace_scale", 1.0) * scale.get("trace_scale", 1.0))


def flush_page_ns(profile):
    """What each 8 kB page after the first adds to a WAL flush (model v2).
    Profiles measured before v2 do not have it: their flushes cost the same
    whatever they write, v1's rule."""
    c = (profile.get("constants") or {}).get("wal_flush_page_us")
    if c is None or c.get("value") is None:
        return 0.0
    return float(c["value"]) * 1000.0


def machine_profile_path(name):
    if str(name).endswith(".json"):
        # a profile file of its own (make predict SCRIPT=: this machine's,
        # measured for the prediction)
        if not Path(name).is_file():
            raise ProfileError(f"no machine profile file {name}")
        return Path(name)
    p = MACHINES / f"{name}.json"
    if not p.exists():
        raise ProfileError(f"no machine profile {name!r} (have: "
                           f"{', '.join(sorted(x.stem for x in MACHINES.glob('*.json')))})")
    return p
