# t/variant/applied.pl — a variant config took effect on the servers of the
# TAP suite it runs with.  `make check` adds this file to the recovery tests
# it runs with a variant (PostgreSQL's prove, the same TEMP_CONFIG): a node
# made as theirs are (PostgreSQL::Test::Cluster appends TEMP_CONFIG to its
# postgresql.conf) runs the check scripts/variant-check.pl wrote for the
# variant (FLEXLOCK_VARIANT_CHECK), which fails naming each setting of the
# file the server does not have as the file sets it.
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $check = $ENV{FLEXLOCK_VARIANT_CHECK}
  or plan skip_all => 'FLEXLOCK_VARIANT_CHECK is not set (make check sets it)';
my $sql = slurp_file($check);

my $node = PostgreSQL::Test::Cluster->new('variant');
$node->init;
$node->start;
my ($rc, $out, $err) = $node->psql('postgres', $sql, on_error_stop => 1);
is($rc, 0, "the settings of the variant config are the server's (TEMP_CONFIG " . ($ENV{TEMP_CONFIG} // "not set") . ")")
  or diag($err);
$node->stop;
done_testing();
