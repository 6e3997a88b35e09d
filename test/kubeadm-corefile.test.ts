// kubeadm's default Corefile (Corefile.example), unchanged, end to end - as a kube-dns pod runs it:
// on port 53, with health on :8080, ready on :8181 and metrics on :9153, the API found through
// $KUBECONFIG, and `forward . /etc/resolv.conf` reaching a real upstream (Knot DNS).
//
// All of that needs fixed ports and a resolv.conf of its own, so it runs in two network namespaces
// this test makes: "pod" (clusterdns and the test API server, each a process of its own) and
// "upstream" (knotd serving example.org), joined by a veth pair. Nothing leaves them.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createNetns, type Netns } from "./helpers/netns.ts";
import {
  joinNetns,
  readObjects,
  startApiInNetns,
  startClusterdnsInNetns,
  type NetnsServer,
} from "./helpers/netns-cluster.ts";
import { parseDig } from "./helpers/dig.ts";
import { ROOT } from "./helpers/server.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";

const POD_ADDRESS = "10.53.0.1";
const UPSTREAM_ADDRESS = "10.53.0.2";

describe("kubeadm's default Corefile, unchanged", () => {
  let pod: Netns;
  let upstream: Netns;
  let knot: Knot;
  let dir: string;
  let server: NetnsServer | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-kubeadm-"));
    // The pod's resolv.conf is what `forward . /etc/resolv.conf` reads (dnsPolicy: Default).
    pod = await createNetns(undefined, `nameserver ${UPSTREAM_ADDRESS}\n`);
    upstream = await createNetns(undefined, `nameserver 127.0.0.1\n`);
    await joinNetns(pod, upstream, POD_ADDRESS, UPSTREAM_ADDRESS);
    knot = await startKnot({ netns: upstream.name, address: UPSTREAM_ADDRESS, port: 53 });

    const kubeconfig = await startApiInNetns(pod, readObjects(join(ROOT, "zones", "demo-cluster.yaml")), dir);
    server = await startClusterdnsInNetns(pod, join(ROOT, "Corefile.example"), { KUBECONFIG: kubeconfig });
  });

  after(async () => {
    await server?.stop();
    await knot?.stop();
    await pod?.destroy();
    await upstream?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const dig = async (...args: string[]) => {
    const r = await pod.exec("dig", ["@127.0.0.1", "+tries=1", "+time=3", "+nocookie", ...args]);
    assert.equal(r.code, 0, r.stderr);
    return parseDig(r.stdout);
  };
  const get = async (url: string) => {
    const script = `const r = await fetch(${JSON.stringify(url)}); console.log(r.status); console.log(await r.text());`;
    const r = await pod.exec(process.execPath, ["--input-type=module", "-e", script]);
    const [status, ...body] = r.stdout.split("\n");
    return { status: Number(status), body: body.join("\n") };
  };

  it("warms its answer path before serving, unseen: no query counted, nothing cached, none forwarded", async () => {
    const warmed = server!.logs.find((l) => l.msg === "answer path warmed up before serving");
    assert.ok(warmed, "the warm-up's line is logged before synced");
    assert.ok(Number(warmed.answered) > 0 && Number(warmed.questions) > 0, JSON.stringify(warmed));
    const metrics = (await get("http://127.0.0.1:9153/metrics")).body.split("\n");
    const samples = (name: string) =>
      metrics.filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
    // Counted before the first client's query: at most the loop plugin's one HINFO probe (type "other",
    // forwarded); the warm-up ran hundreds of queries.
    const total = (name: string) => samples(name).reduce((n, l) => n + Number(l.split(" ").at(-1)), 0);
    for (const name of [
      "coredns_dns_requests_total",
      "coredns_dns_responses_total",
      "coredns_cache_requests_total",
      "coredns_cache_misses_total",
      "coredns_forward_requests_total",
      "clusterdns_answer_cache_hits_total",
      "clusterdns_answer_cache_misses_total",
    ])
      assert.ok(total(name) <= 1, `${name} before the first query:\n${samples(name).join("\n")}`);
    for (const line of samples("coredns_dns_requests_total")) assert.match(line, /type="other"/);
    for (const line of samples("coredns_cache_entries")) assert.match(line, / 0$/, "nothing cached");
    assert.match(samples("clusterdns_answer_cache_entries")[0] ?? "", / 0$/);
  });

  it("answers cluster names from the API, with the Corefile's TTL of 30", async () => {
    const r = await dig("nginx.default.svc.cluster.local");
    assert.deepEqual(r.answer, ["nginx.default.svc.cluster.local. 30 IN A 10.102.97.154"]);
    assert.ok(r.flags.includes("aa"));
    const ptr = await dig("-x", "10.102.97.154");
    assert.deepEqual(ptr.answer, ["154.97.102.10.in-addr.arpa. 30 IN PTR nginx.default.svc.cluster.local."]);
    assert.equal((await dig("nope.default.svc.cluster.local")).status, "NXDOMAIN");
  });

  it("forwards other names to the resolv.conf upstream and caches them, TTLs counting down", async () => {
    const first = await dig("www.example.org");
    // Knot says 300; `cache 30` keeps it 30 s, and says so from the first answer on.
    assert.deepEqual(first.answer, ["www.example.org. 30 IN A 192.0.2.1"]);
    await sleep(2100);
    const second = await dig("www.example.org");
    const ttl = Number(second.answer[0]?.split(/\s+/)[1]);
    // `cache 30` keeps it 30 s at most, and the TTL says what is left.
    assert.ok(ttl <= 28 && ttl >= 25, `TTL counts down in the cache: ${second.answer[0]}`);
    assert.equal((await dig("missing.example.org")).status, "NXDOMAIN");
  });

  it("serves health, readiness and metrics on kubeadm's ports", async () => {
    assert.deepEqual(await get("http://127.0.0.1:8080/health"), { status: 200, body: "OK\n" });
    assert.equal((await get("http://127.0.0.1:8181/ready")).status, 200);
    const metrics = (await get("http://127.0.0.1:9153/metrics")).body;
    for (const series of [
      'coredns_dns_requests_total{server="dns://:53"',
      'coredns_forward_requests_total{to="10.53.0.2:53"}',
      "coredns_cache_hits_total{",
      'coredns_plugin_enabled{server="dns://:53",zone=".",view="",name="kubernetes"}',
      // www.example.org and the PTR (cluster.local is disabled, in-addr.arpa is not, as in CoreDNS).
      'coredns_cache_entries{server="dns://:53",type="success",zones=".",view=""} 2',
      'coredns_cache_entries{server="dns://:53",type="denial",zones=".",view=""} 1',
    ]) {
      const near = metrics.split("\n").filter((l) => l.startsWith(series.slice(0, 20)));
      assert.ok(metrics.includes(series), `${series} in /metrics:\n${near.join("\n")}`);
    }
  });
});
