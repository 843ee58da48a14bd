# t/012_wal_buffer_stall.pl — wal_buffer_init = lockfree: the interleaving
# of issue 26, forced with injection points, must not stop WAL insertion.
#
# With a ring of r = 4 WAL buffers (wal_buffers at its minimum) and pages
# U-1, U, U+1, ... where WAL up to the end of U-1 is written:
#
#   C  reserves a record that covers U, U+1, U+2 and part of U+3, and stops
#      before copying it (wal-insert-reserved);
#   A  reserves a small record in U+3; on its way there it claims page U and
#      stops before initializing it (wal-buffer-init-claimed);
#   B  reserves a small record in U+3, claims and publishes U+1, U+2, U+3 and
#      stops in its wait for InitializedUpTo (wal-buffer-init-wait);
#   A  is resumed: it publishes U and stops before it advances
#      InitializedUpTo (wal-buffer-init-published);
#   C  is resumed: it finds U .. U+3 published, copies its record on the fast
#      path of GetXLogBuffer() and finishes;
#   D  reserves a record that runs from U+3 into U+4, so it needs page U+4,
#      whose buffer held U.  Page U can now be written out.
#
# In the version of patch 0011 that claimed a page as soon as the old page in
# its buffer was written, D claimed U+4 and overwrote U's buffer before
# InitializedUpTo had passed U, which then could never pass it: D, then A and
# B, spun until "stuck spinlock" (minutes) and no inserter needing a new page
# got through.  The test fails then because D's insertion does not return.
# With the fix, D waits for InitializedUpTo to pass U, which its own wait
# loop brings about, and every insertion returns.
#
# A process stops by sending itself SIGSTOP (module flexlock_inject), which is
# what a descheduling does to it and sleeps on nothing inside the critical
# section; the test resumes it with SIGCONT.  The WAL insertion locks are 128,
# one per backend, so no process queues behind a stopped one's lock.  The
# positions of all records are checked as the test goes, so that a record
# written by something else shows as a wrong layout, not as a pass.  The
# scenario runs with wal_insert_reservation spinlock and atomic.  Then two
# claimers of one page are stopped just before their claim's
# compare-and-exchange: one claim must fail and its claimer wait for the
# other's page (claim_race below).
use strict;
use warnings FATAL => 'all';

use FlexlockForce;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $page = 8192;
my $seg = 16 * 1024 * 1024;
# how long D may take before the insertions count as stopped
my $stall_secs = 30;

my $node = PostgreSQL::Test::Cluster->new('walstall');
# (without data checksums: a hint bit set by a catalog lookup would log a
# full-page image in the middle of the layout)
$node->init(extra => ['--no-data-checksums']);
# quiet: no background WAL (no standby snapshots at wal_level minimal, no
# autovacuum, no timed checkpoints); the WAL writer, which would write WAL
# and initialize buffers of its own accord, is stopped in its sleep for the
# length of each scenario (stop_at_rest)
$node->append_conf(
	'postgresql.conf', q{
wal_level = minimal
max_wal_senders = 0
autovacuum = off
checkpoint_timeout = 1h
max_wal_size = 1GB
wal_writer_delay = 10s
wal_buffers = 32kB
wal_buffer_init = lockfree
wal_insert_locks = 128
max_connections = 20
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock_inject; CREATE EXTENSION flexlock');
is($node->safe_psql('postgres', "SELECT current_setting('wal_buffers')"),
	'32kB', 'four WAL buffers');

sub lsn_int { my ($hi, $lo) = split m{/}, shift; return hex($hi) * 2**32 + hex($lo); }

# the length of the record of pg_logical_emit_message(false, 'x', <len bytes>):
# header 24, main-data header 2 (short) or 5, xl_logical_message 24, prefix 2;
# in WAL it takes that rounded up to 8
sub msg_tot { my $l = shift; my $data = 26 + $l; return 24 + ($data < 256 ? 2 : 5) + $data; }
sub msg_len { return (msg_tot(shift) + 7) & ~7; }

# send SQL to a background session without waiting for it; its completion
# shows as "done-TAG" on its output.  query_until() empties the output it
# has read: if the statement finished before this process read "sent-TAG"
# (a busy machine), "done-TAG" came with it and is remembered here.
my %done_early;

sub send_sql
{
	my ($s, $tag, $sql) = @_;
	my $out = $s->query_until(qr/sent-$tag/, "\\echo sent-$tag\n$sql;\n\\echo done-$tag\n");
	$done_early{"$s $tag"} = 1 if $out =~ /done-$tag/;
	return;
}

sub finished
{
	my ($s, $tag, $secs) = @_;
	my $deadline = time + $secs;
	while (1)
	{
		return 1 if $done_early{"$s $tag"};
		$s->{run}->pump_nb();
		return 1 if $s->{stdout} =~ /done-$tag/;
		return 0 if time >= $deadline;
		usleep(20_000);
	}
}

sub emit { my ($len, $flush) = @_; return "SELECT pg_logical_emit_message(false, 'x', repeat('c', $len), $flush)"; }

sub scenario
{
	my ($reservation) = @_;
	my $label = "reservation $reservation";
	$node->adjust_conf('postgresql.conf', 'wal_insert_reservation', undef);
	$node->append_conf('postgresql.conf', "wal_insert_reservation = $reservation\n");
	$node->restart;
	is( $node->safe_psql(
			'postgres',
			q{SELECT current_setting('wal_insert_reservation') || '/' || current_setting('wal_buffer_init')
			   || '/' || current_setting('wal_insert_locks')}),
		"$reservation/lockfree/128",
		"$label: settings in effect");
	my $log_offset = -s $node->logfile;
	my $walwriter = stop_at_rest($node, 'walwriter', 'WalWriterMain');

	my $m = $node->background_psql('postgres');
	my %s = map { $_ => $node->background_psql('postgres') } qw(A B C D);
	my %pid = map { $_ => $s{$_}->query_safe('SELECT pg_backend_pid()') } keys %s;
	# warm the sessions' caches: the steps below look nothing up for the first time
	for my $s ($m, values %s)
	{
		$s->query_safe(emit(10, 'false'));
		$s->query_safe("SELECT flexlock_inject_stop_once('flexlock-warm-up', 0)");
		$s->query_safe("SELECT flexlock_inject_detach('flexlock-warm-up')");
		$s->query_safe('SELECT pg_current_wal_insert_lsn(), pg_switch_wal() IS NULL');
	}

	# Step 0: the insert position at the start of a segment S, one record
	# filling page S exactly, written out: U = S + 1 page.
	$m->query_safe('SELECT pg_switch_wal()');
	my $pos = lsn_int($m->query_safe('SELECT pg_current_wal_insert_lsn()'));
	my $S = $pos - 40;
	is($S % $seg, 0, "$label: at the start of a segment after a switch");
	my $end0 = lsn_int($m->query_safe(emit($page - 40 - 55, 'true')));
	my $U = $S + $page;
	is($end0, $U, "$label: a record ends exactly at the end of page U-1");

	$m->query_safe("SELECT flexlock_inject_stop_once('wal-insert-reserved', $pid{C})");
	$m->query_safe("SELECT flexlock_inject_stop_once('wal-buffer-init-claimed', $pid{A})");
	$m->query_safe("SELECT flexlock_inject_stop_once('wal-buffer-init-published', $pid{A})");
	$m->query_safe("SELECT flexlock_inject_stop_once('wal-buffer-init-wait', $pid{B})");

	# C: U+24 .. U+3 pages+224, stopped before copying
	my $lenC = 3 * ($page - 24) + 200 - 55;
	send_sql($s{C}, 'C', emit($lenC, 'false'));
	ok(wait_stopped($pid{C}, 'C'), "$label: C stops with its record reserved");
	my $afterC = $U + 3 * $page + 24 + msg_len($lenC) - 3 * ($page - 24);
	is(lsn_int($m->query_safe('SELECT pg_current_wal_insert_lsn()')),
		$afterC, "$label: C's record ends in page U+3");

	# A: a record in U+3; claims U and stops
	send_sql($s{A}, 'A', emit(100, 'false'));
	ok(wait_stopped($pid{A}), "$label: A stops having claimed page U");
	# B: a record in U+3; claims and publishes U+1 .. U+3, then waits for U
	send_sql($s{B}, 'B', emit(100, 'false'));
	ok(wait_stopped($pid{B}), "$label: B stops waiting for InitializedUpTo");
	is(lsn_int($m->query_safe('SELECT pg_current_wal_insert_lsn()')),
		$afterC + 2 * msg_len(100), "$label: A's and B's records follow in U+3");

	# A publishes U and stops before advancing InitializedUpTo
	kill 'CONT', $pid{A};
	ok(wait_stopped($pid{A}), "$label: A stops having published page U");

	# C copies its record through U .. U+3 on the fast path
	kill 'CONT', $pid{C};
	ok(finished($s{C}, 'C', $PostgreSQL::Test::Utils::timeout_default),
		"$label: C's insertion returns");

	# D needs page U+4, whose buffer held U
	send_sql($s{D}, 'D', emit(9000, 'false'));
	my $d_ok = finished($s{D}, 'D', $stall_secs);
	ok($d_ok, "$label: D's insertion, which needs page U+4, returns within $stall_secs s");
	my $endD = lsn_int($m->query_safe('SELECT pg_current_wal_insert_lsn()'));
	cmp_ok(int($endD / $page), '==', int($U / $page) + 4, "$label: D's record ends in page U+4");

	kill 'CONT', $pid{B};
	kill 'CONT', $pid{A};
	if (!$d_ok)
	{
		kill 'CONT', $walwriter;
		# every inserter needing a new page spins now until "stuck spinlock"
		$node->stop('immediate');
		eval { $_->quit } for ($m, values %s);
		$node->start;
		return;
	}
	ok(finished($s{A}, 'A', $PostgreSQL::Test::Utils::timeout_default), "$label: A's insertion returns");
	ok(finished($s{B}, 'B', $PostgreSQL::Test::Utils::timeout_default), "$label: B's insertion returns");

	for my $p (qw(wal-insert-reserved wal-buffer-init-claimed wal-buffer-init-published wal-buffer-init-wait))
	{
		$m->query_safe("SELECT flexlock_inject_detach('$p')");
	}

	# WAL goes on: 2 MB of WAL through the four buffers, and a commit
	$m->query_safe(q{SELECT count(pg_logical_emit_message(false, 'x', repeat('z', 4000))) FROM generate_series(1, 500)});
	$m->query_safe('CREATE TABLE t_after (i int); INSERT INTO t_after VALUES (1); DROP TABLE t_after');
	my $start = sprintf('%X/%X', $U >> 32, $U & 0xffffffff);
	my ($end, $start_seg, $end_seg) = split /\|/,
	  $m->query_safe("SELECT lsn, pg_walfile_name('$start'), pg_walfile_name(lsn) FROM pg_current_wal_flush_lsn() lsn");
	$_->quit for ($m, values %s);
	kill 'CONT', $walwriter;

	# the WAL of the scenario reads back, with the four messages in it
	# (segments named: see t/lib/FlexlockWalCrash.pm)
	my ($out, $err) = run_command(
		[
			'pg_waldump', '--path' => $node->data_dir . '/pg_wal', '--rmgr' => 'LogicalMessage',
			'--start' => $start, '--end' => $end, $start_seg, $end_seg
		]);
	my @lens = $out =~ /len \(rec\/tot\):\s*\d+\/\s*(\d+),.*desc: MESSAGE/g;
	is("@lens[0..3]", join(' ', map { msg_tot($_) } ($lenC, 100, 100, 9000)),
		"$label: pg_waldump reads C's, A's, B's and D's records in order");
	unlike(slurp_file($node->logfile, $log_offset), qr/PANIC|TRAP/, "$label: no PANIC");
	return;
}

# Two claimers of one page.  A and B each insert a small record into page U,
# which nobody has initialized: both read InitializeReserved = U and stop
# just before their claim's compare-and-exchange (wal-buffer-init-claim).  A
# goes on, claims U and stops before initializing it (wal-buffer-init-
# claimed).  B goes on: its compare-and-exchange must fail (claim_retries),
# and B must then wait for A's page (init_waits), not initialize U a second
# time.  With a claim made by a plain store, B claims U too and neither
# counter moves.
sub claim_race
{
	my ($reservation) = @_;
	my $label = "claim race, reservation $reservation";
	$node->adjust_conf('postgresql.conf', 'wal_insert_reservation', undef);
	$node->append_conf('postgresql.conf', "wal_insert_reservation = $reservation\n");
	$node->restart;

	my $walwriter = stop_at_rest($node, 'walwriter', 'WalWriterMain');
	my $m = $node->background_psql('postgres');
	my %s = map { $_ => $node->background_psql('postgres') } qw(A B);
	my %pid = map { $_ => $s{$_}->query_safe('SELECT pg_backend_pid()') } keys %s;
	for my $s ($m, values %s)
	{
		$s->query_safe(emit(10, 'false'));
		$s->query_safe("SELECT flexlock_inject_stop_once('flexlock-warm-up', 0)");
		$s->query_safe("SELECT flexlock_inject_detach('flexlock-warm-up')");
		$s->query_safe('SELECT pg_current_wal_insert_lsn(), pg_switch_wal() IS NULL');
		$s->query_safe('SELECT sum(value) FROM flexlock_counters');
		$s->query_safe('SELECT flexlock_reset()');
	}

	# page S filled exactly and written: the next insertion needs page U
	$m->query_safe('SELECT pg_switch_wal()');
	my $S = lsn_int($m->query_safe('SELECT pg_current_wal_insert_lsn()')) - 40;
	is($S % $seg, 0, "$label: at the start of a segment after a switch");
	my $U = $S + $page;
	is(lsn_int($m->query_safe(emit($page - 40 - 55, 'true'))), $U,
		"$label: a record ends exactly at the end of page U-1");
	$m->query_safe('SELECT flexlock_reset()');

	$m->query_safe("SELECT flexlock_inject_stop_once('wal-buffer-init-claim', $pid{A}, $pid{B})");
	$m->query_safe("SELECT flexlock_inject_stop_once('wal-buffer-init-claimed', $pid{A})");

	send_sql($s{A}, 'A', emit(100, 'false'));
	ok(wait_stopped($pid{A}), "$label: A stops before its claim of page U");
	is(lsn_int($m->query_safe('SELECT pg_current_wal_insert_lsn()')), $U + 24 + msg_len(100),
		"$label: A's record is the first of page U");
	send_sql($s{B}, 'B', emit(100, 'false'));
	ok(wait_stopped($pid{B}), "$label: B stops before its claim of page U");
	kill 'CONT', $pid{A};
	ok(wait_stopped($pid{A}), "$label: A claimed page U and stops before initializing it");
	kill 'CONT', $pid{B};
	# B runs on until it waits for A's page, which A (stopped) never
	# publishes: wait until B counted that wait, or got through (the broken
	# case), however long B takes to get a core
	my $counters = q{SELECT string_agg(counter || '=' || value, ' ' ORDER BY counter)
	  FROM flexlock_counters WHERE family = 'walbuffer' AND counter IN ('claim_retries', 'init_waits')};
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	my $seen = '';
	while (time < $deadline)
	{
		$seen = $m->query_safe($counters);
		last if $seen =~ /init_waits=[1-9]/ || finished($s{B}, 'B', 0);
		usleep(20_000);
	}
	ok(!finished($s{B}, 'B', 0), "$label: B does not get through while A has not published U");
	is($seen, 'claim_retries=1 init_waits=1',
		"$label: B's claim failed (claim_retries) and B waits for A's page (init_waits)");
	kill 'CONT', $pid{A};
	ok(finished($s{A}, 'A', $PostgreSQL::Test::Utils::timeout_default), "$label: A's insertion returns");
	ok(finished($s{B}, 'B', $PostgreSQL::Test::Utils::timeout_default), "$label: B's insertion returns");
	$m->query_safe("SELECT flexlock_inject_detach('$_')") for qw(wal-buffer-init-claim wal-buffer-init-claimed);

	my $start = sprintf('%X/%X', $U >> 32, $U & 0xffffffff);
	my ($end, $start_seg, $end_seg) = split /\|/,
	  $m->query_safe("SELECT lsn, pg_walfile_name('$start'), pg_walfile_name(lsn) FROM pg_switch_wal() lsn");
	$_->quit for ($m, values %s);
	kill 'CONT', $walwriter;
	my ($out, $err) = run_command(
		[
			'pg_waldump', '--path' => $node->data_dir . '/pg_wal', '--rmgr' => 'LogicalMessage',
			'--start' => $start, '--end' => $end, $start_seg, $end_seg
		]);
	my @lens = $out =~ /len \(rec\/tot\):\s*\d+\/\s*(\d+),.*desc: MESSAGE/g;
	is("@lens", join(' ', map { msg_tot($_) } (100, 100)),
		"$label: pg_waldump reads A's and B's records in page U");
	return;
}

scenario($_) for qw(spinlock atomic);
claim_race($_) for qw(spinlock atomic);

$node->stop('immediate');
done_testing();
