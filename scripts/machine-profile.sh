#!/usr/bin/env bash
# scripts/machine-profile.sh — `make machine-profile`: measure the figures a
# model of this machine's locks needs (flexlock-lab profile, bench-scripts/flexbench/machineprofile.py):
# cache-line transfer between cores and atomic operations on one core, the
# wake-up of a process sleeping on a POSIX semaphore (PGSemaphore), the WAL
# device's flush time (pg_test_fsync of the patched install, in build/bench/,
# where the benchmark's data goes), cores, CPU model, clock, kernel, VM.
#
#   MACHINE_PROFILE_OUT=dir   where machine-profile.json and .md go (default:
#                             results/DATE-machine-HOST/)
#   MACHINE_PROFILE_ARGS="--reps 9 --fsync-seconds 5"   more options
#
# Compiles bench-scripts/machine/pingpong.c with the system's gcc into
# build/machine/pingpong and builds the patched install if it is missing.

. "$(dirname "$0")/lib.sh"

command -v gcc >/dev/null 2>&1 || die "gcc is missing; it compiles bench-scripts/machine/pingpong.c ('make deps')"

"$FLEXLOCK_TOP/scripts/build.sh" patched
mkdir -p "$BUILD/machine"
run_logged "$LOGS/machine-pingpong.log" "compiling bench-scripts/machine/pingpong.c" "" \
	gcc -O2 -Wall -Wextra -o "$BUILD/machine/pingpong" "$FLEXLOCK_TOP/bench-scripts/machine/pingpong.c"
ensure_test_user
mkdir -p "$BUILD/bench"
hand_over "$BUILD/bench"

args=(profile)
[ -n "${MACHINE_PROFILE_OUT:-}" ] && args+=(--out "$MACHINE_PROFILE_OUT")
# shellcheck disable=SC2206
args+=(${MACHINE_PROFILE_ARGS:-})
FLEXLOCK_BUILD=$BUILD exec "${FLEXLAB[@]}" "${args[@]}"
