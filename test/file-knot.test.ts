// `file` against Knot: the same zone file (wildcards, a delegation with glue, CNAME chains in and out
// of the zone and into the delegation, empty non-terminals, occluded data, $ORIGIN, $TTL and
// $INCLUDE) served by clusterdns and by knotd, and every question's rcode, AA bit and sections
// compared. Knot is the reference but for ANY, where it gives one RRset (RFC 8482) and *file* gives
// every RRset at the name, as CoreDNS's does (the README says so).

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig, type DigResult } from "./helpers/dig.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";

const INCLUDED = ["inc1 A 192.0.2.101", 'inc2 TXT "included"'];

const ZONE = (include: string[]) =>
  [
    "$ORIGIN example.org.",
    "$TTL 300",
    "@ 3600 IN SOA ns1 hostmaster 2024010101 7200 3600 1209600 120",
    "@ NS ns1",
    "@ NS ns2.example.net.",
    "@ MX 10 mail",
    "@ MX 20 mail.other.test.",
    "ns1 A 192.0.2.1",
    "ns1 AAAA 2001:db8::1",
    "mail A 192.0.2.25",
    "www 60 A 192.0.2.80",
    "www AAAA 2001:db8::80",
    "alias CNAME www",
    "chain1 CNAME chain2",
    "chain2 CNAME alias",
    "out CNAME www.other.test.",
    "outchain CNAME out",
    "loop1 CNAME loop2",
    "loop2 CNAME loop1",
    "*.wild A 192.0.2.200",
    '*.wild TXT "wild"',
    "sub.wild A 192.0.2.201",
    "*.wcname CNAME www",
    "a.b.c.ent A 192.0.2.50",
    "deleg NS ns.deleg",
    "deleg NS ns.other.test.",
    "ns.deleg A 192.0.2.53",
    "ns.deleg AAAA 2001:db8::53",
    "*.star.deleg A 192.0.2.99",
    "_sip._tcp SRV 10 60 5060 sip",
    "sip A 192.0.2.60",
    'caa CAA 0 issue "letsencrypt.org"',
    "cname2deleg CNAME host.deleg",
    "cname2nx CNAME nothere",
    "cname2ent CNAME c.ent",
    // A cut with more in-domain glue than 512 octets hold, and one with sibling glue only.
    ...Array.from({ length: 13 }, (_, i) => [
      `big NS ns${i}.big`,
      `ns${i}.big A 192.0.3.${i}`,
      `ns${i}.big AAAA 2001:db8:3::${i}`,
    ]).flat(),
    ...Array.from({ length: 13 }, (_, i) => [
      `sib NS ns${i}.sibling`,
      `ns${i}.sibling A 192.0.4.${i}`,
      `ns${i}.sibling AAAA 2001:db8:4::${i}`,
    ]).flat(),
    ...include,
    "$ORIGIN sub.example.org.",
    "s1 A 192.0.2.150",
    "$TTL 30",
    "s2 A 192.0.2.151",
    "",
  ].join("\n");

/** Questions whose replies must be the same from both servers. */
const QUESTIONS: [string, string][] = [
  ["example.org", "SOA"],
  ["example.org", "NS"],
  ["Example.ORG", "MX"],
  ["example.org", "A"],
  ["www.example.org", "A"],
  ["WWW.Example.org", "AAAA"],
  ["www.example.org", "TXT"],
  ["www.example.org", "TYPE65534"],
  ["alias.example.org", "A"],
  ["alias.example.org", "CNAME"],
  ["alias.example.org", "TXT"],
  ["chain1.example.org", "AAAA"],
  ["out.example.org", "A"],
  ["outchain.example.org", "A"],
  ["loop1.example.org", "A"],
  ["x.WiLd.example.org", "A"],
  ["x.wild.example.org", "TXT"],
  ["x.wild.example.org", "AAAA"],
  ["y.x.wild.example.org", "A"],
  ["sub.wild.example.org", "TXT"],
  ["z.sub.wild.example.org", "A"],
  ["wild.example.org", "A"],
  ["q.wcname.example.org", "A"],
  ["q.wcname.example.org", "CNAME"],
  ["c.ent.example.org", "A"],
  ["ent.example.org", "TXT"],
  ["x.a.b.c.ent.example.org", "A"],
  ["x.alias.example.org", "A"],
  ["deleg.example.org", "A"],
  ["deleg.example.org", "NS"],
  ["deleg.example.org", "DS"],
  ["host.deleg.example.org", "A"],
  ["ns.deleg.example.org", "A"],
  ["a.star.deleg.example.org", "A"],
  ["_sip._tcp.example.org", "SRV"],
  ["_tcp.example.org", "SRV"],
  ["caa.example.org", "CAA"],
  ["cname2deleg.example.org", "A"],
  ["cname2nx.example.org", "A"],
  ["cname2ent.example.org", "A"],
  ["inc1.example.org", "A"],
  ["inc2.example.org", "TXT"],
  ["s1.sub.example.org", "A"],
  ["s2.sub.example.org", "A"],
  ["sub.example.org", "A"],
  ["nx.example.org", "A"],
];

let srv: RunningServer;
let knot: Knot;

before(async () => {
  srv = await startServer("example.org {\n    file db.example.org\n}\n", {
    files: { "db.example.org": ZONE(["$INCLUDE inc.zone"]), "inc.zone": INCLUDED.join("\n") + "\n" },
  });
  knot = await startKnot({ zone: { origin: "example.org.", text: ZONE(INCLUDED) } });
});

after(async () => {
  await srv?.stop();
  await knot?.stop();
});

/** What must match: rcode, AA and each section as a sorted set (ra and rd are the servers' own). */
const view = (r: DigResult) => ({
  status: r.status,
  aa: r.flags.includes("aa"),
  answer: [...r.answer].sort(),
  authority: [...r.authority].sort(),
  additional: [...r.additional].sort(),
});

for (const [name, type] of QUESTIONS) {
  test(`file answers ${name} ${type} as Knot does`, async () => {
    const ours = await dig(srv.port, name, type, "+norec");
    const theirs = await dig(knot.port, name, type, "+norec");
    assert.deepEqual(view(ours), view(theirs));
  });
}

test("a referral whose in-domain glue does not fit in 512 octets has TC set (RFC 9471), as Knot's", async () => {
  for (const [name, tc] of [
    ["x.big.example.org", true],
    ["x.sib.example.org", false],
  ] as const) {
    const ours = await dig(srv.port, name, "A", "+norec", "+noedns", "+ignore");
    const theirs = await dig(knot.port, name, "A", "+norec", "+noedns", "+ignore");
    assert.equal(theirs.flags.includes("tc"), tc, theirs.text);
    assert.equal(ours.flags.includes("tc"), tc, ours.text);
    assert.equal(ours.authority.length, 13, ours.text);
  }
});
