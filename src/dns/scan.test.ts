import { test } from "node:test";
import assert from "node:assert/strict";
import dns2 from "dns2";
import {
  ScannedQuery,
  errorReply,
  scanQuery,
  spelledQname,
  toQueryMsg,
  type ScanError,
  type Scanned,
} from "./scan.ts";
import { IPV4_APART } from "./key.ts";
import { skipName } from "./walk.ts";
import { decode } from "./decode.ts";
import { encode } from "./encode.ts";
import type { Edns } from "./message.ts";
import { Rcode, Type } from "./constants.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";

/** Concatenates octets and buffers. */
function bytes(...parts: (number[] | Buffer)[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p)));
}

/** A header with QDCOUNT `qd` and the other sections' counts (each below 256). */
function header(
  id: number,
  flags: number,
  qd: number,
  c: { an?: number; ns?: number; ar?: number } = {},
): number[] {
  return [id >> 8, id & 0xff, flags >> 8, flags & 0xff, 0, qd, 0, c.an ?? 0, 0, c.ns ?? 0, 0, c.ar ?? 0];
}

/** Wire form of a name, uncompressed, spelled as given. */
function wireName(name: string): number[] {
  const out: number[] = [];
  for (const l of name.split(".").filter(Boolean)) out.push(l.length, ...Buffer.from(l, "latin1"));
  out.push(0);
  return out;
}

const QTYPE_A_IN = [0, 1, 0, 1];
/** An OPT record: owner root, udp size, ext-rcode/version/DO, options. */
function optRR(
  opts: { udp?: number; version?: number; do?: boolean; rdata?: number[]; owner?: number[] } = {},
) {
  const rdata = opts.rdata ?? [];
  const udp = opts.udp ?? 4096;
  return [
    ...(opts.owner ?? [0]),
    0,
    41,
    udp >> 8,
    udp & 0xff,
    0,
    opts.version ?? 0,
    opts.do ? 0x80 : 0,
    0,
    rdata.length >> 8,
    rdata.length & 0xff,
    ...rdata,
  ];
}

function query(name: string, opts: { id?: number; flags?: number; type?: number; edns?: Edns } = {}): Buffer {
  const b = encode(queryMsg(name, opts.type ?? Type.A, { id: opts.id ?? 0x1234, edns: opts.edns }));
  if (opts.flags !== undefined) b.writeUInt16BE(opts.flags, 2);
  return b;
}

function scanned(buf: Buffer): Scanned {
  const s = scanQuery(buf);
  assert.ok(!("drop" in s), `expected a query, got ${JSON.stringify(s)}`);
  return s;
}

function failed(buf: Buffer, rcode: number): ScanError {
  const s = scanQuery(buf);
  assert.ok("drop" in s && !s.drop, `expected rcode ${rcode}, got ${JSON.stringify(s)}`);
  assert.equal(s.rcode, rcode);
  return s;
}

function dropped(buf: Buffer): void {
  assert.deepEqual(scanQuery(buf), { drop: true });
}

test("a plain query: header bits, canonical qname, question end, key", () => {
  const buf = bytes(header(0xbeef, 0x0130, 1), wireName("www.example.org"), [0, 28, 0, 1]);
  const s = scanned(buf);
  assert.equal(s.id, 0xbeef);
  assert.equal(s.opcode, 0);
  assert.equal(s.rd, true);
  assert.equal(s.ad, true);
  assert.equal(s.cd, true);
  assert.equal(s.qname, "www.example.org.");
  assert.equal(s.qtype, 28);
  assert.equal(s.qclass, 1);
  assert.equal(s.questionEnd, buf.length);
  assert.equal(s.edns, undefined);
  assert.equal(s.key, buf.toString("latin1", 12) + "8", "CD set: its own key");
  buf[3] &= ~0x10;
  assert.equal(scanned(buf).key, buf.toString("latin1", 12) + "0");
});

test("the root name and a name of exactly 255 octets are accepted", () => {
  assert.equal(scanned(bytes(header(1, 0, 1), [0], QTYPE_A_IN)).qname, ".");
  // 3 labels of 63 + one of 61: 4 * 1 + 63 * 3 + 61 + 1 = 255 octets.
  const name = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join(".");
  assert.equal(wireName(name).length, 255);
  assert.equal(scanned(bytes(header(1, 0, 1), wireName(name), QTYPE_A_IN)).qname, name + ".");
});

test("0x20 mixed case: qname and key are lowercased, the key ignores ID and RD", () => {
  const a = scanned(query("WwW.ExAmPlE.oRg.", { id: 1 }));
  const b = scanned(query("www.example.org.", { id: 2, flags: 0x0000 }));
  assert.equal(a.qname, "www.example.org.");
  assert.equal(a.key, b.key);
  assert.notEqual(a.rd, b.rd);
  // Only ASCII letters fold: octet 0xC4 and 0xE4 are different names.
  const upper = scanned(bytes(header(1, 0, 1), [1, 0xc4, 0], QTYPE_A_IN));
  const lower = scanned(bytes(header(1, 0, 1), [1, 0xe4, 0], QTYPE_A_IN));
  assert.notEqual(upper.key, lower.key);
  assert.equal(upper.qname, "\\196.");
});

test("any octet in a label (RFC 2181 11): the qname escapes '.', '\\\\' and odd octets", () => {
  const s = scanned(
    bytes(header(1, 0, 1), [3, 0x41, 0x2e, 0x62, 2, 0x5c, 0x20, 3, 0x6f, 0x72, 0x67, 0], QTYPE_A_IN),
  );
  assert.equal(s.qname, "a\\.b.\\\\\\032.org.");
  // The key holds the octets: a.b as one label is not a and b.
  assert.notEqual(s.key, scanned(query("a.b.\\\\\\032.org.")).key);
  assert.equal(s.key, scanned(query("A\\.b.\\\\\\032.org.")).key);
});

test("the key tells types, classes and EDNS states apart", () => {
  const keys = new Set([
    scanned(query("a.example.")).key,
    scanned(query("a.example.", { type: 28 })).key,
    // 65 (HTTPS, 0x0041) and 97 (0x0061) differ only in what lowercasing would fold.
    scanned(query("a.example.", { type: 65 })).key,
    scanned(query("a.example.", { type: 97 })).key,
    scanned(bytes(header(1, 0, 1), wireName("a.example"), [0, 1, 0, 3])).key,
    scanned(query("a.example.", { edns: { udpSize: 1232, version: 0, do: false, options: [] } })).key,
    scanned(query("a.example.", { edns: { udpSize: 1232, version: 0, do: true, options: [] } })).key,
  ]);
  assert.equal(keys.size, 7);
  const withOpt = scanned(
    query("a.example.", { edns: { udpSize: 512, version: 0, do: false, options: [] } }),
  );
  const withDo = scanned(query("a.example.", { edns: { udpSize: 4096, version: 0, do: true, options: [] } }));
  assert.ok(withOpt.key.endsWith("1"));
  assert.ok(withDo.key.endsWith("2"));
});

test("an NSID request has a key of its own (its reply carries the server's identifier); a cookie does not", () => {
  const withOptions = (...codes: number[]) =>
    scanned(
      query("a.example.", {
        edns: {
          udpSize: 1232,
          version: 0,
          do: false,
          options: codes.map((code) => ({ code, data: new Uint8Array() })),
        },
      }),
    ).key;
  const plain = withOptions();
  assert.notEqual(withOptions(3), plain);
  assert.equal(withOptions(3, 10), withOptions(3));
  assert.equal(withOptions(10), plain);
});

test("EDNS: size, DO and options are read and copied", () => {
  const cookie = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
  const edns: Edns = {
    udpSize: 1400,
    version: 0,
    do: true,
    options: [
      { code: 10, data: cookie },
      { code: 12, data: new Uint8Array(0) },
    ],
  };
  const buf = query("a.example.", { edns });
  const s = scanned(buf);
  assert.deepEqual(s.edns, edns);
  buf.fill(0xff, s.questionEnd);
  assert.deepEqual(s.edns?.options[0].data, cookie, "options must not alias the packet");
});

test("toQueryMsg builds the decoded query", () => {
  const edns: Edns = { udpSize: 1232, version: 0, do: true, options: [] };
  const buf = query("Foo.Example.", { type: 33, edns });
  const m = toQueryMsg(scanned(buf));
  assert.deepEqual(m, queryMsg("foo.example.", 33, { edns }), "lowercased name, id, RD and EDNS kept");
});

test("records in the other sections may use backward pointers", () => {
  // A query with an answer whose owner points at the question, and an OPT.
  const buf = bytes(
    header(1, 0x0100, 1, { an: 1, ar: 1 }),
    wireName("a.example"),
    QTYPE_A_IN,
    [0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 1],
    optRR(),
  );
  const s = scanned(buf);
  assert.equal(s.qname, "a.example.");
  assert.equal(s.edns?.udpSize, 4096);
});

test("runts and responses are dropped", () => {
  dropped(Buffer.alloc(0));
  dropped(Buffer.alloc(11));
  const resp = query("a.example.");
  resp[2] |= 0x80;
  dropped(resp);
  // Even a response that is otherwise garbage.
  dropped(bytes(header(1, 0x8000, 9), [1, 2, 3]));
});

test("opcode other than QUERY and NOTIFY: NOTIMP, before any other rule; NOTIFY passes", () => {
  const update = query("example.org.", { flags: 0x2800 }); // opcode 5
  const f = failed(update, Rcode.NOTIMP);
  assert.equal(f.opcode, 5);
  assert.equal(f.questionEnd, update.length);
  const notify = scanQuery(query("example.org.", { flags: 0x2400, type: Type.SOA })); // opcode 4, AA
  assert.ok(!("drop" in notify));
  assert.deepEqual([notify.opcode, notify.qname, notify.qtype], [4, "example.org.", Type.SOA]);
  failed(bytes(header(1, 0x2800, 2), [0xc0, 12]), Rcode.NOTIMP); // UPDATE, QDCOUNT 2, garbage
  failed(bytes(header(1, 0x1000, 1), [5, 1]), Rcode.NOTIMP); // STATUS with a truncated question
});

test("QDCOUNT other than 1: FORMERR without a question", () => {
  let f = failed(bytes(header(1, 0, 0)), Rcode.FORMERR);
  assert.equal(f.questionEnd, 0);
  f = failed(bytes(header(1, 0, 2), wireName("a"), QTYPE_A_IN, wireName("b"), QTYPE_A_IN), Rcode.FORMERR);
  assert.equal(f.questionEnd, 0);
  // QDCOUNT 0 with an OPT (a cookie-only query): the error reply carries an OPT too.
  f = failed(bytes(header(1, 0, 0, { ar: 1 }), optRR({ do: true })), Rcode.FORMERR);
  assert.equal(f.edns, true);
  assert.equal(f.do, true);
});

test("questions that do not parse: FORMERR", () => {
  const bad: [string, Buffer][] = [
    ["label of 64", bytes(header(1, 0, 1), wireName("a".repeat(64)), QTYPE_A_IN)],
    [
      "name of 256 octets",
      bytes(
        header(1, 0, 1),
        wireName(["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(62)].join(".")),
        QTYPE_A_IN,
      ),
    ],
    ["label type 0x40", bytes(header(1, 0, 1), [0x41, 0, 0], QTYPE_A_IN)],
    ["label type 0x80", bytes(header(1, 0, 1), [0x81, 0, 0], QTYPE_A_IN)],
    ["pointer forward", bytes(header(1, 0, 1), [0xc0, 14, 1, 0x61, 0], QTYPE_A_IN)],
    ["pointer to itself", bytes(header(1, 0, 1), [0xc0, 12], QTYPE_A_IN)],
    ["pointer loop", bytes(header(1, 0, 1), [1, 0x61, 0xc0, 12], QTYPE_A_IN)],
    ["pointer into the header", bytes(header(1, 0, 1), [1, 0x61, 0xc0, 11], QTYPE_A_IN)],
    ["no type and class", bytes(header(1, 0, 1), wireName("a"), [0, 1])],
    ["label past the end", bytes(header(1, 0, 1), [5, 0x61, 0x62])],
  ];
  for (const [what, buf] of bad) {
    const f = failed(buf, Rcode.FORMERR);
    assert.equal(f.questionEnd, 0, what);
  }
  // Every cut of a valid query past the header.
  const full = query("www.example.org.");
  for (let n = 12; n < full.length; n++) failed(full.subarray(0, n), Rcode.FORMERR);
});

test("malformed records after the question: FORMERR with the question echoed", () => {
  const q = bytes(wireName("a.example"), QTYPE_A_IN);
  const rr = (owner: number[], rdata: number[]) => [
    ...owner,
    0,
    1,
    0,
    1,
    0,
    0,
    0,
    60,
    0,
    rdata.length,
    ...rdata,
  ];
  const bad: [string, Buffer][] = [
    ["ANCOUNT too high", bytes(header(1, 0, 1, { an: 1 }), q)],
    ["ARCOUNT too high", bytes(header(1, 0, 1, { ar: 2 }), q, optRR())],
    ["rdata past the end", bytes(header(1, 0, 1, { an: 1 }), q, rr([0xc0, 12], [10, 0, 0, 1]).slice(0, -2))],
    ["fixed part cut", bytes(header(1, 0, 1, { ns: 1 }), q, [0xc0, 12, 0, 1, 0])],
    ["forward pointer", bytes(header(1, 0, 1, { an: 1 }), q, rr([0xc0, 0x30], [1, 2, 3, 4]))],
    ["self pointer", bytes(header(1, 0, 1, { an: 1 }), q, rr([0xc0, 12 + q.length], [1, 2, 3, 4]))],
    [
      "pointer loop",
      bytes(header(1, 0, 1, { an: 2 }), q, rr([0], []), rr([1, 0x62, 0xc0, 12 + q.length + 11], [])),
    ],
    ["reserved label type", bytes(header(1, 0, 1, { an: 1 }), q, rr([0x80, 0], []))],
    ["trailing garbage", bytes(header(1, 0, 1), q, [0])],
    ["trailing garbage after OPT", bytes(header(1, 0, 1, { ar: 1 }), q, optRR(), [1, 2, 3])],
  ];
  for (const [what, buf] of bad) {
    const f = failed(buf, Rcode.FORMERR);
    assert.equal(f.questionEnd, 12 + q.length, what);
  }
});

test("OPT rules: one, in additional, owned by the root, version 0", () => {
  const q = bytes(wireName("a.example"), QTYPE_A_IN);
  let f = failed(bytes(header(1, 0, 1, { ar: 2 }), q, optRR(), optRR()), Rcode.FORMERR);
  assert.equal(f.edns, true);
  // An OPT record that is not one (owned by another name) still asks for an OPT in the reply (RFC 6891 7).
  f = failed(bytes(header(1, 0, 1, { ar: 1 }), q, optRR({ owner: wireName("a") })), Rcode.FORMERR);
  assert.equal(f.edns, true);
  failed(bytes(header(1, 0, 1, { an: 1 }), q, optRR()), Rcode.FORMERR);
  failed(bytes(header(1, 0, 1, { ns: 1 }), q, optRR()), Rcode.FORMERR);
  // Options that do not fill the rdata exactly.
  failed(bytes(header(1, 0, 1, { ar: 1 }), q, optRR({ rdata: [0, 10, 0, 8, 1, 2] })), Rcode.FORMERR);
  failed(bytes(header(1, 0, 1, { ar: 1 }), q, optRR({ rdata: [0, 10] })), Rcode.FORMERR);
  f = failed(bytes(header(1, 0, 1, { ar: 1 }), q, optRR({ version: 1, do: true })), Rcode.BADVERS);
  assert.equal(f.edns, true);
  assert.equal(f.do, true);
  // FORMERR wins over BADVERS where the OPT record is not the one well-formed one, or the message does
  // not parse.
  failed(bytes(header(1, 0, 1, { ar: 2 }), q, optRR({ version: 1 }), optRR()), Rcode.FORMERR);
  failed(bytes(header(1, 0, 1, { ar: 1 }), q, optRR({ version: 1, rdata: [0, 10] })), Rcode.FORMERR);
  failed(bytes(header(1, 0, 1, { ar: 1 }), q, optRR({ version: 1 }), [0]), Rcode.FORMERR);
  f = failed(
    bytes(header(1, 0, 1, { an: 1, ar: 1 }), q, [0, 0, 1, 0, 1, 0, 0, 0, 9, 0, 9], optRR({ version: 1 })),
    Rcode.FORMERR,
  );
  assert.equal(f.edns, false, "a record that overruns the message hides what follows it");
});

test("BADVERS comes before every other refusal of a message that parses (RFC 6891 6.1.3, as BIND)", () => {
  const q = bytes(wireName("a.example"), QTYPE_A_IN);
  const v1 = optRR({ version: 1, do: true });
  const badvers = (buf: Buffer) => {
    const f = failed(buf, Rcode.BADVERS);
    assert.deepEqual([f.edns, f.do, f.tsig], [true, true, -1]);
    return f;
  };
  // An unknown opcode, QDCOUNT 0 or 2, a meta QTYPE, a question with a compression pointer (to the
  // header's QDCOUNT, whose first octet is the root's 0: legal, and refused by the scan).
  assert.equal(badvers(bytes(header(1, 0x2800, 1, { ar: 1 }), q, v1)).opcode, 5);
  assert.equal(badvers(bytes(header(1, 0, 0, { ar: 1 }), v1)).questionEnd, 0);
  badvers(bytes(header(1, 0, 2, { ar: 1 }), q, wireName("b"), QTYPE_A_IN, v1));
  badvers(bytes(header(1, 0, 1, { ar: 1 }), wireName("a"), [0, 0, 0, 1], v1));
  badvers(bytes(header(1, 0, 1, { ar: 1 }), [1, 0x61, 0xc0, 4], QTYPE_A_IN, v1));
  // Version 0 there: the refusal the query earns, with an OPT in the reply.
  const opt0 = optRR({ do: true });
  for (const [buf, rcode] of [
    [bytes(header(1, 0x2800, 1, { ar: 1 }), q, opt0), Rcode.NOTIMP],
    [bytes(header(1, 0x1000, 1, { ar: 1 }), [1, 0x61, 0xc0, 4], QTYPE_A_IN, opt0), Rcode.NOTIMP],
    [bytes(header(1, 0, 2, { ar: 1 }), q, wireName("b"), QTYPE_A_IN, opt0), Rcode.FORMERR],
    [bytes(header(1, 0, 1, { ar: 1 }), [1, 0x61, 0xc0, 4], QTYPE_A_IN, opt0), Rcode.FORMERR],
  ] as const) {
    const f = failed(buf, rcode);
    assert.deepEqual([f.edns, f.do], [true, true], `rcode ${rcode}`);
  }
});

test("a refused packet in a larger receive slot: only its own octets are walked for the OPT record", () => {
  const q = bytes(wireName("a.example"), QTYPE_A_IN);
  // The batched engine scans a slot of 4096 octets holding a shorter packet; what follows it is
  // whatever an earlier, longer packet left there.
  for (const [packet, rcode] of [
    [bytes(header(1, 0x2800, 1, { ar: 1 }), q, optRR({ version: 1, do: true })), Rcode.BADVERS],
    [bytes(header(1, 0x2800, 1, { ar: 1 }), q, optRR({ do: true })), Rcode.NOTIMP],
  ] as const) {
    const slot = Buffer.alloc(4096, 0xab);
    packet.copy(slot);
    const f = scanQuery(slot, undefined, packet.length);
    assert.ok("drop" in f && !f.drop, "refused");
    assert.deepEqual([f.rcode, f.edns, f.do], [rcode, true, true]);
  }
});

test("errorReply: BADVERS carries the upper rcode bits in an OPT", () => {
  const buf = bytes(
    header(0xabcd, 0x0110, 1, { ar: 1 }),
    wireName("A.Example"),
    QTYPE_A_IN,
    optRR({ version: 1, do: true }),
  );
  const reply = errorReply(buf, failed(buf, Rcode.BADVERS));
  const qlen = wireName("A.Example").length + 4;
  assert.equal(reply.length, 12 + qlen + 11);
  assert.deepEqual([...reply.subarray(0, 12)], [0xab, 0xcd, 0x81, 0x10, 0, 1, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual(reply.subarray(12, 12 + qlen), buf.subarray(12, 12 + qlen));
  // OPT: root, type 41, class 1232, TTL 0x01 (BADVERS >> 4), version 0, DO, no rdata.
  assert.deepEqual([...reply.subarray(12 + qlen)], [0, 0, 41, 0x04, 0xd0, 0x01, 0, 0x80, 0, 0, 0]);
  const m = decode(reply);
  assert.equal(m.rcode, Rcode.BADVERS);
  assert.equal(m.question[0].name, "A.Example.");
  const oracle = dns2.Packet.parse(reply);
  assert.equal(oracle.header.rcode, 16);
  assert.equal(oracle.errors.length, 0);
});

test("errorReply: FORMERR without a question, with and without OPT; NOTIMP echoes the opcode", () => {
  let buf = bytes(header(7, 0x0100, 0));
  let reply = errorReply(buf, failed(buf, Rcode.FORMERR));
  assert.deepEqual([...reply], [0, 7, 0x81, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]);

  buf = bytes(header(7, 0x0000, 0, { ar: 1 }), optRR());
  reply = errorReply(buf, failed(buf, Rcode.FORMERR));
  assert.equal(reply.length, 23);
  const m = decode(reply);
  assert.equal(m.rcode, Rcode.FORMERR);
  assert.deepEqual(m.edns, { udpSize: 1232, version: 0, do: false, options: [] });

  buf = query("zone.example.", { flags: 0x2910 }); // UPDATE, RD, CD
  reply = errorReply(buf, failed(buf, Rcode.NOTIMP));
  const n = decode(reply);
  assert.equal(n.opcode, 5);
  assert.equal(n.qr, true);
  assert.equal(n.rcode, Rcode.NOTIMP);
  assert.deepEqual(n.question, [{ name: "zone.example.", type: 1, class: 1 }]);
  // RD and CD are QUERY's bits: an unknown opcode's reply clears them; a QUERY's error keeps them.
  assert.deepEqual([n.rd, n.cd], [false, false]);
  for (const opcode of [1, 2, 3, 5, 15]) {
    buf = query("zone.example.", { flags: (opcode << 11) | 0x0110 });
    const r = decode(errorReply(buf, failed(buf, Rcode.NOTIMP)));
    assert.deepEqual([r.opcode, r.rd, r.cd], [opcode, false, false]);
  }
  buf = query("zone.example.", { flags: 0x0110, type: Type.MAILA });
  const q = decode(errorReply(buf, failed(buf, Rcode.NOTIMP)));
  assert.deepEqual([q.rd, q.cd], [true, true]);
});

test("QTYPEs no query may ask for: 0, OPT and TSIG FORMERR; TKEY, MAILB, MAILA NOTIMP", () => {
  const cases: [number, number][] = [
    [0, Rcode.FORMERR],
    [Type.OPT, Rcode.FORMERR],
    [Type.TSIG, Rcode.FORMERR],
    [Type.TKEY, Rcode.NOTIMP],
    [Type.MAILB, Rcode.NOTIMP],
    [Type.MAILA, Rcode.NOTIMP],
  ];
  for (const [type, rcode] of cases) {
    const buf = query("example.org.", { type });
    const f = failed(buf, rcode);
    assert.equal(f.questionEnd, buf.length, "the question is echoed");
  }
  for (const type of [Type.A, Type.ANY, Type.AXFR, 65535, 128]) scanned(query("example.org.", { type }));
  // The other rules come first: a malformed OPT query with QTYPE 0 is FORMERR, BADVERS wins.
  failed(
    bytes(header(1, 0, 1, { ar: 1 }), wireName("a"), [0, 0, 0, 1], optRR({ version: 1 })),
    Rcode.BADVERS,
  );
});

/** A TSIG record: owner (wire octets), algorithm name, time signed, fudge, MAC, original ID. */
function tsigRR(
  owner: number[],
  opts: { mac?: number; origId?: number; alg?: number[]; other?: number[] } = {},
) {
  const alg = opts.alg ?? wireName("hmac-sha256");
  const mac = Array.from({ length: opts.mac ?? 32 }, (_, i) => i);
  const origId = opts.origId ?? 0x1234;
  const other = opts.other ?? [];
  const rdata = [
    ...alg,
    ...[0, 0, 0x65, 0x43, 0x21, 0x0f], // time signed
    1,
    0x2c, // fudge 300
    mac.length >> 8,
    mac.length & 0xff,
    ...mac,
    origId >> 8,
    origId & 0xff,
    0,
    0, // error
    other.length >> 8,
    other.length & 0xff,
    ...other,
  ];
  return [...owner, 0, 250, 0, 255, 0, 0, 0, 0, rdata.length >> 8, rdata.length & 0xff, ...rdata];
}

test("TSIG: last in the additional section or FORMERR; a well-formed one gets NOTAUTH", () => {
  const q = bytes(wireName("a.example"), QTYPE_A_IN);
  const key = wireName("key.example");
  const bad: [string, Buffer][] = [
    ["in the answer section", bytes(header(1, 0, 1, { an: 1 }), q, tsigRR(key))],
    ["in the authority section", bytes(header(1, 0, 1, { ns: 1 }), q, tsigRR(key))],
    ["before the OPT record", bytes(header(1, 0, 1, { ar: 2 }), q, tsigRR(key), optRR())],
    ["two of them", bytes(header(1, 0, 1, { ar: 2 }), q, tsigRR(key), tsigRR(key))],
    ["MAC longer than the rdata", bytes(header(1, 0, 1, { ar: 1 }), q, tsigRR(key).slice(0, -3))],
    ["other data cut", bytes(header(1, 0, 1, { ar: 1 }), q, tsigRR(key, { other: [1, 2] }).slice(0, -1))],
  ];
  for (const [what, buf] of bad) {
    if (what === "MAC longer than the rdata" || what === "other data cut") {
      // Cut rdata: shorten its RDLENGTH too, so only the TSIG rdata is wrong.
      const at = 12 + q.length + key.length + 8;
      buf.writeUInt16BE(buf.readUInt16BE(at) - (what === "other data cut" ? 1 : 3), at);
    }
    const f = failed(buf, Rcode.FORMERR);
    assert.equal(f.tsig, -1, what);
  }
  const ok = bytes(header(1, 0, 1, { ar: 2 }), q, optRR(), tsigRR(key));
  const f = failed(ok, Rcode.NOTAUTH);
  assert.equal(f.tsig, 12 + q.length + 11);
  // A TSIG wins over a meta QTYPE, not over BADVERS (RFC 6891 6.1.3, as BIND) nor an unknown opcode.
  const v1 = failed(bytes(header(1, 0, 1, { ar: 2 }), q, optRR({ version: 1 }), tsigRR(key)), Rcode.BADVERS);
  assert.equal(v1.tsig, -1);
  failed(bytes(header(1, 0, 1, { ar: 1 }), wireName("a"), [0, 41, 0, 1], tsigRR(key)), Rcode.NOTAUTH);
  const update = failed(bytes(header(1, 0x2800, 1, { ar: 1 }), q, tsigRR(key)), Rcode.NOTIMP);
  assert.equal(update.tsig, -1);
});

test("errorReply to a TSIG query: NOTAUTH, unsigned TSIG with error BADKEY (RFC 8945 5.3.2)", () => {
  const q = bytes(wireName("A.Example"), QTYPE_A_IN);
  // The key name compressed against the question (a.example -> key + pointer), the algorithm whole.
  const buf = bytes(
    header(0x4321, 0x0110, 1, { ar: 2 }),
    q,
    optRR({ do: true }),
    tsigRR([3, 0x6b, 0x65, 0x79, 0xc0, 12], { origId: 0x9999 }),
  );
  const reply = errorReply(buf, failed(buf, Rcode.NOTAUTH));
  const m = decode(reply);
  assert.deepEqual([m.id, m.rcode, m.rd, m.cd, m.qr], [0x4321, Rcode.NOTAUTH, true, true, true]);
  assert.deepEqual(m.edns, { udpSize: 1232, version: 0, do: true, options: [] });
  assert.equal(m.additional.length, 1);
  const t = m.additional[0];
  assert.deepEqual([t.name, t.type, t.class, t.ttl], ["key.A.Example.", 250, 255, 0]);
  const alg = wireName("hmac-sha256");
  const expected = [...alg, 0, 0, 0x65, 0x43, 0x21, 0x0f, 1, 0x2c, 0, 0, 0x99, 0x99, 0, 17, 0, 0];
  assert.deepEqual([...(t.data as { raw: Uint8Array }).raw], expected);
  // Written whole: the reply holds no compression pointer after the question.
  assert.ok(!reply.subarray(12 + q.length).includes(0xc0));
  // dns2 reads it too.
  assert.equal(dns2.Packet.parse(reply).errors.length, 0);
});

test("errorReply: a TSIG record that would take the reply past 512 octets is left out", () => {
  const long = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join(".");
  const q = bytes(wireName(long), QTYPE_A_IN);
  const buf = bytes(header(1, 0, 1, { ar: 1 }), q, tsigRR(wireName(long), { alg: wireName(long) }));
  const reply = errorReply(buf, failed(buf, Rcode.NOTAUTH));
  assert.equal(reply.length, 12 + q.length);
  const m = decode(reply);
  assert.deepEqual([m.rcode, m.additional.length], [Rcode.NOTAUTH, 0]);
});

test("skipName: backward chains pass; forward, looping and overlong ones fail", () => {
  // "b" at 0, "a" + pointer to 0 at 3, pointer to 3 at 7.
  const b = Buffer.from([1, 0x62, 0, 1, 0x61, 0xc0, 0, 0xc0, 3]);
  assert.equal(skipName(b, 0, b.length), 3);
  assert.equal(skipName(b, 3, b.length), 7);
  assert.equal(skipName(b, 7, b.length), 9);
  assert.equal(skipName(b, 7, 8), -1, "the pointer itself must lie within the limit");
  assert.equal(skipName(Buffer.from([0xc0, 2, 0]), 0, 3), -1, "forward");
  assert.equal(skipName(Buffer.from([1, 0x61, 0xc0, 0]), 0, 4), -1, "loop through its own start");
  // A chain that goes back then tries to return to where it came from.
  assert.equal(skipName(Buffer.from([0xc0, 2, 1, 0x61, 0xc0, 0]), 4, 6), -1);
  // 129 labels of 1 reached through 1-octet hops are over 255 octets.
  const long = Buffer.alloc(300);
  for (let i = 0; i < 298; i += 2) long[i] = 1;
  assert.equal(skipName(long, 0, long.length), -1);
  assert.equal(skipName(Buffer.from([1, 0x61]), 0, 2), -1, "no terminator");
});

test("a reply to every failure fits 512 octets and holds only what it must", () => {
  const name = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join(".");
  const buf = bytes(header(1, 0x1000, 1, { ar: 1 }), wireName(name), QTYPE_A_IN, optRR({ do: true }));
  const f = failed(buf, Rcode.NOTIMP);
  const reply = errorReply(buf, f);
  assert.equal(reply.length, 12 + 259 + 11);
  assert.ok(reply.length <= 512);
  assert.equal(reply[11], 1);
  assert.equal(reply[12 + 259 + 5], 0, "NOTIMP needs no extended rcode bits");
});

test("spelledQname: the client's spelling when it has capitals, nothing when it is canonical", () => {
  const q = (name: string) => bytes(header(1, 0x0100, 1), wireName(name), QTYPE_A_IN);
  const spelled = (name: string) => {
    const buf = q(name);
    const s = scanQuery(buf) as Scanned;
    return spelledQname(buf, s.questionEnd);
  };
  assert.equal(spelled("web.default.svc.cluster.local"), undefined);
  assert.equal(
    spelled("_http._tcp.Web.default.svc.CLUSTER.local"),
    "_http._tcp.Web.default.svc.CLUSTER.local.",
  );
  assert.equal(spelled(""), undefined);
  assert.equal(spelled("A"), "A.");
  // Escaped as the canonical name is, so that lowercasing it gives that name.
  const buf = bytes(header(1, 0x0100, 1), [3, 0x41, 0x2e, 0x01, 0], QTYPE_A_IN);
  const s = scanQuery(buf) as Scanned;
  assert.equal(spelledQname(buf, s.questionEnd), "A\\.\\001.");
  assert.equal(spelledQname(buf, s.questionEnd)!.toLowerCase(), s.qname);
});

test("keyApartForIPv4: another key and hash, the state's other bits kept, and a copy keeps it", () => {
  const packet = encode(queryMsg("www.example.org.", Type.AAAA, { id: 1 }));
  const s = scanQuery(packet, new ScannedQuery()) as ScannedQuery;
  const [key, hash, state] = [s.key, s.keyHash, s.keyState];
  s.keyApartForIPv4();
  assert.notEqual(s.key, key);
  assert.notEqual(s.keyHash, hash);
  assert.equal(s.key.slice(0, -1), key.slice(0, -1), "the same question");
  assert.equal(s.keyState, state & ~IPV4_APART);
  assert.equal(s.keyState & 0x0f, state & 0x0f, "EDNS, DO, local option and CD bits as they were");
  const c = s.copy();
  assert.deepEqual([c.key, c.keyHash], [s.key, s.keyHash]);
});
