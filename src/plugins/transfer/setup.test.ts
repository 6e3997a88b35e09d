import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./setup.ts";
import { Secondaries } from "./secondaries.ts";
import { offerTransferer } from "./transferer.ts";
import { directive, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { parseRRText } from "../../dns/text.ts";

const to = (...args: string[]) => directive("to", args, undefined, 4);
const transfer = (args: string[], block?: ReturnType<typeof directive>[]) =>
  directive("transfer", args, block);
const ctx = () => fakeContext({ zones: ["example.org.", "cluster.local."] }).ctx;

test("transfer: bad stanzas are start-up errors with file and line", async () => {
  await assertConfigErrors(
    setup,
    [
      [transfer([]), /^Corefile:3 - Error during parsing: transfer: 'to' is required/],
      [transfer([], []), /'to' is required/],
      [transfer([], [to()]), /^Corefile:4 - .*transfer: 'to' takes at least 1 argument/],
      [transfer([], [to("10.0.0.300")]), /^Corefile:4 - .*to: '10\.0\.0\.300' is not an address/],
      [transfer([], [to("host.example.org")]), /'host\.example\.org' is not an address/],
      [transfer([], [to("10.0.0.0/33")]), /'10\.0\.0\.0\/33' is not a CIDR prefix/],
      [transfer([], [to("1.2.3.4:99999")]), /'1\.2\.3\.4:99999' is not an address/],
      [
        transfer([], [directive("from", ["10.0.0.1"], undefined, 5)]),
        /^Corefile:5 - .*unknown property 'from'/,
      ],
      [transfer(["example.com"], [to("*")]), /zone 'example\.com\.' is not inside the server block's zones/],
    ],
    ctx,
  );
});

test("transfer: a `to` line's key is one of the block's tsig secrets, after addresses it signs NOTIFY to", async () => {
  const withKey = () => {
    const c = ctx();
    c.block.tsig = { secrets: new Map([["transfer-key.", Buffer.from("secret")]]), zones: ["example.org."] };
    return c;
  };
  await assertConfigErrors(
    setup,
    [
      [
        transfer([], [to("10.0.0.1", "key", "other-key")]),
        /^Corefile:4 - .*to: key 'other-key\.' is no secret/,
      ],
      [transfer([], [to("10.0.0.1", "key")]), /'key NAME' comes once, after the addresses/],
      [transfer([], [to("key", "transfer-key.")]), /'key NAME' comes once, after the addresses/],
      [transfer([], [to("10.0.0.1", "key", "transfer-key.", "10.0.0.2")]), /'key NAME' comes once/],
      [transfer([], [to("*", "10.0.0.0/8", "key", "transfer-key.")]), /names no address to notify/],
      [
        transfer([], [to("10.0.0.1", "key", "transfer-key."), to("10.0.0.1")]),
        /'10\.0\.0\.1' is named before with another key/,
      ],
    ],
    withKey,
  );
  await assertConfigErrors(
    setup,
    [[transfer([], [to("10.0.0.1", "key", "transfer-key.")]), /is no secret/]],
    ctx,
  );
  assert.ok(setup(transfer([], [to("10.0.0.1", "10.0.0.2:5300", "key", "Transfer-Key")]), withKey()));
});

test("transfer: CoreDNS's forms of 'to' parse, and only the named clients may transfer", () => {
  const s = new Secondaries();
  for (const e of ["10.0.0.1", "10.0.0.2:5300", "[fd00::53]:53", "fd00::54", "192.0.2.0/24", "fd01::/64"]) {
    assert.equal(s.add(e), undefined, e);
  }
  for (const ok of [
    "10.0.0.1",
    "10.0.0.2",
    "::ffff:10.0.0.1",
    "fd00::53",
    "fd00::54",
    "192.0.2.200",
    "fd01::7",
  ]) {
    assert.ok(s.allows(ok), ok);
  }
  for (const no of ["10.0.0.3", "127.0.0.1", "fd00::55", "192.0.3.1", "fd02::1", ""])
    assert.ok(!s.allows(no), no);
  // NOTIFY goes to each address named one by one, at its port or 53; not to prefixes.
  assert.deepEqual(
    s.notifyTargets.map((t) => `${t.host} ${t.port}`),
    ["10.0.0.1 53", "10.0.0.2 5300", "fd00::53 53", "fd00::54 53"],
  );
  assert.match(s.add("10.0.0.9:0") ?? "", /not an address/);
  const any = new Secondaries();
  any.add("*");
  assert.equal(any.notifyTargets.length, 0);
  assert.ok(any.allows("203.0.113.9"));
});

test("transfer: the stanza's zones and 'to' lines reach the handler; sources are read when asked", async () => {
  const f = fakeContext({ zones: ["example.org.", "cluster.local."] });
  const plugin = await setup(transfer(["example.org"], [to("10.0.0.1"), to("127.0.0.1")]), f.ctx);
  assert.ok(plugin);
  const next = recordingNext();
  const h = plugin(next);
  // Set up after transfer, as kubernetes and file are (they come later in the chain).
  const soa = parseRRText("example.org. 60 IN SOA ns. host. 7 1 1 1 1");
  offerTransferer(f.ctx.block.shared, {
    name: "fake",
    zones: () => ["example.org."],
    transfer: (z) => (z === "example.org." ? { soa, records: () => [] } : undefined),
  });
  await f.start();
  const reply = await h.serve({
    ...makeRequest("example.org", Type.AXFR, { proto: "tcp" }),
    stream: () => Promise.resolve(true),
  });
  assert.equal(reply.rcode, Rcode.NOERROR);
  assert.equal(reply.answer.length, 2);
  // cluster.local is the block's but not the stanza's: passed on.
  await h.serve(makeRequest("cluster.local", Type.AXFR, { proto: "tcp" }));
  assert.equal(next.calls.length, 1);
  assert.ok(!f.logs.some((l) => l.msg.includes("no plugin")), "a source was there at start-up");
});

test("transfer: warns at start-up when no plugin of the block holds zones", async () => {
  const f = fakeContext({ zones: ["example.org."] });
  await setup(transfer([], [to("*")]), f.ctx);
  await f.start();
  assert.ok(
    f.logs.some((l) => l.level === 40 && l.msg.includes("no plugin in this server block holds zones")),
  );
});
