# t/010_wal_lockfree.pl — wal_insert_reservation = atomic and
# wal_buffer_init = lockfree: bad values stop the server from starting and
# neither can change at run time; the prev-link table is sized from
# max_connections; each setting, alone and both together, with
# wal_insert_locks 1, 8 and 128: the counters show the variant engaged (no
# reservation spinlock, no WALBufMappingLock) and the crash round of t/005
# (t/lib/FlexlockWalCrash.pm) passes: every acknowledged commit survives an
# immediate stop, pg_waldump reads the round's WAL with every prev-link
# checked, amcheck is clean.  A wrong prev-link is silent until WAL is read:
# the last part shows that the pg_waldump check of the rounds catches one
# (a copy of a round's WAL with one record's prev-link pointing one record
# too far back, its CRC recomputed, fails with "incorrect prev-link").
use strict;
use warnings FATAL => 'all';

use File::Copy;
use FlexlockWalCrash;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $clients = 6;
my $rounds = $ENV{FLEXLOCK_WALFREE_ROUNDS} // 1;
my $min_acks = 1500;

my $node = wal_crash_node('walfree');

# --- bad values: the server refuses to start -------------------------------

for my $bad (['wal_insert_reservation', 'lockfree'], ['wal_buffer_init', 'atomic'])
{
	my ($guc, $val) = @$bad;
	$node->append_conf('postgresql.conf', "$guc = $val\n");
	my $log_offset = -s $node->logfile || 0;
	ok(!$node->start(fail_ok => 1), "server refuses to start with $guc = $val");
	like(
		slurp_file($node->logfile, $log_offset),
		qr/invalid value for parameter "$guc": "$val"/,
		"... saying why ($guc)");
	$node->adjust_conf('postgresql.conf', $guc, undef);
}

$node->start;
wal_crash_schema($node);
for my $set (['wal_insert_reservation', 'atomic'], ['wal_buffer_init', 'lockfree'])
{
	my ($rc, $out, $err) = $node->psql('postgres', "SET $set->[0] = $set->[1]");
	like($err, qr/parameter "$set->[0]" cannot be changed without restarting the server/,
		"$set->[0] cannot change at run time");
}
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(name || '=' || setting || '/' || boot_val, ' ' ORDER BY name)
		   FROM pg_settings WHERE name IN ('wal_insert_reservation', 'wal_buffer_init')"),
	'wal_buffer_init=lock/lock wal_insert_reservation=spinlock/spinlock',
	'stock settings by default');

sub set_and_restart
{
	my (%set) = @_;
	for my $guc (sort keys %set)
	{
		$node->adjust_conf('postgresql.conf', $guc, undef);
		$node->append_conf('postgresql.conf', "$guc = $set{$guc}\n");
	}
	$node->restart;
}

sub xlogctl_size
{
	return $node->safe_psql('postgres',
		"SELECT size FROM pg_shmem_allocations WHERE name = 'XLOG Ctl'");
}

sub counters
{
	my %c = map { split /\|/ } split /\n/,
	  $node->safe_psql('postgres',
		"SELECT family || '.' || counter, value FROM flexlock_counters
		  WHERE family IN ('walinsert', 'walreserve', 'walbuffer')");
	return \%c;
}

# --- the prev-link table: four times the entries that can be in it --------
# (every reservation holds an insertion lock: at most wal_insert_locks
# reservations in flight plus the newest record's entry; 16 bytes each,
# rounded up to a power of two)
my $size_spinlock = xlogctl_size();
for my $locks (8, 128)
{
	set_and_restart(wal_insert_reservation => 'atomic', wal_insert_locks => $locks);
	my $grown = xlogctl_size() - $size_spinlock - ($locks - 8) * 128;
	my $entries = 4 * ($locks + 1);
	$entries |= $entries >> $_ for (1, 2, 4, 8, 16);
	$entries += 1;
	is($grown, 16 * $entries,
		"XLOG Ctl grows by a prev-link table of $entries entries with atomic and $locks insertion locks");
}
set_and_restart(wal_insert_reservation => 'spinlock', wal_insert_locks => 8);
is(xlogctl_size(), $size_spinlock, 'and by nothing with spinlock');

# --- each setting alone and both, with 1, 8 and 128 insertion locks --------

my $tmp = PostgreSQL::Test::Utils::tempdir;
my $base = 0;
my @wal;    # a round's WAL range for the prev-link check at the end

for my $locks (1, 8, 128)
{
	for my $combo (['atomic', 'lock'], ['spinlock', 'lockfree'], ['atomic', 'lockfree'])
	{
		my ($res, $buf) = @$combo;
		my $label = "locks $locks, reservation $res, buffers $buf";
		set_and_restart(
			wal_insert_locks => $locks,
			wal_insert_reservation => $res,
			wal_buffer_init => $buf);
		is( $node->safe_psql(
				'postgres',
				"SELECT current_setting('wal_insert_locks') || '/' ||
				        current_setting('wal_insert_reservation') || '/' ||
				        current_setting('wal_buffer_init')"),
			"$locks/$res/$buf",
			"$label: in effect");

		# 8 clients emitting WAL records of 4 kB through 8 WAL buffers.
		$node->safe_psql('postgres', 'SELECT flexlock_reset()');
		$node->command_ok(
			[
				'pgbench', '--no-vacuum', '--client=8', '--jobs=2', '--transactions=300',
				'--file=' . "$ENV{FLEXLOCK_TOP}/bench-scripts/workloads/wal-emit-small.sql",
				'--define=len=4000', $node->connstr('postgres')
			],
			"$label: pgbench emitting WAL");
		$node->safe_psql('postgres', 'CHECKPOINT');
		my $c = counters();
		my $mapping = $node->safe_psql('postgres',
			"SELECT acquire_exclusive FROM flexlock_lwlocks WHERE tranche = 'WALBufMapping'");
		my $spin_site = $node->safe_psql('postgres',
			"SELECT coalesce(sum(spins), 0) FROM flexlock_spinlocks WHERE site = 'ReserveXLogInsertLocation'");
		if ($res eq 'atomic')
		{
			cmp_ok($c->{'walreserve.atomic_reservations'},
				'>=', 2400, "$label: every record reserved by fetch-add");
			is($c->{'walinsert.reserve_contended'} + $spin_site,
				0, "$label: insertpos_lck neither contended nor spun on");
			cmp_ok($c->{'walreserve.prevlink_spins'},
				'>=', $c->{'walreserve.prevlink_waits'}, "$label: a wait spins");
		}
		else
		{
			is($c->{'walreserve.atomic_reservations'}, 0, "$label: no reservation by fetch-add");
		}
		my $pages = $c->{'walbuffer.pages_init_inserter'} + $c->{'walbuffer.pages_init_writer'};
		# 2400 records of 4 kB fill more than 1000 pages of 8 kB
		cmp_ok($pages, '>=', 1000, "$label: WAL buffer pages initialized ($pages)");
		if ($buf eq 'lockfree')
		{
			is($mapping, 0, "$label: WALBufMappingLock never taken");
		}
		else
		{
			cmp_ok($mapping, '>', 0, "$label: WALBufMappingLock taken");
			is($c->{'walbuffer.init_waits'} + $c->{'walbuffer.claim_retries'},
				0, "$label: no lock-free claims");
		}
		note(
			"$label: ",
			join(', ',
				map { "$_ $c->{$_}" }
				  grep { /walreserve|walbuffer/ } sort keys %$c));

		for my $round (1 .. $rounds)
		{
			$base += 100_000;
			my @range = wal_crash_round($node, "$tmp/client-$locks-$res-$buf-$round",
				"$label round $round", $clients, $min_acks, $base);
			@wal = @range if $res eq 'atomic';
		}
	}
}

# --- the check that catches a wrong prev-link ---------------------------------
# pg_waldump, reading a record after another, requires its xl_prev to be the
# previous record's start.  Copy a round's WAL, point the prev-link of one
# record in the middle of the range to the record before its predecessor
# (what a hand-over that mixed up two entries would write), recompute the
# record's CRC so that only the link is wrong, and read the copy.

my @crc_table = map {
	my $c = $_;
	$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
	$c
} 0 .. 255;

sub crc32c
{
	my ($crc, $data) = @_;
	$crc = $crc_table[ ($crc ^ $_) & 0xFF ] ^ ($crc >> 8) for unpack('C*', $data);
	return $crc;
}

# the CRC of an XLogRecord: its data, then its header up to xl_crc
sub record_crc
{
	my ($rec) = @_;
	my $crc = crc32c(0xFFFFFFFF, substr($rec, 24));
	return crc32c($crc, substr($rec, 0, 20)) ^ 0xFFFFFFFF;
}

my ($start_lsn, $start_seg, $end_lsn, $end_seg) = @wal;
my ($all, $err) = ('', '');
IPC::Run::run(
	[
		'pg_waldump', '--path' => $node->data_dir . '/pg_wal',
		'--start' => $start_lsn, '--end' => $end_lsn, $start_seg, $end_seg
	],
	'>' => \$all, '2>' => \$err);
my @records;
for (split /\n/, $all)
{
	push @records, { len => $1, lsn => $2, prev => $3 }
	  if m{len \(rec/tot\):\s*\d+/\s*(\d+), tx:\s*\d+, lsn: ([0-9A-F]+/[0-9A-F]+), prev ([0-9A-F]+/[0-9A-F]+)};
}
cmp_ok(scalar(@records), '>', 100, 'pg_waldump lists the records of an atomic round');

sub lsn_int { my ($hi, $lo) = split m{/}, shift; return hex($hi) * 2**32 + hex($lo); }

# a record in the middle, within one WAL page
my $victim;
for my $i (int(@records / 2) .. $#records)
{
	my $r = $records[$i];
	my $off = lsn_int($r->{lsn}) % 8192;
	next if $off + $r->{len} > 8192 || $i < 2;
	$victim = $i;
	last;
}
ok(defined $victim, 'a record within one page to damage');
my $rec = $records[$victim];
is($rec->{prev}, $records[ $victim - 1 ]->{lsn}, 'its prev-link is its predecessor');

my ($file, $offset) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT file_name, file_offset FROM pg_walfile_name_offset('$rec->{lsn}')");
my $copy = "$tmp/wal-copy";
mkdir $copy or die "$copy: $!";
opendir my $dh, $node->data_dir . '/pg_wal' or die $!;
for my $f (sort grep { /^[0-9A-F]{24}$/ } readdir $dh)
{
	copy($node->data_dir . "/pg_wal/$f", "$copy/$f") or die "copy $f: $!"
	  if $f ge $start_seg && $f le $end_seg;
}
closedir $dh;

open my $fh, '+<:raw', "$copy/$file" or die "$copy/$file: $!";
seek($fh, $offset, 0);
read($fh, my $bytes, $rec->{len}) == $rec->{len} or die "short read";
is(unpack('V', substr($bytes, 20, 4)), record_crc($bytes),
	"the test computes the record's CRC as PostgreSQL does");
my $wrong = lsn_int($records[ $victim - 2 ]->{lsn});
substr($bytes, 8, 8) = pack('Q<', $wrong);
substr($bytes, 20, 4) = pack('V', record_crc($bytes));
seek($fh, $offset, 0);
print $fh $bytes;
close $fh;

my ($out2, $err2) = ('', '');
my $ok2 = IPC::Run::run(
	[
		'pg_waldump', '--path' => $copy,
		'--start' => $start_lsn, '--end' => $end_lsn, $start_seg, $end_seg
	],
	'>' => \$out2, '2>' => \$err2);
ok(!$ok2, 'pg_waldump fails on the copy with one wrong prev-link');
like($err2, qr/incorrect prev-link .* at \Q$rec->{lsn}\E/,
	"... at the damaged record ($rec->{lsn})");

$node->stop;
done_testing();
