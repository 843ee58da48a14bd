# t/own/001_own_build.pl — a build of one's own (make build, issue 44,
# docs/your-patch.md) end to end, as ourselves (root in CI: make build writes
# the build tree; the servers run as the unprivileged user).
#
# 1. Bad input to make build, each refused with one line that says what to
#    do (make's own "*** Error" line aside) and nothing else changed: the
#    listing and the checksum of every file of build/install/, the source
#    trees (build/src, build/pristine) and build/builds/ are the same after
#    all of them as before.  A path that does not exist, a file that is no
#    patch, a patch against PostgreSQL 19, a patch whose hunk does not match
#    (the message names the file, the hunk and the path), a name that is one
#    of ours, one a path cannot hold, one ending in -cassert, no name, an
#    unknown base, and a base that is not built (a build directory without
#    installs).
# 2. The README's three commands (between <!-- own --> and <!-- /own -->), as
#    written: the example patch (docs/example-patch/) built on patched, the
#    quick preset's A/B against patched (shortened through BENCH_ARGS, the
#    environment only), a server of it; then flexlock_report() read from it
#    with the counter the patch changes (a write transaction's relation locks
#    no longer take the fast path), the record (base, base commit, each
#    patch's subject and sha256), the same build again (up to date), a
#    changed patch (the tree moves, only lock.o is compiled again), the
#    cassert twin (CASSERT=1), the
#    example on vanilla, make trace BUILD=, make predict BUILD= and make
#    overhead BUILD= of it (its TPC-B-like transaction costs more
#    instructions than patched's: callgrind, exact).
# 3. make bundle of patched and the example, unpacked under a directory the
#    servers' user cannot enter, run by its launcher with the build tree
#    hidden (as root: a tmpfs mounted over it in a mount namespace): the A/B,
#    with the example's record in bundle.json and in the run's meta.json.
use strict;
use warnings FATAL => 'all';

use Digest::SHA;
use File::Temp qw(tempdir);
use IO::Socket::INET;
use JSON::PP;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use FlexlockCheckout;

my $top = $ENV{FLEXLOCK_TOP} or die "FLEXLOCK_TOP is not set";
my $build = $ENV{FLEXLOCK_BUILD} or die "FLEXLOCK_BUILD is not set";
my $user = $ENV{FLEXLOCK_USER} // 'flexlock';
my $root = $> == 0;
my $scratch = tempdir('flexlock-own-XXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0711, $scratch;
delete $ENV{$_} for qw(MAKEFLAGS MAKELEVEL MFLAGS FLEXLOCK_SERVER_BUILD);

# make server's directory and port: this test's own, so that a server the
# user keeps in build/server is not touched
my $sock = IO::Socket::INET->new(Listen => 1, LocalAddr => '127.0.0.1', LocalPort => 0) or die;
my $port = $sock->sockport;
close $sock;
$ENV{FLEXLOCK_SERVER_DIR} = "$scratch/server";
$ENV{FLEXLOCK_PORT} = $port;
mkdir "$scratch/server" or die;
system('chown', "$user:", "$scratch/server") == 0 or die if $root;

END
{
	local $?;
	system("cd '$top' && make stop >/dev/null 2>&1") if defined $top;
}

sub spew
{
	my ($f, $t) = @_;
	open my $fh, '>', $f or die "$f: $!";
	print $fh $t;
	close $fh;
}

sub json { return decode_json(slurp($_[0])); }

# the lines a command printed, make's own "make: *** ..." aside
sub said { return grep { !/^make(\[\d+\])?: \*\*\*/ && /\S/ } split /\n/, $_[0]; }

# --- 1. bad input ------------------------------------------------------------

# every file and directory of the installs and the trees: type and path, and
# each file's sha256
sub snapshot
{
	my @dirs = grep { -e "$build/$_" } qw(install src pristine builds);
	my $listing = `cd '$build' && find @dirs -printf '%y %p\\n' | LC_ALL=C sort`;
	my $sums = `cd '$build' && find @dirs -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum`;
	die "snapshot failed" if $? != 0;
	return ($listing, Digest::SHA::sha256_hex($sums), scalar(split /\n/, $sums));
}
my ($list0, $sum0, $files0) = snapshot();
cmp_ok($files0, '>', 1000, "snapshot: $files0 files of the installs and trees");

my $example = "$top/docs/example-patch";
my ($example_file) = glob("$example/*.patch");
ok(-f $example_file, 'the example patch is in docs/example-patch/');

spew("$scratch/pg19.patch", <<'EOF');
From 0c1e8c2b1b5f0d6a3e0a9d1c2f3e4d5c6b7a8f90 Mon Sep 17 00:00:00 2001
From: A Hacker <hacker@example.org>
Date: Mon, 6 Jul 2026 10:00:00 +0200
Subject: [PATCH v3] Require Perl 5.16

---
 configure.ac | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/configure.ac b/configure.ac
index 1111111..2222222 100644
--- a/configure.ac
+++ b/configure.ac
@@ -17,7 +17,7 @@ dnl
 dnl Don't forget to update the documentation when changing the version.
 
 AC_INIT([PostgreSQL], [19devel], [pgsql-bugs@lists.postgresql.org], [], [https://www.postgresql.org/])
-m4_if(m4_defn([m4_PACKAGE_VERSION]), [2.69], [], [m4_fatal([Autoconf version 2.69 is required.
+m4_if(m4_defn([m4_PACKAGE_VERSION]), [2.72], [], [m4_fatal([Autoconf version 2.72 is required.
 Untested combinations of 'autoconf' and PostgreSQL versions are not
 recommended.  You can remove the check from 'configure.ac' but it is then
 your responsibility whether the result works or not.])])
-- 
2.47.0
EOF
# the example with one context line that 18 does not have
my $stale = slurp($example_file);
$stale =~ s/^(  \* self-conflicting, it )can't use the fast-path mechanism;/${1}cannot use the fast-path mechanism;/m
  or die "the example patch changed: adjust this test";
spew("$scratch/0001-stale.patch", $stale);
spew("$scratch/notes.txt", "a review, not a patch\n");

my $nobuild = "$scratch/no-build";
mkdir $nobuild or die;
my @bad = (
	[ 'a path that does not exist', "NAME=mine PATCHES=$scratch/nosuch",
		qr/^flexlock: PATCHES=\Q$scratch\E\/nosuch: no such file or directory$/ ],
	[ 'a file that is not a patch', "NAME=mine PATCHES=$scratch/notes.txt",
		qr/^flexlock: \Q$scratch\E\/notes.txt is not a patch: it holds no diff .*; make one with git format-patch or git diff$/ ],
	[ 'a directory without patches', "NAME=mine PATCHES=$nobuild",
		qr/^flexlock: PATCHES=\Q$nobuild\E: the directory holds no \*\.patch or \*\.diff files$/ ],
	[ 'a patch against PostgreSQL 19', "NAME=mine PATCHES=$scratch/pg19.patch",
		qr/^flexlock: pg19.patch is a patch against PostgreSQL 19 \(its hunk of configure.ac says so\); the lab builds PostgreSQL 18: rebase it on REL_18_STABLE first$/ ],
	[ 'a patch whose hunk does not match', "NAME=mine PATCHES=$scratch/0001-stale.patch",
		qr/^flexlock: 0001-stale.patch \(patch 1\) does not apply to the patched build \(PostgreSQL 18\.\d+\): hunk 1 of 1 \(@@ -\d+,\d+ \+\d+,\d+ @@\) of src\/backend\/storage\/lmgr\/lock.c does not match the base; nothing was changed: rebase it on (?:\Q$build\E|build)\/src \(HEAD\) \(log: (?:\Q$build\E|build)\/logs\/build-mine-apply.log\)$/ ],
	[ 'a name of ours', "NAME=patched PATCHES=$example",
		qr/^flexlock: NAME=patched: 'patched' is one of the lab's own builds; choose another name$/ ],
	[ 'a name a path cannot hold', "NAME=my/patch PATCHES=$example",
		qr/^flexlock: NAME='my\/patch': a build's name is a directory name: .*$/ ],
	[ 'a name of a twin', "NAME=mine-cassert PATCHES=$example",
		qr/^flexlock: NAME=mine-cassert: names ending in '-cassert' are the assertion-enabled twins .*$/ ],
	[ 'no name', "PATCHES=$example",
		qr/^flexlock: make build: name the build, NAME=mine .*$/ ],
	[ 'no patches', "NAME=mine",
		qr/^flexlock: make build: name the patches, PATCHES=dir .*$/ ],
	[ 'an unknown base', "NAME=mine PATCHES=$example BASE=cassert",
		qr/^flexlock: BASE=cassert: a build is laid on 'patched' \(the default: .*\) or 'vanilla'$/ ],
);
for my $b (@bad)
{
	my ($what, $args, $re) = @$b;
	my ($out, $rc) = run("make build $args");
	isnt($rc, 0, "make build refuses $what");
	my @l = said($out);
	is(scalar(@l), 1, '... in one line') or diag($out);
	like($l[0] // '', $re, '... saying what to do');
}
# a base that is not built: a build directory with no installs, left empty
my ($out, $rc) = run("make build NAME=mine PATCHES=$example BASE=vanilla", FLEXLOCK_BUILD => $nobuild);
isnt($rc, 0, 'make build refuses a base that is not built');
my @l = said($out);
is(scalar(@l), 1, '... in one line') or diag($out);
like($l[0] // '', qr/^flexlock: BASE=vanilla: the vanilla build is not built \(\Q$nobuild\E\/install\/vanilla is missing\): run 'make vanilla' first$/,
	'... saying what to do');
is(`ls -A '$nobuild'`, '', '... and writes nothing there');

my ($list1, $sum1, $files1) = snapshot();
is($list1, $list0, 'after the bad input: the installs and trees list the same files');
is($sum1, $sum0, "... with the same checksums ($files1 files)");
ok(!-e "$build/install/mine" && !glob("$build/builds/.stage-*"), '... no build mine, no scratch tree left');

# --- 2. the README's three commands ------------------------------------------

my ($own) = slurp("$top/README.md") =~ /^<!-- own -->\n(.*?)^<!-- \/own -->$/ms;
ok(defined $own, 'README.md marks how to bring a patch');
my @cmds = map { s/^\s+//r } grep { /^    make / } split /\n/, $own // '';
is(scalar(@cmds), 3, '... three commands') or diag(explain \@cmds);
like($cmds[0] // '', qr/^make build NAME=example PATCHES=docs\/example-patch$/, '... make build of the example');
like($cmds[1] // '', qr/^make bench PRESET=quick BUILDS="patched example"$/, '... its A/B with patched');
like($cmds[2] // '', qr/^make server BUILD=example$/, '... a server of it');

# make build
($out, $rc) = run($cmds[0]);
is($rc, 0, "$cmds[0]: builds") or diag($out);
like($out, qr/^flexlock: example: (?:\Q$build\E|build)\/builds\/example\/src: the patched build's tree \+ 1 patch$/m,
	'... laying out the patched build\'s tree plus the patch');
like($out, qr/^flexlock: example: patched \+ 1 patch: Take only AccessShareLock through the relation lock fast path$/m,
	'... and says what it is');
my $rec = json("$build/install/example/flexlock-build.json");
is($rec->{base}, 'patched', 'the record: laid on patched');
chomp(my $head = `git -C '$build/src' rev-parse HEAD`);
is($rec->{base_commit}, $head, '... at build/src\'s HEAD');
is_deeply([ map { [ $_->{file}, $_->{subject}, $_->{sha256}, $_->{applied_with} ] } @{ $rec->{patches} } ],
	[ [ $example_file =~ s{.*/}{}r, 'Take only AccessShareLock through the relation lock fast path',
		Digest::SHA->new(256)->addfile($example_file)->hexdigest, 'git am' ] ],
	'... the patch: file, subject, sha256');
is(scalar(@{ $rec->{commits} }), 1, '... and its commit');

($out, $rc) = run($cmds[0]);
is($rc, 0, 'the same make build again');
like($out, qr/^flexlock: example: up to date \((?:\Q$build\E|build)\/install\/example\)$/m, '... is up to date');

# a changed patch: the tree moves to the new commit, and make compiles only
# what it changed (lock.o again, heapam.o not)
my $objdir = "$build/builds/example/obj/example/src/backend";
my @o0 = map { (stat "$objdir/$_")[9] // 0 } qw(storage/lmgr/lock.o access/heap/heapam.o);
my $v2 = slurp($example_file);
$v2 =~ s/^\+ \* counts and their transfer are unchanged\.$/+ * counts and their transfer stay as they were./m or die "the example patch changed: adjust this test";
mkdir "$scratch/v2" or die;
spew("$scratch/v2/0001-v2.patch", $v2);
sleep 1;
($out, $rc) = run("make build NAME=example PATCHES=$scratch/v2");
is($rc, 0, 'the example with a changed patch builds') or diag($out);
my @o1 = map { (stat "$objdir/$_")[9] // 0 } qw(storage/lmgr/lock.o access/heap/heapam.o);
ok($o0[0] && $o1[0] != $o0[0], '... compiling lock.c again');
ok($o0[1] && $o1[1] == $o0[1], '... and not heapam.c');
is(json("$build/install/example/flexlock-build.json")->{patches}[0]{sha256},
	Digest::SHA::sha256_hex($v2), '... recording the new patch');
($out, $rc) = run($cmds[0]);
is($rc, 0, 'the example again') or diag($out);
is(json("$build/install/example/flexlock-build.json")->{patches}[0]{sha256}, $rec->{patches}[0]{sha256},
	'... recorded as before');
is(`git -C '$build/builds/example/src' rev-parse HEAD` =~ s/\s+//r, $rec->{commits}[0] =~ s/ .*//r,
	'... the same commit as the first time (fixed dates: the same patches give the same commits)');

# work of the user's in the build's tree is not thrown away
open(my $fh, '>>', "$build/builds/example/src/README.md") or die;
print $fh "a note of mine\n";
close $fh;
($out, $rc) = run($cmds[0]);
isnt($rc, 0, 'make build refuses a tree with work of yours in it');
like((said($out))[0] // '', qr/^flexlock: \S*builds\/example\/src has work of yours \(changes, or commits since make build made it\): git format-patch it into your patches/,
	'... saying what to do');
like(slurp("$build/builds/example/src/README.md"), qr/a note of mine\n\z/, '... and the work is still there');
system('git', '-C', "$build/builds/example/src", 'checkout', '-q', 'README.md') == 0 or die;

# the assertion-enabled twin
($out, $rc) = run("make build NAME=example PATCHES=docs/example-patch CASSERT=1");
is($rc, 0, 'CASSERT=1: the twin builds') or diag($out);
my $twin = -f "$build/install/example-cassert/flexlock-build.json" ? json("$build/install/example-cassert/flexlock-build.json") : {};
is($twin->{twin_of}, 'example', '... example-cassert, the twin of example');
is($twin->{base}, 'cassert', '... laid on cassert');
like(`'$build/install/example-cassert/bin/pg_config' --configure`, qr/--enable-cassert/, '... with assertions');

# make bench: the quick preset's A/B; shorter through the environment
my $runs = "$scratch/bench";
($out, $rc) = run($cmds[1], BENCH_OUT => $runs,
	BENCH_ARGS => '--duration 1 --warmup 0 --no-machine-profile --no-profile-holds');
is($rc, 0, "$cmds[1]: runs") or diag($out);
like($out, qr/^flexbench: \d+ runs \(3 workloads x 2 client counts x 2 reps x their builds\/variants\)/m,
	'... the quick preset: 3 workloads, 2 client counts, 2 reps');
my $summary = -f "$runs/summary.md" ? slurp("$runs/summary.md") : '';
like($summary, qr/^\| *1 \| *example\/stock \|[^\n]*patched\/stock/m, 'the summary compares example/stock with patched/stock');
like($summary, qr/^Build `example` is your own \(make build\): the patched build \(commit \w{12}\) with 0001-/m,
	'... and names the build\'s patch');
my $meta = json("$runs/meta.json");
is($meta->{builds}{example}{own}{patches}[0]{sha256}, $rec->{patches}[0]{sha256}, 'meta.json: the patch\'s checksum');
is_deeply($meta->{matrix}{variants}, ['stock'], '... stock only: a build of yours is its A/B with its base');

# make server, then its lock profile
($out, $rc) = run("$cmds[2] FRESH=1 SCALE=1");
is($rc, 0, "$cmds[2]: starts") or diag($out);
like($out, qr/^flexlock: server running: example build, variant stock/m, '... a server of the example build');
($out, $rc) = run('make pgbench SCRIPT=bench-scripts/workloads/tpcb-logged.sql CLIENTS=1 TIME=2');
is($rc, 0, 'make pgbench on it') or diag($out);
($out, $rc) = run(q{echo "SELECT item, detail FROM flexlock_report() WHERE section = 'hwlock';" | make psql});
is($rc, 0, 'flexlock_report() read with make psql') or diag($out);
# TPC-B-like: three UPDATEs and an INSERT; their RowExclusiveLocks, fast
# path on patched (84% of the acquisitions by the fast path), in the shared
# table on the example (21%: the AccessShareLocks)
my ($fp) = $out =~ /acquisitions\s*\|\s*fast path (\d+(?:\.\d+)?)%/;
ok(defined $fp && $fp < 50, "... a write transaction's relation locks leave the fast path (fast path " . ($fp // '?') . '%)')
  or diag($out);
($out, $rc) = run('make stop');
is($rc, 0, 'make stop');

# the same patch on vanilla
($out, $rc) = run("make build NAME=example-vanilla PATCHES=$example_file BASE=vanilla");
is($rc, 0, 'the example on vanilla builds') or diag($out);
is(json("$build/install/example-vanilla/flexlock-build.json")->{base}, 'vanilla', '... laid on vanilla');
($out, $rc) = run('make trace BUILD=example-vanilla WORKLOAD=select-only VARIANT=stock');
isnt($rc, 0, 'make trace refuses a build without the series');
like((said($out))[0] // '', qr/^flexbench: --build example-vanilla: the example-vanilla build has no lock_stats_trace/,
	'... saying why');

# make trace and make predict of the example
my $traces = "$top/results/" . `date -u +%F` =~ s/\s+//r . '-traces-example';
system('rm', '-rf', $traces);
($out, $rc) = run('make trace BUILD=example WORKLOAD=tpcb-logged VARIANT=stock TRACE_ARGS="--traced 50 --warmup 0"');
is($rc, 0, 'make trace BUILD=example') or diag($out);
ok(-f "$traces/tpcb-logged/stock/summary.json", "... into results/DATE-traces-example");
my $tmeta = -f "$traces/tpcb-logged/stock/meta.json" ? json("$traces/tpcb-logged/stock/meta.json") : {};
is($tmeta->{build}, 'example', '... traces of the example build');
is($tmeta->{own}{base}, 'patched', '... with its record');
($out, $rc) = run('make predict BUILD=example WORKLOAD=tpcb-logged CORES=2 CLIENTS=4');
is($rc, 0, 'make predict BUILD=example') or diag($out);
like($out, qr/^flexsim v[\d.]+: tpcb-logged, stock \(traces of stock on the example build, \Q$traces\E\/tpcb-logged\/stock\)/m,
	'... from the example\'s traces');
like($out, qr/^predicted tps = \d+  \(a prediction; /m, '... labelled a prediction, with the measured error');
system('rm', '-rf', $traces);

# make overhead: instructions against its base, exact (callgrind): a write
# transaction's relation locks through the shared table cost more
($out, $rc) = run('make overhead BUILD=example', OUT => "$scratch/overhead.md", N_SELECT => 1000, N_TPCB => 300);
is($rc, 0, 'make overhead BUILD=example') or diag($out);
my $oh = -f "$scratch/overhead.md" ? slurp("$scratch/overhead.md") : '';
like($oh, qr/^# Instructions per transaction: example against patched$/m, '... against patched');
like($oh, qr/^\| select \| 1000 \| \d+ \| \d+ \| [-+]\d+ /m, '... select-only');
my ($tpcb_diff) = $oh =~ /^\| tpcb \| 300 \| \d+ \| \d+ \| ([-+]\d+) /m;
cmp_ok($tpcb_diff // 0, '>', 500, '... TPC-B-like: more instructions on the example (' . ($tpcb_diff // '?') . ')');

# --- 3. the bundle --------------------------------------------------------------

($out, $rc) = run('make bundle', BUNDLE_BUILDS => 'patched example', BUNDLE_OUT => "$scratch/out");
is($rc, 0, 'make bundle of patched and example') or diag($out);
my ($tarball) = glob("$scratch/out/*.tar.xz");
ok($tarball && $tarball =~ /-patched-example\.tar\.xz$/, '... one tarball, named after its builds');
chmod 0644, $tarball if $tarball;
my $b1 = "$scratch/private/b";
mkdir "$scratch/private", 0700 or die;
mkdir $b1 or die;
($out, $rc) = run("tar -C '$b1' -xJf '$tarball'");
is($rc, 0, 'it unpacks where the servers\' user cannot enter') or diag($out);
my ($dir) = glob("$b1/flexlock-bundle-*");
is(json("$dir/bundle.json")->{own}{example}{patches}[0]{sha256}, $rec->{patches}[0]{sha256},
	'bundle.json: the example\'s record');
ok(-f "$dir/build/install/example/flexlock-build.json", '... which travels with the install');
# As root, the build tree hidden (a tmpfs over it, in a mount namespace of
# the run's own): the bundle must not reach back into it
my $ab = "'$dir/flexbench' run --workloads insert-10 --clients 1 --reps 2 --duration 1 --warmup 0 "
  . "--builds patched,example --no-machine-profile --no-profile-holds --out '$dir/ab'";
$ab = "unshare -m bash -c \"mount -t tmpfs none '$build' && ls -A '$build' | wc -l && $ab\"" if $root;
($out, $rc) = run($ab, PATH => '/usr/sbin:/usr/bin:/sbin:/bin');
is($rc, 0, 'the bundle runs its A/B' . ($root ? ', the build tree hidden' : '')) or diag($out);
like($out, qr/^0$/m, '... which is empty there') if $root;
my $s2 = -f "$dir/ab/summary.md" ? slurp("$dir/ab/summary.md") : '';
like($s2, qr/^\| *1 \| *example\/stock \|[^\n]*patched\/stock/m, '... example/stock against patched/stock');
is(json("$dir/ab/meta.json")->{builds}{example}{own}{base}, 'patched', '... the run names the example\'s base');

done_testing();
