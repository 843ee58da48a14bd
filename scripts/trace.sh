#!/usr/bin/env bash
# scripts/trace.sh — `make trace`: lock traces of workloads with one client
# (flexlock-lab trace: bench-scripts/flexbench/trace.py, docs/lock-trace.md).
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
#   BUILD=name             (make's command line) the build traced: patched (default),
#                          cassert, or one of yours laid on patched (make build);
#                          yours go to results/DATE-traces-NAME by default
#
# Builds the patched (or cassert) install if it is missing or out of date.

. "$(dirname "$0")/lib.sh"

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
build=${FLEXLOCK_USE_BUILD:-patched}
args+=(--build "$build")
# shellcheck disable=SC2206
args+=(${TRACE_ARGS:-})

# Check the names before building anything.
"${FLEXLAB[@]}" "${args[@]}" --names-only || exit 1
case $build in patched | cassert) "$FLEXLOCK_TOP/scripts/build.sh" "$build" ;; esac
ensure_test_user
mkdir -p "$BUILD/bench"
hand_over "$BUILD/bench"
FLEXLOCK_BUILD=$BUILD exec "${FLEXLAB[@]}" "${args[@]}"
