# t/003_btree_descent.pl — btree_leaf_exclusive_descent.  With the GUC off
# and on: concurrent ordered and random inserts with page splits, then
# amcheck with heapallindexed and rootdescend on every index, and the btree
# counters that tell which protocol ran.  Then an injection point between
# the unlock and the relock of a leaf, with a concurrent split of that leaf
# forced inside the window: the insert must move right and land correctly.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('btree');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 30\nautovacuum = off\n");
$node->start;
$node->safe_psql('postgres',
	'CREATE EXTENSION flexlock; CREATE EXTENSION amcheck; CREATE EXTENSION injection_points;');

sub counter
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT value FROM flexlock_counters WHERE family = 'btree' AND counter = '$name'");
}

# Every btree index of the public tables passes the strictest amcheck.
# (ordered_t gets 200000 rows so that its index is tall enough for the
# rightmost-leaf fast path, which needs two levels above the leaves.)
sub check_indexes
{
	my ($what) = @_;
	my $n = $node->safe_psql('postgres', q{
		SELECT count(bt_index_parent_check(c.oid, heapallindexed => true, rootdescend => true))
		  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		  JOIN pg_am am ON am.oid = c.relam
		 WHERE am.amname = 'btree' AND c.relnamespace = 'public'::regnamespace});
	cmp_ok($n, '>=', 2, "$what: amcheck passes on every index ($n)");
}

for my $mode ('off', 'on')
{
	$node->safe_psql('postgres', qq{
		DROP TABLE IF EXISTS ordered_t, random_t;
		CREATE UNLOGGED TABLE ordered_t (id serial PRIMARY KEY, v int);
		CREATE UNLOGGED TABLE random_t (k int8, v int);
		CREATE INDEX random_t_k ON random_t (k);
		INSERT INTO ordered_t (v) SELECT 1 FROM generate_series(1, 200000);
		INSERT INTO random_t SELECT (random() * 1e9)::int8, 1 FROM generate_series(1, 20000);
		ALTER SYSTEM SET btree_leaf_exclusive_descent = $mode;
		SELECT pg_reload_conf();});
	$node->poll_query_until('postgres', 'SHOW btree_leaf_exclusive_descent', $mode);
	$node->safe_psql('postgres', 'SELECT flexlock_reset()');

	$node->pgbench(
		'--no-vacuum --client=8 --jobs=2 --transactions=400',
		0,
		[qr{processed: 3200/3200}],
		[qr{^$}],
		"concurrent ordered and random inserts, btree_leaf_exclusive_descent = $mode",
		{
			"003_ordered_$mode\@1" => 'INSERT INTO ordered_t (v) VALUES (1);',
			"003_random_$mode\@1" => "\\set k random(1, 1000000000)\nINSERT INTO random_t VALUES (:k, 1);",
		});
	is($node->safe_psql('postgres',
			'SELECT (SELECT count(*) FROM ordered_t) + (SELECT count(*) FROM random_t)'),
		'223200', "$mode: every row is there");
	check_indexes("leaf exclusive descent $mode");

	my $descents = counter('write_descents');
	my $relocks = counter('leaf_relocks');
	cmp_ok($descents, '>', 1000, "$mode: inserts descended ($descents write descents)");
	if ($mode eq 'off')
	{
		cmp_ok($relocks, '>=', $descents * 0.9,
			"off: (nearly) every write descent relocks its leaf ($relocks of $descents)");
	}
	else
	{
		cmp_ok($relocks, '<', $descents * 0.1,
			"on: leaves are locked exclusively on descent ($relocks relocks, $descents descents)");
	}
	cmp_ok(counter('fastpath_hits'), '>', 0, "$mode: ordered inserts use the rightmost-leaf fast path");
}

# --- a split inside the relock window -------------------------------------------
# Keys 100000 apart; the inserter descends to the leaf holding 50,000,000 and
# stops after unlocking it.  Another session then fills the leaf with keys
# below the inserter's, splitting it (more than once), so that the
# inserter's key now belongs to a page right of the one it holds a pin on.
$node->safe_psql('postgres', q{
	CREATE TABLE window_t (k int8);
	CREATE INDEX window_t_k ON window_t (k);
	INSERT INTO window_t SELECT g * 100000 FROM generate_series(1, 2000) g;
	SELECT flexlock_reset();});

my $s1 = $node->background_psql('postgres');
$s1->query_safe(q{
	SET btree_leaf_exclusive_descent = off;
	SELECT injection_points_set_local();
	SELECT injection_points_attach('btree-leaf-relock', 'wait');});
$s1->query_until(qr/inserting/, q{
	\echo inserting
	INSERT INTO window_t VALUES (50050000);
});
$node->wait_for_event('client backend', 'btree-leaf-relock');
pass('the inserter waits between unlocking and relocking the leaf');

$node->safe_psql('postgres',
	'INSERT INTO window_t SELECT 50000000 + g FROM generate_series(1, 3000) g');
$node->safe_psql('postgres', q{SELECT injection_points_wakeup('btree-leaf-relock')});
$s1->query_safe(q{SELECT injection_points_detach('btree-leaf-relock')});
$s1->quit;

cmp_ok(counter('relock_moverights'), '>=', 1,
	'the relocked leaf had split: the insert moved right');
is($node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM window_t WHERE k = 50050000}),
	'1', 'the key inserted across the split is found through the index');
check_indexes('after the split in the relock window');

$node->stop;
done_testing();
