#!/usr/bin/env bash
# scripts/bench.sh — `make bench`: build what is missing, run a preset of the
# benchmark matrix (flexlock-lab bench run, bench-scripts/flexbench/), print the summary and plots.
#
#   PRESET=quick|default|full|seed-000|...   (bench-scripts/presets/)
#   BENCH_ARGS="--clients 1,8 --reps 5"      more flexbench options
#   BUILDS="patched mine"                    the builds compared (default: the
#                                            preset's, else vanilla patched); a
#                                            build of yours (make build) with the
#                                            build it was laid on
#   BENCH_OUT=dir                            run directory (default: a new
#                                            one under results/)

. "$(dirname "$0")/lib.sh"

PRESET=${PRESET:-default}

# Check the options before building anything.
# shellcheck disable=SC2086
"${FLEXLAB[@]}" bench list >/dev/null ||
	die "the benchmark driver does not run: is python3-matplotlib installed ('make deps')?"
[ -f "$FLEXLOCK_TOP/bench-scripts/presets/$PRESET.conf" ] ||
	die "unknown preset '$PRESET' (known: $(cd "$FLEXLOCK_TOP/bench-scripts/presets" && ls -- *.conf | sed 's/\.conf$//' | tr '\n' ' '))"

# ours are built when missing or out of date; a build of yours is checked
# by the driver (make build makes it)
ours=()
BUILDS=${BUILDS:-vanilla patched}
for b in ${BUILDS//,/ }; do
	case $b in vanilla | patched | cassert) ours+=("$b") ;; esac
done
if [ "${1:-}" = lwlock ]; then
	"$FLEXLOCK_TOP/scripts/build.sh" patched
elif [ ${#ours[@]} -gt 0 ]; then
	"$FLEXLOCK_TOP/scripts/build.sh" "${ours[@]}"
fi
ensure_test_user
mkdir -p "$BUILD/bench"
hand_over "$BUILD/bench"

# `make lwbench`: the LWLock micro-benchmark (LWBENCH_ARGS, BENCH_OUT)
if [ "${1:-}" = lwlock ]; then
	args=(bench lwlock)
	[ -n "${BENCH_OUT:-}" ] && args+=(--out "$BENCH_OUT")
	# shellcheck disable=SC2206
	args+=(${LWBENCH_ARGS:-})
	exec "${FLEXLAB[@]}" "${args[@]}"
fi

args=(bench run --preset "$PRESET")
[ "$BUILDS" != "vanilla patched" ] && args+=(--builds "$BUILDS")
[ -n "${BENCH_OUT:-}" ] && args+=(--out "$BENCH_OUT")
# shellcheck disable=SC2206
args+=(${BENCH_ARGS:-})
exec "${FLEXLAB[@]}" "${args[@]}"
