// -workers 2: a real clusterdns process answers with two threads, each on a UDP socket of its own on
// the one port (SO_REUSEPORT), each with its own copy of the cluster fed from the main thread's one
// watch on the test API server. dig's source port changes with every query, so the kernel spreads
// them over both sockets: the per-thread counts in /metrics show that both answered, and a Service
// created through the API must be answered by every query, whichever thread takes it.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { endpointSlice, namespace, service } from "./k8s/objects.ts";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig, digUntil } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { sample } from "./helpers/metrics.ts";
import { exchangeUdp } from "./helpers/udp-exchange.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { Type } from "../src/dns/constants.ts";
import { queryMsg } from "./helpers/query-msg.ts";

/** Queries per round: with two sockets, the chance that all of them land on one is 2^-(ROUNDS-1). */
const ROUNDS = 30;

/** ROUNDS queries at once, each from a dig of its own (a new source port each). */
function digRound(port: number, name: string, type = "A", ...opts: string[]) {
  return Promise.all(Array.from({ length: ROUNDS }, () => dig(port, name, type, ...opts)));
}

const corefile = (
  kubeconfig: string,
  ports: { metrics: number; ready: number },
  ttl: number,
) => `cluster.local {
    prometheus 127.0.0.1:${ports.metrics}
    ready 127.0.0.1:${ports.ready}
    health 127.0.0.1:0 {
        lameduck 3s
    }
    kubernetes {
        kubeconfig ${kubeconfig}
        ttl ${ttl}${ttl === 5 ? "" : "\n        endpoint_pod_names"}
    }
}
`;

describe("-workers 2", () => {
  let api: TestApiServer;
  let srv: RunningServer;
  let dir: string;
  let kubeconfig: string;
  const ports = { metrics: 0, ready: 0 };
  const metrics = async () => (await httpGet(ports.metrics, "/metrics")).body;
  const perThread = async () => {
    const text = await metrics();
    return [0, 1].map((w) => sample(text, "clusterdns_worker_queries_total", { worker: String(w) }) ?? 0);
  };

  before(async () => {
    api = await startApiServer({ bookmarkIntervalMs: 200 });
    api.create("namespaces", namespace("default"));
    api.create("services", service("default", "web", { clusterIP: "10.96.7.1" }));
    dir = mkdtempSync(join(tmpdir(), "clusterdns-workers-"));
    kubeconfig = writeKubeconfig(dir, api.url);
    ports.metrics = await freePort();
    ports.ready = await freePort();
    srv = await startServer(corefile(kubeconfig, ports, 5), { args: ["-workers", "2"] });
  });
  after(async () => {
    await srv?.stop("SIGKILL");
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("both threads answer the cluster's names, from one watch", async () => {
    assert.equal((await httpGet(ports.ready, "/ready")).status, 200);
    const before = await perThread();
    for (const r of await digRound(srv.port, "web.default.svc.cluster.local")) {
      assert.deepEqual(r.answer, ["web.default.svc.cluster.local. 5 IN A 10.96.7.1"]);
    }
    const now = await perThread();
    const served = now.map((n, i) => n - before[i]);
    assert.equal(served[0] + served[1], ROUNDS, `per thread: ${served.join(", ")}`);
    assert.ok(served[0] > 0 && served[1] > 0, `both sockets served: ${served.join(", ")}`);
    // One watch per kind for the whole process, not one per thread, and one store: the worker's
    // reads the main thread's shared index, it holds no copy.
    assert.equal(api.openWatches("services"), 1);
    const synced = srv.logs.filter((l) => l.msg === "synced").map((l) => `${l.worker ?? 0} ${l.source}`);
    assert.deepEqual(synced.sort(), [`0 api ${api.url} (connected)`, "1 the main thread's store (shared)"]);
    const lists = api.requests.filter((r) => r.path.endsWith("/services") && !r.watch);
    assert.equal(lists.length, 1, "the services were listed once");
    // TCP is the main thread's.
    const tcp = await dig(srv.port, "web.default.svc.cluster.local", "A", "+tcp");
    assert.deepEqual(tcp.answer, ["web.default.svc.cluster.local. 5 IN A 10.96.7.1"]);
  });

  it("a Service created through the API is answered by every thread", async () => {
    const name = "api.default.svc.cluster.local";
    assert.equal((await dig(srv.port, name)).status, "NXDOMAIN");
    api.create("services", service("default", "api", { clusterIP: "None" }));
    api.create("endpointslices", endpointSlice("default", "api", "api-1", ["10.1.0.9"]));
    await digUntil(srv.port, name, "A", [`${name}. 5 IN A 10.1.0.9`]);
    const before = await perThread();
    // Every later query gets it, whichever socket takes it: each thread's store saw the events.
    for (const r of await digRound(srv.port, name)) assert.deepEqual(r.answer, [`${name}. 5 IN A 10.1.0.9`]);
    const now = await perThread();
    assert.ok(now[0] > before[0] && now[1] > before[1], `both answered: ${before} -> ${now}`);
  });

  it("the metrics add up over the threads", async () => {
    const base = { server: `dns://:${srv.port}`, zone: "cluster.local.", view: "" };
    const counts = async () => {
      const t = await metrics();
      return [
        sample(t, "coredns_dns_requests_total", { ...base, proto: "udp", family: "1", type: "TXT" }),
        sample(t, "coredns_dns_request_duration_seconds_count", base),
        sample(t, "coredns_dns_do_requests_total", base),
      ].map((n) => n ?? 0);
    };
    const before = await counts();
    await digRound(srv.port, "dns-version.cluster.local", "TXT", "+dnssec");
    const now = await counts();
    assert.deepEqual(
      now.map((n, i) => n - before[i]),
      [ROUNDS, ROUNDS, ROUNDS],
    );
    // The process's own gauges are counted once, not once per thread.
    assert.equal(sample(await metrics(), "coredns_build_info", {}) ?? 1, 1);
  });

  it("SIGUSR1 reloads every thread, onto a new store from a new watch", async () => {
    // endpoint_pod_names changes what the store keeps: the reload lists the cluster again into a new
    // store (one LIST for the process), and every worker's new store is fed from it.
    writeFileSync(join(srv.dir, "Corefile"), corefile(kubeconfig, ports, 7));
    srv.proc.kill("SIGUSR1");
    const name = "web.default.svc.cluster.local";
    // Each thread reloads on its own: wait until a whole round answers with the new TTL.
    const deadline = Date.now() + 10_000;
    let ttls: string[] = [];
    while (Date.now() < deadline) {
      ttls = (await digRound(srv.port, name)).map((r) => r.answer[0]?.split(/\s+/)[1]);
      if (ttls.every((t) => t === "7")) break;
      await sleep(100);
    }
    assert.deepEqual(new Set(ttls), new Set(["7"]));
    const lists = api.requests.filter((r) => r.path.endsWith("/services") && !r.watch);
    assert.equal(lists.length, 2, "listed once at start and once for the new store");
    assert.ok(
      srv.logs.some((l) => l.msg === "reloaded" && l.worker === 1),
      "the worker logged its reload",
    );
  });

  it("SIGTERM: every thread answers through the lameduck, then the process exits 0", async () => {
    // After the reload above the main thread may still stand aside (its new store's first list is a
    // backlog of events: src/server/step-aside.ts): it answers again 1 s after. Wait until it does.
    const name0 = "web.default.svc.cluster.local";
    for (let t = 0; t < 50; t++) {
      const was = await perThread();
      await digRound(srv.port, name0);
      const now = await perThread();
      if (now[0] > was[0] && now[1] > was[1]) break;
      await sleep(100);
    }
    const before = await perThread();
    const exited = srv.stop("SIGTERM");
    const name = "web.default.svc.cluster.local";
    // What dig printed, when an answer is missing: a status, a timeout or a refusal tell apart why.
    for (const r of await digRound(srv.port, name))
      assert.deepEqual(r.answer, [`${name}. 7 IN A 10.96.7.1`], r.text.split("\n").slice(0, 8).join("\n"));
    const during = await perThread();
    assert.ok(during[0] > before[0] && during[1] > before[1], `both answered: ${before} -> ${during}`);
    assert.equal(await exited, 0);
  });
});

describe("-workers 2 and a warm-start snapshot", () => {
  it("every thread answers from the snapshot the main thread restored while the API is down", async () => {
    const api = await startApiServer();
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-workers-snapshot-"));
    try {
      api.create("namespaces", namespace("default"));
      api.create("services", service("default", "web", { clusterIP: "10.96.0.80" }));
      const conf = `cluster.local {
    kubernetes {
        kubeconfig ${writeKubeconfig(dir, api.url)}
        snapshot ${join(dir, "snapshot.json")} 1s
        startup_timeout 500ms
    }
}
`;
      const name = "web.default.svc.cluster.local";
      const first = await startServer(conf);
      await digUntil(first.port, name, "A", [`${name}. 5 IN A 10.96.0.80`]);
      assert.equal(await first.stop("SIGTERM"), 0);
      api.setDown(true);
      const srv = await startServer(conf, { args: ["-workers", "2"] });
      try {
        for (const r of await digRound(srv.port, name))
          assert.deepEqual(r.answer, [`${name}. 5 IN A 10.96.0.80`]);
      } finally {
        assert.equal(await srv.stop("SIGTERM"), 0);
      }
    } finally {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("-workers 2 and a cache in each thread", () => {
  it("coredns_cache_entries adds up the threads' caches, as the hits and misses do", async () => {
    const metricsPort = await freePort();
    const srv = await startServer(
      `example.org {
    prometheus 127.0.0.1:${metricsPort}
    cache 30
    template IN A example.org {
        answer "{{ .Name }} 60 IN A 10.0.0.1"
    }
}
`,
      { args: ["-workers", "2"] },
    );
    try {
      // ROUNDS names, each asked once from a port of its own: each thread's cache keeps those it took.
      await Promise.all(Array.from({ length: ROUNDS }, (_, i) => dig(srv.port, `n${i}.example.org`)));
      const text = (await httpGet(metricsPort, "/metrics")).body;
      const base = { server: `dns://:${srv.port}`, zones: "example.org.", view: "" };
      assert.equal(sample(text, "coredns_cache_misses_total", base), ROUNDS);
      const mainOnly = sample(text, "clusterdns_worker_queries_total", { worker: "0" });
      assert.ok(mainOnly !== undefined && mainOnly < ROUNDS, `both threads took queries: main ${mainOnly}`);
      assert.equal(sample(text, "coredns_cache_entries", { ...base, type: "success" }), ROUNDS);
    } finally {
      await srv.stop("SIGKILL");
    }
  });
});

describe("-workers 2 and a reload onto a new store", () => {
  it("a Service changed as the main thread took the new configuration over is not answered stale by a worker", async () => {
    const api = await startApiServer({ bookmarkIntervalMs: 200 });
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-workers-reload-"));
    const kubeconfig = writeKubeconfig(dir, api.url);
    const conf = (extra: string) => `cluster.local {
    kubernetes {
        kubeconfig ${kubeconfig}${extra}
    }
}
`;
    const web = service("default", "web", { clusterIP: "10.96.0.1" });
    api.create("namespaces", namespace("default"));
    api.create("services", web);
    const srv = await startServer(conf(""), { args: ["-workers", "2"] });
    try {
      const name = "web.default.svc.cluster.local";
      await digUntil(srv.port, name, "A", [`${name}. 5 IN A 10.96.0.1`]);
      // endpoint_pod_names: a new store from a new watch, the old one stopped once the reload is done.
      writeFileSync(join(srv.dir, "Corefile"), conf("\n        endpoint_pod_names"));
      srv.proc.kill("SIGUSR1");
      while (!srv.logs.some((l) => l.msg === "reloaded" && l.worker === undefined)) await sleep(2);
      api.update("services", {
        ...web,
        spec: { ...web.spec, clusterIP: "10.96.0.2", clusterIPs: ["10.96.0.2"] },
      });
      // Queries from a new source port every 2 ms for 0.6 s: once one came back with the new address,
      // one sent 20 ms after that (well past a worker's taking the change) must not have the old.
      const answers = await Promise.all(
        Array.from({ length: 300 }, async (_, i) => {
          await sleep(2 * i);
          const sent = performance.now();
          const reply = await exchangeUdp(srv.port, encode(queryMsg(`${name}.`, Type.A)), 2000);
          const rr = reply && decode(reply).answer[0];
          return { sent, back: performance.now(), ip: rr && "address" in rr.data ? rr.data.address : "" };
        }),
      );
      const firstNew = Math.min(...answers.filter((a) => a.ip === "10.96.0.2").map((a) => a.back));
      const stale = answers.filter((a) => a.ip !== "10.96.0.2" && a.sent > firstNew + 20);
      assert.deepEqual(
        stale.map((a) => `${a.ip} sent ${Math.round(a.sent - firstNew)} ms after the first new answer`),
        [],
      );
    } finally {
      await srv.stop("SIGKILL");
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("-workers 2 and a kubeconfig rewritten as the threads start", () => {
  it("the worker takes the main thread's store (keyed by the file as the main thread read it) and listens", async () => {
    const api = await startApiServer({ bookmarkIntervalMs: 200 });
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-workers-stamp-"));
    const kubeconfig = writeKubeconfig(dir, api.url);
    api.create("namespaces", namespace("default"));
    api.create("services", service("default", "web", { clusterIP: "10.96.0.1" }));
    // The main thread's first LIST comes after its set-up, while the worker is still loading: the
    // kubeconfig is written again then (same content, a new mtime), as a mounted Secret's update does.
    let rewritten = false;
    api.onList(() => {
      if (!rewritten) writeKubeconfig(dir, api.url);
      rewritten = true;
    });
    const ready = await freePort();
    const srv = await startServer(
      `cluster.local {
    ready 127.0.0.1:${ready}
    kubernetes {
        kubeconfig ${kubeconfig}
    }
}
`,
      { args: ["-workers", "2"] },
    );
    try {
      assert.ok(rewritten, "the kubeconfig was written again during the start");
      let status = 0;
      for (let i = 0; i < 60 && status !== 200; i++) {
        status = (await httpGet(ready, "/ready").catch(() => ({ status: 0 }))).status;
        if (status !== 200) await sleep(100);
      }
      assert.equal(status, 200, "ready: every thread listens");
      const name = "web.default.svc.cluster.local";
      const answers = (await digRound(srv.port, name)).map((r) => r.answer.join(" "));
      assert.deepEqual(new Set(answers), new Set([`${name}. 5 IN A 10.96.0.1`]));
    } finally {
      await srv.stop("SIGKILL");
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
