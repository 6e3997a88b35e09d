import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Directive } from "../../corefile/types.ts";
import type { Handler } from "../../chain/handler.ts";
import type { Msg } from "../../dns/message.ts";
import { setup } from "./setup.ts";
import { parseHosts } from "./hosts-file.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors, configErrorLike } from "../../../test/helpers/config-errors.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";

const HOSTS = `# test hosts file
127.0.0.1   localhost
10.0.0.1    example.org WWW.Example.ORG   # trailing comment
fd00::1     example.org
not-an-ip   broken.example.org
10.0.0.2
192.168.1.10 *.apps.example.org
10.9.9.9    outside.net
`;

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "clusterdns-hosts-"));
}

async function build(d: Directive, root: string, zones?: string[]) {
  const f = fakeContext({ root, zones });
  const plugin = await setup(d, f.ctx);
  assert.ok(plugin);
  const next = recordingNext();
  // Not a spread: `invalidations` must stay live.
  return Object.assign(f, { handler: plugin(next), next });
}

async function ask(h: Handler, name: string, qtype: number, qclass: number = Class.IN): Promise<Msg> {
  return h.serve(makeRequest(name, qtype, { qclass }));
}

function addresses(m: Msg): string[] {
  return m.answer.map((rr) =>
    "address" in rr.data ? rr.data.address : "target" in rr.data ? rr.data.target : "?",
  );
}

test("parseHosts reads entries, skips comments and reports bad lines with their line number", () => {
  const r = parseHosts(HOSTS);
  assert.deepEqual(
    r.entries.map((e) => [e.address, e.family, e.names]),
    [
      ["127.0.0.1", 4, ["localhost."]],
      ["10.0.0.1", 4, ["example.org.", "www.example.org."]],
      ["fd00::1", 6, ["example.org."]],
      ["192.168.1.10", 4, ["*.apps.example.org."]],
      ["10.9.9.9", 4, ["outside.net."]],
    ],
  );
  assert.deepEqual(
    r.problems.map((p) => p.line),
    [5, 6],
  );
});

test("parseHosts strips IPv6 zones and treats IPv4-mapped addresses as IPv4", () => {
  const r = parseHosts("fe80::1%eth0 link\n::ffff:10.1.2.3 mapped\n10.0.0.1 bad*name\n");
  assert.deepEqual(
    r.entries.map((e) => [e.address, e.family]),
    [
      ["fe80::1", 6],
      ["10.1.2.3", 4],
    ],
  );
  assert.equal(r.problems.length, 1);
  assert.equal(r.problems[0].line, 3);
});

test("A and AAAA come from the file, case-insensitively, authoritative, with the default TTL", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "hosts"), HOSTS);
  const { handler, next } = await build(dir("hosts", ["hosts", "example.org"]), root);

  const req = makeRequest("Example.ORG", Type.A);
  const a = await handler.serve(req);
  assert.equal(a.rcode, Rcode.NOERROR);
  assert.equal(a.aa, true);
  assert.deepEqual(addresses(a), ["10.0.0.1"]);
  assert.equal(a.answer[0].ttl, 3600);
  assert.equal(a.answer[0].name, "example.org.");
  assert.equal(req.answeredBy, "hosts");

  assert.deepEqual(addresses(await ask(handler, "example.org", Type.AAAA)), ["fd00::1"]);
  assert.deepEqual(addresses(await ask(handler, "www.example.org", Type.A)), ["10.0.0.1"]);
  assert.equal(next.calls.length, 0);
});

test("a known name without the asked type is NODATA; an unknown name in the zone is NXDOMAIN", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "hosts"), HOSTS);
  const { handler, next } = await build(dir("hosts", ["hosts", "example.org"]), root);

  const nodata = await ask(handler, "www.example.org", Type.AAAA);
  assert.equal(nodata.rcode, Rcode.NOERROR);
  assert.equal(nodata.answer.length, 0);
  assert.equal(nodata.aa, true);
  const mx = await ask(handler, "example.org", Type.MX);
  assert.equal(mx.rcode, Rcode.NOERROR);
  assert.equal(mx.answer.length, 0);

  const nx = await ask(handler, "nothere.example.org", Type.A);
  assert.equal(nx.rcode, Rcode.NXDOMAIN);
  assert.equal(nx.aa, true);
  assert.equal(next.calls.length, 0);

  // Outside the plugin's zones (outside.net is in the file but not served), and other classes: passed on.
  assert.equal((await ask(handler, "outside.net", Type.A)).rcode, Rcode.REFUSED);
  assert.equal((await ask(handler, "example.org", Type.A, Class.CH)).rcode, Rcode.REFUSED);
  assert.equal(next.calls.length, 2);
});

test("wildcards match exactly one label and make no PTR", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "hosts"), HOSTS);
  const { handler } = await build(dir("hosts", ["hosts"]), root);
  assert.deepEqual(addresses(await ask(handler, "web.apps.example.org", Type.A)), ["192.168.1.10"]);
  assert.equal((await ask(handler, "apps.example.org", Type.A)).rcode, Rcode.NXDOMAIN);
  assert.equal((await ask(handler, "a.b.apps.example.org", Type.A)).rcode, Rcode.NXDOMAIN);
  const ptr = await ask(handler, "10.1.168.192.in-addr.arpa", Type.PTR);
  assert.equal(ptr.rcode, Rcode.REFUSED, "passed on");
});

test("PTR answers for addresses in the file; unknown addresses and no_reverse pass on", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "hosts"), HOSTS);
  const { handler } = await build(dir("hosts", ["hosts", "example.org"]), root);

  const v4 = await ask(handler, "1.0.0.10.in-addr.arpa", Type.PTR);
  assert.equal(v4.rcode, Rcode.NOERROR);
  assert.deepEqual(addresses(v4), ["example.org.", "www.example.org."]);
  assert.ok(v4.answer.every((rr) => rr.type === Type.PTR && rr.ttl === 3600));

  const v6 = await ask(handler, "1." + "0.".repeat(29) + "d.f.ip6.arpa", Type.PTR);
  assert.deepEqual(addresses(v6), ["example.org."]);

  // localhost and outside.net are outside the zones: no PTR for them.
  assert.equal((await ask(handler, "1.0.0.127.in-addr.arpa", Type.PTR)).rcode, Rcode.REFUSED);
  assert.equal((await ask(handler, "2.0.0.10.in-addr.arpa", Type.PTR)).rcode, Rcode.REFUSED);

  const noRev = await build(dir("hosts", ["hosts", "example.org"], [dir("no_reverse")]), root);
  assert.equal((await ask(noRev.handler, "1.0.0.10.in-addr.arpa", Type.PTR)).rcode, Rcode.REFUSED);
  assert.deepEqual(addresses(await ask(noRev.handler, "example.org", Type.A)), ["10.0.0.1"]);
});

test("fallthrough passes unknown names on, for all zones or only the listed ones", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "hosts"), HOSTS);

  const all = await build(dir("hosts", ["hosts"], [dir("fallthrough")]), root);
  assert.equal((await ask(all.handler, "nothere.example.org", Type.A)).rcode, Rcode.REFUSED);
  assert.equal(all.next.calls.length, 1);
  // NODATA does not fall through.
  assert.equal((await ask(all.handler, "www.example.org", Type.AAAA)).rcode, Rcode.NOERROR);
  assert.equal(all.next.calls.length, 1);

  const some = await build(dir("hosts", ["hosts"], [dir("fallthrough", ["sub.example.org"])]), root);
  assert.equal((await ask(some.handler, "x.sub.example.org", Type.A)).rcode, Rcode.REFUSED);
  assert.equal((await ask(some.handler, "nothere.example.org", Type.A)).rcode, Rcode.NXDOMAIN);

  const unsup = await build(
    dir("hosts", ["hosts"], [dir("fallthrough"), dir("fallthrough_unsupported")]),
    root,
  );
  assert.equal((await ask(unsup.handler, "example.org", Type.TXT)).rcode, Rcode.REFUSED);
  assert.equal((await ask(unsup.handler, "www.example.org", Type.AAAA)).rcode, Rcode.NOERROR);
});

test("inline lines are served together with the file; ttl applies to both", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "hosts"), HOSTS);
  const d = dir(
    "hosts",
    ["hosts"],
    [dir("10.0.0.7", ["example.org", "inline.example.org"]), dir("ttl", ["60"])],
  );
  const { handler } = await build(d, root);
  const a = await ask(handler, "example.org", Type.A);
  assert.deepEqual(addresses(a), ["10.0.0.1", "10.0.0.7"]);
  assert.ok(a.answer.every((rr) => rr.ttl === 60));
  assert.deepEqual(addresses(await ask(handler, "inline.example.org", Type.A)), ["10.0.0.7"]);
});

test("bad lines of the file are logged with file:line and skipped", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  writeFileSync(join(root, "hosts"), HOSTS);
  const { logs } = await build(dir("hosts", ["hosts"]), root);
  const warned = logs.filter((l) => l.level === 40).map((l) => l.msg);
  assert.equal(warned.length, 2);
  assert.match(warned[0], new RegExp(`${join(root, "hosts")}:5: 'not-an-ip'`));
  assert.match(warned[1], /hosts:6: no host name/);
});

test("a missing file is a warning, logged once; inline entries are still served", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const d = dir("hosts", ["absent.hosts"], [dir("10.1.1.1", ["inline.test"]), dir("reload", ["10ms"])]);
  const b = await build(d, root);
  await b.start();
  t.after(b.stop);
  assert.deepEqual(addresses(await ask(b.handler, "inline.test", Type.A)), ["10.1.1.1"]);
  // Let a few polls pass: still one warning.
  await new Promise((r) => setTimeout(r, 60));
  const warned = b.logs.filter((l) => l.level === 40);
  assert.equal(warned.length, 1);
  assert.match(warned[0].msg, /absent\.hosts is not readable/);
});

test("reload picks up a changed file and invalidates the cache", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const path = join(root, "hosts");
  writeFileSync(path, "10.0.0.1 app.test\n");
  const b = await build(dir("hosts", ["hosts"], [dir("reload", ["10ms"])]), root);
  await b.start();
  t.after(b.stop);
  assert.deepEqual(addresses(await ask(b.handler, "app.test", Type.A)), ["10.0.0.1"]);

  writeFileSync(path, "10.0.0.2 app.test\n10.0.0.3 new.test\n");
  const changed = await waitFor(
    async () => addresses(await ask(b.handler, "app.test", Type.A))[0] === "10.0.0.2",
  );
  assert.ok(changed, "the new address was served");
  assert.deepEqual(addresses(await ask(b.handler, "new.test", Type.A)), ["10.0.0.3"]);
  assert.ok(b.invalidations >= 1);

  await b.stop();
  const after = b.invalidations;
  writeFileSync(path, "10.0.0.4 app.test\n");
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(b.invalidations, after, "no polling after shutdown");
});

test("a file that can no longer be read keeps its last entries, warned once per failure, until it is back", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const path = join(root, "hosts");
  writeFileSync(path, "10.0.0.1 app.test\n");
  const d = dir("hosts", ["hosts"], [dir("10.1.1.1", ["inline.test"]), dir("reload", ["10ms"])]);
  const b = await build(d, root);
  await b.start();
  t.after(b.stop);
  const warnings = () => b.logs.filter((l) => l.level === 40).map((l) => l.msg);
  const kept = `hosts file ${path} is not readable (ENOENT): keeping the entries last read from it`;

  renameSync(path, join(root, "hosts.moved"));
  assert.ok(await waitFor(async () => warnings().length > 0), "the failure is warned");
  await new Promise((r) => setTimeout(r, 60)); // a few more polls of the missing file: no more warnings
  assert.deepEqual(warnings(), [kept]);
  assert.deepEqual(addresses(await ask(b.handler, "app.test", Type.A)), ["10.0.0.1"]);
  assert.deepEqual(addresses(await ask(b.handler, "inline.test", Type.A)), ["10.1.1.1"]);
  assert.equal(b.invalidations, 0, "the data served did not change");

  // Back, changed: read again. Gone again: a new failure, warned again, the newer entries kept.
  writeFileSync(path, "10.0.0.2 app.test\n");
  assert.ok(await waitFor(async () => addresses(await ask(b.handler, "app.test", Type.A))[0] === "10.0.0.2"));
  rmSync(path);
  assert.ok(await waitFor(async () => warnings().length > 1), "the second failure is warned");
  assert.deepEqual(warnings(), [kept, kept]);
  assert.deepEqual(addresses(await ask(b.handler, "app.test", Type.A)), ["10.0.0.2"]);
});

/** Polls `cond` every 10 ms, for at most 5 s. */
async function waitFor(cond: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

test("setup errors name file:line", async (t) => {
  const root = tempDir();
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const bad: [Directive, RegExp][] = [
    [dir("hosts", [], [dir("ttl", ["0"], undefined, 3)]), /^Corefile:3 - .*hosts: 0 is out of range/],
    [dir("hosts", [], [dir("ttl", [], undefined, 4)]), /^Corefile:4 - .*hosts: 'ttl' takes 1/],
    [dir("hosts", [], [dir("reload", ["soon"], undefined, 5)]), /^Corefile:5 - .*invalid duration 'soon'/],
    [dir("hosts", [], [dir("no_reverse", ["x"], undefined, 6)]), /^Corefile:6 - .*'no_reverse' takes 0/],
    [dir("hosts", [], [dir("upstream", [], undefined, 7)]), /^Corefile:7 - .*unknown property 'upstream'/],
    [
      dir("hosts", [], [dir("10.0.0.1", [], undefined, 8)]),
      /^Corefile:8 - .*bad inline hosts line: no host name/,
    ],
    [dir("hosts", [], [dir("10.0.0.300", ["a.test"], undefined, 9)]), /^Corefile:9 - .*not an IP address/],
    [dir("hosts", [], [dir("fallthrough_unsupported")], 2), /^Corefile:2 - .*needs 'fallthrough'/],
    [dir("hosts", [], [dir("ttl", ["5"], [dir("x")], 10)]), /^Corefile:10 - .*'ttl' takes no block/],
    [dir("hosts", ["hosts", "bad zone!"], undefined, 11), /^Corefile:11 - .*invalid zone/],
    [dir("hosts", [], [dir("fallthrough", ["a b"], undefined, 13)]), /^Corefile:13 - .*invalid zone 'a b'/],
  ];
  await assertConfigErrors(setup, bad, () => fakeContext({ root }).ctx);
  await assert.rejects(
    async () =>
      setup(
        dir("hosts", ["hosts", "other.net"], undefined, 14),
        fakeContext({ root, zones: ["example.org."] }).ctx,
      ),
    configErrorLike(/^Corefile:14 - .*not inside the server block's zones/),
  );
  // A second hosts line in a block is refused before setup (corefile/check.ts, check.test.ts).
});

test("defaults: /etc/hosts, the block's zones", async () => {
  const f = fakeContext({ root: "/nonexistent-root", zones: ["example.org."] });
  const plugin = await setup(dir("hosts"), f.ctx);
  assert.ok(plugin);
  // /etc/hosts is read (or absent): either way a name outside the zones is passed on.
  const next = recordingNext();
  assert.equal((await plugin(next).serve(makeRequest("localhost", Type.A))).rcode, Rcode.REFUSED);
});
