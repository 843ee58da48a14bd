# t/lib/FlexlockWalCrash.pm — the WAL insertion crash round of t/005 and
# t/010: concurrent clients commit small rows and WAL records that cross WAL
# pages and segments (the node has 1 MB segments), with segment switches and
# checkpoints mixed in; the server is stopped in immediate mode while they
# run and restarted.  Every commit a client saw acknowledged must be there
# afterwards, pg_waldump must read the whole WAL of the round (it checks
# every record's CRC and, reading on from one record to the next, that its
# prev-link is the start of the record before), and amcheck must find the
# table and its index clean.  The node needs the extensions amcheck and
# flexlock and the table acked: wal_crash_node() and wal_crash_schema().
package FlexlockWalCrash;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use FlexlockAcked;

our @EXPORT = qw(wal_crash_node wal_crash_schema wal_crash_round);

# wal_crash_node($name): a node (initialized, not started) for crash rounds:
# 1 MB WAL segments, 64 kB of WAL buffers so that inserters must evict
# buffers, WAL kept for pg_waldump.
sub wal_crash_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(extra => ['--wal-segsize=1']);
	$node->append_conf(
		'postgresql.conf', qq{
max_connections = 30
autovacuum = off
wal_buffers = 64kB
min_wal_size = 4MB
max_wal_size = 32MB
wal_keep_size = 4GB
log_min_messages = warning
});
	return $node;
}

# wal_crash_schema($node): what the rounds need in the started node
sub wal_crash_schema
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
CREATE EXTENSION amcheck;
CREATE EXTENSION flexlock;
CREATE TABLE acked (client int, n int, pad text, PRIMARY KEY (client, n));
});
	return;
}

# One client's script: transactions of three sizes, each followed by an
# acknowledgement line once psql has seen it commit.
sub client_script
{
	my ($client, $base) = @_;
	srand($base + $client);
	my $sql = "\\set ON_ERROR_STOP on\n\\set QUIET on\n\\pset tuples_only on\n";
	for my $n ($base + 1 .. $base + 20000)
	{
		my $r = rand();
		if ($r < 0.6)
		{
			$sql .= "INSERT INTO acked VALUES ($client, $n, 'small');\n";
		}
		else
		{
			# 100-300 md5s cross a WAL page; 2000-6000 (64-192 kB) cross
			# WAL segments of 1 MB every few records
			my $md5s = $r < 0.9 ? 100 + int(rand(200)) : 2000 + int(rand(4000));
			$sql .=
			  "BEGIN;\nINSERT INTO acked VALUES ($client, $n, 'large');\n"
			  . "SELECT pg_logical_emit_message(true, 'flexlock', repeat(md5('$client/$n'), $md5s)) IS NOT NULL;\n"
			  . "COMMIT;\n";
		}
		$sql .= "\\echo ack $client $n\n";
		$sql .= "SELECT pg_switch_wal() IS NOT NULL;\n" if $client == 0 && $n % 40 == 0;
		$sql .= "CHECKPOINT;\n" if $client == 1 && $n % 60 == 0;
	}
	return $sql;
}

# wal_crash_round($node, $prefix, $label, $clients, $min_acks, $base): one
# round (the keys of its rows are $base + 1 ...; use a new $base each round).
# Returns the round's WAL range: (start LSN, start segment, end LSN, end
# segment).
sub wal_crash_round
{
	my ($node, $prefix, $label, $clients, $min_acks, $base) = @_;

	# (the insert position is never a segment boundary: it lies past a
	# page header)
	my ($start_lsn, $start_seg) = split /\|/,
	  $node->safe_psql('postgres',
		'SELECT lsn, pg_walfile_name(lsn) FROM pg_current_wal_insert_lsn() lsn');
	my $log_offset = -s $node->logfile;
	my ($h, $out) = start_clients($node, $prefix, $clients, sub { client_script(shift, $base) });
	my @out = @$out;

	# Crash once enough commits were acknowledged and every client has
	# committed (psql writes them as it goes; count what has reached the
	# files), or at once if a client failed.  A client whose psql is slow
	# to start must not meet the crash before its connection.
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $seen = 0;
		my $idle = 0;
		for my $f (@out)
		{
			my $n = -e $f ? () = (slurp_file($f) =~ /^ack /mg) : 0;
			$seen += $n;
			$idle++ if $n == 0;
		}
		last if $seen >= $min_acks && !$idle;
		last if grep { -s "$_.err" } @out;
		usleep(200_000);
	}
	stop_clients($node, $h);

	my @acks = read_acks(\@out);
	my %acked = map { ("$_->[0]/$_->[1]" => 1) } @acks;
	my $nacked = scalar(@acks);
	my @errors = client_errors(\@out);
	is("@errors", '', "$label: clients saw no error but the crash");
	cmp_ok($nacked, '>=', $min_acks / 2, "$label: $nacked commits acknowledged before the crash");

	$node->start;
	my @panics = new_panics($node, $log_offset);
	is("@panics", '', "$label: the server did not crash by itself");
	my @lost = lost_acks($node, \%acked, "SELECT client || '/' || n FROM acked");
	is(scalar(@lost), 0,
		"$label: every acknowledged commit survived the crash"
		  . (@lost ? " (lost: @lost[0 .. ($#lost < 9 ? $#lost : 9)])" : ''));

	# The WAL of the round reads without error up to the log switch written
	# after recovery.  pg_waldump is given the segments by name: without
	# them it takes the segment size from whichever file readdir() returns
	# first, and a preallocated segment (all zeros) would make it fail
	# however sound the WAL is.  It stops without a word when it cannot read
	# the rest of a record before --end, so the last record it shows must be
	# that switch (it reads every record and shows those of the XLOG
	# resource manager).
	my ($end_lsn, $end_seg) = split /\|/,
	  $node->safe_psql('postgres', 'SELECT lsn, pg_walfile_name(lsn) FROM pg_switch_wal() lsn');
	my ($wd_out, $wd_err) = ('', '');
	my $wd_ok = IPC::Run::run(
		[
			'pg_waldump', '--rmgr' => 'XLOG', '--path' => $node->data_dir . '/pg_wal',
			'--start' => $start_lsn, '--end' => $end_lsn, $start_seg, $end_seg
		],
		'>' => \$wd_out, '2>' => \$wd_err);
	my ($last) = $wd_out =~ /([^\n]*)\n?\z/;
	# (no switch when the position was a segment boundary already)
	my $at_boundary = (hex((split m{/}, $end_lsn)[1]) % (1024 * 1024)) == 0;
	ok($wd_ok && ($at_boundary || $last =~ /desc: SWITCH/),
		"$label: pg_waldump reads $start_lsn .. $end_lsn")
	  or diag("pg_waldump: $wd_err", "last record read: $last\n",
		"server log since the round began, statements left out:\n",
		grep { !/LOG:  statement: / } split /^/, slurp_file($node->logfile, $log_offset));

	is($node->safe_psql('postgres', "SELECT count(*) FROM verify_heapam('acked')"),
		0, "$label: verify_heapam finds acked clean");
	my ($rc, $stdout, $stderr) = $node->psql('postgres',
		"SELECT bt_index_check('acked_pkey', heapallindexed => true)");
	is($rc, 0, "$label: bt_index_check finds its index clean") or diag($stderr);

	return ($start_lsn, $start_seg, $end_lsn, $end_seg);
}

1;
