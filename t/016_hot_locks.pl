# t/016_hot_locks.pl — the hottest LWLocks, hold-time percentiles and the
# measured number of locks per tranche (flexlock 1.2, issue 27).
#
# With every hold timed (lock_stats_hold_sample = 1): two 300 ms holds of
# the test lock (flexlock_test_lwlock) make it the hottest lock, with about
# 600 ms of hold time and all of its tranche's; its hold percentiles lie in
# the bucket of 300 ms and are ordered; its tranche of one lock counts one
# instance.  With one hold in 4 timed, 200 holds of 2 ms are estimated at
# about 400 ms.  A table hammered with updates names its heap page among the
# hottest buffer content locks.  The checkpointer's exclusive acquisition of
# every WAL insertion lock counts 8 instances, and one lock (wal_insert_locks
# = 1) counts 1.  The hot locks of a process that exits stay (retired to the
# shared pool) until a reset clears them.  With sampling off, a 300 ms sleep
# on the test lock still counts as its wait time (the wait path feeds the
# table), with no hold time.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('hot');
$node->init;
$node->append_conf('postgresql.conf',
	"max_connections = 40\nautovacuum = off\nlock_stats_hold_sample = 1\n"
	  # (its state in the main segment: the retirement test waits after
	  # the exiting process has detached its DSM segments)
	  . "shared_preload_libraries = 'injection_points'\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock; CREATE EXTENSION flexlock_inject; CREATE EXTENSION injection_points');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'flexlock'"),
	'1.5', 'flexlock 1.5 (the newest)');

# --- a known hot lock --------------------------------------------------------

my $s = $node->background_psql('postgres');
my $spid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('SELECT flexlock_reset()');
# (the two holds last 300 ms at least, and no longer than the statement:
# a loaded host makes them longer, never shorter)
my $wall_ms = $s->query_safe(q{SELECT clock_timestamp() AS t0 \gset
	SELECT flexlock_test_lwlock('exclusive', 300) FROM generate_series(1, 2);
	SELECT round(extract(epoch FROM clock_timestamp() - :'t0') * 1000)});
$wall_ms = (split /\n/, $wall_ms)[-1];
# (read in S: the names of extension tranches are known to the processes
# that registered them)
my ($tranche, $lock, $hold, $wait, $share) = split /\|/,
  $s->query_safe('SELECT tranche, lock, hold_ms, wait_ms, hold_share FROM flexlock_hot_lwlocks LIMIT 1');
is($tranche, 'flexlock_test', 'the test lock is the hottest');
like($lock, qr/^flexlock_test /, "... named by its tranche ($lock)");
cmp_ok($hold, '>=', 600, "... held at least 600 ms ($hold ms)");
cmp_ok($hold, '<=', $wall_ms, "... and no longer than the statement ($wall_ms ms)");
ok($share > 0.99 && $share <= 1.0001, "... all of its tranche's hold time ($share)");

my ($n, $p50, $p90, $p99, $max) = split /\|/,
  $s->query_safe(
	"SELECT holds_timed, hold_p50_us, hold_p90_us, hold_p99_us, hold_max_us FROM flexlock_lwlock_waits
	  WHERE tranche = 'flexlock_test' AND mode = 'exclusive'");
is($n, 2, 'two timed holds in the histogram');
ok($p50 <= $p90 && $p90 <= $p99 && $p99 <= $max, "hold percentiles ordered ($p50 <= $p90 <= $p99 <= $max)");
# 300 ms lies in the bucket [2^28, 2^29) ns; interpolation stays at or
# above it and below the longest hold
cmp_ok($p50, '>=', 2**28 / 1000, 'p50 in the bucket of 300 ms or above');
cmp_ok($max, '>=', 300_000, "the longest hold is at least 300 ms ($max us)");
cmp_ok($max, '<=', 1000 * $wall_ms, '... and no longer than the statement');
is( $s->query_safe(
		"SELECT sum(holds) FILTER (WHERE coalesce(upper_us, 1e12) > 300000) || ' ' || sum(holds)
		   FROM flexlock_lwlock_wait_histogram WHERE tranche = 'flexlock_test'"),
	'2 2',
	'both holds in the bucket of 300 ms or above, none below');
is( $s->query_safe(
		"SELECT instances || ' ' || instances_saturated FROM flexlock_lock_load WHERE tranche = 'flexlock_test'"),
	'1 false',
	'the test lock tranche: one instance measured');

# One hold in 4 timed: 200 holds of 2 ms are about 400 ms, estimated from
# about 50 samples (standard deviation about 6) each counted 4 times
# (a loaded host oversleeps: the upper bound is 4 times the loop's wall
# time, which the holds are part of, each sampled one counted 4 times)
my $est = $node->safe_psql('postgres', q{SET lock_stats_hold_sample = 4; SELECT flexlock_reset();
	SELECT clock_timestamp() AS t0 \gset
	SELECT flexlock_test_lwlock('exclusive', 2) FROM generate_series(1, 200);
	SELECT round(hold_ms) || ' ' || round(extract(epoch FROM clock_timestamp() - :'t0') * 1000)
	       || ' ' || (SELECT round((hold_exclusive_ms / (avg_hold_exclusive_us * holds_timed / 1000))::numeric, 3)
	                    FROM flexlock_lwlocks WHERE tranche = 'flexlock_test')
	  FROM flexlock_hot_lwlocks WHERE tranche = 'flexlock_test'});
my ($wall, $scale);
($est, $wall, $scale) = split / /, (split /\n/, $est)[-1];
ok($est >= 200 && $est <= 4 * $wall,
	"sampling 1 in 4: 200 holds of 2 ms estimated at $est ms (the loop took $wall ms)");
# (exact, whatever the timing: the estimate is the sampled holds' own time,
# which their average times their number gives, scaled by the interval)
is($scale, '4.000', 'sampling 1 in 4: the estimate is 4 times the time of the sampled holds');

# --- a hammered table names its page -----------------------------------------

$node->safe_psql('postgres',
	'CREATE TABLE hot (id int PRIMARY KEY, v int); INSERT INTO hot VALUES (1, 0);');
my $script = $node->basedir . '/hot.sql';
PostgreSQL::Test::Utils::append_to_file($script, "UPDATE hot SET v = v + 1 WHERE id = 1;\n");
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[
		'pgbench', '--no-vacuum', '--client=4', '--transactions=500',
		"--file=$script", $node->connstr('postgres')
	],
	'pgbench updating one row');
my $top_bc = $node->safe_psql('postgres',
	"SELECT relation FROM flexlock_hot_lwlocks WHERE tranche = 'BufferContent' LIMIT 1");
like($top_bc, qr/^hot(_pkey)?$/, "the hottest buffer content lock is of the table or its index ($top_bc)");
my ($rel, $fork, $block, $bname) = split /\|/,
  $node->safe_psql('postgres',
	"(SELECT relation::text, fork, block::text, lock FROM flexlock_hot_lwlocks
	   WHERE tranche = 'BufferContent' AND relation = 'hot'::regclass ORDER BY hold_ms DESC LIMIT 1)
	 UNION ALL SELECT '-', '-', '-', '-' LIMIT 1");
# The row starts on page 0; when HOT pruning cannot keep up (other clients'
# snapshots), an update moves it to a new page, and that page may be the
# hottest by the end (a make check here saw 'hot main 1').  So: a page of the table.
my $nblocks = $node->safe_psql('postgres',
	"SELECT pg_relation_size('hot') / current_setting('block_size')::int");
is("$rel $fork", 'hot main', 'the heap page of the hammered row is named');
ok($block =~ /^\d+$/ && $block < $nblocks, "... with a block of the table ($block of $nblocks)");
like($bname, qr/^buffer \d+$/, "... by its buffer ($bname)");

# --- WAL insertion locks: those taken, all 8, or the only one -----------------

# one process inserting takes one of the 8 (another process logging a
# standby snapshot meanwhile may take a second)
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->safe_psql('postgres', 'UPDATE hot SET v = v + 1 WHERE id = 1;' x 20);
my $few = $node->safe_psql('postgres',
	"SELECT instances || ' ' || instances_configured FROM flexlock_lock_load WHERE tranche = 'WALInsert'");
like($few, qr/^[12] 8$/, "one inserting process: 1 of the 8 WAL insertion locks measured ($few)");

$node->safe_psql('postgres', 'SELECT flexlock_reset(); CHECKPOINT;');
# (two of the 8 share a bit of the bitmap with probability 3%: then 7)
like($node->safe_psql('postgres',
		"SELECT instances || ' ' || instances_configured FROM flexlock_lock_load WHERE tranche = 'WALInsert'"),
	qr/^[78] 8$/, 'a checkpoint takes all 8 WAL insertion locks: 8 instances measured');

# --- the hot locks of a process that exits --------------------------------------

$s->query_safe('SELECT flexlock_reset()');
$s->query_safe("SELECT flexlock_test_lwlock('exclusive', 300)");
$s->quit;
$node->poll_query_until('postgres', "SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = $spid")
  or die 'S did not exit';
# register the tranche's name in the reader without a sampled hold
my $read_hot = q{SET lock_stats_hold_sample = 0; SELECT flexlock_test_lwlock('shared');
	SELECT count(*) || ' ' || coalesce(round(sum(hold_ms)), 0) FROM flexlock_hot_lwlocks
	 WHERE tranche = 'flexlock_test' AND hold_ms >= 300};
like($node->safe_psql('postgres', $read_hot), qr/\n1 ([3-9]\d\d|\d{4,})$/,
	'the test lock stays hot after its holder exited (a hold of 300 ms or more)');
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
like($node->safe_psql('postgres', $read_hot), qr/\n0 0$/, '... until a reset');

# --- retiring is done under an LWLock, LockStatsRetireLock --------------------
# An exiting process X stops inside its retirement (the injection point
# lockstats-retire, attached for every process): a reset meanwhile sleeps on
# LockStatsRetire, where it used to spin on a spinlock held across the merge
# of X's histograms, hot locks and bitmaps.  (X itself is out of
# pg_stat_activity by then: a reset is tried until one waits.)
{
	my $m = $node->background_psql('postgres');
	my $x = $node->background_psql('postgres');
	my $r = $node->background_psql('postgres');
	my $rpid = $r->query_safe('SELECT pg_backend_pid()');
	$x->query_safe("SELECT flexlock_test_lwlock('exclusive', 10)");
	$m->query_safe(q{SELECT injection_points_attach('lockstats-retire', 'wait')});
	$x->quit;
	my $waits = 0;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		$r->query_until(qr/resetting/, "\\echo resetting\nSELECT flexlock_reset();\n")
		  if $m->query_safe("SELECT state FROM pg_stat_activity WHERE pid = $rpid") eq 'idle';
		usleep(100_000);
		$waits = $m->query_safe(
			"SELECT count(*) FROM pg_stat_activity WHERE pid = $rpid AND wait_event = 'LockStatsRetire'");
		last if $waits;
	}
	is($waits, 1, 'a reset sleeps on LockStatsRetire while an exiting process retires its statistics');
	$m->query_safe(q{SELECT injection_points_detach('lockstats-retire')});
	$m->query_safe(q{SELECT injection_points_wakeup('lockstats-retire')});
	like($r->query_safe('SELECT 1'), qr/(^|\n)1$/, '... and goes on once it has');
	$_->quit for ($m, $r);
}

# --- sampling off: the wait path -------------------------------------------------

$node->append_conf('postgresql.conf', "lock_stats_hold_sample = 0\n");
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('lock_stats_hold_sample') = '0'")
  or die 'reload';
my $h = $node->background_psql('postgres');
my $hpid = $h->query_safe('SELECT pg_backend_pid()');
my $w = $node->background_psql('postgres');
my $wpid = $w->query_safe('SELECT pg_backend_pid()');
$h->query_safe('SELECT injection_points_set_local()');
$h->query_safe(q{SELECT injection_points_attach('flexlock-test-lwlock-held', 'wait')});
$h->query_until(qr/holding/, qq{\\echo holding\nSELECT flexlock_test_lwlock('exclusive');\n});
$node->poll_query_until('postgres',
	"SELECT wait_event = 'flexlock-test-lwlock-held' FROM pg_stat_activity WHERE pid = $hpid")
  or die 'H did not stop';
$w->query_safe('SELECT flexlock_reset()');
$w->query_until(qr/waiting/, qq{\\echo waiting\nSELECT flexlock_test_lwlock('exclusive');\n});
$node->poll_query_until('postgres',
	"SELECT wait_event_type = 'LWLock' FROM pg_stat_activity WHERE pid = $wpid")
  or die 'W did not wait';
usleep(300_000);
$node->safe_psql('postgres', q{SELECT injection_points_wakeup('flexlock-test-lwlock-held')});
$h->query_safe(q{SELECT injection_points_detach('flexlock-test-lwlock-held')});
my ($wms, $hms) = split /\|/,
  $w->query_safe(
	"SELECT sum(wait_ms), sum(hold_ms) FROM flexlock_hot_lwlocks WHERE tranche = 'flexlock_test'");
$wms =~ s/^\s+//;		# (after the empty result of W's acquisition)
cmp_ok($wms, '>=', 300, "sampling off: the sleep on the test lock is its wait time ($wms ms)");
is($hms, 0, '... and no hold is timed');

# --- one WAL insertion lock ----------------------------------------------------

$node->append_conf('postgresql.conf', "wal_insert_locks = 1\nlock_stats_hold_sample = 1\n");
$h->quit;
$w->quit;
$node->restart;
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[
		'pgbench', '--no-vacuum', '--client=4', '--transactions=200',
		"--file=$script", $node->connstr('postgres')
	],
	'pgbench with one WAL insertion lock');
$node->safe_psql('postgres', 'CHECKPOINT');
my ($inst, $util) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT instances, utilization FROM flexlock_lock_load WHERE tranche = 'WALInsert'");
is($inst, 1, 'one WAL insertion lock: 1 instance measured');
ok($util > 0 && $util <= 1, "... its utilization is above 0 and at most 1 ($util)");
my $whot = $node->safe_psql('postgres',
	"SELECT count(*) FROM flexlock_hot_lwlocks WHERE tranche = 'WALInsert' AND lock ~ '^WALInsert \\+[0-9]+\$'");
is($whot, 1, 'it is one row of the hot locks, named by its tranche and offset');

$node->stop;
done_testing();
