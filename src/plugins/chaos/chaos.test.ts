import { test } from "node:test";
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { readFileSync } from "node:fs";
import type { Msg } from "../../dns/message.ts";
import { setup } from "./setup.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { configErrorLike } from "../../../test/helpers/config-errors.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";

const { ctx } = fakeContext();

async function handler(args: string[] = []) {
  const plugin = await setup(dir("chaos", args), ctx);
  assert.ok(plugin);
  const next = recordingNext();
  return { h: plugin(next), next };
}

function texts(m: Msg): string[] {
  return m.answer.map((rr) => (rr.data as { strings: string[] }).strings.join(""));
}

function ch(name: string, qtype: number = Type.TXT) {
  return makeRequest(name, qtype, { qclass: Class.CH });
}

test("defaults: the package version, clusterdns as author, the host name", async () => {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  const { h, next } = await handler();
  const req = ch("version.bind");
  const v = await h.serve(req);
  assert.equal(v.rcode, Rcode.NOERROR);
  assert.deepEqual(texts(v), [`clusterdns-${pkg.version}`]);
  assert.deepEqual(v.answer[0], {
    name: "version.bind.",
    type: Type.TXT,
    class: Class.CH,
    ttl: 0,
    data: { type: Type.TXT, strings: [`clusterdns-${pkg.version}`] },
  });
  assert.equal(req.answeredBy, "chaos");
  assert.deepEqual(texts(await h.serve(ch("VERSION.SERVER"))), [`clusterdns-${pkg.version}`]);
  assert.deepEqual(texts(await h.serve(ch("authors.bind"))), ["clusterdns"]);
  assert.deepEqual(texts(await h.serve(ch("hostname.bind"))), [hostname()]);
  assert.deepEqual(texts(await h.serve(ch("id.server"))), [hostname()]);
  assert.equal(next.calls.length, 0);
});

test("version and authors from the arguments", async () => {
  const { h } = await handler(["CoreDNS-001", "info@coredns.io", "someone", "info@coredns.io"]);
  assert.deepEqual(texts(await h.serve(ch("version.bind"))), ["CoreDNS-001"]);
  assert.deepEqual(texts(await h.serve(ch("authors.bind"))), ["info@coredns.io", "someone"]);
});

test("other CH names, other types and other classes go to the next handler", async () => {
  const { h, next } = await handler(["v1"]);
  assert.equal((await h.serve(ch("example.bind"))).rcode, Rcode.REFUSED);
  assert.equal((await h.serve(ch("version.bind", Type.A))).rcode, Rcode.REFUSED);
  assert.equal((await h.serve(makeRequest("version.bind", Type.TXT))).rcode, Rcode.REFUSED);
  assert.equal(next.calls.length, 3);
});

test("strings longer than 255 bytes are cut to fit a TXT string", async () => {
  const { h } = await handler(["v".repeat(300)]);
  assert.equal(texts(await h.serve(ch("version.bind")))[0].length, 255);
});

test("a block is a setup error naming file:line", async () => {
  await assert.rejects(
    async () => setup(dir("chaos", ["v1"], [dir("x")], 4), ctx),
    configErrorLike(/^Corefile:4 - .*chaos: 'chaos' takes no block/),
  );
});
