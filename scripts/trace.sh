#!/usr/bin/env bash
# scripts/trace.sh — `make trace`: lock traces of workloads with one client
# (bench-scripts/flexbench/trace.py, docs/lock-trace.md).
#
#   WORKLOAD=name[,name]   bench-scripts/workloads/ names
#   VARIANT=name[,name]    variants/ names (each workload with each variant)
#   PAIRS=w:v,w:v          or explicit pairs (a variant may be LABEL(guc=value;...))
#   PAIRS_FILE=file        or a file of "WORKLOAD VARIANT" lines
#                          (bench-scripts/presets/traces-16core.list: every pair of
#                          the 16-core run and the designs never run on many cores)
#   TXNS=N SCALE=N         transactions of the traced run, pgbench scale
#   TRACE_OUT=dir          results directory (default: results/DATE-traces)
#   TRACE_ARGS="..."       more options (--traced 1000 --max-events 400000 --sample 10)
#
# Builds the patched install if it is missing or out of date.

. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

if [ -z "${PAIRS:-}" ] && [ -z "${PAIRS_FILE:-}" ] && { [ -z "${WORKLOAD:-}" ] || [ -z "${VARIANT:-}" ]; }; then
	die "name what to trace: make trace WORKLOAD=select-only VARIANT=stock (comma lists), or PAIRS=w:v,w:v"
fi
args=(trace)
[ -n "${WORKLOAD:-}" ] && args+=(--workload "$WORKLOAD")
[ -n "${VARIANT:-}" ] && args+=(--variant "$VARIANT")
[ -n "${PAIRS:-}" ] && args+=(--pairs "$PAIRS")
[ -n "${PAIRS_FILE:-}" ] && args+=(--pairs-file "$PAIRS_FILE")
[ -n "${TXNS:-}" ] && args+=(--txns "$TXNS")
[ -n "${SCALE:-}" ] && args+=(--scale "$SCALE")
[ -n "${TRACE_OUT:-}" ] && args+=(--out "$TRACE_OUT")
# shellcheck disable=SC2206
args+=(${TRACE_ARGS:-})

# Check the names before building anything.
"$PY" - "$FLEXLOCK_TOP/bench-scripts" "${WORKLOAD:-}" "${VARIANT:-}" "${PAIRS:-}" "${PAIRS_FILE:-}" <<'PY' || exit 1
import sys
sys.path.insert(0, sys.argv[1])
from flexbench import config, trace
try:
    pairs = trace.parse_pairs(sys.argv[4])
    if sys.argv[5]:
        pairs += trace.read_pairs_file(sys.argv[5])
    pairs += [(w, v) for w in config.names(sys.argv[2]) for v in config.names(sys.argv[3])]
    for w, v in pairs:
        config.Workload(w)
        trace.variant_spec(v)
except config.UsageError as e:
    sys.exit(f"flexlock: {e}")
PY
"$FLEXLOCK_TOP/scripts/build.sh" patched
ensure_test_user
mkdir -p "$BUILD/bench"
hand_over "$BUILD/bench"
FLEXLOCK_BUILD=$BUILD exec "$PY" "$FLEXLOCK_TOP/bench-scripts/flexbench.py" "${args[@]}"
