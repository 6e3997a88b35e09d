// 20,000 random and mutated packets through the wire code: scanQuery never throws, every error reply
// is exactly as large as it must be (and so within 512 octets), decode only ever throws DecodeError,
// and where both accept a packet they agree on what it asks.

import { test } from "node:test";
import assert from "node:assert/strict";
import { errorReply, scanQuery, toQueryMsg } from "./scan.ts";
import { decode, DecodeError } from "./decode.ts";
import { encode } from "./encode.ts";
import type { Edns, Msg } from "./message.ts";
import { Rcode } from "./constants.ts";
import { rng } from "../../test/helpers/rng.ts";

const NAMES = [
  ".",
  "a.",
  "nginx.default.svc.cluster.local.",
  "_http._tcp.web.default.svc.cluster.local.",
  "1.0.96.10.in-addr.arpa.",
  `${"x".repeat(63)}.${"y".repeat(63)}.${"z".repeat(63)}.${"w".repeat(61)}.`,
];

function validQuery(r: () => number): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const name = [...NAMES[int(NAMES.length)]].map((c) => (r() < 0.5 ? c.toUpperCase() : c)).join("");
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
    question: [{ name, type: int(300), class: r() < 0.8 ? 1 : int(65536) }],
    answer: [],
    authority: [],
    additional: [],
    edns,
  };
  return encode(m);
}

function mutate(r: () => number, i: number): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const base = validQuery(r);
  const p = Buffer.from(base);
  switch (i % 9) {
    case 0: // random bytes
      return Buffer.from(Array.from({ length: int(300) }, () => int(256)));
    case 1: // cut anywhere
      return base.subarray(0, int(base.length + 1));
    case 2: // bit flips
      for (let k = 0, n = 1 + int(6); k < n; k++) p[int(p.length)] ^= 1 << int(8);
      return p;
    case 3: // a count byte
      p[4 + int(8)] = int(256) & (r() < 0.5 ? 3 : 0xff);
      return p;
    case 4: {
      // a compression pointer anywhere past the header
      const at = 12 + int(p.length - 13);
      p[at] = 0xc0 | int(4);
      p[at + 1] = int(256);
      return p;
    }
    case 5: {
      // extra records: some well-formed (backward pointers), some junk
      const extra: number[] = [];
      const n = 1 + int(3);
      for (let k = 0; k < n; k++) {
        const rdata = Array.from({ length: int(8) }, () => int(256));
        const owner = r() < 0.5 ? [0xc0, 12] : r() < 0.5 ? [0] : [int(256), int(256)];
        extra.push(...owner, 0, int(3) === 0 ? 41 : 1, 0, 1, 0, 0, 0, 9, 0, rdata.length, ...rdata);
      }
      const out = Buffer.concat([p, Buffer.from(extra)]);
      out[7 + 2 * int(3)] += n;
      return r() < 0.2 ? out.subarray(0, out.length - int(4)) : out;
    }
    case 6: {
      // an OPT of another version, or one more OPT (a second one when there is one already)
      const optAt = findOpt(base);
      if (optAt >= 0 && r() < 0.5) {
        p[optAt + 6] = 1 + int(255);
        return p;
      }
      const out = Buffer.concat([p, Buffer.from([0, 0, 41, 2, 0, 0, r() < 0.5 ? 0 : 1, 0, 0, 0, 0])]);
      out[11] += 1;
      return out;
    }
    case 7: // header flags: QR, opcodes
      p[2] = int(256);
      return p;
    default: // untouched
      return p;
  }
}

/** Offset of the OPT record in a packet encode() built with EDNS (the last record). */
function findOpt(b: Buffer): number {
  for (let at = 12; at + 11 <= b.length; at++) {
    if (b[at] === 0 && b[at + 1] === 0 && b[at + 2] === 41 && at + 11 + b.readUInt16BE(at + 9) === b.length)
      return at;
  }
  return -1;
}

const lowerAscii = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

test("20,000 random and mutated packets", () => {
  const r = rng(20240601);
  const seen = new Map<string, number>();
  const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
  for (let i = 0; i < 20_000; i++) {
    const pkt = mutate(r, i);
    const at = `packet ${i}: ${pkt.toString("hex")}`;

    let decoded: Msg | undefined;
    try {
      decoded = decode(pkt);
    } catch (e) {
      assert.ok(e instanceof DecodeError, `${at}: decode threw ${String(e)}`);
    }

    const s = scanQuery(pkt);
    if ("drop" in s) {
      const mustDrop = pkt.length < 12 || (pkt[2] & 0x80) !== 0;
      assert.equal(s.drop, mustDrop, at);
      if (s.drop) {
        count("drop");
        continue;
      }
      count(`rcode ${s.rcode}`);
      const reply = errorReply(pkt, s);
      const needed = 12 + (s.questionEnd > 0 ? s.questionEnd - 12 : 0) + (s.edns || s.rcode > 15 ? 11 : 0);
      assert.equal(reply.length, needed, at);
      assert.ok(reply.length <= 512, at);
      assert.deepEqual(reply.subarray(0, 2), pkt.subarray(0, 2), at);
      const d = decode(reply);
      assert.equal(d.qr, true, at);
      assert.equal(d.rcode, s.rcode, at);
      assert.equal(d.opcode, (pkt[2] >> 3) & 0x0f, at);
      if (s.questionEnd > 0)
        assert.deepEqual(reply.subarray(12, s.questionEnd), pkt.subarray(12, s.questionEnd), at);
      // A reply is a response: fed back in, it is dropped (no reflection loops).
      assert.deepEqual(scanQuery(reply), { drop: true }, at);
      continue;
    }

    count("query");
    assert.ok(s.questionEnd > 12 && s.questionEnd <= pkt.length, at);
    const onlyQuestionAndOpt = pkt[6] === 0 && pkt[7] === 0 && pkt[8] === 0 && pkt[9] === 0;
    if (onlyQuestionAndOpt && pkt.readUInt16BE(10) === (s.edns ? 1 : 0)) {
      assert.ok(decoded, `${at}: scanQuery accepted what decode rejects`);
    }
    if (decoded) {
      const q = decoded.question[0];
      assert.equal(lowerAscii(q.name), s.qname, at);
      assert.equal(q.type, s.qtype, at);
      assert.equal(q.class, s.qclass, at);
      assert.deepEqual(decoded.edns, s.edns, at);
    }
    // The decoded query encodes back to a packet with the same cache key.
    const again = scanQuery(encode(toQueryMsg(s)));
    assert.ok(!("drop" in again), at);
    assert.equal(again.key, s.key, at);
  }
  // The generator reached every outcome often enough for the checks above to mean something.
  for (const k of [
    "drop",
    "query",
    `rcode ${Rcode.FORMERR}`,
    `rcode ${Rcode.NOTIMP}`,
    `rcode ${Rcode.BADVERS}`,
  ]) {
    assert.ok((seen.get(k) ?? 0) >= 200, `${k}: ${seen.get(k) ?? 0} of 20,000`);
  }
});
