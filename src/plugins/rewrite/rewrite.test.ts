import { test } from "node:test";
import assert from "node:assert/strict";
import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Directive } from "../../corefile/types.ts";
import type { RR } from "../../dns/message.ts";
import { setup } from "./setup.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import { directive as dir } from "../../../test/helpers/setup-context.ts";
import { blockHandler } from "../../../test/helpers/block-handler.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer, ROOT } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";
import { replyTo } from "../../dns/message.ts";
import { parseRRText, rrToText } from "../../dns/text.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";

/** A next handler that answers from these records: those whose owner is the question's name, of its
 * type (or all for ANY); it records the requests it saw and hands out the stored objects as they are. */
function zone(...lines: string[]): Handler & { seen: Request[]; records: RR[] } {
  const records = lines.map((l) => parseRRText(l));
  const seen: Request[] = [];
  return {
    name: "zone",
    seen,
    records,
    serve(req) {
      seen.push(req);
      const m = replyTo(req.msg);
      // Follows CNAMEs, as a zone does.
      for (let name = req.qname, hops = 0; hops < 8; hops++) {
        const found = records.filter(
          (r) => r.name === name && (req.qtype === Type.ANY || r.type === req.qtype || r.type === Type.CNAME),
        );
        m.answer.push(...found);
        const cname = found.find((r) => r.type === Type.CNAME);
        if (cname === undefined || req.qtype === Type.CNAME) break;
        name = (cname.data as { target: string }).target;
      }
      m.authority = records.filter((r) => r.type === Type.SOA);
      req.answeredBy = "zone";
      return Promise.resolve(m);
    },
  };
}

/** The rewrite handler made from these directives, all in one server block. */
async function chain(next: Handler, ...ds: Directive[]): Promise<Handler> {
  return (await blockHandler(setup, next, ds)).h;
}

const text = (rrs: RR[]) => rrs.map(rrToText);
const ZONE = [
  "www.example.org. 60 IN CNAME web.example.org.",
  "web.example.org. 60 IN A 192.0.2.1",
  "example.org. 60 IN SOA ns.example.org. hostmaster.example.org. 1 2 3 4 5",
];

test("exact: the chain sees the new name; the client gets its question and names back", async () => {
  const next = zone(...ZONE);
  const before = text(next.records);
  const h = await chain(next, dir("rewrite", ["name", "WWW.Alias.test", "www.example.org"]));
  const req = makeRequest("www.alias.test", Type.A);
  const m = await h.serve(req);
  assert.equal(next.seen[0].qname, "www.example.org.");
  assert.equal(next.seen[0].msg.question[0].name, "www.example.org.");
  assert.deepEqual(m.question, req.msg.question);
  assert.deepEqual(text(m.answer), [
    "www.alias.test.\t60\tIN\tCNAME\tweb.example.org.",
    "web.example.org.\t60\tIN\tA\t192.0.2.1",
  ]);
  assert.deepEqual(text(next.records), before, "the records the next plugin keeps are not changed");
  assert.equal(req.answeredBy, "zone", "what the chain set on its request is copied back");
});

test("a query no rule matches reaches the next plugin as it is", async () => {
  const next = zone(...ZONE);
  const h = await chain(next, dir("rewrite", ["name", "a.test", "b.test"]));
  const req = makeRequest("web.example.org", Type.A);
  await h.serve(req);
  assert.equal(next.seen[0], req);
});

test("suffix, prefix and substring rewrite the question; answer names stay unless answer auto", async () => {
  const cases: [string[], string, string][] = [
    [["suffix", ".corp.test.", ".example.org."], "www.corp.test", "www.example.org."],
    [["prefix", "alias-", "www."], "alias-example.org", "www.example.org."],
    [["substring", "-corp-", ".example."], "www-corp-org", "www.example.org."],
  ];
  for (const [args, asked, rewritten] of cases) {
    const plain = zone(...ZONE);
    const m1 = await (
      await chain(plain, dir("rewrite", ["name", ...args]))
    ).serve(makeRequest(asked, Type.A));
    assert.equal(plain.seen[0].qname, rewritten, args[0]);
    assert.equal(m1.answer[0].name, "www.example.org.", `${args[0]} without answer auto`);
    assert.equal(m1.question[0].name, `${asked}.`);

    const auto = zone(...ZONE);
    const h = await chain(auto, dir("rewrite", ["name", ...args, "answer", "auto"]));
    const m2 = await h.serve(makeRequest(asked, Type.A));
    assert.equal(m2.answer[0].name, `${asked}.`, `${args[0]} with answer auto`);
  }
});

test("suffix with answer auto maps the whole CNAME chain back", async () => {
  const next = zone(...ZONE);
  const h = await chain(
    next,
    dir("rewrite", ["name", "suffix", "corp.test", "example.org", "answer", "auto"]),
  );
  const m = await h.serve(makeRequest("www.corp.test", Type.A));
  assert.deepEqual(text(m.answer), [
    "www.corp.test.\t60\tIN\tCNAME\tweb.corp.test.",
    "web.corp.test.\t60\tIN\tA\t192.0.2.1",
  ]);
  assert.equal(m.authority[0].name, "corp.test.");
});

test("regex with groups, and answer name mapping reply names with a regex", async () => {
  const next = zone(
    "ftp.service.us-west-1.consul. 5 IN A 10.10.10.10",
    "ftp.service.us-west-1.consul. 5 IN A 10.20.20.20",
  );
  const h = await chain(
    next,
    dir("rewrite", [
      "stop",
      "name",
      "regex",
      "(.*)-(us-west-1)\\.example\\.org",
      "{1}.service.{2}.consul",
      "answer",
      "name",
      "(.*)\\.service\\.(us-west-1)\\.consul",
      "{1}-{2}.example.org",
    ]),
  );
  const m = await h.serve(makeRequest("ftp-us-west-1.example.org", Type.A));
  assert.equal(next.seen[0].qname, "ftp.service.us-west-1.consul.");
  assert.deepEqual(
    m.answer.map((r) => r.name),
    ["ftp-us-west-1.example.org.", "ftp-us-west-1.example.org."],
  );
});

test("the block form reads its lines as one rule; Go named groups are accepted", async () => {
  const next = zone("b.target.test. 5 IN A 10.0.0.2");
  const h = await chain(
    next,
    dir(
      "rewrite",
      ["stop"],
      [
        dir("name", ["regex", "^(?P<x>[a-z]+)\\.src\\.test\\.$", "{1}.target.test"]),
        dir("answer", ["name", "^([a-z]+)\\.target\\.test\\.$", "{1}.src.test"]),
      ],
    ),
  );
  const m = await h.serve(makeRequest("b.src.test", Type.A));
  assert.equal(next.seen[0].qname, "b.target.test.");
  assert.equal(m.answer[0].name, "b.src.test.");
});

test("regex answer auto maps the rewritten question name back", async () => {
  const next = zone("b.target.test. 5 IN A 10.0.0.2");
  const h = await chain(
    next,
    dir("rewrite", ["name", "regex", "^(.+)\\.src\\.test\\.$", "{1}.target.test", "answer", "auto"]),
  );
  assert.equal((await h.serve(makeRequest("b.src.test", Type.A))).answer[0].name, "b.src.test.");
});

test("stop ends the rules at the first match; continue goes on with the rewritten name", async () => {
  const next = zone();
  const stop = await chain(
    next,
    dir("rewrite", ["name", "a.test", "b.test"]),
    dir("rewrite", ["name", "b.test", "c.test"]),
  );
  await stop.serve(makeRequest("a.test", Type.A));
  assert.equal(next.seen.at(-1)!.qname, "b.test.");
  await stop.serve(makeRequest("b.test", Type.A));
  assert.equal(next.seen.at(-1)!.qname, "c.test.", "a rule that did not match does not stop");

  const cont = await chain(
    next,
    dir("rewrite", ["continue", "name", "a.test", "b.test"]),
    dir("rewrite", ["name", "b.test", "c.test"]),
  );
  await cont.serve(makeRequest("a.test", Type.A));
  assert.equal(next.seen.at(-1)!.qname, "c.test.");
});

test("exact rewrites chained with continue are undone in reverse order", async () => {
  const next = zone("c.test. 5 IN A 10.0.0.3");
  const h = await chain(
    next,
    dir("rewrite", ["continue", "name", "a.test", "b.test"]),
    dir("rewrite", ["name", "b.test", "c.test"]),
  );
  assert.equal((await h.serve(makeRequest("a.test", Type.A))).answer[0].name, "a.test.");
});

test("type and class rewrites change the question and give the client its own back", async () => {
  const next = zone('x.test. 5 IN TXT "cpu" "os"');
  const h = await chain(next, dir("rewrite", ["type", "ANY", "TXT"]), dir("rewrite", ["class", "CH", "IN"]));
  const req = makeRequest("x.test", Type.ANY);
  const m = await h.serve(req);
  assert.equal(next.seen[0].qtype, Type.TXT);
  assert.equal(next.seen[0].msg.question[0].type, Type.TXT);
  assert.equal(m.question[0].type, Type.ANY);
  assert.equal(m.answer.length, 1);

  const ch = makeRequest("x.test", Type.TXT, { qclass: Class.CH });
  const m2 = await h.serve(ch);
  assert.equal(next.seen[1].qclass, Class.IN);
  assert.equal(next.seen[1].qtype, Type.TXT);
  assert.equal(m2.question[0].class, Class.CH);
});

test("ttl sets or clamps the TTL of every record for matching names", async () => {
  const next = zone(
    "a.test. 0 IN A 10.0.0.1",
    "a.test. 900 IN A 10.0.0.2",
    "test. 7200 IN SOA ns.test. h.test. 1 2 3 4 5",
  );
  const fixed = await chain(next, dir("rewrite", ["ttl", "suffix", "test", "15"]));
  const m = await fixed.serve(makeRequest("a.test", Type.A));
  assert.deepEqual(
    [...m.answer, ...m.authority].map((r) => r.ttl),
    [15, 15, 15],
  );
  assert.deepEqual(
    next.records.map((r) => r.ttl),
    [0, 900, 7200],
    "stored records keep their TTL",
  );

  const range = await chain(next, dir("rewrite", ["ttl", "regex", "^a\\.", "30-300"]));
  const m2 = await range.serve(makeRequest("a.test", Type.A));
  assert.deepEqual(
    [...m2.answer, ...m2.authority].map((r) => r.ttl),
    [30, 300, 300],
  );
  const open = await chain(next, dir("rewrite", ["ttl", "a.test", "60-"]));
  assert.deepEqual(
    (await open.serve(makeRequest("a.test", Type.A))).answer.map((r) => r.ttl),
    [60, 900],
  );
  const other = await (
    await chain(next, dir("rewrite", ["ttl", "b.test", "-5"]))
  ).serve(makeRequest("a.test", Type.A));
  assert.deepEqual(
    other.answer.map((r) => r.ttl),
    [0, 900],
  );
});

test("a rewritten name that is not a valid domain name is SERVFAIL, without calling next", async () => {
  const next = zone();
  const h = await chain(next, dir("rewrite", ["name", "regex", "^(.*)$", "{1}{1}{1}{1}{1}"]));
  const m = await h.serve(makeRequest(`${"a".repeat(60)}.test`, Type.A));
  assert.equal(m.rcode, Rcode.SERVFAIL);
  assert.equal(next.seen.length, 0);
  const empty = await chain(next, dir("rewrite", ["name", "substring", "b", "."]));
  assert.equal((await empty.serve(makeRequest("a.b.test", Type.A))).rcode, Rcode.SERVFAIL);
});

test("what the chain decides about caching reaches the pipeline's request, every flag of it", async () => {
  let innerStored: unknown = "not called";
  const h = await chain(
    {
      name: "decides",
      serve(req) {
        innerStored = req.cache.stored;
        req.cache.private = true;
        req.cache.limit(7);
        req.cache.stable = true;
        req.cache.rotate = true;
        return Promise.resolve(replyTo(req.msg));
      },
    },
    dir("rewrite", ["name", "a.test", "b.test"]),
  );
  const stored = {
    reply: () => Buffer.alloc(12),
    rcode: 0,
    expires: 0,
    kept: undefined,
    hits: 0,
    lastHit: 0,
  };
  const req = makeRequest("a.test", Type.A);
  req.cache.stored = { ...stored, refreshing: false };
  await h.serve(req);
  assert.deepEqual(
    [req.cache.private, req.cache.maxAge, req.cache.stable, req.cache.rotate],
    [true, 7, true, true],
  );
  assert.equal(innerStored, undefined, "the stored answer of a.test is not one for b.test");
  assert.ok(req.cache.stored, "and the client's request keeps it for the pipeline");
});

test("setup rejects unsupported fields and bad rules with file:line", async () => {
  await assertConfigErrors(setup, [
    [dir("rewrite", ["color", "a", "b"]), /unknown field 'color'/],
    [dir("rewrite", ["stop"]), /missing the field/],
    [dir("rewrite", ["name", "a.test"]), /'name' takes \[MATCH\] FROM TO/],
    [dir("rewrite", ["name", "regex", "(a", "b"]), /invalid regex '\(a'/],
    [dir("rewrite", ["name", "regex", "(a)", "{2}.b"]), /uses a group that '\(a\)' does not have/],
    [dir("rewrite", ["name", "a", "b", "answer", "size", "x"]), /'answer' takes auto/],
    [dir("rewrite", ["name", "a", "b", "answer", "name", "x"]), /'answer name' takes FROM and TO/],
    [dir("rewrite", ["name", "a", "b", "extra"]), /unexpected 'extra'/],
    [dir("rewrite", ["type", "A"]), /'type' takes FROM and TO/],
    [dir("rewrite", ["type", "A", "BOGUS"]), /unknown type 'BOGUS'/],
    [dir("rewrite", ["type", "A", "AXFR"]), /cannot rewrite to type 'AXFR'/],
    [dir("rewrite", ["class", "XX", "IN"]), /unknown class 'XX'/],
    [dir("rewrite", ["ttl", "a.test", "ten"]), /invalid TTL 'ten'/],
    [dir("rewrite", ["ttl", "a.test", "300-30"]), /invalid TTL range/],
    [dir("rewrite", ["ttl", "a.test"]), /'ttl' takes/],
    [dir("rewrite", ["name", "a", "b"], [dir("name", ["c", "d"])]), /takes only continue or stop/],
    [dir("rewrite", [], []), /empty block/],
    [dir("rewrite", [], [dir("name", ["a", "b"], [dir("x")], 8)]), /^Corefile:8 - .*'name' takes no block/],
  ]);
});

test("end to end: dig asks for an alias and gets the zone's answer under its own name", async () => {
  const srv = await startServer(
    `. {\n    rewrite name www.alias.test www.example.org\n    file ${ROOT}/zones/example.org.zone example.org\n}\n`,
  );
  try {
    const r = await dig(srv.port, "WWW.alias.test", "A");
    assert.equal(r.status, "NOERROR");
    assert.match(r.text, /;WWW\.alias\.test\.\s+IN\s+A/);
    // The owner name points at the question, so it shows the client's spelling.
    assert.deepEqual(r.answer, ["WWW.alias.test. 3600 IN A 192.0.2.10"]);
    const again = await dig(srv.port, "www.alias.test", "A");
    assert.deepEqual(again.answer, ["www.alias.test. 3600 IN A 192.0.2.10"], "from the answer cache");
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("answer value maps names inside MX and SRV records only; (?i) makes a regex ignore case", async () => {
  const next = zone(
    "mail.inner.test. 5 IN MX 10 mx.inner.test.",
    "mail.inner.test. 5 IN SRV 0 0 25 smtp.inner.test.",
  );
  const h = await chain(
    next,
    dir("rewrite", [
      "name",
      "regex",
      "(?i)^MAIL\\.OUTER\\.",
      "mail.inner.test",
      "answer",
      "value",
      "^(.+)\\.inner\\.test\\.$",
      "{1}.outer.test",
    ]),
  );
  const m = await h.serve(makeRequest("mail.outer.test", Type.ANY));
  assert.deepEqual(text(m.answer), [
    "mail.inner.test.\t5\tIN\tMX\t10 mx.outer.test.",
    "mail.inner.test.\t5\tIN\tSRV\t0 0 25 smtp.outer.test.",
  ]);
});

test("end to end: answer value maps the name inside a PTR record (CoreDNS's README example)", async () => {
  const zone = zoneText("10.in-addr.arpa", "30.30.30 60 IN PTR ftp-us-west-1.service.consul.");
  const corefile = `. {
    rewrite stop {
        name suffix .arpa .arpa
        answer value (.*)\\.service\\.consul\\. {1}.coredns.rocks.
    }
    file db.arpa 10.in-addr.arpa
}
`;
  const srv = await startServer(corefile, { files: { "db.arpa": zone } });
  try {
    const r = await dig(srv.port, "30.30.30.10.in-addr.arpa", "PTR");
    assert.deepEqual(r.answer, ["30.30.30.10.in-addr.arpa. 60 IN PTR ftp-us-west-1.coredns.rocks."]);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
