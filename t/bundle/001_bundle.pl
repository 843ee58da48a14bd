# t/bundle/001_bundle.pl — `make bundle` end to end: scripts/bundle.sh makes a
# bundle of the builds make check has (BUNDLE_BUILDS, default vanilla and
# cassert), which is unpacked in temporary directories and run with its
# launcher, as root (servers as the unprivileged user, under a directory that
# user cannot enter until the launcher grants it) and as a normal user; each
# run must write a run directory with runs.csv rows for both builds.  Bad
# input: a machine without python3 and a missing install are refused with one
# clear line.  Needs FLEXLOCK_TOP and FLEXLOCK_BUILD; runs as root or not.
use strict;
use warnings FATAL => 'all';

use Digest::SHA;
use File::Temp qw(tempdir);
use JSON::PP;
use Test::More;

my $top = $ENV{FLEXLOCK_TOP} or die "FLEXLOCK_TOP is not set";
my $build = $ENV{FLEXLOCK_BUILD} or die "FLEXLOCK_BUILD is not set";
my @builds = split ' ', ($ENV{BUNDLE_BUILDS} // 'vanilla cassert');
my $root = $> == 0;
my $user = $ENV{FLEXLOCK_USER} // 'flexlock';
my $scratch = tempdir('flexlock-bundle-XXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0711, $scratch;

sub q_ { my $a = shift; $a =~ s/'/'\\''/g; return "'$a'"; }

# run(cmd => [...], env => {...}, as => user, cwd => dir): output and status.
sub run
{
	my (%a) = @_;
	my @cmd = @{ $a{cmd} };
	unshift @cmd, 'env', map { "$_=$a{env}{$_}" } sort keys %{ $a{env} } if $a{env};
	unshift @cmd, 'runuser', '-u', $a{as}, '--' if $a{as};
	my $cmd = join ' ', map { q_($_) } @cmd;
	$cmd = 'cd ' . q_($a{cwd}) . " && $cmd" if $a{cwd};
	my $out = `$cmd 2>&1`;
	return ($out, $? >> 8);
}

sub lines { return scalar(split /\n/, $_[0]); }

# A directory for PATH with every command of the system but those matching $re.
my $paths = 0;
sub path_without
{
	my ($re) = @_;
	my $dir = "$scratch/path" . ++$paths;
	mkdir $dir or die;
	for my $f (glob('/usr/bin/* /usr/sbin/* /bin/* /sbin/*'))
	{
		my ($base) = $f =~ m{([^/]+)$};
		next if $base =~ $re || -e "$dir/$base";
		symlink($f, "$dir/$base") or die;
	}
	chmod 0755, $dir;
	return $dir;
}

# The launcher runs the python3 of PATH: the system's, whose matplotlib
# 'make deps' installs (not one of a pyenv in root's PATH, say).
my %syspath = (PATH => '/usr/sbin:/usr/bin:/sbin:/bin');

# --- make the bundle ----------------------------------------------------------
my ($out, $rc) = run(cmd => ["$top/scripts/bundle.sh"],
	env => { BUNDLE_BUILDS => "@builds", BUNDLE_OUT => "$scratch/out" });
is($rc, 0, 'bundle.sh makes a bundle') or BAIL_OUT("bundle.sh failed: $out");
like($out, qr/^flexlock: bundle size: \d+ MiB \(\d+ bytes; \d+ MiB unpacked; \Q@builds\E, debug info stripped\)/m,
	'... and prints its size');
my @tarballs = glob("$scratch/out/*.tar.xz");
is(scalar(@tarballs), 1, '... one tarball') or BAIL_OUT('no tarball');
my $tarball = $tarballs[0];
my ($name) = $tarball =~ m{/([^/]+)\.tar\.xz$};
my $suffix = "@builds" eq 'vanilla patched' ? '' : '-' . join('-', @builds);
like($name, qr/^flexlock-bundle-\S+-pg18\.\d+-x86_64\Q$suffix\E$/, "... named $name");
chmod 0644, $tarball;

my @members = split /\n/, `tar -tJf '$tarball'`;
my %has = map { s{/$}{}r => 1 } @members;
for my $f ('flexbench', 'README.md', 'bundle.json', 'build/pristine.origin', 'bench-scripts/flexbench.py',
	'bench-scripts/workloads/insert-10.sql', 'bench-scripts/presets/seed-000.conf', 'variants/stock.conf',
	'build/machine/pingpong', 'bench-scripts/machine/pingpong.c',
	(map { "build/install/$_/bin/postgres" } @builds),
	(map { s{^\Q$top\E/}{}r } glob("$top/patches/*.patch")))
{
	ok($has{"$name/$f"}, "the bundle has $f");
}
is(join(' ', grep { m{^\Q$name\E/(results|bench-scripts/tests)(/|$)} } @members), '',
	'... and no results/ or tests/');
is(join(' ', grep { m{/flexlock_inject[^/]*$} } @members), '', '... nor the tests\' module flexlock_inject');
is(join(' ', grep { !m{^\Q$name\E(/|$)} } @members), '', '... all under one directory');

# --- as root: servers as the unprivileged user, under a private directory -----
# (as a normal user the same run, servers as ourselves)
my $b1 = "$scratch/private/b";
mkdir "$scratch/private", 0700 or die;
mkdir $b1 or die;
($out, $rc) = run(cmd => [ 'tar', '-C', $b1, '-xJf', $tarball ]);
is($rc, 0, 'the bundle unpacks') or diag($out);
$b1 .= "/$name";

my $json = decode_json(do { local $/; open my $fh, '<', "$b1/bundle.json" or die; <$fh> });
my %sums = map { m{([^/]+)$}; ($1 => Digest::SHA->new(256)->addfile($_)->hexdigest) } glob("$top/patches/*.patch");
is_deeply($json->{patches}, \%sums, 'bundle.json: the patches\' checksums');
my @origin = split /\t/, do { local $/; open my $fh, '<', "$build/pristine.origin" or die; <$fh> } =~ s/\s+$//r;
is($json->{postgresql}{version}, $origin[0], "bundle.json: PostgreSQL $origin[0]");
is_deeply($json->{postgresql}{source}, \@origin, 'bundle.json: where its source came from');
is_deeply([ sort keys %{ $json->{builds} } ], [ sort @builds ], 'bundle.json: the builds');
like($json->{builds}{$builds[0]}{configure}, qr/--disable-rpath/, '... with their configure flags');
my $describe = `git -C '$top' describe --always --dirty 2>/dev/null`;
chomp $describe;
is($json->{flexlock_commit}, $describe || 'unknown', 'bundle.json: the flexlock commit');
cmp_ok(scalar(@{ $json->{series} }), '>', 0, 'bundle.json: the series\' commits');
like(`ldd '$b1/build/machine/pingpong' 2>&1`, qr/not a dynamic executable|statically linked/,
	'the machine profile\'s tool is linked statically');
unlike(`readelf -S '$b1/build/install/$builds[-1]/bin/postgres'`, qr/\.debug_info/,
	'the installs are stripped of debug info');
like(`readelf -S '$build/install/$builds[-1]/bin/postgres'`, qr/\.debug_info/, '... which the originals have');

for my $f ('bin/psql', 'lib/postgresql/dblink.so')
{
	like(`ldd '$b1/build/install/$builds[0]/$f'`, qr{libpq\.so\.5 => \Q$b1\E/build/install/$builds[0]/\S*libpq\.so\.5 },
		"$f of the unpacked bundle loads the bundle's libpq");
}

my @tiny = ('run', '--workloads', 'insert-10', '--clients', '1', '--reps', '1', '--duration', '2',
	'--warmup', '0', '--builds', join(',', @builds), '--variants', 'stock');

sub check_run
{
	my ($what, $dir) = @_;
	ok(-f "$dir/runs.csv" && -f "$dir/meta.json" && -f "$dir/summary.md", "$what: a run directory at $dir");
	# the machine profiled itself before the runs
	my $prof = eval { decode_json(do { local $/; open my $fh, '<', "$dir/machine-profile.json" or die; <$fh> }) };
	ok($prof && !$prof->{assumed}, "$what: machine-profile.json, measured");
	cmp_ok($prof->{constants}{uncontended_cas_ns}{value} // 0, '>', 0, "$what: ... an atomic operation's time");
	cmp_ok($prof->{constants}{wal_flush_us}{value} // 0, '>', 0, "$what: ... the WAL device's flush time");
	is($prof->{machine}{logical_cpus}, `nproc --all` =~ s/\s+//r, "$what: ... the CPUs");
	open my $fh, '<', "$dir/runs.csv" or return fail("$what: runs.csv: $!");
	my @head = split /,/, scalar(<$fh>) =~ s/\s+$//r;
	my %got;
	while (my $l = <$fh>)
	{
		my %r;
		@r{@head} = split /,/, $l;
		$got{ $r{build} }++ if $r{tps} > 0;
	}
	is_deeply([ sort keys %got ], [ sort @builds ], "$what: runs.csv has a run with tps > 0 for each build");
}

SKIP:
{
	skip 'not root: no run as root', 11 unless $root;
	# from another directory, by absolute path
	($out, $rc) = run(cmd => [ "$b1/flexbench", @tiny, '--out', "$b1/run-root" ], env => \%syspath, cwd => '/');
	is($rc, 0, 'as root: the tiny run from the bundle succeeds') or diag($out);
	like($out, qr/granted '\Q$user\E' search permission on \Q$scratch\E\/private/,
		'... after granting the servers\' user search permission on the private directory');
	check_run('as root', "$b1/run-root");

	# Under another private directory, on a machine without setfacl.
	mkdir "$scratch/private2", 0700 or die;
	rename("$scratch/private/b", "$scratch/private2/b") or die;
	($out, $rc) = run(cmd => [ "$scratch/private2/b/$name/flexbench", 'list' ],
		env => { PATH => path_without(qr/^setfacl$/) });
	isnt($rc, 0, 'as root: a bundle the servers\' user cannot reach, without setfacl, is refused');
	like($out, qr/^flexbench: '\Q$user\E' cannot enter \Q$scratch\E\/private2; /, '... naming the directory');
	is(lines($out), 1, '... in one line');
}

# --- as a normal user ---------------------------------------------------------
my $b2 = "$scratch/user";
mkdir $b2 or die;
my @as = $root ? (as => $user) : ();
system('chown', '-R', "$user:", $b2) == 0 or die if $root;
($out, $rc) = run(cmd => [ 'tar', '-C', $b2, '-xJf', $tarball ], @as);
is($rc, 0, 'a normal user unpacks the bundle') or diag($out);
$b2 .= "/$name";
($out, $rc) = run(cmd => [ "$b2/flexbench", @tiny ], env => \%syspath, cwd => $scratch, @as);
is($rc, 0, 'as a normal user: the tiny run from the bundle succeeds') or diag($out);
my @runs = glob("$b2/results/*-custom");
is(scalar(@runs), 1, '... into results/ of the bundle');
check_run('as a normal user', $runs[0] // "$b2/results/none");

# --- what the simulator needs from the bundle's machine (issue 43, item 6) ----
# a calibration and lock traces, taken there with the patched server (here
# the cassert twin, which make check ships)
my ($pb) = grep { $_ ne 'vanilla' } @builds;
SKIP: {
	skip('the bundle has no patched build', 5) unless $pb;
	($out, $rc) = run(cmd => [ "$b2/flexbench", 'calibrate', '--build', $pb, '--workloads', 'select-only',
			'--secs', '1', '--reps', '1', '--clients', '2', '--out', "$b2/calibration.json" ],
		env => \%syspath, cwd => $scratch, @as);
	is($rc, 0, 'the calibration from the bundle succeeds') or diag($out);
	my $cal = eval { decode_json(do { local $/; open my $fh, '<', "$b2/calibration.json" or die; <$fh> }) };
	cmp_ok($cal ? $cal->{workloads}{'select-only'}{median}{tps} : 0, '>', 0, '... select-only\'s throughput');
	is($cal ? $cal->{cores} : undef, `nproc` =~ s/\s+//r, '... and the CPUs it ran on');
	($out, $rc) = run(cmd => [ "$b2/flexbench", 'trace', '--build', $pb, '--workload', 'select-only',
			'--variant', 'stock', '--traced', '20', '--warmup', '0', '--out', "$b2/traces" ],
		env => \%syspath, cwd => $scratch, @as);
	is($rc, 0, 'lock traces from the bundle') or diag($out);
	ok(-f "$b2/traces/select-only/stock/summary.json", '... select-only\'s, summarised');
}

# --- bad input ------------------------------------------------------------------
# A machine without python3: every command of the system but python3.
my $nopy = path_without(qr/^python3/);
($out, $rc) = run(cmd => [ "$b2/flexbench", 'list' ], env => \%syspath, @as);
is($rc, 0, 'flexbench list runs') or diag($out);
($out, $rc) = run(cmd => [ "$b2/flexbench", 'list' ], env => { PATH => $nopy }, @as);
isnt($rc, 0, 'without python3 flexbench fails');
like($out, qr/^flexbench: python3 is not installed;/, '... saying so');
is(lines($out), 1, '... in one line');

system('rm', '-rf', "$b2/build/install/$builds[0]") == 0 or die;
($out, $rc) = run(cmd => [ "$b2/flexbench", @tiny ], env => \%syspath, @as);
isnt($rc, 0, "without build/install/$builds[0] flexbench fails");
like($out, qr{^flexbench: the $builds[0] install is missing \(\Q$b2\E/build/install/$builds[0]/bin/postgres\)},
	'... naming it');
is(lines($out), 1, '... in one line');

done_testing();
