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
# Writes bench-scripts/results/overhead/RESULT.md (override with OUT=) with
# the figures, the settings and the machine.  N_SELECT and N_TPCB size it.

. "$(dirname "$0")/lib.sh"

N_SELECT=${N_SELECT:-4000}
N_TPCB=${N_TPCB:-1000}
OUT=${OUT:-$FLEXLOCK_TOP/bench-scripts/results/overhead/RESULT.md}
WORK=$BUILD/overhead

command -v valgrind >/dev/null 2>&1 || die "valgrind is not installed ('make deps' with FLEXLOCK_DEPS_EXTRA=valgrind, or apt-get install valgrind)"

"$FLEXLOCK_TOP/scripts/build.sh" vanilla patched
ensure_test_user
rm -rf "$WORK" && mkdir -p "$WORK"
hand_over "$WORK"

# The scripts: one statement per line (single-user mode ends a query at a
# newline).  A linear congruential generator keeps the ids fixed.
gen() {
	local kind=$1 n=$2
	awk -v kind="$kind" -v n="$n" 'BEGIN {
		x = 12345;
		for (i = 0; i < n; i++) {
			x = (x * 1103515245 + 12345) % 2147483648; aid = 1 + x % 100000;
			x = (x * 1103515245 + 12345) % 2147483648; tid = 1 + x % 10;
			x = (x * 1103515245 + 12345) % 2147483648; delta = x % 10001 - 5000;
			if (kind == "select") {
				print "SELECT abalance FROM pgbench_accounts WHERE aid = " aid ";";
			} else {
				print "BEGIN;";
				print "UPDATE pgbench_accounts SET abalance = abalance + " delta " WHERE aid = " aid ";";
				print "SELECT abalance FROM pgbench_accounts WHERE aid = " aid ";";
				print "UPDATE pgbench_tellers SET tbalance = tbalance + " delta " WHERE tid = " tid ";";
				print "UPDATE pgbench_branches SET bbalance = bbalance + " delta " WHERE bid = 1;";
				print "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (" tid ", 1, " aid ", " delta ", CURRENT_TIMESTAMP);";
				print "END;";
			}
		}
	}'
}
gen select "$N_SELECT" >"$WORK/select.sql"
gen tpcb "$N_TPCB" >"$WORK/tpcb.sql"
: >"$WORK/empty.sql"
chmod a+r "$WORK"/*.sql

SETTINGS=(-c fsync=off -c synchronous_commit=on -c autovacuum=off -c shared_buffers=128MB -c max_connections=20)

# instructions BUILD SCRIPT: total instructions of one single-user run,
# starting from a copy of the initialised data directory.
instructions() {
	local b=$1 script=$2 data=$WORK/$1/run log=$WORK/$1-$(basename "$2" .sql).callgrind
	rm -rf "$data"
	as_user cp -a "$WORK/$b/template" "$data"
	as_user valgrind --tool=callgrind --callgrind-out-file="$log.out" \
		"$BUILD/install/$b/bin/postgres" --single -D "$data" "${SETTINGS[@]}" postgres \
		<"$script" >"$log.log" 2>&1 || die "callgrind run of $b failed (log: $(rel "$log.log"))"
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log.log" | tail -n1
}

# Servers run only to initialise the data; stop any we leave behind.
SOCK=$(mktemp -d /tmp/flexlock-overhead-XXXXXX)
chmod 777 "$SOCK"
running=""
cleanup() {
	[ -n "$running" ] && as_user "$BUILD/install/$running/bin/pg_ctl" -D "$WORK/$running/template" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$SOCK"
}
trap cleanup EXIT

declare -A per_txn
for b in vanilla patched; do
	bin=$BUILD/install/$b/bin
	say "$b: initialising pgbench data (scale 1)"
	mkdir -p "$WORK/$b" && hand_over "$WORK/$b"
	run_logged "$WORK/$b-init.log" "initdb for $b" "" as_user "$bin/initdb" -D "$WORK/$b/template" --no-sync -A trust
	run_logged "$WORK/$b-init.log.2" "start of $b" "" as_user "$bin/pg_ctl" -D "$WORK/$b/template" -o "-p 5499 -k $SOCK -c listen_addresses=''" -w start
	running=$b
	run_logged "$WORK/$b-init.log.3" "pgbench -i for $b" "" as_user "$bin/pgbench" -h "$SOCK" -p 5499 -i -s 1 -q postgres
	run_logged "$WORK/$b-init.log.4" "vacuum for $b" "" as_user "$bin/psql" -h "$SOCK" -p 5499 -X -q -c "VACUUM ANALYZE" -c CHECKPOINT postgres
	run_logged "$WORK/$b-init.log.5" "stop of $b" "" as_user "$bin/pg_ctl" -D "$WORK/$b/template" -w stop
	running=""
	base=$(instructions "$b" "$WORK/empty.sql")
	for w in select tpcb; do
		n=$N_SELECT; [ "$w" = tpcb ] && n=$N_TPCB
		say "$b: $w, $n transactions under callgrind"
		total=$(instructions "$b" "$WORK/$w.sql")
		per_txn[$b,$w]=$(( (total - base) / n ))
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
	echo "| workload | transactions | vanilla | patched | difference |"
	echo "|---|---:|---:|---:|---:|"
	for w in select tpcb; do
		n=$N_SELECT; [ "$w" = tpcb ] && n=$N_TPCB
		v=${per_txn[vanilla,$w]} p=${per_txn[patched,$w]}
		printf '| %s | %d | %d | %d | %+d (%+.2f%%) |\n' "$w" "$n" "$v" "$p" $((p - v)) \
			"$(awk -v v="$v" -v p="$p" 'BEGIN { print (p - v) * 100 / v }')"
	done
	echo
	echo "- select: pgbench's select-only transaction; tpcb: pgbench's TPC-B-like transaction (5 statements)."
	echo "- Settings: ${SETTINGS[*]} (lock_stats_timing at its default, on; in a single process nobody"
	echo "  sleeps on a lock, so this is the cost of counting on the uncontended paths)."
	echo "- Builds: $(cut -f1 "$ORIGIN_FILE") from $(cut -f2- "$ORIGIN_FILE" | tr '\t' ' '); configure $(sed -n 's/^  \$ .*configure //p' "$BUILD/obj/vanilla/config.log" | head -n1)"
	echo "- Patches: $(cd "$PATCHES" && ls -- *.patch | tr '\n' ' ')"
	echo "- Machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1), $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr); $(valgrind --version)"
} >"$OUT"
cat "$OUT"
