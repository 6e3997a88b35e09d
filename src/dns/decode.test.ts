import { test } from "node:test";
import assert from "node:assert/strict";
import dns2 from "dns2";
import { decode, DecodeError } from "./decode.ts";
import { encode } from "./encode.ts";
import { Rcode, Type } from "./constants.ts";

const { Packet } = dns2;

function bytes(...parts: (number[] | Buffer)[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p)));
}

function header(flags: number, qd: number, an = 0, ns = 0, ar = 0): number[] {
  return [0x12, 0x34, flags >> 8, flags & 0xff, 0, qd, 0, an, 0, ns, 0, ar];
}

function wireName(name: string): number[] {
  const out: number[] = [];
  for (const l of name.split(".").filter(Boolean)) out.push(l.length, ...Buffer.from(l, "latin1"));
  out.push(0);
  return out;
}

/** A record: owner octets, type, class IN, TTL, rdata. */
function record(owner: number[], type: number, rdata: number[], ttl = 60): number[] {
  return [
    ...owner,
    type >> 8,
    type & 0xff,
    0,
    1,
    ttl >>> 24,
    (ttl >> 16) & 0xff,
    (ttl >> 8) & 0xff,
    ttl & 0xff,
    rdata.length >> 8,
    rdata.length & 0xff,
    ...rdata,
  ];
}

const Q = [...wireName("example.org"), 0, 1, 0, 1];
const QNAME_AT = 12;

function rejects(buf: Uint8Array, what: string): void {
  assert.throws(
    () => decode(buf),
    (e: unknown) => e instanceof DecodeError && e.code === "CDNS_ERR_DECODE",
    what,
  );
}

test("decodes what dns2, an independent encoder, builds (with its name compression)", () => {
  const p = new Packet();
  p.header.id = 0xbeef;
  p.header.qr = 1;
  p.header.aa = 1;
  p.header.rd = 1;
  p.header.ra = 1;
  p.questions.push({ name: "example.org", type: Type.MX, class: 1 } as never);
  const answers = [
    { name: "example.org", type: Type.A, class: 1, ttl: 300, address: "192.0.2.1" },
    { name: "example.org", type: Type.AAAA, class: 1, ttl: 300, address: "2001:db8:0:0:0:0:0:1" },
    { name: "example.org", type: Type.NS, class: 1, ttl: 300, ns: "ns1.example.org" },
    { name: "www.example.org", type: Type.CNAME, class: 1, ttl: 300, domain: "example.org" },
    { name: "1.2.0.192.in-addr.arpa", type: Type.PTR, class: 1, ttl: 300, domain: "example.org" },
    { name: "example.org", type: Type.MX, class: 1, ttl: 300, priority: 10, exchange: "mail.example.org" },
    { name: "example.org", type: Type.TXT, class: 1, ttl: 300, data: ["hello", "world"] },
    {
      name: "_x._tcp.example.org",
      type: Type.SRV,
      class: 1,
      ttl: 300,
      priority: 1,
      weight: 2,
      port: 3,
      target: "example.org",
    },
    { name: "example.org", type: Type.CAA, class: 1, ttl: 300, flags: 0, tag: "issue", value: "ca.example" },
  ];
  for (const a of answers) p.answers.push(a as never);
  p.authorities.push({
    name: "example.org",
    type: Type.SOA,
    class: 1,
    ttl: 60,
    primary: "ns1.example.org",
    admin: "hostmaster.example.org",
    serial: 2024010101,
    refresh: 7200,
    retry: 3600,
    expiration: 1209600,
    minimum: 30,
  } as never);
  p.additionals.push(Packet.Resource.EDNS([], { doFlag: true, udpPayloadSize: 1232 }) as never);
  const m = decode(p.toBuffer());
  assert.deepEqual(m, {
    id: 0xbeef,
    qr: true,
    opcode: 0,
    aa: true,
    tc: false,
    rd: true,
    ra: true,
    ad: false,
    cd: false,
    rcode: 0,
    question: [{ name: "example.org.", type: Type.MX, class: 1 }],
    answer: [
      { name: "example.org.", type: 1, class: 1, ttl: 300, data: { type: 1, address: "192.0.2.1" } },
      { name: "example.org.", type: 28, class: 1, ttl: 300, data: { type: 28, address: "2001:db8::1" } },
      { name: "example.org.", type: 2, class: 1, ttl: 300, data: { type: 2, target: "ns1.example.org." } },
      { name: "www.example.org.", type: 5, class: 1, ttl: 300, data: { type: 5, target: "example.org." } },
      {
        name: "1.2.0.192.in-addr.arpa.",
        type: 12,
        class: 1,
        ttl: 300,
        data: { type: 12, target: "example.org." },
      },
      {
        name: "example.org.",
        type: 15,
        class: 1,
        ttl: 300,
        data: { type: 15, preference: 10, exchange: "mail.example.org." },
      },
      { name: "example.org.", type: 16, class: 1, ttl: 300, data: { type: 16, strings: ["hello", "world"] } },
      {
        name: "_x._tcp.example.org.",
        type: 33,
        class: 1,
        ttl: 300,
        data: { type: 33, priority: 1, weight: 2, port: 3, target: "example.org." },
      },
      {
        name: "example.org.",
        type: 257,
        class: 1,
        ttl: 300,
        data: { type: 257, flags: 0, tag: "issue", value: "ca.example" },
      },
    ],
    authority: [
      {
        name: "example.org.",
        type: 6,
        class: 1,
        ttl: 60,
        data: {
          type: 6,
          mname: "ns1.example.org.",
          rname: "hostmaster.example.org.",
          serial: 2024010101,
          refresh: 7200,
          retry: 3600,
          expire: 1209600,
          minimum: 30,
        },
      },
    ],
    additional: [],
    edns: { udpSize: 1232, version: 0, do: true, options: [] },
  });
});

test("names keep their case, follow backward pointers, and may hold any octet, escaped", () => {
  const buf = bytes(
    header(0x8180, 1, 2),
    wireName("ExAmple.org"),
    [0, 15, 0, 1],
    // MX whose exchange is "mail" + pointer to the question name.
    record([0xc0, QNAME_AT], Type.MX, [0, 5, 4, ...Buffer.from("mail"), 0xc0, QNAME_AT]),
    // A pointer to a pointer: owner -> the MX exchange (which itself points back).
    record([0xc0, 12 + 17 + 12 + 2], Type.A, [1, 2, 3, 4]),
  );
  const m = decode(buf);
  assert.equal(m.question[0].name, "ExAmple.org.");
  assert.deepEqual(m.answer[0].data, { type: Type.MX, preference: 5, exchange: "mail.ExAmple.org." });
  assert.equal(m.answer[1].name, "mail.ExAmple.org.");
  const odd = decode(bytes(header(0, 1), [3, 0x00, 0xff, 0x20, 0], [0, 1, 0, 1]));
  assert.equal(odd.question[0].name, "\\000\\255\\032.");
  // A label holding "." or "\\" (RFC 2181 11): one label, told apart from two by its escape.
  const dotted = decode(bytes(header(0, 1), [3, 0x61, 0x2e, 0x42, 2, 0x5c, 0x63, 0], [0, 1, 0, 1]));
  assert.equal(dotted.question[0].name, "a\\.B.\\\\c.");
  // Encoded again, the same octets.
  assert.deepEqual(encode(dotted).subarray(12), bytes([3, 0x61, 0x2e, 0x42, 2, 0x5c, 0x63, 0], [0, 1, 0, 1]));
});

test("OPT: extended rcode, version, DO and opaque options", () => {
  const opt = [
    0, 0, 41, 0x10, 0x00, 0x01, 0x02, 0x80, 0x00, 0, 10, 0, 10, 0, 2, 0xaa, 0xbb, 0xff, 0xf0, 0, 0,
  ];
  const m = decode(bytes(header(0x8003, 1, 0, 0, 1), Q, opt));
  assert.equal(m.rcode, Rcode.BADVERS | 3);
  assert.deepEqual(m.edns, {
    udpSize: 4096,
    version: 2,
    do: true,
    options: [
      { code: 10, data: new Uint8Array([0xaa, 0xbb]) },
      { code: 0xfff0, data: new Uint8Array(0) },
    ],
  });
  assert.deepEqual(m.additional, []);
});

test("TTLs with the top bit set read as 0; unknown rdata is copied, not shared", () => {
  const buf = bytes(
    header(0x8000, 1, 2),
    Q,
    record([0xc0, 12], Type.A, [1, 2, 3, 4], 0x80000000),
    record([0xc0, 12], 4660, [9, 8, 7]),
  );
  const m = decode(new Uint8Array(buf)); // a plain Uint8Array works too
  assert.equal(m.answer[0].ttl, 0);
  assert.deepEqual(m.answer[1].data, { type: 4660, raw: new Uint8Array([9, 8, 7]) });
  buf.fill(0);
  assert.deepEqual(m.answer[1].data, { type: 4660, raw: new Uint8Array([9, 8, 7]) });
});

test("malformed messages throw CDNS_ERR_DECODE", () => {
  const own = [0xc0, QNAME_AT];
  const cases: [string, Buffer][] = [
    ["runt", Buffer.alloc(11)],
    ["QDCOUNT past the end", bytes(header(0, 2), Q)],
    ["ANCOUNT past the end", bytes(header(0, 1, 1), Q)],
    ["trailing octets", bytes(header(0, 1), Q, [0])],
    ["forward pointer", bytes(header(0, 1), [0xc0, 14, 1, 0x61, 0], [0, 1, 0, 1])],
    ["pointer to itself", bytes(header(0, 1), [0xc0, 12], [0, 1, 0, 1])],
    ["pointer loop", bytes(header(0, 1, 1), Q, record([1, 0x61, 0xc0, 12 + Q.length], Type.A, [1, 2, 3, 4]))],
    ["label of 64", bytes(header(0, 1), wireName("a".repeat(64)), [0, 1, 0, 1])],
    ["name over 255", bytes(header(0, 1), wireName(`${"a".repeat(63)}.`.repeat(4)), [0, 1, 0, 1])],
    ["label type 0x40", bytes(header(0, 1), [0x40, 0], [0, 1, 0, 1])],
    ["A of 5 octets", bytes(header(0, 1, 1), Q, record(own, Type.A, [1, 2, 3, 4, 5]))],
    ["AAAA of 4 octets", bytes(header(0, 1, 1), Q, record(own, Type.AAAA, [1, 2, 3, 4]))],
    ["CNAME shorter than rdata", bytes(header(0, 1, 1), Q, record(own, Type.CNAME, [0, 0]))],
    ["CNAME running past rdata", bytes(header(0, 1, 1), Q, record(own, Type.CNAME, [1, 0x61]), [0])],
    ["MX without a name", bytes(header(0, 1, 1), Q, record(own, Type.MX, [0, 1]))],
    ["SOA short", bytes(header(0, 1, 1), Q, record(own, Type.SOA, [0, 0, 1, 2, 3]))],
    ["SRV short", bytes(header(0, 1, 1), Q, record(own, Type.SRV, [0, 1, 0, 2, 0, 3]))],
    ["TXT overrun", bytes(header(0, 1, 1), Q, record(own, Type.TXT, [5, 0x61]))],
    ["CAA tag overrun", bytes(header(0, 1, 1), Q, record(own, Type.CAA, [0, 9, 0x61]))],
    ["CAA of 1 octet", bytes(header(0, 1, 1), Q, record(own, Type.CAA, [0]))],
    ["rdata past the end", bytes(header(0, 1, 1), Q, record(own, Type.A, [1, 2, 3, 4]).slice(0, -1))],
    ["OPT in answer", bytes(header(0, 1, 1), Q, [0, 0, 41, 2, 0, 0, 0, 0, 0, 0, 0])],
    [
      "two OPTs",
      bytes(header(0, 1, 0, 0, 2), Q, [0, 0, 41, 2, 0, 0, 0, 0, 0, 0, 0], [0, 0, 41, 2, 0, 0, 0, 0, 0, 0, 0]),
    ],
    ["OPT not at the root", bytes(header(0, 1, 0, 0, 1), Q, [0xc0, 12, 0, 41, 2, 0, 0, 0, 0, 0, 0, 0])],
    [
      "OPT option overrun",
      bytes(header(0, 1, 0, 0, 1), Q, [0, 0, 41, 2, 0, 0, 0, 0, 0, 0, 6, 0, 10, 0, 4, 1, 2]),
    ],
    ["OPT option header cut", bytes(header(0, 1, 0, 0, 1), Q, [0, 0, 41, 2, 0, 0, 0, 0, 0, 0, 2, 0, 10])],
    ["huge counts", bytes([0, 0, 0x81, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], Q)],
  ];
  for (const [what, buf] of cases) rejects(buf, what);
});

test("every proper prefix of a valid message is rejected", () => {
  const buf = bytes(
    header(0x8180, 1, 2, 0, 1),
    Q,
    record([0xc0, 12], Type.MX, [0, 5, 4, ...Buffer.from("mail"), 0xc0, 12]),
    record([0xc0, 12], Type.TXT, [2, 0x68, 0x69]),
    [0, 0, 41, 4, 0xd0, 0, 0, 0x80, 0, 0, 4, 0, 10, 0, 0],
  );
  assert.equal(decode(buf).answer.length, 2);
  for (let n = 0; n < buf.length; n++) rejects(buf.subarray(0, n), `prefix of ${n}`);
});
