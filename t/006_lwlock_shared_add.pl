# t/006_lwlock_shared_add.pl — the LWLock torture test: many more background
# workers than cores hammer one LWLock with shared, exclusive, conditional
# and wait-until-free acquisitions, with shared acquisitions by
# compare-exchange (lwlock_shared_add off), by fetch-add (on), and both side
# by side; every acquisition checks that no exclusive holder coexists with
# another holder, and a worker that is never woken fails the run.  Then the
# whole server with lwlock_shared_add on under pgbench: balances add up, and
# fetch-adds backed out (counted only on that path).  Last, one
# interleaving forced with an injection point: a queued process whose
# back-out frees the lock wakes the waiters, itself among them; that must
# not count as a sleep or a wakeup.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $workers = 16;
my $seconds = $ENV{FLEXLOCK_TORTURE_SECONDS} || 4;

my $node = PostgreSQL::Test::Cluster->new('sharedadd');
$node->init;
$node->append_conf('postgresql.conf',
	"max_worker_processes = 40\nmax_connections = 30\nautovacuum = off\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock; CREATE EXTENSION flexlock_inject; CREATE EXTENSION injection_points;');

my $total = 0;
for my $run (
	[ 'exchange', 70, 20, 5, 5 ],
	[ 'fetch_add', 70, 20, 5, 5 ],
	[ 'mixed', 70, 20, 5, 5 ],
	# mostly shared with a few exclusive holders: the back-out path
	[ 'fetch_add', 95, 5, 0, 0 ],
	[ 'mixed', 90, 4, 3, 3 ],)
{
	my ($alg, $sh, $ex, $cond, $wuf) = @$run;
	my ($acq, $violations, $maxwait, $backouts, $wakeups, $sleeps) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT acquisitions, violations, max_wait_ms, backouts, backout_wakeups, sleeps
		   FROM flexlock_torture_lwlock($workers, $seconds, $sh, $ex, $cond, $wuf,
		                                algorithm => '$alg', wait_bound_ms => 10000)");
	my $what = "$alg, $sh/$ex/$cond/$wuf % shared/exclusive/conditional/until-free";
	note "$what: $acq acquisitions, $sleeps sleeps, $backouts back-outs, $wakeups back-out wakeups, longest wait $maxwait ms";
	is($violations, 0, "$what: invariants held on every acquisition");
	cmp_ok($maxwait, '<', 10000, "$what: no wait longer than 10 s");
	cmp_ok($sleeps, '>', 0, "$what: workers slept on the lock (it was contended)");
	if ($alg eq 'exchange')
	{
		is($backouts, 0, "$what: no back-outs without fetch-add");
	}
	else
	{
		cmp_ok($backouts, '>', 0, "$what: fetch-adds backed out");
		cmp_ok($wakeups, '>', 0, "$what: back-outs that freed the lock woke its waiters");
	}
	$total += $acq;
}
cmp_ok($total, '>=', 1_000_000, "$total acquisitions in all");

# The whole server with shared fetch-add: pgbench select-only and TPC-B-like
# at once, then the counters.
$node->safe_psql('postgres',
	'ALTER SYSTEM SET lwlock_shared_add = on; SELECT pg_reload_conf();');
$node->poll_query_until('postgres', 'SHOW lwlock_shared_add', 'on');
$node->command_ok([ 'pgbench', '--initialize', '--scale=2', '--quiet', $node->connstr('postgres') ],
	'pgbench -i');
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[ 'pgbench', '--client=12', '--jobs=2', '--time=5', '--builtin=select-only@3',
	  '--builtin=tpcb-like@1', $node->connstr('postgres') ],
	'pgbench select-only and TPC-B-like with lwlock_shared_add = on');
is( $node->safe_psql('postgres',
		'SELECT sum(abalance) = (SELECT sum(bbalance) FROM pgbench_branches) FROM pgbench_accounts'),
	't', 'pgbench balances add up');
# Shared acquisitions took the fetch-add path: no counter counts them, but a
# back-out (sharedadd.backouts) happens only there, when the fetch-add finds
# the lock held exclusively, as TPC-B-like's updates of a branch row hold
# its page while other clients read it.
cmp_ok(
	$node->safe_psql('postgres',
		q{SELECT value FROM flexlock_counters WHERE family = 'sharedadd' AND counter = 'backouts'}),
	'>', 0, 'pgbench: shared acquisitions by fetch-add backed out (lwlock_shared_add took effect)');

# --- a back-out that wakes its own process --------------------------------------
# X holds the test lock exclusively.  P, with fetch-add, backs out, queues
# itself, tries again and stops (injection point) with its unit added.  X
# releases meanwhile: it sees P's unit, takes the lock for shared-held and
# wakes nobody.  P takes its unit back, finds the lock free with a waiter
# queued, and runs the wakeup: the waiter is P.  P then takes the lock
# without having slept.
{
	my $x = $node->background_psql('postgres');
	my $p = $node->background_psql('postgres');
	my $ppid = $p->query_safe('SELECT pg_backend_pid()');
	$p->query_safe(q{
		SET lwlock_shared_add = on;
		SELECT flexlock_test_lwlock('shared');
		SELECT injection_points_set_local();
		SELECT injection_points_attach('lwlock-shared-add-backout-queued', 'wait');});
	# (an extension tranche has its name only in processes that registered
	# it: other readers go by its id)
	my $tid = $p->query_safe(q{
		SELECT tranche_id FROM flexlock_backends(pg_backend_pid())
		 WHERE tranche = 'flexlock_test'});
	$x->query_safe(q{
		SELECT injection_points_set_local();
		SELECT injection_points_attach('flexlock-test-lwlock-held', 'wait');});
	$x->query_until(qr/holding/, q{
		\echo holding
		DO $$BEGIN PERFORM flexlock_test_lwlock('exclusive'); END$$;
	});
	$node->wait_for_event('client backend', 'flexlock-test-lwlock-held');
	$p->query_until(qr/acquiring/, q{
		\echo acquiring
		DO $$BEGIN PERFORM flexlock_test_lwlock('shared'); END$$;
	});
	$node->wait_for_event('client backend', 'lwlock-shared-add-backout-queued');
	pass('P stopped in its second attempt, queued, with its unit added');
	# X releases while P's unit is in the count
	$node->safe_psql('postgres',
		q{SELECT injection_points_wakeup('flexlock-test-lwlock-held')});
	is($x->query_safe('SELECT 1'), '1', 'X released the test lock');
	$node->safe_psql('postgres',
		q{SELECT injection_points_wakeup('lwlock-shared-add-backout-queued')});
	is($p->query_safe('SELECT 1'), '1', 'P got the lock after its back-out');
	my ($acq, $blocks, $wakeups) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT acquire_shared, block_shared, wakeups FROM flexlock_backends($ppid)
		 WHERE tranche_id = $tid});
	is($acq, 2, 'P: two shared acquisitions of the test lock');
	is("$blocks/$wakeups", '0/0',
		'P: the wakeup of itself counts as neither a sleep nor a wakeup issued');
	cmp_ok(
		$node->safe_psql('postgres', q{
			SELECT value FROM flexlock_counters
			 WHERE family = 'sharedadd' AND counter = 'backout_wakeups'}),
		'>=', 1, 'the back-out ran the wakeup');
	$p->query_safe(q{SELECT injection_points_detach('lwlock-shared-add-backout-queued')});
	$x->query_safe(q{SELECT injection_points_detach('flexlock-test-lwlock-held')});
	$_->quit for ($x, $p);
}

$node->stop;
done_testing();
