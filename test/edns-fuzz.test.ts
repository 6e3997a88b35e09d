// EDNS queries, mutated, sent to a real clusterdns over UDP: every reply to a query whose OPT record a
// client can reach carries an OPT record (RFC 6891 7), and every query that parses with an OPT record
// of a version other than 0 gets BADVERS (6.1.3), whatever else is wrong with it (its opcode, QDCOUNT,
// a TSIG, a meta QTYPE: BADVERS comes first, as in BIND). What remains without OPT is listed by kind of
// mutation: queries whose OPT record sits behind a name or record that runs past the message, which
// no server can see.

import { test } from "node:test";
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { startServer } from "./helpers/server.ts";
import { ednsView, replyEdns } from "./helpers/edns-view.ts";
import { rng } from "./helpers/rng.ts";
import { encode } from "../src/dns/encode.ts";
import { newQuery } from "../src/dns/message.ts";
import { Rcode, Type } from "../src/dns/constants.ts";

const PACKETS = 4000;

/** The mutations, each keeping the query's OPT record somewhere: packet i gets mutation i % length. */
const KINDS = [
  "untouched",
  "bit flips",
  "cut short",
  "opcode",
  "QDCOUNT 0 or 2",
  "trailing octets",
  "option length",
  "second OPT",
  "OPT owner not the root",
  "TSIG after the OPT",
  "meta QTYPE",
  "pointer in the question",
  "OPT in the answer section",
] as const;

/** An EDNS query for packet i (version 0, or 1-255 for a third of them), mutated. */
function packet(r: () => number, i: number): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const m = newQuery(["a.example.", "www.example.org.", "x.y.z."][i % 3], Type.A, 1, i);
  const version = int(3) === 0 ? 1 + int(255) : 0;
  const options = int(2) === 0 ? [] : [{ code: 10, data: Uint8Array.from({ length: 8 }, () => int(256)) }];
  m.edns = { udpSize: 512 + int(4000), version: 0, do: r() < 0.5, options };
  const p = encode(m);
  const opt = p.length - 11 - (options.length > 0 ? 12 : 0); // the OPT record's owner octet, last
  p[opt + 6] = version;
  const qend = opt; // the question ends where the OPT record begins
  switch (KINDS[i % KINDS.length]) {
    case "bit flips":
      for (let k = 1 + int(3); k > 0; k--) p[2 + int(p.length - 2)] ^= 1 << int(8);
      return p;
    case "cut short":
      return p.subarray(0, 12 + int(p.length - 12));
    case "opcode":
      p[2] = (p[2] & 0x87) | ((1 + int(15)) << 3);
      return p;
    case "QDCOUNT 0 or 2": {
      if (r() < 0.5)
        return Buffer.concat([p.subarray(0, 4), Buffer.from([0, 0]), p.subarray(6, 12), p.subarray(qend)]);
      const out = Buffer.concat([p.subarray(0, qend), p.subarray(12, qend), p.subarray(qend)]);
      out.writeUInt16BE(2, 4);
      return out;
    }
    case "trailing octets":
      return Buffer.concat([p, Buffer.from(Array.from({ length: 1 + int(20) }, () => int(256)))]);
    case "option length":
      if (options.length > 0) p.writeUInt16BE(int(20), opt + 13);
      else p.writeUInt16BE(1 + int(8), opt + 9);
      return p;
    case "second OPT": {
      const out = Buffer.concat([p, Buffer.from([0, 0, 41, 2, 0, 0, int(2), 0, 0, 0, 0])]);
      out.writeUInt16BE(2, 10);
      return out;
    }
    case "OPT owner not the root":
      return Buffer.concat([p.subarray(0, opt), Buffer.from([1, 0x61, 0]), p.subarray(opt + 1)]);
    case "TSIG after the OPT": {
      const alg = [11, ...Buffer.from("hmac-sha256"), 0];
      const rdata = [...alg, 0, 0, 0x65, 0x5f, 0, 0, 1, 44, 0, 0, p[0], p[1], 0, 0, 0, 0];
      const rr = [3, 0x6b, 0x65, 0x79, 0, 0, 250, 0, 255, 0, 0, 0, 0, 0, rdata.length, ...rdata];
      const out = Buffer.concat([p, Buffer.from(rr)]);
      out.writeUInt16BE(2, 10);
      return out;
    }
    case "meta QTYPE":
      p.writeUInt16BE([0, 41, 250, 249, 253][int(5)], qend - 4);
      return p;
    case "pointer in the question":
      // The name becomes "a." and a pointer to QDCOUNT's first octet (0): legal, refused by the scan.
      return Buffer.concat([p.subarray(0, 12), Buffer.from([1, 0x61, 0xc0, 4]), p.subarray(qend - 4)]);
    case "OPT in the answer section":
      p.writeUInt16BE(1, 6);
      p.writeUInt16BE(0, 10);
      return p;
  }
  return p;
}

test("mutated EDNS queries: OPT in every reply to a query with one, BADVERS to every version > 0 that parses", async (t) => {
  const srv = await startServer(". {\n    whoami\n}\n");
  const sock = dgram.createSocket("udp4");
  const replies = new Map<number, Buffer>();
  sock.on("message", (m) => m.length >= 2 && replies.set(m.readUInt16BE(0), m));
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  try {
    const r = rng(6891);
    const packets = Array.from({ length: PACKETS }, (_, i) => {
      const p = packet(r, i);
      p.writeUInt16BE(i, 0); // the ID names the packet, whatever a mutation did to it
      return p;
    });
    const mute = (p: Buffer) => p.length < 12 || (p[2] & 0x80) !== 0;
    // In batches, each waited for, then whatever got no reply once more (UDP on a busy machine).
    for (let pass = 0; pass < 2; pass++) {
      const todo = packets.filter((p, i) => !mute(p) && !replies.has(i));
      for (let at = 0; at < todo.length; at += 100) {
        for (const p of todo.slice(at, at + 100)) sock.send(p, srv.port, "127.0.0.1");
        for (let w = 0; w < 50 && todo.slice(at, at + 100).some((p) => !replies.has(p.readUInt16BE(0))); w++)
          await new Promise((ok) => setTimeout(ok, 20));
      }
    }

    const defects: string[] = [];
    const hidden = new Map<string, number>();
    const seen = new Map<string, number>();
    const tally = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    let badvers = 0;
    for (const [i, p] of packets.entries()) {
      const kind = KINDS[i % KINDS.length];
      const reply = replies.get(i);
      if (mute(p)) {
        assert.equal(reply, undefined, `packet ${i} (${kind}) must get no reply`);
        continue;
      }
      assert.ok(reply, `packet ${i} (${kind}): no reply`);
      const view = ednsView(p);
      const e = replyEdns(reply);
      tally(seen, `${kind}: rcode ${e.rcode}${e.opt ? " with OPT" : ""}`);
      if (view.hasOpt && !e.opt)
        defects.push(`packet ${i} (${kind}) ${p.toString("hex")}: no OPT, rcode ${e.rcode}`);
      if (!view.hasOpt && !e.opt) tally(hidden, kind);
      if ((view.version ?? 0) > 0) {
        badvers++;
        if (e.rcode !== Rcode.BADVERS)
          defects.push(`packet ${i} (${kind}) ${p.toString("hex")}: rcode ${e.rcode}`);
      }
    }
    t.diagnostic(`replies by mutation: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
    t.diagnostic(`without OPT, the OPT record out of reach: ${JSON.stringify(Object.fromEntries(hidden))}`);
    assert.deepEqual(defects.slice(0, 10), []);
    // The corpus reached what it is for: BADVERS after other faults, and NOTIMP, FORMERR with OPT.
    assert.ok(badvers > 200, `${badvers} queries of version > 0 that parse`);
    for (const k of [
      "opcode: rcode 4 with OPT",
      "second OPT: rcode 1 with OPT",
      "TSIG after the OPT: rcode 16 with OPT",
    ])
      assert.ok((seen.get(k) ?? 0) > 0, k);
  } finally {
    sock.close();
    await srv.stop();
  }
});
