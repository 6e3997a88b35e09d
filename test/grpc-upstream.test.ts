// The grpc plugin against real DNS-over-gRPC upstreams: Debian's python3-grpcio serving CoreDNS's
// DnsService (test/upstream/grpc-relay.ts), relaying to Knot, in cleartext and over TLS; asked with
// dig through a real clusterdns. Answers, `except`, `cache`, metrics, TLS verification (CA, name,
// client certificate), bad replies and gRPC statuses, policies, an upstream down and back, deadlines,
// a unix socket, fallthrough, a connection gone silent, the upstream's health on insights' page.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { sample } from "./helpers/metrics.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";
import { makePki, type Pki } from "./upstream/tls-front.ts";
import { startGrpcRelay, type GrpcRelay } from "./upstream/grpc-relay.ts";
import { startSilentRelay } from "./upstream/silent-relay.ts";
import { startApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import type { Report } from "../src/plugins/insights/report.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);
const BIN = join(ROOT, "bin", "clusterdns");

let knot: Knot;
let pki: Pki;
/** Cleartext upstreams A and B; TLS ones (dns.test, 127.0.0.1), one of them asking for a client cert. */
let a: GrpcRelay;
let b: GrpcRelay;
let secure: GrpcRelay;
let mutual: GrpcRelay;
const servers: RunningServer[] = [];

before(async () => {
  knot = await startKnot();
  pki = makePki();
  const tls = { cert: pki.serverCert, key: pki.serverKey };
  [a, b, secure, mutual] = await Promise.all([
    startGrpcRelay({ relay: knot.port }),
    startGrpcRelay({ relay: knot.port }),
    startGrpcRelay({ relay: knot.port, tls }),
    startGrpcRelay({ relay: knot.port, tls: { ...tls, clientCa: pki.ca } }),
  ]);
});

after(async () => {
  for (const s of servers) assert.equal(await s.stop(), 0);
  await Promise.all([a, b, secure, mutual].map((u) => u.stop()));
  await knot.stop();
});

async function serve(corefile: string): Promise<RunningServer> {
  const srv = await startServer(corefile);
  servers.push(srv);
  return srv;
}

/** Log lines of the server's grpc plugin that say an upstream failed. */
function failures(srv: RunningServer): string[] {
  return srv.logs.map((l) => String(l.msg)).filter((m) => m.startsWith("grpc upstream "));
}

test("dig gets Knot's answers through grpc; except names are not sent; cache keeps the answer; metrics", async () => {
  const metrics = await freePort();
  const srv = await serve(`. {
    prometheus 127.0.0.1:${metrics}
    grpc . 127.0.0.1:${a.port} {
        except internal.example.org
    }
    cache 30
    whoami
}
`);
  const r = await dig(srv.port, "www.example.org");
  assert.equal(r.status, "NOERROR", r.text);
  assert.deepEqual(r.answer, ["www.example.org. 30 IN A 192.0.2.1"], "Knot's 300, capped by cache 30");
  const big = await dig(srv.port, "big.example.org", "A", "+tcp");
  assert.equal(big.answer.length, 120, "a reply over 512 octets comes whole over gRPC");

  // An except name goes on to the next plugin (whoami), never upstream.
  const internal = await dig(srv.port, "internal.example.org");
  assert.equal(internal.status, "NOERROR");
  assert.ok(!a.names().includes("internal.example.org."), a.calls.join("\n"));

  // Past the answer store's second of replay, cache answers, with its TTL counting down.
  await sleep(1200);
  const again = await dig(srv.port, "www.example.org");
  assert.match(again.answer[0], /^www\.example\.org\. 2\d IN A 192\.0\.2\.1$/, "from cache, counting down");
  assert.equal(a.names().filter((n) => n === "www.example.org.").length, 1, "asked upstream once");

  const text = (await httpGet(metrics, "/metrics")).body;
  const to = `127.0.0.1:${a.port}`;
  assert.equal(sample(text, "coredns_grpc_requests_total", { to }), 2);
  assert.equal(sample(text, "coredns_grpc_responses_total", { rcode: "NOERROR", to }), 2);
  assert.equal(sample(text, "coredns_grpc_request_duration_seconds_count", { to }), 2);
});

test("TLS: the CA and the name are checked, a client certificate is presented", async () => {
  const ca = pki.ca;
  const block = (zone: string, to: number, opts: string) =>
    `${zone} {\n    grpc . 127.0.0.1:${to} {\n${opts}\n    }\n}\n`;
  const srv = await serve(
    block("www.example.org", secure.port, `tls ${ca}\ntls_servername dns.test`) +
      block("alias.example.org", secure.port, `tls ${ca}`) +
      block("who.example.org", secure.port, `tls ${ca}\ntls_servername other.test`) +
      block("ns.example.org", secure.port, "tls\ntls_servername dns.test") +
      block("mid.example.org", secure.port, "") +
      block("big.example.org", mutual.port, `tls ${pki.clientCert} ${pki.clientKey} ${ca}`) +
      block("nope.example.org", mutual.port, `tls ${ca}`),
  );
  const status = async (name: string) => (await dig(srv.port, name, "A", "+tcp")).status;
  assert.equal(await status("www.example.org"), "NOERROR", "the CA signed dns.test");
  assert.equal(await status("alias.example.org"), "NOERROR", "without a name, the address is checked");
  assert.equal(await status("who.example.org"), "SERVFAIL", "another name");
  assert.equal(await status("ns.example.org"), "SERVFAIL", "the system's CAs did not sign it");
  assert.equal(await status("mid.example.org"), "SERVFAIL", "cleartext to a TLS upstream");
  assert.equal(await status("big.example.org"), "NOERROR", "with the client certificate");
  assert.equal(await status("nope.example.org"), "SERVFAIL", "without one");
  const logs = failures(srv).join("\n");
  assert.match(logs, /altnames/, "the wrong name is said");
  assert.match(logs, /certificate/, "the unknown CA is said");
});

test("bad replies and gRPC statuses: SERVFAIL with a line that says why; NOT_FOUND is NXDOMAIN", async () => {
  const srv = await serve(`example.org {\n    grpc . 127.0.0.1:${b.port}\n}\n`);
  try {
    const cases: [string, string, RegExp | undefined][] = [
      ["wrong-id", "SERVFAIL", /is not the query's \(id\)/],
      ["wrong-question", "SERVFAIL", /is not the query's \(question\)/],
      ["status UNAVAILABLE", "SERVFAIL", /gRPC status 14 UNAVAILABLE: told to fail/],
      ["status PERMISSION_DENIED", "SERVFAIL", /gRPC status 7 PERMISSION_DENIED/],
      ["status NOT_FOUND", "NXDOMAIN", undefined],
      ["ok", "NOERROR", undefined],
    ];
    for (const [i, [mode, want, line]] of cases.entries()) {
      await b.mode(mode);
      // A name of its own each time: the answer store replays a reply for a second.
      const r = await dig(srv.port, i === cases.length - 1 ? "www.example.org" : `s${i}.example.org`);
      assert.equal(r.status, want, mode);
      // The log line may reach the test after the reply does: waited for, 5 s at most.
      for (let t = 0; line && !line.test(failures(srv).join("\n")) && t < 50; t++) await sleep(100);
      if (line) assert.match(failures(srv).join("\n"), line, mode);
    }
  } finally {
    await b.mode("ok");
  }
});

test("policy: sequential keeps to the first; round_robin takes turns; a dead upstream is passed over and used again after its restart", async () => {
  const srv = await serve(
    `a.example.org {\n    grpc . 127.0.0.1:${a.port} 127.0.0.1:${b.port} {\n        policy sequential\n    }\n}\n` +
      `b.example.org {\n    grpc . 127.0.0.1:${a.port} 127.0.0.1:${b.port} {\n        policy round_robin\n    }\n}\n`,
  );
  const ask = async (name: string) => (await dig(srv.port, name)).status;
  for (let i = 0; i < 4; i++) assert.equal(await ask(`q${i}.a.example.org`), "NXDOMAIN");
  assert.deepEqual(
    b.names().filter((n) => n.endsWith(".a.example.org.")),
    [],
    "sequential: all to the first",
  );
  for (let i = 0; i < 4; i++) assert.equal(await ask(`q${i}.b.example.org`), "NXDOMAIN");
  const turns = (u: GrpcRelay) => u.names().filter((n) => n.endsWith(".b.example.org.")).length;
  assert.deepEqual([turns(a), turns(b)], [2, 2], "round_robin: turns");

  // A down: its queries go to B.
  const port = a.port;
  await a.stop();
  assert.equal(await ask("down.a.example.org"), "NXDOMAIN");
  assert.ok(b.names().includes("down.a.example.org."));
  // Both down: SERVFAIL.
  await b.stop();
  assert.equal(await ask("both.a.example.org"), "SERVFAIL");
  assert.match(
    failures(srv).join("\n"),
    new RegExp(`grpc upstream 127\\.0\\.0\\.1:${port} failed: .*ECONNREFUSED`),
  );
  // A back on its port: answered again, over a new connection.
  a = await startGrpcRelay({ relay: knot.port, port });
  b = await startGrpcRelay({ relay: knot.port });
  assert.equal(await ask("back.a.example.org"), "NXDOMAIN");
  assert.deepEqual(a.names(), ["back.a.example.org."]);
});

test("deadline: cancel's ends the wait (SERVFAIL) and reaches the upstream as grpc-timeout", async () => {
  const srv = await serve(
    `slow.example.org {\n    cancel 300ms\n    grpc . 127.0.0.1:${a.port}\n}\n` +
      `example.org {\n    grpc . 127.0.0.1:${a.port}\n}\n`,
  );
  await a.mode("sleep 1");
  try {
    assert.equal((await dig(srv.port, "x.slow.example.org")).status, "SERVFAIL");
    const left = (name: string) => Number(a.calls.find((c) => c.startsWith(`${name} `))!.split(" ")[2]);
    assert.ok(left("x.slow.example.org.") <= 0.3, a.calls.join("\n"));
    // Without cancel, one try waits at most 2 s (then the next upstream would get its turn).
    await a.mode("ok");
    assert.equal((await dig(srv.port, "y.example.org")).status, "NXDOMAIN");
    assert.ok(left("y.example.org.") <= 2, a.calls.join("\n"));
  } finally {
    await a.mode("ok");
  }
});

test("a unix socket upstream; fallthrough hands NXDOMAIN, and a query no upstream answered, to the next plugin", async () => {
  const dir = mkdtempSync(join(tmpdir(), "grpc-unix-"));
  const socket = join(dir, "g.sock");
  const local = await startGrpcRelay({ relay: knot.port, socket });
  try {
    const dead = await freePort();
    const srv = await serve(
      `example.org {\n    grpc . unix://${socket} {\n        fallthrough\n    }\n    whoami\n}\n` +
        `example.net {\n    grpc . 127.0.0.1:${dead} {\n        fallthrough\n    }\n    whoami\n}\n`,
    );
    const www = await dig(srv.port, "www.example.org");
    assert.deepEqual(www.answer, ["www.example.org. 300 IN A 192.0.2.1"], "over the socket");
    // Knot's NXDOMAIN goes on to whoami, which answers with the client's address.
    const nx = await dig(srv.port, "nope.example.org");
    assert.equal(nx.status, "NOERROR", nx.text);
    assert.match(nx.additional.join("\n"), /127\.0\.0\.1/);
    assert.deepEqual(local.names(), ["www.example.org.", "nope.example.org."]);
    // No upstream answers: whoami again, not SERVFAIL.
    assert.equal((await dig(srv.port, "www.example.net")).status, "NOERROR");
  } finally {
    await local.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a connection whose far end went silent is probed after a timed-out try, closed, and replaced", async () => {
  const relay = await startSilentRelay(a.port);
  try {
    const srv = await serve(`example.org {\n    grpc . 127.0.0.1:${relay.port}\n}\n`);
    assert.equal((await dig(srv.port, "one.example.org")).status, "NXDOMAIN");
    relay.silent = true;
    assert.equal((await dig(srv.port, "two.example.org")).status, "SERVFAIL", "the try timed out");
    // Its PING goes unanswered: the connection is closed (the relay sees the client close it).
    for (let i = 0; i < 100 && relay.closedByClient === 0; i++) await sleep(50);
    assert.ok(relay.closedByClient >= 1);
    relay.silent = false;
    assert.equal((await dig(srv.port, "three.example.org")).status, "NXDOMAIN", "on a new connection");
    // 2, or 3 when a retry of the timed-out query opened one more before the probe closed the first
    // (that one is probed in turn): without the probe every query stays on the first, silent or not.
    assert.ok(relay.opened >= 2, `connections opened: ${relay.opened}`);
  } finally {
    await relay.close();
  }
});

test("insights shows a grpc upstream beside forward's: queries, NXDOMAINs, latency, failures once it is stopped; so does clusterdns top", async () => {
  const api = await startApiServer();
  const dir = mkdtempSync(join(tmpdir(), "grpc-insights-"));
  const relay = await startGrpcRelay({ relay: knot.port });
  try {
    const port = await freePort();
    const srv = await serve(`. {
    insights {
        listen 127.0.0.1:${port}
        kubeconfig ${writeKubeconfig(dir, api.url)}
    }
    grpc . 127.0.0.1:${relay.port}
}
fwd.example.org {
    forward . 127.0.0.1:${knot.port}
}
`);
    const health = async () => {
      const r = await httpGet(port, "/api/insights");
      assert.equal(r.status, 200, r.body);
      const ups = (JSON.parse(r.body) as Report).upstreams;
      return (plugin: string) => ups.find((u) => u.plugin === plugin)!;
    };
    assert.equal((await dig(srv.port, "www.example.org")).status, "NOERROR");
    assert.equal((await dig(srv.port, "nx1.example.org")).status, "NXDOMAIN");
    assert.equal((await dig(srv.port, "nx2.example.org")).status, "NXDOMAIN");
    assert.equal((await dig(srv.port, "x.fwd.example.org")).status, "NXDOMAIN");
    const to = `127.0.0.1:${relay.port}`;
    const up = await health();
    const grpc = up("grpc");
    assert.deepEqual(
      { ...grpc, latencyMs: 0 },
      { to, plugin: "grpc", requests: 3, failures: 0, nxdomain: 2, servfail: 0, latencyMs: 0 },
    );
    assert.ok(grpc.latencyMs !== null && grpc.latencyMs > 0, String(grpc.latencyMs));
    const fwd = up("forward");
    assert.deepEqual(
      [fwd.to, fwd.requests, fwd.nxdomain],
      [`127.0.0.1:${knot.port}`, 1, 1],
      "forward's upstream, in its own row",
    );

    await relay.stop();
    assert.equal((await dig(srv.port, "down.example.org")).status, "SERVFAIL");
    const r = await httpGet(port, "/api/insights");
    const report = JSON.parse(r.body) as Report;
    const down = report.upstreams.find((u) => u.plugin === "grpc")!;
    assert.deepEqual([down.to, down.requests, down.failures, down.servfail], [to, 4, 1, 0]);
    assert.deepEqual(report.servfailCauses, [
      { plugin: "grpc", cause: "gRPC upstream failed, timed out or answered SERVFAIL", count: 1 },
    ]);

    const { stdout } = await run(process.execPath, [BIN, "top", "--server", `127.0.0.1:${port}`, "--once"], {
      env: { ...process.env, COLUMNS: "200" },
    });
    assert.match(stdout, new RegExp(`grpc +127\\.0\\.0\\.1:${relay.port} +4 q, 1 failed, 0 SERVFAIL`));
    assert.match(stdout, new RegExp(`forward +127\\.0\\.0\\.1:${knot.port} +1 q, 0 failed`));
  } finally {
    await relay.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
