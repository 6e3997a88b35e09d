import { test } from "node:test";
import assert from "node:assert/strict";
import { resolve } from "node:path";
import type { SetupContext } from "../../setup/context.ts";
import { setup, parseConfig } from "./setup.ts";
import { setup as kubernetes } from "../kubernetes/setup.ts";
import { directive, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { Rcode, Type } from "../../dns/constants.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const ext = (args: string[], lines: string[] = []) =>
  directive(
    "k8s_external",
    args,
    lines.map((l, i) => {
      const [name, ...rest] = l.split(" ");
      return directive(name, rest, undefined, 4 + i);
    }),
  );

/** A block holding k8s_external and kubernetes, sharing one `shared` map. */
function block(zones = ["."]) {
  const f = fakeContext({ zones, root: ROOT });
  const ctx: SetupContext = {
    ...f.ctx,
    block: { ...f.ctx.block, directives: ["k8s_external", "kubernetes"] },
  };
  return { f, ctx };
}

test("k8s_external: options and their defaults", () => {
  assert.deepEqual(parseConfig(ext([]), ["example.com."]), {
    zones: ["example.com."],
    apex: "dns",
    ttl: 5,
    headless: false,
  });
  assert.deepEqual(
    parseConfig(
      ext(["example.com", "in-addr.arpa"], ["apex NS", "ttl 60", "headless", "fallthrough in-addr.arpa"]),
      ["."],
    ),
    {
      zones: ["example.com.", "in-addr.arpa."],
      apex: "ns",
      ttl: 60,
      headless: true,
      fallthrough: ["in-addr.arpa."],
    },
  );
});

test("k8s_external: bad options are start-up errors with file and line", async () => {
  await assertConfigErrors(
    setup,
    [
      [ext([], ["ttl 3601"]), /^Corefile:4 - .*k8s_external: 3601 is out of range \[0, 3600\]/],
      [ext([], ["apex a.b"]), /^Corefile:4 - .*k8s_external: apex 'a.b' is not one DNS label/],
      [ext([], ["headless", "headless"]), /^Corefile:5 - .*'headless' is given twice/],
      [ext([], ["upstream"]), /^Corefile:4 - .*unknown property 'upstream'/],
      [ext(["in-addr.arpa"]), /needs a zone that is not a reverse zone/],
      [ext(["example.org"]), /not inside the server block's zones/],
    ],
    () => block(["example.com.", "in-addr.arpa."]).ctx,
  );
  await assert.rejects(
    async () => setup(ext([]), fakeContext({ zones: ["example.com."] }).ctx),
    /needs the kubernetes plugin in this server block/,
  );
});

test("k8s_external: reads the kubernetes plugin's store once the instance starts", async () => {
  const { f, ctx } = block();
  const plugin = await setup(ext(["example.com"]), ctx);
  await kubernetes(
    directive("kubernetes", ["cluster.local"], [directive("objects", ["zones/demo-cluster.yaml"])]),
    ctx,
  );
  const next = recordingNext();
  const handler = plugin!(next);
  // Before the start, nothing is known: everything passes on.
  assert.equal((await handler.serve(makeRequest("example.com", Type.SOA))).rcode, Rcode.REFUSED);
  await f.start();
  const soa = await handler.serve(makeRequest("example.com", Type.SOA));
  assert.equal(soa.rcode, Rcode.NOERROR);
  assert.equal(soa.answer[0].type, Type.SOA);
  assert.equal((await handler.serve(makeRequest("nginx.default.example.com", Type.A))).rcode, Rcode.NXDOMAIN);
  assert.equal(
    (await handler.serve(makeRequest("nginx.default.svc.cluster.local", Type.A))).rcode,
    Rcode.REFUSED,
  );
  await f.stop();
});
