// dns64 through real sockets: a clusterdns process with dns64 in front of kubernetes (the test API
// server), a zone file and forward to a real Knot on loopback, asked by dig over IPv6 (::1) and IPv4.
// The second half checks the answer store: what one client family gets never reaches the other, a
// synthesized answer is kept and dropped when its Service changes.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { namespace, service } from "./k8s/objects.ts";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { digAt } from "./helpers/dig.ts";
import { zoneText } from "./helpers/zone-text.ts";
import { freePort } from "./helpers/free-port.ts";
import { httpGet } from "./helpers/http-get.ts";
import { sample } from "./helpers/metrics.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";

// Denials are kept 20 s (the SOA's MINIMUM), under cache's 30.
const ZONE = zoneText("example.test", "www 120 IN A 192.0.2.33", "v6 20 IN AAAA 2001:db8::6").replace(
  "1 60 60 60 60",
  "1 60 60 60 20",
);

const corefile = (o: {
  kubeconfig: string;
  knot: number;
  metrics: number;
  ready: number;
  dns64: string;
}) => `. {
    prometheus 127.0.0.1:${o.metrics}
    ready 127.0.0.1:${o.ready}
    ${o.dns64}
    cache 30
    kubernetes cluster.local {
        kubeconfig ${o.kubeconfig}
    }
    file db.example.test example.test
    forward . 127.0.0.1:${o.knot}
}
`;

/** A dig answer line as [owner, the rest after the TTL]. */
const withoutTtl = (line: string) => {
  const [owner, , ...rest] = line.split(" ");
  return [owner, rest.join(" ")];
};

describe("dns64 over dig", () => {
  let api: TestApiServer;
  let knot: Knot;
  let dir: string;
  const servers: RunningServer[] = [];
  const metricsPorts: number[] = [];

  async function start(dns64: string): Promise<RunningServer> {
    const [metrics, ready] = [await freePort(), await freePort()];
    const kubeconfig = writeKubeconfig(dir, api.url);
    const srv = await startServer(corefile({ kubeconfig, knot: knot.port, metrics, ready, dns64 }), {
      files: { "db.example.test": ZONE },
    });
    servers.push(srv);
    metricsPorts.push(metrics);
    for (let i = 0; i < 100 && (await httpGet(ready, "/ready")).status !== 200; i++) await sleep(50);
    return srv;
  }

  before(async () => {
    api = await startApiServer();
    api.create("namespaces", namespace("default"));
    api.create("services", service("default", "web", { clusterIP: "10.96.0.20" }));
    api.create("services", service("default", "dual", { clusterIPs: ["10.96.0.21", "fd00::21"] }));
    api.create("services", service("default", "later", { clusterIP: "10.96.0.22" }));
    knot = await startKnot();
    dir = mkdtempSync(join(tmpdir(), "clusterdns-dns64-"));
  });
  after(async () => {
    for (const s of servers) assert.equal(await s.stop(), 0);
    await knot?.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const v6 = (srv: RunningServer, name: string) => digAt("::1", srv.port, name, "AAAA");
  const v4 = (srv: RunningServer, name: string) => digAt("127.0.0.1", srv.port, name, "AAAA");

  it("IPv6 clients get AAAA synthesized from kubernetes, file and a forwarded A; real AAAA pass", async () => {
    const srv = await start("dns64");
    assert.deepEqual((await v6(srv, "web.default.svc.cluster.local")).answer, [
      "web.default.svc.cluster.local. 5 IN AAAA 64:ff9b::a60:14",
    ]);
    assert.deepEqual((await v6(srv, "dual.default.svc.cluster.local")).answer, [
      "dual.default.svc.cluster.local. 5 IN AAAA fd00::21",
    ]);
    // The zone's SOA keeps denials 20 s: the A's 120 (30 after cache) is cut to it (RFC 6147 5.1.7).
    assert.deepEqual((await v6(srv, "www.example.test")).answer, [
      "www.example.test. 20 IN AAAA 64:ff9b::c000:221",
    ]);
    assert.deepEqual((await v6(srv, "v6.example.test")).answer, ["v6.example.test. 20 IN AAAA 2001:db8::6"]);
    // Knot: ns.example.org has an A only (300 s, denials 60 s); www an AAAA, passed as it is.
    const ns = (await v6(srv, "ns.example.org")).answer;
    assert.deepEqual(ns.map(withoutTtl), [["ns.example.org.", "IN AAAA 64:ff9b::7f00:1"]]);
    assert.ok(Number(ns[0].split(" ")[1]) <= 60, ns[0]);
    assert.deepEqual((await v6(srv, "www.example.org")).answer.map(withoutTtl), [
      ["www.example.org.", "IN AAAA 2001:db8::1"],
    ]);
    const alias = await v6(srv, "alias.example.org");
    assert.deepEqual(alias.answer.map(withoutTtl), [
      ["alias.example.org.", "IN CNAME www.example.org."],
      ["www.example.org.", "IN AAAA 2001:db8::1"],
    ]);
    const nx = await v6(srv, "nothere.default.svc.cluster.local");
    assert.equal(nx.status, "NXDOMAIN");
  });

  /** coredns_dns64_requests_translated_total of the server started `nth`. */
  const translated = async (nth: number) =>
    sample((await httpGet(metricsPorts[nth], "/metrics")).body, "coredns_dns64_requests_translated_total", {
      server: `dns://:${servers[nth].port}`,
    }) ?? 0;

  it("IPv4 clients of the same server get no synthesis, before and after IPv6 clients did", async () => {
    const srv = servers[0];
    for (let round = 0; round < 2; round++) {
      for (const name of ["web.default.svc.cluster.local", "www.example.test", "ns.example.org"]) {
        const four = await v4(srv, name);
        assert.equal(four.status, "NOERROR", name);
        assert.deepEqual(four.answer, [], `${name}: an IPv4 client, round ${round}`);
        assert.equal((await v6(srv, name)).answer.length, 1, `${name}: an IPv6 client, round ${round}`);
      }
    }
    // Both families' replies are kept, apart: asked in turns, the synthesis runs once at most (when
    // the entry from before had expired), not for every IPv6 query.
    const before = await translated(0);
    for (let i = 0; i < 3; i++) {
      assert.deepEqual((await v4(srv, "ns.example.org")).answer, []);
      assert.equal((await v6(srv, "ns.example.org")).answer.length, 1);
    }
    assert.ok((await translated(0)) - before <= 1, `${(await translated(0)) - before} syntheses`);
  });

  it("with allow_ipv4 a synthesized answer is kept, and each kind dropped when its Service changes", async () => {
    const srv = await start("dns64 {\n        allow_ipv4\n    }");
    const name = "later.default.svc.cluster.local";
    for (const ask of [v4, v6, v4]) {
      assert.deepEqual((await ask(srv, name)).answer, [`${name}. 5 IN AAAA 64:ff9b::a60:16`]);
    }
    assert.equal(await translated(1), 1, "the second and third came from the answer store");
    // The Service becomes dual-stack: its own AAAA replaces the synthesized one at once.
    api.update("services", service("default", "later", { clusterIPs: ["10.96.0.22", "fd00::22"] }));
    let answer: string[] = [];
    for (let i = 0; i < 100; i++) {
      answer = (await v6(srv, name)).answer;
      if (answer[0]?.endsWith("fd00::22")) break;
      await sleep(50);
    }
    assert.deepEqual(answer, [`${name}. 5 IN AAAA fd00::22`]);
    assert.deepEqual((await v4(srv, name)).answer, [`${name}. 5 IN AAAA fd00::22`]);
    // And back to IPv4 only: the kept real AAAA goes, synthesis is due again.
    api.update("services", service("default", "later", { clusterIP: "10.96.0.22" }));
    for (let i = 0; i < 100; i++) {
      answer = (await v6(srv, name)).answer;
      if (answer[0]?.endsWith("64:ff9b::a60:16")) break;
      await sleep(50);
    }
    assert.deepEqual(answer, [`${name}. 5 IN AAAA 64:ff9b::a60:16`]);
    assert.deepEqual((await v4(srv, name)).answer, [`${name}. 5 IN AAAA 64:ff9b::a60:16`]);
  });
});
