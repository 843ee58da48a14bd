"""pgbench's output and its per-transaction log.

The summary (PostgreSQL 18 wording: 'tps = N (without initial connection
time)') gives tps, latency average and stddev, transactions and failures;
a run whose output lacks it fails loudly.  A run of several scripts (-f
FILE@WEIGHT ...) has a block per script after it ('SQL script 1: FILE'),
whose transactions, tps and failures go under 'scripts', keyed by the
file's base name; new orders per minute (nopm) come from one of them.  Latency percentiles come from
pgbench's per-transaction log (-l) sampled with --sampling-rate, so that
the log stays small (about LATENCY_SAMPLES lines per run); the driver reads
it and deletes it.
"""

import re

from .config import BenchError

TPS_RE = re.compile(r"^tps = ([0-9.]+) \(without initial connection time\)$", re.M)
LAT_AVG_RE = re.compile(r"^latency average = ([0-9.]+) ms", re.M)
LAT_SD_RE = re.compile(r"^latency stddev = ([0-9.]+) ms", re.M)
TXN_RE = re.compile(r"^number of transactions actually processed: (\d+)", re.M)
FAILED_RE = re.compile(r"^number of failed transactions: (\d+)", re.M)
SCRIPT_RE = re.compile(r"^SQL script \d+: (.+)$", re.M)
# PostgreSQL 17 and 18: ' - N transactions (X% of total)' then the tps on
# ' - number of transactions actually processed: N (tps = Y)'; 16 and older
# had both on ' - N transactions (X% of total, tps = Y)'
SCRIPT_TXN_RE = re.compile(r"^ - (\d+) transactions \(([0-9.]+)% of total(?:, tps = ([0-9.]+))?\)$", re.M)
SCRIPT_TPS_RE = re.compile(r"^ - number of transactions actually processed: \d+ \(tps = ([0-9.]+)\)$", re.M)
SCRIPT_FAILED_RE = re.compile(r"^ - number of failed transactions: (\d+)", re.M)
SCRIPT_RETRIED_RE = re.compile(r"^ - number of transactions retried: (\d+)", re.M)
SCRIPT_LAT_RE = re.compile(r"^ - latency average = ([0-9.]+) ms", re.M)

LATENCY_FIELDS = ["latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_samples"]
LATENCY_SAMPLES = 20000


def pgbench_failure(out):
    """What made pgbench fail, from its output: the first error line (a
    client's abort names the server's ERROR, such as a relation that does
    not exist), then the last line ("Run was aborted; ...")."""
    lines = [x.strip() for x in out.strip().splitlines() if x.strip()]
    if not lines:
        return "no output"
    first = next((x for x in lines if "error:" in x or "ERROR:" in x or "FATAL:" in x), None)
    if first is None or first == lines[-1]:
        return lines[-1]
    return f"{first} ... {lines[-1]}"


def parse_pgbench(text):
    """The figures of one pgbench run (PostgreSQL 18 wording).  Raises
    BenchError if the output has no tps line: a run we cannot read must not
    pass silently."""
    m = TPS_RE.search(text)
    if not m:
        raise BenchError("cannot parse pgbench output: no line 'tps = N (without initial connection time)'")
    out = {"tps": float(m.group(1))}
    for key, rx, conv in (("latency_avg_ms", LAT_AVG_RE, float),
                          ("latency_stddev_ms", LAT_SD_RE, float),
                          ("transactions", TXN_RE, int),
                          ("failed", FAILED_RE, int)):
        m = rx.search(text)
        out[key] = conv(m.group(1)) if m else None
    if out["transactions"] is None:
        raise BenchError("cannot parse pgbench output: no 'number of transactions actually processed'")
    scripts = parse_scripts(text)
    if scripts:
        out["scripts"] = scripts
    return out


def parse_scripts(text):
    """{base name: {'transactions', 'percent', 'tps', 'failed', 'retried',
    'latency_avg_ms'}} of the per-script blocks of a multi-script run ({} for
    one script).  Raises BenchError for a block without its transaction
    count."""
    heads = list(SCRIPT_RE.finditer(text))
    out = {}
    for i, h in enumerate(heads):
        block = text[h.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        name = h.group(1).strip().rsplit("/", 1)[-1]
        m = SCRIPT_TXN_RE.search(block)
        if not m:
            raise BenchError(f"cannot parse pgbench output: no transaction count for SQL script {name}")
        tps = m.group(3) or (SCRIPT_TPS_RE.search(block) or [None, None])[1]
        r = {"transactions": int(m.group(1)), "percent": float(m.group(2)),
             "tps": float(tps) if tps else None}
        for key, rx, conv in (("failed", SCRIPT_FAILED_RE, int), ("retried", SCRIPT_RETRIED_RE, int),
                              ("latency_avg_ms", SCRIPT_LAT_RE, float)):
            mm = rx.search(block)
            r[key] = conv(mm.group(1)) if mm else None
        out[name] = r
    return out


def nopm(transactions, duration_s):
    """New orders per minute: the new-order script's transactions over the
    measured seconds, times 60 (rounded to 0.1)."""
    if transactions is None or not duration_s:
        return None
    return round(transactions * 60.0 / duration_s, 1)


def sampling_rate(expected_txns):
    """--sampling-rate for about LATENCY_SAMPLES logged transactions."""
    if not expected_txns or expected_txns <= LATENCY_SAMPLES:
        return 1.0
    return max(0.0001, round(LATENCY_SAMPLES / expected_txns, 4))


def percentile(sorted_vals, p):
    """Nearest-rank percentile (p in 0..100) of a sorted list."""
    if not sorted_vals:
        return None
    k = max(1, -(-len(sorted_vals) * p // 100))
    return sorted_vals[int(min(k, len(sorted_vals))) - 1]


def latency_percentiles(lines):
    """p50/p95/p99 in ms from per-transaction log lines ('client_id
    transaction_no time script_no time_epoch time_us ...', time in
    microseconds; failed or skipped transactions are left out)."""
    lat = []
    for line in lines:
        f = line.split()
        if len(f) >= 3 and f[2].isdigit():
            lat.append(int(f[2]))
    lat.sort()
    if not lat:
        return {"latency_samples": 0}
    return {"latency_p50_ms": round(percentile(lat, 50) / 1000.0, 3),
            "latency_p95_ms": round(percentile(lat, 95) / 1000.0, 3),
            "latency_p99_ms": round(percentile(lat, 99) / 1000.0, 3),
            "latency_samples": len(lat)}
