# t/014_hold_sampling.pl — sampled LWLock hold times (lock_stats_hold_sample)
# and what the extension (1.1) makes of them.
#
# The setting: its range is enforced, and at 0 no hold is timed.  At 1 every
# hold is timed: a hold of the test lock for 300 ms shows as one exclusive
# hold of at least 300 ms; a hold of an outer lock that waits about 300 ms
# for the test lock (held by another session stopped at an injection point)
# shows that wait as nested, within the outer hold, and the outer lock,
# released before the inner one, keeps its own sample; holds ended by
# errors (LWLockReleaseAll) are counted and leave no sampling slot behind;
# WALWriteLock, taken with LWLockAcquireOrWait, has as many timed holds as
# exclusive acquisitions.  With one WAL insertion lock under insert-1000 the
# lock's utilization in flexlock_lock_load is above 0 and at most 1, and
# flexlock_lock_caps() gives its cap.  At 100 the estimated totals are about
# those of the sampled holds times 100.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('holds');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 40\nautovacuum = off\n");
$node->start;
# (1.1 itself: its entry points stay as they were in 1.2; t/016 tests 1.2)
# (the test functions in a schema of their own: flexlock 1.1 has functions
# of the same names, which say they moved)
$node->safe_psql('postgres', "CREATE EXTENSION flexlock VERSION '1.1'; CREATE EXTENSION injection_points;
	CREATE SCHEMA inject; CREATE EXTENSION flexlock_inject SCHEMA inject");
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'flexlock'"),
	'1.1', 'flexlock 1.1');

# --- the setting ------------------------------------------------------------

is($node->safe_psql('postgres', 'SHOW lock_stats_hold_sample'), '0', 'off by default');
for my $bad (-1, 1000001)
{
	my ($rc, $out, $err) = $node->psql('postgres', "SET lock_stats_hold_sample = $bad");
	like($err, qr/$bad is outside the valid range for parameter "lock_stats_hold_sample" \(0 \.\. 1000000\)/,
		"$bad refused");
}

sub hold_row
{
	my ($sql_where) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(holds_timed), 0) FROM flexlock_lwlocks WHERE $sql_where");
}

$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[ 'pgbench', '--initialize', '--scale=1', '--quiet', $node->connstr('postgres') ],
	'pgbench tables');
$node->command_ok(
	[ 'pgbench', '--no-vacuum', '--client=4', '--transactions=200', $node->connstr('postgres') ],
	'pgbench with sampling off');
is(hold_row('true'), 0, 'at 0 no hold is timed');

# --- every hold timed --------------------------------------------------------

$node->append_conf('postgresql.conf', "lock_stats_hold_sample = 1\n");
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('lock_stats_hold_sample') = '1'")
  or die 'reload';

my $s = $node->background_psql('postgres');
my $spid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe("SELECT inject.flexlock_test_lwlock('exclusive', 300)");
# (read in S: the names of extension tranches are known to the processes
# that registered them)
my ($n, $avg, $excl) = split /\|/,
  $s->query_safe(
	"SELECT holds_timed, avg_hold_exclusive_us, hold_exclusive_ms FROM flexlock_backends($spid)
	  WHERE tranche = 'flexlock_test'");
is($n, 1, 'a hold of the test lock: one timed hold');
cmp_ok($avg, '>=', 300_000, "... of at least 300 ms ($avg us)");
cmp_ok($avg, '<', 30_000_000, '... and not absurdly long');
cmp_ok(abs($excl - $avg / 1000), '<', 0.01, '... the estimated total is the sample (interval 1)');

# Nested wait: H holds the test lock, stopped at an injection point; S takes
# the outer lock, then waits for the test lock; 300 ms later H goes on.
my $h = $node->background_psql('postgres');
my $hpid = $h->query_safe('SELECT pg_backend_pid()');
$h->query_safe('SELECT injection_points_set_local()');
$h->query_safe(q{SELECT injection_points_attach('flexlock-test-lwlock-held', 'wait')});
$h->query_until(qr/holding/, qq{\\echo holding\nSELECT inject.flexlock_test_lwlock('exclusive');\n});
$node->poll_query_until('postgres',
	"SELECT wait_event = 'flexlock-test-lwlock-held' FROM pg_stat_activity WHERE pid = $hpid")
  or die 'H did not stop';
$s->query_safe('SELECT flexlock_reset()');
$s->query_until(qr/nesting/, qq{\\echo nesting\nSELECT inject.flexlock_test_lwlock_nested(0);\n});
$node->poll_query_until('postgres',
	"SELECT wait_event_type = 'LWLock' FROM pg_stat_activity WHERE pid = $spid")
  or die 'S did not wait';
usleep(300_000);
$node->safe_psql('postgres', q{SELECT injection_points_wakeup('flexlock-test-lwlock-held')});
$h->query_safe(q{SELECT injection_points_detach('flexlock-test-lwlock-held')});
like($s->query_safe('SELECT 1'), qr/1$/, 'S got both locks');
my %row = map { my @f = split /\|/; ($f[0] => { n => $f[1], ms => $f[2], wait => $f[3] }) } split /\n/,
  $s->query_safe(
	"SELECT tranche, holds_timed, hold_exclusive_ms, hold_wait_exclusive_ms FROM flexlock_backends($spid)
	  WHERE tranche IN ('flexlock_test_outer', 'flexlock_test')");
is($row{flexlock_test_outer}{n}, 1, 'the outer lock: one timed hold');
cmp_ok($row{flexlock_test_outer}{wait}, '>=', 300, "... with at least 300 ms of nested wait ($row{flexlock_test_outer}{wait} ms)");
cmp_ok($row{flexlock_test_outer}{wait}, '<=', $row{flexlock_test_outer}{ms}, '... within the hold');
is($row{flexlock_test}{n}, 1, 'the inner lock, released after the outer one: one timed hold');
# (a hold of microseconds: only a preemption as long as the wait, at least
# 300 ms, inside it could make it that long)
cmp_ok($row{flexlock_test}{ms}, '<', $row{flexlock_test_outer}{wait},
	"... short, not the $row{flexlock_test_outer}{wait} ms waited for it ($row{flexlock_test}{ms} ms)");
is($row{flexlock_test}{wait}, 0, '... with no nested wait');

# Holds ended by errors: more of them than there are sampling slots (one
# session, which goes on after each error)
my ($rc, $out, $err) = $node->psql(
	'postgres',
	"SELECT injection_points_set_local();
	 SELECT injection_points_attach('flexlock-test-lwlock-held', 'error');
	 SELECT flexlock_reset();\n"
	  . ("SELECT inject.flexlock_test_lwlock('shared');\n" x 12)
	  . "SELECT injection_points_detach('flexlock-test-lwlock-held');
	 SELECT inject.flexlock_test_lwlock('shared');
	 SELECT 'timed ' || holds_timed || '/' || acquire_shared FROM flexlock_backends(pg_backend_pid())
	  WHERE tranche = 'flexlock_test';",
	on_error_stop => 0);
is(() = $err =~ /error triggered for injection point flexlock-test-lwlock-held/g, 12, '12 holds ended by errors');
like($out, qr/^timed 13\/13$/m, 'they are timed, and sampling goes on after them');

# LWLockAcquireOrWait: WALWriteLock
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[ 'pgbench', '--no-vacuum', '--client=4', '--transactions=200', $node->connstr('postgres') ],
	'pgbench with every hold timed');
my ($timed, $acq) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT holds_timed, acquire_exclusive FROM flexlock_lwlocks WHERE tranche = 'WALWrite'");
cmp_ok($acq, '>', 0, "WALWriteLock taken ($acq times)");
ok($timed <= $acq && $timed >= $acq - 2, "as many timed holds as acquisitions ($timed of $acq)");

# --- the load of one WAL insertion lock -------------------------------------

$node->append_conf('postgresql.conf', "wal_insert_locks = 1\n");
$node->restart;
$node->safe_psql('postgres',
	slurp_file("$ENV{FLEXLOCK_TOP}/bench-scripts/workloads/insert-1000.init.sql"));
$node->safe_psql('postgres', 'SELECT flexlock_reset(); SELECT pg_stat_reset();');
$node->command_ok(
	[
		'pgbench', '--no-vacuum', '--client=8', '--time=5',
		'--file=' . "$ENV{FLEXLOCK_TOP}/bench-scripts/workloads/insert-1000.sql",
		$node->connstr('postgres')
	],
	'insert-1000 with one WAL insertion lock');
my ($inst, $util, $mean) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT instances, utilization, mean_utilization FROM flexlock_lock_load WHERE tranche = 'WALInsert'");
is($inst, 1, 'WALInsert: one instance');
ok($util > 0 && $util <= 1, "its utilization is above 0 and at most 1 ($util)");
is($util, $mean, '... the mean of its one lock');
my $xacts = $node->safe_psql('postgres', "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'");
my ($cap, $own) = split /\|/,
  $node->safe_psql('postgres', "SELECT cap_tps, own_cap_tps FROM flexlock_lock_caps($xacts) WHERE tranche = 'WALInsert'");
cmp_ok($cap, '>', 0, "flexlock_lock_caps: WALInsert caps at $cap tps");
cmp_ok($own, '>=', $cap, "... and at $own tps without its nested waits");

# --- one in 100 --------------------------------------------------------------

$node->append_conf('postgresql.conf', "lock_stats_hold_sample = 100\n");
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('lock_stats_hold_sample') = '100'")
  or die 'reload';
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[ 'pgbench', '--no-vacuum', '--client=4', '--transactions=500', $node->connstr('postgres') ],
	'pgbench with one hold in 100 timed');
my ($sampled, $acqs) = split /\|/,
  $node->safe_psql('postgres',
	q{SELECT sum(holds_timed), sum(acquire_shared + acquire_exclusive) FROM flexlock_lwlocks});
my $share = $sampled / $acqs;
ok($share > 0.005 && $share < 0.02, "about one hold in 100 timed ($sampled of $acqs)");
# The estimated totals are the sampled holds' own time times 100, exactly
# (whatever the timing): for the tranches held only exclusively, the
# estimate against the average sampled hold times their number.
my $scales = $node->safe_psql('postgres', q{
	SELECT string_agg(DISTINCT round((hold_exclusive_ms / (avg_hold_exclusive_us * holds_timed / 1000))::numeric, 3)::text, ' ')
	  FROM flexlock_lwlocks WHERE holds_timed > 0 AND hold_shared_ms = 0 AND avg_hold_exclusive_us > 0});
is($scales, '100.000', 'the estimated hold totals are 100 times the sampled holds, tranche by tranche');

$s->quit;
$h->quit;
$node->stop;
done_testing();
