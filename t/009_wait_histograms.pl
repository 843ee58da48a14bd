# t/009_wait_histograms.pl — how long LWLock sleeps take.  One sleep of a
# known length: H stops with the rightmost leaf of an index locked
# exclusively (injection point btree-leaf-locked), W inserts into the same
# leaf and sleeps for it on BufferContent, and H goes on only after W has
# slept at least 400 ms.  The histograms must hold that sleep in the right
# bucket, in the percentiles and the maximum, per backend type while W
# lives and in the all-processes view after it has exited (its rows are
# retired, not lost), as many sleeps as the counters count, and none of it
# after a reset.  Last, the size of the statistics in shared memory does
# not depend on max_prepared_transactions.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('waithist');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\nlock_stats_timing = on\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION flexlock; CREATE EXTENSION injection_points;
	CREATE UNLOGGED TABLE t (id serial PRIMARY KEY, v int);
	INSERT INTO t (v) SELECT 1 FROM generate_series(1, 100000);});

my $held_us = 400_000;

# The row of the view for BufferContent in exclusive mode ('' if none)
sub bc_row
{
	my ($view, $extra) = @_;
	$extra //= '';
	return $node->safe_psql('postgres', qq{
		SELECT sleeps, max_us >= $held_us, p50_us <= p90_us AND p90_us <= p99_us AND p99_us <= max_us
		  FROM $view WHERE tranche = 'BufferContent' AND mode = 'exclusive' $extra});
}

$node->safe_psql('postgres', 'SELECT flexlock_reset()');

my $h = $node->background_psql('postgres');
my $w = $node->background_psql('postgres');
$w->query_safe('INSERT INTO t (v) VALUES (2)');
my $wpid = $w->query_safe('SELECT pg_backend_pid()');

$h->query_safe(q{
	SELECT injection_points_set_local();
	SELECT injection_points_attach('btree-leaf-locked', 'wait');});
$h->query_until(qr/inserting/, q{
	\echo inserting
	INSERT INTO t (v) VALUES (3);
});
$node->wait_for_event('client backend', 'btree-leaf-locked');
$w->query_until(qr/inserting/, q{
	\echo inserting
	INSERT INTO t (v) VALUES (4);
});
$node->poll_query_until('postgres',
	"SELECT wait_event = 'BufferContent' FROM pg_stat_activity WHERE pid = $wpid")
  or die 'the inserter did not sleep for the leaf';
usleep($held_us + 50_000);
$node->safe_psql('postgres', q{SELECT injection_points_wakeup('btree-leaf-locked')});
$h->query_safe(q{SELECT injection_points_detach('btree-leaf-locked')});
is($w->query_safe('SELECT 1'), '1', 'the inserter got the leaf');

# W's sleep, in every view.  (Other processes may sleep on BufferContent
# too, never for that long in this idle cluster.)
my ($sleeps, $long, $ordered) = split /\|/, bc_row('flexlock_lwlock_waits');
cmp_ok($sleeps, '>=', 1, "BufferContent exclusive sleeps counted ($sleeps)");
is($long, 't', "the longest BufferContent sleep is at least ${held_us} us");
is($ordered, 't', 'p50 <= p90 <= p99 <= max');
is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*) FROM flexlock_lwlock_wait_histogram h,
		       (SELECT max_us FROM flexlock_lwlock_waits
		         WHERE tranche = 'BufferContent' AND mode = 'exclusive') m
		 WHERE h.tranche = 'BufferContent' AND h.mode = 'exclusive'
		   AND h.lower_us <= m.max_us AND (h.upper_us IS NULL OR m.max_us < h.upper_us)
		   AND h.lower_us >= $held_us / 2}),
	'1',
	'the long sleep is in the bucket that holds the maximum');
is( $node->safe_psql(
		'postgres', q{
		SELECT h.s = l.block_exclusive
		  FROM (SELECT sum(sleeps) s FROM flexlock_lwlock_wait_histogram
		         WHERE tranche = 'BufferContent' AND mode = 'exclusive') h,
		       flexlock_lwlocks l WHERE l.tranche = 'BufferContent'}),
	't',
	'the histogram holds every BufferContent exclusive sleep the counters count');
is( bc_row('flexlock_lwlock_waits_by_type', "AND backend_type = 'client backend'")
	  =~ /\|t\|t$/ ? 'yes' : 'no',
	'yes',
	'per backend type: the client backends have the long sleep');

# W exits: its rows leave the per-type view (live processes) but stay in
# the all-processes one, retired.
$w->quit;
$h->quit;
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $wpid")
  or die 'the inserter did not exit';
$node->poll_query_until(
	'postgres', qq{
	SELECT coalesce(max(max_us), 0) < $held_us FROM flexlock_lwlock_waits_by_type
	 WHERE backend_type = 'client backend' AND tranche = 'BufferContent'})
  or die 'the exited process still counts among the live ones';
pass('per backend type: the exited inserter is gone');
($sleeps, $long) = split /\|/, bc_row('flexlock_lwlock_waits');
is($long, 't', 'all processes: the exited inserter\'s sleep is still there (retired)');

# A reset empties the histograms, retired rows included.
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
is( $node->safe_psql(
		'postgres', qq{
		SELECT count(*) FROM flexlock_lwlock_waits WHERE max_us >= $held_us}),
	'0',
	'after a reset no sleep of before is left');

# Bad input and privileges
my ($ret, $out, $err) = $node->psql('postgres',
	q{CREATE ROLE regress_h; SET ROLE regress_h; SELECT * FROM flexlock_lwlock_waits});
like($err, qr/permission denied/, 'PUBLIC cannot read the wait histograms');
is( $node->safe_psql(
		'postgres',
		q{GRANT pg_monitor TO regress_h; SET ROLE regress_h;
		  SELECT count(*) >= 0 FROM flexlock_lwlock_waits_by_type}),
	't',
	'pg_monitor can');

# Memory: a slot per PGPROC that can run; prepared transactions' PGPROCs
# never run and get none, so max_prepared_transactions leaves the lock
# statistics' shared memory as it is.
my $stats_size = sub {
	return $node->safe_psql('postgres',
		"SELECT size FROM pg_shmem_allocations WHERE name = 'Lock Statistics'");
};
my $size0 = $stats_size->();
$node->append_conf('postgresql.conf', "max_prepared_transactions = 50\n");
$node->restart;
is($node->safe_psql('postgres', 'SHOW max_prepared_transactions'), '50',
	'max_prepared_transactions = 50');
is($stats_size->(), $size0,
	"no lock statistics slots for prepared transactions ($size0 bytes either way)");

$node->stop;
done_testing();
