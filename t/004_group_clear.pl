# t/004_group_clear.pl — procarray_group_clear off, on and always: TPC-B-like
# pgbench keeps its balance invariant, subtransactions (also overflowed) and
# prepared transactions commit and stay visible, the groupclear counters show
# which path ran, and nobody is left waiting in ProcArrayGroupUpdate.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('groupclear');
$node->init;
$node->append_conf('postgresql.conf',
	"max_connections = 30\nmax_prepared_transactions = 20\nautovacuum = off\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION flexlock');
$node->command_ok([ 'pgbench', '--initialize', '--scale=1', '--quiet', $node->connstr('postgres') ],
	'pgbench -i');
$node->safe_psql('postgres', 'CREATE TABLE sub (v int); CREATE TABLE prep (v int);');

sub gc
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT value FROM flexlock_counters WHERE family = 'groupclear' AND counter = '$name'");
}

my %script = (
	# the benchmark's TPC-B-like transaction (pgbench's built-in one)
	'tpcb' => slurp_file("$ENV{FLEXLOCK_TOP}/bench-scripts/workloads/tpcb-logged.sql"),
	# subtransactions: one kept, one rolled back, then 70 more that
	# overflow the PGPROC subxid cache
	'sub' => q{
BEGIN;
INSERT INTO sub VALUES (1);
SAVEPOINT a;
INSERT INTO sub VALUES (2);
RELEASE a;
SAVEPOINT b;
INSERT INTO sub VALUES (3);
ROLLBACK TO b;
COMMIT;
DO $$ BEGIN FOR i IN 1..70 LOOP BEGIN INSERT INTO sub VALUES (0); END; END LOOP; END $$;
},
	# two-phase commit
	'prep' => q{
BEGIN;
INSERT INTO prep VALUES (1);
PREPARE TRANSACTION 'p:client_id';
COMMIT PREPARED 'p:client_id';
},);

my $txns = 0;
for my $mode ('off', 'on', 'always')
{
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET procarray_group_clear = $mode; SELECT pg_reload_conf();");
	$node->poll_query_until('postgres', 'SHOW procarray_group_clear', $mode);
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');

	$node->pgbench(
		'--no-vacuum --client=8 --jobs=2 --transactions=150 -D scale=1',
		0,
		[qr{processed: 1200/1200}],
		[qr{^$}],
		"mode $mode: TPC-B-like, subtransactions and prepared transactions",
		{
			"004_tpcb_$mode\@6" => $script{tpcb},
			"004_sub_$mode\@1" => $script{sub},
			"004_prep_$mode\@1" => $script{prep},
		});
	$txns += 1200;

	is( $node->safe_psql('postgres', q{
			SELECT (SELECT sum(abalance) FROM pgbench_accounts) =
			       (SELECT sum(tbalance) FROM pgbench_tellers) AND
			       (SELECT sum(tbalance) FROM pgbench_tellers) =
			       (SELECT sum(bbalance) FROM pgbench_branches) AND
			       (SELECT sum(bbalance) FROM pgbench_branches) =
			       (SELECT coalesce(sum(delta), 0) FROM pgbench_history)}),
		't', "mode $mode: account, teller, branch and history balances agree");
	is( $node->safe_psql('postgres', q{
			SELECT count(*) FILTER (WHERE v = 3) = 0
			   AND count(*) FILTER (WHERE v = 1) = count(*) FILTER (WHERE v = 2)
			   AND count(*) FILTER (WHERE v = 0) = 70 * count(*) FILTER (WHERE v = 1)
			  FROM sub}),
		't', "mode $mode: subtransactions committed and rolled back as they should");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM pg_prepared_xacts'),
		'0', "mode $mode: no prepared transaction left behind");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'ProcArrayGroupUpdate'"),
		'0', "mode $mode: nobody is left waiting in ProcArrayGroupUpdate");

	my %c = map { $_ => gc($_) } qw(exclusive_acquires cond_acquired cond_failed groups_led
	  members_cleared follower_sleeps max_group_size);
	my $hist = $node->safe_psql('postgres',
		"SELECT sum(value) FROM flexlock_counters WHERE family = 'groupclear' AND counter LIKE 'group_size_%'");
	if ($mode eq 'off')
	{
		cmp_ok($c{exclusive_acquires}, '>=', 1000, 'off: XIDs cleared under an unconditional lock');
		is("$c{cond_acquired}/$c{cond_failed}/$c{groups_led}", '0/0/0',
			'off: no conditional acquisition, no group');
	}
	elsif ($mode eq 'on')
	{
		cmp_ok($c{cond_acquired}, '>', 0, 'on: conditional acquisitions succeed');
		is($c{exclusive_acquires}, '0', 'on: no unconditional acquisition');
		is($c{groups_led}, $c{cond_failed} - $c{follower_sleeps},
			'on: every failed conditional acquisition joined a group, as leader or follower');
	}
	else
	{
		cmp_ok($c{members_cleared}, '>=', 1000, 'always: every XID is cleared by a group');
		is("$c{exclusive_acquires}/$c{cond_acquired}/$c{cond_failed}", '0/0/0',
			'always: no other path taken');
		is($c{follower_sleeps}, $c{members_cleared} - $c{groups_led},
			'always: every member but the leader slept until cleared');
	}
	is($hist, $c{groups_led}, "mode $mode: the group size histogram counts every group");
	cmp_ok($c{max_group_size}, '<=', 30, "mode $mode: no group larger than the processes");
}

# After everything, a fresh snapshot sees every committed transaction.
is($node->safe_psql('postgres', 'SELECT count(*) FROM pgbench_history')
	  + $node->safe_psql('postgres', 'SELECT count(*) FROM prep')
	  + $node->safe_psql('postgres', 'SELECT count(*) FILTER (WHERE v = 1) FROM sub'),
	$txns, 'every committed transaction of the three modes is visible');

$node->stop;
done_testing();
