# t/020_statements.pl — lock events per statement and per plan node
# (flexlock 1.3, issue 35).
#
# (a) A SELECT that waits 1 s for a relation lock in parse analysis, before
#     its query id exists: the wait is its statement's (one relation lock
#     wait of at least 1 s), none is under query id 0.
# (b) pgbench's TPC-B-like script, scale 1, 8 clients, begun with
#     WALWriteLock held until a committer sleeps on it (test module
#     flexlock_inject): every statement has a row, the UPDATEs of
#     pgbench_tellers and pgbench_branches carry the transactionid waits, END
#     the WALWrite sleeps; a one-statement
#     autocommit script (insert-1000) has its commit's WALWrite and
#     WALInsert in the INSERT's commit rows.
# (c) Sessions of their own roles run transactions, autocommit statements,
#     errors, prepared statements and the extended protocol: each session's
#     top-level statement rows (query id 0 included) add up to its flexlock_backends
#     and flexlock_hwlock_backends totals, counter by counter; the fourth
#     with flexlock.track = all, running the functions of (e).
# (d) EXPLAIN (ANALYZE, LOCKS): an index scan's BufferContent shared
#     acquisitions at the index scan node; an INSERT that sleeps on a leaf
#     held by another session (injection point btree-leaf-locked) shows the
#     sleep at its ModifyTable node; without LOCKS nothing is shown.
# (e) flexlock.track = all: a plpgsql function's statements, a DO block's,
#     have rows of their own (toplevel false) and their top-level caller's
#     row includes their events, as pg_stat_statements' does: an UPDATE
#     waiting for a row has the wait, and so has its caller (with track =
#     top, the caller alone has it); a nested statement that fails,
#     caught or not, keeps its events up to the error, without a call, and
#     leaves the frames as they were; 40 levels of recursion, 32 tracked.
# And flexlock_report()'s section "statements", the limit of
# flexlock.max_statements with its deallocations, flexlock_reset(), and the
# query ids of other roles' statements hidden from roles without
# pg_read_all_stats.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use FlexlockForce;
use IPC::Run;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('statements');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'flexlock'\n"
	  . "max_connections = 40\nautovacuum = off\nlock_stats_hold_sample = 10\n"
	  # (room for every statement up to the check of the limit)
	  . "flexlock.max_statements = 200\n"
	  # commits that flush, so that committers queue on WALWrite
	  . "fsync = on\nsynchronous_commit = on\n");
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION flexlock; CREATE EXTENSION injection_points; CREATE EXTENSION flexlock_inject;');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'flexlock'"),
	'1.5', 'flexlock 1.5');
$node->command_ok([ 'pgbench', '-i', '-s', '1', '-q', '-d', $node->connstr('postgres') ],
	'pgbench tables at scale 1');

# The query id of a statement: what pg_stat_activity shows for a session
# that ran it last (the id of an idle session's last statement).
my $probe = $node->background_psql('postgres');
my $probe_pid = $probe->query_safe('SELECT pg_backend_pid()');

sub query_id
{
	my ($sql) = @_;
	$probe->query_safe($sql);
	return $node->safe_psql('postgres',
		"SELECT query_id FROM pg_stat_activity WHERE pid = $probe_pid");
}

# --- (a) a relation lock wait in parse analysis --------------------------------

$node->safe_psql('postgres', 'CREATE TABLE regress_a (id int); SELECT flexlock_reset();');
my $holder = $node->background_psql('postgres');
my $waiter = $node->background_psql('postgres');
my $waiter_pid = $waiter->query_safe('SELECT pg_backend_pid()');
$holder->query_safe('BEGIN; LOCK TABLE regress_a IN ACCESS EXCLUSIVE MODE;');
$waiter->query_until(qr/selecting/, q{
	\echo selecting
	SELECT count(*) FROM regress_a;
});
$node->poll_query_until('postgres',
	"SELECT wait_event_type = 'Lock' AND wait_event = 'relation' FROM pg_stat_activity WHERE pid = $waiter_pid")
  or die 'the SELECT did not wait for the relation lock';
# still in parse analysis: no query id yet
is($node->safe_psql('postgres', "SELECT query_id IS NULL FROM pg_stat_activity WHERE pid = $waiter_pid"),
	't', '(a) the waiting SELECT has no query id yet');
sleep(1.1);
$holder->query_safe('COMMIT');
is($waiter->query_safe('SELECT 1'), "0\n1", '(a) the SELECT got its lock and ran');
my $qid_a = query_id('SELECT count(*) FROM regress_a');
my ($waits, $wait_ms, $calls) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT hwlock_waits, hwlock_wait_time, calls FROM flexlock_statements WHERE queryid = $qid_a});
is($waits, 1, '(a) the SELECT\'s row has one heavyweight lock wait');
cmp_ok($wait_ms, '>=', 1000, "(a) ... of at least 1 s ($wait_ms ms)");
is($node->safe_psql('postgres', qq{
	SELECT sleeps || ' ' || mode FROM flexlock_statement_locks
	 WHERE queryid = $qid_a AND wait_event_type = 'Lock' AND wait_event = 'relation' AND sleeps > 0}),
	'1 AccessShareLock', '(a) ... for the relation, in AccessShareLock');
is($node->safe_psql('postgres',
		'SELECT coalesce(sum(hwlock_waits + commit_hwlock_waits), 0) FROM flexlock_statements WHERE queryid = 0'),
	'0', '(a) query id 0 has no heavyweight lock wait');
$_->quit for ($holder, $waiter);

# --- (b) pgbench: TPC-B-like at scale 1 with 8 clients -----------------------------

my %tpcb = (
	begin => 'BEGIN',
	accounts => 'UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1',
	select => 'SELECT abalance FROM pgbench_accounts WHERE aid = 1',
	tellers => 'UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1',
	branches => 'UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1',
	history => 'INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 1, 1, CURRENT_TIMESTAMP)',
	end => 'END');
my %qid;
$qid{$_} = query_id($tpcb{$_}) for grep { $_ ne 'begin' && $_ ne 'end' } keys %tpcb;
$qid{begin} = query_id('BEGIN');
$qid{end} = query_id('END');
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
# At scale 1 every transaction updates the one branch row, so commits come
# one at a time and a committer seldom finds another flushing: a WALWrite
# sleep of its own is a matter of chance (none in four runs on one machine).
# So the run starts with WALWriteLock held by H (flexlock_inject_hold_lwlock,
# stopped at its injection point) until a pgbench client sleeps on it in its
# commit and another waits for that committer's branch row; then H lets go
# and the run goes on for its 5 s.  What is checked is where the sleeps land.
my $walwrite_holder = hold_lwlock($node, 'WALWrite');
my ($pgb_out, $pgb_err) = ('', '');
my $pgb = IPC::Run::start(
	[ 'pgbench', '--no-vacuum', '--client=8', '--jobs=2', '--time=5', '--builtin=tpcb-like',
		$node->connstr('postgres') . ' application_name=tpcb' ],
	'>' => \$pgb_out, '2>' => \$pgb_err);
ok( $node->poll_query_until('postgres', q{
		SELECT count(*) FILTER (WHERE wait_event = 'WALWrite') > 0
		   AND count(*) FILTER (WHERE wait_event = 'transactionid' AND query LIKE 'UPDATE pgbench_branches%') > 0
		  FROM pg_stat_activity WHERE application_name = 'tpcb'}),
	'(b) with WALWriteLock held, a committer sleeps on it and another client waits for its branch row');
release_lwlock($node, $walwrite_holder);
$pgb->finish;
like($pgb_out, qr/processed: [1-9]/, '(b) pgbench TPC-B-like, 8 clients, 5 s');
is($pgb_err, '', '(b) ... without an error');

my %row;
for my $k (sort keys %tpcb)
{
	my $r = $node->safe_psql('postgres', qq{
		SELECT calls, lwlock_acquisitions,
			   (SELECT coalesce(sum(sleeps), 0) FROM flexlock_statement_locks l
				 WHERE l.queryid = s.queryid AND wait_event_type = 'Lock' AND wait_event = 'transactionid'),
			   (SELECT coalesce(sum(sleeps), 0) FROM flexlock_statement_locks l
				 WHERE l.queryid = s.queryid AND NOT commit AND wait_event_type = 'LWLock' AND wait_event = 'WALWrite'),
			   commit_lwlock_acquisitions
		  FROM flexlock_statements s WHERE queryid = $qid{$k}});
	my ($calls, $lw, $xid, $walw, $commit) = split /\|/, $r;
	$row{$k} = { calls => $calls // 0, lw => $lw // 0, xid => $xid // 0, walwrite => $walw // 0,
		commit => $commit // 0 };
	cmp_ok($row{$k}{calls}, '>', 100, "(b) $k has a row ($row{$k}{calls} calls, $row{$k}{lw} LWLock acquisitions)");
}
my ($all_xid, $all_walw) = split /\|/, $node->safe_psql('postgres', q{
	SELECT coalesce(sum(sleeps) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'transactionid'), 0),
		   coalesce(sum(sleeps) FILTER (WHERE wait_event_type = 'LWLock' AND wait_event = 'WALWrite'), 0)
	  FROM flexlock_statement_locks});
note("(b) transactionid waits: all $all_xid, tellers $row{tellers}{xid}, branches $row{branches}{xid}; "
	  . "WALWrite sleeps: all $all_walw, END $row{end}{walwrite}");
cmp_ok($all_xid, '>', 0, '(b) the run waited on transaction ids');
# (an UPDATE of pgbench_accounts may meet another on the same account, rarely)
cmp_ok(($row{tellers}{xid} + $row{branches}{xid}) / $all_xid, '>=', 0.95,
	'(b) the UPDATEs of pgbench_tellers and pgbench_branches carry the transactionid waits');
cmp_ok($row{branches}{xid}, '>', 0, '(b) ... the branch row, the hottest, among them');
cmp_ok($all_walw, '>', 0, '(b) the run slept on WALWrite');
# (a statement that fills the WAL buffers, or evicts a dirty buffer, may
# write WAL too, rarely: one such sleep is allowed beyond the 10%, for the
# runs that had few)
cmp_ok($row{end}{walwrite}, '>=', 0.9 * $all_walw - 1,
	'(b) END carries the WALWrite sleeps, in its own columns (the commit is its work)');
cmp_ok($row{end}{walwrite}, '>', 0, '(b) ... at least one');
is(join(' ', map { $row{$_}{commit} } sort keys %tpcb), '0 0 0 0 0 0 0',
	'(b) no statement of an explicit transaction has commit rows');

# insert-1000: one INSERT per transaction, in autocommit
$node->safe_psql('postgres', slurp_file("$ENV{FLEXLOCK_TOP}/bench-scripts/workloads/insert-1000.init.sql"));
my $insert = slurp_file("$ENV{FLEXLOCK_TOP}/bench-scripts/workloads/insert-1000.sql");
$insert =~ s/^--.*\n//mg;
$insert =~ s/;\s*$//;
my $qid_insert = query_id($insert);
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->pgbench('--no-vacuum --client=4 --jobs=2 --transactions=50',
	0, [qr/processed: 200/], [qr/^$/], '(b) pgbench insert-1000, 4 clients',
	{ 'insert-1000' => $insert });
my ($ins_calls, $c_walw, $c_walins, $s_walw, $c_acq) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT s.calls,
		   (SELECT sum(acquisitions) FROM flexlock_statement_locks l WHERE l.queryid = s.queryid
			   AND commit AND wait_event_type = 'LWLock' AND wait_event = 'WALWrite'),
		   (SELECT sum(acquisitions) FROM flexlock_statement_locks l WHERE l.queryid = s.queryid
			   AND commit AND wait_event_type = 'LWLock' AND wait_event = 'WALInsert'),
		   (SELECT coalesce(sum(acquisitions), 0) FROM flexlock_statement_locks l WHERE l.queryid = s.queryid
			   AND NOT commit AND wait_event_type = 'LWLock' AND wait_event = 'WALWrite'),
		   s.commit_lwlock_acquisitions
	  FROM flexlock_statements s WHERE s.queryid = $qid_insert});
is($ins_calls, 200, '(b) insert-1000: 200 calls of the INSERT');
cmp_ok($c_walw, '>=', 100, "(b) insert-1000: WALWrite in the INSERT's commit rows ($c_walw)");
cmp_ok($c_walins, '>=', 200, "(b) insert-1000: WALInsert in the INSERT's commit rows ($c_walins)");
cmp_ok($c_acq, '>=', $c_walw + $c_walins, '(b) insert-1000: ... and in its commit_ columns');
# (the commit of the flexlock_reset() before is the other)
cmp_ok($node->safe_psql('postgres', qq{
	SELECT sum(commit_lwlock_acquisitions) FILTER (WHERE queryid = $qid_insert)
		   / sum(commit_lwlock_acquisitions) FROM flexlock_statements}),
	'>=', 0.95, '(b) insert-1000: the commit rows are the INSERT\'s');
note("(b) insert-1000: WALWrite outside the commit (a full WAL buffer written by the INSERT): $s_walw");

# --- (c) the statement rows add up to the per-backend totals -------------------

$node->safe_psql('postgres', q{
	CREATE ROLE regress_c1 LOGIN; CREATE ROLE regress_c2 LOGIN; CREATE ROLE regress_c3 LOGIN;
	GRANT ALL ON ALL TABLES IN SCHEMA public TO regress_c1, regress_c2, regress_c3;
	GRANT CREATE ON SCHEMA public TO regress_c1, regress_c2, regress_c3;
	SELECT flexlock_reset();});
# The fourth tracks nested statements: flexlock.track = all, set for its
# role by a superuser, as for any role.  regress_f's SELECT fails for i = 0
# (in the executor, nested: not caught); regress_g's UPDATE fails and is
# caught by its EXCEPTION block; regress_w's UPDATE waits for a row;
# regress_r recurses n levels deep.
$node->safe_psql('postgres', q{
	CREATE ROLE regress_c4 LOGIN;
	GRANT ALL ON ALL TABLES IN SCHEMA public TO regress_c4;
	ALTER ROLE regress_c4 SET flexlock.track = 'all';
	CREATE FUNCTION regress_f(i int) RETURNS int LANGUAGE plpgsql AS $$
	DECLARE
	  r int;
	BEGIN
	  SELECT abalance / i INTO r FROM pgbench_accounts WHERE aid = 1 + i;
	  UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1 + i % 10;
	  RETURN r;
	END
	$$;
	CREATE FUNCTION regress_g(i int) RETURNS int LANGUAGE plpgsql AS $$
	DECLARE
	  r int;
	BEGIN
	  BEGIN
	    UPDATE pgbench_tellers SET tbalance = tbalance / (tid - tid) WHERE tid = i;
	  EXCEPTION WHEN division_by_zero THEN
	    r := -1;
	  END;
	  SELECT abalance INTO r FROM pgbench_accounts WHERE aid = i;
	  RETURN r;
	END
	$$;
	CREATE FUNCTION regress_w() RETURNS int LANGUAGE plpgsql AS $$
	BEGIN
	  UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1;
	  RETURN 1;
	END
	$$;
	CREATE FUNCTION regress_t() RETURNS int LANGUAGE plpgsql AS $$
	BEGIN
	  BEGIN
	    UPDATE pgbench_branches SET bbalance = bbalance - 1 WHERE bid = 1;
	  EXCEPTION WHEN lock_not_available THEN
	    RETURN -1;
	  END;
	  RETURN 1;
	END
	$$;
	CREATE FUNCTION regress_r(n int) RETURNS int LANGUAGE plpgsql AS $$
	DECLARE
	  r int;
	BEGIN
	  IF n = 0 THEN
	    RETURN 0;
	  END IF;
	  SELECT regress_r(n - 1) + 1 INTO r;
	  RETURN r;
	END
	$$;
	SELECT flexlock_reset();});
my @c;
my @cpid;
for my $i (1 .. 4)
{
	my $s = $node->background_psql('postgres', on_error_stop => 0,
		connstr => $node->connstr('postgres') . " user=regress_c$i");
	push @c, $s;
	push @cpid, $s->query_safe('SELECT pg_backend_pid()');
}
for my $round (1 .. 3)
{
	for my $i (0 .. 2)
	{
		my $s = $c[$i];
		my $id = $round * 10 + $i;
		$s->query_safe(qq{BEGIN;
			UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = $id;
			SELECT abalance FROM pgbench_accounts WHERE aid = $id;
			UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1 + $i;
			INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, $id, 1, now());
			END;});
		$s->query_safe("INSERT INTO foo SELECT generate_series(1, 100)");
		$s->query_safe("SELECT count(*) FROM pgbench_branches; SELECT $id");
		# an error (BackgroundPsql keeps its message until cleared)
		$s->query(q{SELECT 1/0});
		$s->{stderr} = '';
		$s->query_safe("PREPARE regress_p$round AS SELECT aid FROM pgbench_accounts WHERE aid = \$1");
		$s->query_safe("EXECUTE regress_p$round($id)");
		$s->query_safe("SELECT abalance FROM pgbench_accounts WHERE aid = \$1 \\bind $id \\g");
		$s->query_safe("SET client_min_messages = warning; CREATE TEMP TABLE IF NOT EXISTS regress_tmp (a int); INSERT INTO regress_tmp VALUES ($id)");
	}
	# nested statements, their own with flexlock.track = all; errors in
	# the top-level statement's planning, in a nested statement (not
	# caught), and in a nested statement caught by the function
	$c[3]->query_safe("SELECT regress_f($round)");
	$c[3]->query_safe("BEGIN; SELECT regress_f($round + 10); COMMIT;");
	$c[3]->query(q{SELECT regress_f(1 / 0)});
	$c[3]->{stderr} = '';
	$c[3]->query(q{SELECT regress_f(0)});
	$c[3]->{stderr} = '';
	$c[3]->query_safe("SELECT regress_g($round)");
	$c[3]->query_safe("SELECT $round");
	$c[3]->query_safe('DO $$BEGIN PERFORM count(*) FROM pgbench_branches; END$$');
}
# 40 levels deep: the first NESTED_MAX (32) have their own frames
$c[3]->query_safe('SELECT regress_r(40)');

# A nested UPDATE that waits for a row that H has updated: in session 4
# (flexlock.track = all) and in session 1 (top)
my $wait_holder = $node->background_psql('postgres');
for my $i (3, 0)
{
	$wait_holder->query_safe('BEGIN; UPDATE pgbench_branches SET bbalance = bbalance WHERE bid = 1');
	$c[$i]->query_until(qr/calling/, "\\echo calling\nSELECT regress_w();\n\\echo called\n");
	$node->poll_query_until('postgres',
		"SELECT wait_event = 'transactionid' FROM pg_stat_activity WHERE pid = $cpid[$i]")
	  or die "session @{[$i + 1]} did not wait for the row";
	usleep(300_000);
	$wait_holder->query_safe('COMMIT');
	pump_until($c[$i]->{run}, $c[$i]->{timeout}, \$c[$i]->{stdout}, qr/called/)
	  or die "session @{[$i + 1]}: regress_w() did not return";
	$c[$i]->{stdout} = '';
}
# ... and one that gives up waiting (lock_timeout), caught by regress_t
$wait_holder->query_safe('BEGIN; UPDATE pgbench_branches SET bbalance = bbalance WHERE bid = 1');
is($c[3]->query_safe(q{SET lock_timeout = '400ms'; SELECT regress_t(); RESET lock_timeout}), '-1',
	'(e) regress_t()\'s UPDATE waited 400 ms for the row and gave up');
$wait_holder->query_safe('COMMIT');
$wait_holder->quit;

# Each session's rows against its process's counters, counter by counter;
# first a statement in each session after 1.1 s idle, so that a statistics
# report it made while idle (the idle timeout) is charged (to query id 0).
# flexlock's own writing of the rows (its hash table lock) is in no row:
# the tranche flexlock_statements is compared apart.
sub totals_differ
{
	my ($i) = @_;
	return $node->safe_psql('postgres', qq{
		WITH b AS (
		  SELECT sum(acquire_shared) AS shared, sum(acquire_exclusive) AS exclusive,
				 sum(wait_until_free) AS wuf, sum(waits) AS sleeps,
				 round(sum(wait_time_ms)::numeric, 3) AS sleep_ms,
				 round(sum(hold_shared_ms + hold_exclusive_ms)::numeric, 3) AS hold_ms
			FROM flexlock_backends($cpid[$i]) WHERE tranche <> 'flexlock_statements'),
		h AS (
		  SELECT sum(fastpath) AS fastpath, sum(shared_table) AS shared_table, sum(local) AS local,
				 sum(waits) AS waits, round(sum(wait_time_ms)::numeric, 3) AS wait_ms
			FROM flexlock_hwlock_backends($cpid[$i])),
		s AS (
		  SELECT sum(acquisitions) FILTER (WHERE wait_event_type = 'LWLock' AND mode = 'shared') AS shared,
				 sum(acquisitions) FILTER (WHERE wait_event_type = 'LWLock' AND mode = 'exclusive') AS exclusive,
				 sum(acquisitions) FILTER (WHERE wait_event_type = 'LWLock' AND mode = 'wait_until_free') AS wuf,
				 sum(sleeps) FILTER (WHERE wait_event_type = 'LWLock') AS sleeps,
				 round(coalesce(sum(sleep_time) FILTER (WHERE wait_event_type = 'LWLock'), 0)::numeric, 3) AS sleep_ms,
				 round(coalesce(sum(hold_time) FILTER (WHERE wait_event_type = 'LWLock'), 0)::numeric, 3) AS hold_ms,
				 sum(fastpath) FILTER (WHERE wait_event_type = 'Lock') AS fastpath,
				 sum(shared_table) FILTER (WHERE wait_event_type = 'Lock') AS shared_table,
				 sum(acquisitions - fastpath - shared_table) FILTER (WHERE wait_event_type = 'Lock') AS local,
				 sum(sleeps) FILTER (WHERE wait_event_type = 'Lock') AS waits,
				 round(coalesce(sum(sleep_time) FILTER (WHERE wait_event_type = 'Lock'), 0)::numeric, 3) AS wait_ms,
				 count(*) FILTER (WHERE wait_event = '(other)') AS other
			FROM flexlock_statement_locks WHERE userid = 'regress_c@{[$i + 1]}'::regrole
			 AND toplevel AND wait_event <> 'flexlock_statements')
		SELECT concat_ws(', ',
				 CASE WHEN s.other > 0 THEN 'rows that did not fit' END,
				 CASE WHEN s.shared IS DISTINCT FROM b.shared THEN format('shared %s/%s', s.shared, b.shared) END,
				 CASE WHEN s.exclusive IS DISTINCT FROM b.exclusive THEN format('exclusive %s/%s', s.exclusive, b.exclusive) END,
				 CASE WHEN coalesce(s.wuf, 0) <> b.wuf THEN format('wait_until_free %s/%s', s.wuf, b.wuf) END,
				 CASE WHEN coalesce(s.sleeps, 0) <> b.sleeps THEN format('sleeps %s/%s', s.sleeps, b.sleeps) END,
				 CASE WHEN abs(s.sleep_ms - b.sleep_ms) > 0.002 THEN format('sleep_ms %s/%s', s.sleep_ms, b.sleep_ms) END,
				 CASE WHEN abs(s.hold_ms - b.hold_ms) > 0.002 THEN format('hold_ms %s/%s', s.hold_ms, b.hold_ms) END,
				 CASE WHEN s.fastpath IS DISTINCT FROM h.fastpath THEN format('fastpath %s/%s', s.fastpath, h.fastpath) END,
				 CASE WHEN s.shared_table IS DISTINCT FROM h.shared_table THEN format('shared_table %s/%s', s.shared_table, h.shared_table) END,
				 CASE WHEN s.local IS DISTINCT FROM h.local THEN format('local %s/%s', s.local, h.local) END,
				 CASE WHEN coalesce(s.waits, 0) <> h.waits THEN format('waits %s/%s', s.waits, h.waits) END,
				 CASE WHEN abs(s.wait_ms - h.wait_ms) > 0.002 THEN format('wait_ms %s/%s', s.wait_ms, h.wait_ms) END)
		  FROM b, h, s});
}
# (SELECT 1 has the query id of SELECT $id above: its entry exists, so
# writing its rows takes the lock once, in shared mode)
usleep(1_100_000);
$_->query_safe('SELECT 1') for @c;
for my $i (0 .. 3)
{
	my $diff = totals_differ($i);
	for my $try (1 .. 3)
	{
		last if $diff eq '';
		# an idle-time statistics report after all (checking the sessions
		# before took longer than its interval): charge it and look again
		note("(c) session $i differs ($diff); once more after a statement");
		usleep(1_100_000);
		$c[$i]->query_safe('SELECT 1');
		$diff = totals_differ($i);
	}
	is($diff, '', "(c) session " . ($i + 1) . ": its statement rows add up to its per-backend totals");
	is($node->safe_psql('postgres', qq{
		SELECT (SELECT sum(acquire_shared + acquire_exclusive) FROM flexlock_backends($cpid[$i])
				 WHERE tranche = 'flexlock_statements') > 0
			 AND NOT EXISTS (SELECT FROM flexlock_statement_locks
				 WHERE userid = 'regress_c@{[$i + 1]}'::regrole AND wait_event = 'flexlock_statements')}),
		't', "(c) session " . ($i + 1) . ": flexlock's own writing of the rows is in its backend's totals, not in its rows");
}
cmp_ok($node->safe_psql('postgres', q{
	SELECT sum(lwlock_acquisitions) FROM flexlock_statements WHERE queryid = 0 AND userid = 'regress_c1'::regrole}),
	'>', 0, '(c) connection start and idle time are under query id 0');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM flexlock_statements WHERE userid <> 'regress_c4'::regrole AND NOT toplevel}),
	'0', '(c) flexlock.track = top: no nested rows');

# --- (e) flexlock.track = all: nested statements in rows of their own -----------

# a row of session 4: "calls lwlock_acquisitions>0 hwlock_waits wait_ms>=300"
sub c4_row
{
	my ($toplevel, $sql) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT calls || ' ' || (lwlock_acquisitions > 0) || ' ' || hwlock_waits
			   || ' ' || (hwlock_wait_time >= 300)
		  FROM flexlock_statements
		 WHERE userid = 'regress_c4'::regrole AND toplevel = $toplevel
		   AND queryid = flexlock_query_id(\$q\$$sql\$q\$)});
}
# (a plpgsql variable is a parameter; a SELECT INTO runs without its INTO)
is(c4_row('false', 'SELECT abalance / $1 FROM pgbench_accounts WHERE aid = 1 + $1'), '6 true 0 false',
	'(e) regress_f\'s SELECT: a row of its own, toplevel false, 6 calls (its 3 failures not counted)');
is(c4_row('false', 'UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1 + $1 % 10'),
	'6 true 0 false', '(e) regress_f\'s UPDATE: a row of its own, 6 calls');
is(c4_row('true', 'SELECT regress_f(1)'), '3 true 0 false',
	'(e) their caller, SELECT regress_f(1): 3 calls (not its failures with 0)');
is(c4_row('false', 'UPDATE pgbench_tellers SET tbalance = tbalance / (tid - tid) WHERE tid = $1'),
	'0 true 0 false',
	'(e) regress_g\'s UPDATE, failed and caught: a row with its events, no call');
is(c4_row('false', 'SELECT abalance FROM pgbench_accounts WHERE aid = $1'), '3 true 0 false',
	'(e) regress_g\'s SELECT after the caught error: its own row, 3 calls');
is(c4_row('true', 'SELECT regress_g(1)'), '3 true 0 false',
	'(e) ... and the caller, SELECT regress_g(...): 3 calls');
is(c4_row('false', 'SELECT count(*) FROM pgbench_branches'), '3 true 0 false',
	'(e) a DO block\'s statement (PERFORM): a row of its own, 3 calls');
is(c4_row('true', 'DO $$BEGIN PERFORM count(*) FROM pgbench_branches; END$$'), '3 true 0 false',
	'(e) ... and the DO block\'s: 3 calls');
is(c4_row('false', 'SELECT regress_r($1 - 1) + 1'), '32 true 0 false',
	'(e) regress_r(40): 32 levels of nested calls with rows (NESTED_MAX frames), the deeper count for their caller');
is(c4_row('false', 'UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1'), '1 true 1 true',
	'(e) flexlock.track = all: the nested UPDATE that waited for the row has the wait (1, >= 300 ms), toplevel false');
is(c4_row('true', 'SELECT regress_w()'), '1 true 1 true',
	'(e) ... and its top-level caller, SELECT regress_w(), has it too (its row includes its nested statements\' work)');
is($node->safe_psql('postgres', q{
	SELECT sleeps || ' ' || mode || ' ' || (sleep_time >= 300) FROM flexlock_statement_locks
	 WHERE userid = 'regress_c4'::regrole AND NOT toplevel AND wait_event_type = 'Lock' AND wait_event = 'transactionid'
	   AND sleeps > 0
	   AND queryid = flexlock_query_id('UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1')}),
	'1 ShareLock true', '(e) ... a transactionid wait in ShareLock');
# (the wait without its time: a wait that ends in an error other than a
# deadlock is counted but not timed, docs/statistics.md "Heavyweight locks")
is($node->safe_psql('postgres', q{
	SELECT string_agg(toplevel || ' ' || calls || ' ' || (lwlock_acquisitions > 0) || ' ' || hwlock_waits, ', '
					  ORDER BY toplevel)
	  FROM flexlock_statements
	 WHERE userid = 'regress_c4'::regrole
	   AND queryid IN (flexlock_query_id('UPDATE pgbench_branches SET bbalance = bbalance - 1 WHERE bid = 1'),
					   flexlock_query_id('SELECT regress_t()'))}),
	'false 0 true 1, true 1 true 1',
	'(e) regress_t()\'s UPDATE, failed on lock_timeout and caught: the wait up to the error is its own (no call), and its top-level caller\'s');
is($node->safe_psql('postgres', q{
	SELECT calls || ' ' || hwlock_waits || ' ' || (hwlock_wait_time >= 300) FROM flexlock_statements
	 WHERE userid = 'regress_c1'::regrole AND queryid = flexlock_query_id('SELECT regress_w()')}),
	'1 1 true', '(e) flexlock.track = top: the caller, SELECT regress_w(), has its nested UPDATE\'s wait');

# --- query ids of others' statements, and the report -----------------------------

$_->quit for @c;
# (pg_stat_statements' model: everyone reads, and sees the query ids of
# the own statements; pg_read_all_stats, everyone's; superusers reset)
my ($ok, $out, $err) = $node->psql('postgres', 'SELECT flexlock_statements_reset()',
	extra_params => [ '-U', 'regress_c1' ]);
like($err, qr/permission denied for function flexlock_statements_reset/,
	'(privileges) resetting is not for everyone');
my $seen_sql = q{
	SELECT coalesce(bool_and(queryid IS NOT NULL) FILTER (WHERE userid <> 'regress_c1'::regrole), false) || ' ' ||
		   bool_and(queryid IS NOT NULL) FILTER (WHERE userid = 'regress_c1'::regrole)
	  FROM flexlock_statements};
is($node->safe_psql('postgres', $seen_sql, extra_params => [ '-U', 'regress_c1' ]),
	'false true', '(privileges) without pg_read_all_stats, the query ids of the own statements only');
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO regress_c1');
is($node->safe_psql('postgres', $seen_sql, extra_params => [ '-U', 'regress_c1' ]),
	'true true', '(privileges) with pg_read_all_stats, every query id');

my $report = $node->safe_psql('postgres', q{
	SELECT count(*) || ' ' || bool_and(detail LIKE '%calls; %of the lock events%')
	  FROM flexlock_report(100) WHERE section = 'statements'});
is($report, '5 true', 'flexlock_report: section "statements", the top 5');

# --- the limit, evictions, reset ----------------------------------------------------

$node->safe_psql('postgres', 'SELECT flexlock_reset()');
# (300 statements of different shapes: 1 to 300 columns)
$node->safe_psql('postgres', join('', map { 'SELECT ' . join(', ', ('1') x $_) . ";\n" } 1 .. 300));
my ($dealloc, $statements) = split /\|/,
  $node->safe_psql('postgres', 'SELECT dealloc, statements FROM flexlock_statements_info');
cmp_ok($dealloc, '>', 0, "flexlock.max_statements = 200: 300 statements evicted some ($dealloc deallocations)");
cmp_ok($statements, '<=', 200, "... and the table keeps at most 200 ($statements)");
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
is($node->safe_psql('postgres', 'SELECT dealloc FROM flexlock_statements_info'), '0',
	'flexlock_reset() empties the table');

# --- (d) EXPLAIN (ANALYZE, LOCKS) -----------------------------------------------------

my $explain = $node->safe_psql('postgres', q{
	EXPLAIN (ANALYZE, LOCKS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
	SELECT abalance FROM pgbench_accounts WHERE aid = 42});
note($explain);
like($explain, qr/Index Scan using pgbench_accounts_pkey.*\n(?:\s+\S.*\n)*?\s+LWLocks: BufferContent shared=[1-9]/,
	'(d) the index scan node shows its BufferContent shared acquisitions');
my $plain = $node->safe_psql('postgres', q{
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
	SELECT abalance FROM pgbench_accounts WHERE aid = 42});
unlike($plain, qr/LWLocks/, '(d) without LOCKS, no lock lines');
my $json = $node->safe_psql('postgres', q{
	EXPLAIN (ANALYZE, LOCKS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON)
	SELECT abalance FROM pgbench_accounts WHERE aid = 42});
like($json, qr/"Locks": \[\s*\{\s*"Lock Kind": "lwlock",\s*"Lock": "BufferContent",\s*"Mode": "shared",\s*"Acquisitions": [1-9]/,
	'(d) JSON: the locks of the node');
($ok, $out, $err) = $node->psql('postgres', 'EXPLAIN (LOCKS) SELECT 1');
like($err, qr/EXPLAIN option LOCKS requires ANALYZE/, '(d) LOCKS without ANALYZE is refused');

# An INSERT sleeps on the leaf page that H holds locked (injection point at
# the end of H's descent): the sleep is the ModifyTable node's.
$node->safe_psql('postgres', 'CREATE TABLE regress_d (id int PRIMARY KEY)');
my $h = $node->background_psql('postgres');
my $e = $node->background_psql('postgres');
my $epid = $e->query_safe('SELECT pg_backend_pid()');
$h->query_safe(q{
	SELECT injection_points_set_local();
	SELECT injection_points_attach('btree-leaf-locked', 'wait');});
$h->query_until(qr/inserting/, q{
	\echo inserting
	INSERT INTO regress_d VALUES (1);
});
$node->wait_for_event('client backend', 'btree-leaf-locked');
$e->query_until(qr/explaining/, q{
	\echo explaining
	EXPLAIN (ANALYZE, LOCKS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) INSERT INTO regress_d VALUES (2);
	\echo explained
});
$node->poll_query_until('postgres',
	"SELECT wait_event = 'BufferContent' FROM pg_stat_activity WHERE pid = $epid")
  or die 'the EXPLAINed INSERT did not sleep on the leaf';
usleep(200_000);
$node->safe_psql('postgres', q{SELECT injection_points_wakeup('btree-leaf-locked')});
$h->query_safe(q{SELECT injection_points_detach('btree-leaf-locked')});
pump_until($e->{run}, $e->{timeout}, \$e->{stdout}, qr/explained/)
  or die 'the EXPLAINed INSERT did not finish';
my $insert_plan = $e->{stdout};
note($insert_plan);
# (in share mode: the index is one page, its root is its leaf, so the
# descent takes it shared first and then relocks it, stock)
like($insert_plan, qr/Insert on regress_d.*\n(?:\s+\S.*\n)*?\s+LWLock Sleeps: BufferContent (?:shared|exclusive)=1 time=([0-9.]+)/,
	'(d) the ModifyTable node shows the sleep on the leaf\'s content lock');
$insert_plan =~ /LWLock Sleeps: BufferContent (?:shared|exclusive)=1 time=([0-9.]+)/;
cmp_ok($1 // 0, '>=', 150, '(d) ... of the time the leaf was held');
unlike($insert_plan, qr/->  Result.*\n(?:\s+\S.*\n)*?\s+LWLock Sleeps/, '(d) ... and not at the Result node under it');
$_->quit for ($h, $e, $probe);

done_testing();
