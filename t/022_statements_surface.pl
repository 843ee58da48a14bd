# t/022_statements_surface.pl — flexlock_statements where a
# pg_stat_statements user looks for things (issue 41, flexlock 1.4).
#
# 1. The update from 1.3 keeps the rows: an installed 1.3 reads them with
#    the new library, in its own shape (kind lwlock, *_time_ms); after
#    ALTER EXTENSION ... UPDATE the same rows read in 1.4's (wait_event_type
#    LWLock, *_time, failed_calls, stats_since).
# 2. A failed statement (item 4 of the issue): an UPDATE that waits 300 ms
#    for a row lock and then fails on lock_timeout keeps its wait and
#    counts a failed call, not a call; called again with the lock free it
#    counts a call; of two statements of one query id in one message, the
#    second failing, one call and one failed; an error inside a
#    transaction block is the failing
#    statement's, and its ROLLBACK a completed call (a utility statement,
#    whose query id pg_stat_statements, its hook running first, zeroes);
#    pgbench -M prepared's BEGIN and END count every call; with
#    flexlock.track = all a nested statement that fails counts its own
#    failed call and its caller's.  pg_stat_statements counts only the completed calls: the
#    join of the two finds the same calls.  Transactions that end inside a
#    top-level statement without an error (CALL and DO that commit and roll
#    back, an exception block's subtransaction) leave the statements inside
#    nested and the top-level statement one call; one that fails after its
#    caught error, in a SAVEPOINT, counts a failed call; after a ROLLBACK TO
#    that fails in a failed block (no abort follows it), the next statement
#    is a top-level call.
# 3. flexlock_statements_reset(userid, dbid, queryid), as
#    pg_stat_statements_reset(): one statement (both its toplevel rows), one
#    role's, and all, which alone zeroes dealloc and moves stats_reset.
# 4. A clean restart keeps every row (calls, stats_since, stats_reset); a
#    crash (a backend killed, shared memory reinitialized) starts empty;
#    flexlock.save = off does not keep them, and leaves no file behind.
#    (An immediate shutdown is a clean exit of the postmaster: it keeps
#    them, as pg_stat_statements does.)
# 5. Privileges, as pg_stat_statements': a role without pg_monitor reads the
#    views, sees its own statements' query ids and not other roles'; it
#    cannot reset.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('surface');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'flexlock, pg_stat_statements'\nautovacuum = off\n"
	  . "max_connections = 20\nrestart_after_crash = on\n");
$node->start;

# --- 1. the update from 1.3 keeps the rows ---------------------------------------

$node->safe_psql('postgres', q{
CREATE EXTENSION flexlock VERSION '1.3';
CREATE EXTENSION pg_stat_statements;
CREATE TABLE regress_t (a int);
INSERT INTO regress_t SELECT generate_series(1, 100);
SELECT flexlock_reset();
SELECT count(*) FROM regress_t;
});
my $qid = $node->safe_psql('postgres', q{SELECT flexlock_query_id('SELECT count(*) FROM regress_t')});
my $old = $node->safe_psql('postgres', qq{
	SELECT calls || ' ' || (lwlock_acquisitions > 0) || ' ' || (lwlock_hold_time_ms >= 0)
	  FROM flexlock_statements WHERE queryid = $qid});
is($old, '1 true true', '1: 1.3 reads a statement in its own shape with the new library');
is($node->safe_psql('postgres', qq{
	SELECT count(*) > 0 FROM flexlock_statement_locks WHERE queryid = $qid AND kind = 'lwlock'}),
	't', '1: ... and its locks by kind');
$node->safe_psql('postgres', 'ALTER EXTENSION flexlock UPDATE');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'flexlock'"),
	'1.5', '1: updated to 1.5 (the statements as in 1.4)');
is($node->safe_psql('postgres', qq{
	SELECT calls || ' ' || failed_calls || ' ' || (lwlock_acquisitions > 0) || ' ' || (lwlock_hold_time >= 0)
		   || ' ' || (stats_since <= now())
	  FROM flexlock_statements WHERE queryid = $qid}),
	'1 0 true true true', '1: the same statement in 1.4: calls, failed_calls, *_time, stats_since');
is($node->safe_psql('postgres', qq{
	SELECT string_agg(DISTINCT wait_event_type, ',' ORDER BY wait_event_type)
	  FROM flexlock_statement_locks WHERE queryid = $qid}),
	'LWLock,Lock', '1: its locks named as pg_stat_activity names them');

# --- 2. failed statements ------------------------------------------------------

$node->safe_psql('postgres', q{
SELECT flexlock_reset();
SELECT pg_stat_statements_reset();
});
# (a row lock: the wait comes in execution, after the statement is known;
# a relation lock's wait in parse analysis comes before it has a query id)
my $qid_upd = $node->safe_psql('postgres',
	q{SELECT flexlock_query_id('UPDATE regress_t SET a = a WHERE a = 1')});
my $holder = $node->background_psql('postgres');
$holder->query_safe('BEGIN; SELECT * FROM regress_t WHERE a = 1 FOR UPDATE');
my ($rc, $out, $err) = $node->psql('postgres', q{
SET lock_timeout = '300ms';
UPDATE regress_t SET a = a WHERE a = 1;
});
like($err, qr/canceling statement due to lock timeout/, '2: the UPDATE failed on lock_timeout');
is($node->safe_psql('postgres', qq{
	SELECT calls || ' ' || failed_calls || ' ' || hwlock_waits || ' ' || (hwlock_wait_time >= 250)
	  FROM flexlock_statements WHERE queryid = $qid_upd}),
	'0 1 1 true', '2: a failed call, with its wait of about 300 ms for the row');
$holder->query_safe('COMMIT');
$node->safe_psql('postgres', 'UPDATE regress_t SET a = a WHERE a = 1');
is($node->safe_psql('postgres', qq{
	SELECT calls || ' ' || failed_calls || ' ' || hwlock_waits FROM flexlock_statements WHERE queryid = $qid_upd}),
	'1 1 1', '2: called again with the row free: a call');

($rc, $out, $err) = $node->psql('postgres', q{
BEGIN;
SELECT count(*) FROM regress_t;
SELECT 1 / (a - a) FROM regress_t;
ROLLBACK;
}, on_error_stop => 0);
like($err, qr/division by zero/, '2: a statement failed in a transaction block');
my $qid_div = $node->safe_psql('postgres', q{SELECT flexlock_query_id('SELECT 1 / (a - a) FROM regress_t')});
my $qid_rb = $node->safe_psql('postgres', q{SELECT flexlock_query_id('ROLLBACK')});
is($node->safe_psql('postgres', qq{
	SELECT string_agg(calls || ' ' || failed_calls, ', ' ORDER BY o)
	  FROM flexlock_statements s
	  JOIN (VALUES (1, $qid), (2, $qid_div), (3, $qid_rb)) v(o, q) ON s.queryid = v.q}),
	'1 0, 0 1, 1 0', '2: in the block, the failing statement failed, the others completed');

# a statement that fails after a SAVEPOINT (its subtransaction aborts, not
# its transaction)
($rc, $out, $err) = $node->psql('postgres', q{
BEGIN;
SAVEPOINT s;
SELECT 1 / (a - a) FROM regress_t;
ROLLBACK TO s;
COMMIT;
}, on_error_stop => 0);
is($node->safe_psql('postgres', qq{
	SELECT calls || ' ' || failed_calls FROM flexlock_statements WHERE queryid = $qid_div}),
	'0 2', '2: after a SAVEPOINT, the failing statement failed');

# the extended protocol: the Execute of a portal whose ExecutorStart ran in
# its Bind fails; another's, in a transaction block, has its scan's locks
# (a scan of 133 pages), not the COMMIT after it
$node->safe_psql('postgres',
	'CREATE TABLE regress_big (a int); INSERT INTO regress_big SELECT generate_series(1, 30000)');
($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT 1 / (a - \$1) FROM regress_t WHERE a = 1 \\bind 1 \\g\n}
	  . qq{BEGIN;\nSELECT count(*) FROM regress_big WHERE a > \$1 \\bind 0 \\g\nCOMMIT;\n},
	on_error_stop => 0);
like($err, qr/division by zero/, '2: -M extended: the Execute failed');
is($node->safe_psql('postgres', q{
	SELECT calls || ' ' || failed_calls FROM flexlock_statements
	 WHERE queryid = flexlock_query_id('SELECT 1 / (a - $1) FROM regress_t WHERE a = 1')}),
	'0 1', '2: -M extended: a failed call');
is($node->safe_psql('postgres', q{
	SELECT string_agg(CASE WHEN o = 1 THEN s.calls || ' ' ELSE '' END
			 || (SELECT coalesce(sum(acquisitions), 0) >= 133 FROM flexlock_statement_locks l
				  WHERE l.queryid = s.queryid AND wait_event = 'BufferContent'), ', ' ORDER BY o)
	  FROM flexlock_statements s
	  JOIN (VALUES (1, flexlock_query_id('SELECT count(*) FROM regress_big WHERE a > $1')),
				   (2, flexlock_query_id('COMMIT'))) v(o, q) ON s.queryid = v.q}),
	'1 true, false',
	'2: -M extended, in a transaction block: the Execute\'s scan is the statement\'s, not the COMMIT\'s');

# EXECUTE is no statement of its own, as in pg_stat_statements: its
# prepared statement is
$node->safe_psql('postgres', q{
PREPARE regress_q AS SELECT max(a) FROM regress_t WHERE a > $1;
EXECUTE regress_q(0);
EXECUTE regress_q(1);
});
is($node->safe_psql('postgres', q{
	SELECT f.calls || ' ' || p.calls
	  FROM flexlock_statements f JOIN pg_stat_statements p USING (userid, dbid, toplevel, queryid)
	 WHERE p.query = 'PREPARE regress_q AS SELECT max(a) FROM regress_t WHERE a > $1'}),
	'2 2', '2: EXECUTE: the prepared statement\'s calls, as pg_stat_statements counts them');

# the same statement twice in one message, the second failing
# (psql -c: one message; psql reading a script sends each statement apart)
IPC::Run::run(
	[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c',
	  'SELECT 1 / (a - 0) FROM regress_t WHERE a = 1; SELECT 1 / (a - 1) FROM regress_t WHERE a = 1' ],
	'>', \$out, '2>', \$err);
like($err, qr/division by zero/, '2: the second of two statements of the same query id failed');
is($node->safe_psql('postgres', q{
	SELECT calls || ' ' || failed_calls FROM flexlock_statements
	 WHERE queryid = flexlock_query_id('SELECT 1 / (a - 0) FROM regress_t WHERE a = 1')}),
	'1 1', '2: ... a call and a failed call');

# track = all: a nested statement that fails, and its caller
$node->safe_psql('postgres', q{
CREATE FUNCTION regress_fail(n int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT count(*) FROM regress_t) / n;
END $$;
});
($rc, $out, $err) = $node->psql('postgres', q{
SET flexlock.track = 'all';
SET pg_stat_statements.track = 'all';
SELECT regress_fail(0);
}, on_error_stop => 0);
like($err, qr/division by zero/, '2: the function failed');
my $qid_f = $node->safe_psql('postgres', q{SELECT flexlock_query_id('SELECT regress_fail(0)')});
is($node->safe_psql('postgres', qq{
	SELECT calls || ' ' || failed_calls FROM flexlock_statements WHERE queryid = $qid_f AND toplevel}),
	'0 1', '2: track = all: the caller failed');
is($node->safe_psql('postgres', q{
	SELECT string_agg(calls || ' ' || failed_calls, ', ') FROM flexlock_statements WHERE NOT toplevel}),
	'0 1', '2: ... and its nested statement, in a row of its own');

# the join with pg_stat_statements: the same calls
my $join = $node->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE p.calls <> f.calls) || ' ' ||
		   max(p.calls) FILTER (WHERE queryid = $qid) || ' ' ||
		   count(*) FILTER (WHERE queryid IN ($qid_div, $qid_f))
	  FROM pg_stat_statements p JOIN flexlock_statements f USING (userid, dbid, toplevel, queryid)});
is($join, '0 1 0',
	'2: joined with pg_stat_statements, both count the same completed calls (pg_stat_statements no failed ones)');

# a utility statement of a cached plan (pgbench -M prepared), with
# pg_stat_statements loaded after flexlock: its query id, zeroed by
# pg_stat_statements, is found again (pg_stat_statements itself counts the
# first execution only)
$node->safe_psql('postgres', q{
	SELECT flexlock_statements_reset(0, 0, flexlock_query_id(q)) FROM (VALUES ('BEGIN'), ('END')) v(q)});
my $script = $node->basedir . '/begin_end.sql';
open(my $fh, '>', $script) or die "could not write $script: $!";
print $fh "BEGIN;\nSELECT 1;\nEND;\n";
close($fh);
$node->command_ok(
	[ 'pgbench', '-n', '-M', 'prepared', '-t', '20', '-f', $script, '-h', $node->host,
	  '-p', $node->port, 'postgres' ],
	'2: pgbench -M prepared, BEGIN; SELECT 1; END');
is($node->safe_psql('postgres', q{
	SELECT string_agg(calls::text, ' ' ORDER BY q) FROM flexlock_statements
	  JOIN (VALUES (1, flexlock_query_id('BEGIN')), (2, flexlock_query_id('END'))) v(q, id) ON queryid = id}),
	'20 20', '2: ... BEGIN and END, prepared, count every call');

# a statement ended by a FATAL error: a backend terminated while it waits
$holder->query_safe('BEGIN; UPDATE regress_t SET a = a WHERE a = 1');
my $fatal_victim = $node->background_psql('postgres', on_error_stop => 0);
my $fatal_pid = $fatal_victim->query_safe('SELECT pg_backend_pid()');
$fatal_victim->query_until(qr/waiting/, "\\echo waiting\nSELECT * FROM regress_t WHERE a = 1 FOR SHARE;\n");
$node->poll_query_until('postgres',
	"SELECT wait_event = 'transactionid' FROM pg_stat_activity WHERE pid = $fatal_pid")
  or die 'the FOR SHARE did not wait';
$node->safe_psql('postgres', "SELECT pg_terminate_backend($fatal_pid)");
$node->poll_query_until('postgres', "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $fatal_pid")
  or die 'the backend did not exit';
eval { $fatal_victim->quit };
$holder->query_safe('COMMIT');
is($node->safe_psql('postgres', q{
	SELECT calls || ' ' || failed_calls || ' ' || hwlock_waits FROM flexlock_statements
	 WHERE queryid = flexlock_query_id('SELECT * FROM regress_t WHERE a = 1 FOR SHARE')}),
	'0 1 1', '2: terminated while it waited: a failed call, with its wait');

# the subcommands of a utility statement (a primary key's index, a
# sequence) have no query id: no rows, with track = all
$node->safe_psql('postgres', 'SELECT flexlock_statements_reset()');
$node->safe_psql('postgres', q{
SET flexlock.track = 'all';
CREATE TABLE regress_pk (a int PRIMARY KEY, b serial);
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM flexlock_statements WHERE NOT toplevel'),
	'0', '2: track = all: CREATE TABLE\'s subcommands have no rows');

# transactions that end without an error inside a top-level statement:
# CALL and DO whose procedure commits and rolls back, and an exception
# block's subtransaction under a top-level SELECT.  The statements inside
# stay nested (no top-level row of their own), and the top-level statement
# counts one call: a top-level planner or executor hook runs without a
# PG_TRY and is set back by the abort that unwinds it, which neither of
# these aborts is; and a statement that fails after its function caught an
# error, in a SAVEPOINT's subtransaction, is unwound by the older one's
# abort.  Both levels of tracking.
$node->safe_psql('postgres', q{
CREATE TABLE regress_tc (a int);
CREATE PROCEDURE regress_tc_proc() LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO regress_tc VALUES (1);
  ROLLBACK;
  INSERT INTO regress_tc VALUES (2);
  COMMIT;
  INSERT INTO regress_tc VALUES (3);
END $$;
CREATE FUNCTION regress_tc_catch() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    INSERT INTO regress_tc VALUES (1 / 0);
  EXCEPTION WHEN division_by_zero THEN
    NULL;
  END;
  INSERT INTO regress_tc VALUES (4);
  RETURN 1;
END $$;
});
for my $track ('top', 'all')
{
	$node->safe_psql('postgres', 'SELECT flexlock_statements_reset()');
	($rc, $out, $err) = $node->psql('postgres', qq{
SET flexlock.track = '$track';
CALL regress_tc_proc();
DO \$\$BEGIN INSERT INTO regress_tc VALUES (5); ROLLBACK; INSERT INTO regress_tc VALUES (6); END\$\$;
SELECT regress_tc_catch();
SELECT regress_tc_catch();
});
	is($rc, 0, "2: track = $track: CALL and DO that end transactions, a caught error");
	# a statement that fails after its caught error, in a SAVEPOINT's
	# subtransaction: the abort that unwinds it is of a subtransaction
	# older than the caught one
	($rc, $out, $err) = $node->psql('postgres', qq{
SET flexlock.track = '$track';
BEGIN;
SAVEPOINT s;
SELECT regress_tc_catch() / 0;
ROLLBACK TO s;
SELECT regress_tc_catch();
COMMIT;
}, on_error_stop => 0);
	like($err, qr/division by zero/, "2: track = $track: after a caught error, the statement failed");
	is($node->safe_psql('postgres', q{
		SELECT calls || ' ' || failed_calls FROM flexlock_statements
		 WHERE toplevel AND queryid = flexlock_query_id('SELECT regress_tc_catch() / 0')}),
		'0 1', "2: track = $track: ... a failed call");
	is($node->safe_psql('postgres', q{
		SELECT string_agg(calls || ' ' || failed_calls, ', ' ORDER BY o)
		  FROM flexlock_statements
		  JOIN (VALUES (1, flexlock_query_id('CALL regress_tc_proc()')),
					   (2, flexlock_query_id('SELECT regress_tc_catch()'))) v(o, q) ON queryid = q
		 WHERE toplevel}),
		'1 0, 3 0', "2: track = $track: the CALL one call, the SELECT three, none failed");
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM flexlock_statements
		 WHERE toplevel AND queryid = flexlock_query_id('INSERT INTO regress_tc VALUES (1)')}),
		'0', "2: track = $track: the INSERTs inside have no top-level row");
	is($node->safe_psql('postgres', q{
		SELECT coalesce(string_agg(calls || ' ' || failed_calls, ', '), 'none') FROM flexlock_statements
		 WHERE NOT toplevel AND queryid = flexlock_query_id('INSERT INTO regress_tc VALUES (1)')}),
		$track eq 'all' ? '9 0' : 'none',
		"2: track = $track: ... and with track = all their own nested row (9 calls: the caught error's INSERT is another statement)");
}

# a transaction statement that fails where no abort follows: ROLLBACK TO a
# savepoint that does not exist, in a block that has failed already (found
# by a review); the statements after it are top-level statements again
($rc, $out, $err) = $node->psql('postgres', q{
BEGIN;
SELECT 1 / 0;
ROLLBACK TO SAVEPOINT regress_nosuch;
ROLLBACK;
SELECT 4343 AS regress_after_failed_block;
}, on_error_stop => 0);
like($err, qr/savepoint "regress_nosuch" does not exist|current transaction is aborted/,
	'2: ROLLBACK TO a missing savepoint in a failed block failed');
is($node->safe_psql('postgres', q{
	SELECT calls || ' ' || failed_calls FROM flexlock_statements
	 WHERE toplevel AND queryid = flexlock_query_id('SELECT 4343 AS regress_after_failed_block')}),
	'1 0', '2: ... and the statement after the ROLLBACK is a top-level call');

# --- 3. flexlock_statements_reset ----------------------------------------------

$node->safe_psql('postgres', q{
CREATE ROLE regress_reader LOGIN;
GRANT SELECT ON regress_t TO regress_reader;
CREATE FUNCTION regress_count() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
  SELECT count(*) INTO r FROM regress_t;
  RETURN r;
END $$;
SELECT flexlock_reset();
});
my $reset_before = $node->safe_psql('postgres', 'SELECT stats_reset FROM flexlock_statements_info');
$node->safe_psql('postgres', q{
SET flexlock.track = 'all';
SELECT regress_fail(1);
SELECT regress_count();
SELECT count(*) FROM regress_t;
SELECT 2;
});
$node->safe_psql('postgres', 'SELECT count(*) FROM regress_t', extra_params => [ '-U', 'regress_reader' ]);
my $rows = sub {
	$node->safe_psql('postgres', qq{
		SELECT coalesce(string_agg(queryid::text || ':' || toplevel || ':' || userid::regrole, ' '
				ORDER BY queryid, toplevel, userid::regrole::text), '')
		  FROM flexlock_statements WHERE queryid IN ($qid, $qid_f, flexlock_query_id('SELECT 2'))});
};
like($rows->(), qr/^(?=.*\Q$qid:true:regress_reader\E)(?=.*\Q$qid:false:\E)(?=.*\Q$qid:true:\E)/,
	'3: SELECT count(*) FROM regress_t: nested and top level, of two roles');
my $ts = $node->safe_psql('postgres',
	"SELECT flexlock_statements_reset(0, 0, $qid) BETWEEN now() AND clock_timestamp()");
is($ts, 't', '3: flexlock_statements_reset(0, 0, q) returns the time of the reset');
unlike($rows->(), qr/\Q$qid:\E/, '3: ... and removed every row of q, toplevel or not, of every role');
like($rows->(), qr/\Q$qid_f:true:\E/, '3: ... and no other');
is($node->safe_psql('postgres', 'SELECT stats_reset FROM flexlock_statements_info'), $reset_before,
	'3: ... and left stats_reset');
$node->safe_psql('postgres', q{SELECT flexlock_statements_reset('regress_reader'::regrole)});
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM flexlock_statements WHERE userid = 'regress_reader'::regrole}),
	'0', '3: flexlock_statements_reset(userid) removes the role\'s rows');
$node->safe_psql('postgres', 'SELECT flexlock_statements_reset()');
is($node->safe_psql('postgres', qq{
	SELECT dealloc || ' ' || (stats_reset > '$reset_before') FROM flexlock_statements_info}),
	'0 true', '3: flexlock_statements_reset() removes all, and moves stats_reset');
# A backend remembers the entries it wrote (statements.c, entry_find()): one
# that another backend removed meanwhile is not written to again (its memory
# is free, and nothing took it over here: the resetter's rows exist already),
# and the statement gets a new entry with the calls since
my $q_cached = 'SELECT count(*) > 0 FROM regress_t';
my $s = $node->background_psql('postgres');
my $r = $node->background_psql('postgres');
my $qid_cached = $node->safe_psql('postgres', "SELECT flexlock_query_id('$q_cached')");
$r->query_safe("SELECT flexlock_statements_reset(0, 0, $qid_cached)");
$s->query_safe($q_cached) for 1 .. 2;
$r->query_safe("SELECT flexlock_statements_reset(0, 0, $qid_cached)");
$s->query_safe($q_cached) for 1 .. 3;
is($node->safe_psql('postgres', qq{
	SELECT sum(calls) FROM flexlock_statements WHERE queryid = $qid_cached}),
	'3', '3: a statement reset while its backend runs it is counted anew there');
$s->quit;
$r->quit;

# --- 4. across restarts ----------------------------------------------------------

$node->safe_psql('postgres', 'SELECT count(*) FROM regress_t') for 1 .. 3;
my $snapshot_sql = qq{
	SELECT calls || ' ' || stats_since || ' ' || (SELECT stats_reset FROM flexlock_statements_info)
	  FROM flexlock_statements WHERE queryid = $qid AND toplevel};
my $before = $node->safe_psql('postgres', $snapshot_sql);
like($before, qr/^3 /, '4: three calls before the restart');
$node->restart;
is($node->safe_psql('postgres', $snapshot_sql), $before,
	'4: a clean restart keeps the row: calls, stats_since, stats_reset');
ok(!-e $node->data_dir . '/pg_stat/flexlock_statements.stat', '4: the file read is removed');
# (a backend killed: the postmaster reinitializes shared memory)
my $victim = $node->background_psql('postgres', on_error_stop => 0);
my $vpid = $victim->query_safe('SELECT pg_backend_pid()');
my $log_at = -s $node->logfile;
kill 'KILL', $vpid;
$node->wait_for_log(qr/all server processes terminated; reinitializing/, $log_at);
$node->poll_query_until('postgres', 'SELECT true') or die 'the server did not come back';
$victim->{run}->kill_kill;
is($node->safe_psql('postgres', "SELECT count(*) FROM flexlock_statements WHERE queryid = $qid"),
	'0', '4: after a crash, nothing is restored');
$node->safe_psql('postgres', 'SELECT count(*) FROM regress_t');
$node->append_conf('postgresql.conf', "flexlock.save = off\n");
$node->reload;
$node->restart;
is($node->safe_psql('postgres', "SELECT count(*) FROM flexlock_statements WHERE queryid = $qid"),
	'0', '4: flexlock.save = off: a clean restart keeps nothing');
ok(!-e $node->data_dir . '/pg_stat/flexlock_statements.stat', '4: ... and leaves no file');

# --- 5. privileges ---------------------------------------------------------------

$node->safe_psql('postgres', 'SELECT count(*) FROM regress_t');
$node->safe_psql('postgres', 'SELECT count(*) FROM regress_t', extra_params => [ '-U', 'regress_reader' ]);
my $seen = $node->safe_psql('postgres', q{
	SELECT bool_and(queryid IS NOT NULL) FILTER (WHERE userid = 'regress_reader'::regrole) || ' ' ||
		   bool_or(queryid IS NOT NULL) FILTER (WHERE userid <> 'regress_reader'::regrole) || ' ' ||
		   (SELECT count(*) > 0 FROM flexlock_statement_locks WHERE queryid IS NULL) || ' ' ||
		   (SELECT count(*) FROM flexlock_statements_info)
	  FROM flexlock_statements},
	extra_params => [ '-U', 'regress_reader' ]);
is($seen, 'true false true 1',
	'5: without pg_monitor: the own query ids, no other role\'s, by lock too, and the info');
($rc, $out, $err) = $node->psql('postgres', 'SELECT flexlock_statements_reset()',
	extra_params => [ '-U', 'regress_reader' ]);
like($err, qr/permission denied for function flexlock_statements_reset/, '5: resetting is the superuser\'s');

$node->stop;
done_testing();
