# shellcheck shell=bash
# scripts/callgrind.sh — what `make overhead` and `make layering` share: the
# fixed single-client workloads, the data they run on, and the count of
# instructions of one single-user run under callgrind.  Sourced after lib.sh.

# Server settings of every counted run.
CG_SETTINGS=(-c fsync=off -c synchronous_commit=on -c autovacuum=off -c shared_buffers=128MB -c max_connections=20)

# cg_scripts DIR N_SELECT N_TPCB: DIR/select.sql and DIR/tpcb.sql, pgbench's
# select-only and TPC-B-like transactions with account, teller and branch ids
# from a fixed linear congruential sequence, one statement per line (single-
# user mode ends a query at a newline), and DIR/empty.sql.
cg_scripts() {
	local dir=$1 kind n
	for kind in select tpcb; do
		n=$2; [ "$kind" = tpcb ] && n=$3
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
		}' >"$dir/$kind.sql"
	done
	: >"$dir/empty.sql"
	chmod a+r "$dir"/*.sql
}

# cg_template BINDIR TEMPLATE PORT LOG: a data directory with pgbench's
# tables at scale 1, vacuumed and checkpointed; the server is stopped again
# (cg_cleanup stops it if we die meanwhile).
CG_RUNNING=""
cg_template() {
	local bin=$1 tmpl=$2 port=$3 log=$4 sock
	sock=$(mktemp -d /tmp/flexlock-callgrind-XXXXXX)
	chmod 777 "$sock"
	CG_RUNNING="$bin|$tmpl|$sock"
	run_logged "$log" "initdb of $(rel "$tmpl")" "" as_user "$bin/initdb" -D "$tmpl" --no-sync -A trust
	run_logged "$log.2" "start of $(rel "$tmpl")" "" as_user "$bin/pg_ctl" -D "$tmpl" -o "-p $port -k $sock -c listen_addresses=''" -w start
	run_logged "$log.3" "pgbench -i in $(rel "$tmpl")" "" as_user "$bin/pgbench" -h "$sock" -p "$port" -i -s 1 -q postgres
	run_logged "$log.4" "vacuum in $(rel "$tmpl")" "" as_user "$bin/psql" -h "$sock" -p "$port" -X -q -c "VACUUM ANALYZE" -c CHECKPOINT postgres
	run_logged "$log.5" "stop of $(rel "$tmpl")" "" as_user "$bin/pg_ctl" -D "$tmpl" -w stop
	CG_RUNNING=""
	rm -rf "$sock"
}
cg_cleanup() {
	local bin tmpl sock
	[ -n "$CG_RUNNING" ] || return 0
	IFS='|' read -r bin tmpl sock <<<"$CG_RUNNING"
	as_user "$bin/pg_ctl" -D "$tmpl" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$sock"
}

# cg_instructions POSTGRES TEMPLATE DATA SCRIPT OUT [VALGRIND OPTION...]:
# total instructions of one single-user run of SCRIPT in DATA, a fresh copy
# of TEMPLATE; the profile is OUT.out, the output OUT.log.
cg_instructions() {
	local postgres=$1 tmpl=$2 data=$3 script=$4 out=$5
	shift 5
	rm -rf "$data"
	as_user cp -a "$tmpl" "$data"
	as_user valgrind --tool=callgrind "$@" --callgrind-out-file="$out.out" \
		"$postgres" --single -D "$data" "${CG_SETTINGS[@]}" postgres \
		<"$script" >"$out.log" 2>&1 || die "callgrind run of $(rel "$script") failed (log: $(rel "$out.log"))"
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out.log" | tail -n1
}

# cg_machine: the machine, for a report.
cg_machine() {
	echo "$(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1), $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr); $(valgrind --version)"
}
