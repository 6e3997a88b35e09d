// The decoded form of a DNS message as plugins see it. Names are absolute ("example.org.") and, inside
// the server, lowercased; the client's spelling of the question is echoed from the wire bytes.

import { EDNS_UDP_SIZE } from "./constants.ts";

export type RData =
  | { type: 1; address: string } // A
  | { type: 28; address: string } // AAAA
  | { type: 2 | 5 | 12; target: string } // NS, CNAME, PTR
  | { type: 15; preference: number; exchange: string } // MX
  | {
      type: 6; // SOA
      mname: string;
      rname: string;
      serial: number;
      refresh: number;
      retry: number;
      expire: number;
      minimum: number;
    }
  | { type: 16; strings: string[] } // TXT: each string at most 255 bytes
  | { type: 33; priority: number; weight: number; port: number; target: string } // SRV
  | { type: 257; flags: number; tag: string; value: string } // CAA
  | { type: number; raw: Uint8Array }; // anything else, RFC 3597 opaque

export interface RR {
  name: string;
  type: number;
  class: number;
  ttl: number;
  data: RData;
}

export interface Question {
  name: string;
  type: number;
  class: number;
}

export interface Edns {
  udpSize: number;
  version: number;
  do: boolean;
  /** Extended rcode high bits are folded into Msg.rcode; options are kept opaque. */
  options: { code: number; data: Uint8Array }[];
}

export interface Msg {
  id: number;
  qr: boolean;
  opcode: number;
  aa: boolean;
  tc: boolean;
  rd: boolean;
  ra: boolean;
  ad: boolean;
  cd: boolean;
  /** Full 12-bit rcode; values above 15 need an OPT record to carry the upper bits. */
  rcode: number;
  question: Question[];
  answer: RR[];
  authority: RR[];
  additional: RR[];
  edns?: Edns;
  /** Why this reply is a failure, when the plugin that made it knows (forward: what its upstreams did):
   * the `errors` plugin logs it, as CoreDNS's logs the error a plugin returns with its rcode. Never
   * encoded; a copy made with a spread keeps it. */
  error?: Error;
}

/** Puts an EDNS option in a reply, in place of one with the same code. The server sends it when the
 * query had EDNS (RFC 6891 7: never an OPT record to a client that sent none). */
export function setReplyOption(reply: Msg, code: number, data: Uint8Array): void {
  const edns = (reply.edns ??= { udpSize: EDNS_UDP_SIZE, version: 0, do: false, options: [] });
  edns.options = [...edns.options.filter((o) => o.code !== code), { code, data }];
}

/** A reply to `q` with the header bits a server copies from the query. */
export function replyTo(q: Msg, rcode = 0): Msg {
  return {
    id: q.id,
    qr: true,
    opcode: q.opcode,
    aa: false,
    tc: false,
    rd: q.rd,
    ra: false,
    ad: false,
    cd: q.cd,
    rcode,
    question: q.question.map((x) => ({ ...x })),
    answer: [],
    authority: [],
    additional: [],
  };
}

/** A recursion-desired query for one name and type with every other field clear. */
export function newQuery(name: string, type: number, qclass = 1, id = 0): Msg {
  return {
    id,
    qr: false,
    opcode: 0,
    aa: false,
    tc: false,
    rd: true,
    ra: false,
    ad: false,
    cd: false,
    rcode: 0,
    question: [{ name, type, class: qclass }],
    answer: [],
    authority: [],
    additional: [],
  };
}

/** How long a denial may be kept (RFC 2308: the lower of the SOA's TTL and its MINIMUM), from the SOA
 * in an authority section; undefined without one. */
export function negativeTtl(authority: readonly RR[]): number | undefined {
  const soa = authority.find((rr) => rr.type === 6); // SOA
  if (soa === undefined || !("minimum" in soa.data)) return undefined;
  return Math.min(soa.ttl, soa.data.minimum);
}
