# t/023_statements_protocols.pl — flexlock_statements adds up under every
# protocol (issue 41): one session runs ten TPC-B-like transaction blocks and
# ten autocommit statements through the simple protocol, the extended one
# (psql's \bind: Parse, Bind, Execute, Sync each time) and prepared
# statements (psql 18's \parse once, then \bind_named: Bind and Execute of
# a named statement, as pgbench -M prepared sends them), and the simple one
# with flexlock.track = all.  Its role's rows then hold each of its
# backend's lock events once, counter by counter (flexlock_backends,
# flexlock_hwlock_backends), but for flexlock's own lock (the acquisition
# that wrote the last rows comes after them) and the statistics reports a
# backend makes while idle (tranches PgStats*), and each statement has its
# 10 calls.  (A session of psql, not pgbench: pgbench opens a connection of
# its own first, under the same role, whose connection start would be in
# the role's rows too.)
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('sums');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'flexlock'\nautovacuum = off\nmax_connections = 20\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock');
$node->command_ok([ 'pgbench', '-i', '-s', '1', '-q', '-d', $node->connstr('postgres') ],
	'pgbench tables');

my @stmts = (
	[ 'BEGIN', [] ],
	[ 'UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2', [ 'delta', 'aid' ] ],
	[ 'SELECT abalance FROM pgbench_accounts WHERE aid = $1', ['aid'] ],
	[ 'UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2', [ 'delta', 'tid' ] ],
	[ 'INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, 1, $2, $3, CURRENT_TIMESTAMP)',
		[ 'tid', 'aid', 'delta' ] ],
	[ 'END', [] ],
	[ 'SELECT count(*) FROM pgbench_branches WHERE bid > $1', ['tid'] ]);

for my $run ([ 'simple', 'top' ], [ 'extended', 'top' ], [ 'prepared', 'top' ], [ 'simple', 'all' ])
{
	my ($mode, $track) = @$run;
	my $role = "regress_$mode\_$track";
	$node->safe_psql('postgres', qq{
		CREATE ROLE $role SUPERUSER LOGIN;
		ALTER ROLE $role SET flexlock.track = '$track';});
	my $s = $node->background_psql('postgres', connstr => $node->connstr('postgres') . " user=$role");
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	if ($mode eq 'prepared')
	{
		$s->query_safe("$stmts[$_][0] \\parse regress_s$_") for 0 .. $#stmts;
	}
	for my $k (1 .. 10)
	{
		my %v = (aid => 1000 * $k + 7, tid => 1 + $k % 10, delta => $k - 5);
		for my $j (0 .. $#stmts)
		{
			my ($sql, $params) = @{ $stmts[$j] };
			my @vals = map { $v{$_} } @$params;
			if ($mode eq 'simple')
			{
				(my $lit = $sql) =~ s/\$(\d+)/$vals[$1 - 1]/g;
				$s->query_safe($lit);
			}
			elsif ($mode eq 'extended')
			{
				$s->query_safe("$sql \\bind @vals \\g");
			}
			else
			{
				$s->query_safe("\\bind_named regress_s$j @vals \\g");
			}
		}
	}
	# (a statement more: what the backend did while idle is charged)
	$s->query_safe('SELECT 1');
	my $diff = $node->safe_psql('postgres', qq{
		WITH b AS (
		  SELECT sum(acquire_shared) AS shared, sum(acquire_exclusive) AS exclusive,
				 sum(wait_until_free) AS wuf, sum(waits) AS sleeps
			FROM flexlock_backends($pid)
		   WHERE tranche <> 'flexlock_statements' AND tranche NOT LIKE 'PgStats%'),
		h AS (
		  SELECT sum(fastpath) AS fastpath, sum(shared_table) AS shared_table, sum(local) AS local,
				 sum(waits) AS waits
			FROM flexlock_hwlock_backends($pid)),
		s AS (
		  SELECT sum(acquisitions) FILTER (WHERE wait_event_type = 'LWLock' AND mode = 'shared') AS shared,
				 sum(acquisitions) FILTER (WHERE wait_event_type = 'LWLock' AND mode = 'exclusive') AS exclusive,
				 coalesce(sum(acquisitions) FILTER (WHERE wait_event_type = 'LWLock' AND mode = 'wait_until_free'), 0) AS wuf,
				 coalesce(sum(sleeps) FILTER (WHERE wait_event_type = 'LWLock'), 0) AS sleeps,
				 sum(fastpath) FILTER (WHERE wait_event_type = 'Lock') AS fastpath,
				 sum(shared_table) FILTER (WHERE wait_event_type = 'Lock') AS shared_table,
				 sum(acquisitions - fastpath - shared_table) FILTER (WHERE wait_event_type = 'Lock') AS local,
				 coalesce(sum(sleeps) FILTER (WHERE wait_event_type = 'Lock'), 0) AS waits
			FROM flexlock_statement_locks
		   WHERE userid = '$role'::regrole AND toplevel
			 AND wait_event <> 'flexlock_statements' AND wait_event NOT LIKE 'PgStats%')
		SELECT concat_ws(', ',
				 CASE WHEN s.shared IS DISTINCT FROM b.shared THEN format('shared %s/%s', s.shared, b.shared) END,
				 CASE WHEN s.exclusive IS DISTINCT FROM b.exclusive THEN format('exclusive %s/%s', s.exclusive, b.exclusive) END,
				 CASE WHEN s.wuf <> b.wuf THEN format('wait_until_free %s/%s', s.wuf, b.wuf) END,
				 CASE WHEN s.sleeps <> b.sleeps THEN format('sleeps %s/%s', s.sleeps, b.sleeps) END,
				 CASE WHEN s.fastpath IS DISTINCT FROM h.fastpath THEN format('fastpath %s/%s', s.fastpath, h.fastpath) END,
				 CASE WHEN s.shared_table IS DISTINCT FROM h.shared_table THEN format('shared_table %s/%s', s.shared_table, h.shared_table) END,
				 CASE WHEN s.local IS DISTINCT FROM h.local THEN format('local %s/%s', s.local, h.local) END,
				 CASE WHEN s.waits <> h.waits THEN format('waits %s/%s', s.waits, h.waits) END)
		  FROM b, h, s});
	is($diff, '', "-M $mode, track = $track: the rows add up to the backend's totals");
	is($node->safe_psql('postgres', qq{
		SELECT string_agg(calls::text, ' ' ORDER BY calls) FROM (
		  SELECT sum(calls) AS calls FROM flexlock_statements
		   WHERE userid = '$role'::regrole AND toplevel AND queryid <> 0 GROUP BY queryid) c}),
		'1 1 10 10 10 10 10 10 10', "-M $mode, track = $track: each of the 7 statements has its 10 calls (and SELECT pg_backend_pid(), SELECT 1 one)");
	$s->quit;
}

$node->stop;
done_testing();
