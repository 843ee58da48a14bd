# t/011_seed003.pl — the settings of the seed 003 experiments and the
# heavyweight lock counters.
#
# 1. Bad values of the two start-time settings stop the server with the usual
#    message.
# 2. lwlock_implementation = spinlock: the LWLock torture test (many more
#    background workers than cores on one lock: no exclusive holder ever
#    coexists with another holder, nobody waits forever) and every
#    acquisition and release taking the lock's spinlock; then the whole server
#    under pgbench with lock_fastpath = off: no relation lock through the
#    fast path, the balances add up.
# 3. Heavyweight lock counters that only concurrency produces: a timed wait
#    (with its deadlock check and histogram bucket), a fast-path miss because
#    of a strong lock, a NOWAIT failure, a deadlock.
# 4. clock_sweep = spinlock with 16 MB of shared buffers under pgbench: the
#    hand goes round, the data stays right (amcheck).
# 5. relation_extend_pages = 1 under concurrent COPY: one page per
#    extension, each under the relation extension lock; 8: eight pages per
#    extension, the table grown by as many; 0: COPY's bulk extension, more
#    pages than extensions.  The setting is the server's (every process
#    extends by it) and autovacuum is off, so the counters are exact.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# --- 1. bad values at server start -----------------------------------------
my $bad = PostgreSQL::Test::Cluster->new('bad');
$bad->init;
for my $setting ('lwlock_implementation = sometimes', 'clock_sweep = lockfree')
{
	my ($name) = split / /, $setting;
	$bad->append_conf('postgresql.conf', $setting);
	my $log_start = -s $bad->logfile;
	ok(!$bad->start(fail_ok => 1), "server refuses to start with $setting");
	like(slurp_file($bad->logfile, $log_start),
		qr/invalid value for parameter "$name"/, "$setting: the usual message");
	$bad->adjust_conf('postgresql.conf', $name, undef);
}

# --- 2. spinlock LWLocks ----------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('seed003');
$node->init;
$node->append_conf('postgresql.conf', qq{
max_worker_processes = 40
max_connections = 30
autovacuum = off
# A parallel worker looks up a few catalogs while it restores its leader's
# settings, before it has restored lock_fastpath (RestoreGUCState sets
# default_text_search_config first): those lookups may use the fast path.
max_parallel_workers_per_gather = 0
lwlock_implementation = spinlock
lock_stats_timing = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock; CREATE EXTENSION amcheck;');
is($node->safe_psql('postgres', 'SHOW lwlock_implementation'), 'spinlock', 'spinlock LWLocks');
my (undef, undef, $err) = $node->psql('postgres', 'SET lwlock_implementation = atomic');
like($err, qr/cannot be changed without restarting the server/,
	'lwlock_implementation cannot change at run time');

my $workers = 16;
my $seconds = $ENV{FLEXLOCK_TORTURE_SECONDS} || 4;
my $lwspin = q{SELECT sum(value) FILTER (WHERE counter = 'mutex_acquires'),
                      sum(value) FILTER (WHERE counter = 'mutex_contended')
                 FROM flexlock_counters WHERE family = 'lwspin'};
for my $run ([ 70, 20, 5, 5 ], [ 95, 5, 0, 0 ])
{
	my ($sh, $ex, $cond, $wuf) = @$run;
	my ($m0, $c0) = split /\|/, $node->safe_psql('postgres', $lwspin);
	my ($acq, $violations, $maxwait, $backouts, $sleeps) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT acquisitions, violations, max_wait_ms, backouts, sleeps
		   FROM flexlock_torture_lwlock($workers, $seconds, $sh, $ex, $cond, $wuf,
		                                algorithm => 'exchange', wait_bound_ms => 10000)");
	my ($m1, $c1) = split /\|/, $node->safe_psql('postgres', $lwspin);
	my $what = "spinlock, $sh/$ex/$cond/$wuf % shared/exclusive/conditional/until-free";
	note "$what: $acq acquisitions, $sleeps sleeps, longest wait $maxwait ms; "
	  . ($m1 - $m0) . " spinlock acquisitions, " . ($c1 - $c0) . " contended";
	is($violations, 0, "$what: invariants held on every acquisition");
	cmp_ok($maxwait, '<', 10000, "$what: no wait longer than 10 s");
	cmp_ok($sleeps, '>', 0, "$what: workers slept on the lock (it was contended)");
	is($backouts, 0, "$what: no shared-add back-outs");
	# every acquisition attempt and every release took the spinlock
	cmp_ok($m1 - $m0, '>=', 2 * $acq, "$what: the spinlock taken for every acquisition and release");
	cmp_ok($c1 - $c0, '>', 0, "$what: processes found the spinlock taken and spun");
}

# the whole server, with the fast path off as well
$node->safe_psql('postgres', 'ALTER SYSTEM SET lock_fastpath = off; SELECT pg_reload_conf();');
$node->poll_query_until('postgres', 'SHOW lock_fastpath', 'off');
$node->command_ok([ 'pgbench', '--initialize', '--scale=2', '--quiet', $node->connstr('postgres') ],
	'pgbench -i');
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[ 'pgbench', '--client=8', '--jobs=2', '--time=4', '--builtin=select-only@3',
	  '--builtin=tpcb-like@1', $node->connstr('postgres') ],
	'pgbench with spinlock LWLocks and the fast path off');
is( $node->safe_psql('postgres',
		'SELECT sum(abalance) = (SELECT sum(bbalance) FROM pgbench_branches) FROM pgbench_accounts'),
	't', 'pgbench balances add up');
my ($fp, $st) = split /\|/, $node->safe_psql('postgres',
	"SELECT sum(fastpath), sum(shared_table) FROM flexlock_hwlocks WHERE locktype = 'relation'");
note "relation locks with the fast path off: $fp fast path, $st shared table";
is($fp, 0, 'no relation lock through the fast path while it is off');
cmp_ok($st, '>', 1000, 'relation locks in the shared table instead');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET lock_fastpath; SELECT pg_reload_conf();');
$node->poll_query_until('postgres', 'SHOW lock_fastpath', 'on');

# --- 3. heavyweight lock waits ----------------------------------------------
$node->safe_psql('postgres', 'CREATE TABLE hw1 (a int); CREATE TABLE hw2 (a int);');
my $a = $node->background_psql('postgres');
my $b = $node->background_psql('postgres');
# B runs into errors (NOWAIT, a deadlock) and goes on
$b->query_safe('\set ON_ERROR_STOP 0');
my $bpid = $b->query_safe('SELECT pg_backend_pid()');
chomp $bpid;
my $row = sub {
	my ($mode, $cols) = @_;
	return $node->safe_psql('postgres',
		"SELECT $cols FROM flexlock_hwlock_backends($bpid)
		  WHERE locktype = 'relation' AND mode = '$mode'");
};

# a wait of about half a second, with a deadlock check after 100 ms
$a->query_safe('BEGIN; LOCK TABLE hw1 IN ACCESS EXCLUSIVE MODE;');
$b->query_safe("SET deadlock_timeout = '100ms'");
$b->query_until(qr/waiting/, q{\echo waiting
SELECT count(*) FROM hw1;
});
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_locks WHERE pid = $bpid AND NOT granted");
usleep(500_000);
$a->query_safe('COMMIT');
$b->query_safe('SELECT 1');    # B's SELECT is done before this one runs
my ($waits, $ms, $checks) = split /\|/, $row->('AccessShareLock', 'waits, wait_time_ms, deadlock_checks');
note "B's AccessShareLock: $waits waits, $ms ms, $checks deadlock checks";
is($waits, 1, 'one wait for the table');
cmp_ok($ms, '>=', 400, 'its time counted');
cmp_ok($checks, '>=', 1, 'a deadlock check ran while it waited');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM flexlock_hwlock_wait_histogram
		  WHERE locktype = 'relation' AND lower_us <= $ms * 1000
		    AND (upper_us IS NULL OR upper_us > $ms * 1000)"),
	1, 'the wait is in the histogram bucket of its length');

# a strong lock on the table sends B's weak lock to the shared table
my ($strong0) = $row->('AccessShareLock', 'fastpath_strong');
$a->query_safe('BEGIN; LOCK TABLE hw1 IN SHARE MODE;');
$b->query_safe('SELECT count(*) FROM hw1');
$a->query_safe('COMMIT');
my ($strong1) = $row->('AccessShareLock', 'fastpath_strong');
cmp_ok($strong1, '>', $strong0, 'a fast-path miss because of a strong lock');

# NOWAIT
$a->query_safe('BEGIN; LOCK TABLE hw1 IN ACCESS SHARE MODE;');
$b->query('BEGIN; LOCK TABLE hw1 IN ACCESS EXCLUSIVE MODE NOWAIT');
like($b->{stderr}, qr/could not obtain lock/, 'NOWAIT fails while A holds a lock');
$b->{stderr} = '';
$b->query_safe('ROLLBACK');
$a->query_safe('COMMIT');
is($row->('AccessExclusiveLock', 'not_avail'), 1, 'a NOWAIT acquisition that failed');

# a deadlock: A holds hw1 and waits for hw2, B holds hw2 and asks for hw1
$a->query_safe("SET deadlock_timeout = '10s'");
$a->query_safe('BEGIN; LOCK TABLE hw1 IN ACCESS EXCLUSIVE MODE;');
$b->query_safe('BEGIN; LOCK TABLE hw2 IN ACCESS EXCLUSIVE MODE;');
$a->query_until(qr/waiting/, q{\echo waiting
LOCK TABLE hw2 IN ACCESS EXCLUSIVE MODE;
});
$node->poll_query_until('postgres',
	"SELECT count(*) > 0 FROM pg_locks WHERE relation = 'hw2'::regclass AND NOT granted");
$b->query('LOCK TABLE hw1 IN ACCESS EXCLUSIVE MODE');
like($b->{stderr}, qr/deadlock detected/, 'B is the deadlock victim');
$b->{stderr} = '';
$b->query_safe('ROLLBACK');
$a->query_safe('COMMIT');
is($row->('AccessExclusiveLock', 'deadlocks'), 1, 'the deadlock counted for B');
$a->quit;
$b->quit;

# every counter of every row is consistent
is( $node->safe_psql('postgres',
		'SELECT count(*) FROM flexlock_hwlocks
		  WHERE deadlocks > waits OR NOT coalesce(fastpath_share BETWEEN 0 AND 1, true)'),
	0, 'no more deadlocks than waits, fast-path shares in [0, 1]');
$node->stop;

# --- 4. the clock hand under a spinlock -------------------------------------
$node->append_conf('postgresql.conf', "shared_buffers = 16MB\nclock_sweep = spinlock\n");
$node->start;
is($node->safe_psql('postgres', 'SHOW clock_sweep'), 'spinlock', 'clock_sweep = spinlock');
$node->command_ok([ 'pgbench', '--initialize', '--scale=4', '--quiet', $node->connstr('postgres') ],
	'pgbench -i, scale 4 (about 60 MB)');
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[ 'pgbench', '--client=6', '--jobs=2', '--time=4', '--builtin=select-only@3',
	  '--builtin=tpcb-like@1', $node->connstr('postgres') ],
	'pgbench on four times shared_buffers');
my ($sweeps, $ticks, $locked, $passes) = split /\|/, $node->safe_psql('postgres',
	"SELECT sum(value) FILTER (WHERE counter = 'sweeps'),
	        sum(value) FILTER (WHERE counter = 'ticks'),
	        sum(value) FILTER (WHERE counter = 'locked_ticks'),
	        sum(value) FILTER (WHERE counter = 'passes')
	   FROM flexlock_counters WHERE family = 'clocksweep'");
note "clock sweep: $sweeps sweeps, $ticks ticks ($locked under the spinlock), $passes passes";
cmp_ok($sweeps, '>', 1000, 'buffer allocations ran the clock sweep');
cmp_ok($ticks, '>=', $sweeps, 'at least one tick per sweep');
is($locked, $ticks, 'every tick of the hand was taken under buffer_strategy_lock (clock_sweep = spinlock took effect)');
cmp_ok($passes, '>=', 1, 'the hand went round');
cmp_ok($passes, '<=', $ticks / 2048 + 1, 'one pass per 2048 ticks at most');
is( $node->safe_psql('postgres',
		'SELECT sum(abalance) = (SELECT sum(bbalance) FROM pgbench_branches) FROM pgbench_accounts'),
	't', 'pgbench balances add up');
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM (SELECT bt_index_check('pgbench_accounts_pkey', true)) s"),
	'1', 'amcheck: the accounts index matches the table');

# --- 5. one page per extension under concurrent COPY ---------------------------
$node->safe_psql('postgres', "CREATE TABLE copy_target (id int, v text DEFAULT repeat('x', 50))");
my $copy = $node->basedir . '/copy.sql';
append_to_file($copy, "COPY copy_target (id) FROM PROGRAM 'seq 1 5000';\n");
$node->safe_psql('postgres',
	'ALTER SYSTEM SET relation_extend_pages = 1; SELECT pg_reload_conf();');
$node->poll_query_until('postgres', 'SHOW relation_extend_pages', '1');
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[ 'pgbench', '--client=4', '--jobs=2', '--transactions=20', '--no-vacuum',
	  "--file=$copy", $node->connstr('postgres') ],
	'concurrent COPY into one table, relation_extend_pages = 1');
is($node->safe_psql('postgres', 'SELECT count(*) FROM copy_target'), 400000,
	'every row copied');
my ($ext, $pages) = split /\|/, $node->safe_psql('postgres',
	"SELECT sum(value) FILTER (WHERE counter = 'extensions'),
	        sum(value) FILTER (WHERE counter = 'pages')
	   FROM flexlock_counters WHERE family = 'extend'");
my ($extlocks) = $node->safe_psql('postgres',
	"SELECT sum(shared_table) FROM flexlock_hwlocks WHERE locktype = 'extend'");
note "COPY: $ext extensions, $pages pages, $extlocks extension lock acquisitions";
cmp_ok($ext, '>=', 1000, 'many extensions');
is($pages, $ext, 'one page each');
cmp_ok($extlocks, '>=', $ext, 'each under the relation extension lock');
is($node->safe_psql('postgres', "SELECT pg_relation_size('copy_target') / 8192 >= $ext"),
	't', 'the table has at least the pages added');

for my $n (8, 0)
{
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET relation_extend_pages = $n; SELECT pg_reload_conf();");
	$node->poll_query_until('postgres', 'SHOW relation_extend_pages', $n);
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	my $blocks0 = $node->safe_psql('postgres', "SELECT pg_relation_size('copy_target') / 8192");
	$node->command_ok(
		[ 'pgbench', '--client=4', '--jobs=2', '--transactions=5', '--no-vacuum',
		  "--file=$copy", $node->connstr('postgres') ],
		"concurrent COPY into one table, relation_extend_pages = $n");
	my ($e, $p, $grown) = split /\|/, $node->safe_psql('postgres',
		"SELECT sum(value) FILTER (WHERE counter = 'extensions'),
		        sum(value) FILTER (WHERE counter = 'pages'),
		        pg_relation_size('copy_target') / 8192 - $blocks0
		   FROM flexlock_counters WHERE family = 'extend'");
	note "COPY, relation_extend_pages = $n: $e extensions, $p pages, the table grew by $grown";
	if ($n == 8)
	{
		cmp_ok($e, '>=', 10, "$n: many extensions");
		is($p, 8 * $e, "$n: eight pages each");
		is($grown, $p, "$n: the table grew by the pages added");
	}
	else
	{
		cmp_ok($p, '>', $e, "$n: COPY extends by more than one page at a time");
	}
}
$node->stop;

done_testing();
