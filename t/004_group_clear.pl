# t/004_group_clear.pl — procarray_group_clear off, on, always and holder:
# TPC-B-like pgbench keeps its balance invariant, subtransactions (also
# overflowed) and prepared transactions commit and stay visible, the
# groupclear counters show which path ran, and nobody is left waiting in
# the group's wait event (PostgreSQL 18 names it ProcarrayGroupUpdate, from
# PROCARRAY_GROUP_UPDATE; the groups of known sizes below see their
# followers in it, so a misspelled name fails there).
#
# Mode on gets groups of 3, 6, 12 and 18 committers formed behind a shared
# holder stopped at an injection point: the group-size buckets, the maximum
# and the followers' sleep time must show each.
#
# holder also gets four deterministic interleavings and an XID storm.  The
# interleavings stop a shared holder of ProcArrayLock at an injection point
# in GetSnapshotData while a committer queues: the shared release must serve
# the committer (it never acquires the lock, its XID is in no later
# snapshot), also when the holder fails with the lock held (error cleanup
# releases it), and a holder that runs another mode must wake the committer
# to take the lock itself, or, if another process takes the lock before the
# woken committer retries (forced with SIGSTOP and a second stopped holder,
# in holder mode), the committer must queue again, servable, and be served
# by that holder's release.  The storm (short transactions that take an XID,
# with snapshot-taking reads and TPC-B-like ones) runs a few seconds at a
# time until 20 committers have slept on ProcArrayLock, and at least 90% of
# them must have been served.  How it fails: shared releases do not serve
# (the interleavings' counters, and the storm's share: 6 of 26 when only
# exclusive releases served); a served committer is never woken (pgbench
# does not come back); or an XID is left in the proc array or cleared twice
# (an XID still in progress when everything is idle, an assertion failure,
# balances that do not add up).  In holder mode every failed conditional
# acquisition ends in exactly one of holder_served (a releaser cleared the
# XID) and holder_self_cleared (the process got the lock and cleared it),
# and every XID a releaser cleared is one that was served.
use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('groupclear');
$node->init;
$node->append_conf('postgresql.conf',
	"max_connections = 30\nmax_prepared_transactions = 20\nautovacuum = off\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock');
$node->command_ok([ 'pgbench', '--initialize', '--scale=1', '--quiet', $node->connstr('postgres') ],
	'pgbench -i');
$node->safe_psql('postgres', 'CREATE TABLE sub (v int); CREATE TABLE prep (v int);');

# The wait event of a group follower (ProcArrayGroupClearXid), as
# pg_stat_activity spells it.
my $group_wait = 'ProcarrayGroupUpdate';

sub gc
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT value FROM flexlock_counters WHERE family = 'groupclear' AND counter = '$name'");
}

# TPC-B-like balances: accounts, tellers, branches and history add up.
sub balances_agree
{
	return $node->safe_psql('postgres', q{
		SELECT (SELECT sum(abalance) FROM pgbench_accounts) =
		       (SELECT sum(tbalance) FROM pgbench_tellers) AND
		       (SELECT sum(tbalance) FROM pgbench_tellers) =
		       (SELECT sum(bbalance) FROM pgbench_branches) AND
		       (SELECT sum(bbalance) FROM pgbench_branches) =
		       (SELECT coalesce(sum(delta), 0) FROM pgbench_history)});
}

my %script = (
	# the benchmark's TPC-B-like transaction (pgbench's built-in one)
	'tpcb' => slurp_file("$ENV{FLEXLOCK_TOP}/bench-scripts/workloads/tpcb-logged.sql"),
	# subtransactions: one kept, one rolled back, then 70 more that
	# overflow the PGPROC subxid cache
	'sub' => q{
BEGIN;
INSERT INTO sub VALUES (1);
SAVEPOINT a;
INSERT INTO sub VALUES (2);
RELEASE a;
SAVEPOINT b;
INSERT INTO sub VALUES (3);
ROLLBACK TO b;
COMMIT;
DO $$ BEGIN FOR i IN 1..70 LOOP BEGIN INSERT INTO sub VALUES (0); END; END LOOP; END $$;
},
	# two-phase commit
	'prep' => q{
BEGIN;
INSERT INTO prep VALUES (1);
PREPARE TRANSACTION 'p:client_id';
COMMIT PREPARED 'p:client_id';
},);

# What must hold in holder mode once every process is done (a failed
# conditional acquisition counts cond_failed, then queues in
# LWLockAcquireOrServed: served, or it took the lock itself).
sub holder_invariants
{
	my ($c, $what) = @_;
	cmp_ok($c->{cond_acquired}, '>', 0, "$what: conditional acquisitions succeed");
	is("$c->{exclusive_acquires}/$c->{follower_sleeps}", '0/0',
		"$what: no unconditional acquisition, no group follower");
	is($c->{holder_served} + $c->{holder_self_cleared}, $c->{cond_failed},
		"$what: every failed conditional acquisition was served by a holder or took the lock");
	is($c->{members_cleared}, $c->{holder_served},
		"$what: every XID cleared by a releasing holder was a queued request");
	is($c->{holder_served_by_shared} + $c->{holder_served_by_exclusive}, $c->{holder_served},
		"$what: every served XID was served after a shared or an exclusive release");
	cmp_ok($c->{holder_self_cleared_slept}, '<=', $c->{holder_self_cleared},
		"$what: processes that slept unserved and then took the lock are among those that took it");
	cmp_ok($c->{holder_self_cleared_slept}, '<=', $c->{holder_woken_unserved},
		"$what: each of them was woken unserved at least once");
}

my @gc_counters = qw(exclusive_acquires cond_acquired cond_failed groups_led members_cleared
  follower_sleeps max_group_size holder_served holder_self_cleared holder_self_cleared_slept
  holder_woken_unserved holder_served_by_shared holder_served_by_exclusive holder_serve_missed
  holder_batch_limit);

my $txns = 0;
for my $mode ('off', 'on', 'always', 'holder')
{
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET procarray_group_clear = $mode; SELECT pg_reload_conf();");
	$node->poll_query_until('postgres', 'SHOW procarray_group_clear', $mode);
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');

	$node->pgbench(
		'--no-vacuum --client=8 --jobs=2 --transactions=150 -D scale=1',
		0,
		[qr{processed: 1200/1200}],
		[qr{^$}],
		"mode $mode: TPC-B-like, subtransactions and prepared transactions",
		{
			"004_tpcb_$mode\@6" => $script{tpcb},
			"004_sub_$mode\@1" => $script{sub},
			"004_prep_$mode\@1" => $script{prep},
		});
	$txns += 1200;

	is(balances_agree(), 't', "mode $mode: account, teller, branch and history balances agree");
	is( $node->safe_psql('postgres', q{
			SELECT count(*) FILTER (WHERE v = 3) = 0
			   AND count(*) FILTER (WHERE v = 1) = count(*) FILTER (WHERE v = 2)
			   AND count(*) FILTER (WHERE v = 0) = 70 * count(*) FILTER (WHERE v = 1)
			  FROM sub}),
		't', "mode $mode: subtransactions committed and rolled back as they should");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_prepared_xacts'),
		'0', "mode $mode: no prepared transaction left behind");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_activity WHERE wait_event = '$group_wait'"),
		'0', "mode $mode: nobody is left waiting in $group_wait");

	my %c = map { $_ => gc($_) } @gc_counters;
	my $hist = $node->safe_psql('postgres',
		"SELECT sum(value) FROM flexlock_counters WHERE family = 'groupclear' AND counter LIKE 'group_size_%'");
	if ($mode eq 'off')
	{
		cmp_ok($c{exclusive_acquires}, '>=', 1000, 'off: XIDs cleared under an unconditional lock');
		is("$c{cond_acquired}/$c{cond_failed}/$c{groups_led}", '0/0/0',
			'off: no conditional acquisition, no group');
	}
	elsif ($mode eq 'on')
	{
		cmp_ok($c{cond_acquired}, '>', 0, 'on: conditional acquisitions succeed');
		is($c{exclusive_acquires}, '0', 'on: no unconditional acquisition');
		is($c{groups_led}, $c{cond_failed} - $c{follower_sleeps},
			'on: every failed conditional acquisition joined a group, as leader or follower');
	}
	elsif ($mode eq 'always')
	{
		cmp_ok($c{members_cleared}, '>=', 1000, 'always: every XID is cleared by a group');
		is("$c{exclusive_acquires}/$c{cond_acquired}/$c{cond_failed}", '0/0/0',
			'always: no other path taken');
		is($c{follower_sleeps}, $c{members_cleared} - $c{groups_led},
			'always: every member but the leader slept until cleared');
	}
	else
	{
		holder_invariants(\%c, 'holder');
	}
	if ($mode ne 'holder')
	{
		is("$c{holder_served}/$c{holder_self_cleared}", '0/0', "mode $mode: the holder path is not taken");
	}
	note("mode $mode: " . join(', ', map { "$_ $c{$_}" } sort keys %c));
	is($hist, $c{groups_led}, "mode $mode: the group size histogram counts every group");
	cmp_ok($c{max_group_size}, '<=', 30, "mode $mode: no group larger than the processes");
}

# --- holder: a committer queued behind shared holders only -----------------
# A session H takes a snapshot and stops at an injection point with
# ProcArrayLock held in shared mode.  A committer C finds the lock busy and
# queues on it.  When H goes on, the release that leaves the lock free (H's,
# or another snapshot's that overlapped it) is a shared one, and it must clear
# C's XID: C never takes ProcArrayLock itself, and no later snapshot shows its
# XID.  Variants: H fails at a second injection point with the lock held (the
# lock is released by error cleanup, which must serve C just the same), and H
# runs with another setting than C (a reload that H has not seen yet), so H's
# release cannot serve and C is woken to take the lock itself.
$node->safe_psql('postgres', 'CREATE EXTENSION injection_points');

# While H holds ProcArrayLock, no new connection can start (it adds itself to
# the proc array in exclusive mode): every query in the window goes through
# sessions opened before, M for the checks.
sub procarray_lock_of
{
	my ($m, $pid) = @_;
	return $m->query_safe(
		"SELECT coalesce(sum(acquire_exclusive), 0) || '/' || coalesce(sum(block_exclusive), 0)"
		  . " FROM flexlock_backends($pid) WHERE tranche = 'ProcArray'");
}

sub set_mode
{
	my ($mode) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET procarray_group_clear = $mode; SELECT pg_reload_conf();");
	$node->poll_query_until('postgres', 'SHOW procarray_group_clear', $mode);
}

sub wait_in_session
{
	my ($m, $what, $cond) = @_;
	for (1 .. 300)
	{
		return 1 if $m->query_safe($cond) eq 't';
		usleep(100_000);
	}
	die "$what: timed out waiting for: $cond";
}

# Session $sess (pid $pid, points local to it) runs a query that stops in
# GetSnapshotData holding ProcArrayLock in shared mode; $extra goes after
# the attach in the same statement, $set before it.  Returns once it waits.
sub stop_in_snapshot
{
	my ($m, $what, $sess, $pid, %o) = @_;
	my ($set, $extra) = ($o{set} // '', $o{extra} // '');
	$sess->query_until(qr/holding/, qq{
		\\echo holding
		$set
		SELECT injection_points_attach('get-snapshot-data-locked', 'wait')$extra;
		SELECT 1;
	});
	wait_in_session($m, $what,
		"SELECT wait_event = 'get-snapshot-data-locked' FROM pg_stat_activity WHERE pid = $pid");
}

# Let the session stopped by stop_in_snapshot() go on (its next snapshot
# does not stop)
sub release_snapshot
{
	my ($m) = @_;
	$m->query_safe(q{SELECT injection_points_detach('get-snapshot-data-locked')});
	$m->query_safe(q{SELECT injection_points_wakeup('get-snapshot-data-locked')});
}

sub queued_commit
{
	my ($what, %opt) = @_;
	set_mode($opt{holder_mode});

	my $log_offset = -s $node->logfile;
	my $m = $node->background_psql('postgres');
	my $h = $node->background_psql('postgres');
	my $c = $node->background_psql('postgres');
	my $hpid = $h->query_safe('SELECT pg_backend_pid()');
	# (S connects now: a new backend takes ProcArrayLock exclusively)
	my ($s, $spid);
	if ($opt{retaken})
	{
		$s = $node->background_psql('postgres');
		$spid = $s->query_safe('SELECT pg_backend_pid()');
		$s->query_safe('SELECT injection_points_set_local()');
	}
	$h->query_safe('SELECT injection_points_set_local()');

	# C: a transaction with an XID, in holder mode (if H is to run in
	# another mode, C sees the reload that H, stopped in a query, does not)
	# (one statement: H's next snapshot waits at the first point and, if
	# told to fail, fails at the second once woken)
	my $fail = $opt{fail} ? q{, injection_points_attach('get-snapshot-data-locked-2', 'error')} : '';
	stop_in_snapshot($m, $what, $h, $hpid, set => 'SET lock_stats_hold_sample = 1;', extra => $fail);
	if ($opt{holder_mode} ne 'holder')
	{
		$m->query_safe("ALTER SYSTEM SET procarray_group_clear = holder");
		$m->query_safe("SELECT pg_reload_conf()");
		wait_in_session($m, $what, q{SELECT setting = 'holder' FROM pg_settings WHERE name = 'procarray_group_clear'})
	}
	wait_in_session($c, $what, q{SELECT current_setting('procarray_group_clear') = 'holder'});
	pass("$what: the committer runs in holder mode");
	my $cpid = $c->query_safe('SELECT pg_backend_pid()');
	$c->query_safe('BEGIN');
	my $xid = $c->query_safe('SELECT pg_current_xact_id()');
	$m->query_safe('SELECT flexlock_reset()');
	my $before = procarray_lock_of($m, $cpid);
	$c->query_until(qr/committing/, q{
		\echo committing
		COMMIT;
	});
	wait_in_session($m, $what, "SELECT wait_event = 'ProcArray' FROM pg_stat_activity WHERE pid = $cpid");
	pass("$what: the committer queues on ProcArrayLock, held in shared mode only");

	# retaken: C is stopped (SIGSTOP) before H's release wakes it, and a
	# third session S takes ProcArrayLock in shared mode and stops holding
	# it before C runs again, so C's retry finds the lock taken and C sleeps
	# a second time (H's next snapshot, or any other process's, can do that
	# by chance between the wakeup and the retry: C is then woken twice,
	# unserved both times, and still clears its XID once)
	kill 'STOP', $cpid if $opt{retaken};
	release_snapshot($m);
	if ($opt{retaken})
	{
		wait_in_session($m, $what, "SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $hpid");
		stop_in_snapshot($m, $what, $s, $spid);
		kill 'CONT', $cpid;
		wait_in_session($m, $what,
			"SELECT value = 1 FROM flexlock_counters WHERE family = 'groupclear' AND counter = 'holder_woken_unserved'");
		wait_in_session($m, $what, "SELECT wait_event = 'ProcArray' FROM pg_stat_activity WHERE pid = $cpid");
		pass("$what: woken unserved, the committer found the lock taken again and queued again");
		release_snapshot($m);
	}
	is($c->query_safe('SELECT 42'), '42', "$what: the committer's COMMIT returns");
	my $after = procarray_lock_of($m, $cpid);
	# H times every hold (nobody else does): a hold that serves requests is
	# a hold too (read over all processes: H may have exited on its error)
	my $h_holds = $m->query_safe(
		"SELECT coalesce(hold_exclusive_ms, 0) > 0 FROM flexlock_lwlocks WHERE tranche = 'ProcArray'");
	if ($opt{fail})
	{
		# (psql stops at the error: ON_ERROR_STOP)
		ok($node->wait_for_log(
				qr/\[$hpid\] .*ERROR:  error triggered for injection point get-snapshot-data-locked-2/, $log_offset),
			"$what: H failed with ProcArrayLock held");
		eval { $h->quit };
	}
	else
	{
		$h->quit;
	}
	$_->quit for grep { defined } ($c, $m, $s);

	my %c = map { $_ => gc($_) } @gc_counters;
	note("$what: " . join(', ', map { "$_ $c{$_}" } sort keys %c));
	my ($acq0, $block0) = split m{/}, $before;
	my ($acq1, $block1) = split m{/}, $after;
	my ($acq, $block) = ($acq1 - $acq0, $block1 - $block0);
	my $served_self = "$c{holder_served}/$c{holder_served_by_shared}/$c{holder_self_cleared}";
	is($c{cond_failed}, 1, "$what: one conditional acquisition failed");
	# Every sleep of the committer ends in a wakeup that served it or in one
	# that did not, and the request ends once, served or cleared by itself.
	is($block, $c{holder_served} + $c{holder_woken_unserved},
		"$what: each of the committer's sleeps ended served or woken unserved ($block sleeps)");
	if ($opt{holder_mode} eq 'holder')
	{
		is($block, 1, "$what: the committer slept once on ProcArrayLock");
		is($acq, 0, "$what: the committer never acquired ProcArrayLock");
		is($served_self, '1/1/0', "$what: its XID was cleared by a shared release, not by itself");
		is($c{holder_woken_unserved}, 0, "$what: it was not woken unserved");
		is($h_holds, 't',
			"$what: H's release took ProcArrayLock exclusively to serve, and that hold was sampled");
	}
	elsif ($opt{retaken})
	{
		# S runs in holder mode (it saw the reload): its release serves C
		is($block, 2, "$what: the committer slept twice on ProcArrayLock");
		is($c{holder_woken_unserved}, 1, "$what: H's release woke it unserved, once");
		is($acq, 0, "$what: the committer never acquired ProcArrayLock");
		is($served_self, '1/1/0', "$what: S's shared release served its second request");
	}
	else
	{
		# H's release, in mode off, wakes C unserved; C then takes the lock,
		# unless another process (H's next snapshot of the same statement,
		# say) takes it first: C sleeps again, and is served if that one runs
		# in holder mode (the retaken case makes that happen)
		cmp_ok($block, '>=', 1, "$what: the committer slept on ProcArrayLock");
		cmp_ok($c{holder_woken_unserved}, '>=', 1, "$what: it was woken unserved");
		is($c{holder_served} + $c{holder_self_cleared}, 1, "$what: its request ended once");
		if ($c{holder_self_cleared})
		{
			is($acq, 1, "$what: the committer took ProcArrayLock itself");
			is($c{holder_self_cleared_slept}, 1, "$what: after sleeping unserved");
		}
		else
		{
			note("$what: the lock was taken again before the committer's retry, by a process in holder mode");
			is($acq, 0, "$what: a served committer did not acquire ProcArrayLock");
		}
	}
	is($node->safe_psql('postgres', "SELECT pg_xact_status('$xid')"), 'committed',
		"$what: the committer's transaction is committed");
	is($node->safe_psql('postgres', "SELECT pg_visible_in_snapshot('$xid', pg_current_snapshot())"),
		't', "$what: its XID is not running in a later snapshot");
	is($node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'ProcArray'"),
		'0', "$what: nobody is left waiting for ProcArrayLock");
}

# --- group clear: groups of known sizes -------------------------------------
# With H stopped holding ProcArrayLock in shared mode, N committers with an
# XID commit at once in mode on: the first fails its conditional acquisition
# and leads the group, sleeping for the lock; the others join and sleep
# until it has cleared them.  Once all N wait, H goes on, after 100 ms more:
# one group of N, its size in the right bucket and as the maximum since the
# reset, and N - 1 followers that slept at least that long.
sub sized_group
{
	my ($m, $h, $hpid, $cs, $n, $bucket) = @_;
	my $what = "a group of $n";
	my @c = @$cs[ 0 .. $n - 1 ];
	my @cpid = map { $_->query_safe('SELECT pg_backend_pid()') } @c;
	$_->query_safe('BEGIN; SELECT pg_current_xact_id();') for @c;
	$m->query_safe('SELECT flexlock_reset()');
	stop_in_snapshot($m, $what, $h, $hpid);
	$_->query_until(qr/committing/, q{
		\echo committing
		COMMIT;
	}) for @c;
	my $pids = join(',', @cpid);
	my $all_wait = "SELECT count(*) = $n FROM pg_stat_activity WHERE pid IN ($pids)"
	  . " AND wait_event IN ('ProcArray', '$group_wait')";
	for (1 .. 300)
	{
		last if $m->query_safe($all_wait) eq 't';
		usleep(100_000);
	}
	if ($m->query_safe($all_wait) ne 't')
	{
		diag($m->query_safe("SELECT pid, state, wait_event_type, wait_event, query"
			  . " FROM pg_stat_activity WHERE pid IN ($pids, $hpid)"));
		die "$what: the committers did not all wait";
	}
	# the leader sleeps on the lock, the followers in the group's wait
	# event: the name the checks for leftover waiters use
	is( $m->query_safe(
			"SELECT string_agg(wait_event || ' ' || n, ', ' ORDER BY wait_event) FROM"
			  . " (SELECT wait_event, count(*) AS n FROM pg_stat_activity WHERE pid IN ($pids)"
			  . " GROUP BY wait_event) w"),
		"ProcArray 1, $group_wait " . ($n - 1),
		"$what: the leader waits for ProcArrayLock, its followers in $group_wait");
	usleep(100_000);
	release_snapshot($m);
	is($_->query_safe('SELECT 42'), '42', "$what: COMMIT returns") for @c;
	$h->query_safe('SELECT 1');

	my %c = map { $_ => gc($_) }
	  qw(groups_led members_cleared max_group_size follower_sleeps follower_wait_ns
	  group_size_1 group_size_2 group_size_3_4 group_size_5_8 group_size_9_16 group_size_17_plus);
	note("$what: " . join(', ', map { "$_ $c{$_}" } sort keys %c));
	is("$c{groups_led}/$c{members_cleared}/$c{max_group_size}", "1/$n/$n",
		"$what: one group of $n cleared, the largest since the reset");
	is(join('/', map { $c{"group_size_$_"} } qw(1 2 3_4 5_8 9_16 17_plus)),
		join('/', map { $_ eq $bucket ? 1 : 0 } qw(1 2 3_4 5_8 9_16 17_plus)),
		"$what: counted in group_size_$bucket only");
	is($c{follower_sleeps}, $n - 1, "$what: its $n - 1 followers slept");
	cmp_ok($c{follower_wait_ns}, '>=', ($n - 1) * 100_000_000,
		"$what: each follower slept at least 100 ms ($c{follower_wait_ns} ns in all)");
}

set_mode('on');
{
	my $m = $node->background_psql('postgres');
	my $h = $node->background_psql('postgres');
	my @cs = map { $node->background_psql('postgres') } 1 .. 18;
	my $hpid = $h->query_safe('SELECT pg_backend_pid()');
	$h->query_safe('SELECT injection_points_set_local()');
	sized_group($m, $h, $hpid, \@cs, 3, '3_4');
	sized_group($m, $h, $hpid, \@cs, 6, '5_8');
	sized_group($m, $h, $hpid, \@cs, 12, '9_16');
	sized_group($m, $h, $hpid, \@cs, 18, '17_plus');
	$_->quit for ($m, $h, @cs);
}

queued_commit('served by a shared release', holder_mode => 'holder');
queued_commit('served by error cleanup', holder_mode => 'holder', fail => 1);
queued_commit('shared holder in mode off', holder_mode => 'off');
queued_commit('shared holder in mode off, lock retaken before the retry', holder_mode => 'off', retaken => 1);
set_mode('holder');

# --- holder: an XID storm ---------------------------------------------------
# A committer that finds ProcArrayLock busy mostly finds it free again a
# moment later, when it queues, and takes it then: one acquisition, no sleep.
# The others sleep on the lock, and the release that leaves it free serves
# them, but for the windows the protocol leaves (a release between a
# committer's queueing and its flag, a fifth batch): how many of those that
# slept were served depends on the scheduler, so it is reported, not
# asserted; that a sleeper is served is what the four interleavings above
# force.  The storm asserts what holds whatever the interleaving: every run
# finishes (a lost wakeup hangs pgbench), the counters' invariants, no XID
# left running, nobody left waiting.  On 2 cores few committers sleep (a few
# per second of this storm), so it runs 3 s at a time until 20 have, for
# 60 s at most.
my $storm_run_s = 3;
my $storm_limit_s = 60;
my $tmp = PostgreSQL::Test::Utils::tempdir;
my %storm = (    # script => weight
	"$tmp/storm_xid.sql" => [ 12, 'SELECT pg_current_xact_id();' ],
	"$tmp/storm_snapshot.sql" => [ 3, 'SELECT count(*) FROM pgbench_branches;' ],
	"$tmp/storm_tpcb.sql" => [ 1, $script{tpcb} ],);
for my $f (keys %storm)
{
	open my $fh, '>', $f or die "$f: $!";
	print $fh $storm{$f}[1];
	close $fh;
}

$node->safe_psql('postgres', 'SELECT flexlock_reset()');
my $storm_start = time;
my ($runs, $storm_error, $slept) = (0, '', 0);
my $storm_min_slept = 20;
while (1)
{
	$runs++;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '--no-vacuum', '--protocol=prepared', '--client=16', '--jobs=2',
			"--time=$storm_run_s", '--define=scale=1',
			(map { "--file=$_\@$storm{$_}[0]" } sort keys %storm),
			$node->connstr('postgres')
		],
		'>' => \$out,
		'2>' => \$err,
		IPC::Run::timeout($storm_run_s + 60));
	my $ok = eval { $h->finish };
	if (!defined $ok)
	{
		# pgbench waits for its clients: one of them never came back
		$h->kill_kill;
		my $timed_out;
		my (undef, $backends) = $node->psql('postgres',
			"SELECT pid, wait_event_type, wait_event, backend_xid, state, query FROM pg_stat_activity"
			  . " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
			timeout => 15,
			timed_out => \$timed_out);
		$storm_error = "run $runs: pgbench did not finish in "
		  . ($storm_run_s + 60)
		  . " s: a committer stuck on ProcArrayLock?  Backends:\n"
		  . ($backends // '(pg_stat_activity did not answer)');
		last;
	}
	if (!$ok || $out !~ /number of failed transactions: 0 /)
	{
		$storm_error = "run $runs: pgbench failed:\n$err";
		last;
	}
	$out =~ m{SQL script \d+: \S*storm_tpcb\.sql\n - weight: \d+ .*\n - (\d+) transactions}
	  or die "no TPC-B-like transaction count in pgbench output:\n$out";
	$txns += $1;
	$slept = gc('holder_served') + gc('holder_self_cleared_slept');
	last if $slept >= $storm_min_slept || time - $storm_start + $storm_run_s > $storm_limit_s;
}
my $storm_s = time - $storm_start;
is($storm_error, '', 'holder storm: every pgbench run finished, without error');
my %c = map { $_ => gc($_) } @gc_counters;
note("holder storm: $c{cond_failed} committers found ProcArrayLock busy, $slept slept on it, "
	  . "$c{holder_served} were served (run $runs, after " . sprintf('%.0f s', $storm_s) . ')');
holder_invariants(\%c, 'holder storm');
note("holder storm, runs of ${storm_run_s} s: $runs; " . join(', ', map { "$_ $c{$_}" } sort keys %c));

# Once the storm's backends are gone, no XID may be left in progress, and
# nobody may be waiting for ProcArrayLock.
my $gone_by = time + 10;
usleep(100_000)
  while time < $gone_by
  && $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()") > 0;
# (a snapshot's xmax is the latest completed XID + 1, so commit one first:
# then any XID still running is below xmax, and in xip)
my $xid = $node->safe_psql('postgres', 'SELECT pg_current_xact_id()');
is($node->safe_psql('postgres', 'SELECT pg_current_snapshot()'),
	($xid + 1) . ':' . ($xid + 1) . ':',
	"holder storm: no XID left in progress (snapshot after XID $xid committed: xmin = xmax, no xip)");
is($node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE wait_event IN ('ProcArray', '$group_wait')"),
	'0', 'holder storm: nobody is left waiting for ProcArrayLock');
is(balances_agree(), 't', 'holder storm: account, teller, branch and history balances agree');

# After everything, a fresh snapshot sees every committed transaction.
is($node->safe_psql('postgres', 'SELECT count(*) FROM pgbench_history')
	  + $node->safe_psql('postgres', 'SELECT count(*) FROM prep')
	  + $node->safe_psql('postgres', 'SELECT count(*) FILTER (WHERE v = 1) FROM sub'),
	$txns, 'every committed transaction of the four modes and the storm is visible');

# (a committer stuck for good would keep a fast shutdown waiting)
$node->stop($storm_error ? 'immediate' : 'fast');
done_testing();
