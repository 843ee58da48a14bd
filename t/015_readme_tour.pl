# t/015_readme_tour.pl — the README's five-minute tour, run as written, what
# `make server` and its friends refuse, and the front page's links.
#
# The tour's commands are read from README.md, between the lines
# "<!-- tour -->" and "<!-- /tour -->": every ```sh block, in order, run by
# bash in the checkout.  Three things differ from a newcomer's run, through
# the environment only: the server runs the cassert build
# (FLEXLOCK_SERVER_BUILD; `make check` builds cassert, not patched), with its
# data directory in this test's directory (FLEXLOCK_SERVER_DIR), on a free
# port (FLEXLOCK_PORT), so that a server the user keeps in build/server is
# not touched.  What a command prints must have the shape of the ```text block
# the README shows after it: each line's first words (up to a figure or a
# path) and the column names of each table.
#
# Then make help and make bench's refusal of a bad preset (the two commands
# themselves: make check runs this test, make bench takes 34 minutes), and
# the server targets' behaviour: started twice it says it is running; a
# variant or SET restarts it with the settings applied and kept; a port in
# use, a missing build, a data directory of another build, a setting the
# build lacks, make pgbench without a script or without a server: one line
# saying what to do, nothing started or removed; FRESH=1 makes a new data
# directory.  Last, every relative link of README.md and docs/*.md resolves
# (a file or directory, and an anchor to a heading), and the README is a
# front page (under 250 lines).
use strict;
use warnings FATAL => 'all';

use IO::Socket::INET;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $top = $ENV{FLEXLOCK_TOP} or die "FLEXLOCK_TOP is not set";
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $srv = "$tmp/server";
my $port = PostgreSQL::Test::Cluster::get_free_port();

$ENV{FLEXLOCK_SERVER_BUILD} = 'cassert';
$ENV{FLEXLOCK_SERVER_DIR} = $srv;
$ENV{FLEXLOCK_PORT} = $port;
delete $ENV{$_} for qw(MAKEFLAGS MAKELEVEL MFLAGS);

# whatever happens, no server is left running
END
{
	local $?;
	system("cd '$top' && make stop >/dev/null 2>&1") if defined $top;
}

# run(CMD, ENV...): bash -c CMD in the checkout; output (both streams) and status
sub run
{
	my ($cmd, %env) = @_;
	local %ENV = (%ENV, %env);
	open(my $fh, '-|', 'bash', '-c', qq{cd "\$1" && { $cmd\n} 2>&1}, 'bash', $top)
	  or die "bash: $!";
	local $/;
	my $out = <$fh> // '';
	close $fh;
	return ($out, $? >> 8);
}

sub slurp
{
	my ($f) = @_;
	open my $fh, '<', $f or die "$f: $!";
	local $/;
	my $t = <$fh>;
	close $fh;
	return $t;
}

# --- the tour, from the README -------------------------------------------------

my $readme = slurp("$top/README.md");
my ($tour) = $readme =~ /^<!-- tour -->\n(.*?)^<!-- \/tour -->$/ms;
ok(defined $tour, 'README.md marks its tour');
$tour //= '';
my @steps;
while ($tour =~ /^```(sh|text)\n(.*?)^```$/msg)
{
	my ($kind, $body) = ($1, $2);
	if ($kind eq 'sh') { push @steps, { cmd => $body }; }
	elsif (@steps) { $steps[-1]{shown} = $body; }
}
cmp_ok(scalar(@steps), '>=', 4, 'the tour has its commands');
like(join('', map { $_->{cmd} } @steps), qr/^make server\b.*^make pgbench\b.*^make psql\b.*^make stop\b/ms,
	'the tour starts a server, runs pgbench, queries with psql and stops the server');

# Lines' first words, up to the first word with a figure or a path.
sub shape
{
	my ($line) = @_;
	my @w;
	for my $w (split ' ', $line)
	{
		last if $w =~ m{[0-9/]} || @w == 3;
		push @w, $w;
	}
	return join ' ', @w;
}

# Column names of the tables in a psql output: a header line is followed by
# a line of dashes and pluses.
sub headers
{
	my ($text) = @_;
	my @lines = split /\n/, $text;
	my @h;
	for my $i (0 .. $#lines - 1)
	{
		next unless $lines[ $i + 1 ] =~ /^-+(\+-+)*$/;
		push @h, join ',', map { s/^\s+|\s+$//gr } split /\|/, $lines[$i];
	}
	return @h;
}

for my $step (@steps)
{
	my ($cmd, $shown) = ($step->{cmd}, $step->{shown});
	my ($first) = split /\n/, $cmd;
	my ($out, $rc) = run($cmd);
	is($rc, 0, "tour: $first") or diag($out);
	next unless defined $shown;
	my @out_lines = split /\n/, $out;
	for my $line (split /\n/, $shown)
	{
		next if $line =~ /\|/ || $line =~ /^[-+]+$/ || $line =~ /^\s*$/ || $line =~ /^\(\d+ rows?\)$/;
		my $s = shape($line);
		next if $s eq '';
		ok((grep { shape($_) eq $s } @out_lines), "tour: $first prints a line like '$s'")
		  or diag($out);
	}
	my @want = headers($shown);
	my @got = headers($out);
	is_deeply(\@got, \@want, "tour: $first prints tables with the columns the README shows")
	  if @want;
}

# --- what the server targets do --------------------------------------------

my ($out, $rc);

($out, $rc) = run('make help');
like($out, qr/^  make server .*^  make pgbench .*^  make psql /ms, 'make help names the server targets');

# The README's two commands: make check is what runs this test; make bench
# (34 minutes) only up to its check of the input here, the driver it runs
# is run end to end by the bench suite (bench-scripts/tests/test_smoke.py).
($out, $rc) = run('make bench PRESET=no-such-preset');
isnt($rc, 0, 'make bench refuses an unknown preset');
like($out, qr/^flexlock: unknown preset 'no-such-preset' \(known: .*\bdefault\b.*\)$/m, '... naming the known ones');

# one line from scripts/server.sh (make adds its own "Error" line)
sub one_line
{
	my ($o) = @_;
	return scalar(grep { /^flexlock: / } split /\n/, $o) == 1;
}

($out, $rc) = run('make server');
is($rc, 0, 'make server after make stop starts the kept data directory');
like($out, qr/^flexlock: server running: cassert build/m, '... saying so');
unlike($out, qr/making a data directory/, '... without a new one');
($out, $rc) = run('make server');
is($rc, 0, 'make server twice');
like($out, qr/^flexlock: the server is already running: cassert build, variant stock/m, '... says it is running');
like($out, qr/^flexlock: connect: \S+\/bin\/psql -h \Q$srv\E -p $port /m, '... and how to connect');
like($out, qr/^flexlock: or: export PATH=\S+ PGHOST=\Q$srv\E PGPORT=$port /m, '... and the environment');

($out, $rc) = run('make server VARIANT=walinsert-1 SET="lock_stats_timing=off"');
is($rc, 0, 'a variant and a setting');
like($out, qr/restarting the server with variant walinsert-1, SET="lock_stats_timing=off"/, '... restart the server');
($out) = run(q{echo "SELECT current_setting('wal_insert_locks'), current_setting('lock_stats_timing');" | make psql});
like($out, qr/^ 1 +\| off$/m, '... applied');
($out, $rc) = run('make server');
like($out, qr/already running: cassert build, variant walinsert-1, SET="lock_stats_timing=off"/,
	'... and kept');
($out, $rc) = run('make status');
like($out, qr/lock variants not at their stock setting: wal_insert_locks=1$/m, 'make status names the variant');
($out, $rc) = run('make server VARIANT=stock');
($out) = run(q{echo "SELECT current_setting('wal_insert_locks'), current_setting('lock_stats_timing');" | make psql});
like($out, qr/^ 8 +\| on$/m, 'VARIANT=stock: stock settings again, and SET cleared');

($out, $rc) = run('make server SET="no_such_setting=1"');
isnt($rc, 0, 'a setting the build lacks is refused');
like($out, qr/^flexlock: SET: the cassert build has no setting 'no_such_setting'$/m, '... naming it');
ok(one_line($out), '... in one line');
($out, $rc) = run('make server VARIANT=no-such-variant');
like($out, qr/^flexlock: unknown variant 'no-such-variant' \(known: .*stock.*\)$/m, 'an unknown variant is refused');
($out, $rc) = run('make server SET="wal_insert_locks=3"');
isnt($rc, 0, 'a value the server refuses');
like($out, qr/^flexlock: the server did not start: invalid value for parameter "wal_insert_locks": 3; /m,
	'... gives the server\'s complaint');
is(scalar(grep { /^flexlock: / && !/^flexlock: restarting the server/ } split /\n/, $out), 1,
	'... in one line (after the one saying it restarts the server)');
($out, $rc) = run('make server SET=');
is($rc, 0, 'SET= starts it again without the setting');

($out, $rc) = run('make server BUILD=vanilla');
isnt($rc, 0, 'a data directory of another build is refused');
like($out, qr/^flexlock: \S+ is a data directory of the cassert build: run 'make server BUILD=cassert', or add FRESH=1 /m,
	'... saying what to do');
ok(one_line($out), '... in one line');
($out, $rc) = run('make server BUILD=vanilla FRESH=1 VARIANT=walinsert-1');
like($out, qr/^flexlock: variant 'walinsert-1' sets wal_insert_locks, which the vanilla build does not have/m,
	'a variant on vanilla is refused');
ok(-f "$srv/data/PG_VERSION", '... before FRESH=1 removed anything');

($out, $rc) = run('make pgbench');
like($out, qr/^flexlock: name a pgbench script: make pgbench SCRIPT=file.sql/m, 'make pgbench wants a script');
($out, $rc) = run('make pgbench SCRIPT=bench-scripts/workloads/select-only.sql CLIENTS=0');
like($out, qr/^flexlock: CLIENTS must be a positive integer, not '0'$/m, 'CLIENTS=0 is refused');

# a port in use
my $listener = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1',
	LocalPort => 0,
	Listen => 1,
	ReuseAddr => 1) or die "listen: $!";
my $busy = $listener->sockport;
($out, $rc) = run("make server PORT=$busy");
isnt($rc, 0, 'a port in use is refused');
like($out, qr/^flexlock: port $busy is in use \(another server\?\): pick a free one with 'make server PORT=N'$/m,
	'... saying what to do');
ok(one_line($out), '... in one line');
close $listener;
($out, $rc) = run('make status');
like($out, qr/^flexlock: server running: cassert build, variant stock, port $port\b/m,
	'... before the server was stopped to change it');
run('make stop');
($out, $rc) = run('make pgbench SCRIPT=bench-scripts/workloads/select-only.sql');
like($out, qr/^flexlock: no server is running \(\S+\): start one with 'make server'/m,
	'make pgbench without a server');
($out, $rc) = run('make psql </dev/null');
isnt($rc, 0, 'make psql without a server fails');

# a missing build
my $empty = "$tmp/empty-build";
mkdir $empty;
($out, $rc) = run('make server', FLEXLOCK_BUILD => $empty, FLEXLOCK_SERVER_DIR => "$tmp/other");
like($out, qr/^flexlock: the cassert build is not there \(\S+ is missing\): run 'make cassert' \(or 'make postgres'\) first$/m,
	'a missing build is refused, saying what to do');

# FRESH=1: a new data directory
($out, $rc) = run('make server');
is($rc, 0, 'started again');
run(q{echo "CREATE TABLE regress_kept (i int);" | make psql});
($out, $rc) = run('make server FRESH=1');
like($out, qr/FRESH=1: stopping the running server.*making a data directory/s, 'FRESH=1 makes a new data directory');
($out) = run(q{echo "SELECT to_regclass('regress_kept') IS NULL AS gone;" | make psql});
like($out, qr/^ t$/m, '... without what was in the old one');

($out, $rc) = run('make stop');
like($out, qr/^flexlock: server stopped/m, 'make stop');
($out, $rc) = run('make stop');
is($rc, 0, 'make stop twice');
like($out, qr/^flexlock: no server is running/m, '... says so');

# --- links ---------------------------------------------------------------------

# GitHub's anchors: lower case, punctuation dropped, spaces to hyphens
sub anchors
{
	my ($file) = @_;
	my %a;
	for (split /\n/, slurp($file))
	{
		next unless /^#+\s+(.*)$/;
		my $h = lc $1;
		$h =~ s/[^\w\- ]//g;
		$h =~ s/ /-/g;
		$a{$h} = 1;
	}
	return \%a;
}

my @docs = ("$top/README.md", glob("$top/docs/*.md"));
cmp_ok(scalar(@docs), '>', 1, 'docs/ has pages');
for my $doc (@docs)
{
	my $text = slurp($doc);
	$text =~ s/^```.*?^```$//msg;    # no links in code
	my ($dir) = $doc =~ m{^(.*)/};
	my $name = $doc =~ s{^\Q$top\E/}{}r;
	my ($n, $bad) = (0, 0);
	while ($text =~ /\]\(([^)\s]+)\)/g)
	{
		my $link = $1;
		next if $link =~ m{^(https?|mailto):};
		$n++;
		my ($path, $anchor) = $link =~ /^([^#]*)(?:#(.*))?$/;
		my $target = $path eq '' ? $doc : "$dir/$path";
		if (!-e $target)
		{
			fail("$name: link $link resolves");
			$bad++;
			next;
		}
		if (defined $anchor && $target =~ /\.md$/ && !anchors($target)->{$anchor})
		{
			fail("$name: link $link: $path has a heading for #$anchor");
			$bad++;
		}
	}
	is($bad, 0, "$name: its $n links resolve");
}

my $lines = () = $readme =~ /\n/g;
cmp_ok($lines, '<', 250, "README.md is a front page ($lines lines)");

done_testing();
