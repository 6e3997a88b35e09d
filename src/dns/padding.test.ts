import { test } from "node:test";
import assert from "node:assert/strict";
import { asksPadding, padded, QUERY_BLOCK, RESPONSE_BLOCK } from "./padding.ts";
import { encode } from "./encode.ts";
import { decode } from "./decode.ts";
import { appendTsig } from "./tsig.ts";
import { optRecord } from "./walk.ts";
import type { Edns, RR } from "./message.ts";
import { EdnsOption, Type } from "./constants.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";

const NAME = "www.example.org.";

function edns(options: Edns["options"] = [], dnssecOk = false): Edns {
  return { udpSize: 1232, version: 0, do: dnssecOk, options };
}

/** A reply of `n` TXT records of 100 octets each, with `e` as its OPT record. */
function reply(n: number, e: Edns | undefined): Buffer {
  const answer: RR[] = Array.from({ length: n }, () => ({
    name: NAME,
    type: Type.TXT,
    class: 1,
    ttl: 300,
    data: { type: Type.TXT, strings: ["x".repeat(99)] },
  }));
  return encode(queryMsg(NAME, Type.TXT, { qr: true, answer, edns: e }));
}

/** The options of the message's OPT record, as [code, length] pairs, read off the wire. */
function options(msg: Buffer): [number, number][] {
  const at = optRecord(msg, msg.length).at;
  assert.equal(at + 10 + msg.readUInt16BE(at + 8), msg.length, "the OPT record is last");
  const out: [number, number][] = [];
  for (let o = at + 10; o < msg.length; o += 4 + msg.readUInt16BE(o + 2))
    out.push([msg.readUInt16BE(o), msg.readUInt16BE(o + 2)]);
  return out;
}

/** `padded` reads as `msg` does, but for a Padding option last among its EDNS options. */
function same(padded: Buffer, msg: Buffer): void {
  const d = decode(padded);
  assert.equal(d.edns?.options.at(-1)?.code, EdnsOption.PADDING);
  d.edns?.options.pop();
  assert.deepEqual(d, decode(msg));
}

test("a small reply is padded to 468 octets, its records untouched, the padding zeros", () => {
  const msg = reply(1, edns());
  const out = padded(msg, RESPONSE_BLOCK);
  assert.equal(out.length, 468);
  assert.deepEqual(options(out), [[EdnsOption.PADDING, 468 - msg.length - 4]]);
  assert.ok(out.subarray(msg.length + 4).every((b) => b === 0));
  same(out, msg);
  assert.equal(out.readUInt16BE(10), 1, "ARCOUNT: still the one OPT record");
});

test("lengths: to the next multiple of the block, an exact fit gets an empty option", () => {
  for (const n of [1, 4, 5, 9, 30]) {
    const msg = reply(n, edns());
    const out = padded(msg, RESPONSE_BLOCK);
    assert.equal(out.length % RESPONSE_BLOCK, 0, `${n} records`);
    assert.ok(out.length >= msg.length + 4 && out.length < msg.length + 4 + RESPONSE_BLOCK);
    same(out, msg);
  }
  // One that is 4 octets short of a block: the option's head alone makes it whole.
  const base = reply(1, edns());
  const short = reply(1, edns([{ code: 65001, data: new Uint8Array(RESPONSE_BLOCK - 4 - base.length - 4) }]));
  assert.equal(short.length, RESPONSE_BLOCK - 4);
  const out = padded(short, RESPONSE_BLOCK);
  assert.equal(out.length, RESPONSE_BLOCK);
  assert.deepEqual(options(out).at(-1), [EdnsOption.PADDING, 0]);
  // With a tail still to come (a TSIG record), the message and its tail make the block.
  assert.equal(padded(base, RESPONSE_BLOCK, { tail: 100 }).length, RESPONSE_BLOCK - 100);
  assert.equal(padded(base, RESPONSE_BLOCK, { limit: 400, tail: 100 }).length, 300);
  // And queries by their block of 128.
  const q = encode(queryMsg(NAME, Type.A, { edns: edns() }));
  assert.equal(padded(q, QUERY_BLOCK).length, 128);
});

test("the size limit: padded up to the limit, and not at all when the option does not fit", () => {
  const msg = reply(9, edns());
  assert.ok(msg.length > 936 && msg.length < 1100, String(msg.length));
  // The next block, 1404, is past 1200: the reply is padded to 1200 exactly.
  const out = padded(msg, RESPONSE_BLOCK, { limit: 1200 });
  assert.equal(out.length, 1200);
  same(out, msg);
  // Room for 3 octets more only: no option fits, the reply goes as it is.
  assert.equal(padded(msg, RESPONSE_BLOCK, { limit: msg.length + 3 }), msg);
  // Room for the option's head alone: an empty Padding option.
  assert.deepEqual(options(padded(msg, RESPONSE_BLOCK, { limit: msg.length + 4 })), [
    [EdnsOption.PADDING, 0],
  ]);
  // 65535 is the most a message may be, whatever the limit says: past the last block that fits
  // (65520), a reply is padded to 65535.
  const big = reply(584, edns([{ code: 65001, data: new Uint8Array(70) }]));
  assert.equal(big.length, 65526);
  assert.equal(padded(big, RESPONSE_BLOCK, { limit: 100_000 }).length, 65535);
  assert.equal(padded(reply(584, edns()), RESPONSE_BLOCK).length, 65520);
});

test("an OPT record with options of its own keeps them, the padding after them", () => {
  const nsid = { code: EdnsOption.NSID, data: Buffer.from("node-1") };
  const msg = reply(2, edns([nsid], true));
  const out = padded(msg, RESPONSE_BLOCK);
  assert.equal(out.length, 468);
  assert.deepEqual(options(out), [
    [EdnsOption.NSID, 6],
    [EdnsOption.PADDING, 468 - msg.length - 4],
  ]);
  const d = decode(out);
  assert.equal(d.edns?.do, true, "the DO bit is kept");
  assert.deepEqual(d.edns?.options.slice(0, 1), [
    { code: EdnsOption.NSID, data: new Uint8Array(Buffer.from("node-1")) },
  ]);
});

test("a signed reply (RRSIGs) keeps its records byte for byte: only the OPT record grows", () => {
  const msg = encode(
    queryMsg(NAME, Type.A, {
      qr: true,
      answer: [
        { name: NAME, type: Type.A, class: 1, ttl: 300, data: { type: Type.A, address: "192.0.2.7" } },
        {
          name: NAME,
          type: Type.RRSIG,
          class: 1,
          ttl: 300,
          data: { type: Type.RRSIG, raw: new Uint8Array(90) },
        },
      ],
      edns: edns([], true),
    }),
  );
  const out = padded(msg, RESPONSE_BLOCK);
  assert.equal(out.length, 468);
  // Everything before the OPT's RDLENGTH is the same octets.
  assert.deepEqual(out.subarray(0, msg.length - 2), msg.subarray(0, msg.length - 2));
  same(out, msg);
});

test("not padded: no OPT record, a Padding option already there, a TSIG record after the OPT", () => {
  const plain = reply(1, undefined);
  assert.equal(padded(plain, RESPONSE_BLOCK), plain);
  const already = reply(1, edns([{ code: EdnsOption.PADDING, data: new Uint8Array(3) }]));
  assert.equal(padded(already, RESPONSE_BLOCK), already);
  const signed = appendTsig(reply(1, edns()), {
    key: { name: "key.", algorithm: "hmac-sha256." },
    timeSigned: 1_700_000_000,
    fudge: 300,
    mac: Buffer.alloc(32, 7),
    originalId: 0x1234,
    error: 0,
    other: Buffer.alloc(0),
  });
  assert.equal(padded(signed, RESPONSE_BLOCK), signed);
});

test("asksPadding: a Padding option among the query's options, and nothing else", () => {
  const q = (e?: Edns) => encode(queryMsg(NAME, Type.A, { edns: e }));
  const pad = { code: EdnsOption.PADDING, data: new Uint8Array(20) };
  const nsid = { code: EdnsOption.NSID, data: new Uint8Array() };
  assert.equal(asksPadding(q(edns([pad]))), true);
  assert.equal(asksPadding(q(edns([nsid, pad]))), true);
  assert.equal(asksPadding(q(edns([nsid]))), false);
  assert.equal(asksPadding(q(edns())), false);
  assert.equal(asksPadding(q()), false);
  // An option whose length runs past the OPT record ends the walk: what lies after it is no option.
  const long = q(edns([nsid, pad]));
  long.writeUInt16BE(100, long.length - 26);
  assert.equal(asksPadding(long), false);
});
