#!/usr/bin/env bash
# scripts/overhead.sh — instructions per transaction, vanilla vs patched,
# counted with callgrind (deterministic: the same binary and input give the
# same count, whatever else the machine does).
#
# Each build runs a fixed single-client script in single-user mode
# (postgres --single) under valgrind --tool=callgrind: N transactions of a
# workload, and the same with no transactions; the difference divided by N
# is the cost of one transaction, start-up and shut-down excluded.  The
# transactions are pgbench's select-only and TPC-B-like ones with account,
# teller and branch ids from a fixed pseudo-random sequence, so every run
# executes exactly the same statements.
#
# Writes results/DATE-overhead/RESULT.md (override with OUT=) with
# the figures, the settings and the machine.  N_SELECT and N_TPCB size it.
#
# BUILD=name (make's command line, FLEXLOCK_USE_BUILD): a build of yours
# (make build) against the build it was laid on, the same two workloads,
# into results/DATE-overhead-NAME/RESULT.md.

. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/callgrind.sh"

N_SELECT=${N_SELECT:-4000}
N_TPCB=${N_TPCB:-1000}
OUT_GIVEN=${OUT:-}
OUT=${OUT:-$FLEXLOCK_TOP/results/$(date -u +%F)-overhead/RESULT.md}
WORK=$BUILD/overhead

command -v valgrind >/dev/null 2>&1 || die "valgrind is not installed ('make deps' with FLEXLOCK_DEPS_EXTRA=valgrind, or apt-get install valgrind)"

own=${FLEXLOCK_USE_BUILD:-}
case $own in
"" | patched) own= ;;
vanilla | cassert) die "make overhead compares vanilla with patched; BUILD= names a build of yours (make build), against its base" ;;
*)
	own_base=$("${FLEXLAB[@]}" build info "$own" --field base) || exit 1
	[ -n "$own_base" ] || die "BUILD=$own has no build of ours to be compared with (the assertion-enabled twin of a build on vanilla)"
	OUT=${OUT_GIVEN:-$FLEXLOCK_TOP/results/$(date -u +%F)-overhead-$own/RESULT.md} ;;
esac

if [ -n "$own" ]; then
	"$FLEXLOCK_TOP/scripts/build.sh" "$own_base"
	"${FLEXLAB[@]}" build check "$own" || exit 1
else
	"$FLEXLOCK_TOP/scripts/build.sh" vanilla patched
fi
ensure_test_user
rm -rf "$WORK" && mkdir -p "$WORK"
hand_over "$WORK"

cg_scripts "$WORK" "$N_SELECT" "$N_TPCB"
trap cg_cleanup EXIT

# count BUILD WORKLOAD: total instructions of one single-user run.
count() {
	cg_instructions "$BUILD/install/$1/bin/postgres" "$WORK/$1/template" "$WORK/$1/run" \
		"$WORK/$2.sql" "$WORK/$1-$2.callgrind"
}

# The two builds compared: vanilla and patched, or a build of yours and
# its base (make overhead BUILD=)
pair=(vanilla patched)
[ -n "$own" ] && pair=("$own_base" "$own")
declare -A per_txn
for b in "${pair[@]}"; do
	say "$b: initialising pgbench data (scale 1)"
	mkdir -p "$WORK/$b" && hand_over "$WORK/$b"
	cg_template "$BUILD/install/$b/bin" "$WORK/$b/template" 5499 "$WORK/$b-init.log"
	base=$(count "$b" empty)
	[ "$b" = patched ] && base_patched=$base
	for w in select tpcb; do
		n=$N_SELECT; [ "$w" = tpcb ] && n=$N_TPCB
		say "$b: $w, $n transactions under callgrind"
		total=$(count "$b" "$w")
		per_txn[$b,$w]=$(( (total - base) / n ))
	done
done

# pair_table: the instructions per transaction of the two builds, and the
# difference
pair_table() {
	local a=${pair[0]} b=${pair[1]} w n
	echo "| workload | transactions | $a | $b | difference |"
	echo "|---|---:|---:|---:|---:|"
	for w in select tpcb; do
		n=$N_SELECT; [ "$w" = tpcb ] && n=$N_TPCB
		printf '| %s | %d | %d | %d | %+d (%+.2f%%) |\n' "$w" "$n" "${per_txn[$a,$w]}" "${per_txn[$b,$w]}" \
			$((per_txn[$b,$w] - per_txn[$a,$w])) \
			"$(awk -v v="${per_txn[$a,$w]}" -v p="${per_txn[$b,$w]}" 'BEGIN { print (p - v) * 100 / v }')"
	done
}

# a build of yours against its base: the two workloads, and that is all
if [ -n "$own" ]; then
	mkdir -p "$(dirname "$OUT")"
	{
		echo "# Instructions per transaction: $own against $own_base"
		echo
		echo "Measured $(date -u +%Y-%m-%d) with \`make overhead BUILD=$own\` (scripts/overhead.sh): valgrind --tool=callgrind,"
		echo "single-user mode (\`postgres --single\`), one client, the same statements for both builds;"
		echo "(instructions of N transactions - instructions of none) / N.  $own is $("${FLEXLAB[@]}" build info "$own")."
		echo
		pair_table
		echo
		echo "Settings: ${CG_SETTINGS[*]}"
		echo
		echo "Machine: $(cg_machine)"
	} >"$OUT"
	cat "$OUT"
	say "written: $(rel "$OUT")"
	exit 0
fi

# Per-statement statistics on the patched build, each in its own runs (the
# preloaded library changes start-up too, so each has its own run of none):
# flexlock preloaded with flexlock.track = top (flexlock_statements) and
# = none, and pg_stat_statements preloaded (track = top), measured the same
# way for comparison.
declare -A stmt_cfg=(
	[flexlock]="-c shared_preload_libraries=flexlock"
	[flexlock_none]="-c shared_preload_libraries=flexlock -c flexlock.track=none"
	[pgss]="-c shared_preload_libraries=pg_stat_statements"
	[both]="-c shared_preload_libraries=pg_stat_statements,flexlock"
)
for cfg in flexlock flexlock_none pgss both; do
	saved=("${CG_SETTINGS[@]}")
	# shellcheck disable=SC2206
	CG_SETTINGS+=(${stmt_cfg[$cfg]})
	base=$(cg_instructions "$BUILD/install/patched/bin/postgres" "$WORK/patched/template" "$WORK/patched/run" \
		"$WORK/empty.sql" "$WORK/patched-$cfg-empty.callgrind")
	for w in select tpcb; do
		n=$N_SELECT; [ "$w" = tpcb ] && n=$N_TPCB
		say "patched + $cfg: $w, $n transactions under callgrind"
		total=$(cg_instructions "$BUILD/install/patched/bin/postgres" "$WORK/patched/template" "$WORK/patched/run" \
			"$WORK/$w.sql" "$WORK/patched-$cfg-$w.callgrind")
		per_txn[$cfg,$w]=$(( (total - base) / n ))
	done
	CG_SETTINGS=("${saved[@]}")
done

# EXPLAIN (ANALYZE, LOCKS) against EXPLAIN (ANALYZE, BUFFERS), per node
# call: a query of N_NODE_ROWS rows through two nodes (Aggregate over a
# Function Scan: N_NODE_ROWS + 2 node calls), explained with each option and
# with neither (BUFFERS OFF: PostgreSQL 18 shows buffers by default), with
# flexlock loaded (LOCKS is its option).
N_NODE_ROWS=${N_NODE_ROWS:-100000}
node_count() {
	local f=$WORK/explain-$1.sql
	echo "EXPLAIN (ANALYZE, $2, TIMING OFF, COSTS OFF) SELECT count(*) FROM generate_series(1, $N_NODE_ROWS);" >"$f"
	chmod a+r "$f"
	local saved=("${CG_SETTINGS[@]}")
	CG_SETTINGS+=(-c shared_preload_libraries=flexlock)
	cg_instructions "$BUILD/install/patched/bin/postgres" "$WORK/patched/template" "$WORK/patched/run" \
		"$f" "$WORK/explain-$1.callgrind"
	CG_SETTINGS=("${saved[@]}")
}
say "patched: EXPLAIN ANALYZE per node call under callgrind"
explain_plain=$(node_count plain "BUFFERS OFF")
explain_buffers=$(node_count buffers "BUFFERS ON")
explain_locks=$(node_count locks "BUFFERS OFF, LOCKS")
node_calls=$((N_NODE_ROWS + 2))

# The cost of counting a contended spinlock acquisition, paid while the
# spinlock is held: instructions inside LockStatsCountSpin() per call
# (callgrind --toggle-collect), for a call site the process has attributed
# before (the cache), one it meets for the first time (parked), and one
# met when SPIN_PENDING sites are parked already (attributed at once: the
# string work).  The calls come from flexlock_test_spin_delay() of the test
# module flexlock_inject (t/modules/), which calls finish_spin_delay() as
# s_lock() does; (runs of N calls - runs of none) / N.
spin_script() {
	local f=$WORK/spin-$1-$2.sql
	{
		echo "CREATE EXTENSION flexlock;"
		echo "CREATE EXTENSION flexlock_inject;"
		case "$1" in
			cached)
				echo "SELECT flexlock_test_spin_delay('cg_site', 1, 0);"
				echo "SELECT count(*) FROM flexlock_spinlocks;"
				echo "SELECT count(*) FROM (SELECT flexlock_test_spin_delay('cg_site', 1, 0) FROM generate_series(1, $2)) s;" ;;
			new)
				echo "SELECT count(*) FROM (SELECT flexlock_test_spin_delay('cg_new_' || g, 1, 0) FROM generate_series(1, $2) g) s;" ;;
		esac
	} >"$f"
	chmod a+r "$f"
	echo "$f"
}
spin_count() {
	cg_instructions "$BUILD/install/patched/bin/postgres" "$WORK/patched/template" "$WORK/patched/run" \
		"$(spin_script "$1" "$2")" "$WORK/spin-$1-$2.callgrind" --toggle-collect=LockStatsCountSpin
}
say "patched: LockStatsCountSpin under callgrind"
N_SPIN=10000
spin_cached=$(( ($(spin_count cached $N_SPIN) - $(spin_count cached 0)) / N_SPIN ))
c0=$(spin_count new 0) c8=$(spin_count new 8) c16=$(spin_count new 16)
spin_parked=$(( (c8 - c0) / 8 ))
spin_full=$(( (c16 - c8) / 8 ))

# The cost of lock traces (lock_stats_trace, patch 0019): the patched build
# with every transaction traced (a process's first is not) and one in 10.
# The trace files the run wrote give the transactions and events traced;
# callgrind's inclusive count of LockTraceEndTransaction() is what writing
# them at each transaction's end cost, the rest of the difference from
# tracing off is recording the events on the way.
trace_count() {
	local w=$1 every=$2 CG_SETTINGS=("${CG_SETTINGS[@]}" -c "lock_stats_trace=$2")
	local total dir=$WORK/patched/run/pg_locktrace
	total=$(cg_instructions "$BUILD/install/patched/bin/postgres" "$WORK/patched/template" "$WORK/patched/run" \
		"$WORK/$w.sql" "$WORK/patched-$w-trace$every.callgrind")
	# instructions, traced transactions, events, instructions of the writing
	echo "$total" \
		"$(cat "$dir"/*.trace 2>/dev/null | grep -c '^begin' || true)" \
		"$(cat "$dir"/*.trace 2>/dev/null | awk -F'\t' '$1 == "end" { n += $5 } END { print n + 0 }')" \
		"$(callgrind_annotate --inclusive=yes "$WORK/patched-$w-trace$every.callgrind.out" 2>/dev/null |
			awk '/LockTraceEndTransaction/ { gsub(",", "", $1); print $1; exit }')"
}
declare -A trace_row
for w in select tpcb; do
	n=$N_SELECT; [ "$w" = tpcb ] && n=$N_TPCB
	for every in 1 10; do
		say "patched: $w with lock_stats_trace = $every under callgrind"
		read -r total txns events writing < <(trace_count "$w" "$every")
		[ "$txns" -gt 0 ] || die "lock_stats_trace = $every: the $w run traced no transaction ($(rel "$WORK/patched/run/pg_locktrace"))"
		trace_row[$w,$every]="$(( (total - base_patched) / n )) $txns $events ${writing:-0}"
	done
done

mkdir -p "$(dirname "$OUT")"
{
	echo "# Instructions per transaction: vanilla vs patched"
	echo
	echo "Measured $(date -u +%Y-%m-%d) with \`make overhead\` (scripts/overhead.sh): valgrind --tool=callgrind,"
	echo "single-user mode (\`postgres --single\`), one client, the same statements for both builds;"
	echo "(instructions of N transactions - instructions of none) / N."
	echo
	pair_table
	echo
	echo "Per-statement statistics, on the patched build: flexlock preloaded (\`shared_preload_libraries = 'flexlock'\`)"
	echo "with \`flexlock.track = top\` (flexlock_statements) and \`none\`, and pg_stat_statements preloaded"
	echo "(\`pg_stat_statements.track = top\`), each against the patched build without them:"
	echo
	echo "| workload | patched | + flexlock statements | + flexlock, track = none | + pg_stat_statements | + both | flexlock beside pg_stat_statements |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	for w in select tpcb; do
		p=${per_txn[patched,$w]}
		printf '| %s | %d | %+d (%+.2f%%) | %+d (%+.2f%%) | %+d (%+.2f%%) | %+d (%+.2f%%) | %+d (%+.2f%%) |\n' "$w" "$p" \
			$((per_txn[flexlock,$w] - p)) "$(awk -v a="${per_txn[flexlock,$w]}" -v p="$p" 'BEGIN { print (a - p) * 100 / p }')" \
			$((per_txn[flexlock_none,$w] - p)) "$(awk -v a="${per_txn[flexlock_none,$w]}" -v p="$p" 'BEGIN { print (a - p) * 100 / p }')" \
			$((per_txn[pgss,$w] - p)) "$(awk -v a="${per_txn[pgss,$w]}" -v p="$p" 'BEGIN { print (a - p) * 100 / p }')" \
			$((per_txn[both,$w] - p)) "$(awk -v a="${per_txn[both,$w]}" -v p="$p" 'BEGIN { print (a - p) * 100 / p }')" \
			$((per_txn[both,$w] - per_txn[pgss,$w])) "$(awk -v a="${per_txn[both,$w]}" -v p="${per_txn[pgss,$w]}" 'BEGIN { print (a - p) * 100 / p }')"
	done
	echo
	echo "(the last column: what adding flexlock costs where pg_stat_statements is loaded already, against it alone;"
	echo "the two share the query id's jumbling)"
	echo
	echo "EXPLAIN ANALYZE per node call (\`SELECT count(*) FROM generate_series(1, $N_NODE_ROWS)\`: $node_calls node calls,"
	echo "flexlock preloaded, TIMING OFF; (the option's run - the run with BUFFERS OFF and no LOCKS) / node calls):"
	echo
	echo "| option | instructions per node call |"
	echo "|---|---:|"
	echo "| BUFFERS | $(( (explain_buffers - explain_plain) / node_calls )) |"
	echo "| LOCKS | $(( (explain_locks - explain_plain) / node_calls )) |"
	echo
	echo
	echo "Counting one contended spinlock acquisition, in instructions inside LockStatsCountSpin() (run with"
	echo "the spinlock held by s_lock(), LockBufHdr() and the LWLock wait-list lock; callgrind --toggle-collect):"
	echo
	echo "| call site | instructions per call |"
	echo "|---|---:|"
	echo "| attributed before by this process (pointer cache) | $spin_cached |"
	echo "| met for the first time (parked, attributed at the next latch wait) | $spin_parked |"
	echo "| met for the first time with 8 sites parked already (attributed at once) | $spin_full |"
	echo
	echo 'Tracing (`lock_stats_trace`, patch 0019): instructions per transaction of the patched build with'
	echo "one transaction in 10 traced and with every one traced (a process's first is never traced), the"
	echo "transactions and events the run's trace files hold, and per traced transaction and per event what"
	echo "the writing at each end costs (callgrind's inclusive count of LockTraceEndTransaction()) and what"
	echo "recording the events on the way costs (the rest of the difference from tracing off):"
	echo
	echo "| workload | off | 1 in 10 | every one | traced | events per traced txn | extra per traced txn | recording per event | writing per event |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for w in select tpcb; do
		n=$N_SELECT; [ "$w" = tpcb ] && n=$N_TPCB
		read -r p10 t10 e10 w10 <<<"${trace_row[$w,10]}"
		read -r p1 t1 e1 w1 <<<"${trace_row[$w,1]}"
		awk -v w="$w" -v off="${per_txn[patched,$w]}" -v p10="$p10" -v p1="$p1" -v t1="$t1" -v e1="$e1" \
			-v w1="$w1" -v n="$n" 'BEGIN {
			extra = (p1 - off) * n / t1; ev = e1 / t1; wr = w1 / t1;
			printf "| %s | %d | %d (%+d) | %d (%+d) | %d of %d | %.1f | %d | %.1f | %.1f |\n",
				w, off, p10, p10 - off, p1, p1 - off, t1, n, ev, extra, (extra - wr) / ev, wr / ev }'
	done
	echo
	echo "- select: pgbench's select-only transaction; tpcb: pgbench's TPC-B-like transaction (5 statements)."
	echo "- Settings: ${CG_SETTINGS[*]} (lock_stats_timing at its default, on; in a single process nobody"
	echo "  sleeps on a lock, so this is the cost of counting on the uncontended paths)."
	echo "- Builds: $(cut -f1 "$ORIGIN_FILE") from $(cut -f2- "$ORIGIN_FILE" | tr '\t' ' '); configure $(sed -n 's/^  \$ .*configure //p' "$BUILD/obj/vanilla/config.log" | head -n1)"
	echo "- Patches: $(cd "$PATCHES" && ls -- *.patch | tr '\n' ' ')"
	echo "- Machine: $(cg_machine)"
} >"$OUT"
cat "$OUT"
