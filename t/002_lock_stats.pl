# t/002_lock_stats.pl — the lock statistics under real concurrency: sleeps
# and wait time of the contended tranches rise, auxiliary processes have
# counters, counts of exited backends are kept, lock_stats_timing works, and
# the extension refuses a server without the flexlock patches.  Whether
# pgbench's clients happen to sleep on a lock is the scheduler's affair, so
# the sleeps that are checked are forced: a committer sleeps on WALWriteLock
# held by the test (t/lib/FlexlockForce.pm).
use strict;
use warnings FATAL => 'all';

use FlexlockForce;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('stats');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 40\nautovacuum = off\n");
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION flexlock; CREATE EXTENSION flexlock_inject; CREATE EXTENSION injection_points');
$node->safe_psql('postgres',
	'CREATE TABLE hot (id int PRIMARY KEY, n bigint); INSERT INTO hot VALUES (1, 0);');

# Sum of one column over some tranches, from the all-process view.
sub total
{
	my ($col, $where) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum($col), 0) FROM flexlock_lwlocks WHERE $where");
}

# --- contention: many clients on one hot row --------------------------------
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
my $before = total('acquire_exclusive', "tranche = 'BufferContent'");
$node->pgbench(
	'--no-vacuum --client=16 --jobs=4 --transactions=200',
	0,
	[qr{processed: 3200/3200}],
	[qr{^$}],
	'16 clients update one row',
	{ '002_hot' => 'UPDATE hot SET n = n + 1 WHERE id = 1;' });

my $after = total('acquire_exclusive', "tranche = 'BufferContent'");
cmp_ok($after - $before, '>=', 3200,
	'every update took the hot buffer exclusively, counted after its backend exited');
is($node->safe_psql('postgres', 'SELECT n FROM hot'), '3200', 'all updates are there');

# A committer sleeps on WALWriteLock (LWLockAcquireOrWait) while another
# process holds it, as in group commit; forced, so that there is one.
sub forced_walwrite_sleep
{
	my ($what) = @_;
	my $h = hold_lwlock($node, 'WALWrite');
	my $c = $node->background_psql('postgres');
	my $cpid = $c->query_safe('SELECT pg_backend_pid()');
	$c->query_until(qr/committing/, "\\echo committing\nUPDATE hot SET n = n + 1 WHERE id = 1;\n");
	ok($node->poll_query_until('postgres', "SELECT wait_event = 'WALWrite' FROM pg_stat_activity WHERE pid = $cpid"),
		"$what: a committer sleeps on WALWriteLock, held by another");
	release_lwlock($node, $h);
	$c->query_safe('SELECT 1');    # it committed
	$c->quit;
	return;
}
forced_walwrite_sleep('timing on');
cmp_ok(total('waits', "tranche = 'WALWrite'"), '>', 0, 'sleeps on WALWrite were counted');
cmp_ok(total('wait_time_ms', "tranche = 'WALWrite'"), '>', 0, '... and their wait time');
is($node->safe_psql('postgres',
		'SELECT count(*) FROM flexlock_lwlocks WHERE waits > 0 AND wait_time_ms <= 0'),
	'0', 'every tranche that was waited on has a wait time');
# WALWrite is waited for only by LWLockAcquireOrWait, which sleeps at most
# once per call and then returns without the lock.
is($node->safe_psql('postgres',
		"SELECT block_wait_until_free <= wait_until_free AND block_shared = 0
		   FROM flexlock_lwlocks WHERE tranche = 'WALWrite'"),
	't', 'every WALWrite wait-until-free sleep ends in a wait-until-free return');

# --- auxiliary processes ---------------------------------------------------
$node->safe_psql('postgres', 'CHECKPOINT');
like(
	$node->safe_psql('postgres',
		"SELECT string_agg(DISTINCT backend_type, ',' ORDER BY backend_type) FROM flexlock_backends"),
	qr{checkpointer}, 'the checkpointer has lock counters');
$node->safe_psql('postgres', 'ALTER SYSTEM SET synchronous_commit = off');
$node->reload;
$node->pgbench(
	'--no-vacuum --client=4 --jobs=2 --time=2',
	0, [qr{processed}], [qr{^$}],
	'asynchronous commits leave flushing to the walwriter',
	{ '002_async' => 'UPDATE hot SET n = n + 1 WHERE id = 1;' });
ok( $node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM flexlock_backends WHERE backend_type = 'walwriter'"),
	'the walwriter has lock counters');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET synchronous_commit');

# --- lock_stats_timing = off: sleeps are counted, time is not -----------------
# (a restart, not a reload: every process, the auxiliary ones too, runs with
# the setting from its start, none is still timing)
$node->safe_psql('postgres', 'ALTER SYSTEM SET lock_stats_timing = off');
$node->restart;
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->pgbench(
	'--no-vacuum --client=16 --jobs=4 --transactions=100',
	0, [qr{processed: 1600/1600}], [qr{^$}],
	'contention with lock_stats_timing off',
	{ '002_hot2' => 'UPDATE hot SET n = n + 1 WHERE id = 1;' });
forced_walwrite_sleep('timing off');
cmp_ok(total('waits', "tranche = 'WALWrite'"), '>', 0, 'with timing off, sleeps are still counted');
is(total('wait_time_ms', 'true'), '0', '... but no time is recorded, for any tranche');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET lock_stats_timing');
$node->restart;

# --- spinlocks: the per-site rows add up to the family totals -----------------
# (at most: a process attributes a site it meets for the first time when it
# next reads, so a background process's newest site may still be parked in
# the family total only; the sites are read first)
is( $node->safe_psql('postgres', q{
		SELECT (SELECT coalesce(sum(contended), 0) FROM flexlock_spinlocks) <=
		       (SELECT value FROM flexlock_counters
		         WHERE family = 'spinlock' AND counter = 'contended')}),
	't', 'spinlock sites add up to the spinlock family total, at most');

$node->stop;

# --- a server without the flexlock patches ------------------------------------
SKIP:
{
	my $vanilla = "$ENV{FLEXLOCK_BUILD}/install/vanilla/bin";
	skip 'no vanilla build', 3 unless -x "$vanilla/postgres";
	local $ENV{PATH} = "$vanilla:$ENV{PATH}";
	my $plain = PostgreSQL::Test::Cluster->new('vanilla', install_path => "$ENV{FLEXLOCK_BUILD}/install/vanilla");
	$plain->init;
	$plain->start;
	my ($ret, $stdout, $stderr) = $plain->psql('postgres', 'CREATE EXTENSION flexlock');
	isnt($ret, 0, 'CREATE EXTENSION flexlock fails on vanilla PostgreSQL');
	like($stderr, qr{ERROR:  this server lacks the flexlock patches}, '... with one clear message');
	is($plain->safe_psql('postgres',
			"SELECT count(*) FROM pg_proc WHERE proname LIKE 'flexlock%'"),
		'0', '... and leaves nothing behind');
	$plain->stop;
}

done_testing();
