# t/015_readme_tour.pl — the README's five-minute tour, run as written, what
# `make server` and its friends refuse, and the front page's links.
#
# The tour's commands are read from README.md, between the lines
# "<!-- tour -->" and "<!-- /tour -->": every ```sh block, in order, run by
# bash in the checkout, on the build the README names (make server's
# default, patched: `make check` builds it for this test).  Two things differ
# from a newcomer's run, through the environment only: the data directory is
# in this test's directory (FLEXLOCK_SERVER_DIR) and the port a free one
# (FLEXLOCK_PORT), so that a server the user keeps in build/server is not
# touched.  What a command prints is compared with the ```text block the
# README shows after it, where it is stable: the lines outside tables (paths,
# the user and numbers masked, a number as zero or not), each table's
# columns, and by table: flexlock_report's sections, its fixed items and
# the LWLocks every transaction held, with sampled hold times; the tranches
# flexlock_lwlocks lists first; the heavyweight locks taken most; the
# script's statement in flexlock_statements joined with pg_stat_statements.
# A figure the README shows above zero must be above zero (counts: those of
# 1000 or more).  So an empty report, holds that read "not sampled", a
# variant at another setting (the report's section "variant") and a join
# that finds no row fail.
#
# Then make help and make bench's refusal of a bad preset (the two commands
# themselves: make check runs this test, make bench takes 34 minutes), and
# the server targets' behaviour: started twice it says it is running; a
# variant or SET restarts it with the settings applied and kept; a port in
# use, a missing build, a data directory of another build, a setting the
# build lacks, make pgbench without a script or without a server: one line
# saying what to do, nothing started or removed; FRESH=1 makes a new data
# directory.  Last, every relative link of README.md, docs/*.md and the
# pages under results/ resolves (a file or directory, and an anchor to a
# heading), no table cell of README.md and docs/*.md is
# longer than a paragraph (800 characters), the recipes "Adding a variant"
# and "Adding a lock type" of docs/variants.md name files that exist, and
# the README is a front page (under 250 lines).
use strict;
use warnings FATAL => 'all';

use File::Find;
use IO::Socket::INET;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlexlockCheckout;

my $top = $ENV{FLEXLOCK_TOP} or die "FLEXLOCK_TOP is not set";
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $srv = "$tmp/server";
my $port = PostgreSQL::Test::Cluster::get_free_port();

delete $ENV{FLEXLOCK_SERVER_BUILD};    # make server's default: patched
$ENV{FLEXLOCK_SERVER_DIR} = $srv;
$ENV{FLEXLOCK_PORT} = $port;
delete $ENV{$_} for qw(MAKEFLAGS MAKELEVEL MFLAGS);

# whatever happens, no server is left running
END
{
	local $?;
	system("cd '$top' && make stop >/dev/null 2>&1") if defined $top;
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

# What the tour prints is compared with what the README shows after each
# command where it does not vary from run to run.  Lines outside tables:
# equal once paths, the user name and numbers are masked, a number as 0 or
# N (not zero), so that a run that shows nothing where the README's showed
# something fails, and a count the README shows as 0 (0 failed) must be 0.
sub mask
{
	my ($line) = @_;
	$line =~ s{[^\s,;()]*/[^\s,;()]*}{P}g;
	$line =~ s{(-U |PGUSER=)\S+}{${1}USER}g;
	# (a date and time is neither: a run at 16:33:00 shows what 16:32:09 did)
	$line =~ s{\d{4}-\d\d-\d\d \d\d:\d\d:\d\d}{TIME}g;
	$line =~ s{\d+(?:\.\d+)?}{$& == 0 ? '0' : 'N'}ge;
	$line =~ s/\s+/ /g;
	$line =~ s/^ | $//g;
	return $line;
}

# psql's aligned output: the lines outside tables (without blank ones and
# row counts), and each table's column names and rows.  A table is a header
# line followed by one of dashes and pluses, then rows up to a blank line
# or its row count.
sub parse
{
	my ($text) = @_;
	my @lines = split /\n/, $text;
	my (@plain, @tables);
	my $split = sub { [ map { s/^\s+|\s+$//gr } split /\|/, $_[0], -1 ] };
	for (my $i = 0; $i <= $#lines; $i++)
	{
		my $line = $lines[$i];
		if ($i < $#lines && $lines[ $i + 1 ] =~ /^-+(\+-+)*$/)
		{
			my $t = { columns => $split->($line), rows => [] };
			$i += 2;
			while ($i <= $#lines && $lines[$i] !~ /^\s*$/ && $lines[$i] !~ /^\(\d+ rows?\)$/)
			{
				push @{ $t->{rows} }, $split->($lines[$i]);
				$i++;
			}
			push @tables, $t;
			next;
		}
		next if $line =~ /^\s*$/ || $line =~ /^\(\d+ rows?\)$/;
		push @plain, mask($line);
	}
	return (\@plain, \@tables);
}

# Tables: how to match the README's rows with the run's (key columns), and
# which of the README's rows must be there.  A row that must be there has
# its figures checked: where the README shows one above 0, the run's must be
# above 0 too (for the count columns only where the README's is at least
# 1000: smaller counts come from background work that may not happen);
# where the README shows none in a row with a figure above 0, the run must
# show none.
my %counts = map { $_ => 1 } qw(events acquire_shared acquire_exclusive waits fastpath shared_table local
  calls lock_events);
my %table_rule = (
	# flexlock_report: the same sections, each fixed item (run, variant,
	# the totals), and the LWLocks every transaction held once or more:
	# sampled, not "not sampled"; details that are sentences, as shown
	'section,item,events,per_txn,time_ms,us_per_txn,avg_us,detail' => {
		key => [ 0, 1 ],
		must => sub {
			my ($r) = @_;
			return 0 if $r->[0] eq 'hwlock wait';
			return 0 if $r->[0] eq 'lwlock wait' && $r->[1] ne 'all tranches';
			return 0 if $r->[0] eq 'lwlock hold' && !($r->[3] ne '' && $r->[3] >= 1);
			return 1;
		},
		same_text => sub { $_[0][0] =~ /^(run|variant|hwlock)$/ },
		same_sections => 1,
		never => [ [ 'lwlock hold', 'not sampled' ] ],
	},
	# flexlock_lwlocks' most taken tranches: the same ones
	'tranche,acquire_shared,acquire_exclusive,waits,avg_hold_shared_us' => {
		key => [0],
		must => sub { 1 },
		same_keys => 1,
	},
	# flexlock_hwlocks: the lock types and modes taken 1000 times or more
	'locktype,mode,fastpath,shared_table,local' => {
		key => [ 0, 1 ],
		must => sub { grep { /^\d+$/ && $_ >= 1000 } @{ $_[0] }[ 2 .. 4 ] },
	},
	# flexlock_statements joined with pg_stat_statements: the script's
	# statement, with its calls and execution time (its lock waits are
	# chance's on 2 cores: not required)
	'query,calls,exec_ms,lock_wait_ms,wait_pct' => {
		key => [0],
		must => sub { $_[0][0] =~ /^SELECT abalance/ },
		chance => { lock_wait_ms => 1, wait_pct => 1 },
	},
	# make pgbench's statements: the script's, with figures (not the rows
	# in parentheses, other statements and outside statements)
	'statement,calls,lock_events,events_pct,lock_ms,time_pct,implicit_commit_pct' => {
		key => [0],
		must => sub { $_[0][0] !~ /^\(/ },
	},);

sub compare_table
{
	my ($what, $want, $got) = @_;
	my $cols = join ',', @{ $want->{columns} };
	is(join(',', @{ $got->{columns} }), $cols, "$what: a table with the columns the README shows");
	my $rule = $table_rule{$cols};
	if (!$rule)
	{
		fail("$what: t/015 knows how to compare a table with columns $cols");
		return;
	}
	if ($rule->{exact})
	{
		is_deeply($got->{rows}, $want->{rows}, "$what: the rows the README shows ($cols)");
		return;
	}
	my $key = sub { join ' / ', @{ $_[0] }[ @{ $rule->{key} } ] };
	my %got = map { $key->($_) => $_ } @{ $got->{rows} };
	if ($rule->{same_sections})
	{
		my (%seen_w, %seen_g);
		my @ws = grep { !$seen_w{$_}++ } map { $_->[0] } @{ $want->{rows} };
		my @gs = grep { !$seen_g{$_}++ } map { $_->[0] } @{ $got->{rows} };
		is("@gs", "@ws", "$what: the sections the README shows");
	}
	if ($rule->{same_keys})
	{
		is(join(', ', sort keys %got), join(', ', sort map { $key->($_) } @{ $want->{rows} }),
			"$what: the rows the README shows");
	}
	for my $never (@{ $rule->{never} || [] })
	{
		ok(!$got{ join ' / ', @$never }, "$what: no row '" . join(' / ', @$never) . "'");
	}
	for my $w (@{ $want->{rows} })
	{
		next unless $rule->{must}->($w);
		my $k = $key->($w);
		my $g = $got{$k};
		# (the report shows the 5 longest holds: a preempted sampled hold,
		# counted 100 times, can rank a tranche the README does not show
		# above one it does; sampling itself is checked by "no row 'lwlock
		# hold / not sampled'")
		if (!$g && $w->[0] eq 'lwlock hold' && (grep { $_->[0] eq 'lwlock hold' } @{ $got->{rows} }) >= 5)
		{
			pass("$what: a row '$k', or 5 longer holds ranked above it");
			next;
		}
		if (!ok($g, "$what: a row '$k'"))
		{
			next;
		}
		my @bad;
		my $all_zero = !grep { /^-?[\d.]+$/ && $_ != 0 } @$w;
		# (a figure of a count under 1000 is as much a matter of chance as
		# the count: the README's 514 contended spinlocks, its 5 LWLock
		# sleeps and their time)
		my ($ev) = grep { $want->{columns}[$_] eq 'events' } 0 .. $#{ $want->{columns} };
		my $rare = defined $ev && $w->[$ev] =~ /^\d+$/ && $w->[$ev] < 1000;
		for my $c (0 .. $#{ $want->{columns} })
		{
			my ($col, $wv, $gv) = ($want->{columns}[$c], $w->[$c], $g->[$c] // '');
			next if $rare && $col =~ /^(per_txn|time_ms|us_per_txn|avg_us)$/;
			next if $rule->{chance} && $rule->{chance}{$col};
			if ($wv eq '')
			{
				# (an average of nothing: none only while nothing happened)
				push @bad, "$col is '$gv', the README shows none" if $gv ne '' && !$all_zero;
			}
			elsif ($wv =~ /^-?[\d.]+$/)
			{
				next unless $wv > 0 && (!$counts{$col} || $wv >= 1000);
				push @bad, "$col is '$gv', the README shows $wv" unless $gv =~ /^-?[\d.]+$/ && $gv > 0;
			}
			elsif ($rule->{same_text} && $rule->{same_text}->($w))
			{
				push @bad, "$col is '$gv', the README shows '$wv'" if mask($gv) ne mask($wv);
			}
		}
		is(join('; ', @bad), '', "$what: row '$k' shows what the README's does");
	}
}

for my $step (@steps)
{
	my ($cmd, $shown) = ($step->{cmd}, $step->{shown});
	my ($first) = split /\n/, $cmd;
	my ($out, $rc) = run($cmd);
	is($rc, 0, "tour: $first") or diag($out);
	note("tour: $first printed:\n$out");
	next unless defined $shown;
	my ($want_plain, $want_tables) = parse($shown);
	my ($got_plain, $got_tables) = parse($out);
	is_deeply($got_plain, $want_plain, "tour: $first prints the lines the README shows")
	  or diag($out);
	is(scalar(@$got_tables), scalar(@$want_tables), "tour: $first prints as many tables as the README shows")
	  or diag($out);
	for my $i (0 .. $#$want_tables)
	{
		compare_table("tour: $first, table " . ($i + 1), $want_tables->[$i], $got_tables->[$i] // { columns => [], rows => [] });
	}
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
like($out, qr/^flexlock: server running: patched build/m, '... saying so');
unlike($out, qr/making a data directory/, '... without a new one');
($out, $rc) = run('make server');
is($rc, 0, 'make server twice');
like($out, qr/^flexlock: the server is already running: patched build, variant stock/m, '... says it is running');
like($out, qr/^flexlock: connect: \S+\/bin\/psql -h \Q$srv\E -p $port /m, '... and how to connect');
like($out, qr/^flexlock: or: export PATH=\S+ PGHOST=\Q$srv\E PGPORT=$port /m, '... and the environment');

($out, $rc) = run('make server VARIANT=walinsert-1 SET="lock_stats_timing=off"');
is($rc, 0, 'a variant and a setting');
like($out, qr/restarting the server with variant walinsert-1, SET="lock_stats_timing=off"/, '... restart the server');
($out) = run(q{echo "SELECT current_setting('wal_insert_locks'), current_setting('lock_stats_timing');" | make psql});
like($out, qr/^ 1 +\| off$/m, '... applied');
($out, $rc) = run('make server');
like($out, qr/already running: patched build, variant walinsert-1, SET="lock_stats_timing=off"/,
	'... and kept');
($out, $rc) = run('make status');
like($out, qr/lock variants not at their stock setting: wal_insert_locks=1$/m, 'make status names the variant');
($out, $rc) = run('make server VARIANT=stock');
($out) = run(q{echo "SELECT current_setting('wal_insert_locks'), current_setting('lock_stats_timing');" | make psql});
like($out, qr/^ 8 +\| on$/m, 'VARIANT=stock: stock settings again, and SET cleared');

($out, $rc) = run('make server SET="no_such_setting=1"');
isnt($rc, 0, 'a setting the build lacks is refused');
like($out, qr/^flexlock: SET: the patched build has no setting 'no_such_setting'$/m, '... naming it');
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
like($out, qr/^flexlock: \S+ is a data directory of the patched build: run 'make server BUILD=patched', or add FRESH=1 /m,
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
like($out, qr/^flexlock: server running: patched build, variant stock, port $port\b/m,
	'... before the server was stopped to change it');

# the extension's regression tests against the running server, as contrib's
# `make installcheck` (their output in this test's log directory, which make
# check keeps when the suite fails and CI prints; libpq's variables as a
# user's shell has them, not as this test's framework sets them); returns
# the output, the exit code and the names of the tests that failed, and
# checks that all six passed (the failed ones in the test's name, which
# make check's summary shows; their differences in the log)
sub installcheck
{
	my ($name, $what, %env) = @_;
	my $dir = "$PostgreSQL::Test::Utils::log_path/$name";
	mkdir($dir) or die "mkdir $dir: $!";
	my ($o, $r) = run('make -C contrib_flexlock installcheck',
		EXTRA_REGRESS_OPTS => "--outputdir=$dir",
		PGHOST => '', PGPORT => '', PGUSER => '', %env);
	my @failed = $o =~ /^not ok \d+\s+[-+] (\S+)/mg;
	like($o, qr/^# All 6 tests passed\.$/m, $what . (@failed ? " (failed: @failed)" : ''))
	  or diag(-f "$dir/regression.diffs" ? slurp_file("$dir/regression.diffs") : 'no regression.diffs');
	return ($o, $r);
}
($out, $rc) = installcheck('installcheck', '... all six tests pass');
is($rc, 0, 'make -C contrib_flexlock installcheck against make server') or diag($out);
like($out, qr/^# using postmaster on \Q$srv\E, port $port$/m, '... on the server of make server');
# ... and with every LWLock hold timed in the tests' sessions: a user's
# server samples holds as it likes (make server's one in 100 made a test
# that relied on the default fail once in about 100 runs), and the tests
# must not depend on it
installcheck('installcheck-hold-sample-1',
	'... all six pass with every hold timed (PGOPTIONS=-c lock_stats_hold_sample=1)',
	PGOPTIONS => '-c lock_stats_hold_sample=1');
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
like($out, qr/^flexlock: the patched build is not there \(\S+ is missing\): run 'make patched' \(or 'make postgres'\) first$/m,
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
# the results' own pages link to each other, to docs/ and to the tools
my @result_pages;
find(sub { push @result_pages, $File::Find::name if /\.md$/ }, "$top/results");
cmp_ok(scalar(@result_pages), '>', 1, 'results/ has pages');
for my $doc (@docs, sort @result_pages)
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
	next if $name =~ m{^results/};

	# reference reads as text: no table cell longer than a paragraph
	my @long;
	for my $row (grep { /^\|/ } split /\n/, $text)
	{
		push @long, map { length($_) . ' characters: ' . substr($_, 0, 40) }
		  grep { length($_) > 800 } split /\s*(?<!\\)\|\s*/, $row;
	}
	is_deeply(\@long, [], "$name: no table cell longer than 800 characters");
}

# the recipes for a newcomer name files that exist: every path in the
# column "the file to copy" of "Adding a variant" and "Adding a lock type"
# (in the checkout, or in the patched tree build/src, whose headers are also
# named from src/include)
my $variants_md = slurp("$top/docs/variants.md");
for my $recipe ('Adding a variant', 'Adding a lock type')
{
	my ($section) = $variants_md =~ /^## \Q$recipe\E\n(.*?)(?=^## |\z)/ms;
	ok(defined $section, "docs/variants.md has the recipe \"$recipe\"") or next;
	my ($n, @missing) = (0);
	for my $row (grep { /^\|/ && !/^\|[-| ]+\|$/ } split /\n/, $section)
	{
		my (undef, $what, $file) = split /\s*(?<!\\)\|\s*/, $row;
		next if $what eq 'what';
		while ($file =~ /`([^`\s]+\/[^`\s]+)`/g)
		{
			my $path = $1;
			$n++;
			push @missing, $path
			  unless grep { -e $_ } "$top/$path", "$top/build/src/$path",
			  "$top/build/src/src/include/$path";
		}
	}
	cmp_ok($n, '>=', 5, "\"$recipe\" names the files to copy ($n)");
	is_deeply(\@missing, [], "\"$recipe\": every file it names exists");
}

my $lines = () = $readme =~ /\n/g;
cmp_ok($lines, '<', 250, "README.md is a front page ($lines lines)");

done_testing();
