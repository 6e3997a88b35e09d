// What a client sees of a query's EDNS, for the checks fuzz tests make on the replies (RFC 6891).
// Written apart from the server's scan (src/dns/scan.ts), so that it checks the scan rather than
// repeating it: records are walked by the extent of their names alone (a pointer is two octets,
// wherever it points), and what "parses" means is what the slow path's decoder accepts.

import { decode } from "../../src/dns/decode.ts";

export interface EdnsView {
  /** A record of type OPT is reached walking the message: every reply must then carry an OPT. */
  hasOpt: boolean;
  /** The largest reply the client allows over UDP (RFC 6891 6.2.3-6.2.5): the CLASS of the one OPT
   * record of its additional section, at least 512; 512 without one, or when the records cannot be
   * walked. What is inside other records' data does not change what the client offered. */
  allowed: number;
  /** The version of its OPT record when the message decodes (src/dns/decode.ts: valid names, one OPT
   * in the additional section, nothing after the last record) and a TSIG record, if any, is its last:
   * a version other than 0 must then get BADVERS. */
  version?: number;
}

export function ednsView(pkt: Buffer): EdnsView {
  const view: EdnsView = { hasOpt: false, allowed: 512 };
  if (pkt.length < 12) return view;
  const count = (at: number) => pkt.readUInt16BE(at);
  let p = 12;
  const skipName = () => {
    while (p < pkt.length) {
      const l = pkt[p];
      if (l === 0) return ++p <= pkt.length;
      if (l >= 0xc0) return (p += 2) <= pkt.length;
      if (l > 63) return false;
      p += l + 1;
    }
    return false;
  };
  for (let i = 0; i < count(4); i++) if (!skipName() || (p += 4) > pkt.length) return view;
  const additional = count(6) + count(8);
  const records = additional + count(10);
  let size = -1;
  let tsigLast = true;
  let walked = true;
  for (let i = 0; i < records; i++) {
    const owner = p;
    if (!skipName() || p + 10 > pkt.length) {
      walked = false;
      break;
    }
    const type = count(p);
    if (type === 41) {
      view.hasOpt = true;
      size = i < additional || size >= 0 || pkt[owner] !== 0 ? -2 : count(p + 2);
    }
    if (type === 250 && i !== records - 1) tsigLast = false;
    p += 10 + count(p + 8);
  }
  if (walked && p === pkt.length && size >= 0) view.allowed = Math.max(512, size);
  if (view.hasOpt && tsigLast) {
    try {
      view.version = decode(pkt).edns?.version;
    } catch {
      // does not parse: FORMERR whatever its OPT says
    }
  }
  return view;
}

/** What a reply says of EDNS: whether it carries an OPT record, and its whole rcode (the header's 4
 * bits and the OPT record's upper 8). */
export function replyEdns(m: Buffer): { opt: boolean; rcode: number } {
  try {
    const d = decode(m);
    return { opt: d.edns !== undefined, rcode: d.rcode };
  } catch {
    return { opt: false, rcode: m.length >= 4 ? m[3] & 0x0f : -1 };
  }
}
