#!/usr/bin/env bash
# scripts/soak.sh — `make check-soak`: run chosen suites again and again with
# every core kept busy by other processes, to find the assertions that
# chance can break before CI does (docs/tests.md, "Assertions that chance
# can break").
#
#   SUITES="tap"        the suites of scripts/check.sh to run (default tap)
#   REPEAT=N            how many times (default 5)
#   SOAK_LOAD=N         busy loops beside them (default: one per core)
#   TAP_TESTS, VARIANTS as for make check
#
# Each run is a `make check` of those suites (the builds are brought up to
# date first, without the load).  The output of a run that failed, with its
# suites' logs, is kept in build/soak/run-N/; the last line says how many
# runs passed, and the exit status is non-zero if any failed.  A busy loop
# is a shell `while :; do :; done`: on a machine of 2 vCPUs, two of them make
# the tests' processes wait for a core, as on a loaded CI host.

. "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-5}
SUITES=${SUITES:-tap}
SOAK_LOAD=${SOAK_LOAD:-$(nproc 2>/dev/null || echo 2)}
case $REPEAT in '' | *[!0-9]* | 0) die "REPEAT must be a positive number of runs, not '$REPEAT'" ;; esac
case $SOAK_LOAD in '' | *[!0-9]*) die "SOAK_LOAD must be a number of busy loops (0 for none), not '$SOAK_LOAD'" ;; esac
export SUITES
FLEXLOCK_CHECK_VALIDATE_ONLY=1 "$FLEXLOCK_TOP/scripts/check.sh"

OUT=$BUILD/soak
rm -rf "$OUT" && mkdir -p "$OUT"

# the builds make check would bring up to date, before the load starts
builds=(cassert)
case " $SUITES " in *" tap "* | *" bundle "*) builds+=(vanilla patched) ;; esac
"$FLEXLOCK_TOP/scripts/build.sh" "${builds[@]}"

loops=()
stop_load() {
	[ ${#loops[@]} -eq 0 ] || kill "${loops[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	loops=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM
for _ in $(seq 1 "$SOAK_LOAD"); do
	(while :; do :; done) &
	loops+=($!)
done
say "soak: $REPEAT runs of SUITES=\"$SUITES\" beside $SOAK_LOAD busy loops; $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1), $(nproc) cores"

passed=0
results=()
for i in $(seq 1 "$REPEAT"); do
	t0=$SECONDS
	log=$OUT/run-$i.log
	if "$FLEXLOCK_TOP/scripts/check.sh" >"$log" 2>&1; then
		passed=$((passed + 1))
		results+=("run $i: passed ($((SECONDS - t0)) s, load $(cut -d' ' -f1 /proc/loadavg))")
		rm -f "$log"
	else
		mkdir -p "$OUT/run-$i"
		mv "$log" "$OUT/run-$i/output.log"
		cp -r "$BUILD/check/logs/." "$OUT/run-$i/" 2>/dev/null || true
		results+=("run $i: FAILED ($((SECONDS - t0)) s): $(grep -E '^FAIL ' "$OUT/run-$i/output.log" | awk '{print $2}' | tr '\n' ' ')-> $(rel "$OUT/run-$i")/")
	fi
	say "soak: ${results[-1]}"
done
stop_load

echo
printf '%s\n' "${results[@]}"
echo "$passed of $REPEAT runs passed"
[ "$passed" -eq "$REPEAT" ]
