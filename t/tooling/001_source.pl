# t/tooling/001_source.pl — how scripts/get-source.sh and scripts/tree.sh treat
# their input: the right source is taken, wrong input is refused with one
# clear line, and the patch workflow round-trips.  Runs on fake source trees
# in a scratch build directory; the real build/ is not touched.
use strict;
use warnings FATAL => 'all';

use File::Path qw(make_path remove_tree);
use File::Temp qw(tempdir);
use Test::More;

my $top = $ENV{FLEXLOCK_TOP} or die "FLEXLOCK_TOP is not set";
my $scratch = tempdir('flexlock-tooling-XXXX', TMPDIR => 1, CLEANUP => 1);

# run(env => {...}, cmd => [...]): output (stdout and stderr) and exit status.
sub run
{
	my (%a) = @_;
	my $env = join ' ', map { "$_='$a{env}{$_}'" } sort keys %{ $a{env} };
	my $cmd = join ' ', map { "'$_'" } @{ $a{cmd} };
	my $out = `env -u PG_SRC -u PG_TARBALL -u PG_VERSION $env $cmd 2>&1`;
	return ($out, $? >> 8);
}

sub write_file
{
	my ($path, $text) = @_;
	make_path($1) if $path =~ m{^(.*)/[^/]+$};
	open my $fh, '>', $path or die "$path: $!";
	print $fh $text;
	close $fh;
}

# A fake PostgreSQL source tree of the given version.
sub fake_tree
{
	my ($dir, $version) = @_;
	write_file("$dir/configure",
		"#!/bin/sh\nPACKAGE_NAME='PostgreSQL'\nPACKAGE_VERSION='$version'\n");
	write_file("$dir/src/backend/storage/lmgr/lwlock.c",
		"/* lwlock.c */\nint\tlwlock_fake = 1;\n");
	return $dir;
}

sub fake_tarball
{
	my ($version, $name) = @_;
	my $d = "$scratch/tarballs/$version";
	fake_tree("$d/postgresql-$version", $version);
	my $tb = "$scratch/tarballs/$name";
	system('tar', '-C', $d, '-cjf', $tb, "postgresql-$version") == 0 or die;
	return $tb;
}

my $n = 0;
sub fresh_env
{
	$n++;
	return {
		FLEXLOCK_BUILD => "$scratch/build$n",
		FLEXLOCK_CACHE => "$scratch/cache$n",
		FLEXLOCK_PATCHES => "$scratch/patches$n",
	};
}

my $get = "$top/scripts/get-source.sh";
my $tree = "$top/scripts/tree.sh";
my ($out, $rc);

# --- PG_SRC --------------------------------------------------------------
($out, $rc) = run(env => { %{ fresh_env() }, PG_SRC => "$scratch/nonexistent" }, cmd => [$get]);
isnt($rc, 0, 'PG_SRC that does not exist is refused');
like($out, qr{^flexlock: PG_SRC=\S+ is not a directory}, '... saying so');
is(scalar(split /\n/, $out), 1, '... in one line');

fake_tree("$scratch/pg17", '17.4');
($out, $rc) = run(env => { %{ fresh_env() }, PG_SRC => "$scratch/pg17" }, cmd => [$get]);
isnt($rc, 0, 'a PostgreSQL 17 tree is refused');
like($out, qr{is PostgreSQL 17\.4, not 18}, '... naming its version');

fake_tree("$scratch/configured", '18.6');
write_file("$scratch/configured/config.status", "#!/bin/sh\n");
($out, $rc) = run(env => { %{ fresh_env() }, PG_SRC => "$scratch/configured" }, cmd => [$get]);
isnt($rc, 0, 'a tree configured in place is refused');
like($out, qr{configured in place; run 'make distclean' there}, '... with what to do');

fake_tree("$scratch/pg18", '18.6');
my $env = fresh_env();
($out, $rc) = run(env => { %$env, PG_SRC => "$scratch/pg18" }, cmd => [$get]);
is($rc, 0, 'a PostgreSQL 18 tree is taken') or diag $out;
like($out, qr{using PostgreSQL 18\.6 from source tree \Q$scratch\E/pg18}, '... and the version said');
ok(-f "$env->{FLEXLOCK_BUILD}/pristine/src/backend/storage/lmgr/lwlock.c", '... and copied');

fake_tree("$scratch/pg18b", '18.6');
($out, $rc) = run(env => { %$env, PG_SRC => "$scratch/pg18b" }, cmd => [$get]);
isnt($rc, 0, 'switching source under an existing build/ is refused');
like($out, qr{run 'make distclean'}, '... with what to do');

# --- PG_TARBALL ----------------------------------------------------------
# Named like the real 18.6 tarball, but not it: the checksum must catch it.
my $bad = fake_tarball('18.6', 'postgresql-18.6.tar.bz2');
($out, $rc) = run(env => { %{ fresh_env() }, PG_TARBALL => $bad }, cmd => [$get]);
isnt($rc, 0, 'a tarball that does not match our checksum is refused');
like($out, qr{checksum mismatch for \S+postgresql-18\.6\.tar\.bz2}, '... as a checksum mismatch');

my $unknown = fake_tarball('18.99', 'postgresql-18.99.tar.bz2');
($out, $rc) = run(env => { %{ fresh_env() }, PG_TARBALL => $unknown }, cmd => [$get]);
is($rc, 0, 'a tarball of a minor release we hold no checksum for is taken') or diag $out;
like($out, qr{PostgreSQL 18\.99 from tarball .*unverified}, '... and called unverified');

my $old = fake_tarball('17.2', 'postgresql-17.2.tar.bz2');
($out, $rc) = run(env => { %{ fresh_env() }, PG_TARBALL => $old }, cmd => [$get]);
isnt($rc, 0, 'a PostgreSQL 17 tarball is refused');
like($out, qr{is PostgreSQL 17\.2, not 18}, '... naming its version');

($out, $rc) = run(env => { %{ fresh_env() }, PG_TARBALL => "$scratch/none.tar.bz2" }, cmd => [$get]);
isnt($rc, 0, 'a missing tarball is refused');
like($out, qr{PG_TARBALL=\S+ does not exist}, '... saying so');

# --- the patch workflow ----------------------------------------------------
$env = fresh_env();
my $src = "$env->{FLEXLOCK_BUILD}/src";
($out, $rc) = run(env => { %$env, PG_SRC => "$scratch/pg18" }, cmd => [ $tree, 'ensure' ]);
is($rc, 0, 'make tree lays out the source') or diag $out;
is(`git -C '$src' log --format=%s`, "PostgreSQL 18.6, vanilla\n", '... as one vanilla commit');

my @git = ('git', '-C', $src, '-c', 'user.name=Test', '-c', 'user.email=test@example.org');
write_file("$src/src/backend/storage/lmgr/lwlock.c", "/* lwlock.c */\nint\tlwlock_fake = 2;\n");
system(@git, 'commit', '-q', '-a', '-m', 'Change the fake lock',
	'-m', 'Because tests need a patch.') == 0 or die;
($out, $rc) = run(env => $env, cmd => [ $tree, 'export' ]);
is($rc, 0, 'make export-patches writes the commits') or diag $out;
my @patches = glob("$env->{FLEXLOCK_PATCHES}/*.patch");
is_deeply([ map { s{.*/}{}r } @patches ], ['0001-Change-the-fake-lock.patch'], '... one patch, named by its subject');
my $text = do { local (@ARGV, $/) = $patches[0]; <> };
like($text, qr{^From 0{40} }m, '... without commit ids');
like($text, qr{^Subject: \[PATCH\] Change the fake lock$}m, '... without numbering');
unlike($text, qr{^-- \n\d+\.\d+}m, '... without a git version signature');

($out, $rc) = run(env => $env, cmd => [ $tree, 'export' ]);
is($rc, 0, 'exporting again works');
is(do { local (@ARGV, $/) = $patches[0]; <> }, $text, '... and writes the same bytes');

($out, $rc) = run(env => $env, cmd => [ $tree, 'check' ]);
is($rc, 0, 'make check-patches: the series applies to the pristine source') or diag $out;
like($out, qr{1 patches apply cleanly to PostgreSQL 18\.6}, '... and says so');

# Work in the tree that is not exported, and a changed patches/: refuse.
write_file("$src/src/backend/storage/lmgr/lwlock.c", "/* lwlock.c */\nint\tlwlock_fake = 3;\n");
system(@git, 'commit', '-q', '-a', '-m', 'Unexported work') == 0 or die;
write_file("$env->{FLEXLOCK_PATCHES}/0002-Other.patch", "not a patch\n");
($out, $rc) = run(env => $env, cmd => [ $tree, 'ensure' ]);
isnt($rc, 0, 'a changed patches/ does not overwrite unexported work');
like($out, qr{build/src has work of its own}, '... and says why');

# A patch that does not apply: check-patches names it.
write_file("$env->{FLEXLOCK_PATCHES}/0002-Other.patch", <<'PATCH');
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <test@example.org>
Date: Sat, 1 Jan 2000 00:00:00 +0000
Subject: [PATCH] Touch a line that is not there

---
 configure | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/configure b/configure
--- a/configure
+++ b/configure
@@ -1,3 +1,3 @@
 #!/bin/sh
 PACKAGE_NAME='PostgreSQL'
-PACKAGE_VERSION='99.0'
+PACKAGE_VERSION='99.1'
PATCH
($out, $rc) = run(env => $env, cmd => [ $tree, 'check' ]);
isnt($rc, 0, 'make check-patches fails when a patch does not apply');
like($out, qr{'Touch a line that is not there' fails}, '... naming the patch');

# --- other bad input ---------------------------------------------------------
($out, $rc) = run(env => fresh_env(), cmd => [ "$top/scripts/build.sh", 'nosuch' ]);
isnt($rc, 0, 'an unknown build name is refused');

($out, $rc) = run(env => { %{ fresh_env() }, VARIANTS => 'nosuch' }, cmd => [ "$top/scripts/check.sh" ]);
isnt($rc, 0, 'make check with an unknown variant is refused');
like($out, qr{unknown variant 'nosuch' \(known: .*\bstock\b}, '... listing the known ones');

($out, $rc) = run(env => { %{ fresh_env() }, SUITES => 'nosuch' }, cmd => [ "$top/scripts/check.sh" ]);
isnt($rc, 0, 'make check with an unknown suite is refused');

for my $bad ([ REPEAT => 'many', qr{REPEAT must be a positive number of runs, not 'many'} ],
	[ REPEAT => '0', qr{REPEAT must be a positive number of runs, not '0'} ],
	[ SOAK_LOAD => '-1', qr{SOAK_LOAD must be a number of busy loops \(0 for none\), not '-1'} ],
	[ SUITES => 'nosuch', qr{unknown suite 'nosuch'} ])
{
	my ($var, $val, $msg) = @$bad;
	($out, $rc) = run(env => { %{ fresh_env() }, $var => $val }, cmd => [ "$top/scripts/soak.sh" ]);
	isnt($rc, 0, "make check-soak $var=$val is refused");
	like($out, $msg, '... saying why');
	is(scalar(split /\n/, $out), 1, '... in one line, before any run');
}

SKIP:
{
	skip 'runs as root: make deps would install instead of refusing', 2 if $> == 0;
	($out, $rc) = run(env => { FLEXLOCK_DEPS_EXTRA => 'flexlock-no-such-package' },
		cmd => [ "$top/scripts/deps.sh" ]);
	isnt($rc, 0, 'make deps as non-root with a package missing fails');
	like($out, qr{missing packages: .*flexlock-no-such-package}, '... naming the package');
}

done_testing();
