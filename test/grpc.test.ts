// DNS over gRPC (CoreDNS's DnsService): grpc:// server blocks asked by Debian's python3-grpcio
// (test/clients/grpc_dns.py), over TLS with the block's `tls` and over cleartext HTTP/2 without one.
// Answers come from a real clusterdns serving the test API server's cluster; malformed calls get gRPC
// statuses.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { service } from "./k8s/objects.ts";
import { freePort } from "./helpers/free-port.ts";
import { ROOT, startServer, type RunningServer } from "./helpers/server.ts";
import { makePki, type Pki } from "./upstream/tls-front.ts";

const run = promisify(execFile);
/** Debian's python, where python3-grpcio is (not a python3 earlier on PATH). */
const PYTHON = "/usr/bin/python3";
const CLIENT = join(ROOT, "test", "clients", "grpc_dns.py");

let dir: string;
let api: TestApiServer;
let pki: Pki;
let srv: RunningServer;
let secure: number;
let plain: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "grpc-test-"));
  api = await startApiServer();
  api.create(
    "services",
    service("default", "kubernetes", { clusterIP: "10.96.0.1", ports: [{ name: "https", port: 443 }] }),
  );
  const kubeconfig = writeKubeconfig(dir, api.url);
  pki = makePki();
  [secure, plain] = [await freePort(), await freePort()];
  const block = `    kubernetes cluster.local {\n        kubeconfig ${kubeconfig}\n    }\n`;
  srv = await startServer(
    `grpc://.:${secure} {\n    tls ${pki.serverCert} ${pki.serverKey}\n${block}}\n` +
      `grpc://.:${plain} {\n${block}}\n`,
  );
});

after(async () => {
  const code = await srv.stop();
  await api.close();
  rmSync(dir, { recursive: true, force: true });
  assert.equal(code, 0);
});

/** One Query call by python3-grpcio; its printed lines. */
async function ask(port: number, name: string, type: string, ...opts: string[]): Promise<string[]> {
  const { stdout } = await run(PYTHON, [CLIENT, "client", `127.0.0.1:${port}`, name, type, ...opts], {
    timeout: 20_000,
  });
  return stdout.trim().split("\n");
}

test("grpc:// over TLS: python3-grpcio gets the cluster's answers", async () => {
  const tls = ["--ca", pki.ca, "--host", "dns.test"];
  assert.deepEqual(await ask(secure, "kubernetes.default.svc.cluster.local", "A", ...tls), [
    "status 0 OK",
    "id 4660",
    "rcode 0",
    "answer kubernetes.default.svc.cluster.local. 1 5 10.96.0.1",
  ]);
  assert.deepEqual(await ask(secure, "nope.default.svc.cluster.local", "A", ...tls), [
    "status 0 OK",
    "id 4660",
    "rcode 3",
  ]);
});

test("grpc:// without tls: cleartext HTTP/2, the same answers", async () => {
  const lines = await ask(plain, "kubernetes.default.svc.cluster.local", "A");
  assert.deepEqual(lines.slice(0, 3), ["status 0 OK", "id 4660", "rcode 0"]);
  assert.match(lines[3], / 10\.96\.0\.1$/);
});

test("EDNS Padding: over TLS a query with the option gets a reply of 468 octets; none without, none over h2c", async () => {
  const tls = ["--ca", pki.ca, "--host", "dns.test"];
  const name = "kubernetes.default.svc.cluster.local";
  const padded = await ask(secure, name, "A", ...tls, "--padding", "yes");
  assert.deepEqual(padded.slice(0, 2), ["status 0 OK", "size 468"]);
  assert.match(padded.at(-1)!, / 10\.96\.0\.1$/);
  const [, without] = await ask(secure, name, "A", ...tls, "--padding", "no");
  const [, cleartext] = await ask(plain, name, "A", "--padding", "yes");
  // The unpadded reply: header, question, one A record and the OPT record.
  for (const size of [without, cleartext]) assert.ok(Number(size.split(" ")[1]) < 120, size);
});

test("malformed calls get gRPC statuses, and the listener answers on", async () => {
  // field 1 says 16 octets and holds 2: not a DnsPacket (INTERNAL).
  assert.match((await ask(plain, "-", "A", "--raw", "0a10abcd"))[0], /^status 13 .*runs past/);
  // a DnsPacket whose message is 3 octets: no DNS query (INVALID_ARGUMENT).
  assert.match((await ask(plain, "-", "A", "--raw", "0a03010203"))[0], /^status 3 not a DNS message/);
  // an empty DnsPacket (proto3 leaves an empty msg out): no DNS message either.
  assert.match((await ask(plain, "-", "A", "--raw", ""))[0], /^status 3 /);
  // wire type 3 is not in DnsPacket.
  assert.match((await ask(plain, "-", "A", "--raw", "0b"))[0], /^status 13 /);
  assert.equal((await ask(plain, "kubernetes.default.svc.cluster.local", "A"))[2], "rcode 0");
});
