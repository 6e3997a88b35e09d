// A small zone file's text for end-to-end tests: the apex SOA and NS, the name server's address, and
// the records a test needs.

/** `origin` without its final dot; `records` are zone-file lines with names relative to it. */
export function zoneText(origin: string, ...records: string[]): string {
  return [
    `$ORIGIN ${origin}.`,
    `@ 60 IN SOA ns.${origin}. hostmaster.${origin}. 1 60 60 60 60`,
    "@ 60 IN NS ns",
    "ns 60 IN A 192.0.2.53",
    ...records,
    "",
  ].join("\n");
}
