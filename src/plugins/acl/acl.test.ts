import { test } from "node:test";
import assert from "node:assert/strict";
import type { Handler } from "../../chain/handler.ts";
import type { Directive } from "../../corefile/types.ts";
import { setup } from "./setup.ts";
import { decide } from "./policy.ts";
import { aclStats } from "./stats.ts";
import { NetSet } from "../../dns/nets.ts";
import { makeRequest, recordingNext, type RequestOptions } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { blockHandler } from "../../../test/helpers/block-handler.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { zoneText } from "../../../test/helpers/zone-text.ts";
import { EdnsOption, Rcode, Type } from "../../dns/constants.ts";

/** The acl handler of these directives in one server block for `zones`, in front of a NOERROR answer. */
async function chain(zones: string[], ...ds: Directive[]): Promise<Handler> {
  return (await blockHandler(setup, recordingNext(Rcode.NOERROR), ds, { zones })).h;
}

const line = (action: string, ...words: string[]) => dir(action, words);

function ask(h: Handler, name: string, type: number, o: RequestOptions = {}) {
  const req = makeRequest(name, type, { zone: "example.org.", ...o });
  return h.serve(req).then((reply) => ({ req, reply }));
}

const ede = (m: { edns?: { options: { code: number; data: Uint8Array }[] } }) =>
  m.edns?.options.find((o) => o.code === EdnsOption.EDE)?.data;

test("block by network: REFUSED with EDE Blocked; others pass; both replies private", async () => {
  const h = await chain(
    ["example.org."],
    dir("acl", [], [line("allow", "net", "10.0.0.0/8"), line("block")]),
  );
  const inside = await ask(h, "www.example.org", Type.A, { remoteAddress: "10.1.2.3" });
  assert.equal(inside.reply.rcode, Rcode.NOERROR);
  assert.equal(inside.req.cache.private, true, "an allowed reply depends on who asked too");
  const outside = await ask(h, "www.example.org", Type.A, { remoteAddress: "192.0.2.1", edns: true });
  assert.equal(outside.reply.rcode, Rcode.REFUSED);
  assert.deepEqual(ede(outside.reply), Uint8Array.of(0, 15));
  assert.equal(outside.req.answeredBy, "acl");
  assert.equal(outside.req.cache.private, true);
  const mapped = await ask(h, "www.example.org", Type.A, { remoteAddress: "::ffff:10.9.9.9" });
  assert.equal(mapped.reply.rcode, Rcode.NOERROR, "an IPv4 client on a dual-stack socket");
});

test("filter by type: an empty NOERROR with EDE Filtered, cacheable since every client gets it", async () => {
  const h = await chain(["."], dir("acl", [], [line("filter", "type", "AAAA", "HTTPS")]));
  const aaaa = await ask(h, "www.example.org", Type.AAAA, { edns: true });
  assert.equal(aaaa.reply.rcode, Rcode.NOERROR);
  assert.deepEqual([aaaa.reply.answer, aaaa.reply.authority], [[], []]);
  assert.deepEqual(ede(aaaa.reply), Uint8Array.of(0, 17));
  assert.equal(aaaa.req.cache.private, false);
  const a = await ask(h, "www.example.org", Type.A);
  assert.equal(a.req.cache.private, false);
  assert.equal(a.reply.edns, undefined);
});

test("drop: the request is marked to go unanswered", async () => {
  const h = await chain(["."], dir("acl", [], [line("drop", "type", "ANY", "net", "*")]));
  const { req } = await ask(h, "www.example.org", Type.ANY);
  assert.equal(req.noReply, true);
  assert.equal((await ask(h, "www.example.org", Type.A)).req.noReply, undefined);
});

test("rules: the first matching policy decides; allow ends the check; directives in Corefile order", async () => {
  const handler = await chain(
    ["example.org."],
    dir("acl", ["a.example.org"], [line("allow", "net", "192.0.2.0/24"), line("block", "type", "A")]),
    dir("acl", [], [line("filter", "net", "192.0.2.0/25"), line("drop", "type", "MX")]),
  );
  const cases: [string, number, string, number | "dropped"][] = [
    ["x.a.example.org", Type.A, "192.0.2.1", Rcode.NOERROR], // allowed by the first rule: done
    ["x.a.example.org", Type.A, "198.51.100.1", Rcode.REFUSED], // blocked by type A
    ["x.a.example.org", Type.TXT, "198.51.100.1", Rcode.NOERROR], // no match in either rule
    ["x.a.example.org", Type.MX, "198.51.100.1", "dropped"], // no match in the first, MX in the second
    ["b.example.org", Type.A, "192.0.2.1", Rcode.NOERROR], // filtered: empty NOERROR
  ];
  for (const [name, type, address, want] of cases) {
    const { req, reply } = await ask(handler, name, type, { remoteAddress: address });
    if (want === "dropped") assert.equal(req.noReply, true, `${name} ${type} ${address}`);
    else assert.equal(reply.rcode, want, `${name} ${type} ${address}`);
  }
  const filtered = await ask(handler, "b.example.org", Type.A, { remoteAddress: "192.0.2.1" });
  assert.equal(filtered.req.answeredBy, "acl");
});

test("the decision says when it depends on the client's address", () => {
  const tens = new NetSet();
  tens.add("10.0.0.0/8");
  const rules = [
    {
      zones: ["."],
      policies: [
        { action: "block" as const, types: new Set([Type.AAAA]), nets: undefined },
        { action: "allow" as const, types: new Set([Type.A]), nets: tens },
        { action: "block" as const, types: undefined, nets: undefined },
      ],
    },
  ];
  assert.deepEqual(decide(rules, "x.", Type.AAAA, "1.1.1.1"), {
    action: "block",
    zone: ".",
    bySource: false,
  });
  assert.deepEqual(decide(rules, "x.", Type.A, "10.0.0.1"), { action: "allow", zone: ".", bySource: true });
  assert.deepEqual(decide(rules, "x.", Type.A, "11.0.0.1"), { action: "block", zone: ".", bySource: true });
  assert.deepEqual(decide(rules, "x.", Type.MX, "10.0.0.1"), { action: "block", zone: ".", bySource: false });
});

test("names outside the acl's zones and internal lookups pass untouched", async () => {
  const h = await chain(["."], dir("acl", ["example.org"], [line("block")]));
  const other = await ask(h, "example.com", Type.A);
  assert.equal(other.reply.rcode, Rcode.NOERROR);
  assert.equal(other.req.cache.private, false);
  const internal = await ask(h, "www.example.org", Type.A, { remoteAddress: "" });
  assert.equal(internal.reply.rcode, Rcode.NOERROR);
});

test("counters per server and zone, by action", async () => {
  const h = await chain(["stats.test."], dir("acl", [], [line("block", "type", "TXT")]));
  const s = aclStats("dns://:53", "stats.test.");
  const before = { ...s };
  await ask(h, "x.stats.test", Type.TXT);
  await ask(h, "x.stats.test", Type.A);
  assert.deepEqual(s, { ...before, block: before.block + 1, allow: before.allow + 1 });
});

test("setup rejects what CoreDNS's acl does not take, at file:line", async () => {
  await assertConfigErrors(
    setup,
    [
      [dir("acl"), /^Corefile:3 - .*acl: needs a block/],
      [dir("acl", [], [dir("deny", [], undefined, 5)]), /^Corefile:5 - .*unknown action 'deny'/],
      [dir("acl", [], [line("block", "10.0.0.0/8")]), /unexpected '10.0.0.0\/8' \(want 'type' or 'net'\)/],
      [dir("acl", [], [line("block", "type", "BOGUS")]), /unknown type 'BOGUS'/],
      [dir("acl", [], [line("block", "net", "10.0.0.0/40")]), /prefix length must be 0 to 32/],
      [dir("acl", [], [line("block", "net", "example.org")]), /not an IP address or CIDR prefix/],
      [dir("acl", [], [line("block", "type", "net", "10.0.0.0/8")]), /'type' needs at least one value/],
      [dir("acl", ["example.com"], [line("block")]), /not inside the server block's zones/],
      [dir("acl", [], [dir("block", [], [dir("x")])]), /'block' takes no block/],
    ],
    () => fakeContext({ zones: ["example.org."] }).ctx,
  );
});

test("end to end: the answer cache never hands an allowed client's reply to a blocked one", async () => {
  const zone = zoneText("acl.test", "www 60 IN A 192.0.2.1", "www 60 IN AAAA 2001:db8::1");
  const corefile = `acl.test {
    acl {
        filter type AAAA
        allow net 127.0.0.1
        drop net 127.0.0.3
        block
    }
    file db.acl.test
}
`;
  const srv = await startServer(corefile, { files: { "db.acl.test": zone } });
  try {
    const from = (source: string, type = "A") => dig(srv.port, "www.acl.test", type, "-b", source);
    for (let i = 0; i < 3; i++) {
      const allowed = await from("127.0.0.1");
      assert.deepEqual(allowed.answer, ["www.acl.test. 60 IN A 192.0.2.1"], `allowed, query ${i}`);
      const blocked = await from("127.0.0.2");
      assert.equal(blocked.status, "REFUSED", `blocked, query ${i}`);
      assert.deepEqual(blocked.answer, []);
      assert.match(blocked.text, /EDE: 15 \(Blocked\)/);
    }
    // The filter does not depend on who asks: every client gets the empty answer.
    for (const source of ["127.0.0.1", "127.0.0.2", "127.0.0.1"]) {
      const aaaa = await from(source, "AAAA");
      assert.equal(aaaa.status, "NOERROR", source);
      assert.deepEqual(aaaa.answer, [], source);
    }
    // Dropped: no reply at all, dig gives up (its exit code 9).
    await assert.rejects(from("127.0.0.3"), (err: { stdout?: string }) => /timed out/.test(err.stdout ?? ""));
    assert.deepEqual((await from("127.0.0.1")).answer, ["www.acl.test. 60 IN A 192.0.2.1"]);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
