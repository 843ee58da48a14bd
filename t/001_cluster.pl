# t/001_cluster.pl — the TAP wiring: PostgreSQL::Test::Cluster from the
# cassert install runs a server as the unprivileged test user, pgbench drives
# it concurrently, and the result survives an immediate stop.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->start;

is($node->safe_psql('postgres', 'SHOW debug_assertions'),
	'on', 'tests run against an assertion-enabled build');
is($node->safe_psql('postgres',
		"SELECT current_setting('server_version_num')::int / 10000"),
	'18', 'the server is PostgreSQL 18');

# Concurrent increments of one row: every committed increment must be there.
$node->safe_psql('postgres',
	'CREATE TABLE counter (id int PRIMARY KEY, n bigint); INSERT INTO counter VALUES (1, 0);');
$node->pgbench(
	'--no-vacuum --client=4 --jobs=2 --transactions=250',
	0,
	[qr{processed: 1000/1000}],
	[qr{^$}],
	'concurrent increments of one row',
	{ '001_increment' => 'UPDATE counter SET n = n + 1 WHERE id = 1;' });

$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT n FROM counter'),
	'1000', 'all 1000 committed increments survive an immediate stop');

$node->stop;
done_testing();
