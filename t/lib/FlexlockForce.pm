# t/lib/FlexlockForce.pm — what the tests use to force an interleaving
# rather than wait for chance to bring it: server processes stopped with
# SIGSTOP (a stopped process is what a descheduled one looks like to the
# others, and it stays where it is until SIGCONT), and an LWLock of the
# server held for as long as the test needs (test module flexlock_inject).
#
#   proc_state($pid)        the state letter of /proc/PID/stat ('' if gone)
#   wait_stopped($pid)      wait until the process is stopped (1), or the
#                           default timeout passed (0)
#   stop_at_rest($node, $backend_type, $wait_event)
#                           stop the process of that backend type while it
#                           sleeps in that wait event (the WAL writer in
#                           'WalWriterMain', say) and return its pid: it
#                           then holds no lock and is in no critical section,
#                           so it cannot take part in what the test forces
#                           until it is continued
#   hold_lwlock($node, $name)
#                           a session that holds the individual LWLock of
#                           that name ('WALWrite') exclusively, stopped at
#                           the injection point flexlock-inject-lwlock-held;
#                           needs the extensions flexlock_inject and
#                           injection_points in database postgres
#   release_lwlock($node, $session)
#                           let it go: returns once the release is done
use strict;
use warnings FATAL => 'all';

package FlexlockForce;

use Exporter 'import';
use PostgreSQL::Test::Utils;
use Time::HiRes qw(usleep);

our @EXPORT = qw(proc_state wait_stopped stop_at_rest hold_lwlock release_lwlock);

sub proc_state
{
	my ($pid) = @_;
	open my $fh, '<', "/proc/$pid/stat" or return '';
	my $stat = <$fh>;
	close $fh;
	return $stat =~ /\) (\S)/ ? $1 : '';
}

sub wait_stopped
{
	my ($pid) = @_;
	my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
	while (time < $deadline)
	{
		return 1 if proc_state($pid) =~ /^[Tt]$/;
		usleep(10_000);
	}
	return 0;
}

# A process's wait event is set just before it sleeps and cleared just after
# (pgstat_report_wait_start/end around WaitLatch), and a stopped process
# cannot change it.  So a process seen in the wait event *after* it stopped
# was stopped inside that sleep: if it is seen elsewhere, it is continued and
# stopped again once it is back in the sleep.
sub stop_at_rest
{
	my ($node, $backend_type, $wait_event) = @_;
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = '$backend_type'");
	die "no $backend_type process" unless $pid =~ /^\d+$/;
	my $in_sleep = "SELECT wait_event IS NOT DISTINCT FROM '$wait_event' FROM pg_stat_activity WHERE pid = $pid";
	for (1 .. 100)
	{
		$node->poll_query_until('postgres', $in_sleep)
		  or die "$backend_type (pid $pid) never sleeps in $wait_event";
		kill 'STOP', $pid;
		wait_stopped($pid) or die "$backend_type (pid $pid) does not stop";
		return $pid if $node->safe_psql('postgres', $in_sleep) eq 't';
		kill 'CONT', $pid;
	}
	die "$backend_type (pid $pid) could not be stopped in $wait_event";
}

sub hold_lwlock
{
	my ($node, $name) = @_;
	my $h = $node->background_psql('postgres');
	# once without the point attached: the lookups are done before it holds
	$h->query_safe("SELECT flexlock_inject_hold_lwlock('$name')");
	$h->query_safe(q{SELECT injection_points_set_local();
		SELECT injection_points_attach('flexlock-inject-lwlock-held', 'wait')});
	$h->query_until(qr/holding/, "\\echo holding\nSELECT flexlock_inject_hold_lwlock('$name');\n");
	$node->wait_for_event('client backend', 'flexlock-inject-lwlock-held');
	return $h;
}

sub release_lwlock
{
	my ($node, $h) = @_;
	$node->safe_psql('postgres', q{SELECT injection_points_wakeup('flexlock-inject-lwlock-held')});
	$h->query_safe('SELECT 1');    # after the hold's statement: released
	$h->query_safe(q{SELECT injection_points_detach('flexlock-inject-lwlock-held')});
	$h->quit;
	return;
}

1;
