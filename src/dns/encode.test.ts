import { test } from "node:test";
import assert from "node:assert/strict";
import dns2 from "dns2";
import { encode, encodeInto, encoded, EncodeError } from "./encode.ts";
import { decode } from "./decode.ts";
import { scanQuery } from "./scan.ts";
import type { Edns, Msg, RData, RR } from "./message.ts";
import { Rcode, Type } from "./constants.ts";
import { expandIPv6, nameToWire } from "./name.ts";
import { queryMsg } from "../../test/helpers/query-msg.ts";

/** A reply for example.org. A: QR, AA and RD set. */
function msg(over: Partial<Msg> = {}): Msg {
  return queryMsg("example.org.", Type.A, { id: 0x4242, qr: true, aa: true, ...over });
}

function rr(name: string, data: RData, ttl = 300, cls = 1): RR {
  return { name, type: data.type, class: cls, ttl, data };
}

/** One record of every shape RData has, plus unknown types kept raw. */
const everyType: RR[] = [
  rr("a.example.org.", { type: Type.A, address: "192.0.2.1" }),
  rr("a.example.org.", { type: Type.AAAA, address: "2001:db8::1" }),
  rr("a.example.org.", { type: Type.AAAA, address: "::" }),
  rr("a.example.org.", { type: Type.AAAA, address: "fd00:1:2:3:4:5:6:7" }),
  rr("example.org.", { type: Type.NS, target: "ns1.example.org." }),
  rr("www.example.org.", { type: Type.CNAME, target: "a.example.org." }),
  rr("1.2.0.192.in-addr.arpa.", { type: Type.PTR, target: "a.example.org." }),
  rr("example.org.", { type: Type.MX, preference: 10, exchange: "mail.example.org." }),
  rr("example.org.", {
    type: Type.SOA,
    mname: "ns1.example.org.",
    rname: "hostmaster.example.org.",
    serial: 0xfffffffe,
    refresh: 7200,
    retry: 1800,
    expire: 86400,
    minimum: 30,
  }),
  rr("example.org.", { type: Type.TXT, strings: ["v=spf1 -all", "", "binary \u0000\u00ff\u0080"] }),
  rr("_http._tcp.example.org.", {
    type: Type.SRV,
    priority: 0,
    weight: 100,
    port: 8080,
    target: "a.example.org.",
  }),
  rr("example.org.", { type: Type.CAA, flags: 128, tag: "issue", value: "letsencrypt.org; x=\u00e9" }),
  rr("example.org.", { type: 65280, raw: new Uint8Array([1, 2, 3, 0xff]) }),
  rr("example.org.", { type: Type.HINFO, raw: new Uint8Array([3, 0x61, 0x62, 0x63, 0]) }),
  rr("example.org.", { type: 99, raw: new Uint8Array(0) }),
  rr("version.bind.", { type: Type.TXT, strings: ["clusterdns"] }, 0, 3),
];

test("round trip: every record type through encode and decode", () => {
  const edns: Edns = {
    udpSize: 1232,
    version: 0,
    do: true,
    options: [
      { code: 10, data: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) },
      { code: 65001, data: new Uint8Array(0) },
    ],
  };
  const m = msg({
    answer: everyType,
    authority: [everyType[8]],
    additional: [everyType[0], everyType[1]],
    edns,
    ad: true,
    cd: true,
    ra: true,
  });
  assert.deepEqual(decode(encode(m)), m);
  // Each type alone too, in each section.
  for (const r of everyType) {
    for (const section of ["answer", "authority", "additional"] as const) {
      const one = msg({ [section]: [r] });
      assert.deepEqual(decode(encode(one)), one, `${r.type} in ${section}`);
    }
  }
});

test("round trip: header fields, extended rcodes, names at the root", () => {
  for (const rcode of [0, 3, 15, Rcode.BADVERS, 23, 0xfff]) {
    const m = msg({ rcode, edns: { udpSize: 4096, version: 0, do: false, options: [] } });
    assert.deepEqual(decode(encode(m)), m);
  }
  const m = msg({
    id: 0xffff,
    qr: false,
    opcode: 5,
    aa: false,
    tc: true,
    rd: false,
    question: [{ name: ".", type: Type.NS, class: 255 }],
    answer: [rr(".", { type: Type.NS, target: "a.root-servers.net." })],
  });
  assert.deepEqual(decode(encode(m)), m);
});

/** dns2's view of a record, in the shape our RData has. */
function fromDns2(r: Record<string, unknown>): RData {
  switch (r.type) {
    case Type.A:
      return { type: r.type, address: r.address as string };
    case Type.AAAA:
      return { type: r.type, address: r.address as string };
    case Type.NS:
      return { type: r.type, target: r.ns + "." };
    case Type.CNAME:
    case Type.PTR:
      return { type: r.type, target: r.domain + "." };
    case Type.MX:
      return { type: r.type, preference: r.priority as number, exchange: r.exchange + "." };
    case Type.SOA:
      return {
        type: r.type,
        mname: r.primary + ".",
        rname: r.admin + ".",
        serial: r.serial as number,
        refresh: r.refresh as number,
        retry: r.retry as number,
        expire: r.expiration as number,
        minimum: r.minimum as number,
      };
    case Type.TXT:
      return { type: r.type, strings: r.data as string[] };
    case Type.SRV:
      return {
        type: r.type,
        priority: r.priority as number,
        weight: r.weight as number,
        port: r.port as number,
        target: r.target + ".",
      };
    case Type.CAA:
      return { type: r.type, flags: r.flags as number, tag: r.tag as string, value: r.value as string };
  }
  return { type: r.type as number, raw: new Uint8Array(r.data as Buffer) };
}

test("dns2, an independent decoder, reads our bytes as the same records", () => {
  // dns2 decodes strings as UTF-8, so this set stays ASCII.
  const records = everyType.filter((r) => r.type !== Type.HINFO && r.class === 1);
  const ascii = records.map((r) =>
    r.data.type === Type.TXT && "strings" in r.data
      ? rr(r.name, { type: Type.TXT, strings: ["a", "", "b c"] })
      : r,
  );
  const caa = rr("example.org.", { type: Type.CAA, flags: 0, tag: "issue", value: "ca.example" });
  const m = msg({
    rcode: Rcode.BADVERS,
    answer: [...ascii.filter((r) => r.type !== Type.CAA), caa],
    authority: [ascii[8]],
    edns: { udpSize: 1232, version: 0, do: true, options: [] },
  });
  const p = dns2.Packet.parse(encode(m));
  assert.deepEqual(p.errors, []);
  assert.equal(p.header.id, m.id);
  assert.equal(p.header.qr, 1);
  assert.equal(p.header.aa, 1);
  assert.equal(p.header.rd, 1);
  assert.equal(p.header.rcode, Rcode.BADVERS);
  assert.deepEqual(
    p.questions.map((q) => ({ ...q })),
    [{ name: "example.org", type: Type.A, class: 1 }],
  );
  const seen = (list: Record<string, unknown>[]) =>
    list.map((r) => ({ name: r.name + ".", type: r.type, class: r.class, ttl: r.ttl, data: fromDns2(r) }));
  assert.deepEqual(seen(p.answers as never), m.answer);
  assert.deepEqual(seen(p.authorities as never), m.authority);
  assert.equal(p.additionals.length, 1);
  const opt = p.additionals[0] as unknown as Record<string, unknown>;
  assert.equal(opt.type, Type.OPT);
  assert.equal(opt.class, 1232);
  assert.equal(opt.doFlag, true);
  assert.equal(opt.version, 0);
  assert.equal(opt.extendedRcode, 1);
});

/** Offsets of every compression pointer in a name that starts at `at`, following none. */
function namePointer(b: Buffer, at: number): number | undefined {
  for (let p = at; b[p] !== 0; p += b[p] + 1) {
    if (b[p] >= 0xc0) return ((b[p] & 0x3f) << 8) | b[p + 1];
  }
  return undefined;
}

test("compression: repeated owners point at the question, case-insensitively", () => {
  const name = "nginx.default.svc.cluster.local.";
  const answer = Array.from({ length: 10 }, (_, i) =>
    rr(i % 2 ? name.toUpperCase() : name, { type: Type.A, address: `10.0.0.${i}` }),
  );
  const b = encode(msg({ question: [{ name, type: Type.A, class: 1 }], answer }));
  const qlen = name.length + 1;
  // Header, question, then 10 records of pointer (2) + fixed (10) + address (4).
  assert.equal(b.length, 12 + qlen + 4 + 10 * 16);
  for (let i = 0; i < 10; i++) {
    const at = 12 + qlen + 4 + i * 16;
    assert.deepEqual([b[at], b[at + 1]], [0xc0, 12]);
  }
  // Without compression it would have been much larger.
  assert.ok(b.length < 12 + qlen + 4 + 10 * (qlen + 14));
});

test("compression: names inside NS, CNAME, PTR, MX and SOA point back; SRV targets never do", () => {
  const zone = "cluster.local.";
  const target = "web-0.web.default.svc.cluster.local.";
  const srv = rr("_http._tcp.web.default.svc.cluster.local.", {
    type: Type.SRV,
    priority: 0,
    weight: 100,
    port: 80,
    target,
  });
  const m = msg({
    question: [{ name: "_http._tcp.web.default.svc.cluster.local.", type: Type.SRV, class: 1 }],
    answer: [
      srv,
      srv,
      rr(target, { type: Type.CNAME, target: "web.default.svc.cluster.local." }),
      rr("1.0.0.10.in-addr.arpa.", { type: Type.PTR, target }),
      rr(zone, { type: Type.NS, target: "ns.dns." + zone }),
      rr(zone, { type: Type.MX, preference: 1, exchange: "mx." + zone }),
    ],
    authority: [
      rr(zone, {
        type: Type.SOA,
        mname: "ns.dns." + zone,
        rname: "hostmaster." + zone,
        serial: 1,
        refresh: 2,
        retry: 3,
        expire: 4,
        minimum: 5,
      }),
    ],
    additional: [rr(target, { type: Type.A, address: "10.0.0.1" })],
  });
  const b = encode(m);
  assert.deepEqual(decode(b), m);

  // Walk the records and look at each name's encoding.
  const wireTarget = Buffer.from([
    5,
    ...Buffer.from("web-0"),
    3,
    ...Buffer.from("web"),
    7,
    ...Buffer.from("default"),
  ]);
  let p = 12 + m.question[0].name.length + 1 + 4;
  const rdataOf: { type: number; at: number; end: number; owner: number }[] = [];
  for (let i = 0; i < 8; i++) {
    const owner = p;
    while (b[p] !== 0 && b[p] < 0xc0) p += b[p] + 1;
    p += b[p] === 0 ? 1 : 2;
    const type = b.readUInt16BE(p);
    const end = p + 10 + b.readUInt16BE(p + 8);
    rdataOf.push({ type, at: p + 10, end, owner });
    p = end;
  }
  assert.equal(p, b.length);
  for (const r of rdataOf.filter((x) => x.type === Type.SRV)) {
    const t = b.subarray(r.at + 6, r.end);
    // Uncompressed: the full name in place, ending with the root label, no pointer.
    assert.equal(t.length, target.length + 1);
    assert.deepEqual(t.subarray(0, wireTarget.length), wireTarget);
    assert.equal(namePointer(b, r.at + 6), undefined);
  }
  const compressedIn = (type: number, skip: number) => {
    const r = rdataOf.find((x) => x.type === type);
    assert.ok(r);
    assert.notEqual(namePointer(b, r.at + skip), undefined, `name in type ${type} is compressed`);
  };
  compressedIn(Type.CNAME, 0);
  compressedIn(Type.PTR, 0);
  compressedIn(Type.NS, 0);
  compressedIn(Type.MX, 2);
  compressedIn(Type.SOA, 0);
  // The A record's owner equals the SRV target: it may point into the SRV rdata (a valid name there).
  const a = rdataOf[7];
  assert.equal(b[a.owner] & 0xc0, 0xc0);
});

test("compression: an SRV target's address record points at the target, not at the question", () => {
  // The server writes the client's spelling over the question: a name pointing there would come out
  // as `sVc1.TeStNs.SvC...`, not as the target `svc1.testns.svc.cLuStEr.LoCaL.` (CoreDNS's case test).
  const target = "svc1.testns.svc.cLuStEr.LoCaL.";
  const m = msg({
    question: [{ name: "_http._tcp.svc1.testns.svc.cluster.local.", type: Type.SRV, class: 1 }],
    answer: [
      rr("_http._tcp.svc1.testns.svc.cluster.local.", {
        type: Type.SRV,
        priority: 0,
        weight: 100,
        port: 80,
        target,
      }),
    ],
    additional: [rr(target, { type: Type.A, address: "10.0.0.1" })],
  });
  const b = encode(m);
  // As a client sees it after the server's copy of its question bytes.
  const spelled = Buffer.from(b);
  spelled.set(nameToWire("_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL.") as Uint8Array, 12);
  const got = decode(spelled);
  assert.equal(got.additional[0].name, target);
  assert.equal((got.answer[0].data as { target: string }).target, target);
});

test("encodeInto, the question from its octets, writes what encode writes when SRV targets name it", () => {
  // A service's SRV records at the service's own name and at its endpoints' names: the owners of the
  // second record and of the address point where encode() points them, at a target written whole,
  // not at the question (the wire lane encodes with encodeInto, the chain with encode).
  const q = "db.web.svc.cluster.local.";
  const srv = (target: string) => rr(q, { type: Type.SRV, priority: 0, weight: 50, port: 3306, target });
  for (const answer of [[srv(q)], [srv(`db-0.${q}`), srv(`db-1.${q}`)]]) {
    const m = msg({
      question: [{ name: q, type: Type.SRV, class: 1 }],
      answer,
      additional: [rr(q, { type: Type.A, address: "10.0.0.1" })],
    });
    const whole = encode(m);
    const key = nameToWire(q) as Uint8Array;
    const length = encodeInto(m, key, 0, key.length);
    assert.equal(Buffer.from(encoded().subarray(0, length)).toString("hex"), whole.toString("hex"));
  }
});

test("the question is written in place, as given, at offset 12", () => {
  const m = msg({
    question: [{ name: "WwW.Example.ORG.", type: Type.A, class: 1 }],
    answer: [rr("www.example.org.", { type: Type.A, address: "192.0.2.1" })],
  });
  const b = encode(m);
  assert.equal(b.toString("latin1", 12, 29), "\u0003WwW\u0007Example\u0003ORG\u0000");
  // Same length as the query's question, so a cached reply can take the client's bytes.
  const s = scanQuery(encode(msg({ qr: false, question: m.question })));
  assert.ok(!("drop" in s));
  assert.deepEqual(
    b.subarray(12, s.questionEnd),
    encode(msg({ qr: false, question: m.question })).subarray(12, s.questionEnd),
  );
});

test("a message holds at most 65535 octets: records past that are left out, TC=1 for the answer", () => {
  const name = "big.headless.default.svc.cluster.local.";
  const edns: Edns = { udpSize: 1232, version: 0, do: false, options: [] };
  const question = [{ name, type: Type.A, class: 1 }];
  // 16 octets per compressed A record: 4200 of them do not fit.
  const answer = Array.from({ length: 4200 }, (_, i) =>
    rr(name, { type: Type.A, address: `10.1.${i >> 8}.${i & 255}` }),
  );
  const b = encode(msg({ question, answer, edns }));
  assert.ok(b.length <= 65535 && b.length > 65535 - 16 - 11, `${b.length} octets`);
  const d = decode(b);
  assert.equal(d.tc, true);
  assert.deepEqual(d.answer, answer.slice(0, d.answer.length));
  assert.deepEqual(d.edns, edns);
  // Left-out additional records are no truncation (RFC 2181 9).
  const extra = encode(msg({ question, answer: answer.slice(0, 10), additional: answer, edns }));
  assert.deepEqual([decode(extra).tc, decode(extra).answer.length], [false, 10]);
  // What fits is written whole.
  const small = decode(encode(msg({ question, answer: answer.slice(0, 40), edns })));
  assert.deepEqual([small.tc, small.answer.length], [false, 40]);
});

test("compression pointers only reach offsets below 0x4000", () => {
  // ~27 KiB of distinct names, each repeated later: the copies past 0x4000 cannot be pointed at.
  const names = Array.from({ length: 400 }, (_, i) => `host-${i}-${"p".repeat(40)}.example.`);
  const answer = [...names, ...names].map((n, i) =>
    rr(n, { type: Type.A, address: `10.0.${i >> 8}.${i & 255}` }),
  );
  const m = msg({ answer });
  const b = encode(m);
  assert.ok(b.length > 0x4000);
  assert.deepEqual(decode(b), m);
});

test("TXT strings over 255 octets are split", () => {
  const long = "x".repeat(600);
  const d = decode(encode(msg({ answer: [rr("t.example.", { type: Type.TXT, strings: [long, "end"] })] })));
  assert.deepEqual(d.answer[0].data, {
    type: Type.TXT,
    strings: ["x".repeat(255), "x".repeat(255), "x".repeat(90), "end"],
  });
});

test("AAAA text forms parse as RFC 4291 says", () => {
  const forms = [
    "::",
    "::1",
    "1::",
    "2001:db8::",
    "2001:DB8:0:0:1:0:0:1",
    "fe80::1:2:3:4:5:6",
    "1:2:3:4:5:6:7:8",
    "::ffff:192.0.2.128",
    "64:ff9b::10.0.0.1",
    "1:2:3:4:5:6:1.2.3.4",
    "0000:0000:0000:0000:0000:0000:0000:0001",
  ];
  for (const f of forms) {
    const b = encode(msg({ answer: [rr("v6.", { type: Type.AAAA, address: f })] }));
    const rdata = b.subarray(b.length - 16);
    assert.equal(rdata.toString("hex"), expandIPv6(f), f);
  }
  const bad = [
    "",
    ":",
    ":::",
    "1:2",
    "1::2::3",
    "12345::",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7::8:9",
    "g::",
    "1:",
    ":1",
    "::1.2.3",
    "::1.2.3.256",
    "fe80::1%eth0",
    "1:2:3:4:5:6:7:1.2.3.4",
  ];
  for (const f of bad) {
    assert.throws(
      () => encode(msg({ answer: [rr("v6.", { type: Type.AAAA, address: f })] })),
      { code: "CDNS_ERR_ENCODE" },
      f,
    );
  }
});

test("programming errors throw CDNS_ERR_ENCODE", () => {
  const cases: [string, Msg][] = [
    [
      "label of 64",
      msg({ answer: [rr(`${"a".repeat(64)}.example.`, { type: Type.A, address: "1.2.3.4" })] }),
    ],
    ["name over 255", msg({ question: [{ name: `${"a".repeat(63)}.`.repeat(4), type: 1, class: 1 }] })],
    ["empty label", msg({ answer: [rr("a..example.", { type: Type.A, address: "1.2.3.4" })] })],
    ["target label of 64", msg({ answer: [rr("a.", { type: Type.CNAME, target: "b".repeat(64) + "." })] })],
    ["rcode 16 without EDNS", msg({ rcode: 16 })],
    ["rcode over 12 bits", msg({ rcode: 4096, edns: { udpSize: 512, version: 0, do: false, options: [] } })],
    ["bad A", msg({ answer: [rr("a.", { type: Type.A, address: "1.2.3.256" })] })],
    ["short A", msg({ answer: [rr("a.", { type: Type.A, address: "1.2.3" })] })],
    ["A with a port", msg({ answer: [rr("a.", { type: Type.A, address: "1.2.3.4:53" })] })],
    ["char above U+00FF in a name", msg({ answer: [rr("\u0101.", { type: Type.A, address: "1.2.3.4" })] })],
    ["char above U+00FF in TXT", msg({ answer: [rr("a.", { type: Type.TXT, strings: ["\u20ac"] })] })],
    [
      "port out of range",
      msg({ answer: [rr("a.", { type: Type.SRV, priority: 0, weight: 0, port: 65536, target: "b." })] }),
    ],
    [
      "type/rdata mismatch",
      msg({
        answer: [
          { name: "a.", type: Type.AAAA, class: 1, ttl: 1, data: { type: Type.A, address: "1.2.3.4" } },
        ],
      }),
    ],
    ["empty CAA tag", msg({ answer: [rr("a.", { type: Type.CAA, flags: 0, tag: "", value: "x" })] })],
    ["id out of range", msg({ id: 70000 })],
  ];
  for (const [what, m] of cases) {
    assert.throws(
      () => encode(m),
      (e: unknown) => e instanceof EncodeError && e.code === "CDNS_ERR_ENCODE",
      what,
    );
  }
});

test("TTLs are sent as 31-bit numbers; OPT records in additional are left to msg.edns", () => {
  const m = msg({
    answer: [
      rr("a.", { type: Type.A, address: "1.2.3.4" }, -5),
      rr("a.", { type: Type.A, address: "1.2.3.5" }, 2 ** 32),
    ],
    additional: [
      { name: ".", type: Type.OPT, class: 512, ttl: 0, data: { type: Type.OPT, raw: new Uint8Array(0) } },
    ],
  });
  const d = decode(encode(m));
  assert.deepEqual(
    d.answer.map((r) => r.ttl),
    [0, 0x7fffffff],
  );
  assert.deepEqual(d.additional, []);
  assert.equal(d.edns, undefined);
});
