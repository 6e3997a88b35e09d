import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCorefile } from "../../corefile/parser.ts";
import type { Directive } from "../../corefile/types.ts";
import { setup } from "./setup.ts";
import { fakeContext } from "../../../test/helpers/setup-context.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { startFailure } from "../../../test/helpers/server.ts";
import { makePki } from "../../../test/upstream/tls-front.ts";

const pki = makePki();

function directive(body: string): Directive {
  const [block] = parseCorefile(`tls://. {\n${body}\n}\n`, "Corefile");
  return block.directives[0];
}

test("tls CERT KEY [CA]: the files read at set-up, client_auth and keylog", async () => {
  const { ctx } = fakeContext({ root: pki.dir });
  await setup(
    directive("tls server.crt server.key ca.crt {\n client_auth require_and_verify\n keylog keys.log\n}"),
    ctx,
  );
  const t = ctx.block.tls!;
  assert.equal(t.clientAuth, "require_and_verify");
  assert.equal(t.keylog, `${pki.dir}/keys.log`);
  assert.match(t.cert.toString(), /BEGIN CERTIFICATE/);
  assert.match(t.ca!.toString(), /BEGIN CERTIFICATE/);
  assert.equal(t.at, "Corefile:2");
  const plain = fakeContext({ root: pki.dir }).ctx;
  await setup(directive(`tls ${pki.serverCert} ${pki.serverKey}`), plain);
  assert.equal(plain.block.tls!.clientAuth, "nocert");
  assert.equal(plain.block.tls!.ca, undefined);
});

test("tls: bad stanzas stop start-up at their line", async () => {
  const ctx = () => fakeContext({ root: pki.dir }).ctx;
  await assertConfigErrors(
    setup,
    [
      [directive("tls server.crt"), /Corefile:2 .*'tls' takes 2 to 3 argument/],
      [directive("tls missing.crt server.key"), /Corefile:2 .*cannot read 'missing.crt': ENOENT/],
      [directive("tls server.crt client.key"), /Corefile:2 .*cannot be used: .*key values mismatch/],
      [directive("tls server.crt server.key server.key"), /Corefile:2 .*no CA certificate in 'server.key'/],
      [
        directive("tls server.crt server.key {\n client_auth sometimes\n}"),
        /Corefile:3 .*unknown authentication type 'sometimes'/,
      ],
      [directive("tls server.crt server.key {\n client_auth\n}"), /Corefile:3 .*takes 1 argument/],
      [directive("tls server.crt server.key {\n ocsp on\n}"), /Corefile:3 .*unknown property 'ocsp'/],
      [directive("tls {\n acme dns.example.org\n}"), /Corefile:3 .*ACME are not supported/],
    ],
    ctx,
  );
  const twice = fakeContext({ root: pki.dir }).ctx;
  await setup(directive("tls server.crt server.key"), twice);
  await assert.rejects(
    async () => setup(directive("tls server.crt server.key"), twice),
    /already configured .*Corefile:2/,
  );
});

test("a certificate that cannot be read stops clusterdns at start-up with file:line", async () => {
  const r = await startFailure(
    `tls://.:8853 {\n    tls /nonexistent/cert.pem ${pki.serverKey}\n    whoami\n}\n`,
  );
  assert.notEqual(r.code, 0);
  assert.match(r.stderr + r.stdout, /Corefile:2 .*tls: cannot read '\/nonexistent\/cert.pem'/);
});
