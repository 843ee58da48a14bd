# t/tooling/002_relocate.pl — the installs are relocatable: each install of
# the build directory (vanilla, patched, cassert, those that are built) is
# copied to another path and, with the original out of sight, every program
# and module of the copy finds its libraries, and initdb, a server (pg_ctl),
# psql with a module that needs libpq (dblink), and pgbench run from there.
#
# Out of sight: each command runs in a private mount namespace (unshare, an
# unprivileged user namespace) where an empty tmpfs covers the original
# install, mapped back to our own uid because PostgreSQL refuses root.  An
# install that names its original path (an absolute rpath) cannot load its
# libpq there, and takes the system's libpq if there is one (Debian's libpq5:
# then only a module that needs a newer libpq fails, like dblink on 18), so
# every library the install ships must resolve into the copy.  Where user
# namespaces are not allowed, the original stays visible and the same check
# (nothing resolved from the original, nor shipped libraries from elsewhere)
# still fails an install that is not relocatable.
use strict;
use warnings FATAL => 'all';

use File::Temp qw(tempdir);
use Test::More;

my $build = $ENV{FLEXLOCK_BUILD} or die "FLEXLOCK_BUILD is not set";
my $scratch = tempdir('flexlock-relocate-XXXX', TMPDIR => 1, CLEANUP => 1);
my @names = grep { -x "$build/install/$_/bin/postgres" } qw(vanilla patched cassert);
plan skip_all => "no install in $build/install" unless @names;

my $hide = system('unshare -r -m true >/dev/null 2>&1') == 0;
diag($hide
	? 'the original installs are hidden under a tmpfs in a private mount namespace'
	: 'user namespaces are not allowed here: the original installs stay visible');

my ($uid, $gid) = ($<, (split ' ', $()[0]);
my $hidden;    # the original install of the copy under test

# Run a command (list) with the original install hidden; output and status.
sub run
{
	my @cmd = @_;
	if ($hide)
	{
		@cmd = (
			'unshare', '-r', '-m', 'sh', '-c',
			'mount -t tmpfs flexlock-hidden "$0" && exec unshare --user '
			  . "--map-user=$uid --map-group=$gid \"\$@\"",
			$hidden, @cmd);
	}
	my $q = join ' ', map { my $a = $_; $a =~ s/'/'\\''/g; "'$a'" } @cmd;
	my $out = `$q 2>&1`;
	return ($out, $? >> 8);
}

my $port = 15400 + ($$ % 500);
my @running;
END
{
	for my $d (@running) { system("'$d->[0]/bin/pg_ctl' -D '$d->[1]' -m immediate stop >/dev/null 2>&1"); }
}

for my $name (@names)
{
	$hidden = "$build/install/$name";
	my $copy = "$scratch/elsewhere/$name";
	system('mkdir', '-p', "$scratch/elsewhere") == 0 or die;
	system('cp', '-a', $hidden, $copy) == 0 or BAIL_OUT("cannot copy $hidden");

	# Every ELF file of the copy resolves its libraries, none from the original.
	my @elf = grep { chomp; 1 } `find '$copy' -type f \\( -perm -u+x -o -name '*.so*' \\) -exec sh -c 'head -c4 "\$1" | grep -q ELF' sh {} \\; -print`;
	cmp_ok(scalar(@elf), '>', 50, "$name: the copy has its programs and modules");
	# A library the install ships (libpq.so.5, ...) must come from the copy,
	# not from the system: a system libpq hides a broken rpath until a module
	# needs a newer function.
	my %own = map { m{([^/]+)$}; ($1 => 1) } glob("$copy/lib/*.so.*");
	my ($ldd) = run('sh', '-c', 'for f; do echo "== $f"; ldd "$f"; done', 'sh', @elf);
	my ($file, @bad);
	for (split /\n/, $ldd)
	{
		$file = $1 if /^== (.*)/;
		next unless /^\s*(\S+) => (.*?)(?: \(0x[0-9a-f]+\))?$/;
		my ($lib, $path) = ($1, $2);
		push @bad, "$file: $lib => $path"
		  if $path eq 'not found'
		  || index($path, $hidden) == 0
		  || ($own{$lib} && index($path, "$copy/") != 0);
	}
	cmp_ok(scalar(keys %own), '>', 0, "$name: the install ships libraries (libpq)");
	is(join("\n", @bad), '', "$name: every program and module of the copy finds its libraries in the copy");

	my ($out, $rc);
	my $data = "$scratch/data-$name";
	my $sock = "$scratch/sock-$name";
	mkdir $sock or die;
	($out, $rc) = run("$copy/bin/initdb", '-D', $data, '-A', 'trust', '-U', 'relocated', '--no-sync');
	is($rc, 0, "$name: initdb runs from the copy") or diag($out);

	($out, $rc) = run("$copy/bin/pg_ctl", '-D', $data, '-l', "$scratch/server-$name.log", '-w',
		'-o', "-k $sock -p $port -c listen_addresses=", 'start');
	is($rc, 0, "$name: a server starts from the copy") or diag($out . `cat '$scratch/server-$name.log'`);
	push @running, [ $copy, $data ] if $rc == 0;

	my @conn = ('-h', $sock, '-p', $port, '-U', 'relocated', '-X', '-A', '-t');
	($out, $rc) = run("$copy/bin/psql", @conn, '-d', 'postgres', '-c',
		"CREATE EXTENSION dblink; SELECT * FROM dblink('host=$sock port=$port user=relocated dbname=postgres', 'SELECT 6 * 7') AS t(x int)");
	is($rc, 0, "$name: psql runs from the copy") or diag($out);
	like($out, qr/^42$/m, "$name: the server loads a module that needs libpq (dblink)");

	($out, $rc) = run("$copy/bin/psql", @conn, '-d', 'postgres', '-c', 'SHOW data_directory');
	like($out, qr/^\Q$data\E$/m, "$name: psql talks to the server of the copy");

	($out, $rc) = run("$copy/bin/pgbench", '-h', $sock, '-p', $port, '-U', 'relocated', '-i', '-s', '1', '-q', 'postgres');
	is($rc, 0, "$name: pgbench -i runs from the copy") or diag($out);
	($out, $rc) = run("$copy/bin/pgbench", '-h', $sock, '-p', $port, '-U', 'relocated', '-n', '-c', '2', '-t', '100', 'postgres');
	is($rc, 0, "$name: pgbench runs from the copy") or diag($out);
	like($out, qr/number of transactions actually processed: 200\b/, "$name: ... all its transactions");

	($out, $rc) = run("$copy/bin/pg_ctl", '-D', $data, '-m', 'fast', '-w', 'stop');
	is($rc, 0, "$name: the server stops") or diag($out);
	@running = grep { $_->[1] ne $data } @running;
	$port++;
}

done_testing();
