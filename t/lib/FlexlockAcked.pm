# t/lib/FlexlockAcked.pm — clients whose commits are acknowledged, for the
# crash tests (t/005, t/007): each client is a psql running a script that
# prints "ack CLIENT N" after each commit; after an immediate stop, every
# acknowledged commit must be there.
package FlexlockAcked;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Utils;

our @EXPORT = qw(start_clients stop_clients read_acks client_errors new_panics lost_acks);

# start_clients($node, $prefix, $nclients, \&script, $appname):
# writes $prefix-CLIENT.sql from script->(CLIENT) and starts a psql on each,
# its output in $prefix-CLIENT.out (and .out.err); with $appname, a client's
# application_name is $appname followed by its number.  Returns (\@handles,
# \@outputs).
sub start_clients
{
	my ($node, $prefix, $nclients, $script, $appname) = @_;
	my (@h, @out);
	for my $client (0 .. $nclients - 1)
	{
		my $file = "$prefix-$client.sql";
		open my $fh, '>', $file or die "$file: $!";
		print $fh $script->($client);
		close $fh;
		push @out, "$prefix-$client.out";
		my $connstr = $node->connstr('postgres');
		$connstr .= " application_name=$appname$client" if defined $appname;
		push @h,
		  IPC::Run::start(
			[ 'psql', '--no-psqlrc', '--dbname' => $connstr, '--file' => $file ],
			'>' => $out[-1],
			'2>' => "$out[-1].err");
	}
	return (\@h, \@out);
}

# stop_clients($node, \@handles): stop the server in immediate mode (not
# failing if it already crashed by itself: callers check its log) and reap the
# clients, whose psql fails as the server goes away.
sub stop_clients
{
	my ($node, $handles) = @_;
	$node->stop('immediate', fail_ok => 1);
	$_->finish for @$handles;
	return;
}

# read_acks(\@outputs): the acknowledged commits, as [client, n] pairs.
sub read_acks
{
	my ($outputs) = @_;
	my @acks;
	for my $f (@$outputs)
	{
		for (split /\n/, slurp_file($f))
		{
			push @acks, [ $1, $2 ] if /^ack (\d+) (\d+)$/;
		}
	}
	return @acks;
}

# client_errors(\@outputs): what the clients printed on stderr, but for
# losing their connection, the only error a client may see.
sub client_errors
{
	my ($outputs) = @_;
	return map {
		grep { !/server closed the connection|connection to server was lost|no connection to the server|terminat|^\s*(This probably|before or while)/ }
		  split /\n/, slurp_file("$_.err")
	} @$outputs;
}

# new_panics($node, $offset): lines of the server log since $offset that say
# the server crashed by itself.
sub new_panics
{
	my ($node, $offset) = @_;
	return grep { /PANIC|TRAP|terminated by signal/ }
	  split /\n/, slurp_file($node->logfile, $offset);
}

# lost_acks($node, \%acked, $sql): the keys of %acked ("CLIENT/N") that $sql,
# which returns client || '/' || n of the rows present, does not return.
sub lost_acks
{
	my ($node, $acked, $sql) = @_;
	my %present = map { $_ => 1 } split /\n/, $node->safe_psql('postgres', $sql);
	return grep { !$present{$_} } sort keys %$acked;
}

1;
