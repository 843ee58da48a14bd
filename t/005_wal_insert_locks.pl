# t/005_wal_insert_locks.pl — wal_insert_locks 1, 8 and 128: bad values stop
# the server from starting; shared memory is sized from the setting; the
# walinsert counters show which locks were used; and a crash loop of our own.
#
# Crash loop: concurrent clients commit small rows and WAL records that cross
# WAL pages and segments (1 MB segments, 64 kB of WAL buffers so that
# inserters must evict buffers), with segment switches and checkpoints mixed
# in; the server is stopped in immediate mode while they run and restarted.
# Every commit a client saw acknowledged must be there afterwards, pg_waldump
# must read the whole WAL of the round, and amcheck must find the table and
# its index clean (t/lib/FlexlockWalCrash.pm).
use strict;
use warnings FATAL => 'all';

use FlexlockWalCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $clients = 6;
my $rounds = 4;
my $min_acks = 1500;   # commits acknowledged before each crash, at least

my $node = wal_crash_node('walinsert');

# --- bad values: the server refuses to start -------------------------------

my %refusal = (
	0 => qr/0 is outside the valid range for parameter "wal_insert_locks" \(1 \.\. 128\)/,
	3 => qr/invalid value for parameter "wal_insert_locks": 3.*\n.*must be a power of two/,
	256 => qr/256 is outside the valid range for parameter "wal_insert_locks" \(1 \.\. 128\)/,);
for my $bad (sort { $a <=> $b } keys %refusal)
{
	$node->append_conf('postgresql.conf', "wal_insert_locks = $bad\n");
	my $log_offset = -s $node->logfile || 0;
	ok(!$node->start(fail_ok => 1), "server refuses to start with wal_insert_locks = $bad");
	like(slurp_file($node->logfile, $log_offset), $refusal{$bad}, "... saying why ($bad)");
	$node->adjust_conf('postgresql.conf', 'wal_insert_locks', undef);
}

$node->start;
wal_crash_schema($node);

sub counters
{
	my %c = map { split /\|/ } split /\n/,
	  $node->safe_psql('postgres',
		"SELECT counter, value FROM flexlock_counters WHERE family = 'walinsert'");
	return \%c;
}

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $xlogctl_size_1;
my $base = 0;    # keys of a round: client, then $base + 1 ...

for my $locks (1, 8, 128)
{
	$node->adjust_conf('postgresql.conf', 'wal_insert_locks', undef);
	$node->append_conf('postgresql.conf', "wal_insert_locks = $locks\n");
	$node->restart;
	is($node->safe_psql('postgres', 'SHOW wal_insert_locks'), $locks, "wal_insert_locks = $locks in effect");

	# Shared memory holds exactly wal_insert_locks insertion locks: XLOG Ctl
	# grows by the same amount (a padded lock) for each lock.
	my $xlogctl = $node->safe_psql('postgres',
		"SELECT size FROM pg_shmem_allocations WHERE name = 'XLOG Ctl'");
	if ($locks == 1)
	{
		$xlogctl_size_1 = $xlogctl;
	}
	else
	{
		my $grown = $xlogctl - $xlogctl_size_1;
		ok($grown >= 64 * ($locks - 1) && $grown % ($locks - 1) == 0,
			"XLOG Ctl holds $locks insertion locks ($grown bytes more than with 1)");
	}

	# Which insertion locks were used: 8 clients emitting WAL at once.
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');
	$node->command_ok(
		[
			'pgbench', '--no-vacuum', '--client=8', '--jobs=2', '--transactions=300',
			'--file=' . "$ENV{FLEXLOCK_TOP}/bench-scripts/workloads/wal-emit-small.sql",
			'--define=len=4000', $node->connstr('postgres')
		],
		"pgbench emitting WAL with $locks insertion locks");
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $c = counters();
	my @used = grep { $c->{"acquires_$_"} > 0 } 0 .. 7;
	my $acquires = 0;
	my $waits = 0;
	$acquires += $c->{"acquires_$_"} for 0 .. 7;
	$waits += $c->{"waits_$_"} for 0 .. 7;
	cmp_ok($acquires, '>=', 2400, "an insertion lock for every record ($locks locks)");
	cmp_ok($waits, '<=', $acquires, 'waits are acquisitions');
	cmp_ok($c->{exclusive_all}, '>=', 1, 'the checkpoint took all insertion locks');
	cmp_ok($c->{waitfinish_calls}, '>=', $c->{waitfinish_scans}, 'scans are calls');
	cmp_ok($c->{waitfinish_scans}, '>', 0, 'WAL flushes waited for insertions');
	# the sleeps counted in WaitXLogInsertionsToFinish are the WALInsert
	# tranche's wait-until-free sleeps (its only LWLockWaitForVar caller)
	is( $node->safe_psql(
			'postgres', q{
SELECT (SELECT value FROM flexlock_counters
         WHERE family = 'walinsert' AND counter = 'waitfinish_sleeps') =
       (SELECT block_wait_until_free FROM flexlock_lwlocks WHERE tranche = 'WALInsert')}),
		't', 'waitfinish_sleeps are the WALInsert wait-until-free sleeps');
	if ($locks == 1)
	{
		is("@used", '0', 'one insertion lock: only bucket 0 used');
		# 8 clients, one lock, 2400 records of 4 kB on 2 or more cores:
		# somebody must have found the lock taken
		cmp_ok($waits, '>', 0, 'one insertion lock: inserters waited for it');
	}
	elsif ($locks == 8)
	{
		cmp_ok(scalar(@used), '>=', 3, "eight insertion locks: buckets @used used");
	}

	for my $round (1 .. $rounds)
	{
		$base += 100_000;
		wal_crash_round($node, "$tmp/client-$locks-$round", "locks $locks round $round",
			$clients, $min_acks, $base);
	}
}

# --- contention on the reservation spinlock ---------------------------------------
# Eight clients on two cores that do nothing but reserve WAL (non-
# transactional messages) collide on insertpos_lck: reserve_contended
# counts the reservations whose first test-and-set failed, in the
# reservation itself; the spinlock statistics count, at the same site, those
# that then had to spin.  Load runs 5 s at a time until a collision was
# seen (a collision needs two reservations within the spinlock's hold of
# some tens of nanoseconds: it comes within seconds, sooner on a loaded
# host), for as long as the suite's timeout at most.
$node->safe_psql('postgres', 'SELECT flexlock_reset()');
my $contended = 0;
for (my $t = 0; $t < $PostgreSQL::Test::Utils::timeout_default && $contended == 0; $t += 5)
{
	$node->pgbench('--no-vacuum --client=8 --jobs=2 --time=5',
		0, [qr{processed: \d+}], [qr{^$}], 'pgbench reserving WAL only',
		{ "005_reserve_$t" => q{SELECT pg_logical_emit_message(false, 'flexlock', 'x');} });
	$contended = counters()->{reserve_contended};
}
cmp_ok($contended, '>', 0, "reservations found insertpos_lck taken ($contended)");
my $site = $node->safe_psql('postgres',
	"SELECT coalesce(sum(contended), 0) FROM flexlock_spinlocks WHERE site = 'ReserveXLogInsertLocation'");
cmp_ok($site, '<=', $contended,
	"those that had to spin ($site) are at most those that found it taken");

$node->stop;
done_testing();
