import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { RR } from "./message.ts";
import { Class, Type } from "./constants.ts";
import {
  nameFromText,
  parseRRText,
  parseRecordHead,
  parseTime,
  quoteString,
  rdataFromText,
  rdataToText,
  rrToText,
  splitFields,
  stringFromText,
} from "./text.ts";

const ORIGIN = "example.org.";

function rr(name: string, ttl: number, data: RR["data"]): RR {
  return { name, type: data.type, class: Class.IN, ttl, data };
}

describe("rrToText", () => {
  it("prints every supported type as dig does", () => {
    const cases: [RR, string][] = [
      [
        rr("www.example.org.", 3600, { type: 1, address: "192.0.2.1" }),
        "www.example.org.\t3600\tIN\tA\t192.0.2.1",
      ],
      [
        rr("www.example.org.", 60, { type: 28, address: "2001:db8::1" }),
        "www.example.org.\t60\tIN\tAAAA\t2001:db8::1",
      ],
      [
        rr("example.org.", 5, { type: 2, target: "ns1.example.org." }),
        "example.org.\t5\tIN\tNS\tns1.example.org.",
      ],
      [
        rr("a.example.org.", 5, { type: 5, target: "b.example.org." }),
        "a.example.org.\t5\tIN\tCNAME\tb.example.org.",
      ],
      [
        rr("1.2.0.192.in-addr.arpa.", 5, { type: 12, target: "x." }),
        "1.2.0.192.in-addr.arpa.\t5\tIN\tPTR\tx.",
      ],
      [
        rr("example.org.", 5, { type: 15, preference: 10, exchange: "mail.example.org." }),
        "example.org.\t5\tIN\tMX\t10 mail.example.org.",
      ],
      [
        rr("example.org.", 5, {
          type: 6,
          mname: "ns1.example.org.",
          rname: "hostmaster.example.org.",
          serial: 2024010101,
          refresh: 7200,
          retry: 900,
          expire: 1209600,
          minimum: 300,
        }),
        "example.org.\t5\tIN\tSOA\tns1.example.org. hostmaster.example.org. 2024010101 7200 900 1209600 300",
      ],
      [
        rr("_sip._udp.example.org.", 5, {
          type: 33,
          priority: 10,
          weight: 60,
          port: 5060,
          target: "sip.example.org.",
        }),
        "_sip._udp.example.org.\t5\tIN\tSRV\t10 60 5060 sip.example.org.",
      ],
      [
        rr("example.org.", 5, { type: 257, flags: 0, tag: "issue", value: "letsencrypt.org" }),
        'example.org.\t5\tIN\tCAA\t0 issue "letsencrypt.org"',
      ],
      [
        rr("example.org.", 5, { type: 16, strings: ["v=spf1 -all", "two"] }),
        'example.org.\t5\tIN\tTXT\t"v=spf1 -all" "two"',
      ],
      [
        {
          name: "x.",
          type: 65280,
          class: Class.IN,
          ttl: 1,
          data: { type: 65280, raw: new Uint8Array([0xc0, 0, 2, 1]) },
        },
        "x.\t1\tIN\tTYPE65280\t\\# 4 C0000201",
      ],
      [
        { name: "x.", type: 65280, class: Class.IN, ttl: 1, data: { type: 65280, raw: new Uint8Array() } },
        "x.\t1\tIN\tTYPE65280\t\\# 0",
      ],
      [{ ...rr("x.", 1, { type: 1, address: "127.0.0.1" }), class: Class.CH }, "x.\t1\tCH\tA\t127.0.0.1"],
    ];
    for (const [record, text] of cases) assert.equal(rrToText(record), text);
  });

  it("escapes quotes, backslashes and non-printable octets in strings", () => {
    assert.equal(quoteString('say "hi"'), '"say \\"hi\\""');
    assert.equal(quoteString("a\\b"), '"a\\\\b"');
    assert.equal(quoteString("tab\there\x00\xff"), '"tab\\009here\\000\\255"');
    // A char above 0xff (built in code, not parsed) is written as its UTF-8 octets.
    assert.equal(quoteString("\u20ac"), '"\\226\\130\\172"');
  });

  it("escapes characters of names that would break a zone file", () => {
    assert.equal(rdataToText({ type: 5, target: "a;b.example." }), "a\\;b.example.");
    assert.equal(rdataToText({ type: 5, target: "a b.example." }), "a\\032b.example.");
  });
});

describe("rdataFromText", () => {
  it("parses A and rejects what is not an IPv4 address", () => {
    assert.deepEqual(rdataFromText(Type.A, ["192.0.2.1"], ORIGIN), { type: 1, address: "192.0.2.1" });
    for (const bad of ["300.1.1.1", "1.2.3", "2001:db8::1", "www"]) {
      assert.throws(() => rdataFromText(Type.A, [bad], ORIGIN), /not an IPv4 address/);
    }
    assert.throws(
      () => rdataFromText(Type.A, ["1.2.3.4", "5.6.7.8"], ORIGIN),
      /A takes 1 rdata field\(s\), got 2/,
    );
  });

  it("parses AAAA into the compressed lowercase form", () => {
    const cases: [string, string][] = [
      ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
      ["2001:0db8:0000:0001:0000:0000:0000:0001", "2001:db8:0:1::1"],
      ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"],
      ["2001:db8:1:1:1:1:0:1", "2001:db8:1:1:1:1:0:1"],
      ["::", "::"],
      ["::1", "::1"],
      ["fe80::", "fe80::"],
      ["::ffff:192.0.2.1", "::ffff:c000:201"],
    ];
    for (const [input, want] of cases) {
      assert.deepEqual(rdataFromText(Type.AAAA, [input], ORIGIN), { type: 28, address: want }, input);
    }
    for (const bad of ["192.0.2.1", "2001:db8::1::2", "2001:db8::g", "fe80::1%eth0"]) {
      assert.throws(() => rdataFromText(Type.AAAA, [bad], ORIGIN), /not an IPv6 address/, bad);
    }
  });

  it("makes names absolute against the origin and lowercases them", () => {
    assert.deepEqual(rdataFromText(Type.CNAME, ["WWW"], ORIGIN), { type: 5, target: "www.example.org." });
    assert.deepEqual(rdataFromText(Type.NS, ["Ns1.Example.NET."], ORIGIN), {
      type: 2,
      target: "ns1.example.net.",
    });
    assert.deepEqual(rdataFromText(Type.PTR, ["@"], ORIGIN), { type: 12, target: "example.org." });
    assert.deepEqual(rdataFromText(Type.CNAME, ["www"], "."), { type: 5, target: "www." });
    assert.deepEqual(rdataFromText(Type.CNAME, ["a\\098c"], ORIGIN), { type: 5, target: "abc.example.org." });
  });

  it("rejects malformed names", () => {
    assert.throws(() => nameFromText("a..b", ORIGIN), /empty label/);
    assert.throws(() => nameFromText(".a.", ORIGIN), /empty label/);
    assert.throws(() => nameFromText("x".repeat(64), ORIGIN), /label longer than 63/);
    assert.equal(nameFromText("x".repeat(63), "."), "x".repeat(63) + ".");
    const long = Array.from({ length: 5 }, () => "y".repeat(60)).join(".") + ".";
    assert.throws(() => nameFromText(long, ORIGIN), /longer than 255/);
    assert.throws(() => nameFromText('"quoted"', ORIGIN), /cannot be quoted/);
    assert.throws(() => nameFromText("a\\", ORIGIN), /bad escape/);
    assert.throws(() => nameFromText("a\\256", ORIGIN), /bad escape/);
    assert.throws(() => nameFromText("a\\1b", ORIGIN), /bad escape/);
    // Escapes count as the octets they stand for.
    assert.equal(nameFromText("\\.".repeat(63), "."), "\\.".repeat(63) + ".");
    assert.throws(() => nameFromText("\\.".repeat(64), "."), /label longer than 63/);
  });

  it("takes any octet in a label, a dot too (RFC 2181 11), into one canonical text form", () => {
    const cases: [string, string][] = [
      ["a\\.b", "a\\.b.example.org."], // one label holding a dot, relative
      ["a\\046B.", "a\\.b."], // \046 is a dot too; lowercased
      ["a\\.", "a\\..example.org."], // an escaped final dot does not make the name absolute
      ["a\\\\.", "a\\\\."], // a backslash, then the final dot: absolute
      ["\\065\\(x\\)", "a(x).example.org."], // escapes of printable octets are not kept
      ["sp\\032ce\\255", "sp\\032ce\\255.example.org."],
    ];
    for (const [field, want] of cases) assert.equal(nameFromText(field, ORIGIN), want, field);
    // Printed back for a zone file, the escapes stay and ( ) are escaped.
    assert.equal(rdataToText({ type: 5, target: "a\\.b(x).example." }), "a\\.b\\(x\\).example.");
    assert.equal(rdataToText({ type: 5, target: "sp\\032ce\\\\." }), "sp\\032ce\\\\.");
  });

  it("range-checks numbers", () => {
    assert.deepEqual(rdataFromText(Type.MX, ["65535", "mail"], ORIGIN), {
      type: 15,
      preference: 65535,
      exchange: "mail.example.org.",
    });
    assert.throws(
      () => rdataFromText(Type.MX, ["65536", "mail"], ORIGIN),
      /preference 65536 is larger than 65535/,
    );
    assert.throws(() => rdataFromText(Type.MX, ["-1", "mail"], ORIGIN), /preference '-1' is not a number/);
    assert.throws(() => rdataFromText(Type.SRV, ["1", "2", "70000", "sip"], ORIGIN), /port 70000/);
    assert.throws(() => rdataFromText(Type.CAA, ["256", "issue", '"x"'], ORIGIN), /flags 256/);
  });

  it("parses SRV", () => {
    assert.deepEqual(rdataFromText(Type.SRV, ["0", "5", "443", "."], ORIGIN), {
      type: 33,
      priority: 0,
      weight: 5,
      port: 443,
      target: ".",
    });
  });

  it("parses SOA with plain seconds and BIND units", () => {
    const soa = rdataFromText(
      Type.SOA,
      ["ns1", "hostmaster", "4294967295", "2h", "15M", "1w2d", "300"],
      ORIGIN,
    );
    assert.deepEqual(soa, {
      type: 6,
      mname: "ns1.example.org.",
      rname: "hostmaster.example.org.",
      serial: 4294967295,
      refresh: 7200,
      retry: 900,
      expire: 9 * 86400,
      minimum: 300,
    });
    assert.throws(
      () => rdataFromText(Type.SOA, ["a", "b", "4294967296", "1", "1", "1", "1"], ORIGIN),
      /serial 4294967296 is larger/,
    );
    assert.throws(
      () => rdataFromText(Type.SOA, ["a", "b", "1", "1x", "1", "1", "1"], ORIGIN),
      /refresh '1x' is not a time/,
    );
    assert.throws(() => rdataFromText(Type.SOA, ["a", "b", "1", "1", "1", "1"], ORIGIN), /SOA takes 7/);
  });

  it("parses TXT strings, quoted or not, with escapes", () => {
    assert.deepEqual(
      rdataFromText(Type.TXT, ['"hello world"', "bare", '"say \\"hi\\""', '"\\065\\\\"'], ORIGIN),
      {
        type: 16,
        strings: ["hello world", "bare", 'say "hi"', "A\\"],
      },
    );
    assert.deepEqual(rdataFromText(Type.TXT, ['""'], ORIGIN), { type: 16, strings: [""] });
    assert.throws(
      () => rdataFromText(Type.TXT, [`"${"x".repeat(256)}"`], ORIGIN),
      /256 octets is longer than 255/,
    );
    assert.equal(stringFromText(`"${"x".repeat(255)}"`).length, 255);
    assert.throws(() => rdataFromText(Type.TXT, [], ORIGIN), /at least one string/);
    assert.throws(() => rdataFromText(Type.TXT, ['"\\256"'], ORIGIN), /not an octet/);
  });

  it("parses CAA", () => {
    assert.deepEqual(rdataFromText(Type.CAA, ["128", "Issue", '"letsencrypt.org; accounturi=x"'], ORIGIN), {
      type: 257,
      flags: 128,
      tag: "issue",
      value: "letsencrypt.org; accounturi=x",
    });
    assert.throws(() => rdataFromText(Type.CAA, ["0", "is-sue", "x"], ORIGIN), /invalid CAA tag/);
  });

  it("takes RFC 3597 generic rdata for types without a parser, and only for those", () => {
    assert.deepEqual(rdataFromText(65280, ["\\#", "4", "c000", "0201"], ORIGIN), {
      type: 65280,
      raw: new Uint8Array([0xc0, 0, 2, 1]),
    });
    assert.deepEqual(rdataFromText(65280, ["\\#", "0"], ORIGIN), { type: 65280, raw: new Uint8Array() });
    assert.throws(() => rdataFromText(65280, ["\\#", "3", "c000"], ORIGIN), /does not hold 3 octets/);
    assert.throws(() => rdataFromText(Type.A, ["\\#", "4", "c0000201"], ORIGIN), /own format/);
    assert.throws(
      () => rdataFromText(Type.HINFO, ["cpu", "os"], ORIGIN),
      /HINFO rdata must be in the RFC 3597 form/,
    );
  });
});

describe("parseTime", () => {
  it("reads seconds and unit forms, and nothing else", () => {
    assert.equal(parseTime("0"), 0);
    assert.equal(parseTime("3600"), 3600);
    assert.equal(parseTime("1h30m"), 5400);
    assert.equal(parseTime("2D"), 172800);
    assert.equal(parseTime("1w"), 604800);
    assert.equal(parseTime("10s"), 10);
    for (const no of ["", "h", "1x", "1h30", "-5", "1.5h", "IN", "A"])
      assert.equal(parseTime(no), undefined, no);
  });
});

describe("splitFields", () => {
  it("splits at blanks and keeps quoted strings whole", () => {
    assert.deepEqual(splitFields('a  "b c"\t"d\\"e" f\\ g'), ["a", '"b c"', '"d\\"e"', "f\\ g"]);
    assert.deepEqual(splitFields('"a""b"'), ['"a"', '"b"']);
    assert.deepEqual(splitFields(""), []);
    assert.throws(() => splitFields('a "b'), /unterminated/);
  });
});

describe("parseRecordHead", () => {
  it("takes TTL and class in either order", () => {
    assert.deepEqual(parseRecordHead(["x", "300", "IN", "A"], 1), {
      ttl: 300,
      rclass: 1,
      type: 1,
      rdataAt: 4,
    });
    assert.deepEqual(parseRecordHead(["IN", "1h", "MX"], 0), { ttl: 3600, rclass: 1, type: 15, rdataAt: 3 });
    assert.deepEqual(parseRecordHead(["CH", "TXT"], 0), { ttl: undefined, rclass: 3, type: 16, rdataAt: 2 });
    assert.deepEqual(parseRecordHead(["TYPE65280"], 0), {
      ttl: undefined,
      rclass: undefined,
      type: 65280,
      rdataAt: 1,
    });
    assert.throws(() => parseRecordHead(["300", "FOO", "x"], 0), /unknown record type 'FOO'/);
    assert.throws(() => parseRecordHead(["300", "IN"], 0), /no type/);
    assert.throws(() => parseRecordHead(["ANY", "A"], 0), /unknown record type 'ANY'/);
    assert.throws(() => parseRecordHead(["2147483648", "A"], 0), /larger than 2147483647/);
    // A second TTL is not a TTL: it is read as the type.
    assert.throws(() => parseRecordHead(["300", "300", "A"], 0), /unknown record type '300'/);
  });
});

describe("parseRRText", () => {
  it("reads one record with defaults for TTL and class", () => {
    assert.deepEqual(parseRRText("WWW.example.org. A 192.0.2.1"), {
      name: "www.example.org.",
      type: 1,
      class: 1,
      ttl: 3600,
      data: { type: 1, address: "192.0.2.1" },
    });
    assert.deepEqual(parseRRText("www IN 60 AAAA 2001:db8::1", ORIGIN).ttl, 60);
    assert.throws(() => parseRRText("lonely"), /not a record/);
  });

  it("round-trips what rrToText prints", () => {
    const lines = [
      "www.example.org.\t3600\tIN\tA\t192.0.2.1",
      "www.example.org.\t60\tIN\tAAAA\t2001:db8::1",
      "example.org.\t300\tIN\tSOA\tns1.example.org. hostmaster.example.org. 1 7200 900 1209600 300",
      'example.org.\t300\tIN\tTXT\t"a \\"quoted\\" \\\\ word" "\\000\\255"',
      'example.org.\t300\tIN\tCAA\t0 issue "letsencrypt.org"',
      "_sip._udp.example.org.\t300\tIN\tSRV\t10 60 5060 sip.example.org.",
      "example.org.\t300\tIN\tMX\t10 mail.example.org.",
      "x.\t1\tIN\tTYPE65280\t\\# 4 C0000201",
    ];
    for (const line of lines) assert.equal(rrToText(parseRRText(line)), line);
  });
});
