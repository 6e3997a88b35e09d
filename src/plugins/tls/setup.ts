// tls CERT KEY [CA] {
//     client_auth nocert|request|require|verify_if_given|require_and_verify
//     keylog FILE
// }
// The certificate of a tls:// or https:// block (src/server/secure.ts uses it), not a handler. The
// files are read and checked here, so a missing file, a key that is not the certificate's, or a CA
// that is no PEM stops start-up at this line instead of failing the first handshake.

import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import tls from "node:tls";
import type { Setup } from "../../setup/registry.ts";
import type { ClientAuth } from "../../setup/block.ts";
import { argCount, blockOptions, onceEach } from "../../corefile/args.ts";
import { configError } from "../../corefile/errors.ts";
import type { Token } from "../../corefile/types.ts";

const NAME = "tls";
const CLIENT_AUTH: readonly ClientAuth[] = [
  "nocert",
  "request",
  "require",
  "verify_if_given",
  "require_and_verify",
];

export const setup: Setup = (d, ctx) => {
  if (d.args.length === 0) {
    const acme = d.block?.find((o) => o.name === "acme");
    throw configError(acme ?? d, NAME, "certificates from ACME are not supported: give 'tls CERT KEY [CA]'");
  }
  argCount(d, NAME, 2, 3);
  if (ctx.block.tls !== undefined)
    throw configError(d, NAME, `TLS is already configured for this server block (at ${ctx.block.tls.at})`);
  const read = (t: Token) => {
    try {
      return readFileSync(resolve(ctx.root, t.text));
    } catch (err) {
      throw configError(t, NAME, `cannot read '${t.text}': ${(err as Error).message}`);
    }
  };
  const [cert, key, ca] = d.args.map(read);
  let clientAuth: ClientAuth = "nocert";
  let keylog: string | undefined;
  const once = onceEach(NAME);
  blockOptions(d, NAME, {
    client_auth: (opt) => {
      once(opt);
      argCount(opt, NAME, 1, 1);
      const v = opt.args[0].text as ClientAuth;
      if (!CLIENT_AUTH.includes(v))
        throw configError(
          opt.args[0],
          NAME,
          `unknown authentication type '${v}' (one of ${CLIENT_AUTH.join(", ")})`,
        );
      clientAuth = v;
    },
    keylog: (opt) => {
      once(opt);
      argCount(opt, NAME, 1, 1);
      keylog = resolve(ctx.root, opt.args[0].text);
    },
  });
  // node:tls skips a CA file with no certificate in it without a word; CoreDNS refuses it.
  if (ca !== undefined) {
    try {
      new X509Certificate(ca);
    } catch (err) {
      throw configError(
        d.args[2],
        NAME,
        `no CA certificate in '${d.args[2].text}': ${(err as Error).message}`,
      );
    }
  }
  try {
    tls.createSecureContext({ cert, key, ca });
  } catch (err) {
    throw configError(d, NAME, `the certificate, key or CA cannot be used: ${(err as Error).message}`);
  }
  ctx.block.tls = { cert, key, ca, clientAuth, keylog, at: `${d.file}:${d.line}` };
  if (keylog !== undefined)
    ctx.log(NAME).warn({ keylog }, "writing TLS secrets to a key log file: for debugging only");
  return undefined;
};
