# t/019_lock_trace.pl — lock traces (lock_stats_trace, patch 0019).
#
# The setting: its range, its type and its privilege are enforced, and at 0
# nothing is written.  Known transactions of one session, every one traced:
# an UPDATE of one row by primary key (its relation locks, the index pages
# share-locked and the heap page exclusively, named by relfilenode, fork and
# block; the row by its line pointer; a Heap WAL record inside a WAL insertion
# lock's hold, the commit record, a flush this process wrote; the XID lock),
# the same row updated again (a HOT update: a new version, the same row
# name), an INSERT (the B-tree leaf locked exclusively, a Btree record), a
# SELECT (no WAL, no flush, no XID), a failed INSERT (an abort whose
# LWLockReleaseAll releases what it holds), a transaction block with a wait
# for the client inside it, of which nothing is written before COMMIT.  Every
# file parses (a parser of the format's version 1 below), in every
# transaction each LWLock acquisition is released once, times go forward and
# the end line counts the lines.  Sampling: with one transaction in 10, about
# one in 10 of a pgbench client's transactions is traced, at gaps of 1 to 19,
# and the counters of family "trace" count what the files hold.  A
# transaction of more events than the buffer holds is written truncated, with
# the count of what was dropped.  A process that cannot create its file warns
# once and counts what it lost.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('trace');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\nmax_connections = 20\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock');
my $tdir = $node->data_dir . '/pg_locktrace';

# --- a parser of the format, version 1 (docs/lock-trace.md) -------------------

# Fields after the kind, at least; more may follow (trailing fields).
my %MIN = (
	begin => 6, lw => 4, hw => 6, hwrel => 4, row => 7, wal => 5,
	flush => 5, io => 5, client => 2, buf => 3, end => 5);
my %LW = (acq => 7, fail => 7, rel => 4, wfv => 5);

# read_trace(path): { pid, type, txns => [ { begin => [...], events =>
# [ [kind, t, ...] ... ], end => [t, commit|abort, xid, events, dropped] } ] };
# dies on anything the format does not allow.
sub read_trace
{
	my ($path) = @_;
	open my $fh, '<', $path or die "$path: $!";
	my $first = <$fh>;
	defined $first or die "$path: empty";
	chomp $first;
	my @h = split /\t/, $first, -1;
	die "$path: first line '$first' is not 'version 1 pid type'"
	  unless @h == 4 && $h[0] eq 'version' && $h[1] eq '1' && $h[2] =~ /^\d+$/;
	my (@txns, $cur);
	while (my $line = <$fh>)
	{
		chomp $line;
		my ($kind, @f) = split /\t/, $line, -1;
		die "$path:$.: unknown line kind '$kind'" unless exists $MIN{$kind};
		die "$path:$.: '$kind' with " . scalar(@f) . " fields" if @f < $MIN{$kind};
		for my $i (0 .. ($kind eq 'begin' ? 5 : 0))
		{
			die "$path:$.: field $i of '$kind' is not an integer: '$f[$i]'"
			  unless $f[$i] =~ /^-?\d+$/;
		}
		if ($kind eq 'begin')
		{
			die "$path:$.: begin inside a transaction" if $cur;
			$cur = { begin => \@f, events => [] };
			next;
		}
		die "$path:$.: '$kind' outside a transaction" unless $cur;
		if ($kind eq 'lw')
		{
			die "$path:$.: lw '$f[1]'" unless exists $LW{ $f[1] };
			die "$path:$.: lw $f[1] with " . scalar(@f) . " fields" if @f < $LW{ $f[1] };
			die "$path:$.: mode '$f[4]'"
			  if ($f[1] eq 'acq' || $f[1] eq 'fail') && $f[4] !~ /^[SX]$/;
			die "$path:$.: how '$f[5]'"
			  if $f[1] eq 'acq' && $f[5] !~ /^(word|slot|cond|orwait|served)$/;
			die "$path:$.: how '$f[5]'" if $f[1] eq 'fail' && $f[5] !~ /^(cond|orwait)$/;
		}
		die "$path:$.: hw path '$f[3]'"
		  if $kind eq 'hw' && $f[3] !~ /^(fastpath|table|local)$/;
		die "$path:$.: row op '$f[1]'"
		  if $kind eq 'row' && $f[1] !~ /^(update|delete|lock|insert)$/;
		if ($kind eq 'end')
		{
			die "$path:$.: end '$f[1]'" unless $f[1] =~ /^(commit|abort)$/;
			$cur->{end} = \@f;
			push @txns, $cur;
			undef $cur;
			next;
		}
		push @{ $cur->{events} }, [ $kind, @f ];
	}
	die "$path: a transaction has no end" if $cur;
	return { pid => $h[2], type => $h[3], txns => \@txns };
}

# What in a transaction breaks the rules: times going back, an end line that
# miscounts, an LWLock released that is not held or held to the end (unless
# events were dropped).
sub problems
{
	my ($x) = @_;
	my @p;
	my $last = 0;
	for my $e (@{ $x->{events} })
	{
		push @p, "time goes back at $e->[0] $e->[1]" if $e->[1] < $last;
		$last = $e->[1];
	}
	push @p, "end before the last event" if $x->{end}[0] < $last;
	push @p, "end counts $x->{end}[3], has " . scalar(@{ $x->{events} })
	  if $x->{end}[3] != @{ $x->{events} };
	return @p if $x->{end}[4] > 0;
	my %held;
	for my $e (grep { $_->[0] eq 'lw' } @{ $x->{events} })
	{
		my $key = "$e->[3] $e->[4]";
		if ($e->[2] eq 'acq' && $e->[6] ne 'served')
		{
			$held{$key}++;
		}
		elsif ($e->[2] eq 'rel')
		{
			if (($held{$key} // 0) <= 0) { push @p, "release of $key at $e->[1] not held" }
			else { $held{$key}-- }
		}
	}
	push @p, "$_ acquired and never released" for grep { $held{$_} } sort keys %held;
	return @p;
}

sub lines_of
{
	my ($x, $kind, @match) = @_;
	return grep {
		my $e = $_;
		$e->[0] eq $kind
		  && !grep { defined $match[$_] && ($e->[ $_ + 2 ] // '') ne $match[$_] } 0 .. $#match
	} @{ $x->{events} };
}

sub counter
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT value FROM flexlock_counters WHERE family = 'trace' AND counter = '$name'");
}

# --- the setting ------------------------------------------------------------------

is($node->safe_psql('postgres', 'SHOW lock_stats_trace'), '0', 'off by default');
for my $bad (-1, 1000001)
{
	my ($rc, $out, $err) = $node->psql('postgres', "SET lock_stats_trace = $bad");
	like($err, qr/$bad is outside the valid range for parameter "lock_stats_trace" \(0 \.\. 1000000\)/,
		"$bad refused");
}
{
	my ($rc, $out, $err) = $node->psql('postgres', "SET lock_stats_trace = 'often'");
	like($err, qr/invalid value for parameter "lock_stats_trace": "often"/, 'a word refused');
	$node->safe_psql('postgres', 'CREATE ROLE regress_trace LOGIN');
	($rc, $out, $err) = $node->psql('postgres', 'SET lock_stats_trace = 1',
		extra_params => [ '-U', 'regress_trace' ]);
	like($err, qr/permission denied to set parameter "lock_stats_trace"/, 'not for a plain role');
}

# At 0 nothing is written.
$node->command_ok([ 'pgbench', '-i', '-s', '1', '-q', $node->connstr('postgres') ], 'pgbench tables');
$node->command_ok(
	[ 'pgbench', '-n', '-c', '2', '-t', '300', $node->connstr('postgres') ], 'pgbench, trace off');
ok(!-e $tdir || !glob("$tdir/*"), 'off: nothing in pg_locktrace');

# --- known transactions ---------------------------------------------------------

$node->safe_psql('postgres',
	'CREATE TABLE tr (id int PRIMARY KEY, v int) WITH (fillfactor = 50); '
	  . 'INSERT INTO tr SELECT g, 0 FROM generate_series(1, 10000) g; VACUUM ANALYZE tr');
my ($db, $tr, $trnode, $ixnode) = split /\|/, $node->safe_psql('postgres',
	"SELECT (SELECT oid FROM pg_database WHERE datname = current_database()), 'tr'::regclass::oid, "
	  . "pg_relation_filenode('tr'), pg_relation_filenode('tr_pkey')");
is($node->safe_psql('postgres', 'SELECT ctid FROM tr WHERE id = 5'), '(0,5)', 'row 5 at (0,5)');
$node->safe_psql('postgres', 'SELECT flexlock_reset()');

my $s = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('SELECT v FROM tr WHERE id = 1');    # the session's caches
# the SET's own transaction ends with the setting on: the next ones are traced
$s->query_safe('SET lock_stats_trace = 1');
$s->query_safe('UPDATE tr SET v = v + 1 WHERE id = 5');
my $ctid1 = $s->query_safe('SELECT ctid FROM tr WHERE id = 5');
$s->query_safe('UPDATE tr SET v = v + 1 WHERE id = 5');
$s->query_safe('INSERT INTO tr VALUES (20000, 0)');
$s->query_safe('SELECT v FROM tr WHERE id = 9000');
$s->query('INSERT INTO tr VALUES (5, 0)');
like($s->{stderr}, qr/duplicate key value/, 'a failed INSERT');
$s->{stderr} = '';
my $file = "$tdir/$pid.trace";
my $size0 = -s $file;
ok($size0, "the session's file $pid.trace");
$s->query_safe('BEGIN');
$s->query_safe('UPDATE tr SET v = v + 1 WHERE id = 9');
is(-s $file, $size0, 'nothing written while a traced transaction is open');
$s->query_safe('COMMIT');
cmp_ok(-s $file, '>', $size0, '... all of it at its end');
$s->query_safe('SET lock_stats_trace = 0');
$s->query_safe('SELECT 1');
$s->quit;

my $t = read_trace($file);
is($t->{pid}, $pid, 'the first line names the process');
is($t->{type}, 'client backend', '... and its type');
my @x = @{ $t->{txns} };
# the UPDATE, SELECT ctid, UPDATE, INSERT, SELECT, the failed INSERT, the
# block and the SET that turned it off
is(scalar(@x), 8, 'every transaction after the SET traced, up to the one that turned it off')
  or diag explain [ map { scalar @{ $_->{events} } } @x ];
my ($upd1, $sel1, $upd2, $ins, $sel, $dup, $block) = @x;
is_deeply([ map { problems($_) } @x ], [], 'every transaction: times forward, counts right, holds released');
is_deeply([ map { $_->{begin}[2] } @x ], [ (1) x 8 ], 'begin: the sampling interval');

# The first UPDATE
my @h = lines_of($upd1, 'hw', 'relation', 'RowExclusiveLock', undef, "$db/$tr");
ok(@h, "UPDATE: RowExclusiveLock on the table ($db/$tr)");
ok(lines_of($upd1, 'hw', 'transactionid', 'ExclusiveLock', 'table'), '... its XID lock in the shared table');
ok((grep { $_->[4] =~ m{^$ixnode/0/\d+$} && $_->[5] eq 'S' }
		lines_of($upd1, 'lw', 'acq', 'BufferContent')),
	"... index pages share-locked, named $ixnode/0/BLOCK");
ok(lines_of($upd1, 'lw', 'acq', 'BufferContent', "$trnode/0/0", 'X'),
	"... the heap page locked exclusively: $trnode/0/0");
ok(lines_of($upd1, 'lw', 'rel', 'BufferContent', "$trnode/0/0"), '... and released');
my @row = lines_of($upd1, 'row', 'update');
is(scalar(@row), 1, '... one row updated');
is(join(' ', @{ $row[0] }[ 3 .. 7 ]), "$tr 0 5 $trnode 5", '... row (0,5) of tr, its own root');

# each WAL record inside a WAL insertion lock's hold
my ($in, $inside, $outside) = (0, 0, 0);
for my $e (@{ $upd1->{events} })
{
	$in = 1 if $e->[0] eq 'lw' && $e->[2] eq 'acq' && $e->[3] eq 'WALInsert';
	$in = 0 if $e->[0] eq 'lw' && $e->[2] eq 'rel' && $e->[3] eq 'WALInsert';
	next unless $e->[0] eq 'wal';
	if ($in) { $inside++ } else { $outside++ }
}
is($outside, 0, '... every WAL record within a WAL insertion lock hold');
my @wal = lines_of($upd1, 'wal');
is(scalar(grep { $_->[5] eq 'Heap' } @wal), 1, '... one Heap record (a HOT update: no new page)');
ok((grep { $_->[5] eq 'Transaction' } @wal), '... the commit record');
ok(!grep({ $_->[2] <= 0 || $_->[3] <= $_->[4] } @wal), '... records with bytes, end after start');
my @fl = lines_of($upd1, 'flush');
is(scalar(@fl), 1, '... one flush');
is($fl[0][4], 1, '... that this process wrote');
cmp_ok($fl[0][3], '>', 0, '... with its time');
cmp_ok($fl[0][5], '>', 0, '... and bytes written');
cmp_ok($fl[0][2], '>=', $wal[-1][3], '... up to the commit record');
ok(lines_of($upd1, 'lw', 'acq', 'WALWrite', '0', 'X', 'orwait'), '... WALWriteLock taken for it');
is(join(' ', @{ $upd1->{end} }[ 1, 2 ]), 'commit 1', '... committed with an XID');

# The second UPDATE of the same row: a new version, the same name
like($ctid1, qr/^\(0,\d+\)$/, "the first UPDATE made a new version on the same page ($ctid1)");
isnt($ctid1, '(0,5)', '... in another line pointer');
@row = lines_of($upd2, 'row', 'update');
is(join(' ', @{ $row[0] }[ 3 .. 6 ]), "$tr 0 5 $trnode", 'the second UPDATE names the row by its root (0,5)');
my ($own) = $ctid1 =~ /^\(0,(\d+)\)$/;
is($row[0][7], $own, "... and its version by its own line pointer ($own)");

# INSERT
@row = lines_of($ins, 'row', 'insert');
is(scalar(@row), 1, 'INSERT: one row');
ok((grep { $_->[4] =~ m{^$ixnode/0/\d+$} && $_->[5] eq 'X' } lines_of($ins, 'lw', 'acq', 'BufferContent')),
	'... the B-tree leaf locked exclusively');
ok((grep { $_->[5] eq 'Btree' } lines_of($ins, 'wal')), '... a Btree record');
is(scalar(lines_of($ins, 'flush')), 1, '... a flush');

# SELECT
ok(lines_of($sel, 'hw', 'relation', 'AccessShareLock', undef, "$db/$tr"), 'SELECT: AccessShareLock on tr');
ok((grep { $_->[4] =~ m{^$trnode/0/\d+$} && $_->[5] eq 'S' } lines_of($sel, 'lw', 'acq', 'BufferContent')),
	'... the heap page share-locked');
is(scalar(lines_of($sel, 'wal')) + scalar(lines_of($sel, 'flush')) + scalar(lines_of($sel, 'row')),
	0, '... no WAL, no flush, no row');
is(join(' ', @{ $sel->{end} }[ 1, 2 ]), 'commit 0', '... committed without an XID');
ok(lines_of($sel, 'buf', 'pin'), '... buffers pinned');

# The failed INSERT
is($dup->{end}[1], 'abort', 'the duplicate INSERT aborts');
is($dup->{end}[2], 1, '... having had an XID');
ok(lines_of($dup, 'row', 'insert'), '... after inserting its heap tuple');

# The transaction block: waits for the client within it
ok(lines_of($block, 'client'), 'a transaction block: its waits for the client');
ok(lines_of($block, 'row', 'update', $tr, 0), '... and its UPDATE');
cmp_ok($upd1->{begin}[3], '>=', $upd1->{begin}[4], 'begin: time since the previous end >= the client wait in it');

# --- sampling ---------------------------------------------------------------------

$node->safe_psql('postgres', 'CREATE DATABASE sampled');
$node->command_ok([ 'pgbench', '-i', '-s', '1', '-q', $node->connstr('sampled') ], 'pgbench tables in sampled');
$node->safe_psql('postgres', 'ALTER DATABASE sampled SET lock_stats_trace = 10');
my %before = map { $_ => 1 } glob("$tdir/*.trace");
# select-only as a script of its own: with a built-in script pgbench first
# reads the scale in a connection of its own, whose two transactions would
# be traced too, now and then (a second file)
my $select_only = PostgreSQL::Test::Utils::tempdir . '/select-only.sql';
append_to_file($select_only,
	"\\set aid random(1, 100000)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n");
$node->command_ok(
	[ 'pgbench', '-n', '-f', $select_only, '-c', '1', '-t', '2000', $node->connstr('sampled') ],
	'pgbench select-only, one client, one transaction in 10 traced');
$node->safe_psql('postgres', 'ALTER DATABASE sampled RESET lock_stats_trace');
my @new = grep { !$before{$_} } glob("$tdir/*.trace");
is(scalar(@new), 1, "one new file: pgbench's backend");
my $p = read_trace($new[0]);
my $n = @{ $p->{txns} };
cmp_ok($n, '>=', 150, "about one in 10 of 2000 traced: $n");
cmp_ok($n, '<=', 250, '... not many more');
is_deeply([ map { problems($_) } @{ $p->{txns} } ], [], '... all well formed');
my @nth = map { $_->{begin}[5] } @{ $p->{txns} };
my @gaps = map { $nth[$_] - $nth[ $_ - 1 ] } 1 .. $#nth;
is_deeply([ grep { $_ < 1 || $_ > 19 } @gaps ], [], 'gaps between traced transactions of 1 to 19');
my $mean = 0;
$mean += $_ / @gaps for @gaps;
cmp_ok(abs($mean - 10), '<', 1.5, "... averaging about 10 ($mean)");

# The counters count what the files hold.
my ($all_txns, $all_events) = (0, 0);
for my $f (glob("$tdir/*.trace"))
{
	my $r = read_trace($f);
	$all_txns += @{ $r->{txns} };
	$all_events += $_->{end}[3] for @{ $r->{txns} };
}
is(counter('transactions'), $all_txns, "trace.transactions counts the files' transactions ($all_txns)");
is(counter('events'), $all_events, "trace.events their events ($all_events)");
is(counter('events_dropped'), 0, 'nothing dropped yet');

# --- truncation -------------------------------------------------------------------

$s = $node->background_psql('postgres');
$pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('SET lock_stats_trace = 1');
$s->query_safe('INSERT INTO tr SELECT g, 0 FROM generate_series(30000, 50000) g');
$s->quit;
$t = read_trace("$tdir/$pid.trace");
my ($big) = grep { lines_of($_, 'row', 'insert') } @{ $t->{txns} };
is($big->{end}[3], 65535, 'a transaction of 20001 rows: 65535 events written');
cmp_ok($big->{end}[4], '>', 100000, "... the rest counted as dropped ($big->{end}[4])");
is($big->{end}[1], 'commit', '... and its end written');
is(counter('events_dropped'), $big->{end}[4], 'trace.events_dropped counts them');
is_deeply([ problems($big) ], [], '... its times and counts still right');

# --- a file that cannot be written ----------------------------------------------------

chmod 0500, $tdir or die "chmod: $!";
$s = $node->background_psql('postgres', on_error_stop => 0);
$pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('SET lock_stats_trace = 1');
$s->query('SELECT 1');
$s->query('SELECT 2');
my $err = $s->{stderr};
$s->quit;
chmod 0700, $tdir or die "chmod: $!";
like($err, qr/WARNING:  could not open lock trace file "pg_locktrace\/$pid\.trace": Permission denied/,
	'an unwritable directory: a warning');
is(scalar(() = $err =~ /could not open lock trace file/g), 1, '... once');
ok(!-e "$tdir/$pid.trace", '... and no file');
cmp_ok(counter('write_failures'), '>=', 2, '... what was lost counted');

done_testing();
