# t/021_statements_exact.pl — the figures of flexlock_statements are exact
# (issue 41): each case shows one way they were wrong.
#
# 1. An entry keeps 24 lock rows; what does not fit goes to an overflow row.
#    The overflow row must keep its kinds apart: a heavyweight lock wait
#    that lands there is a heavyweight lock wait, not an LWLock sleep.  The
#    entry is filled first by a call that takes 32 individual LWLocks (test
#    module flexlock_inject), then a second call of the same statement waits
#    300 ms for an advisory lock, a row the entry has no room for.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('exact');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'flexlock'\nautovacuum = off\nmax_connections = 20\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock; CREATE EXTENSION flexlock_inject;');

# --- 1. the overflow row keeps heavyweight waits apart --------------------------

my @individual = qw(OidGen XidGen SInvalWrite ControlFile MultiXactGen RelCacheInit
  CheckpointerComm TwoPhaseState TablespaceCreate BtreeVacuum AddinShmemInit Autovacuum
  AutovacuumSchedule SyncScan RelationMapping NotifyQueue SerializableXactHash
  SerializableFinishedList SerializablePredicateList SyncRep BackgroundWorker
  DynamicSharedMemoryControl AutoFile ReplicationSlotAllocation ReplicationSlotControl
  CommitTs ReplicationOrigin MultiXactTruncation LogicalRepWorker XactTruncation
  WrapLimitsVacuum NotifyQueueTail);
$node->safe_psql('postgres', qq{
CREATE FUNCTION regress_rows(wait int) RETURNS int LANGUAGE plpgsql AS \$\$
BEGIN
  IF wait = 0 THEN
    PERFORM flexlock_inject_hold_lwlock(name)
       FROM unnest(ARRAY['@{[ join "', '", @individual ]}']) name;
  ELSE
    PERFORM pg_advisory_xact_lock(wait);
  END IF;
  RETURN wait;
END \$\$;
SELECT flexlock_reset();
SELECT regress_rows(0);
});
my $qid = $node->safe_psql('postgres', q{SELECT flexlock_query_id('SELECT regress_rows(0)')});
is( $node->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE lock NOT IN ('other locks', 'all sites')) || ' ' || bool_or(lock = 'other locks')
		  FROM flexlock_statement_locks WHERE queryid = $qid AND NOT commit}),
	'23 true', '1: the first call filled the entry: 23 lock rows, and an overflow row');

my $holder = $node->background_psql('postgres');
$holder->query_safe('SELECT pg_advisory_lock(41)');
my $waiter = $node->background_psql('postgres');
my $wpid = $waiter->query_safe('SELECT pg_backend_pid()');
$waiter->query_until(qr/waiting/, "\\echo waiting\nSELECT regress_rows(41);\n");
$node->poll_query_until('postgres',
	"SELECT wait_event = 'advisory' FROM pg_stat_activity WHERE pid = $wpid")
  or die 'the second call did not wait for the advisory lock';
usleep(300_000);
$holder->query_safe('SELECT pg_advisory_unlock(41)');
like($waiter->query_safe('SELECT 1'), qr/1$/, '1: the second call got the advisory lock');
my ($hw_waits, $hw_ms, $lw_sleeps) = split /\|/, $node->safe_psql('postgres', qq{
	SELECT hwlock_waits, hwlock_wait_time_ms, lwlock_sleeps FROM flexlock_statements WHERE queryid = $qid});
is($hw_waits, 1, '1: the advisory lock wait, in the overflow row, counts as a heavyweight lock wait');
cmp_ok($hw_ms, '>=', 300, "... of at least 300 ms ($hw_ms ms)");
is($lw_sleeps, $node->safe_psql('postgres', qq{
	SELECT coalesce(sum(sleeps), 0) FROM flexlock_statement_locks WHERE queryid = $qid AND NOT commit AND kind = 'lwlock'}),
	'1: the LWLock sleeps are those of the LWLock rows');
$_->quit for ($holder, $waiter);

$node->stop;
done_testing();
