#!/usr/bin/perl
# Writes a MaxMind DB file with MaxMind's own writer (Debian's libmaxmind-db-writer-perl), for the geoip
# tests: write-mmdb.pl DATABASE-TYPE OUT.mmdb, with the networks on standard input as JSON,
# [{"network": "127.0.0.2/32", "record": {...}}, ...]. Record fields get the types GeoIP2's City,
# Country and ASN databases give them (MaxMind's GeoIP2 database documentation).
use strict;
use warnings;
use JSON::PP;
use MaxMind::DB::Writer::Tree;

my ($type, $out) = @ARGV;
die "usage: write-mmdb.pl DATABASE-TYPE OUT.mmdb < networks.json\n" unless defined $out;

my %types = (
  city                           => 'map',
  continent                      => 'map',
  country                        => 'map',
  registered_country             => 'map',
  location                       => 'map',
  postal                         => 'map',
  names                          => 'map',
  subdivisions                   => [ 'array', 'map' ],
  geoname_id                     => 'uint32',
  code                           => 'utf8_string',
  iso_code                       => 'utf8_string',
  time_zone                      => 'utf8_string',
  latitude                       => 'double',
  longitude                      => 'double',
  accuracy_radius                => 'uint16',
  is_in_european_union           => 'boolean',
  autonomous_system_number       => 'uint32',
  autonomous_system_organization => 'utf8_string',
);

my $tree = MaxMind::DB::Writer::Tree->new(
  ip_version    => 6,
  record_size   => 28,
  database_type => $type,
  languages     => ['en'],
  description   => { en => "clusterdns test database ($type)" },
  # Loopback addresses are the test clients: keep them.
  remove_reserved_networks => 0,
  alias_ipv6_to_ipv4       => 1,
  # Names in other languages are utf8_string too.
  map_key_type_callback => sub { $types{ $_[0] } // 'utf8_string' },
);

local $/;
my $networks = JSON::PP->new->utf8->decode(<STDIN>);
for my $n (@$networks) {
  $tree->insert_network($n->{network}, $n->{record});
}
open my $fh, '>:raw', $out or die "cannot write $out: $!\n";
$tree->write_tree($fh);
close $fh or die "cannot write $out: $!\n";
