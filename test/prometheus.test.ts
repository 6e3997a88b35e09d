// prometheus end to end: queries of several kinds, then a scrape of /metrics that must show CoreDNS's
// series with the labels and values those queries imply.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ROOT, startServer } from "./helpers/server.ts";
import { dig, digAt } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { sample } from "./helpers/metrics.ts";

test("/metrics shows the queries with CoreDNS's names and labels", async () => {
  const port = await freePort();
  // An upstream for the forward series: another clusterdns answering example.net.
  const upstream = await startServer(`example.net {
    hosts {
        192.0.2.9 b.example.net
        reload 0
    }
}
`);
  const srv = await startServer(`example.net {
    prometheus 127.0.0.1:${port}
    forward . 127.0.0.1:${upstream.port}
}
example.org {
    prometheus 127.0.0.1:${port}
    hosts {
        192.0.2.1 a.example.org
        reload 0
    }
}
cluster.local {
    prometheus 127.0.0.1:${port}
    kubernetes {
        objects ${ROOT}/zones/demo-cluster.yaml
    }
}
`);
  try {
    for (let i = 0; i < 3; i++) assert.equal((await dig(srv.port, "a.example.org", "A")).status, "NOERROR");
    // With the DO bit: counted in coredns_dns_do_requests_total.
    assert.equal((await dig(srv.port, "a.example.org", "MX", "+dnssec")).status, "NOERROR");
    assert.equal((await dig(srv.port, "a.example.org", "A", "+tcp")).status, "NOERROR");
    assert.equal((await dig(srv.port, "nope.example.org", "A")).status, "NXDOMAIN");

    assert.equal((await dig(srv.port, "b.example.net", "A")).status, "NOERROR");
    assert.equal((await dig(srv.port, "c.example.net", "A")).status, "NXDOMAIN");
    // A type CoreDNS does not label by name, with the DO bit.
    assert.equal((await dig(srv.port, "cluster.local", "CAA", "+dnssec")).status, "NOERROR");

    const r = await httpGet(port, "/metrics");
    assert.equal(r.status, 200);
    const t = r.body;
    const server = `dns://:${srv.port}`;
    const base = { server, zone: "example.org.", view: "" };
    const req = (proto: string, type: string) =>
      sample(t, "coredns_dns_requests_total", { ...base, proto, family: "1", type });
    assert.equal(req("udp", "A"), 4, t);
    assert.equal(req("udp", "MX"), 1);
    assert.equal(req("tcp", "A"), 1);
    assert.equal(sample(t, "coredns_dns_responses_total", { ...base, rcode: "NOERROR", plugin: "hosts" }), 5);
    assert.equal(
      sample(t, "coredns_dns_responses_total", { ...base, rcode: "NXDOMAIN", plugin: "hosts" }),
      1,
    );
    // One histogram per server, zone and view, as CoreDNS's since 1.8.4 (it dropped the type label
    // for cardinality): the mixin's CoreDNSLatencyHigh takes the 99th percentile over all types.
    const duration = (labels: Record<string, string>) =>
      sample(t, "coredns_dns_request_duration_seconds_count", labels);
    assert.equal(duration(base), 6, t);
    assert.equal(duration({ ...base, type: "A" }), undefined, "no type label");
    assert.equal(sample(t, "coredns_dns_request_duration_seconds_bucket", { ...base, le: "+Inf" }), 6);
    assert.ok(
      sample(t, "coredns_dns_request_duration_seconds_bucket", { ...base, le: "0.00025" }) !== undefined,
    );
    const clusterLocal = { server, zone: "cluster.local.", view: "" };
    assert.equal(duration(clusterLocal), 1);
    assert.equal(sample(t, "coredns_dns_do_requests_total", base), 1);
    assert.equal(sample(t, "coredns_dns_do_requests_total", clusterLocal), 1);
    assert.equal(sample(t, "coredns_dns_request_size_bytes_count", { ...base, proto: "udp" }), 5);
    assert.equal(sample(t, "coredns_dns_response_size_bytes_count", { ...base, proto: "tcp" }), 1);
    assert.equal(sample(t, "coredns_dns_response_size_bytes_bucket", { ...base, proto: "udp", le: "0" }), 0);
    for (const name of ["prometheus", "hosts"]) {
      assert.equal(sample(t, "coredns_plugin_enabled", { ...base, name }), 1, name);
    }
    assert.match(t, /^coredns_build_info\{version="[^"]+",revision="",goversion="v\d+\.\d+\.\d+"\} 1$/m);
    assert.equal(sample(t, "coredns_panics_total", {}), 0);
    // a.example.org A: asked 4 times (3 UDP, 1 TCP), answered 3 times from the answer cache; its
    // first ask and the 5 other questions missed.
    assert.equal(sample(t, "clusterdns_answer_cache_hits_total", {}), 3);
    assert.equal(sample(t, "clusterdns_answer_cache_misses_total", {}), 6);
    assert.equal(sample(t, "coredns_reload_failed_total", {}), 0);
    assert.ok((sample(t, "process_resident_memory_bytes", {}) ?? 0) > 0);
    const to = `127.0.0.1:${upstream.port}`;
    assert.equal(sample(t, "coredns_forward_requests_total", { to }), 2);
    assert.equal(sample(t, "coredns_forward_responses_total", { to, rcode: "NOERROR" }), 1);
    assert.equal(sample(t, "coredns_forward_responses_total", { to, rcode: "NXDOMAIN" }), 1);
    assert.equal(sample(t, "coredns_forward_request_duration_seconds_count", { to, rcode: "NOERROR" }), 1);
    assert.equal(sample(t, "coredns_forward_max_concurrent_rejects_total", {}), 0);
    assert.equal(sample(t, "coredns_forward_healthcheck_failures_total", { to }), 0);
    // CoreDNS 1.11 and later: the same exchanges under the proxy package's names.
    const proxy = { proxy_name: "forward", to };
    for (const rcode of ["NOERROR", "NXDOMAIN"]) {
      const count = sample(t, "coredns_proxy_request_duration_seconds_count", { ...proxy, rcode });
      assert.equal(count, 1, rcode);
      assert.equal(
        sample(t, "coredns_proxy_request_duration_seconds_bucket", { ...proxy, rcode, le: "+Inf" }),
        1,
      );
    }
    // A UDP exchange always opens a socket of its own: two misses, no hits.
    assert.equal(sample(t, "coredns_proxy_conn_cache_misses_total", { ...proxy, proto: "udp" }), 2);
    assert.equal(sample(t, "coredns_proxy_conn_cache_hits_total", { ...proxy, proto: "udp" }), 0);
    assert.equal(sample(t, "coredns_proxy_healthcheck_failures_total", proxy), 0);
    // The demo cluster of zones/demo-cluster.yaml: 7 services in 5 namespaces.
    assert.equal(sample(t, "clusterdns_kubernetes_objects", { kind: "services" }), 7);
    assert.equal(sample(t, "clusterdns_kubernetes_objects", { kind: "namespaces" }), 5);
    assert.ok((sample(t, "clusterdns_kubernetes_store_bytes", {}) ?? 0) > 0);
    assert.equal(sample(t, "clusterdns_kubernetes_synced", {}), 1);
  } finally {
    // Both stop whatever the first says: a server left running would keep this file's process alive.
    const [code, upstreamCode] = await Promise.all([srv.stop(), upstream.stop()]);
    assert.equal(code, 0);
    assert.equal(upstreamCode, 0);
  }
});

test("idle, a server with metrics on does not wake up on a timer every few milliseconds", async () => {
  // prom-client samples event-loop lag on a timer; at its default 10 ms that is 100 wake-ups a second,
  // about 1% of a core, on a server with nothing to do.
  const srv = await startServer(`example.net {
    prometheus 127.0.0.1:${await freePort()}
    whoami
}
`);
  try {
    const wakeups = () => {
      const status = readFileSync(`/proc/${srv.proc.pid}/task/${srv.proc.pid}/status`, "utf8");
      return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1]);
    };
    await sleep(500);
    const before = wakeups();
    await sleep(2000);
    const n = wakeups() - before;
    assert.ok(n < 60, `the main thread woke ${n} times in 2 s`);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("scrapes close together (two Prometheus replicas): no NaN, no 292-year minimum lag", async () => {
  const port = await freePort();
  const srv = await startServer(`example.org {
    prometheus 127.0.0.1:${port}
    whoami
}
`);
  try {
    await sleep(300);
    for (let i = 0; i < 4; i++) {
      const { body } = await httpGet(port, "/metrics");
      const lag = body.split("\n").filter((l) => l.startsWith("nodejs_eventloop_lag_"));
      assert.equal(lag.length, 8, "every event-loop series is there");
      assert.deepEqual(
        lag.filter((l) => !/ \d+(\.\d+)?(e-\d+)?$/.test(l) || Number(l.split(" ")[1]) > 60),
        [],
        `scrape ${i}: a number of seconds under a minute`,
      );
    }
  } finally {
    await srv.stop();
  }
});

test("a block of several zones labels each query with the zone it is in, as CoreDNS", async () => {
  const port = await freePort();
  const srv = await startServer(`cluster.local in-addr.arpa {
    prometheus 127.0.0.1:${port}
    kubernetes cluster.local in-addr.arpa {
        objects ${ROOT}/zones/demo-cluster.yaml
    }
}
`);
  try {
    assert.equal((await dig(srv.port, "nginx.default.svc.cluster.local", "A")).status, "NOERROR");
    assert.equal((await dig(srv.port, "154.97.102.10.in-addr.arpa", "PTR")).status, "NOERROR");
    assert.equal((await dig(srv.port, "154.97.102.10.in-addr.arpa", "PTR")).status, "NOERROR");
    const { body } = await httpGet(port, "/metrics");
    const zoneOf = (type: string) =>
      body
        .split("\n")
        .find((l) => l.startsWith("coredns_dns_requests_total{") && l.includes(`type="${type}"`));
    assert.match(zoneOf("A") ?? "", /zone="cluster\.local\."/);
    assert.match(zoneOf("PTR") ?? "", /zone="in-addr\.arpa\.".* 2$/, "replayed from the answer store too");
  } finally {
    await srv.stop();
  }
});

test("health times a request to its own /health every second, as CoreDNS's (coredns_health_request_*)", async () => {
  const [metrics, health] = [await freePort(), await freePort()];
  const srv = await startServer(`example.org {
    prometheus 127.0.0.1:${metrics}
    health 127.0.0.1:${health}
    whoami
}
`);
  try {
    let count = 0;
    for (let i = 0; i < 40 && count < 2; i++) {
      await sleep(100);
      const text = (await httpGet(metrics, "/metrics")).body;
      count = sample(text, "coredns_health_request_duration_seconds_count", {}) ?? 0;
    }
    assert.ok(count >= 2, `two self-checks in 4 s, saw ${count}`);
    const text = (await httpGet(metrics, "/metrics")).body;
    assert.equal(sample(text, "coredns_health_request_failures_total", {}), 0);
    assert.ok((sample(text, "coredns_health_request_duration_seconds_bucket", { le: "2.5" }) ?? 0) >= 2);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test('a query for a name no block serves is counted as CoreDNS counts it: zone "dropped", REFUSED', async () => {
  const metrics = await freePort();
  const srv = await startServer(`example.org {
    prometheus 127.0.0.1:${metrics}
    whoami
}
`);
  try {
    assert.equal((await dig(srv.port, "foo.example.net", "A")).status, "REFUSED");
    assert.equal((await dig(srv.port, "foo.example.net", "A", "+tcp")).status, "REFUSED");
    const t = (await httpGet(metrics, "/metrics")).body;
    // CoreDNS's server answers it REFUSED before any plugin runs, and reports it under zone "dropped"
    // with no plugin: dashboards summing coredns_dns_responses_total by rcode see it.
    const base = { server: `dns://:${srv.port}`, zone: "dropped", view: "" };
    for (const proto of ["udp", "tcp"])
      assert.equal(
        sample(t, "coredns_dns_requests_total", { ...base, proto, family: "1", type: "A" }),
        1,
        `${proto}:\n${t
          .split("\n")
          .filter((l) => l.startsWith("coredns_dns_re"))
          .join("\n")}`,
      );
    assert.equal(sample(t, "coredns_dns_responses_total", { ...base, rcode: "REFUSED", plugin: "" }), 2);
    assert.equal(sample(t, "coredns_dns_request_size_bytes_count", { ...base, proto: "udp" }), 1);
    assert.equal(sample(t, "coredns_plugin_enabled", { ...base, name: "whoami" }), undefined);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

test("coredns_plugin_enabled is there from start-up, for the plugins CoreDNS counts (its handlers)", async () => {
  const [metrics, health, ready] = [await freePort(), await freePort(), await freePort()];
  const srv = await startServer(`example.org example.net {
    errors
    health 127.0.0.1:${health}
    ready 127.0.0.1:${ready}
    reload 10s
    prometheus 127.0.0.1:${metrics}
    whoami
}
`);
  try {
    // No query yet: CoreDNS sets the gauge when its server starts, per zone of the block.
    const t = (await httpGet(metrics, "/metrics")).body;
    const at = (zone: string, name: string) =>
      sample(t, "coredns_plugin_enabled", { server: `dns://:${srv.port}`, zone, view: "", name });
    for (const zone of ["example.org.", "example.net."]) {
      for (const name of ["errors", "prometheus", "whoami"])
        assert.equal(at(zone, name), 1, `${zone} ${name}\n${t}`);
      // Not handlers in CoreDNS (a web server, a timer): its metrics README says they are not reported.
      for (const name of ["health", "ready", "reload"])
        assert.equal(at(zone, name), undefined, `${zone} ${name}`);
    }
    // A reload without errors: CoreDNS resets the gauge and sets it for the new Corefile.
    const corefile = join(srv.dir, "Corefile");
    writeFileSync(corefile, readFileSync(corefile, "utf8").replace("    errors\n", ""));
    srv.proc.kill("SIGUSR1");
    let after = "";
    for (let i = 0; i < 50; i++) {
      await sleep(100);
      after = (await httpGet(metrics, "/metrics")).body;
      if (sample(after, "coredns_reload_version_info", { hash: "sha512", value: sha512(corefile) }) === 1)
        break;
    }
    const base = { server: `dns://:${srv.port}`, zone: "example.org.", view: "" };
    assert.equal(sample(after, "coredns_plugin_enabled", { ...base, name: "errors" }), undefined, after);
    assert.equal(sample(after, "coredns_plugin_enabled", { ...base, name: "whoami" }), 1);
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});

function sha512(file: string): string {
  return createHash("sha512").update(readFileSync(file)).digest("hex");
}

test("a block bound to several addresses is labelled per address, as CoreDNS runs a server per address", async () => {
  const metrics = await freePort();
  // NodeLocal DNSCache's shape: `bind 169.254.20.10 10.96.0.10`; here two loopback addresses.
  const srv = await startServer(`example.org {
    bind 127.0.0.1 127.0.0.2
    prometheus 127.0.0.1:${metrics}
    cache 30
    whoami
}
`);
  try {
    await digAt("127.0.0.1", srv.port, "a.example.org", "A");
    await digAt("127.0.0.2", srv.port, "a.example.org", "A", "+tcp");
    await digAt("127.0.0.2", srv.port, "b.example.org", "A");
    const t = (await httpGet(metrics, "/metrics")).body;
    const count = (server: string, proto: string) =>
      sample(t, "coredns_dns_requests_total", {
        server,
        zone: "example.org.",
        view: "",
        proto,
        family: "1",
        type: "A",
      });
    const [one, two] = [`dns://127.0.0.1:${srv.port}`, `dns://127.0.0.2:${srv.port}`];
    assert.equal(
      count(one, "udp"),
      1,
      t
        .split("\n")
        .filter((l) => l.startsWith("coredns_dns_requests"))
        .join("\n"),
    );
    assert.equal(count(two, "udp"), 1);
    assert.equal(count(two, "tcp"), 1);
    for (const server of [one, two]) {
      assert.equal(
        sample(t, "coredns_plugin_enabled", { server, zone: "example.org.", view: "", name: "whoami" }),
        1,
      );
      // The plugins' own series name the same server (cache's, here).
      assert.ok(
        sample(t, "coredns_cache_requests_total", { server, zones: "example.org.", view: "" }),
        server,
      );
    }
  } finally {
    assert.equal(await srv.stop(), 0);
  }
});
