// The fuzz corpus every fuzz test draws from: valid queries and packets made from them by one of the
// mutations below (bit flips, cuts, random bytes of any length 0-4096, counts up to 65535, compression
// loops and forward pointers, labels past the end, malformed and repeated OPT records, TSIG records,
// every opcode, class and meta-type). Seeded (rng.ts): packet `i` of seed `s` is always the same.
// Used by the wire-level unit test (src/dns/fuzz.test.ts), the engines' byte-for-byte comparison
// (test/malformed.test.ts) and the soak's million-packet runs (test/soak/fuzz.ts).

import { encode } from "../../src/dns/encode.ts";
import type { Edns, Msg } from "../../src/dns/message.ts";

/** Names the queries ask for: the demo cluster's and zones' (so some reach real answers), the root, a
 * name of the longest legal length, names with odd octets. */
export const FUZZ_NAMES = [
  ".",
  "a.",
  "nginx.default.svc.cluster.local.",
  "nginx.web.svc.cluster.local.",
  "_http._tcp.nginx.default.svc.cluster.local.",
  "nginx-0.nginx.web.svc.cluster.local.",
  "10.0.0.10.in-addr.arpa.",
  "10-244-4-3.default.pod.cluster.local.",
  "dns-version.cluster.local.",
  "cluster.local.",
  "www.example.org.",
  "big.example.org.",
  "mid.example.org.",
  "example.org.",
  "www.example.net.",
  "big.example.net.",
  "version.bind.",
  `${"x".repeat(63)}.${"y".repeat(63)}.${"z".repeat(63)}.${"w".repeat(61)}.`,
];

/** Query types: the common ones, the meta-types the scanner refuses, and any. */
const QTYPES = [1, 28, 33, 12, 16, 6, 2, 5, 15, 255, 257, 0, 41, 249, 250, 251, 252, 253, 254, 65535];
/** Classes: IN, CH, HS, NONE, ANY, 0 and any. */
const QCLASSES = [1, 1, 1, 1, 3, 4, 254, 255, 0];

/** How many kinds of packet mutate() makes; packet i is of kind i % MUTATIONS. */
export const MUTATIONS = 18;

export function validQuery(r: () => number): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const base = FUZZ_NAMES[int(FUZZ_NAMES.length)];
  const name = [...base].map((c) => (r() < 0.5 ? c.toUpperCase() : c)).join("");
  let edns: Edns | undefined;
  if (r() < 0.5) {
    const options = Array.from({ length: int(3) }, () => ({
      code: int(65536),
      data: Uint8Array.from({ length: int(12) }, () => int(256)),
    }));
    edns = { udpSize: int(65536), version: 0, do: r() < 0.5, options };
  }
  const m: Msg = {
    id: int(65536),
    qr: false,
    opcode: 0,
    aa: false,
    tc: false,
    rd: r() < 0.5,
    ra: false,
    ad: r() < 0.2,
    cd: r() < 0.2,
    rcode: 0,
    question: [
      {
        name,
        type: r() < 0.7 ? QTYPES[int(QTYPES.length)] : int(65536),
        class: r() < 0.9 ? QCLASSES[int(QCLASSES.length)] : int(65536),
      },
    ],
    answer: [],
    authority: [],
    additional: [],
    edns,
  };
  return encode(m);
}

/** Packet `i` of the corpus: a mutation of a valid query (or the query itself), chosen by i. */
export function mutate(r: () => number, i: number): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const base = validQuery(r);
  const p = Buffer.from(base);
  switch (i % MUTATIONS) {
    case 0: // random bytes, short
      return bytes(int(300));
    case 1: // random bytes, any length up to 4096, some with a plausible header
      if (r() < 0.5) return bytes(int(4097));
      return Buffer.concat([p.subarray(0, 12), bytes(int(4085))]);
    case 2: // cut anywhere
      return base.subarray(0, int(base.length + 1));
    case 3: // bit flips
      for (let k = 0, n = 1 + int(6); k < n; k++) p[int(p.length)] ^= 1 << int(8);
      return p;
    case 4: // a count: small, or huge
      p.writeUInt16BE(r() < 0.5 ? int(4) : r() < 0.5 ? 0xffff : int(65536), 4 + 2 * int(4));
      return p;
    case 5: {
      // a compression pointer anywhere past the header: backward, to itself, or forward
      const at = 12 + int(p.length - 13);
      const target = r() < 0.3 ? at : r() < 0.5 ? at + 2 + int(64) : int(at);
      p[at] = 0xc0 | ((target >> 8) & 0x3f);
      p[at + 1] = target & 0xff;
      return p;
    }
    case 6: // a compression loop: in the question, or two records whose owners point at each other
      if (r() < 0.5) return Buffer.concat([p.subarray(0, 12), Buffer.from([0xc0, 12, 0, 1, 0, 1])]);
      return loopRecords(p);
    case 7: {
      // a label running past the end of the packet (or of its record)
      const at = 12 + int(Math.max(1, p.length - 12 - 5));
      p[at] = 1 + int(63);
      return p.subarray(0, Math.min(p.length, at + 1 + int(p[at])));
    }
    case 8: // a name over 255 octets, or 127 labels and more
      return Buffer.concat([
        p.subarray(0, 12),
        ...(r() < 0.5
          ? Array.from({ length: 5 }, () => Buffer.concat([Buffer.from([60]), Buffer.alloc(60, 0x62)]))
          : Array.from({ length: 120 + int(20) }, () => Buffer.from([1, 0x63]))),
        Buffer.from([0, 0, 1, 0, 1]),
      ]);
    case 9:
      return extraRecords(r, p);
    case 10:
      return badOpt(r, base, p);
    case 11:
      return withTsig(r, p);
    case 12: // header flags: QR, every opcode, Z, AA, TC...
      p[2] = int(256);
      p[3] = int(256);
      return p;
    case 13: // every opcode, with a question that is otherwise valid
      p[2] = (p[2] & 0x87) | (int(16) << 3);
      return p;
    case 14: // trailing octets after a valid query
      return Buffer.concat([p, bytes(1 + int(r() < 0.9 ? 40 : 4000))]);
    case 15: {
      // a record's RDLENGTH past the end, or an OPT option longer than its record
      const out = Buffer.concat([
        p,
        Buffer.from([0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 8, 0, 10, 0, 9, 1, 2, 3, 4]),
      ]);
      out[11] += 1;
      if (r() < 0.5) out.writeUInt16BE(200 + int(4000), out.length - 10);
      return out;
    }
    case 16: // class and type anywhere in 0-65535
      if (p.length >= 16) {
        const qe = questionEnd(p);
        if (qe > 0) {
          p.writeUInt16BE(int(65536), qe - 4);
          p.writeUInt16BE(int(65536), qe - 2);
        }
      }
      return p;
    default: // untouched
      return p;
  }
}

/** Offset just past the question of a packet encode() made (names are not compressed there), or -1. */
function questionEnd(b: Buffer): number {
  let p = 12;
  while (p < b.length && b[p] !== 0) p += b[p] + 1;
  return p + 5 <= b.length ? p + 5 : -1;
}

/** Two additional records whose owner names point at each other. */
function loopRecords(p: Buffer): Buffer {
  const at = p.length;
  const rr = (target: number) => [
    0xc0 | (target >> 8),
    target & 0xff,
    0,
    1,
    0,
    1,
    0,
    0,
    0,
    9,
    0,
    4,
    1,
    2,
    3,
    4,
  ];
  const out = Buffer.concat([p, Buffer.from([...rr(at + 16), ...rr(at)])]);
  out.writeUInt16BE(out.readUInt16BE(10) + 2, 10);
  return out;
}

/** Extra records: some well-formed (backward pointers), some junk, sometimes cut short. */
function extraRecords(r: () => number, p: Buffer): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const extra: number[] = [];
  const n = 1 + int(3);
  for (let k = 0; k < n; k++) {
    const rdata = Array.from({ length: int(8) }, () => int(256));
    const owner = r() < 0.5 ? [0xc0, 12] : r() < 0.5 ? [0] : [int(256), int(256)];
    extra.push(...owner, 0, int(3) === 0 ? 41 : 1, 0, 1, 0, 0, 0, 9, 0, rdata.length, ...rdata);
  }
  const out = Buffer.concat([p, Buffer.from(extra)]);
  const at = 6 + 2 * int(3);
  out.writeUInt16BE((out.readUInt16BE(at) + n) & 0xffff, at);
  return r() < 0.2 ? out.subarray(0, out.length - int(4)) : out;
}

/** An OPT record of another version, one more OPT, an OPT with an owner other than the root, or an
 * OPT in the answer section. */
function badOpt(r: () => number, base: Buffer, p: Buffer): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const optAt = findOpt(base);
  const pick = int(4);
  if (optAt >= 0 && pick === 0) {
    p[optAt + 6] = 1 + int(255);
    return p;
  }
  const owner = pick === 2 ? [1, 0x61, 0] : [0];
  const opt = Buffer.from([...owner, 0, 41, 2, 0, 0, r() < 0.5 ? 0 : 1, 0, 0, 0, 0]);
  const out = Buffer.concat([p, opt]);
  if (pick === 3 && optAt < 0)
    out[7] += 1; // in the answer section
  else out[11] += 1;
  return out;
}

/** A TSIG record (RFC 8945 4.2): well formed and last, followed by another record, or cut short. */
function withTsig(r: () => number, p: Buffer): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const alg = Buffer.from("0b686d61632d73686132353600", "hex"); // hmac-sha256.
  const mac = Buffer.from(Array.from({ length: int(40) }, () => int(256)));
  const rdata = Buffer.concat([
    alg,
    Buffer.from([0, 0, 0x65, 0x5f, 0x00, 0x00, 1, 44, mac.length >> 8, mac.length & 0xff]),
    mac,
    Buffer.from([p[0], p[1], 0, 0, 0, 0]),
  ]);
  const keyName = Buffer.from([3, 0x6b, 0x65, 0x79, 0]);
  const rr = Buffer.concat([
    keyName,
    Buffer.from([0, 250, 0, 255, 0, 0, 0, 0, rdata.length >> 8, rdata.length & 0xff]),
    rdata,
  ]);
  const pick = int(3);
  let out = Buffer.concat([p, rr]);
  out[11] += 1;
  if (pick === 1) {
    out = Buffer.concat([out, Buffer.from([0, 0, 1, 0, 1, 0, 0, 0, 9, 0, 0])]);
    out[11] += 1;
  } else if (pick === 2) {
    out = out.subarray(0, out.length - 1 - int(8));
  }
  return out;
}

/** Offset of the OPT record in a packet encode() built with EDNS (the last record), or -1. */
export function findOpt(b: Buffer): number {
  for (let at = 12; at + 11 <= b.length; at++) {
    if (b[at] === 0 && b[at + 1] === 0 && b[at + 2] === 41 && at + 11 + b.readUInt16BE(at + 9) === b.length)
      return at;
  }
  return -1;
}
