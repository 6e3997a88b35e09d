// How many octets a record can take on the wire at most: its size without name compression. A writer
// that fills messages up to a size (a zone transfer's, RFC 5936 2.2) counts with it and knows the
// message stays under the bound however little compression finds, without encoding twice.

import type { RR } from "./message.ts";
import { Type } from "./constants.ts";

/** Octets of a canonical name on the wire, uncompressed: "a.b." is 1 a 1 b 0. */
function nameSize(name: string): number {
  return name === "." ? 1 : name.length + 1;
}

/** Upper bound of the record's wire size: owner, type, class, TTL, RDLENGTH and RDATA. */
export function rrSizeBound(rr: RR): number {
  return nameSize(rr.name) + 10 + rdataSize(rr);
}

function rdataSize(rr: RR): number {
  const d = rr.data;
  if ("raw" in d) return d.raw.length;
  switch (d.type) {
    case Type.A:
      return 4;
    case Type.AAAA:
      return 16;
    case Type.NS:
    case Type.CNAME:
    case Type.PTR:
      return nameSize(d.target);
    case Type.MX:
      return 2 + nameSize(d.exchange);
    case Type.SOA:
      return nameSize(d.mname) + nameSize(d.rname) + 20;
    case Type.TXT:
      return d.strings.reduce((n, s) => n + 1 + s.length, 0);
    case Type.SRV:
      return 6 + nameSize(d.target);
    case Type.CAA:
      return 2 + d.tag.length + d.value.length;
  }
  return 0;
}
