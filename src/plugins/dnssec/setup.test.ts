import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { setup } from "./setup.ts";
import { directive as dir, fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { makeRequest } from "../../../test/helpers/request.ts";
import type { Handler } from "../../chain/handler.ts";
import { replyTo } from "../../dns/message.ts";
import { Rcode } from "../../dns/constants.ts";
import { parseRRText } from "../../dns/text.ts";

const keys = mkdtempSync(join(tmpdir(), "clusterdns-dnssec-setup-"));
test.after(() => rmSync(keys, { recursive: true, force: true }));
const key = basename(
  execFileSync("dnssec-keygen", ["-q", "-K", keys, "-a", "ED25519", "example.org"], {
    encoding: "utf8",
  }).trim(),
);
const ctx = () => fakeContext({ zones: ["example.org."], root: keys }).ctx;

test("dnssec's options: each bad one is one error with file:line", async () => {
  await assertConfigErrors(
    setup,
    [
      [dir("dnssec"), /no keys: give them with 'key file KEY\.\.\.'/],
      [
        dir("dnssec", [], [dir("key", ["secret", "Kexample"])]),
        /'key secret' reads keys from AWS Secrets Manager/,
      ],
      [
        dir("dnssec", [], [dir("key", ["aws_secretsmanager", "K"])]),
        /'key aws_secretsmanager' reads keys from AWS/,
      ],
      [dir("dnssec", [], [dir("key", ["disk", key])]), /unknown key source 'disk'/],
      [dir("dnssec", [], [dir("key", ["file"])]), /dnssec/],
      [dir("dnssec", [], [dir("key", ["file", "Knothere"])]), /Knothere\.key: ENOENT/],
      [
        dir("dnssec", [], [dir("key", ["file", key]), dir("cache_capacity", ["lots"])]),
        /'lots' is not an integer/,
      ],
      [dir("dnssec", [], [dir("key", ["file", key]), dir("nsec3")]), /unknown property 'nsec3'/],
      [dir("dnssec", ["example.com"], [dir("key", ["file", key])]), /not inside the server block's zones/],
    ],
    ctx,
  );
});

test("a second dnssec line in one block is refused, not silently dropped as in CoreDNS", async () => {
  const c = ctx();
  await setup(dir("dnssec", [], [dir("key", ["file", key])]), c);
  await assert.rejects(async () => setup(dir("dnssec", [], [dir("key", ["file", key])]), c), /given twice/);
});

test("DNSKEY at the apex is answered by dnssec, unsigned without DO; other DO=0 queries pass untouched", async () => {
  const plugin = await setup(dir("dnssec", [], [dir("key", ["file", `${key}.key`])]), ctx());
  assert.ok(plugin);
  let passed = 0;
  const next: Handler = {
    name: "zone",
    serve(req) {
      passed++;
      return Promise.resolve(replyTo(req.msg, Rcode.NXDOMAIN));
    },
  };
  const h = plugin(next);
  const keyReply = await h.serve(makeRequest("example.org", 48));
  assert.equal(keyReply.answer.length, 1);
  assert.equal(keyReply.answer[0].type, 48);
  assert.ok(keyReply.aa);
  const other = await h.serve(makeRequest("nope.example.org", 1));
  assert.equal(other.rcode, Rcode.NXDOMAIN);
  assert.equal(passed, 1);
});

test("with DO: an authoritative answer is signed; a forwarded one, a referral and a failure are not", async () => {
  const plugin = await setup(dir("dnssec", [], [dir("key", ["file", key])]), ctx());
  assert.ok(plugin);
  const answer = (o: { by: string; aa: boolean; rcode?: number }): Handler => ({
    name: "zone",
    serve(req) {
      req.answeredBy = o.by;
      const reply = replyTo(req.msg, o.rcode ?? Rcode.NOERROR);
      reply.aa = o.aa;
      reply.answer = o.rcode ? [] : [parseRRText("www.example.org. 60 IN A 192.0.2.1")];
      return Promise.resolve(reply);
    },
  });
  const types = async (next: Handler) =>
    (await plugin(next).serve(makeRequest("www.example.org", 1, { do: true }))).answer.map((rr) => rr.type);
  assert.deepEqual(await types(answer({ by: "file", aa: true })), [1, 46]);
  assert.deepEqual(await types(answer({ by: "forward", aa: true })), [1]);
  assert.deepEqual(await types(answer({ by: "file", aa: false })), [1]);
  const failed = await plugin(answer({ by: "file", aa: true, rcode: Rcode.SERVFAIL })).serve(
    makeRequest("www.example.org", 1, { do: true }),
  );
  assert.equal(failed.rcode, Rcode.SERVFAIL);
  assert.deepEqual(failed.authority, []);
});
