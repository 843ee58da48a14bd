# t/003_btree_descent.pl — btree_leaf_exclusive_descent.  With the GUC off
# and on: concurrent ordered and random inserts with page splits, then
# amcheck with heapallindexed and rootdescend on every index, and the btree
# counters that tell which protocol ran.  Then an injection point between
# the unlock and the relock of a leaf, with a concurrent split of that leaf
# forced inside the window: the insert must move right and land correctly.
# Last, inserts queued on a rightmost leaf held locked: the counters of waits
# by mode and of wakeups per release of the leaf.
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

# --- inserts queued on a locked rightmost leaf ----------------------------------
# H stops with the rightmost leaf of ordered_t locked exclusively (injection
# point at the end of its descent).  W1 and W2, whose rightmost-leaf cache
# points at that leaf, find it locked (fast path busy), descend, and sleep
# for the leaf: exclusively with the stock protocol, in share mode with
# exclusive descent off.  Then H goes on.  The two protocols differ in who
# the release of a leaf wakes: a share-mode queue is woken at once by one
# release, an exclusive queue one process per release.  This is what the
# leaf counters must show.  With share descent each then trades its share
# lock for an exclusive one; W2 waits between the two (injection point
# btree-leaf-relock) until W1's insert is done, so that W1 sleeps for its
# relock at most once, behind W2's share lock (without the wait W2 could
# take the leaf exclusively between W1's wakeup and its retry, and W1 sleep
# twice).
sub leaf_queue
{
	my ($mode) = @_;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET btree_leaf_exclusive_descent = $mode; SELECT pg_reload_conf();");
	$node->poll_query_until('postgres', 'SHOW btree_leaf_exclusive_descent', $mode);

	my $m = $node->background_psql('postgres');
	my $h = $node->background_psql('postgres');
	my @w = map { $node->background_psql('postgres') } 1 .. 2;
	# each waiter's next insert takes the fast path: its cache points at the
	# rightmost leaf
	$_->query_safe('INSERT INTO ordered_t (v) VALUES (2)') for @w;
	my @wpid = map { $_->query_safe('SELECT pg_backend_pid()') } @w;
	$m->query_safe('SELECT flexlock_reset()');

	$h->query_safe(q{
		SELECT injection_points_set_local();
		SELECT injection_points_attach('btree-leaf-locked', 'wait');});
	if ($mode eq 'off')
	{
		$w[1]->query_safe(q{
			SELECT injection_points_set_local();
			SELECT injection_points_attach('btree-leaf-relock', 'wait');});
	}
	$h->query_until(qr/inserting/, q{
		\echo inserting
		INSERT INTO ordered_t (v) VALUES (3);
	});
	$node->wait_for_event('client backend', 'btree-leaf-locked');
	for my $i (0, 1)
	{
		$w[$i]->query_until(qr/inserting/, q{
			\echo inserting
			INSERT INTO ordered_t (v) VALUES (4);
		});
		$node->poll_query_until('postgres',
			"SELECT wait_event = 'BufferContent' FROM pg_stat_activity WHERE pid = $wpid[$i]")
		  or die "leaf exclusive descent $mode: inserter $i did not wait for the leaf";
	}
	pass("leaf exclusive descent $mode: two inserters wait for the locked rightmost leaf");

	$m->query_safe(q{SELECT injection_points_wakeup('btree-leaf-locked')});
	$h->query_safe(q{SELECT injection_points_detach('btree-leaf-locked')});
	is($w[0]->query_safe('SELECT 1'), '1', "leaf exclusive descent $mode: a waiting insert finished");
	if ($mode eq 'off')
	{
		# (or W2 is done: it never relocked, which the counters then show)
		$node->poll_query_until('postgres',
			"SELECT wait_event = 'btree-leaf-relock' OR state = 'idle' FROM pg_stat_activity WHERE pid = $wpid[1]")
		  or die 'W2 neither waits before its relock nor finished';
		$m->query_safe(q{SELECT injection_points_wakeup('btree-leaf-relock')})
		  if $m->query_safe("SELECT state FROM pg_stat_activity WHERE pid = $wpid[1]") ne 'idle';
	}
	is($w[1]->query_safe('SELECT 1'), '1', "leaf exclusive descent $mode: a waiting insert finished");
	$_->quit for ($m, $h, @w);

	my %c = map { $_ => counter($_) }
	  qw(fastpath_busy fastpath_misses leaf_waits_shared leaf_waits_exclusive leaf_releases_waking
	  leaf_release_wakeups);
	note("leaf exclusive descent $mode: " . join(', ', map { "$_ $c{$_}" } sort keys %c));
	is("$c{fastpath_busy}/$c{fastpath_misses}", '2/2',
		"$mode: both fast-path misses found the cached leaf locked");
	if ($mode eq 'on')
	{
		is("$c{leaf_waits_exclusive}/$c{leaf_waits_shared}", '2/0',
			'on: both inserters slept for the leaf in exclusive mode, none in share mode');
		is("$c{leaf_releases_waking}/$c{leaf_release_wakeups}", '2/2',
			'on: each release of the leaf woke one exclusive waiter');
	}
	else
	{
		# (2, or 3 if W2 ran only after W1 had relocked the leaf
		# exclusively, and slept in share mode once more)
		cmp_ok($c{leaf_waits_shared}, '>=', 2, 'off: both inserters slept for the leaf in share mode');
		cmp_ok($c{leaf_waits_exclusive}, '<=', 1,
			'off: W1 slept for its relock at most once (behind W2\'s share lock)');
		is($c{leaf_release_wakeups} - $c{leaf_releases_waking}, 1,
			'off: one release of the leaf woke both share-mode waiters at once');
	}
	is($node->safe_psql('postgres', 'SELECT count(*) FROM ordered_t WHERE v IN (2, 3, 4)'),
		5 * ($mode eq 'on' ? 1 : 2), "$mode: the queued inserts are all there");
}

$node->safe_psql('postgres', 'DELETE FROM ordered_t WHERE v IN (2, 3, 4)');
leaf_queue('on');
leaf_queue('off');
check_indexes('after the queued inserts');

$node->stop;
done_testing();
