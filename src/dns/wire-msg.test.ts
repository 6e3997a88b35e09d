import { test } from "node:test";
import assert from "node:assert/strict";
import { readMessage, wireRecords } from "./wire-msg.ts";
import { decode, DecodeError } from "./decode.ts";
import { encode } from "./encode.ts";
import { newQuery, type Msg, type RR } from "./message.ts";
import { Type } from "./constants.ts";
import { mutate, MUTATIONS } from "../../test/helpers/fuzz-packets.ts";
import { rng } from "../../test/helpers/rng.ts";

const a = (name: string, address: string, ttl = 300): RR => ({
  name,
  type: Type.A,
  class: 1,
  ttl,
  data: { type: Type.A, address },
});

/** A reply as an upstream sends it: answers, an SOA and an MX in the other sections, and its OPT. */
function upstreamReply(): Msg {
  const m = newQuery("Www.Example.org.", Type.A, 1, 0x1234);
  m.qr = true;
  m.ra = true;
  m.answer = Array.from({ length: 50 }, (_, i) => a("www.example.org.", `10.0.0.${i}`));
  m.authority = [
    {
      name: "example.org.",
      type: Type.SOA,
      class: 1,
      ttl: 60,
      data: {
        type: Type.SOA,
        mname: "ns.example.org.",
        rname: "h.example.org.",
        serial: 1,
        refresh: 2,
        retry: 3,
        expire: 4,
        minimum: 30,
      },
    },
  ];
  m.additional = [
    {
      name: "example.org.",
      type: Type.MX,
      class: 1,
      ttl: 9,
      data: { type: Type.MX, preference: 5, exchange: "mx.example.org." },
    },
  ];
  m.edns = { udpSize: 1232, version: 0, do: false, options: [{ code: 10, data: new Uint8Array(8) }] };
  return m;
}

test("a reply's records stay octets until read, and are written back as they came", () => {
  const wire = encode(upstreamReply());
  const m = readMessage(wire);
  const raw = wireRecords(m);
  assert.ok(raw, "records not decoded on reading");
  assert.deepEqual(raw.counts, [50, 1, 1]);
  assert.equal(m.edns?.options[0].code, 10);
  assert.equal(m.question[0].name, "Www.Example.org.");
  // The server's own EDNS in place of the upstream's: the records' octets are copied as they are.
  m.id = 7;
  m.edns = { udpSize: 1232, version: 0, do: true, options: [] };
  const out = encode(m);
  assert.ok(wireRecords(m), "encoding did not decode the records");
  const want = decode(wire);
  const got = decode(out);
  assert.equal(got.id, 7);
  assert.equal(got.edns?.do, true);
  assert.deepEqual(got.edns?.options, []);
  assert.deepEqual(
    [got.answer, got.authority, got.additional],
    [want.answer, want.authority, want.additional],
  );
  assert.deepEqual(out.subarray(12, raw.end), wire.subarray(12, raw.end));
});

test("reading the records decodes them once; a change to them is what gets encoded", () => {
  const m = readMessage(encode(upstreamReply()));
  assert.equal(m.answer.length, 50);
  assert.equal(wireRecords(m), undefined);
  m.answer = m.answer.slice(0, 2);
  const got = decode(encode(m));
  assert.equal(got.answer.length, 2);
  assert.equal(got.authority.length, 1);
});

test("a copy made with a spread has every section, decoded", () => {
  const m = readMessage(encode(upstreamReply()));
  const copy = { ...m, answer: [...m.answer] };
  assert.deepEqual([copy.answer.length, copy.authority.length, copy.additional.length], [50, 1, 1]);
  assert.equal(decode(encode(copy)).additional.length, 1);
});

test("an OPT record before the last record is read the plain way (decode's verdict)", () => {
  const m = upstreamReply();
  const wire = encode(m);
  // Move the OPT record (the last 11 + 12 octets) before the MX record.
  const opt = wire.length - 23;
  const mxStart = wire.indexOf(Buffer.from([0, 15, 0, 1]), 12) - 2;
  const moved = Buffer.concat([wire.subarray(0, mxStart), wire.subarray(opt), wire.subarray(mxStart, opt)]);
  const read = readMessage(moved);
  assert.equal(wireRecords(read), undefined);
  assert.equal(read.additional.length, 1);
});

test("whatever decode refuses, readMessage refuses; whatever both read, they read alike", () => {
  const r = rng(33);
  let refused = 0;
  for (let i = 0; i < 20_000; i++) {
    const pkt = mutate(r, i % MUTATIONS);
    let want: Msg | undefined;
    try {
      want = decode(pkt);
    } catch {
      want = undefined;
    }
    let got: Msg | undefined;
    try {
      got = readMessage(pkt);
    } catch (err) {
      assert.ok(err instanceof DecodeError, String(err));
      got = undefined;
    }
    if (want === undefined) {
      refused++;
      // A message decode() refuses may still be read when only its rdata is odd: then it must not be
      // read as records either (its records are only ever replayed as octets).
      if (got !== undefined) assert.throws(() => got.answer, DecodeError);
      continue;
    }
    assert.ok(got, `packet ${i} decodes but is not read`);
    const records = { answer: got.answer, authority: got.authority, additional: got.additional };
    assert.deepEqual({ ...got, ...records, edns: got.edns }, { ...want, edns: want.edns });
  }
  assert.ok(refused > 1000);
});
