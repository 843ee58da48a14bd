#!/usr/bin/env bash
# scripts/check-aarch64.sh — the aarch64 suite of `make check-full` (and of
# `make check SUITES=aarch64`): the aarch64 build (scripts/cross.sh) run under
# qemu's user-mode emulation on this host.
#
#   1. the binaries are aarch64 and run as aarch64: `file` of initdb,
#      postgres and psql; the postmaster's executable is qemu-aarch64; the
#      server's version() names aarch64
#   2. PostgreSQL's core regression suite (src/test/regress, `make check`
#      with its temporary installation, NO_LOCALE=1)
#   3. the LWLock torture test (flexlock_torture_lwlock) with algorithm
#      exchange, fetch_add, mixed and readbiased, then exchange again with
#      lwlock_implementation = spinlock: no violation, every wait within
#      the bound
#
# It shows that the code compiles and runs as aarch64 (no x86-only code); on
# an x86 host it cannot show reorderings that aarch64 hardware would allow.
# check.sh runs it as itself: as root it installs what the build needs and
# registers qemu with binfmt_misc; servers and tests run as the test user
# (as ourselves when not root, which needs qemu registered already).  Prints a line per part with
# its time; exit status non-zero if a part failed.  AARCH64_TORTURE="workers
# seconds" sizes the torture runs (default "16 5", as t/006 with 5 s).

. "$(dirname "$0")/lib.sh"

OBJ=$BUILD/obj/aarch64
INST=$BUILD/install/aarch64
DIR=$BUILD/check/aarch64
read -r WORKERS SECONDS_PER_RUN <<<"${AARCH64_TORTURE:-16 5}"
[[ "$WORKERS" =~ ^[0-9]+$ && "$SECONDS_PER_RUN" =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
	die "AARCH64_TORTURE must be \"workers seconds\" (e.g. \"16 5\"), not '${AARCH64_TORTURE:-}'"
BOUND_MS=10000
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
ZIC=$(command -v zic || echo /usr/sbin/zic)
export ZIC

"$FLEXLOCK_TOP/scripts/cross.sh" build
"$FLEXLOCK_TOP/scripts/cross.sh" binfmt
ensure_test_user

failed=()
t_all=$SECONDS

# part NAME SECONDS_START STATUS: report one part
part() {
	local name=$1 t0=$2 rc=$3
	if [ "$rc" = 0 ]; then
		printf 'ok      %-36s %4d s\n' "$name" "$((SECONDS - t0))"
	else
		printf 'not ok  %-36s %4d s\n' "$name" "$((SECONDS - t0))"
		failed+=("$name")
	fi
}

rm -rf "$DIR" && mkdir -p "$DIR"
hand_over "$DIR" "$OBJ"

# --- 1. aarch64 binaries --------------------------------------------------
t0=$SECONDS
rc=0
for b in initdb postgres psql; do
	f=$(file -L "$INST/bin/$b")
	echo "$f"
	case $f in *"ARM aarch64"*) ;; *) echo "not an aarch64 executable: $INST/bin/$b"; rc=1 ;; esac
done
part "binaries are aarch64 (file)" "$t0" "$rc"

# --- 2. core regression suite ---------------------------------------------
t0=$SECONDS
rc=0
as_user make -C "$OBJ/src/test/regress" check NO_LOCALE=1 >"$DIR/regress.log" 2>&1 || rc=$?
grep -E '^# (All [0-9]+ tests passed|[0-9]+ of [0-9]+ tests (failed|passed))|^not ok' "$DIR/regress.log" || true
if [ "$rc" != 0 ]; then
	for k in "$OBJ/src/test/regress/regression.diffs" "$OBJ/src/test/regress/log"; do
		[ -e "$k" ] && cp -r "$k" "$DIR/"
	done
	echo "regress failed: $(rel "$DIR")/regress.log, regression.diffs"
fi
part "regress (core suite, temp install)" "$t0" "$rc"

# --- 3. LWLock torture ----------------------------------------------------
data=$DIR/data
sock=$DIR
port=5432
psql_q() {
	as_user "$INST/bin/psql" -X -q -A -t -F'|' -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -d postgres -c "$1"
}
start_server() {
	as_user "$INST/bin/pg_ctl" -D "$data" -l "$DIR/server.log" -w -t 300 start >>"$DIR/pg_ctl.log" 2>&1
}
stop_server() {
	[ -f "$data/postmaster.pid" ] || return 0
	as_user "$INST/bin/pg_ctl" -D "$data" -w -t 300 -m fast stop >>"$DIR/pg_ctl.log" 2>&1 || true
}
trap stop_server EXIT

# counter FAMILY NAME: a counter of flexlock_counters
counter() {
	psql_q "SELECT coalesce(sum(value), 0) FROM flexlock_counters WHERE family = '$1' AND counter = '$2'" || echo -1
}

# torture NAME ALGORITHM: one run with the counters reset first; checks no
# violation, every wait within the bound, and that the run took the lock
# type's own path (back-outs only with fetch-add, acquisitions through
# slots and revocations when read-biased, the spinlock taken for every
# acquisition and release with spinlock LWLocks)
torture() {
	local name=$1 alg=$2 t0=$SECONDS rc=0 out acq viol maxwait sleeps backouts engaged
	out=$(psql_q "SELECT flexlock_reset();
	              SELECT acquisitions, violations, round(max_wait_ms::numeric, 1), sleeps, backouts
	                FROM flexlock_torture_lwlock($WORKERS, $SECONDS_PER_RUN, 70, 20, 5, 5,
	                                             algorithm => '$alg', wait_bound_ms => $BOUND_MS)" 2>&1) || rc=$?
	if [ "$rc" = 0 ]; then
		IFS='|' read -r acq viol maxwait sleeps backouts <<<"$(tail -n1 <<<"$out")"
		case $name in
			exchange) engaged="$backouts back-outs"; [ "$backouts" = 0 ] || rc=1 ;;
			fetch_add | mixed) engaged="$backouts back-outs"; [ "$backouts" -gt 0 ] || rc=1 ;;
			readbiased)
				local biased revoked
				biased=$(counter readbias biased_acquires) revoked=$(counter readbias revocations)
				engaged="$biased acquisitions through slots, $revoked revocations"
				[ "$biased" -gt 0 ] && [ "$revoked" -gt 0 ] && [ "$backouts" = 0 ] || rc=1 ;;
			spinlock*)
				local mutex
				mutex=$(counter lwspin mutex_acquires)
				engaged="$mutex spinlock acquisitions"
				[ "$mutex" -ge $((2 * acq)) ] && [ "$backouts" = 0 ] || rc=1 ;;
		esac
		echo "torture $name: $acq acquisitions, $viol violations, longest wait $maxwait ms, $sleeps sleeps; $engaged ($WORKERS workers, $SECONDS_PER_RUN s, 70/20/5/5 % shared/exclusive/conditional/until-free)"
		[ "$rc" = 0 ] || echo "torture $name: the run did not take the path of its lock type ($engaged)"
		[ "$viol" = 0 ] || { echo "torture $name: $viol violations"; rc=1; }
		[ "${acq:-0}" -gt 0 ] || { echo "torture $name: no acquisitions"; rc=1; }
		awk -v m="$maxwait" -v b="$BOUND_MS" 'BEGIN { exit !(m < b) }' ||
			{ echo "torture $name: a wait of $maxwait ms, not within the bound of $BOUND_MS ms"; rc=1; }
	else
		echo "torture $name failed: $out"
	fi
	part "torture $name" "$t0" "$rc"
}

t0=$SECONDS
rc=0
{
	as_user "$INST/bin/initdb" -D "$data" --no-sync --no-locale -A trust >"$DIR/initdb.log" 2>&1 &&
		cat >>"$data/postgresql.conf" <<-EOF &&
			listen_addresses = ''
			unix_socket_directories = '$sock'
			port = $port
			max_worker_processes = 40
			max_connections = 30
			autovacuum = off
			fsync = off
		EOF
		start_server &&
		psql_q 'CREATE EXTENSION flexlock' &&
		version=$(psql_q 'SELECT version()') &&
		exe=$(readlink "/proc/$(head -n1 "$data/postmaster.pid")/exe")
} || rc=1
if [ "$rc" = 0 ]; then
	echo "server: $version; postmaster executable $exe"
	case $version in *aarch64*) ;; *) echo "version() does not name aarch64"; rc=1 ;; esac
	case $exe in *qemu-aarch64*) ;; *) echo "the postmaster does not run under qemu-aarch64"; rc=1 ;; esac
else
	echo "could not start a server of the aarch64 build: $(rel "$DIR")/initdb.log, server.log"
	tail -n 5 "$DIR/initdb.log" "$DIR/server.log" 2>/dev/null
fi
part "initdb, server, version() under qemu" "$t0" "$rc"

if [ "$rc" = 0 ]; then
	for alg in exchange fetch_add mixed readbiased; do
		torture "$alg" "$alg"
	done
	t0=$SECONDS
	stop_server
	echo "lwlock_implementation = spinlock" >>"$data/postgresql.conf"
	if start_server && [ "$(psql_q 'SHOW lwlock_implementation')" = spinlock ]; then
		part "restart with spinlock LWLocks" "$t0" 0
		torture "spinlock (exchange)" exchange
	else
		part "restart with spinlock LWLocks" "$t0" 1
	fi
	stop_server
fi

if [ ${#failed[@]} -gt 0 ]; then
	cp "$DIR/server.log" "$DIR/server.log.kept" 2>/dev/null || true
	die "aarch64: ${#failed[@]} part(s) failed: ${failed[*]} ($((SECONDS - t_all)) s; logs in $(rel "$DIR"))"
fi
say "aarch64: all parts passed ($((SECONDS - t_all)) s; logs in $(rel "$DIR"))"
