// 20,000 random and mutated packets (the corpus of test/helpers/fuzz-packets.ts) through the wire
// code: scanQuery never throws, every error reply is exactly as large as it must be (and so within 512
// octets), decode only ever throws DecodeError, and where both accept a packet they agree on what it
// asks.

import { test } from "node:test";
import assert from "node:assert/strict";
import { errorReply, scanQuery, toQueryMsg } from "./scan.ts";
import { decode, DecodeError } from "./decode.ts";
import { encode } from "./encode.ts";
import type { Msg } from "./message.ts";
import { Rcode } from "./constants.ts";
import { rng } from "../../test/helpers/rng.ts";
import { mutate } from "../../test/helpers/fuzz-packets.ts";

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
      // NOTAUTH adds the unsigned TSIG record RFC 8945 5.3.2 asks for, when it fits 512 octets.
      if (s.rcode === Rcode.NOTAUTH) assert.ok(reply.length >= needed, at);
      else assert.equal(reply.length, needed, at);
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
    `rcode ${Rcode.NOTAUTH}`,
  ]) {
    assert.ok((seen.get(k) ?? 0) >= 200, `${k}: ${seen.get(k) ?? 0} of 20,000`);
  }
});
