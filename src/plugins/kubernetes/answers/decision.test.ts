// One decision per question (decision.ts), carried out by the wire lane or by the plugin chain: the
// client gets the same octets either way. One instance serves a cluster; every question is asked of it
// twice, each time with the answer store emptied first: once with the block's lane steps in place,
// once with them taken away (the chain alone). Same instance, same store, same SOA serial, same query:
// the replies must be equal byte for byte. A lane that answered what the chain must (a query held for
// the first sync, an NXDOMAIN under `fallthrough`, an ExternalName to chase, a reply for one client's
// spelling or options) or handed on what the chain answers differently would fail here.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Instance } from "../../../server/instance.ts";
import { readyInstance, startedInstance } from "../../../../test/helpers/instance.ts";
import { startApiServer } from "../../../../test/k8s/api-server.ts";
import { writeKubeconfig } from "../../../../test/k8s/kubeconfig.ts";
import { laneNames, laneObjects, lanePeer as peer, laneTypes } from "../../../../test/k8s/lane-cluster.ts";
import { pod, service } from "../../../../test/k8s/objects.ts";
import { encode } from "../../../dns/encode.ts";
import { newQuery } from "../../../dns/message.ts";
import { Class, EXPLAIN_OPTION, Rcode, Type } from "../../../dns/constants.ts";
import { answerCacheStats } from "../../../metrics/server-stats.ts";

const objects = [
  ...laneObjects,
  service("default", "web", {
    clusterIP: "10.96.0.30",
    externalIPs: ["192.0.2.30"],
    ports: [{ name: "http", port: 80 }],
  }),
  pod("default", "app", "10.244.0.9"),
  pod("default", "app6", "fd00::9"),
];

/** What `kubernetes` falls through to (reverse names) and what an ExternalName's target resolves in. */
const zoneFiles = {
  "db.reverse": `$ORIGIN 244.10.in-addr.arpa.
@ 60 IN SOA ns.example.org. admin.example.org. 1 3600 600 86400 60
@ 60 IN NS ns.example.org.
9.9 60 IN PTR outside.example.org.
`,
  "db.example.org": `$ORIGIN example.org.
@ 60 IN SOA ns admin 1 3600 600 86400 60
@ 60 IN NS ns
ns 60 IN A 192.0.2.1
www 60 IN A 192.0.2.80
`,
};

const block = (kubernetes: string) => `. {
    errors
    k8s_external example.net
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        ${kubernetes}
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    cache 30
    file db.reverse 244.10.in-addr.arpa
    file db.example.org example.org
    loop
}
`;

/** Questions beyond the lane table: pod records, fallthrough, k8s_external's names, wildcards. */
const moreNames = [
  "10-244-0-9.default.pod.cluster.local",
  "fd00--9.default.pod.cluster.local",
  "fd00-0-0-0-0-0-0-9.default.pod.cluster.local",
  "10-244-0-8.default.pod.cluster.local",
  "9.9.244.10.in-addr.arpa",
  "8.9.244.10.in-addr.arpa",
  "9.0.244.10.in-addr.arpa",
  "*.default.svc.cluster.local",
  "*.svc.cluster.local",
  "_*._tcp.nginx.default.svc.cluster.local",
  "web.default.example.net",
  "_http._tcp.web.default.example.net",
  "nothere.default.example.net",
  "example.net",
  "30.2.0.192.in-addr.arpa",
  "www.example.org",
];

interface Asked {
  name: string;
  type: number;
  qclass?: number;
  edns?: boolean;
  explain?: boolean;
}

function packet(q: Asked): Buffer {
  const m = newQuery(`${q.name}.`, q.type, q.qclass ?? Class.IN, 4242);
  if (q.edns || q.explain) {
    m.edns = {
      udpSize: 1232,
      version: 0,
      do: false,
      options: q.explain ? [{ code: EXPLAIN_OPTION, data: new Uint8Array() }] : [],
    };
  }
  return encode(m);
}

/** Asks `q` through the lane and through the chain alone, and says whether the lane answered it. */
async function bothWays(inst: Instance, q: Asked): Promise<{ lane: Buffer; chain: Buffer; laned: boolean }> {
  const p = inst.pipelines[0];
  const b = p.mux.match(".")!.value;
  const steps = b.lane;
  const ask = async () => {
    p.answers.invalidate();
    const out = await p.handle(packet(q), peer);
    assert.ok(out, `${q.name} ${q.type}: a reply`);
    return out;
  };
  const before = answerCacheStats.lane;
  const lane = await ask();
  const laned = answerCacheStats.lane > before;
  b.lane = undefined;
  try {
    return { lane, chain: await ask(), laned };
  } finally {
    b.lane = steps;
  }
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-decision-"));
  for (const [name, text] of Object.entries(zoneFiles)) writeFileSync(join(dir, name), text);
  return dir;
}

const rcodeOf = (b: Buffer) => b[3] & 0x0f;

test("the lane and the chain give the same octets for every question of a synced cluster", async (t) => {
  const dir = tempDir();
  writeFileSync(join(dir, "objects.json"), JSON.stringify({ kind: "List", items: objects }));
  const inst = await readyInstance(block("objects objects.json\n        pods verified"), dir);
  t.after(async () => {
    await inst.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const questions: Asked[] = [];
  for (const name of [...laneNames, ...moreNames]) {
    for (const type of laneTypes) for (const edns of [false, true]) questions.push({ name, type, edns });
  }
  // The client's spelling (0x20) and options, and classes the lane does not take.
  questions.push(
    { name: "NGINX.default.svc.cluster.local", type: Type.A },
    { name: "_http._tcp.Nginx.Default.svc.Cluster.Local", type: Type.SRV },
    { name: "_http._tcp.nginx.default.svc.cluster.local", type: Type.SRV, explain: true },
    { name: "nginx.default.svc.cluster.local", type: Type.A, explain: true },
    { name: "nginx.default.svc.cluster.local", type: Type.A, qclass: Class.CH },
    { name: "nginx.default.svc.cluster.local", type: Type.A, qclass: Class.ANY },
    { name: "cluster.local", type: Type.AXFR },
  );
  let laned = 0;
  const chained = new Set<string>();
  for (const q of questions) {
    const r = await bothWays(inst, q);
    const what = `${q.name} type ${q.type} class ${q.qclass ?? 1}${q.edns ? " edns" : ""}${q.explain ? " explain" : ""}`;
    assert.equal(r.lane.toString("hex"), r.chain.toString("hex"), what);
    if (r.laned) laned++;
    else chained.add(`${q.name} ${q.type}`);
  }
  // Not a comparison of the chain with itself: the lane answered most, and handed on what it must.
  assert.ok(laned > questions.length / 2, `${laned} of ${questions.length} answered in the lane`);
  for (const must of [
    `ext.default.svc.cluster.local ${Type.A}`, // an ExternalName to chase
    `9.9.244.10.in-addr.arpa ${Type.PTR}`, // NXDOMAIN under fallthrough: file answers
    `fd00-0-0-0-0-0-0-9.default.pod.cluster.local ${Type.AAAA}`, // a pod spelled otherwise
    `_http._tcp.Nginx.Default.svc.Cluster.Local ${Type.SRV}`, // targets in the client's spelling
  ]) {
    assert.ok(chained.has(must), `${must}: the chain's`);
  }
  const fellThrough = await bothWays(inst, { name: "9.9.244.10.in-addr.arpa", type: Type.PTR });
  assert.equal(rcodeOf(fellThrough.lane), Rcode.NOERROR, "file answers what kubernetes falls through");
});

test("before the first sync, the lane holds what the chain holds and falls through where it does", async (t) => {
  const api = await startApiServer();
  api.failNext(1_000_000, 500); // never synced
  const dir = tempDir();
  const kubeconfig = writeKubeconfig(dir, api.url);
  const inst = await startedInstance(block(`kubeconfig ${kubeconfig}\n        startup_timeout 200ms`), dir);
  t.after(async () => {
    await inst.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const name of [...laneNames, ...moreNames]) {
    for (const type of [Type.A, Type.SRV, Type.PTR, Type.SOA]) {
      const r = await bothWays(inst, { name, type, edns: true });
      assert.equal(r.lane.toString("hex"), r.chain.toString("hex"), `${name} type ${type}`);
      assert.equal(r.laned, false, `${name} type ${type}: not answered in the lane before the sync`);
      const rcode = rcodeOf(r.lane);
      if (name.endsWith(".cluster.local") || name === "cluster.local" || name.endsWith("example.net"))
        assert.equal(rcode, Rcode.SERVFAIL, `${name} type ${type}: SERVFAIL after startup_timeout`);
      if (name === "9.9.244.10.in-addr.arpa" && type === Type.PTR)
        assert.equal(rcode, Rcode.NOERROR, "an address under fallthrough goes on to file");
    }
  }
});
