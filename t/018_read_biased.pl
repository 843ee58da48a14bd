# t/018_read_biased.pl — read-biased LWLocks (lwlock_read_biased, patch 0018).
#
# First the interleavings the protocol's invariant is about, forced one by
# one with injection points on the test lock (made read-biased by
# flexlock_inject.test_lock_read_biased, alone, so that the counters are its own):
#   1. a writer waits for a reader that holds the lock through its slot,
#      polling (readbias.drain_polls, not a sleep on the lock), and the bias
#      stays off for a while after the revocation (rb_inhibit);
#   2. a reader that announced itself before a revocation and checks the bias
#      after it falls back to the state word, and the writer waits for its
#      announcement to go;
#   3. a conditional exclusive acquisition looks at the slots, gives up on a
#      biased reader and leaves the state word alone; one right after it
#      gives up without looking;
#   4. while one writer revokes, another sleeps in the lock's queue (it does
#      not poll) and is woken by the end of the revocation, and a
#      conditional one gives up;
#   5. a woken reader owes a wakeup, so it must not hold through a slot.
# Then the torture test with the type (mutual exclusion checked on every
# acquisition, a lost wakeup fails the run), and the whole server under
# pgbench with every tranche read-biased; 6. a serving release must not
# leave the waiters to slot holders (procarray_group_clear = holder); 7. an
# acquisition nested in the announcement window (WaitEventCustomLock, taken
# by the injection point's wait) must not take the announced slot; 8. a
# revoking writer exits when the postmaster dies; 9. a queued revoker that
# exits so leaves nobody waiting on its account, 10. also when a release
# woke it while it polled.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $seconds = $ENV{FLEXLOCK_TORTURE_SECONDS} || 4;

my $node = PostgreSQL::Test::Cluster->new('readbiased');
$node->init;
$node->append_conf('postgresql.conf', qq{
flexlock_inject.test_lock_read_biased = on
max_worker_processes = 40
max_connections = 30
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock; CREATE EXTENSION flexlock_inject; CREATE EXTENSION injection_points;');
is($node->safe_psql('postgres', 'SHOW lwlock_read_biased'), '', 'lwlock_read_biased is empty');

sub counter
{
	my ($name) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT value FROM flexlock_counters WHERE family = 'readbias' AND counter = '$name'});
}

sub counters
{
	return join ' ',
	  map { "$_=" . counter($_) }
	  qw(biased_acquires fallbacks_unbiased fallbacks_revoked bias_grants revocations
	  drain_waits drain_polls revoke_waits nowait_failures nowait_skips);
}

# Shared acquisitions, in new sessions, until one has granted the bias (20
# at most; see bias_on)
sub acquire_until_granted
{
	my $grants = counter('bias_grants');
	for (1 .. 20)
	{
		$node->safe_psql('postgres', q{SELECT flexlock_test_lwlock('shared')});
		last if counter('bias_grants') > $grants;
		usleep(50_000);
	}
}

# Turn the bias of the test lock on: wait out the delay after the last
# revocation (at most about 131 ms), then a shared acquisition through the
# state word grants it, and the next one goes through a slot.  (rb_inhibit
# counts 16 us units in 16 bits: a delay set about a second ago can look
# ahead once in 8 and hold the bias back up to 131 ms more, so the grant is
# tried again until it happens.  Each acquisition is made by a new process,
# whose first read-biased acquisition looks at the clock.)
sub bias_on
{
	my ($what) = @_;
	usleep(300_000);
	my $grants = counter('bias_grants');
	my $biased = counter('biased_acquires');
	acquire_until_granted();
	is(counter('bias_grants') - $grants, 1, "$what: a shared acquisition turned the bias on");
	$node->safe_psql('postgres', q{SELECT flexlock_test_lwlock('shared')});
	is(counter('biased_acquires') - $biased, 1, "$what: the next one went through a slot");
}

# What the process of pid counted for the test lock's tranche: its sleeps
# (waits) and their time, and the wakeups it gave
sub test_lock_stats_of
{
	my ($sess, $pid) = @_;
	return $sess->query_safe(qq{
		SELECT coalesce(sum(waits), 0) || '/' || coalesce(sum(wakeups), 0)
		  FROM flexlock_backends($pid) WHERE tranche = 'flexlock_test'});
}

# Voluntary context switches of a process so far: a process that polls
# makes them by the hundred per second, one asleep on its semaphore none.
sub ctxt_switches
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/status") or return -1;
	while (<$fh>)
	{
		return $1 if /^voluntary_ctxt_switches:\s+(\d+)/;
	}
	return -1;
}

# the pid's wait event, '' if none
sub wait_event_of
{
	my ($pid) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT coalesce(wait_event_type || ':' || wait_event, '')
		  FROM pg_stat_activity WHERE pid = $pid});
}

sub session
{
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	return ($s, $pid);
}

# Start the test lock function in a background session without waiting for
# it to return.
sub start_test_lock
{
	my ($sess, $mode) = @_;
	$sess->query_until(qr/started/, qq{
		\\echo started
		DO \$\$BEGIN PERFORM flexlock_test_lwlock('$mode'); END\$\$;
	});
}

# Make the session's process, alone, stop at each injection point named.
sub attach_wait
{
	my ($sess, @points) = @_;
	$sess->query_safe(join "\n", 'SELECT injection_points_set_local();',
		map { "SELECT injection_points_attach('$_', 'wait');" } @points);
}

# Start flexlock_test_lwlock_nested() (the outer lock, then the test lock)
# in a background session without waiting for it to return.
sub start_nested
{
	my ($sess) = @_;
	$sess->query_until(qr/started/, q{
		\echo started
		SELECT flexlock_test_lwlock_nested(0);
	});
}

# Whether the process exits within 10 s.
sub exits
{
	my ($pid) = @_;
	for (1 .. 100)
	{
		return 1 if !kill(0, $pid);
		usleep(100_000);
	}
	return 0;
}

# A new node with the test lock read-biased, for a test that kills its
# postmaster.
sub pmdeath_node
{
	my ($name) = @_;
	my $n = PostgreSQL::Test::Cluster->new($name);
	$n->init;
	$n->append_conf('postgresql.conf', qq{
flexlock_inject.test_lock_read_biased = on
autovacuum = off
});
	$n->start;
	$n->safe_psql('postgres', 'CREATE EXTENSION flexlock; CREATE EXTENSION flexlock_inject; CREATE EXTENSION injection_points;');
	return $n;
}

# Wait until the process waits for an LWLock.
sub wait_for_lwlock_wait
{
	my ($pid, $who) = @_;
	$node->poll_query_until('postgres',
		qq{SELECT wait_event_type = 'LWLock' FROM pg_stat_activity WHERE pid = $pid})
	  or die "$who does not wait";
}

# --- 1. a writer waits for a reader holding the lock through its slot -------
#
# The revocation waits half a second for R, so it keeps the bias off for
# LW_RB_INHIBIT_MAX (about 131 ms) from its end (rb_inhibit), which comes
# after the test wakes R.  W's 32 shared acquisitions right after must not
# turn the bias on: that holds if they are over within 131 ms of the
# wakeup, which W's clock tells; a run in which W was descheduled longer
# proves nothing about rb_inhibit, and the case is run again (5 times at
# most).  Without rb_inhibit, the first of them turns the bias on at once.
sub case_1
{
	my ($try) = @_;
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	bias_on("1 (try $try)");
	my ($r, $rpid) = session();
	my ($w, $wpid) = session();
	attach_wait($r, 'flexlock-test-lwlock-held');
	my $biased = counter('biased_acquires');
	start_test_lock($r, 'shared');
	$node->wait_for_event('client backend', 'flexlock-test-lwlock-held');
	is(counter('biased_acquires') - $biased, 1, '1: R holds the test lock through its slot');
	# W: the exclusive acquisition, then at once 32 shared ones
	my $grants = counter('bias_grants');
	my $unbiased = counter('fallbacks_unbiased');
	$w->query_until(qr/started/, q{
		\echo started
		DO $$BEGIN
		  PERFORM flexlock_test_lwlock('exclusive');
		  FOR i IN 1 .. 32 LOOP PERFORM flexlock_test_lwlock('shared'); END LOOP;
		  PERFORM set_config('regress.t_last', extract(epoch FROM clock_timestamp())::text, false);
		END$$;
	});
	wait_for_lwlock_wait($wpid, 'W');
	ok($node->poll_query_until('postgres', q{
			SELECT value > 0 FROM flexlock_counters WHERE family = 'readbias' AND counter = 'drain_polls'}),
		'1: W polls R\'s slot (readbias.drain_polls)');
	usleep(500_000);
	like(wait_event_of($wpid), qr/^LWLock:/,
		'1: W still waits for the lock half a second later (R holds it through its slot)');
	is(counter('revocations'), 1, '1: W revoked the bias');
	is(counter('drain_waits'), 1, '1: W found R announced and waits for it');
	my $t_wakeup = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
	$node->safe_psql('postgres',
		q{SELECT injection_points_wakeup('flexlock-test-lwlock-held')});
	is($r->query_safe('SELECT 1'), '1', '1: R released');
	is($w->query_safe('SELECT 1'), '1', '1: W got the lock and released it');
	my $ms = 1000 * ($w->query_safe(q{SELECT current_setting('regress.t_last')}) - $t_wakeup);
	unlike(wait_event_of($wpid), qr/^LWLock/, '1: W waits no more');
	my $within = $ms < 120;
	if ($within)
	{
		is(counter('bias_grants') - $grants, 0,
			sprintf('1: 32 shared acquisitions right after the revocation (%.0f ms after the wakeup) '
				  . 'did not turn the bias on (rb_inhibit)', $ms));
		is(counter('fallbacks_unbiased') - $unbiased, 32, '1: they went through the state word');
	}
	else
	{
		note sprintf('1: W took %.0f ms after the wakeup, past what rb_inhibit covers: again', $ms);
	}
	my ($wsleeps) = split m{/}, test_lock_stats_of($w, $wpid);
	is($wsleeps, 0, '1: W\'s polls are not counted as sleeps on the lock');
	is($w->query_safe(q{
		SELECT count(*) FROM flexlock_lwlock_wait_histogram WHERE tranche = 'flexlock_test'}),
		'0', '1: nor in the sleep histograms');
	is($w->query_safe(q{
		SELECT coalesce(sum(wait_ms), 0) FROM flexlock_hot_lwlocks WHERE tranche = 'flexlock_test'}),
		'0', '1: nor in the hot locks\' sleep time');
	$r->query_safe(q{SELECT injection_points_detach('flexlock-test-lwlock-held')});
	$_->quit for ($r, $w);
	note counters();
	return $within;
}
{
	my $within = 0;
	for my $try (1 .. 5)
	{
		last if ($within = case_1($try));
	}
	ok($within, '1: W\'s 32 acquisitions ran within 120 ms of the wakeup in one of 5 tries');
}

# --- 2. announced before the revocation, checked after it ------------------
{
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	bias_on('2');
	my ($r, $rpid) = session();
	my ($w, $wpid) = session();
	attach_wait($r, 'lwlock-read-bias-announced');
	start_test_lock($r, 'shared');
	$node->wait_for_event('client backend', 'lwlock-read-bias-announced');
	pass('2: R announced itself in its slot and stopped before checking the bias');
	start_test_lock($w, 'exclusive');
	wait_for_lwlock_wait($wpid, 'W');
	is(counter('drain_waits'), 1, '2: W revoked the bias and waits for R\'s announcement');
	$node->safe_psql('postgres',
		q{SELECT injection_points_wakeup('lwlock-read-bias-announced')});
	is($r->query_safe('SELECT 1'), '1', '2: R got the lock');
	is($w->query_safe('SELECT 1'), '1', '2: W got the lock');
	is(counter('fallbacks_revoked'), 1,
		'2: R saw the bias gone after announcing itself and went through the state word');
	is(counter('biased_acquires'), 1, '2: R did not take the lock through its slot');
	$r->query_safe(q{SELECT injection_points_detach('lwlock-read-bias-announced')});
	$_->quit for ($r, $w);
	note counters();
}

# --- 3. a conditional exclusive acquisition gives up and leaves the bias ----
{
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	bias_on('3');
	my ($r, $rpid) = session();
	attach_wait($r, 'flexlock-test-lwlock-held');
	start_test_lock($r, 'shared');
	$node->wait_for_event('client backend', 'flexlock-test-lwlock-held');
	my ($ok, $out, $err) = $node->psql('postgres',
		q{SELECT flexlock_test_lwlock('exclusive_conditional')});
	like($err, qr/the test lock is not free/,
		'3: a conditional exclusive acquisition fails while R holds the lock through its slot');
	is(counter('nowait_failures'), 1, '3: counted as a conditional failure');
	is(counter('revocations'), 0,
		'3: it looked at the slots without revoking (the state word is left alone)');
	# The second attempt skips the look if it comes within 9 times what the
	# first one's look cost (at least 32 us, rb_inhibit): a process
	# descheduled between the two misses that window, so the pair is tried
	# again, up to 20 times.  Without the skip, no pair ever skips.
	my $pairs = 0;
	while ($pairs < 20)
	{
		$pairs++;
		($ok, $out, $err) = $node->psql('postgres',
			q{SELECT flexlock_test_lwlock('exclusive_conditional_twice')});
		like($err, qr/the test lock is not free/, "3: two conditional attempts in a row fail (pair $pairs)");
		last if counter('nowait_skips') > 0;
	}
	cmp_ok(counter('nowait_skips'), '>=', 1,
		"3: a second attempt gave up without looking, so soon after the first found a reader ($pairs pairs)");
	is(counter('nowait_failures'), 1 + 2 * $pairs, '3: every attempt is a conditional failure');
	my $biased = counter('biased_acquires');
	$node->safe_psql('postgres', q{SELECT flexlock_test_lwlock('shared')});
	is(counter('biased_acquires') - $biased, 1,
		'3: the bias is still on: the next shared acquisition goes through a slot');
	$node->safe_psql('postgres',
		q{SELECT injection_points_wakeup('flexlock-test-lwlock-held')});
	is($r->query_safe('SELECT 1'), '1', '3: R released');
	$node->safe_psql('postgres', q{SELECT flexlock_test_lwlock('exclusive_conditional')});
	pass('3: with nobody left, the conditional acquisition revokes and succeeds');
	$r->query_safe(q{SELECT injection_points_detach('flexlock-test-lwlock-held')});
	$r->quit;
	note counters();
}

# --- 4. while one writer revokes, another waits and a conditional gives up --
{
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	bias_on('4');
	my ($w1, $w1pid) = session();
	my ($w2, $w2pid) = session();
	attach_wait($w1, 'lwlock-read-bias-revoking');
	start_test_lock($w1, 'exclusive');
	$node->wait_for_event('client backend', 'lwlock-read-bias-revoking');
	pass('4: W1 took the bias away and stopped before reading the slots');
	start_test_lock($w2, 'exclusive');
	wait_for_lwlock_wait($w2pid, 'W2');
	is(counter('revoke_waits'), 2,
		'4: W2 found W1 revoking, queued, found it again and sleeps (two attempts)');
	my $cs = ctxt_switches($w2pid);
	usleep(300_000);
	cmp_ok(ctxt_switches($w2pid) - $cs, '<', 10,
		'4: W2 sleeps in the lock\'s queue, it does not poll (context switches in 0.3 s)');
	my ($ok, $out, $err) = $node->psql('postgres',
		q{SELECT flexlock_test_lwlock('exclusive_conditional')});
	like($err, qr/the test lock is not free/,
		'4: a conditional exclusive acquisition gives up during the revocation');
	my $unbiased = counter('fallbacks_unbiased');
	$node->safe_psql('postgres', q{SELECT flexlock_test_lwlock('shared')});
	cmp_ok(counter('fallbacks_unbiased') - $unbiased, '>=', 1,
		'4: a reader during the revocation goes through the state word, and is not held up');
	is(counter('bias_grants'), 1, '4: ... and does not turn the bias on again');
	$node->safe_psql('postgres',
		q{SELECT injection_points_wakeup('lwlock-read-bias-revoking')});
	is($w1->query_safe('SELECT 1'), '1', '4: W1 got the lock');
	is($w2->query_safe('SELECT 1'), '1', '4: W2 got the lock');
	is(counter('revocations'), 1, '4: one revocation in all');
	my ($w2sleeps) = split m{/}, test_lock_stats_of($w2, $w2pid);
	cmp_ok($w2sleeps, '>=', 1, '4: W2\'s wait was a sleep on the lock, and W1\'s end of revocation woke it');
	$w1->query_safe(q{SELECT injection_points_detach('lwlock-read-bias-revoking')});
	$_->quit for ($w1, $w2);
	note counters();
}

# --- 5. a woken reader owes a wakeup: it must not hold through a slot ------
# E holds the test lock exclusively; S (shared) and then W (exclusive) queue
# and sleep.  S is stopped (SIGSTOP) before E releases: the release wakes S
# only, and leaves W asleep for S's release to wake.  Another session turns
# the bias on meanwhile (its release wakes nobody: S has not run yet).  S is
# resumed: if it took the lock through its slot now, its release would wake
# nobody and W would sleep on a free lock forever.
{
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	my ($e, $epid) = session();
	my ($sh, $spid) = session();
	my ($w, $wpid) = session();
	attach_wait($e, 'flexlock-test-lwlock-held');
	start_test_lock($e, 'exclusive');
	$node->wait_for_event('client backend', 'flexlock-test-lwlock-held');
	for my $s ([ $sh, $spid, 'shared' ], [ $w, $wpid, 'exclusive' ])
	{
		my ($sess, $pid, $mode) = @$s;
		start_test_lock($sess, $mode);
		wait_for_lwlock_wait($pid, "the $mode waiter");
	}
	pass('5: S (shared) and W (exclusive) sleep behind E');
	kill 'STOP', $spid;
	$node->safe_psql('postgres',
		q{SELECT injection_points_wakeup('flexlock-test-lwlock-held')});
	is($e->query_safe('SELECT 1'), '1', '5: E released, waking S (stopped) and not W');
	# (case 4's rb_inhibit is still there; a release wakes nobody
	# meanwhile, S not having run yet)
	usleep(300_000);
	acquire_until_granted();
	is(counter('bias_grants'), 1, '5: meanwhile a shared acquisition turned the bias on');
	kill 'CONT', $spid;
	my $done = 0;
	for (1 .. 100)
	{
		$done = $node->safe_psql('postgres',
			qq{SELECT coalesce(wait_event_type, '') <> 'LWLock' FROM pg_stat_activity WHERE pid = $wpid}) eq 't';
		last if $done;
		usleep(100_000);
	}
	ok($done, '5: W is woken and gets the lock once S releases it');
	is($sh->query_safe('SELECT 1'), '1', '5: S got the lock');
	if ($done)
	{
		is($w->query_safe('SELECT 1'), '1', '5: W got the lock');
		$e->query_safe(q{SELECT injection_points_detach('flexlock-test-lwlock-held')});
		$_->quit for ($e, $sh, $w);
	}
	else
	{
		# W sleeps on a free lock: a wakeup from another release frees it
		$node->safe_psql('postgres', q{SELECT flexlock_test_lwlock('exclusive')});
		$e->query_safe(q{SELECT injection_points_detach('flexlock-test-lwlock-held')});
		$_->quit for ($e, $sh, $w);
	}
	note counters();
}

# --- torture ----------------------------------------------------------------
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
my $total = 0;
for my $run (
	[ 16, 70, 20, 5, 5 ],
	[ 16, 95, 3, 1, 1 ],
	[ 16, 99, 1, 0, 0 ],
	[ 4, 100, 0, 0, 0 ],
	[ 16, 50, 30, 10, 10 ],)
{
	my ($workers, $sh, $ex, $cond, $wuf) = @$run;
	my ($acq, $violations, $maxwait, $sleeps) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT acquisitions, violations, max_wait_ms, sleeps
		   FROM flexlock_torture_lwlock($workers, $seconds, $sh, $ex, $cond, $wuf,
		                                algorithm => 'readbiased', wait_bound_ms => 10000)");
	my $what = "readbiased, $workers workers, $sh/$ex/$cond/$wuf % shared/exclusive/conditional/until-free";
	note "$what: $acq acquisitions, $sleeps sleeps, longest wait $maxwait ms; " . counters();
	is($violations, 0, "$what: invariants held on every acquisition");
	cmp_ok($maxwait, '<', 10000, "$what: no wait longer than 10 s");
	$total += $acq;
}
cmp_ok($total, '>=', 300_000, "$total acquisitions in all");
cmp_ok(counter('biased_acquires'), '>', 0, 'torture: acquisitions went through slots');
cmp_ok(counter('revocations'), '>', 0, 'torture: writers revoked the bias');
cmp_ok(counter('drain_waits'), '>', 0, 'torture: writers waited for biased readers');
cmp_ok(counter('drain_ns'), '>', 0, 'torture: the time writers spent revoking is counted');
cmp_ok(counter('fallbacks_revoked'), '>', 0,
	'torture: readers that announced themselves during a revocation went through the state word: '
	  . counters());
cmp_ok(counter('drain_polls'), '>', 0, 'torture: revoking writers polled readers\' slots');

# --- the whole server, every tranche read-biased ----------------------------
$node->append_conf('postgresql.conf', "lwlock_read_biased = 'all'\n");
$node->restart;
is($node->safe_psql('postgres', 'SHOW lwlock_read_biased'), 'all', 'lwlock_read_biased = all');
$node->command_ok([ 'pgbench', '--initialize', '--scale=2', '--quiet', $node->connstr('postgres') ],
	'pgbench -i');
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
$node->command_ok(
	[ 'pgbench', '--client=12', '--jobs=2', '--time=5', '--builtin=select-only@3',
	  '--builtin=tpcb-like@1', $node->connstr('postgres') ],
	'pgbench select-only and TPC-B-like with every tranche read-biased');
is( $node->safe_psql('postgres',
		'SELECT sum(abalance) = (SELECT sum(bbalance) FROM pgbench_branches) FROM pgbench_accounts'),
	't', 'pgbench balances add up');
note 'pgbench: ' . counters();
cmp_ok(counter('biased_acquires'), '>', 0, 'pgbench: shared acquisitions went through slots');
cmp_ok(counter('revocations'), '>', 0, 'pgbench: writers revoked biases');

# --- 6. a serving release must not leave the waiters to slot holders ------
# procarray_group_clear = holder: a commit that finds ProcArrayLock busy
# queues as a servable waiter, and the release that leaves the lock free in
# the state word serves it.  G holds the lock through the state word, R
# through its slot; C commits and queues.  G's release cannot serve C (it
# must not wait for R): it must wake C, which then waits for R itself.  R's
# release, through its slot, wakes nobody; before the fix C slept on a free
# lock until some other process took it exclusively.  (Found by review.)
$node->append_conf('postgresql.conf',
	"lwlock_read_biased = 'ProcArray'\nprocarray_group_clear = holder\n");
$node->restart;
{
	$node->safe_psql('postgres', 'CREATE TABLE serve_t (x int)');
	my ($g, $gpid) = session();
	my ($r, $rpid) = session();
	my ($c, $cpid) = session();
	my ($m, $mpid) = session();
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	my $off = -s $node->logfile;
	# G and R hold the lock until the test lets each go (injection points)
	attach_wait($g, 'flexlock-test-procarray-word');
	attach_wait($r, 'flexlock-test-procarray-slot');
	$g->query_until(qr/go/, "\\echo go\nSELECT flexlock_test_procarray(0, 'word');\n");
	$node->wait_for_log(qr/holding ProcArrayLock through the word/, $off);
	$r->query_until(qr/go/, "\\echo go\nSELECT flexlock_test_procarray(0, 'slot');\n");
	$node->wait_for_log(qr/holding ProcArrayLock through the slot/, $off);
	pass('6: G holds ProcArrayLock through the state word, R through its slot');
	# (M's session was opened before: a new connection needs ProcArrayLock
	# exclusively, which G and R hold in shared mode)
	my $state_of_c = qq{SELECT coalesce(wait_event_type || ':' || wait_event, '') || ' ' || state
		FROM pg_stat_activity WHERE pid = $cpid};
	my $until = sub {
		my ($want) = @_;
		my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
		my $seen;
		while (time < $deadline)
		{
			$seen = $m->query_safe($state_of_c);
			last if $seen =~ $want;
			usleep(20_000);
		}
		return $seen;
	};
	$c->query_until(qr/go/, "\\echo go\nBEGIN; INSERT INTO serve_t VALUES (1); COMMIT;\n");
	is($until->(qr/^LWLock:ProcArray active$/), 'LWLock:ProcArray active', '6: C, committing, waits for ProcArrayLock');
	$m->query_safe(q{SELECT injection_points_wakeup('flexlock-test-procarray-word')});
	$node->wait_for_log(qr/released ProcArrayLock held through the word/, $off);
	cmp_ok($m->query_safe(q{SELECT value FROM flexlock_counters WHERE counter = 'holder_serve_missed'}),
		'>=', 1, '6: G\'s release could not serve C');
	like($m->query_safe($state_of_c), qr/ active$/, '6: C has not committed while R holds the lock');
	$m->query_safe(q{SELECT injection_points_wakeup('flexlock-test-procarray-slot')});
	$node->wait_for_log(qr/released ProcArrayLock held through the slot/, $off);
	my $done = $until->(qr/ idle$/) =~ / idle$/;
	ok($done, '6: C commits once R has released (G\'s release woke it)');
	if (!$done)
	{
		# C sleeps on a free lock: another commit's exclusive acquisition frees it
		$m->query_safe('BEGIN; INSERT INTO serve_t VALUES (2); COMMIT;');
	}
	is($c->query_safe('SELECT count(*) FROM serve_t'), $done ? '1' : '2', '6: C\'s row is there');
	$_->quit for ($g, $r, $c, $m);
}

# --- 7. a nested acquisition in the announcement window keeps its own slot --
# Between R1 and R3 of an acquisition of the test lock, the injection point's
# wait callback takes WaitEventCustomLock in shared mode; with its tranche
# read-biased that nested acquisition goes through a slot too.  It must not
# take the slot the test lock was announced in: if it did, it would clear
# that slot on release, R would hold the test lock through a slot that reads
# empty, and W's scan would find nobody to wait for (found by review; fails
# without the reservation of the slot before R1).
$node->append_conf('postgresql.conf', "lwlock_read_biased = 'WaitEventCustom'\n");
$node->restart;
{
	my ($r, $rpid) = session();
	my ($w, $wpid) = session();
	# the wait events of both injection points exist (registering one
	# revokes the bias of WaitEventCustomLock): a round with no writer
	attach_wait($r, 'lwlock-read-bias-announced', 'flexlock-test-lwlock-held');
	bias_on('7');
	start_test_lock($r, 'shared');
	for my $point ('lwlock-read-bias-announced', 'flexlock-test-lwlock-held')
	{
		$node->wait_for_event('client backend', $point);
		$node->safe_psql('postgres', "SELECT injection_points_wakeup('$point')");
	}
	is($r->query_safe('SELECT 1'), '1', '7: a first round registers the wait events');

	# WaitEventCustomLock biased again (R's own shared acquisitions, as
	# pg_wait_events lists the custom events, turn it on if nobody else's
	# has): until one of R's goes through a slot
	usleep(300_000);
	my $through_slot = 0;
	for (1 .. 100)
	{
		my $biased = counter('biased_acquires');
		$r->query_safe('SELECT count(*) FROM pg_wait_events');
		$through_slot = counter('biased_acquires') > $biased;
		last if $through_slot;
		usleep(20_000);
	}
	ok($through_slot, '7: WaitEventCustomLock is biased');
	usleep(300_000);
	for (1 .. 20)
	{
		my $grants = counter('bias_grants');
		$node->safe_psql('postgres', q{SELECT flexlock_test_lwlock('shared')});
		last if counter('bias_grants') > $grants;
		usleep(50_000);
	}

	my $biased = counter('biased_acquires');
	start_test_lock($r, 'shared');
	$node->wait_for_event('client backend', 'lwlock-read-bias-announced');
	cmp_ok(counter('biased_acquires') - $biased, '>=', 1,
		'7: R announced the test lock, and its wait took WaitEventCustomLock through a slot');
	$node->safe_psql('postgres', q{SELECT injection_points_wakeup('lwlock-read-bias-announced')});
	$node->wait_for_event('client backend', 'flexlock-test-lwlock-held');
	pass('7: R holds the test lock (through its slot)');
	start_test_lock($w, 'exclusive');
	usleep(500_000);
	like(wait_event_of($wpid), qr/^LWLock:/,
		'7: W still waits for the test lock half a second later (R\'s slot names it)');
	$node->safe_psql('postgres', q{SELECT injection_points_wakeup('flexlock-test-lwlock-held')});
	is($r->query_safe('SELECT 1'), '1', '7: R released');
	is($w->query_safe('SELECT 1'), '1', '7: W got the lock and released it');
	$r->query_safe(q{
		SELECT injection_points_detach('lwlock-read-bias-announced');
		SELECT injection_points_detach('flexlock-test-lwlock-held');});
	$_->quit for ($r, $w);
	note counters();
}
$node->stop;

# --- bad settings are refused with the valid names ----------------------------
$node->append_conf('postgresql.conf', "lwlock_read_biased = 'ProcArray, NoSuchTranche'\n");
my $log_offset = -s $node->logfile;
my $ret = $node->start(fail_ok => 1);
ok(!$ret, 'a server with an unknown tranche in lwlock_read_biased does not start');
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/invalid value for parameter "lwlock_read_biased"/, 'the error names the setting');
like($log, qr/Unrecognized LWLock tranche: "NoSuchTranche"/, 'and the bad name');
like($log, qr/Valid values are "all" or a list of: .*ProcArray.*BufferContent/,
	'and lists the valid ones');
$node->append_conf('postgresql.conf', "lwlock_read_biased = 'procarray,XactSLRU'\n");
$node->start;
is($node->safe_psql('postgres', 'SHOW lwlock_read_biased'), 'procarray,XactSLRU',
	'names are matched regardless of case');
$node->stop;

# --- 8. a revoking writer whose reader never lets go exits with the postmaster
# R holds the test lock through its slot and is stopped (SIGSTOP); W revokes
# and polls R's slot.  The postmaster dies: W must notice and exit, as a
# process waiting on its latch would, instead of polling forever.
$node = pmdeath_node('readbiased_pmdeath');
{
	bias_on('8');
	my ($r, $rpid) = session();
	my ($w, $wpid) = session();
	attach_wait($r, 'flexlock-test-lwlock-held');
	start_test_lock($r, 'shared');
	$node->wait_for_event('client backend', 'flexlock-test-lwlock-held');
	kill 'STOP', $rpid;
	start_test_lock($w, 'exclusive');
	wait_for_lwlock_wait($wpid, 'W');
	usleep(300_000);
	is(counter('drain_waits'), 1, '8: W revoked the bias and polls R\'s slot');
	$node->kill9;
	my $gone = exits($wpid);
	ok($gone, '8: W exited once the postmaster was gone');
	kill 'KILL', $rpid;
	kill 'KILL', $wpid if !$gone;
	eval { $_->quit } for ($r, $w);
}

# --- 9. a revoker that exits with the postmaster leaves nobody waiting ----
# P (flexlock_test_lwlock_nested) holds the outer test lock and finds the
# test lock held exclusively by S: it stops before queueing
# (lwlock-before-queue).  S releases, the bias is turned on, R holds through
# its slot and is stopped.  P queues, finds the lock free and biased and
# revokes as a queued revoker, polling R's slot; E (exclusive) finds the
# revocation and sleeps in the queue; F (nested) sleeps on the outer lock P
# holds.  The postmaster dies.  P must take itself off the queue and wake E
# before it exits (a queued revoker skips W3's wakeup because it tries the
# lock next, which an exiting one never does), and must not exit holding the
# outer lock.  E and F then get as far as R's slot and exit in turn.  With P
# exiting as it did first, E and F sleep on their semaphores for good.
#
# 10. The same, but while P polls, Q takes the test lock in shared mode
# through the state word (a revocation in progress lets readers do that)
# and releases it: the release finds the lock free with waiters and wakes
# the first, P, which is still polling, and clears RELEASE_OK for P to set
# again when it retries.  An exiting P never retries: it must take up that
# wakeup and set RELEASE_OK (LWLockDequeueSelf does both), or its wakeup of
# E finds RELEASE_OK clear and wakes nobody.
sub queued_revoker_exits
{
	my ($n, $woken) = @_;
	$node = pmdeath_node("readbiased_pmdeath_queued$n");
	my ($s, $spid) = session();
	my ($p, $ppid) = session();
	my ($r, $rpid) = session();
	my ($e, $epid) = session();
	my ($f, $fpid) = session();
	attach_wait($s, 'flexlock-test-lwlock-held');
	start_test_lock($s, 'exclusive');
	$node->wait_for_event('client backend', 'flexlock-test-lwlock-held');
	attach_wait($p, 'lwlock-before-queue');
	start_nested($p);
	$node->wait_for_event('client backend', 'lwlock-before-queue');
	pass("$n: P holds the outer lock and stopped before queueing for the test lock (held by S)");
	$node->safe_psql('postgres', q{SELECT injection_points_wakeup('flexlock-test-lwlock-held')});
	is($s->query_safe('SELECT 1'), '1', "$n: S released");
	$s->query_safe(q{SELECT injection_points_detach('flexlock-test-lwlock-held')});
	bias_on($n);
	attach_wait($r, 'flexlock-test-lwlock-held');
	my $biased = counter('biased_acquires');
	start_test_lock($r, 'shared');
	$node->wait_for_event('client backend', 'flexlock-test-lwlock-held');
	is(counter('biased_acquires') - $biased, 1, "$n: R holds the test lock through its slot");
	kill 'STOP', $rpid;
	$node->safe_psql('postgres', q{SELECT injection_points_wakeup('lwlock-before-queue')});
	my $drain_waits = 0;
	for (1 .. 100)
	{
		$drain_waits = counter('drain_waits');
		last if $drain_waits >= 1;
		usleep(50_000);
	}
	is($drain_waits, 1, "$n: P queued, revoked the bias and polls R's slot");
	start_test_lock($e, 'exclusive');
	wait_for_lwlock_wait($epid, 'E');
	if ($woken)
	{
		my ($q, $qpid) = session();
		my $unbiased = counter('fallbacks_unbiased');
		$q->query_safe(q{SELECT flexlock_test_lwlock('shared')});
		is(counter('fallbacks_unbiased') - $unbiased, 1,
			"$n: Q took the test lock through the state word during the revocation");
		my (undef, $qwakeups) = split m{/}, test_lock_stats_of($q, $qpid);
		is($qwakeups, 1, "$n: Q's release woke one waiter, P (first in the queue), which polls on");
		$q->quit;
	}
	start_nested($f);
	wait_for_lwlock_wait($fpid, 'F');
	pass("$n: E sleeps behind the revocation, F on the outer lock");
	$node->kill9;
	for my $who ([ 'P', $ppid ], [ 'E', $epid ], [ 'F', $fpid ])
	{
		ok(exits($who->[1]), "$n: $who->[0] exited once the postmaster was gone");
	}
	kill 'KILL', $rpid;
	kill 'KILL', $_ for grep { kill(0, $_) } ($ppid, $epid, $fpid);
	eval { $_->quit } for ($s, $p, $r, $e, $f);
}
queued_revoker_exits(9, 0);
queued_revoker_exits(10, 1);

done_testing();
