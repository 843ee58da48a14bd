#!/usr/bin/env bash
# scripts/server.sh — one PostgreSQL server of a build to try things on, and
# pgbench with the lock profile of the run:
#
#   server.sh start     make server   start it (a data directory is made once
#                                     and kept), create the extension, apply
#                                     a variant or settings, load pgbench tables
#   server.sh stop      make stop
#   server.sh status    make status
#   server.sh psql      make psql     psql on it (standard input or a terminal)
#   server.sh pgbench   make pgbench  a pgbench script, statistics reset first,
#                                     then tps, latency and flexlock_report()
#
# Settings, from make's command line (the Makefile lists in FLEXLOCK_CMDLINE
# the ones given there, so that a variable of the same name in the
# environment does not count):
#   BUILD=patched|vanilla|cassert|NAME  the install (default patched, or
#                      FLEXLOCK_SERVER_BUILD; NAME: a build of your own,
#                      make build); a data directory belongs to the build
#                      that made it
#   FRESH=1            a new data directory (a running server is stopped)
#   VARIANT=name       variants/NAME.conf          } kept in the data
#   SET="guc=value ..." more settings (SET= none)  } directory's settings
#   PORT=N             TCP port on localhost and   } until given again;
#                      socket name (default 5418,  } a running server is
#                      or FLEXLOCK_PORT)           } restarted to change them
#   SCALE=N            pgbench tables at scale N (pgbench -i), if not there
#   SCRIPT=file.sql CLIENTS=N TIME=S PGBENCH_ARGS="..."   make pgbench
#
# The server runs as the unprivileged user (FLEXLOCK_USER when root), with
# its data directory, log and socket in build/server/ (FLEXLOCK_SERVER_DIR),
# and trusts local connections, as initdb does by default.  initdb, the
# sizing and the start are the lab's one launcher, flexbench/servers.py,
# the benchmark's too (flexlock-lab server initdb|start).

# Read make's variables before lib.sh takes BUILD for the build directory.
declare -A given=()
for v in ${FLEXLOCK_CMDLINE:-}; do
	case $v in
	BUILD | FRESH | VARIANT | SET | SCALE | PORT | SCRIPT | CLIENTS | TIME | PGBENCH_ARGS) given[$v]=${!v-} ;;
	esac
done

. "$(dirname "$0")/lib.sh"

SRV=${FLEXLOCK_SERVER_DIR:-$BUILD/server}
DATA=$SRV/data
STATE=$SRV/state
LOG=$SRV/server.log
DEFAULT_PORT=${FLEXLOCK_PORT:-5418}

has() { [ -n "${given[$1]+x}" ]; }
# how to (re)make a build: ours by name, a user's with make build
remake() {
	case $1 in
	vanilla | patched | cassert) printf "run 'make %s'" "$1" ;;
	*) printf "run 'make build NAME=%s PATCHES=...' again" "$1" ;;
	esac
}
posint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

# --- state: what the data directory was made by and started with -----------

declare -A st=()
read_state() {
	st=()
	[ -f "$STATE" ] || return 0
	local k v
	while IFS='=' read -r k v; do
		[ -n "$k" ] && st[$k]=$v
	done <"$STATE"
}

write_state() {
	{
		local k
		for k in build variant set port scale user; do
			printf '%s=%s\n' "$k" "${st[$k]-}"
		done
	} >"$STATE"
	hand_over "$STATE"
}

have_data() { [ -f "$DATA/PG_VERSION" ]; }

running() {
	have_data && as_user "$INST/bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

# The build of the data directory, the install and its superuser.
setup() {
	read_state
	if has BUILD; then
		build=${given[BUILD]}
	elif have_data && [ -n "${st[build]-}" ] && [ "${given[FRESH]-}" != 1 ]; then
		build=${st[build]}
	else
		build=${FLEXLOCK_SERVER_BUILD:-patched}
	fi
	# ours or a build of the user's (make build); "yes" when it carries the
	# series: the lock statistics, the extension and the variants
	series=$("${FLEXLAB[@]}" build info "$build" --field has-series) || exit 1
	INST=$BUILD/install/$build
	[ -x "$INST/bin/postgres" ] ||
		die "the $build build is not there ($(rel "$INST") is missing): run 'make $build' (or 'make postgres') first"
	if is_root; then
		user=$FLEXLOCK_USER
	else
		user=$(id -un)
	fi
	port=${st[port]:-$DEFAULT_PORT}
}

# psql's and pgbench's connection options
conn() { conn=(-h "$SRV" -p "${st[port]}" -U "${st[user]}"); }

say_connect() {
	say "connect: $INST/bin/psql -h $SRV -p ${st[port]} -U ${st[user]} -d postgres  (or: make psql)"
	say "or: export PATH=$INST/bin:\$PATH PGHOST=$SRV PGPORT=${st[port]} PGUSER=${st[user]} PGDATABASE=postgres"
}

describe() {
	local d="${st[build]} build, variant ${st[variant]:-stock}"
	[ -n "${st[set]-}" ] && d+=", SET=\"${st[set]}\""
	d+=", port ${st[port]}"
	[ -n "${st[scale]-}" ] && d+=", pgbench tables at scale ${st[scale]}"
	printf '%s' "$d"
}

psql_q() {
	conn
	"$INST/bin/psql" -X -q -A -t -v ON_ERROR_STOP=1 "${conn[@]}" -d postgres "$@"
}

# --- make server -------------------------------------------------------------

# The settings this start wants: variant and SET as given, else as before.
want_settings() {
	if [ "${given[FRESH]-}" = 1 ] || ! have_data; then
		variant=stock set= port=$DEFAULT_PORT
	else
		variant=${st[variant]:-stock}
		set=${st[set]-}
	fi
	if has VARIANT && [ -n "${given[VARIANT]}" ]; then
		variant=${given[VARIANT]}
		has SET || set=
	fi
	has SET && set=${given[SET]}
	has PORT && port=${given[PORT]}
	[[ $port =~ ^[1-9][0-9]*$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 65535 ] ||
		die "PORT must be a number from 1024 to 65535, not '$port'"
	[ -f "$FLEXLOCK_TOP/variants/$variant.conf" ] ||
		die "unknown variant '$variant' (known: $(cd "$FLEXLOCK_TOP/variants" && ls -- *.conf | sed 's/\.conf$//' | paste -sd ' '))"
	if has SCALE; then
		posint "${given[SCALE]}" || die "SCALE must be a positive integer (pgbench -i -s), not '${given[SCALE]}'"
	fi

	# every setting must be one this build knows (a typo, or a variant on vanilla)
	local known name tok
	known=$("$INST/bin/postgres" --describe-config 2>/dev/null | cut -f1) ||
		die "$(rel "$INST")/bin/postgres --describe-config failed; is the install complete?"
	for tok in $set; do
		[[ $tok =~ ^[A-Za-z_][A-Za-z0-9_.]*=.+$ ]] ||
			die "SET takes guc=value words separated by spaces, e.g. SET=\"lock_stats_hold_sample=10 shared_buffers=1GB\"; '$tok' is not one"
		name=${tok%%=*}
		[[ $name == *.* ]] || grep -qx -- "$name" <<<"$known" ||
			die "SET: the $build build has no setting '$name'"
	done
	while read -r name; do
		[[ $name == *.* ]] || grep -qx -- "$name" <<<"$known" ||
			die "variant '$variant' sets $name, which the $build build does not have (variants need a build with the series: BUILD=patched)"
	done < <(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_.]*\)[[:space:]]*=.*/\1/p' "$FLEXLOCK_TOP/variants/$variant.conf")
}

# The settings of flexlock-server.conf after the sizing, port and socket
# (flexlock-lab server start writes the file, which postgresql.conf
# includes, at every start).
extra_conf() {
	local tok
	{
		if [ "$series" = yes ]; then
			echo "# one LWLock hold in 100 timed, for the hold times of make pgbench"
			echo "lock_stats_hold_sample = 100"
			echo "# the lock events of each statement, for make pgbench's statements (flexlock_statements),"
			echo "# and pg_stat_statements beside them, to join on the query id"
			echo "shared_preload_libraries = 'flexlock, pg_stat_statements'"
		fi
		echo
		echo "# VARIANT=$variant: variants/$variant.conf"
		cat "$FLEXLOCK_TOP/variants/$variant.conf"
		if [ -n "$set" ]; then
			echo
			echo "# SET=\"$set\""
			for tok in $set; do
				printf "%s = '%s'\n" "${tok%%=*}" "$(printf '%s' "${tok#*=}" | sed "s/'/''/g")"
			done
		fi
	}
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Write flexlock-server.conf and start; on failure, the server's first
# complaint (flexlock-lab server start prints it).
pg_start() {
	local rc=0 first
	if port_in_use "$port"; then
		die "port $port is in use (another server?): pick a free one with 'make server PORT=N'"
	fi
	first=$(extra_conf | "${FLEXLAB[@]}" server start --build "$build" --data "$DATA" --port "$port" \
		--socket-dir "$SRV" --log "$LOG") || rc=$?
	if [ $rc -ne 0 ]; then
		case $first in
		*"could not bind"* | *"Address already in use"*)
			die "port $port is in use (another server?): pick a free one with 'make server PORT=N'" ;;
		esac
		die "the server did not start${first:+: $first}; fix the setting (VARIANT, SET) or see the log $(rel "$LOG")"
	fi
}

cmd_start() {
	setup
	# a socket path is at most 107 bytes
	[ $((${#SRV} + 18)) -le 107 ] ||
		die "the socket path under $SRV is too long for a Unix socket; set FLEXLOCK_SERVER_DIR to a shorter directory"
	if has FRESH; then
		case ${given[FRESH]} in 1 | 0 | '') ;; *) die "FRESH=1 makes a new data directory; '${given[FRESH]}' is not 1" ;; esac
	fi
	if have_data && [ "${given[FRESH]-}" != 1 ]; then
		if [ -z "${st[build]-}" ]; then
			die "$(rel "$DATA") has no record of the build that made it ($(rel "$STATE") is missing): add FRESH=1 to make a new one"
		elif [ "${st[build]}" != "$build" ]; then
			die "$(rel "$DATA") is a data directory of the ${st[build]} build: run 'make server BUILD=${st[build]}', or add FRESH=1 to replace it with one for $build"
		fi
	fi
	want_settings
	ensure_test_user
	mkdir -p "$SRV"
	chmod 700 "$SRV"
	is_root && chown "$FLEXLOCK_USER:" "$SRV"

	local was_running=
	running && was_running=1
	if { [ -z "$was_running" ] || [ "$port" != "${st[port]-}" ]; } && port_in_use "$port"; then
		die "port $port is in use (another server?): pick a free one with 'make server PORT=N'"
	fi
	if [ "${given[FRESH]-}" = 1 ] && have_data; then
		if [ -n "$was_running" ]; then
			say "FRESH=1: stopping the running server"
			as_user "$INST/bin/pg_ctl" -D "$DATA" -m fast -w -t 120 stop >/dev/null
			was_running=
		fi
		rm -rf "$DATA"
		st=()
	fi

	if [ -n "$was_running" ] && [ "$variant" = "${st[variant]-}" ] &&
		[ "$set" = "${st[set]-}" ] && [ "$port" = "${st[port]-}" ]; then
		say "the server is already running: $(describe)"
		load_tables
		say_connect
		return 0
	fi
	if [ -n "$was_running" ]; then
		say "restarting the server with variant $variant${set:+, SET=\"$set\"}, port $port"
		as_user "$INST/bin/pg_ctl" -D "$DATA" -m fast -w -t 120 stop >/dev/null
	elif ! have_data; then
		say "making a data directory for the $build build: $(rel "$DATA")"
		run_logged "$SRV/initdb.log" "initdb" "see the log" \
			"${FLEXLAB[@]}" server initdb --build "$build" --data "$DATA"
		st=([build]=$build [user]=$user)
	fi
	pg_start
	st[build]=$build
	st[user]=${st[user]:-$user}
	st[variant]=$variant
	st[set]=$set
	st[port]=$port
	write_state

	if [ "$series" = yes ]; then
		psql_q -c "CREATE EXTENSION IF NOT EXISTS flexlock" -c "ALTER EXTENSION flexlock UPDATE" >/dev/null 2>&1 ||
			die "CREATE EXTENSION flexlock failed on the $build build: $(remake "$build") to install it"
		psql_q -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null 2>&1 ||
			die "CREATE EXTENSION pg_stat_statements failed on the $build build: $(remake "$build") to install it"
	fi
	load_tables
	say "server running: $(describe); data $(rel "$DATA"), log $(rel "$LOG")"
	[ "$series" = no ] && say "the $build build has no lock statistics$([ "$build" = vanilla ] || echo " (it is laid on vanilla)"): the flexlock views need BUILD=patched"
	say_connect
}

# SCALE=N: pgbench tables at that scale, unless they are there already.
load_tables() {
	has SCALE || return 0
	local scale=${given[SCALE]} have
	have=$(psql_q -c "SELECT CASE WHEN to_regclass('pgbench_branches') IS NOT NULL
	                              THEN (SELECT count(*) FROM pgbench_branches) END" 2>/dev/null || true)
	if [ "$have" = "$scale" ]; then
		st[scale]=$scale
		write_state
		return 0
	fi
	say "loading pgbench tables at scale $scale (pgbench -i -s $scale)"
	conn
	run_logged "$SRV/pgbench-init.log" "pgbench -i -s $scale" "see the log" \
		"$INST/bin/pgbench" -i -s "$scale" -q "${conn[@]}" postgres
	st[scale]=$scale
	write_state
}

# --- the others ----------------------------------------------------------------

need_running() {
	setup
	if ! have_data || ! running; then
		die "no server is running ($(rel "$SRV")): start one with 'make server' (SCALE=N loads pgbench tables)"
	fi
}

cmd_stop() {
	setup
	if ! have_data || ! running; then
		say "no server is running ($(rel "$SRV"))"
		return 0
	fi
	as_user "$INST/bin/pg_ctl" -D "$DATA" -m fast -w -t 120 stop >/dev/null
	say "server stopped ($(describe)); its data directory $(rel "$DATA") is kept (FRESH=1 makes a new one)"
}

cmd_status() {
	setup
	if ! have_data; then
		say "no server and no data directory ($(rel "$SRV")): 'make server' makes one"
	elif ! running; then
		say "no server is running; data directory $(rel "$DATA") of the ${st[build]:-unknown} build kept: 'make server' starts it"
	else
		say "server running: $(describe); pid $(head -n1 "$DATA/postmaster.pid"), data $(rel "$DATA"), log $(rel "$LOG")"
		if [ "$series" = yes ]; then
			local v
			v=$(psql_q -F ' ' -c "SELECT guc || '=' || current_setting FROM flexlock_variants
			                       WHERE current_setting IS DISTINCT FROM stock_setting" 2>/dev/null | paste -sd ' ' || true)
			say "lock variants not at their stock setting: ${v:-none}"
		fi
		say_connect
	fi
}

cmd_psql() {
	need_running
	conn
	exec "$INST/bin/psql" -v ON_ERROR_STOP=1 "${conn[@]}" -d postgres
}

# The statements of a pgbench script, one a line: comments and meta commands
# (\set ...) left out, a statement's lines joined.
split_script() {
	perl -ne '
		s/--.*$//;
		next if /^\s*\\/;
		$cur .= " $_";
		if (/;\s*$/) { push @s, $cur; $cur = "" }
		END {
			push @s, $cur if defined $cur && $cur =~ /\S/;
			for (@s) { s/\s+/ /g; s/^ //; s/ ?;? ?$//; print "$_\n" if length }
		}' "$1"
}

# After the report: the script's statements with their share of the run's
# lock events and lock time (flexlock_statements as tracked when pgbench
# ended), what else ran, and what ran outside statements.  A statement's
# query id is what flexlock_query_id() gives for it with its variables
# replaced as pgbench replaces them: by literal values, or by $n with
# -M extended or prepared (NULL if it cannot be analyzed on its own).
script_statements_sql() {
	local stmt idtext n=0 params=literal values=
	case " ${given[PGBENCH_ARGS]:-} " in
	*" -M extended "* | *" -M prepared "* | *" -Mextended "* | *" -Mprepared "* | *"--protocol=extended"* | *"--protocol=prepared"*)
		params=dollar ;;
	esac
	# each statement's query id in a psql variable, NULL where it cannot be
	# analyzed on its own (the error goes to the log)
	echo "\\set ON_ERROR_STOP 0"
	while IFS= read -r stmt; do
		n=$((n + 1))
		idtext=$(perl -e '
			my ($s, $how) = @ARGV; my %num; my $k = 0;
			$s =~ s/(?<!:):([A-Za-z_][A-Za-z0-9_]*)/$how eq "dollar" ? "\$" . ($num{$1} \/\/= ++$k) : "1"/ge;
			print $s' "$stmt" "$params")
		echo "\\set qid_$n NULL"
		echo "SELECT flexlock_query_id(\$fl\$$idtext\$fl\$) AS qid_$n \\gset"
		values+="${values:+, }($n, \$fl\$$stmt\$fl\$, :qid_$n::int8)"
	done < <(split_script "$1")
	echo "\\set ON_ERROR_STOP 1"
	[ -n "$values" ] || return 0
	echo "WITH script(n, statement, queryid) AS (VALUES $values),"
	cat <<'EOSQL'
run AS (
  SELECT r.queryid, r.calls,
         r.lwlock_acquisitions + r.hwlock_acquisitions
           + r.commit_lwlock_acquisitions + r.commit_hwlock_acquisitions AS events,
         r.lwlock_sleep_time + r.hwlock_wait_time + r.lwlock_hold_time
           + r.commit_lwlock_sleep_time + r.commit_hwlock_wait_time
           + r.commit_lwlock_hold_time AS ms,
         r.commit_lwlock_sleep_time + r.commit_hwlock_wait_time
           + r.commit_lwlock_hold_time AS commit_ms
    FROM json_populate_recordset(NULL::flexlock_statements, :'flexlock_run') r),
rows(o, statement, calls, events, ms, commit_ms) AS (
  SELECT s.n, s.statement, sum(r.calls), sum(r.events), sum(r.ms), sum(r.commit_ms)
    FROM script s LEFT JOIN run r USING (queryid) GROUP BY s.n, s.statement
  UNION ALL
  SELECT 1000, '(other statements)', sum(r.calls), sum(r.events), sum(r.ms), sum(r.commit_ms)
    FROM run r
   WHERE r.queryid <> 0 AND r.queryid NOT IN (SELECT queryid FROM script WHERE queryid IS NOT NULL)
     -- (but make pgbench's flexlock_reset(), the rest of which came after the reset)
     AND r.queryid <> flexlock_query_id('SELECT flexlock_reset()')
  HAVING count(*) > 0
  UNION ALL
  SELECT 1001, '(outside statements)', NULL, sum(r.events), sum(r.ms), NULL
    FROM run r WHERE r.queryid = 0 HAVING count(*) > 0),
tot AS (SELECT sum(events) AS all_events, sum(ms) AS all_ms FROM rows)
SELECT left(statement, 60) AS statement, calls, events AS lock_events,
       round(100 * events / nullif(all_events, 0), 1) AS events_pct,
       round(ms::numeric, 1) AS lock_ms,
       round((100 * ms / nullif(all_ms, 0))::numeric, 1) AS time_pct,
       round((100 * commit_ms / nullif(ms, 0))::numeric, 1) AS implicit_commit_pct
  FROM rows, tot
 WHERE EXISTS (SELECT 1 FROM run)
 ORDER BY o;
EOSQL
}

cmd_pgbench() {
	need_running
	has SCRIPT && [ -n "${given[SCRIPT]}" ] ||
		die "name a pgbench script: make pgbench SCRIPT=file.sql [CLIENTS=N TIME=S] (e.g. SCRIPT=bench-scripts/workloads/select-only.sql)"
	local script=${given[SCRIPT]} clients=${given[CLIENTS]:-1} secs=${given[TIME]:-10}
	[ -f "$script" ] && [ -r "$script" ] || die "SCRIPT=$script: no such readable file"
	posint "$clients" || die "CLIENTS must be a positive integer, not '$clients'"
	posint "$secs" || die "TIME must be a positive number of seconds, not '$secs'"
	local jobs cores scale has_ext out=$SRV/pgbench.log rc=0
	cores=$(nproc 2>/dev/null || echo 1)
	jobs=$((clients < cores ? clients : cores))
	# pgbench gives a custom script's :scale only from -s
	scale=$(psql_q -c "SELECT CASE WHEN to_regclass('pgbench_branches') IS NOT NULL
	                               THEN (SELECT count(*) FROM pgbench_branches) END")
	has_ext=$(psql_q -c "SELECT count(*) FROM pg_extension WHERE extname = 'flexlock'")
	if [ "$has_ext" = 1 ]; then
		# (pg_stat_statements' first, so that both count the same run)
		psql_q -c "SELECT pg_stat_statements_reset() FROM pg_extension WHERE extname = 'pg_stat_statements'" \
			-c "SELECT flexlock_reset()" >/dev/null
	else
		has_ext=
	fi

	local args=(-n -f "$script" -c "$clients" -j "$jobs" -T "$secs")
	[ -n "$scale" ] && args+=(-s "$scale")
	# shellcheck disable=SC2206
	args+=(${given[PGBENCH_ARGS]:-})
	say "pgbench $(basename "$script"): $clients client$([ "$clients" = 1 ] || echo s), $secs s on the ${st[build]} build (variant ${st[variant]:-stock}${st[set]:+, SET=\"${st[set]}\"})${has_ext:+, lock statistics reset first}"
	conn
	"$INST/bin/pgbench" "${conn[@]}" "${args[@]}" postgres >"$out" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		local first
		first=$(grep -m1 -E '(error|ERROR|FATAL|invalid|could not)' "$out" | cut -c1-200 || true)
		case $first in
		*pgbench_*"does not exist"*) first+="; load pgbench tables with 'make server SCALE=N'" ;;
		esac
		die "pgbench failed${first:+: $first} (its output: $(rel "$out"))"
	fi
	local txns tps lat failed
	txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$out")
	lat=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$out")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	[ -n "$txns" ] && [ -n "$tps" ] ||
		die "pgbench's output has no transaction count or tps (PostgreSQL 18's wording): see $(rel "$out")"
	printf 'tps = %.0f (without initial connection time), latency average = %s ms, %s transactions, %s failed\n' \
		"$tps" "${lat:--}" "$txns" "${failed:-0}"
	if [ "$has_ext" = 1 ] && [ "$txns" -gt 0 ]; then
		{
			# the statements as tracked before anything of ours runs (in a
			# psql variable: make pgbench creates no table)
			echo "SELECT coalesce(json_agg(s), '[]') AS flexlock_run
				FROM flexlock_statements s WHERE flexlock_statements_tracking() \\gset"
			# (its statements section: the script's statements follow, by text)
			echo "SELECT * FROM flexlock_report($txns) WHERE section <> 'statements';"
			script_statements_sql "$script"
		} | "$INST/bin/psql" -X -q -v ON_ERROR_STOP=1 -P footer=off "${conn[@]}" -d postgres \
			2>"$SRV/statements.log" ||
			die "the lock profile failed: $(grep -m1 ERROR "$SRV/statements.log" || true) (log: $(rel "$SRV/statements.log"))"
		say "the same in SQL: SELECT * FROM flexlock_report($txns);  pgbench's output: $(rel "$out")"
	elif [ "$series" = no ]; then
		say "no lock profile: the ${st[build]} build has no lock statistics (BUILD=patched has)"
	fi
}

case ${1:-} in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
psql) cmd_psql ;;
pgbench) cmd_pgbench ;;
*) die "usage: server.sh start|stop|status|psql|pgbench (make server, stop, status, psql, pgbench)" ;;
esac
