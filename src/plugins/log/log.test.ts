import { test } from "node:test";
import assert from "node:assert/strict";
import type { Directive } from "../../corefile/types.ts";
import type { Finished } from "./format.ts";
import { setup } from "./setup.ts";
import { classify } from "./log.ts";
import { goSeconds } from "./format.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { setup as metadataSetup } from "../metadata/setup.ts";
import { metadataOf } from "../metadata/labels.ts";

/** A server block's context, and `finish` to run its finish hooks on a query like query(). */
function fakeBlock() {
  const f = fakeContext();
  return Object.assign(f, {
    finish(q: Partial<Finished> = {}) {
      for (const h of f.queryDone) h({ ...query(), ...q });
    },
  });
}

function query(): Finished {
  return {
    server: "dns://:53",
    zone: ".",
    proto: "udp",
    remoteAddress: "10.0.0.1",
    remotePort: 40000,
    id: 4242,
    qname: "example.org.",
    nameWire: new Uint8Array([7, 101, 120, 97, 109, 112, 108, 101, 3, 111, 114, 103, 0]),
    qtype: Type.A,
    qclass: Class.IN,
    size: 41,
    do: false,
    bufsize: 512,
    rcode: Rcode.NOERROR,
    rflags: "qr,aa,rd",
    rsize: 57,
    duration: 0.000123,
    micros: 123,
    cached: false,
    plugin: "hosts",
  };
}

async function setupAll(b: ReturnType<typeof fakeBlock>, ...ds: Directive[]) {
  for (const d of ds) assert.equal(await setup(d, b.ctx), undefined, "log adds no handler");
}

test("log writes the common log format as msg and the same facts as fields", async () => {
  const b = fakeBlock();
  await setupAll(b, dir("log"));
  assert.equal(b.queryDone.length, 1);
  b.finish();
  assert.equal(b.logs.length, 1);
  const l = b.logs[0];
  assert.equal(l.level, 30);
  assert.equal(l.plugin, "log");
  assert.equal(l.answeredBy, "hosts");
  assert.equal(
    l.msg,
    '10.0.0.1:40000 - 4242 "A IN example.org. udp 41 false 512" NOERROR qr,aa,rd 57 0.000123s',
  );
  const { remote, port, id, type, name, proto, size, bufsize, rcode, rflags, rsize, duration, cached } = l;
  assert.deepEqual(
    {
      remote,
      port,
      id,
      type,
      class: l.class,
      name,
      proto,
      size,
      do: l.do,
      bufsize,
      rcode,
      rflags,
      rsize,
      duration,
      cached,
    },
    {
      remote: "10.0.0.1",
      port: 40000,
      id: 4242,
      type: "A",
      class: "IN",
      name: "example.org.",
      proto: "udp",
      size: 41,
      do: false,
      bufsize: 512,
      rcode: "NOERROR",
      rflags: "qr,aa,rd",
      rsize: 57,
      duration: 0.000123,
      cached: false,
    },
  );
});

test("IPv6 clients are bracketed; other facts follow the query", async () => {
  const b = fakeBlock();
  await setupAll(b, dir("log", ["{common}"]));
  b.finish({ remoteAddress: "::1", remotePort: 50759, id: 29008, proto: "tcp", do: true, bufsize: 4096 });
  b.finish({ rcode: Rcode.NXDOMAIN, qtype: Type.AAAA, duration: 1.5, cached: true });
  // Over TCP {>bufsize} is 65535 whatever the EDNS buffer, as CoreDNS prints it.
  assert.equal(
    b.logs[0].msg,
    '[::1]:50759 - 29008 "A IN example.org. tcp 41 true 65535" NOERROR qr,aa,rd 57 0.000123s',
  );
  assert.equal(
    b.logs[1].msg,
    '10.0.0.1:40000 - 4242 "AAAA IN example.org. udp 41 false 512" NXDOMAIN qr,aa,rd 57 1.5s',
  );
  assert.equal(b.logs[1].cached, true);
});

test("custom and combined formats", async () => {
  const custom = fakeBlock();
  await setupAll(custom, dir("log", [".", "{proto} Request: {name} {type} {>id}"]));
  custom.finish();
  assert.equal(custom.logs[0].msg, "udp Request: example.org. A 4242");

  const combined = fakeBlock();
  await setupAll(combined, dir("log", [".", "{combined}"]));
  combined.finish();
  assert.match(combined.logs[0].msg, /0\.000123s "0"$/);
});

test("NAMES limit logging to names at or below them", async () => {
  const b = fakeBlock();
  await setupAll(b, dir("log", ["example.org", "Example.NET"]));
  b.finish({ qname: "www.example.org." });
  b.finish({ qname: "example.net." });
  b.finish({ qname: "other.com." });
  b.finish({ qname: "notexample.org." });
  assert.deepEqual(
    b.logs.map((l) => l.name),
    ["www.example.org.", "example.net."],
  );
});

test("classes select what is logged", async () => {
  const b = fakeBlock();
  await setupAll(b, dir("log", ["."], [dir("class", ["denial"])]));
  b.finish({ rcode: Rcode.NXDOMAIN, id: 1 });
  b.finish({ rcode: Rcode.NOERROR, answers: 0, id: 2 });
  b.finish({ rcode: Rcode.NOERROR, answers: 2, id: 3 });
  b.finish({ rcode: Rcode.SERVFAIL, id: 4 });
  assert.deepEqual(
    b.logs.map((l) => l.id),
    [1, 2],
  );

  const e = fakeBlock();
  await setupAll(e, dir("log", ["."], [dir("class", ["error"]), dir("minDuration", ["1s"])]));
  for (const [i, rcode] of [
    Rcode.SERVFAIL,
    Rcode.REFUSED,
    Rcode.NOTIMP,
    Rcode.FORMERR,
    Rcode.NOERROR,
  ].entries()) {
    e.finish({ rcode, id: i });
  }
  e.finish({ rcode: Rcode.NOERROR, duration: 2, id: 9 });
  assert.deepEqual(
    e.logs.map((l) => l.id),
    [0, 1, 2, 3, 9],
  );

  const both = fakeBlock();
  await setupAll(both, dir("log", ["."], [dir("class", ["denial"]), dir("class", ["success"])]));
  both.finish({ rcode: Rcode.NXDOMAIN });
  both.finish({ rcode: Rcode.NOERROR });
  both.finish({ rcode: Rcode.SERVFAIL });
  assert.equal(both.logs.length, 2);

  const all = fakeBlock();
  await setupAll(all, dir("log", [], [dir("class", ["error", "all"])]));
  all.finish({ rcode: Rcode.NOERROR });
  assert.equal(all.logs.length, 1);
});

test("classify follows CoreDNS: NXDOMAIN and NODATA are denials", () => {
  assert.equal(classify({ ...query(), rcode: Rcode.NOERROR, answers: 1 }), "success");
  assert.equal(classify({ ...query(), rcode: Rcode.NOERROR, answers: 0 }), "denial");
  assert.equal(classify({ ...query(), rcode: Rcode.NXDOMAIN }), "denial");
  assert.equal(classify({ ...query(), rcode: Rcode.SERVFAIL }), "error");
  assert.equal(classify({ ...query(), rcode: Rcode.REFUSED }), "error");
});

test("several log directives in a block share one hook; the first matching name decides", async () => {
  const b = fakeBlock();
  await setupAll(b, dir("log", ["example.org"], [dir("class", ["error"])]), dir("log"));
  assert.equal(b.queryDone.length, 1);
  b.finish({ qname: "a.example.org.", rcode: Rcode.NOERROR });
  b.finish({ qname: "a.example.org.", rcode: Rcode.SERVFAIL });
  b.finish({ qname: "other.net.", rcode: Rcode.NOERROR });
  assert.deepEqual(
    b.logs.map((l) => [l.name, l.rcode]),
    [
      ["a.example.org.", "SERVFAIL"],
      ["other.net.", "NOERROR"],
    ],
  );
});

test("goSeconds prints like Go's Seconds() with 'f', -1", () => {
  assert.equal(goSeconds(0.037990251), "0.037990251s");
  assert.equal(goSeconds(0), "0s");
  assert.equal(goSeconds(2), "2s");
  assert.equal(goSeconds(12.5), "12.5s");
  assert.equal(goSeconds(0.000001), "0.000001s");
});

test("{/LABEL} placeholders print the block's metadata, '-' where a label has none", async () => {
  const b = fakeBlock();
  await metadataSetup(dir("metadata"), b.ctx);
  metadataOf(b.ctx.block.shared)!.provide({
    label: (name) =>
      name === "test/client" ? { value: (q) => q.remoteAddress, perClient: true } : undefined,
  });
  await setupAll(b, dir("log", [".", "{name} {/test/client} {/test/none}"]));
  await b.start();
  b.finish();
  assert.equal(b.logs[0].msg, "example.org. 10.0.0.1 -");
});

test("{/LABEL} in a block without metadata: '-', and a warning at start-up", async () => {
  const b = fakeBlock();
  await setupAll(b, dir("log", [".", "{name} {/kubernetes/client-namespace}"], undefined, 7));
  assert.ok(
    b.logs.some((l) => l.level === 40 && l.at === "Corefile:7" && /no metadata directive/.test(l.msg)),
  );
  b.finish();
  assert.equal(b.logs.at(-1)!.msg, "example.org. -");
});

test("setup errors name file:line", async () => {
  const bad: [Directive, RegExp][] = [
    [dir("log", [".", "{name} {nope}"], undefined, 2), /^Corefile:2 - .*log: unknown placeholder \{nope\}/],
    [dir("log", [], [dir("class", ["fatal"], undefined, 5)]), /^Corefile:5 - .*unknown class 'fatal'/],
    [dir("log", [], [dir("class", [], undefined, 6)]), /^Corefile:6 - .*'class' takes at least 1/],
    [dir("log", [], [dir("minDuration", ["fast"], undefined, 7)]), /^Corefile:7 - .*invalid duration/],
    [dir("log", [], [dir("format", ["x"], undefined, 8)]), /^Corefile:8 - .*unknown property 'format'/],
    [dir("log", ["bad name!"], undefined, 9), /^Corefile:9 - .*invalid name/],
  ];
  await assertConfigErrors(setup, bad);
});
