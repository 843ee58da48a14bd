# t/008_stats_owner_change.pl — per-process lock statistics across a change
# of a slot's owner.  A lock statistics slot belongs to a PGPROC, and the
# next process to take that PGPROC takes the slot.  Two readers must not mix
# the counts of two owners:
#
# - flexlock_backends(pid) reads a slot's header, then its counters.  If the
#   owner changes in between, the copy is of the new owner's counters and must
#   be thrown away, not shown under the old owner's pid.
# - flexlock_reset() copies every slot's counters as the baseline.  A process
#   that takes a slot after its baseline was copied must be counted from the
#   time it took the slot, not from the previous owner's baseline, whatever
#   the clocks say.
#
# Both interleavings are forced with injection points in the extension
# (flexlock-read-slot, flexlock-reset-copied).  The server has
# max_connections = 3 and no other process with a backend PGPROC, so with
# three sessions connected the PGPROC that one of them gives back is the only
# free one, and the next connection takes it.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('owner');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
max_connections = 3
superuser_reserved_connections = 0
reserved_connections = 0
autovacuum = off
max_worker_processes = 0
});
$node->start;

plan skip_all => 'injection points not supported by this build'
  unless $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_available_extensions WHERE name = 'injection_points'") == 1;

$node->safe_psql('postgres', 'CREATE EXTENSION flexlock; CREATE EXTENSION injection_points;');

# Wait until the PGPROC of an exiting backend is back on the free list, the
# only entry there: a connection fails ("too many clients") until then, and
# a successful one takes that PGPROC and puts it back.
sub wait_free_slot
{
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my ($rc) = $node->psql('postgres', 'SELECT 1');
		return 1 if $rc == 0;
		usleep(100_000);
	}
	return 0;
}

# A session in the one free PGPROC.  The probe of wait_free_slot() took it
# and gives it back after its psql has gone (ProcKill): until then a new
# connection is refused with "too many clients", so try again.
sub connect_free_slot
{
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		my $s = eval { $node->background_psql('postgres', timeout => 20) };
		return $s if $s;
		note("connection refused, once more: $@");
		usleep(200_000);
	}
	die 'no free PGPROC';
}

# Wait until $sql, asked through session $s, returns 't'.
sub wait_for
{
	my ($s, $sql) = @_;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return 1 if $s->query_safe($sql) eq 't';
		usleep(100_000);
	}
	return 0;
}

# XidGen exclusive acquisitions of one process, as flexlock_backends shows
# them (0 if the tranche has no row).
sub xidgen_of
{
	my ($s, $pid) = @_;
	return $s->query_safe(
		"SELECT coalesce(sum(acquire_exclusive), 0) FROM flexlock_backends($pid) WHERE tranche = 'XidGen'"
	);
}

# --- a reader of flexlock_backends(A) meets A's slot changing owner ---------
#
# R asks for A's rows and stops between A's slot header and its counters.
# With R, A and F connected, every PGPROC is taken: A exits, B takes A's.
# B assigns XIDs.  Then R goes on: A is gone, so R must say so, not show B's
# counts under A's pid.
{
	my $r = $node->background_psql('postgres', on_error_stop => 0);
	my $a = $node->background_psql('postgres');
	my $rpid = $r->query_safe('SELECT pg_backend_pid()');
	my $apid = $a->query_safe('SELECT pg_backend_pid()');
	$a->query_safe('SELECT txid_current()');

	$r->query_safe('SELECT injection_points_set_local()');
	$r->query_safe(q{SELECT injection_points_attach('flexlock-read-slot', 'wait')});
	my $log_offset = -s $node->logfile;
	$r->query_until(qr/reading/, qq{
\\echo reading
CREATE TABLE r_rows AS SELECT count(*) AS n FROM flexlock_backends($apid);
});
	my $f = $node->background_psql('postgres');
	ok( wait_for($f,
			"SELECT wait_event = 'flexlock-read-slot' FROM pg_stat_activity WHERE pid = $rpid"),
		'R stops between the header and the counters of A\'s slot');
	$a->quit;
	ok(wait_free_slot(), 'A has exited and given its PGPROC back');
	my $b = connect_free_slot();
	my $bpid = $b->query_safe('SELECT pg_backend_pid()');
	$b->query_safe('SELECT txid_current()') for 1 .. 20;
	cmp_ok(xidgen_of($f, $bpid), '>=', 20, 'B assigned 20 XIDs');

	$f->query_safe(q{SELECT injection_points_detach('flexlock-read-slot')});
	$f->query_safe(q{SELECT injection_points_wakeup('flexlock-read-slot')});
	# psql runs R's commands in order: "done" comes after the SELECT
	$r->query_until(qr/done/, "\\echo done\n");
	# (R's error is in the log before psql sees it)
	like(
		slurp_file($node->logfile, $log_offset),
		qr/ERROR:  no server process with PID $apid has lock statistics/,
		'a copy that straddles the change of owner is thrown away: A is gone');
	is($f->query_safe(q{SELECT to_regclass('r_rows') IS NULL}),
		't', 'no rows of B under A\'s pid');
	$r->quit;
	$b->quit;
	$f->quit;
}

# --- flexlock_reset() meets a slot changing owner ---------------------------
#
# R resets and stops after copying the baselines, before stamping the reset
# time.  A, whose baseline has been copied, assigns 200 XIDs and exits; B
# takes A's slot and assigns 5.  B's row must count B's 5, not A's 200 too.

# (every PGPROC free again)
$node->restart;
{
	my $r = $node->background_psql('postgres');
	my $a = $node->background_psql('postgres');
	my $rpid = $r->query_safe('SELECT pg_backend_pid()');
	my $apid = $a->query_safe('SELECT pg_backend_pid()');

	$r->query_safe('SELECT injection_points_set_local()');
	$r->query_safe(q{SELECT injection_points_attach('flexlock-reset-copied', 'wait')});
	$r->query_until(qr/resetting/, q{
\echo resetting
SELECT flexlock_reset() IS NOT NULL;
});
	my $f = $node->background_psql('postgres');
	ok( wait_for($f,
			"SELECT wait_event = 'flexlock-reset-copied' FROM pg_stat_activity WHERE pid = $rpid"),
		'R stops after copying the baselines');
	$a->query_safe('SELECT txid_current()') for 1 .. 200;
	$a->quit;
	ok(wait_free_slot(), 'A has exited and given its PGPROC back');
	my $b = connect_free_slot();
	my $bpid = $b->query_safe('SELECT pg_backend_pid()');
	$b->query_safe('SELECT txid_current()') for 1 .. 5;

	$f->query_safe(q{SELECT injection_points_detach('flexlock-reset-copied')});
	$f->query_safe(q{SELECT injection_points_wakeup('flexlock-reset-copied')});
	$r->quit;

	my $bx = xidgen_of($f, $bpid);
	ok($bx >= 5 && $bx < 200,
		"B, which took A's slot after its baseline was copied, is counted from its own start ($bx XidGen acquisitions)");
	# and the all-process view counts everything since the baseline: A's
	# 200 and B's 5 (and whatever else assigned XIDs)
	cmp_ok(
		$f->query_safe(
			q{SELECT acquire_exclusive FROM flexlock_lwlocks WHERE tranche = 'XidGen'}),
		'>=', 205, 'the sum over all processes keeps A\'s counts since the reset');
	$b->quit;
	$f->quit;
}

$node->stop;
done_testing();
