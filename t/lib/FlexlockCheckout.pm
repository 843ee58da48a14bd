# t/lib/FlexlockCheckout.pm — what the tests that run the lab's own
# commands share (t/015_readme_tour.pl, t/own/): a command run in the
# checkout as a user would type it, and a file read whole.
#
#   run($cmd, %env)   bash -c CMD in the checkout (FLEXLOCK_TOP), with %env
#                     added to the environment; its output (both streams)
#                     and exit status
#   slurp($file)      the file's contents
package FlexlockCheckout;

use strict;
use warnings FATAL => 'all';
use Exporter 'import';

our @EXPORT = qw(run slurp);

sub run
{
	my ($cmd, %env) = @_;
	my $top = $ENV{FLEXLOCK_TOP} or die "FLEXLOCK_TOP is not set";
	local %ENV = (%ENV, %env);
	open(my $fh, '-|', 'bash', '-c', qq{cd "\$1" && { $cmd\n} 2>&1}, 'bash', $top)
	  or die "bash: $!";
	local $/;
	my $out = <$fh> // '';
	close $fh;
	return ($out, $? >> 8);
}

sub slurp
{
	my ($f) = @_;
	open my $fh, '<', $f or die "$f: $!";
	local $/;
	my $t = <$fh>;
	close $fh;
	return $t;
}

1;
