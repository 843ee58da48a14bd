#!/usr/bin/perl
# scripts/variant-check.pl CONF OUTDIR — the check that a variant config took
# effect, as one test for each kind of suite that runs with it.
#
# CONF is a file of variants/; `make check` appends it to every test server's
# postgresql.conf (TEMP_CONFIG) and adds the test written here to each suite
# it runs with CONF, so that a suite whose servers did not get the settings
# fails instead of testing stock PostgreSQL.  The test compares with the
# server every setting the file makes, other than the harness's own
# flexlock_test.* keys but with flexlock_test.variant (the file reached the
# server at all): a setting the server does not have (a misspelled name with
# a dot becomes a placeholder, silently) or a value other than the file's
# (TEMP_CONFIG not passed on, a later line overriding it) fails with one
# line naming each.  Values are compared as SHOW prints them, so a file
# writes them that way (128MB, not 131072kB).
#
# Written to OUTDIR:
#   check.sql                      the check: a DO block (also for TAP: t/variant/)
#   sql/flexlock_variant.sql       } pg_regress (regress, amcheck, sql): psql
#   expected/flexlock_variant.out  } echoes the input and DO prints nothing
#   specs/flexlock_variant.spec    } pg_isolation_regress (isolation)
#   expected-iso/flexlock_variant.out }
use strict;
use warnings FATAL => 'all';

use File::Path qw(make_path);

my ($conf, $out) = @ARGV;
die "usage: variant-check.pl CONF OUTDIR\n" unless defined $out && -f $conf;
my ($name) = $conf =~ m{([^/]+)\.conf$} or die "variant-check.pl: $conf is not a .conf file\n";

# The settings of the file, in postgresql.conf's syntax (name = value or
# name value, a value quoted with '' or bare, # comments); the last of a
# name wins, as in the server.
my (%set, @order);
open my $fh, '<', $conf or die "$conf: $!\n";
while (my $line = <$fh>)
{
	chomp $line;
	next if $line =~ /^\s*(#.*)?$/;
	my ($guc, $value);
	if ($line =~ /^\s*([A-Za-z_][\w.\$]*)\s*=?\s*'((?:[^'\\]|''|\\.)*)'\s*(#.*)?$/)
	{
		($guc, $value) = ($1, $2);
		$value =~ s/''/'/g;
		$value =~ s/\\(.)/$1/g;
	}
	elsif ($line =~ /^\s*([A-Za-z_][\w.\$]*)\s*=?\s*([^\s'#]+)\s*(#.*)?$/)
	{
		($guc, $value) = ($1, $2);
	}
	else
	{
		die "variant-check.pl: $conf line $.: cannot read '$line'\n";
	}
	$guc = lc $guc;
	next if $guc =~ /^flexlock_test\./ && $guc ne 'flexlock_test.variant';
	push @order, $guc unless exists $set{$guc};
	$set{$guc} = $value;
}
close $fh;
die "variant-check.pl: $conf does not set flexlock_test.variant\n"
  unless exists $set{'flexlock_test.variant'};

sub lit { my ($s) = @_; $s =~ s/'/''/g; return "'$s'"; }

my $values = join ",\n", map { '      (' . lit($_) . ', ' . lit($set{$_}) . ')' } @order;
my $check = <<"EOF";
-- flexlock: variants/$name.conf took effect on this server (written by
-- scripts/variant-check.pl): each setting it makes, as the server has it.
DO \$\$
DECLARE
  r record;
  bad text[] := ARRAY[]::text[];
BEGIN
  FOR r IN SELECT * FROM (VALUES
$values) AS f(name, value)
  LOOP
    IF r.name NOT LIKE 'flexlock\\_test.%'
       AND NOT EXISTS (SELECT FROM pg_settings s WHERE s.name = r.name) THEN
      bad := bad || format('%s is not a setting of this server', r.name);
    ELSIF current_setting(r.name, true) IS DISTINCT FROM r.value THEN
      bad := bad || format('%s is %s, the file sets %s', r.name,
                           coalesce(current_setting(r.name, true), 'not set'), r.value);
    END IF;
  END LOOP;
  IF cardinality(bad) > 0 THEN
    RAISE EXCEPTION 'variants/$name.conf did not take effect: %', array_to_string(bad, '; ');
  END IF;
END
\$\$;
EOF

# isolationtester prints a step's SQL: one line keeps that simple
(my $oneline = $check) =~ s/^--.*\n//mg;
$oneline =~ s/\s*\n\s*/ /g;
$oneline =~ s/\s+$//;
my $spec = <<"EOF";
# flexlock: variants/$name.conf took effect on this server (written by
# scripts/variant-check.pl)
session s
step check { $oneline }
EOF
my $spec_out = <<"EOF";
Parsed test spec with 1 sessions

starting permutation: check
step check: $oneline
EOF

sub write_file
{
	my ($path, $text) = @_;
	make_path($1) if $path =~ m{^(.*)/[^/]+$};
	open my $w, '>', $path or die "$path: $!\n";
	print $w $text;
	close $w or die "$path: $!\n";
}

write_file("$out/check.sql", $check);
write_file("$out/sql/flexlock_variant.sql", $check);
write_file("$out/expected/flexlock_variant.out", $check);
write_file("$out/specs/flexlock_variant.spec", $spec);
write_file("$out/expected-iso/flexlock_variant.out", $spec_out);
