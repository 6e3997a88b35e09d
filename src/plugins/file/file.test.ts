import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import type { Directive } from "../../corefile/types.ts";
import type { Handler, Plugin } from "../../chain/handler.ts";
import type { SetupContext } from "../../setup/context.ts";
import { ConfigError } from "../../corefile/errors.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { rrToText } from "../../dns/text.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { ZoneReloader, ZoneSet, fileHandler, fileStamp, loadZones } from "./file.ts";
import { Zone } from "./zone.ts";
import { parseZone } from "./zone-parser.ts";
import { replyTo } from "../../dns/message.ts";
import { LOOKED_UP_SECONDS } from "../../answers/policy.ts";
import { setup } from "./setup.ts";

const ZONES_DIR = resolve(import.meta.dirname, "../../../zones");

/** A context for a block serving example.org (or `zones`), with the Corefile in `root`. */
function blockCtx(root: string, zones: string[] = ["example.org."]) {
  return fakeContext({ root, zones });
}

async function setupPlugin(d: Directive, ctx: SetupContext): Promise<Plugin> {
  const plugin = await setup(d, ctx);
  assert.ok(plugin);
  return plugin;
}

/** The ConfigError that setup throws. */
async function setupError(d: Directive, ctx: SetupContext): Promise<ConfigError> {
  try {
    await setup(d, ctx);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `not a ConfigError: ${String(err)}`);
    assert.equal(err.code, "CDNS_ERR_CONFIG");
    return err;
  }
  assert.fail("setup did not fail");
}

async function answerA(h: Handler, name: string): Promise<string[]> {
  const m = await h.serve(makeRequest(name, Type.A));
  return m.answer.filter((rr) => rr.type === Type.A).map((rr) => (rr.data as { address: string }).address);
}

describe("file handler", () => {
  let h: Handler;
  let next: ReturnType<typeof recordingNext>;

  before(async () => {
    const f = blockCtx(ZONES_DIR);
    next = recordingNext();
    h = (await setupPlugin(dir("file", ["example.org.zone"], [dir("reload", ["0"], undefined, 4)]), f.ctx))(
      next,
    );
  });

  it("answers from the zone with AA set", async () => {
    const req = makeRequest("WWW.example.org", Type.A);
    const m = await h.serve(req);
    assert.equal(h.name, "file");
    assert.equal(req.answeredBy, "file");
    assert.equal(m.id, 4242);
    assert.equal(m.qr, true);
    assert.equal(m.rd, true);
    assert.equal(m.aa, true);
    assert.equal(m.rcode, Rcode.NOERROR);
    assert.deepEqual(m.question, req.msg.question);
    assert.deepEqual(m.answer.map(rrToText), ["www.example.org.\t3600\tIN\tA\t192.0.2.10"]);
    assert.deepEqual(m.authority, []);
  });

  it("fills the additional section", async () => {
    const m = await h.serve(makeRequest("example.org", Type.MX));
    assert.deepEqual(m.answer.map(rrToText), ["example.org.\t3600\tIN\tMX\t10 mail.example.org."]);
    assert.deepEqual(m.additional.map(rrToText), [
      "mail.example.org.\t3600\tIN\tA\t192.0.2.25",
      "mail.example.org.\t3600\tIN\tAAAA\t2001:db8::25",
    ]);
  });

  it("answers NXDOMAIN and NODATA with the SOA in authority", async () => {
    const nx = await h.serve(makeRequest("nope.example.org", Type.A));
    assert.equal(nx.rcode, Rcode.NXDOMAIN);
    assert.equal(nx.aa, true);
    assert.deepEqual(nx.authority.map(rrToText), [
      "example.org.\t300\tIN\tSOA\tns1.example.org. hostmaster.example.org. 2024060101 7200 900 1209600 300",
    ]);
    const nodata = await h.serve(makeRequest("www.example.org", Type.MX));
    assert.equal(nodata.rcode, Rcode.NOERROR);
    assert.equal(nodata.answer.length, 0);
    assert.equal(nodata.authority[0].type, Type.SOA);
  });

  it("answers a referral without AA", async () => {
    const m = await h.serve(makeRequest("host.sub.example.org", Type.A));
    assert.equal(m.rcode, Rcode.NOERROR);
    assert.equal(m.aa, false);
    assert.equal(m.answer.length, 0);
    assert.deepEqual(
      m.authority.map((rr) => rr.type),
      [Type.NS, Type.NS],
    );
    assert.ok(m.additional.some((rr) => rr.name === "ns1.sub.example.org."));
  });

  it("answers qclass ANY and refuses other classes in its zones", async () => {
    assert.deepEqual(
      (await h.serve(makeRequest("www.example.org", Type.A, { qclass: Class.ANY }))).answer.length,
      1,
    );
    const calls = next.calls.length;
    const m = await h.serve(makeRequest("www.example.org", Type.TXT, { qclass: Class.CH }));
    assert.equal(m.rcode, Rcode.REFUSED);
    assert.equal(next.calls.length, calls, "not passed on");
  });

  it("passes names outside its zones on", async () => {
    const calls = next.calls.length;
    const req = makeRequest("example.com", Type.A);
    const m = await h.serve(req);
    assert.equal(next.calls.length, calls + 1);
    assert.equal(req.answeredBy, undefined);
    assert.equal(m.aa, false);
  });

  it("refuses zone transfers", async () => {
    const req = makeRequest("example.org", Type.AXFR, { proto: "tcp" });
    const m = await h.serve(req);
    assert.equal(m.rcode, Rcode.REFUSED);
    assert.equal(req.answeredBy, "file");
  });

  it("answers from the most specific of several zones", async () => {
    const soa = (o: string) => `@ SOA ns hostmaster 1 1 1 1 1\n@ NS ns.${o}\n`;
    const parent = new Zone(
      "example.org.",
      parseZone(`${soa("example.org.")}sub NS ns.sub\nns.sub A 192.0.2.1\n`, {
        file: "p",
        origin: "example.org.",
      }),
    );
    const child = new Zone(
      "sub.example.org.",
      parseZone(`${soa("sub.example.org.")}www A 192.0.2.7\n`, { file: "c", origin: "sub.example.org." }),
    );
    const zones = new ZoneSet([parent, child]);
    assert.equal(zones.match("www.sub.example.org."), child);
    assert.equal(zones.match("sub.example.org."), child);
    assert.equal(zones.match("www.example.org."), parent);
    assert.equal(zones.match("example.net."), undefined);
    const m = await fileHandler(zones, recordingNext()).serve(makeRequest("www.sub.example.org", Type.A));
    assert.equal(m.aa, true);
    assert.deepEqual(m.answer.map(rrToText), ["www.sub.example.org.\t1\tIN\tA\t192.0.2.7"]);
  });

  it("a chain completed by a lookup through the server is replayed for LOOKED_UP_SECONDS at most", async () => {
    const text = `@ SOA ns hostmaster 1 1 1 1 1\n@ NS ns\nwww 60 CNAME www.example.net.\nin 60 CNAME ns\n`;
    const zones = new ZoneSet([
      new Zone("example.org.", parseZone(text, { file: "z", origin: "example.org." })),
    ]);
    const lookup = (name: string, qtype: number) => {
      const reply = replyTo(makeRequest(name, qtype).msg);
      reply.answer.push({
        name,
        type: Type.A,
        class: Class.IN,
        ttl: 300,
        data: { type: Type.A, address: "192.0.2.9" },
      });
      return Promise.resolve(reply);
    };
    const out = makeRequest("www.example.org", Type.A);
    const m = await fileHandler(zones, recordingNext(), { lookup }).serve(out);
    assert.equal(m.answer.length, 2);
    assert.equal(out.cache.maxAge, LOOKED_UP_SECONDS);
    // A chain that stays in the zone looks nothing up: its replay is the zone's to bound.
    const inside = makeRequest("in.example.org", Type.A);
    await fileHandler(zones, recordingNext(), { lookup }).serve(inside);
    assert.equal(inside.cache.maxAge, Infinity);
  });
});

describe("file setup", () => {
  it("reads the file relative to the Corefile's folder, for the block's zones", async () => {
    const f = blockCtx(ZONES_DIR);
    const h = (await setupPlugin(dir("file", ["example.org.zone"]), f.ctx))(recordingNext());
    assert.deepEqual(await answerA(h, "web.example.org"), ["192.0.2.10"]);
    // The default reload (1m) registers a poller that starts and stops with the server.
    assert.equal(f.startup.length, 1);
    assert.equal(f.shutdown.length, 1);
    await f.start();
    await f.stop();
  });

  it("serves the zones named after DBFILE instead of the block's", async () => {
    const f = blockCtx(resolve(ZONES_DIR, ".."), ["."]);
    const h = (await setupPlugin(dir("file", ["zones/example.org.zone", "Example.ORG"]), f.ctx))(
      recordingNext(),
    );
    assert.deepEqual(await answerA(h, "www.example.org"), ["192.0.2.10"]);
    const next = recordingNext();
    const h2 = (await setupPlugin(dir("file", ["zones/example.org.zone", "example.org"]), f.ctx))(next);
    await h2.serve(makeRequest("example.com", Type.A));
    assert.equal(next.calls.length, 1, "a name outside example.org is not ours even in the root block");
  });

  it("registers no poller with reload 0", async () => {
    const f = blockCtx(ZONES_DIR);
    await setupPlugin(dir("file", ["example.org.zone"], [dir("reload", ["0"], undefined, 4)]), f.ctx);
    assert.equal(f.startup.length, 0);
    assert.equal(f.shutdown.length, 0);
  });

  it("rejects a missing DBFILE", async () => {
    const err = await setupError(dir("file", []), blockCtx(ZONES_DIR).ctx);
    assert.match(err.message, /^Corefile:3 - Error during parsing: file: 'file' takes at least 1 argument/);
  });

  it("rejects unknown options with their line", async () => {
    const d = dir(
      "file",
      ["example.org.zone"],
      [dir("reload", ["1m"], undefined, 4), dir("upstrem", [], undefined, 5)],
    );
    const err = await setupError(d, blockCtx(ZONES_DIR).ctx);
    assert.match(err.message, /^Corefile:5 - .*file: unknown property 'upstrem'/);
    assert.equal(err.line, 5);
  });

  it("fallthrough: NXDOMAIN and NODATA go to the next plugin, in its zones only; answers and referrals do not", async () => {
    for (const [args, passes] of [
      [[], true],
      [["other.org"], false],
    ] as const) {
      const f = blockCtx(ZONES_DIR);
      const next = recordingNext(Rcode.NOERROR);
      const d = dir("file", ["example.org.zone"], [dir("fallthrough", [...args], undefined, 4)]);
      const h = (await setupPlugin(d, f.ctx))(next);
      for (const [name, type] of [
        ["nope.example.org", Type.A],
        ["www.example.org", Type.TXT],
      ] as const) {
        const m = await h.serve(makeRequest(name, type));
        assert.equal(m.rcode === Rcode.NOERROR && m.aa !== true, passes, `${name} ${type} ${args.join()}`);
      }
      assert.equal(next.calls.length, passes ? 2 : 0);
      for (const [name, type] of [
        ["www.example.org", Type.A],
        ["web.example.org", Type.TXT],
        ["host.sub.example.org", Type.A],
      ] as const)
        await h.serve(makeRequest(name, type));
      assert.equal(next.calls.length, passes ? 2 : 0, "an answer, a CNAME or a referral stays file's");
    }
  });

  it("accepts reload_by_mtime (a changed file is always read again here)", async () => {
    const d = dir("file", ["example.org.zone"], [dir("reload_by_mtime", [], undefined, 4)]);
    await setupPlugin(d, blockCtx(ZONES_DIR).ctx);
    const bad = dir("file", ["example.org.zone"], [dir("reload_by_mtime", ["x"], undefined, 4)]);
    assert.match((await setupError(bad, blockCtx(ZONES_DIR).ctx)).message, /^Corefile:4 - /);
  });

  it("accepts upstream, a no-op in CoreDNS, with one warning line naming its file:line", async () => {
    for (const args of [[], ["10.0.0.1", "/etc/resolv.conf"]]) {
      const f = blockCtx(ZONES_DIR);
      const d = dir("file", ["example.org.zone"], [dir("upstream", args, undefined, 6)]);
      const h = (await setupPlugin(d, f.ctx))(recordingNext());
      const warnings = f.logs.filter((l) => l.level === 40);
      assert.equal(warnings.length, 1, JSON.stringify(f.logs));
      assert.equal(warnings[0].at, "Corefile:6");
      assert.match(warnings[0].msg, /'upstream' is ignored/);
      assert.equal((await h.serve(makeRequest("www.example.org", Type.A))).rcode, Rcode.NOERROR);
    }
  });

  it("rejects a bad reload value", async () => {
    const ctx = blockCtx(ZONES_DIR).ctx;
    for (const args of [["soon"], [], ["1m", "2m"]]) {
      const err = await setupError(
        dir("file", ["example.org.zone"], [dir("reload", args, undefined, 4)]),
        ctx,
      );
      assert.equal(err.line, 4, args.join(" "));
    }
    const withBlock = dir("reload", ["1m"], [dir("x", [], undefined, 5)], 4);
    assert.equal((await setupError(dir("file", ["example.org.zone"], [withBlock]), ctx)).line, 4);
  });

  it("fails start-up on a missing zone file, naming it", async () => {
    const err = await setupError(dir("file", ["no-such.zone"]), blockCtx(ZONES_DIR).ctx);
    assert.match(
      err.message,
      /^Corefile:3 - Error during parsing: file: .*no-such\.zone: cannot read zone file: ENOENT/,
    );
  });

  it("fails start-up on a bad zone file with both file:line", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "file-setup-"));
    try {
      writeFileSync(
        join(tmp, "db.example.org"),
        "@ SOA ns hostmaster 1 1 1 1 1\n@ NS ns\nns A 192.0.2.1\nbad AAAA 1.2.3.4\n",
      );
      const err = await setupError(dir("file", ["db.example.org"]), blockCtx(tmp).ctx);
      assert.equal(err.file, "Corefile");
      assert.equal(err.line, 3);
      assert.match(err.message, /file: .*db\.example\.org:4: '1\.2\.3\.4' is not an IPv6 address$/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("fails start-up when the zone is not the file's origin", async () => {
    const err = await setupError(
      dir("file", ["example.org.zone", "example.net"]),
      blockCtx(ZONES_DIR, ["."]).ctx,
    );
    assert.match(err.message, /example\.org\.zone:6: 'example\.org\.' is outside the zone example\.net\./);
  });

  it("fails start-up when the zone is outside the server block's zones", async () => {
    const err = await setupError(dir("file", ["example.org.zone", "example.net"]), blockCtx(ZONES_DIR).ctx);
    assert.match(
      err.message,
      /zone 'example\.net\.' is not inside the server block's zones \(example\.org\.\)/,
    );
  });
});

const V1 = "$TTL 60\n@ SOA ns hostmaster 1 1h 1h 1w 60\n@ NS ns\nns A 192.0.2.1\nwww A 192.0.2.10\n";
const V2 =
  "$TTL 60\n@ SOA ns hostmaster 2 1h 1h 1w 60\n@ NS ns\nns A 192.0.2.1\nwww A 192.0.2.20\nnew A 192.0.2.30\n";
const BAD = "$TTL 60\n@ SOA ns hostmaster 3 1h 1h 1w 60\nwww A 192.0.2.999\n";

describe("file reload", () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), "file-reload-"));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  /** Polls `cond` every 20 ms, for at most 5 s. */
  async function eventually(cond: () => Promise<boolean> | boolean, what: string): Promise<void> {
    for (let i = 0; i < 250; i++) {
      if (await cond()) return;
      await sleep(20);
    }
    assert.fail(`timed out waiting for: ${what}`);
  }

  it("swaps in a changed file, keeps the old zone on a bad one, and stops on shutdown", async () => {
    const path = join(tmp, "poll.zone");
    writeFileSync(path, V1);
    const f = blockCtx(tmp);
    const h = (await setupPlugin(dir("file", ["poll.zone"], [dir("reload", ["50ms"], undefined, 4)]), f.ctx))(
      recordingNext(),
    );
    await f.start();
    try {
      assert.deepEqual(await answerA(h, "www.example.org"), ["192.0.2.10"]);

      writeFileSync(path, V2);
      await eventually(async () => (await answerA(h, "www.example.org"))[0] === "192.0.2.20", "the new zone");
      assert.deepEqual(await answerA(h, "new.example.org"), ["192.0.2.30"]);
      assert.ok(f.invalidations >= 1);
      assert.ok(f.logs.some((l) => l.msg === "zone reloaded"));

      const invalidated = f.invalidations;
      writeFileSync(path, BAD);
      await eventually(() => f.logs.some((l) => l.msg.startsWith("zone reload failed")), "the failure log");
      const failure = f.logs.find((l) => l.msg.startsWith("zone reload failed"))!;
      assert.match(String(failure.err), /poll\.zone:3: '192\.0\.2\.999' is not an IPv4 address/);
      assert.equal(failure.plugin, "file");
      assert.deepEqual(await answerA(h, "www.example.org"), ["192.0.2.20"], "the old zone keeps serving");
      assert.equal(f.invalidations, invalidated);
    } finally {
      await f.stop();
    }
  });

  it("check() reloads only on change, survives bad and missing files, and does nothing once stopped", async () => {
    const path = join(tmp, "check.zone");
    writeFileSync(path, V1);
    const stamp = await fileStamp(path);
    const zones = new ZoneSet(loadZones(path, ["example.org."]));
    const logs: { msg: string }[] = [];
    let invalidated = 0;
    const reloader = new ZoneReloader(
      {
        path,
        origins: ["example.org."],
        intervalMs: 60_000,
        zones,
        log: pino({ level: "debug" }, { write: (l: string) => void logs.push(JSON.parse(l)) }),
        invalidate: () => void invalidated++,
      },
      stamp,
    );
    const h = fileHandler(zones, recordingNext());

    assert.equal(await reloader.check(), false, "unchanged");
    writeFileSync(path, V2);
    assert.equal(await reloader.check(), true);
    assert.equal(invalidated, 1);
    assert.deepEqual(await answerA(h, "www.example.org"), ["192.0.2.20"]);
    assert.equal(await reloader.check(), false, "seen already");

    writeFileSync(path, BAD);
    assert.equal(await reloader.check(), false);
    assert.equal(await reloader.check(), false);
    assert.equal(logs.filter((l) => l.msg.startsWith("zone reload failed")).length, 1, "reported once");
    assert.deepEqual(await answerA(h, "www.example.org"), ["192.0.2.20"]);

    rmSync(path);
    assert.equal(await reloader.check(), false);
    assert.ok(logs.some((l) => l.msg.startsWith("zone file is gone")));
    writeFileSync(path, V1);
    assert.equal(await reloader.check(), true, "a file that comes back is loaded");
    assert.deepEqual(await answerA(h, "www.example.org"), ["192.0.2.10"]);

    // The same serial with other data: served, with a warning (CoreDNS goes by the serial).
    const warned = () => logs.filter((l) => l.msg.startsWith("zone file changed but its SOA serial did not"));
    assert.equal(warned().length, 0, "1 -> 2 -> 1 raised or lowered the serial each time");
    writeFileSync(path, V1.replace("192.0.2.10", "192.0.2.11"));
    assert.equal(await reloader.check(), true);
    assert.deepEqual(await answerA(h, "www.example.org"), ["192.0.2.11"]);
    assert.equal(warned().length, 1);
    writeFileSync(path, V1);
    assert.equal(await reloader.check(), true);

    reloader.start();
    reloader.stop();
    writeFileSync(path, V2);
    assert.equal(await reloader.check(), false, "stopped");
    assert.deepEqual(await answerA(h, "www.example.org"), ["192.0.2.10"]);
    assert.equal(invalidated, 4);
  });
});
