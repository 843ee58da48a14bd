# t/013_wal_stop_stress.pl — WAL insertion keeps going while backends are
# descheduled at random: 64 clients insert rows of 10 B to 20 kB (stored
# uncompressed, so that the WAL is as large) through the smallest ring of WAL
# buffers, while the test stops random backends with SIGSTOP for a few
# milliseconds and continues them (a bounded number of times).  It fails if
# a progress interval of pgbench shows 0 tps, if the server log shows a PANIC
# (a stuck spinlock among them), or if after an immediate stop a row whose
# commit pgbench saw acknowledged is missing.
#
# Settings: lock-free WAL buffer initialization with atomic reservation and
# 32 insertion locks, and stock (both with wal_buffers at its minimum).  This
# is the stress that comes in addition to the forced interleaving of t/012;
# it is not expected to hit that interleaving by itself.  make check runs the
# light form (FLEXLOCK_CHECK_MATRIX=light: 15 s and at most 1000 stops per
# setting), make check-full the long one (90 s, at most 6000 stops).
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep time);

my $full = ($ENV{FLEXLOCK_CHECK_MATRIX} // 'light') eq 'full';
my $secs = $ENV{FLEXLOCK_STRESS_SECONDS} // ($full ? 90 : 15);
my $max_stops = $ENV{FLEXLOCK_STRESS_STOPS} // ($full ? 6000 : 1000);
my $clients = 64;

my $node = PostgreSQL::Test::Cluster->new('walstop');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
max_connections = @{[$clients + 10]}
autovacuum = off
wal_buffers = 32kB
max_wal_size = 256MB
log_min_messages = warning
});

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $script = "$tmp/insert.sql";
open my $fh, '>', $script or die $!;
print $fh q{\set len random(10, 20000)
\set n :n + 1
INSERT INTO stress VALUES (:client_id, :n, repeat(md5(:client_id::text || '/' || :n::text), :len / 32 + 1)::text);
};
close $fh;
# (repeat() of an md5 compresses well: EXTERNAL keeps it as long in the WAL)

my %settings = (
	lockfree => {
		wal_buffer_init => 'lockfree',
		wal_insert_reservation => 'atomic',
		wal_insert_locks => 32
	},
	stock => {
		wal_buffer_init => 'lock',
		wal_insert_reservation => 'spinlock',
		wal_insert_locks => 8
	});

for my $name (qw(lockfree stock))
{
	my $set = $settings{$name};
	for my $guc (sort keys %$set)
	{
		$node->adjust_conf('postgresql.conf', $guc, undef);
		$node->append_conf('postgresql.conf', "$guc = $set->{$guc}\n");
	}
	$node->start;
	$node->safe_psql('postgres', q{
DROP TABLE IF EXISTS stress;
CREATE TABLE stress (client int, n int, pad text, PRIMARY KEY (client, n));
ALTER TABLE stress ALTER pad SET STORAGE EXTERNAL;
});
	is( $node->safe_psql(
			'postgres',
			q{SELECT current_setting('wal_buffer_init') || '/' || current_setting('wal_insert_reservation')
			   || '/' || current_setting('wal_insert_locks') || '/' || current_setting('wal_buffers')}),
		"$set->{wal_buffer_init}/$set->{wal_insert_reservation}/$set->{wal_insert_locks}/32kB",
		"$name: settings in effect");
	my $log_offset = -s $node->logfile;

	my $logdir = "$tmp/$name";
	mkdir $logdir or die $!;
	my ($out, $err) = ('', '');
	my $started = time;
	my $pgbench = IPC::Run::start(
		[
			'pgbench', '--no-vacuum', "--client=$clients", '--jobs=2',
			'--time=' . ($secs + 60), '--progress=1', '--define=n=0',
			'--log', "--log-prefix=$logdir/tx", "--file=$script",
			$node->connstr('postgres') . ' application_name=stress'
		],
		'>' => \$out,
		'2>' => \$err);

	# the backends of the run, once all are connected
	my @pids;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		@pids = split /\n/,
		  $node->safe_psql('postgres',
			"SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND application_name = 'stress'");
		last if @pids >= $clients;
		$pgbench->pump_nb;
		usleep(100_000);
	}
	is(scalar(@pids), $clients, "$name: $clients clients connected")
	  or diag("pgbench: $err");

	# stop a random backend for 1-5 ms, then let the others run 5-20 ms
	my $t0 = time;
	my $stops = 0;
	while (time - $t0 < $secs && $stops < $max_stops)
	{
		my $pid = $pids[ int(rand(@pids)) ];
		if (kill 'STOP', $pid)
		{
			usleep(1000 + int(rand(4000)));
			kill 'CONT', $pid;
			$stops++;
		}
		$pgbench->pump_nb if $stops % 50 == 0;
		usleep(5000 + int(rand(15000)));
	}
	# the rest of the time without stops
	usleep(1_000_000 * ($secs - (time - $t0))) if time - $t0 < $secs;
	my $elapsed = time - $t0;
	kill 'CONT', @pids;

	# crash under load
	$node->stop('immediate');
	$pgbench->finish;
	note("$name: $stops stops in $secs s");
	cmp_ok($stops, '>', 0, "$name: backends were stopped and continued ($stops times)");

	# every progress interval that ended before the crash shows progress
	# (pgbench's clock starts before it connects its clients, and its first
	# interval is counted from then: on a slow host the connections can take
	# longer than an interval, which then shows 0 tps; intervals that began
	# before all clients were connected are left out)
	my $connected = $t0 - $started;
	my @progress;
	while ($err =~ /^progress: ([\d.]+) s, ([\d.]+) tps/mg)
	{
		push @progress, [ $1, $2 ] if $1 - 1 >= $connected && $1 <= $connected + $elapsed - 1;
	}
	cmp_ok(scalar(@progress), '>=', int($secs * 0.6), "$name: pgbench reported progress");
	# (a stall of the server is for good: every interval after it shows 0.
	# One interval of 0 is what a host that starves this test's process,
	# the one that continues a stopped backend, for a second looks like:
	# three in a row are asked for)
	my @zero = grep { $_->[1] == 0 } @progress;
	my ($run, $longest) = (0, 0);
	for (@progress)
	{
		$run = $_->[1] == 0 ? $run + 1 : 0;
		$longest = $run if $run > $longest;
	}
	cmp_ok($longest, '<', 3, "$name: no three progress intervals in a row show 0 tps")
	  or diag(join("\n", map { "  at $_->[0] s: $_->[1] tps" } @zero));
	note("$name: tps per second: " . join(' ', map { int($_->[1]) } @progress));

	# what pgbench saw committed: per client, the number of transactions
	my %acked;
	opendir my $dh, $logdir or die $!;
	for my $f (grep { /^tx\./ } readdir $dh)
	{
		for (split /\n/, slurp_file("$logdir/$f"))
		{
			my ($client, $cnt, $lat) = split / /;
			next if $lat !~ /^\d+$/;    # "failed", "skipped"
			$acked{$client}++;
		}
	}
	closedir $dh;
	my $total = 0;
	$total += $_ for values %acked;
	cmp_ok($total, '>', 0, "$name: $total commits acknowledged");

	$node->start;
	my @panics = grep { /PANIC|TRAP|stuck spinlock|terminated by signal/ }
	  split /\n/, slurp_file($node->logfile, $log_offset);
	is("@panics", '', "$name: no PANIC, no stuck spinlock");
	my @missing;
	for my $client (sort { $a <=> $b } keys %acked)
	{
		my $have = $node->safe_psql('postgres',
			"SELECT count(*) FROM stress WHERE client = $client AND n <= $acked{$client}");
		push @missing, "client $client: $have of $acked{$client}" if $have != $acked{$client};
	}
	is("@missing", '', "$name: every acknowledged row is there after the crash");
	my ($avg, $wal) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT round(avg(length(pad))), pg_size_pretty(pg_current_wal_lsn() - '0/0') FROM stress");
	note("$name: rows of $avg bytes on average; $wal of WAL in all");
	cmp_ok($avg, '>', 5000, "$name: the rows are as large as meant (10 B to 20 kB)");
	$node->stop;
}

done_testing();
