# t/021_statements_exact.pl — the figures of flexlock_statements are exact
# (issue 41): each case shows one way they were wrong.
#
# 1. An entry keeps 23 locks (a lock's modes in one row of its table) and
#    an overflow row per kind for those that do not fit.
#    The overflow row must keep its kinds apart: a heavyweight lock wait
#    that lands there is a heavyweight lock wait, not an LWLock sleep.  The
#    entry is filled first by a call that takes 32 individual LWLocks (test
#    module flexlock_inject), then a second call of the same statement waits
#    300 ms for an advisory lock, a row the entry has no room for.
# 2. A statement without a query id (tracking turned on in a server started
#    with it off, compute_query_id off) is no call of the row of what runs
#    outside statements (query id 0).
# 3. A parallel query's lock events are its statement's, its workers' too:
#    a scan of 1000 pages by two workers, the leader not taking part, has
#    at least 1000 shared buffer content lock acquisitions in its row.
# 5. A write of pending rows that fails half way (injection point
#    flexlock-statements-stored, with the error action, after the first
#    statement is written) lets flexlock's lock go and does not write that
#    statement again next time; at the edge of idle time, after the backend
#    answered, the failure is logged, not sent to a client that waits for
#    nothing (before: the lock stayed taken, "too many LWLocks taken", then
#    a PANIC).
# S. A write that takes a lock besides flexlock's own (an action of
#    flexlock_inject takes OidGen at injection point
#    flexlock-statements-stored): that lock's events are flexlock's writing
#    too, in no row.  LockUsageSkip() moves the mark past a write whose
#    events are all in flexlock's lock's row; here they are not, and the
#    mark is advanced past them all.
# 7. Eviction keeps the statements called most, not those written most
#    often: a statement called 50 times in one message survives 150 others
#    called twice each in two messages, with flexlock.max_statements = 100.
# 9. The end of a statement's portal is the statement's work under every
#    protocol: a parallel count(*) in autocommit, run by pgbench with
#    -M simple and with -M extended (where the portal, and its workers with
#    it, ends at Sync, in the commit, and the workers' events came after),
#    has the same commit rows.
# 8. A function run in ExecutorStart (initial partition pruning) runs
#    nested statements, not top-level ones; with flexlock.track = all a
#    top-level row includes its nested statements' work, as
#    pg_stat_statements' does (their own rows have it too).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('exact');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'flexlock'\nautovacuum = off\nmax_connections = 20\n"
	  . "flexlock.max_statements = 100\nmax_worker_processes = 8\nmax_parallel_workers = 4\n");
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION flexlock; CREATE EXTENSION flexlock_inject; CREATE EXTENSION injection_points;');

# --- 1. the overflow row keeps heavyweight waits apart --------------------------

my @individual = qw(OidGen XidGen SInvalWrite ControlFile MultiXactGen RelCacheInit
  CheckpointerComm TwoPhaseState TablespaceCreate BtreeVacuum AddinShmemInit Autovacuum
  AutovacuumSchedule SyncScan RelationMapping NotifyQueue SerializableXactHash
  SerializableFinishedList SerializablePredicateList SyncRep BackgroundWorker
  DynamicSharedMemoryControl AutoFile ReplicationSlotAllocation ReplicationSlotControl
  CommitTs ReplicationOrigin MultiXactTruncation LogicalRepWorker XactTruncation
  WrapLimitsVacuum NotifyQueueTail);
$node->safe_psql('postgres', qq{
CREATE FUNCTION regress_rows(wait int) RETURNS int LANGUAGE plpgsql AS \$\$
BEGIN
  IF wait = 0 THEN
    PERFORM flexlock_inject_hold_lwlock(name)
       FROM unnest(ARRAY['@{[ join "', '", @individual ]}']) name;
  ELSE
    PERFORM pg_advisory_xact_lock(wait);
  END IF;
  RETURN wait;
END \$\$;
SELECT flexlock_reset();
SELECT regress_rows(0);
});
my $qid = $node->safe_psql('postgres', q{SELECT flexlock_query_id('SELECT regress_rows(0)')});
is( $node->safe_psql('postgres', qq{
		SELECT count(DISTINCT (wait_event_type, wait_event)) FILTER (WHERE wait_event NOT IN ('(other)', 'SpinDelay'))
		       || ' ' || bool_or(wait_event = '(other)')
		  FROM flexlock_statement_locks WHERE queryid = $qid AND NOT commit}),
	'23 true', '1: the first call filled the entry: 23 locks, and an overflow row');

my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(41)');
my $waiter = $node->background_psql('postgres');
my $wpid = $waiter->query_safe('SELECT pg_backend_pid()');
$waiter->query_until(qr/waiting/, "\\echo waiting\nSELECT regress_rows(41);\n");
$node->poll_query_until('postgres',
	"SELECT wait_event = 'advisory' FROM pg_stat_activity WHERE pid = $wpid")
  or die 'the second call did not wait for the advisory lock';
usleep(300_000);
$holder->query_safe('SELECT pg_advisory_unlock(41)');
like($waiter->query_safe('SELECT 1'), qr/1$/, '1: the second call got the advisory lock');
my ($hw_waits, $hw_ms, $lw_sleeps) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT hwlock_waits, hwlock_wait_time, lwlock_sleeps FROM flexlock_statements WHERE queryid = $qid});
is($hw_waits, 1, '1: the advisory lock wait, in the overflow row, counts as a heavyweight lock wait');
cmp_ok($hw_ms, '>=', 300, "... of at least 300 ms ($hw_ms ms)");
is($lw_sleeps, $node->safe_psql('postgres', qq{
	SELECT coalesce(sum(sleeps), 0) FROM flexlock_statement_locks WHERE queryid = $qid AND NOT commit AND wait_event_type = 'LWLock'}),
	'1: the LWLock sleeps are those of the LWLock rows');
$_->quit for ($holder, $waiter);

# --- 3. a parallel query's workers --------------------------------------------

$node->safe_psql('postgres', q{
	CREATE TABLE regress_par (a int, b text) WITH (autovacuum_enabled = off, parallel_workers = 2);
	INSERT INTO regress_par SELECT g, repeat('x', 200) FROM generate_series(1, 30000) g;
	VACUUM regress_par;});
my $pages = $node->safe_psql('postgres', q{SELECT pg_relation_size('regress_par') / 8192});
cmp_ok($pages, '>=', 800, "3: the table has $pages pages");
my $par_sql = 'SELECT count(*) FROM regress_par WHERE b <> \'y\'';
my $par_settings = 'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;'
  . ' SET max_parallel_workers_per_gather = 2; SET parallel_leader_participation = off;';
like($node->safe_psql('postgres', "$par_settings EXPLAIN (COSTS OFF) $par_sql"),
	qr/Workers Planned: 2/, '3: the scan is planned with two workers');
$node->safe_psql('postgres', "SELECT flexlock_reset(); $par_settings $par_sql;");
my $par_qid = $node->safe_psql('postgres', "SELECT flexlock_query_id(\$\$$par_sql\$\$)");
append_to_file($node->basedir . '/par9.sql', "$par_sql;\n");
my $par_acq = $node->safe_psql('postgres', qq{
	SELECT coalesce(sum(acquisitions), 0) FROM flexlock_statement_locks
	 WHERE queryid = $par_qid AND wait_event_type = 'LWLock' AND wait_event = 'BufferContent' AND mode = 'shared'});
cmp_ok($par_acq, '>=', $pages,
	"3: the parallel scan's row has its workers' buffer content locks ($par_acq, $pages pages)");

# --- 9. the same commit rows under every protocol ------------------------------

my %commit9;
for my $mode ('simple', 'extended')
{
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	$node->command_ok(
		[ 'pgbench', '--no-vacuum', "--protocol=$mode", '--client=1', '--transactions=10',
		  "--file=" . $node->basedir . '/par9.sql',
		  $node->connstr('postgres') . " options='-c parallel_setup_cost=0 -c parallel_tuple_cost=0"
			. " -c min_parallel_table_scan_size=0 -c max_parallel_workers_per_gather=2'" ],
		"9: pgbench -M $mode, a parallel count(*) in autocommit");
	$commit9{$mode} = $node->safe_psql('postgres', qq{
		SELECT string_agg(wait_event_type || ' ' || wait_event || ' ' || mode || ' ' || acquisitions, ', ' ORDER BY wait_event_type, wait_event, mode)
		  FROM flexlock_statement_locks WHERE queryid = $par_qid AND commit});
	my $stmt = $node->safe_psql('postgres', qq{
		SELECT coalesce(sum(acquisitions), 0) FROM flexlock_statement_locks
		 WHERE queryid = $par_qid AND NOT commit AND wait_event_type = 'LWLock' AND wait_event = 'BufferContent' AND mode = 'shared'});
	cmp_ok($stmt, '>=', 10 * $pages, "9: -M $mode: the workers' buffer content locks are in the statement's rows ($stmt)");
}
is($commit9{extended}, $commit9{simple}, '9: the same commit rows with -M extended as with -M simple');

# --- 5. a failed write of pending rows --------------------------------------------

# W, a role of its own, makes its next write fail after the first of its
# two pending statements (the attach, and the SELECT in its message; their
# entries exist already: a write that adds entries takes the lock
# exclusively, and that path has no injection point): the error is W's, W
# goes on, and in the end its rows hold each of its events once, as its
# per-backend totals do (flexlock's own lock apart, and the statistics
# reports a backend makes when it goes idle, after the rows of its last
# message are written).  (psql sends statements joined by \; as one
# message.)
$node->safe_psql('postgres', 'CREATE ROLE regress_s5 SUPERUSER LOGIN; SELECT flexlock_reset();');
my $w = $node->background_psql('postgres', on_error_stop => 0,
	connstr => $node->connstr('postgres') . ' user=regress_s5');
my $w5pid = $w->query_safe('SELECT pg_backend_pid()');
$w->query_safe('SELECT injection_points_set_local()');
my $log5 = -s $node->logfile;
$w->query_safe(q{SELECT injection_points_attach('regress-flexlock-unused', 'error') \\; SELECT 5});
$w->query_safe(q{SELECT injection_points_detach('regress-flexlock-unused')});
$w->query_safe(q{SELECT injection_points_attach('flexlock-statements-stored', 'error') \\; SELECT 5});
ok( $node->wait_for_log(
		qr/LOG:  could not write the lock statistics of statements: error triggered for injection point flexlock-statements-stored/,
		$log5),
	'5: the write failed half way, when W had answered: logged, not sent to its client');
# W idles now: flexlock's lock must be free (no transaction's abort let it go
# there).  A reset by another session takes it exclusively: it completes, or
# is seen waiting for it, as long as W sends nothing.
my $r5 = $node->background_psql('postgres');
my $r5pid = $r5->query_safe('SELECT pg_backend_pid()');
$r5->query_until(qr/resetting/, "\\echo resetting\nSELECT flexlock_statements_reset(0, 0, 4242) \\; SELECT 'reset done';\n");
$node->poll_query_until('postgres', qq{
	SELECT (SELECT count(*) FROM pg_stat_activity WHERE pid = $r5pid AND state = 'idle') = 1
	    OR (SELECT count(*) FROM pg_stat_activity WHERE pid = $r5pid AND wait_event = 'flexlock_statements') = 1})
  or die 'the reset neither completed nor waited';
is($node->safe_psql('postgres', qq{SELECT state FROM pg_stat_activity WHERE pid = $r5pid}),
	'idle', "5: ... and W, idle, holds no lock: another session's reset completes");
$w->query_safe(q{SELECT injection_points_detach('flexlock-statements-stored')});
$r5->quit;
is($w->query_safe('SELECT 2 AS two, 3 AS three'), '2|3', '5: W goes on');
$w->query_safe('SELECT 1');
my ($rows5, $backend5) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT (SELECT sum(acquisitions) FROM flexlock_statement_locks
	         WHERE userid = 'regress_s5'::regrole AND toplevel AND wait_event_type = 'LWLock'
	           AND wait_event <> 'flexlock_statements' AND wait_event NOT LIKE 'PgStats%'),
	       (SELECT sum(acquire_shared + acquire_exclusive + wait_until_free) FROM flexlock_backends($w5pid)
	         WHERE tranche <> 'flexlock_statements' AND tranche NOT LIKE 'PgStats%')});
is($rows5, $backend5, '5: W\'s rows hold each of its LWLock acquisitions once, as its totals do');
is($node->safe_psql('postgres', q{SELECT count(*) FROM flexlock_statements WHERE calls < 0}),
	'0', '5: no row has fewer than no calls');
# A statement written by a write that failed after it, called again before
# a write succeeds: that call is written then, not added to what was
# written already (before: lost).  The attach's write writes the attach,
# then fails; the attach runs again (another point: its message's write
# fails too); the detach's write succeeds.  The attach had 2 calls.
my $q_attach = q{SELECT injection_points_attach('a', 'b')};
$w->query_safe(q{SELECT injection_points_attach('flexlock-statements-stored', 'error') \\; SELECT 1, 2, 3, 4});
$w->query_safe(q{SELECT injection_points_attach('regress-flexlock-unused', 'error')});
$w->query_safe(q{SELECT injection_points_detach('flexlock-statements-stored')});
is($node->safe_psql('postgres', qq{
	SELECT calls FROM flexlock_statements WHERE userid = 'regress_s5'::regrole
	   AND queryid = flexlock_query_id(\$\$$q_attach\$\$)}),
	'4', '5: a statement written by a failed write and called again counts that call');
$w->quit;
# A message of more statements than rows are kept pending for writes some
# before it ends: that writing too is in no row (flexlock.track = top)
$node->safe_psql('postgres', 'CREATE ROLE regress_s5b SUPERUSER LOGIN');
$node->safe_psql('postgres',
	'SELECT 1 \\; SELECT 1, 2 \\; SELECT 1, 2, 3 \\; SELECT 1, 2, 3, 4 \\; SELECT 1, 2, 3, 4, 5 \\; SELECT 1, 2, 3, 4, 5, 6',
	extra_params => [ '-U', 'regress_s5b' ]);
is($node->safe_psql('postgres', q{
	SELECT sum(calls) || ' ' || (SELECT count(*) FROM flexlock_statement_locks
	                             WHERE userid = 'regress_s5b'::regrole AND wait_event = 'flexlock_statements')
	  FROM flexlock_statements WHERE userid = 'regress_s5b'::regrole}),
	'6 0', '5: a message of six statements: six calls, and flexlock\'s writing in no row');
# A write at the end of a boundary that fails (the fifth statement's
# boundary writes the first four's rows; the write fails after the first):
# the statement charged at that boundary keeps its one call (before: the
# call was charged again at the next boundary).  The message fails there.
$node->safe_psql('postgres', 'CREATE ROLE regress_s5d SUPERUSER LOGIN');
my $w2 = $node->background_psql('postgres', on_error_stop => 0,
	connstr => $node->connstr('postgres') . ' user=regress_s5d');
my $five = 'SELECT 1 \\; SELECT 1, 2 \\; SELECT 1, 2, 3 \\; SELECT 1, 2, 3, 4 \\; SELECT 1, 2, 3, 4, 5';
$w2->query_safe($five);
$w2->query_safe('SELECT injection_points_set_local()');
$w2->query_safe(q{SELECT injection_points_attach('flexlock-statements-stored', 'error')});
my $log5d = -s $node->logfile;
$w2->query($five);
ok($node->wait_for_log(qr/ERROR:  error triggered for injection point flexlock-statements-stored/, $log5d),
	'5: the write at the fifth statement\'s boundary failed, and the message with it');
# (query, not query_safe: the session's stderr keeps the error)
$w2->query(q{SELECT injection_points_detach('flexlock-statements-stored')});
$w2->quit;
is($node->safe_psql('postgres', q{
	SELECT calls FROM flexlock_statements
	 WHERE userid = 'regress_s5d'::regrole AND queryid = flexlock_query_id('SELECT 1, 2, 3, 4')}),
	'2', '5: ... and the statement charged there has its two calls, not three');
is($node->safe_psql('postgres', q{
	SELECT calls || ' ' || failed_calls FROM flexlock_statements
	 WHERE userid = 'regress_s5d'::regrole AND queryid = flexlock_query_id('SELECT 1, 2, 3, 4, 5')}),
	'1 1', '5: ... and the statement the write failed has a failed call');
# Cursors closed by the commit end their statements together, with no
# boundary between (PreCommit_Portals()): seven calls of seven statements
# pending at once, more than there are pending rows
$node->safe_psql('postgres', 'CREATE ROLE regress_s5c SUPERUSER LOGIN');
my @cursors = map { 'SELECT ' . join(', ', 1 .. $_) } 1 .. 7;
$node->safe_psql('postgres',
	join("\n", 'BEGIN;', (map { "DECLARE regress_c$_ CURSOR FOR $cursors[$_ - 1];" } 1 .. 7), 'COMMIT;'),
	extra_params => [ '-U', 'regress_s5c' ]);
is($node->safe_psql('postgres', 'SELECT ' . join(' || \' \' || ', map { qq{(SELECT calls FROM flexlock_statements
	  WHERE userid = 'regress_s5c'::regrole AND queryid = flexlock_query_id('$_'))} } @cursors)),
	'1 1 1 1 1 1 1', '5: seven cursors closed by the commit: a call each');

# --- S. a write that takes another lock -----------------------------------------

# (S reads through its own session: the write of a message comes after the
# backend answered, and before its next message starts)
$node->safe_psql('postgres', 'CREATE ROLE regress_sk SUPERUSER LOGIN');
my $sk = $node->background_psql('postgres',
	connstr => $node->connstr('postgres') . ' user=regress_sk');
my $skpid = $sk->query_safe('SELECT pg_backend_pid()');
# (the entry of SELECT $1 exists before the action is attached: a write
# that makes an entry takes the lock exclusively, a path without the point)
$sk->query_safe('SELECT 1');
$sk->query_safe(
	qq{SELECT flexlock_inject_lwlock_at('flexlock-statements-stored', 'OidGen', $skpid)});
$sk->query_safe('SELECT 2') for 1 .. 3;
$sk->query_safe(q{SELECT flexlock_inject_detach('flexlock-statements-stored')});
$sk->query_safe('SELECT 3');
is($sk->query_safe(qq{
	SELECT (SELECT sum(acquire_exclusive) FROM flexlock_backends($skpid) WHERE tranche = 'OidGen') >= 3,
	       (SELECT count(*) FROM flexlock_statement_locks
		 WHERE userid = 'regress_sk'::regrole AND wait_event IN ('OidGen', 'flexlock_statements'))}),
	't|0', "S: the writes' other lock is in the backend's totals, in no row");
is($sk->query_safe(q{
	SELECT calls FROM flexlock_statements
	 WHERE userid = 'regress_sk'::regrole AND queryid = flexlock_query_id('SELECT 2')}),
	'5', 'S: ... and the statement written meanwhile has its calls (SELECT 1, 2 three times, 3: one query id)');
# a statement of the session that takes OidGen itself: its row has its own
# acquisitions, not the writes' too (a mark left behind at the writes')
my $oidgen = qq{SELECT coalesce(sum(acquire_exclusive), 0) FROM flexlock_backends($skpid) WHERE tranche = 'OidGen'};
my $before = $sk->query_safe($oidgen);
$sk->query_safe('CREATE TABLE regress_sk_t (a int)');
my $after = $sk->query_safe($oidgen);
cmp_ok($after - $before, '>', 0, "S: CREATE TABLE took OidGen (@{[$after - $before]} times)");
is($sk->query_safe(q{
	SELECT sum(acquisitions) FILTER (WHERE queryid = flexlock_query_id('CREATE TABLE regress_sk_t (a int)'))
	       || ' ' || sum(acquisitions)
	  FROM flexlock_statement_locks WHERE userid = 'regress_sk'::regrole AND wait_event = 'OidGen'}),
	($after - $before) . ' ' . ($after - $before),
	"S: ... and its row has those acquisitions, the session's rows no others");
$sk->quit;

# --- 7. eviction by calls --------------------------------------------------------

$node->safe_psql('postgres', 'SELECT flexlock_reset()');
# (one message: psql -c sends the string as it is)
$node->command_ok([ 'psql', '-X', '-q', '-c', join(' ', ('SELECT 7777 AS fifty;') x 50), $node->connstr('postgres') ],
	'7: one message of 50 calls');
# (each of the others twice, in two messages: written twice, called twice)
for my $k (1 .. 150)
{
	$node->safe_psql('postgres', 'SELECT ROW(' . join(', ', (1) x $k) . ')') for 1 .. 2;
}
my ($fifty, $evictions) = split /\|/, $node->safe_psql('postgres', q{
	SELECT (SELECT coalesce(sum(calls), 0) FROM flexlock_statements WHERE queryid = flexlock_query_id('SELECT 7777 AS fifty')),
	       (SELECT dealloc FROM flexlock_statements_info)});
cmp_ok($evictions, '>', 0, "7: statements were evicted ($evictions deallocations)");
is($fifty, 50, '7: the statement called 50 times is kept, with its 50 calls');

# --- 8. nested statements ------------------------------------------------------

$node->safe_psql('postgres', q{
	CREATE TABLE regress_pt (k int, v int) PARTITION BY LIST (k);
	CREATE TABLE regress_pt1 PARTITION OF regress_pt FOR VALUES IN (1);
	CREATE TABLE regress_pt2 PARTITION OF regress_pt FOR VALUES IN (2);
	INSERT INTO regress_pt VALUES (1, 1), (2, 2);
	CREATE TABLE regress_one (k int); INSERT INTO regress_one VALUES (1);
	CREATE FUNCTION regress_key() RETURNS int STABLE LANGUAGE plpgsql AS $$
	BEGIN RETURN (SELECT k FROM regress_one LIMIT 1); END $$;
	SELECT flexlock_reset();});
# (the planner does not run a stable function: the executor prunes at its
# start, calling regress_key())
$node->safe_psql('postgres', q{
	SELECT v FROM regress_pt WHERE k = regress_key();
	SELECT v FROM regress_pt WHERE k = regress_key();});
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM flexlock_statements
	 WHERE queryid = flexlock_query_id('SELECT (SELECT k FROM regress_one LIMIT 1)') AND toplevel}),
	'0', '8: the function run at ExecutorStart is no top-level statement');
is($node->safe_psql('postgres', q{
	SELECT calls FROM flexlock_statements
	 WHERE queryid = flexlock_query_id('SELECT v FROM regress_pt WHERE k = regress_key()') AND toplevel}),
	'2', '8: ... the statement is, two calls');

$node->safe_psql('postgres', q{
	CREATE TABLE regress_w8 (id int PRIMARY KEY, v int); INSERT INTO regress_w8 VALUES (1, 0);
	CREATE FUNCTION regress_w8() RETURNS int LANGUAGE plpgsql AS $$
	BEGIN UPDATE regress_w8 SET v = v + 1 WHERE id = 1; RETURN 1; END $$;
	SELECT flexlock_reset();});
my $h8 = $node->background_psql('postgres');
$h8->query_safe('BEGIN; UPDATE regress_w8 SET v = v + 1 WHERE id = 1;');
my $c8 = $node->background_psql('postgres');
my $c8pid = $c8->query_safe(q{SET flexlock.track = 'all'; SELECT pg_backend_pid()});
$c8->query_until(qr/calling/, "\\echo calling\nSELECT regress_w8();\n");
$node->poll_query_until('postgres', "SELECT wait_event = 'transactionid' FROM pg_stat_activity WHERE pid = $c8pid")
  or die 'the nested UPDATE did not wait';
usleep(300_000);
$h8->query_safe('COMMIT');
like($c8->query_safe('SELECT 1'), qr/1$/, '8: the nested UPDATE got its row');
$_->quit for ($h8, $c8);
# (the nested UPDATE's row, and the caller's; H's UPDATE has a top-level
# row of the same query id)
my %w8 = map { my ($top, $waits, $ms) = split /\|/; ($top => [ $waits, $ms ]) } split /\n/, $node->safe_psql('postgres', q{
	SELECT toplevel, hwlock_waits, hwlock_wait_time FROM flexlock_statements
	 WHERE (queryid, toplevel) IN ((flexlock_query_id('SELECT regress_w8()'), true),
	                               (flexlock_query_id('UPDATE regress_w8 SET v = v + 1 WHERE id = 1'), false))});
is($w8{f}[0], 1, '8: the nested UPDATE has its wait');
is($w8{t}[0], 1, '8: ... and so has its top-level caller, SELECT regress_w8()');
cmp_ok($w8{t}[1], '>=', 300, "... of at least 300 ms ($w8{t}[1] ms)");

$node->stop;

# --- 2. statements without a query id ------------------------------------------

my $noqid = PostgreSQL::Test::Cluster->new('noqid');
$noqid->init;
$noqid->append_conf('postgresql.conf',
	"shared_preload_libraries = 'flexlock'\nflexlock.track = none\ncompute_query_id = off\n");
$noqid->start;
$noqid->safe_psql('postgres', 'CREATE EXTENSION flexlock; SELECT flexlock_reset();');
$noqid->safe_psql('postgres', 'SET flexlock.track = top; SELECT 1; SELECT 2; SELECT 3;');
is($noqid->safe_psql('postgres', q{
	SELECT coalesce(sum(calls), 0) FROM flexlock_statements WHERE queryid = 0}),
	'0', '2: statements without a query id are no calls of what ran outside statements');
$noqid->stop;

done_testing();
