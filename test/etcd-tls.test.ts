// The etcd plugin's `tls` option against Debian's etcd serving HTTPS and requiring client
// certificates: certificates made with openssl, records written with etcdctl, asked with dig.

import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EtcdServer } from "./helpers/etcd.ts";
import type { RunningServer } from "./helpers/server.ts";
import { startEtcd } from "./helpers/etcd.ts";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";

let etcd: EtcdServer;
let server: RunningServer;
const dir = mkdtempSync(join(tmpdir(), "clusterdns-etcd-tls-"));
const f = (n: string): string => join(dir, n);
const certs = {
  ca: f("ca.crt"),
  serverCert: f("server.crt"),
  serverKey: f("server.key"),
  clientCert: f("client.crt"),
  clientKey: f("client.key"),
};

/** A CA, etcd's certificate and a client's. etcd's JSON gateway reaches etcd's own gRPC side with the
 * server certificate as a client one, so with --client-cert-auth that certificate must allow clientAuth
 * too (with serverAuth only, every gateway call fails with 503 "connection closed"). */
function makeCerts(): void {
  const ossl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  ossl("req", "-x509", ...ec, "-keyout", f("ca.key"), "-out", certs.ca, "-days", "1", "-subj", "/CN=ca");
  for (const [name, ext] of [
    ["server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"],
    ["client", "extendedKeyUsage=clientAuth\n"],
  ]) {
    writeFileSync(f(`${name}.ext`), ext);
    ossl("req", ...ec, "-keyout", f(`${name}.key`), "-out", f(`${name}.csr`), "-subj", `/CN=${name}`);
    const sign = ["-in", f(`${name}.csr`), "-CA", certs.ca, "-CAkey", f("ca.key"), "-CAcreateserial"];
    ossl("x509", "-req", ...sign, "-out", f(`${name}.crt`), "-days", "1", "-extfile", f(`${name}.ext`));
  }
}

before(async () => {
  makeCerts();
  etcd = await startEtcd({
    ca: certs.ca,
    cert: certs.serverCert,
    key: certs.serverKey,
    clientCert: certs.clientCert,
    clientKey: certs.clientKey,
  });
  await etcd.put("/skydns/local/skydns/a", JSON.stringify({ host: "10.1.0.1" }));
  server = await startServer(`skydns.local {
    etcd {
        endpoint ${etcd.url}
        tls ${certs.clientCert} ${certs.clientKey} ${certs.ca}
    }
}
noclient.local {
    etcd {
        endpoint ${etcd.url}
        tls ${certs.ca}
    }
}
`);
});

after(async () => {
  await server?.stop();
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("tls CERT KEY CA: records read from etcd over HTTPS with a client certificate", async () => {
  const r = await dig(server.port, "a.skydns.local", "A");
  assert.equal(r.status, "NOERROR");
  assert.deepEqual(r.answer, ["a.skydns.local. 300 IN A 10.1.0.1"]);
});

test("tls CA without a client certificate: etcd refuses the handshake, the query gets SERVFAIL", async () => {
  assert.equal((await dig(server.port, "a.noclient.local", "A")).status, "SERVFAIL");
});
