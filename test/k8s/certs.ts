// Certificates for the test API server over HTTPS: a CA, a server certificate for 127.0.0.1 and
// api.test, and a client certificate, made with openssl into a folder.

import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const HAVE_OPENSSL = ["/usr/bin/openssl", "/usr/local/bin/openssl"].some((p) => existsSync(p));

export interface TestCerts {
  ca: string;
  serverKey: string;
  serverCert: string;
  clientKey: string;
  clientCert: string;
}

export function makeCerts(at: string): TestCerts {
  const f = (n: string) => join(at, n);
  const ossl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  ossl("req", "-x509", ...ec, "-keyout", f("ca.key"), "-out", f("ca.crt"), "-days", "1", "-subj", "/CN=ca");
  for (const [name, ext] of [
    ["server", "subjectAltName=IP:127.0.0.1,DNS:api.test\nextendedKeyUsage=serverAuth\n"],
    ["client", "extendedKeyUsage=clientAuth\n"],
  ]) {
    writeFileSync(f(`${name}.ext`), ext);
    ossl("req", ...ec, "-keyout", f(`${name}.key`), "-out", f(`${name}.csr`), "-subj", `/CN=${name}`);
    const sign = ["-in", f(`${name}.csr`), "-CA", f("ca.crt"), "-CAkey", f("ca.key"), "-CAcreateserial"];
    ossl("x509", "-req", ...sign, "-out", f(`${name}.crt`), "-days", "1", "-extfile", f(`${name}.ext`));
  }
  return {
    ca: f("ca.crt"),
    serverKey: f("server.key"),
    serverCert: f("server.crt"),
    clientKey: f("client.key"),
    clientCert: f("client.crt"),
  };
}
