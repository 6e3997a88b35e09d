import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { Rcode, Type } from "../../dns/constants.ts";
import { rrToText } from "../../dns/text.ts";
import { loadZone, parseZone } from "./zone-parser.ts";
import { Zone, type Lookup } from "./zone.ts";

const ZONE = `$TTL 3600
@           SOA   ns1 hostmaster 1 7200 900 1209600 300
@           NS    ns1
@           NS    ns2.example.org.
ns1         A     192.0.2.53
ns1         AAAA  2001:db8::53
ns2         A     198.51.100.53
@           A     192.0.2.1
@           MX    10 mail
@           MX    20 mail.example.net.
mail        A     192.0.2.25
_sip._udp   SRV   10 60 5060 sip
sip         A     192.0.2.60
sip         AAAA  2001:db8::60
www         A     192.0.2.10
web         CNAME www
blog        CNAME web
out         CNAME www.example.net.
loop1       CNAME loop2
loop2       CNAME loop1
dangling    CNAME nothere
chain0      CNAME chain1
chain1      CNAME chain2
chain2      CNAME chain3
chain3      CNAME chain4
chain4      CNAME chain5
chain5      CNAME chain6
chain6      CNAME chain7
chain7      CNAME chain8
chain8      CNAME chain9
chain9      CNAME www
tosub       CNAME host.sub
a.b.c       A     192.0.2.30
*.apps      A     192.0.2.100
*.apps      TXT   "wild"
exists.apps A     192.0.2.101
x.deep.apps A     192.0.2.102
*.alias     CNAME www
sub         NS    ns1.sub
sub         NS    ns2
ns1.sub     A     192.0.2.200
`;

const zone = new Zone("example.org.", parseZone(ZONE, { file: "test.zone", origin: "example.org." }));

/** The lookup with its sections as zone-file lines. */
function ask(name: string, qtype: number, z: Zone = zone) {
  const r: Lookup = z.lookup(name, qtype);
  const text = (rrs: typeof r.answer): string[] => rrs.map((rr) => rrToText(rr).replace(/\t/g, " "));
  return { ...r, answer: text(r.answer), authority: text(r.authority), additional: text(r.additional) };
}

const NEG_SOA = "example.org. 300 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 900 1209600 300";

describe("Zone.lookup", () => {
  it("answers an exact match authoritatively", () => {
    assert.deepEqual(ask("www.example.org.", Type.A), {
      kind: "answer",
      rcode: Rcode.NOERROR,
      authoritative: true,
      answer: ["www.example.org. 3600 IN A 192.0.2.10"],
      authority: [],
      additional: [],
    });
  });

  it("is case-insensitive", () => {
    assert.deepEqual(ask("WWW.Example.ORG.", Type.A).answer, ["www.example.org. 3600 IN A 192.0.2.10"]);
  });

  it("answers ANY with every RRset at the name", () => {
    const r = ask("example.org.", Type.ANY);
    assert.equal(r.kind, "answer");
    assert.deepEqual(
      r.answer.map((l) => l.split(" ")[3]),
      ["SOA", "NS", "NS", "A", "MX", "MX"],
    );
    assert.deepEqual(r.additional, [
      "ns1.example.org. 3600 IN A 192.0.2.53",
      "ns1.example.org. 3600 IN AAAA 2001:db8::53",
      "ns2.example.org. 3600 IN A 198.51.100.53",
      "mail.example.org. 3600 IN A 192.0.2.25",
    ]);
  });

  it("follows a CNAME chain inside the zone", () => {
    const r = ask("blog.example.org.", Type.A);
    assert.equal(r.rcode, Rcode.NOERROR);
    assert.equal(r.authoritative, true);
    assert.deepEqual(r.answer, [
      "blog.example.org. 3600 IN CNAME web.example.org.",
      "web.example.org. 3600 IN CNAME www.example.org.",
      "www.example.org. 3600 IN A 192.0.2.10",
    ]);
  });

  it("answers a CNAME query with the CNAME only", () => {
    assert.deepEqual(ask("blog.example.org.", Type.CNAME).answer, [
      "blog.example.org. 3600 IN CNAME web.example.org.",
    ]);
  });

  it("ends a chain whose target lacks the type with NODATA", () => {
    const r = ask("web.example.org.", Type.AAAA);
    assert.equal(r.kind, "nodata");
    assert.equal(r.rcode, Rcode.NOERROR);
    assert.deepEqual(r.answer, ["web.example.org. 3600 IN CNAME www.example.org."]);
    assert.deepEqual(r.authority, [NEG_SOA]);
  });

  it("ends a chain whose target does not exist with NXDOMAIN (RFC 6604)", () => {
    const r = ask("dangling.example.org.", Type.A);
    assert.equal(r.rcode, Rcode.NXDOMAIN);
    assert.deepEqual(r.answer, ["dangling.example.org. 3600 IN CNAME nothere.example.org."]);
    assert.deepEqual(r.authority, [NEG_SOA]);
  });

  it("stops where the target leaves the zone", () => {
    const r = ask("out.example.org.", Type.A);
    assert.equal(r.rcode, Rcode.NOERROR);
    assert.deepEqual(r.answer, ["out.example.org. 3600 IN CNAME www.example.net."]);
    assert.deepEqual(r.authority, []);
  });

  it("stops at a CNAME loop", () => {
    const r = ask("loop1.example.org.", Type.A);
    assert.equal(r.rcode, Rcode.NOERROR);
    assert.deepEqual(r.answer, [
      "loop1.example.org. 3600 IN CNAME loop2.example.org.",
      "loop2.example.org. 3600 IN CNAME loop1.example.org.",
    ]);
  });

  it("stops a long chain after 8 links", () => {
    const r = ask("chain0.example.org.", Type.A);
    assert.equal(r.answer.length, 8);
    assert.ok(r.answer.every((l) => l.includes(" CNAME ")));
    assert.match(r.answer[7], /^chain7\.example\.org\. .* CNAME chain8\.example\.org\.$/);
    // Starting two links further on, the whole chain fits.
    assert.deepEqual(
      ask("chain2.example.org.", Type.A).answer.at(-1),
      "www.example.org. 3600 IN A 192.0.2.10",
    );
  });

  it("stops a chain at a delegation", () => {
    const r = ask("tosub.example.org.", Type.A);
    assert.equal(r.authoritative, true);
    assert.deepEqual(r.answer, ["tosub.example.org. 3600 IN CNAME host.sub.example.org."]);
  });

  for (const name of [
    "sub.example.org.",
    "host.sub.example.org.",
    "ns1.sub.example.org.",
    "a.b.sub.example.org.",
  ]) {
    it(`refers ${name} to the delegated servers, with glue`, () => {
      for (const qtype of [Type.A, Type.NS]) {
        assert.deepEqual(ask(name, qtype), {
          kind: "referral",
          rcode: Rcode.NOERROR,
          authoritative: false,
          answer: [],
          authority: [
            "sub.example.org. 3600 IN NS ns1.sub.example.org.",
            "sub.example.org. 3600 IN NS ns2.example.org.",
          ],
          additional: [
            "ns1.sub.example.org. 3600 IN A 192.0.2.200",
            "ns2.example.org. 3600 IN A 198.51.100.53",
          ],
        });
      }
    });
  }

  it("answers NODATA with the SOA for a name without that type", () => {
    assert.deepEqual(ask("www.example.org.", Type.AAAA), {
      kind: "nodata",
      rcode: Rcode.NOERROR,
      authoritative: true,
      answer: [],
      authority: [NEG_SOA],
      additional: [],
    });
  });

  it("answers NODATA for empty non-terminals", () => {
    for (const name of [
      "b.c.example.org.",
      "c.example.org.",
      "apps.example.org.",
      "deep.apps.example.org.",
    ]) {
      for (const qtype of [Type.A, Type.ANY]) {
        const r = ask(name, qtype);
        assert.equal(r.kind, "nodata", name);
        assert.deepEqual(r.authority, [NEG_SOA], name);
      }
    }
  });

  it("answers NXDOMAIN with the SOA, its TTL min(SOA TTL, SOA minimum)", () => {
    assert.deepEqual(ask("nope.example.org.", Type.A), {
      kind: "nxdomain",
      rcode: Rcode.NXDOMAIN,
      authoritative: true,
      answer: [],
      authority: [NEG_SOA],
      additional: [],
    });
    assert.equal(ask("x.a.b.c.example.org.", Type.A).rcode, Rcode.NXDOMAIN);
    // A SOA whose own TTL is below its minimum: the TTL wins.
    const short = new Zone(
      "example.org.",
      parseZone("@ 60 SOA ns1 hostmaster 1 7200 900 1209600 300\n", { file: "s", origin: "example.org." }),
    );
    assert.deepEqual(ask("nope.example.org.", Type.A, short).authority, [
      "example.org. 60 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 900 1209600 300",
    ]);
    assert.equal(short.soa.ttl, 60, "the zone's own SOA keeps its TTL");
  });

  it("synthesises answers from a wildcard, with the owner rewritten", () => {
    assert.deepEqual(ask("foo.apps.example.org.", Type.A), {
      kind: "answer",
      rcode: Rcode.NOERROR,
      authoritative: true,
      answer: ["foo.apps.example.org. 3600 IN A 192.0.2.100"],
      authority: [],
      additional: [],
    });
    assert.deepEqual(ask("a.b.apps.example.org.", Type.TXT).answer, [
      'a.b.apps.example.org. 3600 IN TXT "wild"',
    ]);
    assert.deepEqual(ask("foo.apps.example.org.", Type.ANY).answer, [
      "foo.apps.example.org. 3600 IN A 192.0.2.100",
      'foo.apps.example.org. 3600 IN TXT "wild"',
    ]);
    const nodata = ask("foo.apps.example.org.", Type.MX);
    assert.equal(nodata.kind, "nodata");
    assert.deepEqual(nodata.authority, [NEG_SOA]);
  });

  it("does not apply a wildcard where a closer name exists", () => {
    // exists.apps has an A record but no TXT: NODATA, not the wildcard's TXT.
    assert.equal(ask("exists.apps.example.org.", Type.TXT).kind, "nodata");
    assert.deepEqual(ask("exists.apps.example.org.", Type.A).answer, [
      "exists.apps.example.org. 3600 IN A 192.0.2.101",
    ]);
    // deep.apps exists (an empty non-terminal), so *.apps does not cover names below it (RFC 4592 2.2.1).
    assert.equal(ask("foo.deep.apps.example.org.", Type.A).kind, "nxdomain");
    // The wildcard's own name is an ordinary name.
    assert.deepEqual(ask("*.apps.example.org.", Type.A).answer, [
      "*.apps.example.org. 3600 IN A 192.0.2.100",
    ]);
  });

  it("follows a CNAME synthesised from a wildcard", () => {
    assert.deepEqual(ask("anything.alias.example.org.", Type.A).answer, [
      "anything.alias.example.org. 3600 IN CNAME www.example.org.",
      "www.example.org. 3600 IN A 192.0.2.10",
    ]);
  });

  it("adds addresses from the zone for MX, SRV and NS targets", () => {
    const mx = ask("example.org.", Type.MX);
    assert.deepEqual(mx.answer, [
      "example.org. 3600 IN MX 10 mail.example.org.",
      "example.org. 3600 IN MX 20 mail.example.net.",
    ]);
    assert.deepEqual(mx.additional, ["mail.example.org. 3600 IN A 192.0.2.25"]);
    assert.deepEqual(ask("_sip._udp.example.org.", Type.SRV).additional, [
      "sip.example.org. 3600 IN A 192.0.2.60",
      "sip.example.org. 3600 IN AAAA 2001:db8::60",
    ]);
    const ns = ask("example.org.", Type.NS);
    assert.equal(ns.authoritative, true);
    assert.deepEqual(ns.additional, [
      "ns1.example.org. 3600 IN A 192.0.2.53",
      "ns1.example.org. 3600 IN AAAA 2001:db8::53",
      "ns2.example.org. 3600 IN A 198.51.100.53",
    ]);
  });

  it("refuses names outside the zone", () => {
    const r = ask("example.com.", Type.A);
    assert.equal(r.kind, "outside");
    assert.equal(r.authoritative, false);
  });

  it("hands out fresh records and keeps its own frozen", () => {
    const first = zone.lookup("www.example.org.", Type.A);
    first.answer[0].name = "changed.";
    first.answer[0].ttl = 1;
    assert.deepEqual(ask("www.example.org.", Type.A).answer, ["www.example.org. 3600 IN A 192.0.2.10"]);
    assert.throws(() => {
      (first.answer[0].data as { address: string }).address = "0.0.0.0";
    }, TypeError);
  });
});

describe("Zone from the demo zone file", () => {
  const demo = new Zone(
    "example.org.",
    loadZone(resolve(import.meta.dirname, "../../../zones/example.org.zone"), "example.org."),
  );

  it("holds every record and answers big.example.org with 40 A records", () => {
    assert.ok(demo.size > 60);
    const big = demo.lookup("big.example.org.", Type.A);
    assert.equal(big.answer.length, 40);
    assert.ok(big.answer.every((rr) => rr.ttl === 300 && rr.name === "big.example.org."));
  });

  it("answers the demo's CNAME chain, wildcard and delegation", () => {
    assert.deepEqual(ask("blog.example.org.", Type.AAAA, demo).answer, [
      "blog.example.org. 3600 IN CNAME web.example.org.",
      "web.example.org. 3600 IN CNAME www.example.org.",
      "www.example.org. 3600 IN AAAA 2001:db8::10",
    ]);
    assert.deepEqual(ask("shop.apps.example.org.", Type.AAAA, demo).answer, [
      "shop.apps.example.org. 3600 IN AAAA 2001:db8::100",
    ]);
    const sub = ask("www.sub.example.org.", Type.A, demo);
    assert.equal(sub.kind, "referral");
    assert.deepEqual(sub.additional, [
      "ns1.sub.example.org. 3600 IN A 192.0.2.200",
      "ns2.example.org. 3600 IN A 198.51.100.53",
      "ns2.example.org. 3600 IN AAAA 2001:db8:1::53",
    ]);
  });
});

describe("Zone with labels holding a dot (RFC 2181 11)", () => {
  const dotted = new Zone(
    "example.org.",
    parseZone(
      `$TTL 60
@            SOA   ns1 hostmaster 1 7200 900 1209600 300
@            NS    ns1
ns1          A     192.0.2.53
a\\.b         A     192.0.2.41
b            A     192.0.2.42
x.c\\.d       A     192.0.2.43
*.w          A     192.0.2.44
`,
      { file: "dotted.zone", origin: "example.org." },
    ),
  );

  it("answers the owner whose label holds the dot, and keeps it apart from two labels", () => {
    assert.deepEqual(ask("a\\.b.example.org.", Type.A, dotted).answer, [
      "a\\.b.example.org. 60 IN A 192.0.2.41",
    ]);
    assert.deepEqual(ask("b.example.org.", Type.A, dotted).answer, ["b.example.org. 60 IN A 192.0.2.42"]);
    assert.equal(ask("a.b.example.org.", Type.A, dotted).rcode, Rcode.NXDOMAIN);
  });

  it("sees the empty non-terminal c\\.d, not c nor d", () => {
    const ent = ask("c\\.d.example.org.", Type.A, dotted);
    assert.deepEqual([ent.rcode, ent.answer], [Rcode.NOERROR, []]);
    assert.equal(ask("d.example.org.", Type.A, dotted).rcode, Rcode.NXDOMAIN);
  });

  it("synthesises from a wildcard for one dotted label", () => {
    assert.deepEqual(ask("p\\.q.w.example.org.", Type.A, dotted).answer, [
      "p\\.q.w.example.org. 60 IN A 192.0.2.44",
    ]);
  });
});

describe("Zone.transferRecords", () => {
  const all = [...zone.transferRecords()].flat();

  it("holds every record of the zone once, the SOA aside (the transfer puts it first and last)", () => {
    assert.equal(all.length, zone.size - 1);
    assert.ok(!all.some((rr) => rr.type === Type.SOA));
    const text = new Set(all.map(rrToText));
    assert.equal(text.size, all.length);
    const parsed = parseZone(ZONE, { file: "test.zone", origin: "example.org." });
    for (const rr of parsed) if (rr.type !== Type.SOA) assert.ok(text.has(rrToText(rr)), rrToText(rr));
  });

  it("sends the apex first, then names in canonical order (RFC 4034 6.1), one name per array", () => {
    const chunks = [...zone.transferRecords()];
    assert.ok(chunks.every((c) => c.every((rr) => rr.name === c[0].name)));
    const names = chunks.map((c) => c[0].name);
    assert.equal(names[0], "example.org.");
    // Labels compared from the right as octets: "_" (0x5f) sorts before letters, "*" before both.
    assert.deepEqual(names.slice(0, 8), [
      "example.org.",
      "_sip._udp.example.org.",
      "*.alias.example.org.",
      "*.apps.example.org.",
      "x.deep.apps.example.org.",
      "exists.apps.example.org.",
      "blog.example.org.",
      "a.b.c.example.org.",
    ]);
    // Types ascending within a name.
    assert.deepEqual(
      chunks[0].map((rr) => rr.type),
      [Type.A, Type.NS, Type.NS, Type.MX, Type.MX],
    );
  });
});
