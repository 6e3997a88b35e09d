// The insights core on its own: the top-K sketch under a flood, walk detection, owner resolution,
// and what the finish hook allocates on the replay path (V8's heap growth, not a timing).

import { test } from "node:test";
import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import { pino } from "pino";
import { Pipeline } from "../../server/pipeline.ts";
import type { Block } from "../../server/block.ts";
import type { Handler } from "../../chain/handler.ts";
import { encode } from "../../dns/encode.ts";
import { newQuery, replyTo } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { nameToWire } from "../../dns/name.ts";
import { LaneResult } from "../../answers/lane-step.ts";
import type { QueryDone } from "../../metrics/query-done.ts";
import { Insights } from "./insights.ts";
import { NameTop } from "./names.ts";
import { ownerOf } from "./workloads.ts";
import { report } from "./report.ts";
import { rng } from "../../../test/helpers/rng.ts";
import { bytesPerCall } from "../../../test/helpers/bytes-per-call.ts";

const ZONE = nameToWire("cluster.local.") as Uint8Array;

function insights(): Insights {
  return new Insights({ zone: ZONE, workloads: 100, top: 10, autopath: false });
}

/** A pod `name` in `ns` at `ip`, owned by Deployment `deploy`. */
function addPod(ins: Insights, o: { ns: string; name: string; ip: string; deploy: string }): void {
  ins.workloads.apply("pods", "ADDED", {
    metadata: {
      name: o.name,
      namespace: o.ns,
      labels: { "pod-template-hash": "5f6d7" },
      ownerReferences: [{ kind: "ReplicaSet", name: `${o.deploy}-5f6d7`, controller: true }],
    },
    status: { podIP: o.ip, podIPs: [{ ip: o.ip }], hostIP: "192.168.0.1" },
  } as never);
}

/** A QueryDone the hook reads: address, name, rcode. */
function done(address: string, name: string, rcode: number): QueryDone {
  const q = {
    remoteAddress: address,
    nameWire: nameToWire(name) as Uint8Array,
    rcode,
    cached: false,
    plugin: "",
  };
  return q as unknown as QueryDone;
}

/** Exposes V8's gc() without a command-line flag. */
function gc(): void {
  v8.setFlagsFromString("--expose-gc");
  (vm.runInNewContext("gc") as () => void)();
}

test("space-saving keeps every name above 1/capacity of the traffic through a flood of random names", () => {
  const top = new NameTop(64);
  const wire = (s: string) => nameToWire(s) as Uint8Array;
  const heavy = ["api.github.com.", "db.data.svc.cluster.local.", "s3.amazonaws.com."].map(wire);
  const r = rng(7);
  for (let i = 0; i < 200_000; i++) {
    // 1 query in 40 for each heavy name (above 1/64, the sketch's guarantee); the rest random names,
    // each asked about once.
    const h = i % 40;
    const w = h < heavy.length ? heavy[h] : wire(`x${Math.floor(r() * 1e9).toString(36)}.example.`);
    top.count(w, 0, w.length - 1);
  }
  const t = top.top(5);
  assert.deepEqual(
    t
      .slice(0, 3)
      .map((e) => e.key.name)
      .sort(),
    ["api.github.com", "db.data.svc.cluster.local", "s3.amazonaws.com"],
  );
  for (const e of t.slice(0, 3)) {
    // Never more than the true 5,000; less by at most the sketch's bound (total / capacity).
    assert.ok(e.count - e.error <= 5000 && e.count - e.error >= 5000 - 200_000 / 64, JSON.stringify(e));
  }
  // No flood name shows a certain count worth listing next to them.
  for (const e of top.top(64).slice(3)) assert.ok(e.count - e.error <= 2, JSON.stringify(e));
});

test("a flood of random names from one client grows no memory and does not push workloads out", () => {
  const ins = insights();
  addPod(ins, { ns: "shop", name: "checkout-5f6d7-a", ip: "10.0.0.5", deploy: "checkout" });
  addPod(ins, { ns: "shop", name: "cart-5f6d7-b", ip: "10.0.0.6", deploy: "cart" });
  const real = [
    done("10.0.0.5", "api.github.com.", Rcode.NOERROR),
    done("10.0.0.6", "redis.shop.svc.cluster.local.", 0),
  ];
  const r = rng(11);
  const flood = Array.from({ length: 2000 }, () =>
    done(
      `10.9.${Math.floor(r() * 256)}.${Math.floor(r() * 256)}`,
      `${Math.floor(r() * 1e12).toString(36)}.attack.example.`,
      Rcode.NXDOMAIN,
    ),
  );
  const bytes = ins.bytes;
  const round = (n: number) => {
    for (let i = 0; i < n; i++) {
      // 1 real query in 20; the flood's names and addresses change every query.
      if (i % 20 === 0) ins.record(real[(i / 20) & 1]);
      else {
        const q = flood[i % flood.length];
        // A new name each time: rewrite the first label's octets in place.
        const w = q.nameWire;
        for (let k = 1; k <= w[0]; k++) w[k] = 0x61 + Math.floor(r() * 26);
        ins.record(q);
      }
    }
  };
  round(50_000);
  gc();
  const heapBefore = v8.getHeapStatistics().used_heap_size;
  round(500_000);
  gc();
  const grown = v8.getHeapStatistics().used_heap_size - heapBefore;
  assert.equal(ins.bytes, bytes, "the fixed structures did not grow");
  assert.ok(grown < 512 * 1024, `heap grew ${grown} bytes over 500k flood queries`);
  const rep = report(ins, "1m", 10);
  const names = rep.topNames.map((n) => n.name);
  assert.deepEqual(names.slice(0, 2).sort(), ["api.github.com", "redis.shop.svc.cluster.local"]);
  const workloads = rep.workloads.map((w) => w.workload);
  assert.ok(workloads.includes("shop/deployment/checkout") && workloads.includes("shop/deployment/cart"));
  assert.equal(rep.workloads.find((w) => w.workload === "shop/deployment/checkout")?.queries, 13_750);
  // The flood's own row is (unknown): one row, whatever its addresses.
  assert.equal(rep.workloads.filter((w) => w.kind === "").length, 1);
  // Top clients: the two real pods stay (each sends 1 in 40); flood addresses show no certain count.
  const clients = rep.topClients.map((c) => c.address);
  assert.deepEqual(clients.slice(0, 2).sort(), ["10.0.0.5", "10.0.0.6"]);
});

test("a search-list walk is counted once it ends, with the name wanted; unrelated NXDOMAINs are not", () => {
  const ins = insights();
  addPod(ins, { ns: "shop", name: "checkout-5f6d7-a", ip: "10.0.0.5", deploy: "checkout" });
  const from = "10.0.0.5";
  for (const s of ["shop.svc.cluster.local.", "svc.cluster.local.", "cluster.local.", "ec2.internal."]) {
    ins.record(done(from, `s3.amazonaws.com.${s}`, Rcode.NXDOMAIN));
  }
  // Another name's NXDOMAIN (a deleted service asked by FQDN) starts its own walk, which never ends.
  ins.record(done(from, "s3.amazonaws.com.", Rcode.NOERROR));
  ins.record(done(from, "gone.shop.svc.cluster.local.", Rcode.NXDOMAIN));
  ins.record(done(from, "other.example.", Rcode.NOERROR));
  const rep = report(ins, "1m", 10);
  assert.deepEqual(rep.wastedNames, [
    { name: "s3.amazonaws.com", workload: "shop/deployment/checkout", nxdomain: 4 },
  ]);
  const w = rep.workloads[0];
  assert.deepEqual([w.wasted, w.walks, w.saves.ndots2, w.saves.autopath], [4, 1, 4, 4]);
});

test("owners: Deployment by pod-template-hash, CronJob by its Jobs' names, others as they are", () => {
  const pod = (kind: string, name: string, hash?: string) =>
    ({
      metadata: {
        name: "p",
        labels: hash === undefined ? {} : { "pod-template-hash": hash },
        ownerReferences: [{ kind, name, controller: true }],
      },
    }) as never;
  assert.deepEqual(ownerOf(pod("ReplicaSet", "web-6d8f9c7b5", "6d8f9c7b5")), {
    kind: "Deployment",
    name: "web",
  });
  assert.deepEqual(ownerOf(pod("ReplicaSet", "hand-made")), { kind: "ReplicaSet", name: "hand-made" });
  assert.deepEqual(ownerOf(pod("Job", "backup-29012345")), { kind: "CronJob", name: "backup" });
  assert.deepEqual(ownerOf(pod("Job", "migrate")), { kind: "Job", name: "migrate" });
  assert.deepEqual(ownerOf(pod("DaemonSet", "fluentd")), { kind: "DaemonSet", name: "fluentd" });
  assert.deepEqual(ownerOf({ metadata: { name: "bare" } } as never), { kind: "Pod", name: "bare" });
});

test("the hook allocates nothing on a replayed answer", () => {
  const ins = insights();
  addPod(ins, { ns: "shop", name: "checkout-5f6d7-a", ip: "10.1.2.3", deploy: "checkout" });
  const handler: Handler = {
    name: "answer",
    lane: {
      kind: "answer",
      answer(_q, out) {
        out.msg.rcode = Rcode.NXDOMAIN;
        out.stable = true;
        out.plugin = "answer";
        return LaneResult.answered;
      },
    },
    serve(req) {
      req.cache.stable = true;
      return Promise.resolve(replyTo(req.msg, Rcode.NXDOMAIN));
    },
  };
  const block: Block = {
    keys: [],
    zones: ["."],
    chain: handler,
    lane: [handler.lane],
    hooks: [ins.record],
    bind: [],
    directives: ["answer"],
    shared: new Map(),
  };
  const p = new Pipeline("dns://:53", pino({ level: "silent" }));
  p.mux.add(".", block);
  const peer = {
    proto: "udp" as const,
    remoteAddress: "10.1.2.3",
    remotePort: 5353,
    localAddress: "",
    localPort: 53,
  };
  // A walk's step: NXDOMAIN for a name under <ns>.svc.<zone>, so the walk table is used too.
  const query = encode(newQuery("api.github.com.shop.svc.cluster.local.", Type.A, 1, 7));
  const out = Buffer.alloc(2048);
  assert.equal(typeof p.handleInto(query, query.length, peer, out, 0), "number", "answered in the lane");
  const best = bytesPerCall(() => void p.handleInto(query, query.length, peer, out, 0), 200_000);
  assert.ok(best < 1, `${best.toFixed(2)} bytes per replayed answer with insights`);
  assert.ok(report(ins, "1m", 5).workloads[0].queries > 600_000);
});

test("top names, NXDOMAIN names and clients are kept per window: 1 minute, 10 minutes, 1 hour", () => {
  const ins = insights();
  let now = ins.startedAt;
  /** Moves the clock on by `s` seconds, one 10 s step at a time, as the timer does. */
  const wait = (s: number) => {
    for (let t = 0; t < s; t += 10) ins.tick((now += 10_000));
  };
  const ask = (from: string, name: string, times: number, rcode: number = Rcode.NOERROR) => {
    for (let i = 0; i < times; i++) ins.record(done(from, name, rcode));
  };
  ask("10.0.0.1", "early.example.", 30);
  ask("10.0.0.1", "gone.example.", 12, Rcode.NXDOMAIN);
  wait(120);
  ask("10.0.0.2", "later.example.", 20);
  wait(10);
  ask("10.0.0.3", "now.example.", 5);
  const view = (w: "1m" | "10m" | "1h") => {
    const r = report(ins, w, 10);
    return {
      names: r.topNames.map((e) => `${e.name} ${e.count - e.error}`),
      nx: r.topNxdomain.map((e) => `${e.name} ${e.count - e.error}`),
      clients: r.topClients.map((e) => `${e.address} ${e.count - e.error}`),
    };
  };
  // The last minute: what came after the first two.
  assert.deepEqual(view("1m"), {
    names: ["later.example 20", "now.example 5"],
    nx: [],
    clients: ["10.0.0.2 20", "10.0.0.3 5"],
  });
  const all = {
    names: ["early.example 30", "later.example 20", "gone.example 12", "now.example 5"],
    nx: ["gone.example 12"],
    clients: ["10.0.0.1 42", "10.0.0.2 20", "10.0.0.3 5"],
  };
  assert.deepEqual(view("10m"), all);
  assert.deepEqual(view("1h"), all);
  // 11 minutes on, the first two minutes left the 10-minute window; the hour holds everything.
  wait(660);
  assert.deepEqual(view("10m").names, []);
  assert.deepEqual(view("1h"), all);
  // Past the hour (and its last 10-minute step), nothing is left.
  wait(3600);
  assert.deepEqual(view("1h"), { names: [], nx: [], clients: [] });
});

test("a list emptied with its doorkeeper kept lets the keys it held in at once, so none is lost", () => {
  const top = new NameTop(16);
  const a = nameToWire("a.example.") as Uint8Array;
  const b = nameToWire("b.example.") as Uint8Array;
  for (let i = 0; i < 3; i++) top.count(a, 0, a.length - 1);
  top.count(b, 0, b.length - 1);
  assert.deepEqual(top.entries().counts, Float64Array.from([3]), "b waits at the door");
  top.clear(true);
  // a was held: counted at once; b's one sighting is still at the door and comes along with the next.
  top.count(a, 0, a.length - 1);
  top.count(b, 0, b.length - 1);
  const e = top.top(4).map((x) => `${x.key.name} ${x.count}`);
  assert.deepEqual(e.sort(), ["a.example 1", "b.example 2"]);
});

test("at a high rate the top lists count a sample: the same heavy hitters, counts near the truth, totals exact", () => {
  const ins = insights();
  addPod(ins, { ns: "shop", name: "checkout-5f6d7-a", ip: "10.0.0.5", deploy: "checkout" });
  // As after a second of 100k queries: 1 in 32 goes into the top lists.
  ins.sampling.adapt(100_000);
  assert.equal(ins.sampling.every, 32);
  const heavy = [
    done("10.0.0.5", "api.github.com.", Rcode.NOERROR),
    done("10.0.0.5", "redis.shop.svc.cluster.local.", Rcode.NOERROR),
  ];
  const r = rng(5);
  const other = Array.from({ length: 5000 }, (_, i) =>
    done(`10.1.${i >> 8}.${i & 255}`, `n${i}.example.`, Rcode.NXDOMAIN),
  );
  const n = 400_000;
  for (let i = 0; i < n; i++) ins.record(i % 10 < 2 ? heavy[i % 10] : other[Math.floor(r() * other.length)]);
  const rep = report(ins, "1m", 10);
  assert.equal(rep.topSampledEvery, 32);
  assert.deepEqual(
    rep.topNames
      .slice(0, 2)
      .map((e) => e.name)
      .sort(),
    ["api.github.com", "redis.shop.svc.cluster.local"],
  );
  // Each heavy name is 1 query in 10: 40,000. A 1-in-32 sample holds about 1,250 of them (a standard
  // deviation near 3%), weighted by 32: within 10%.
  for (const e of rep.topNames.slice(0, 2)) {
    assert.equal(e.error, 0, `${e.name} kept its slot all along`);
    assert.ok(Math.abs(e.count - 40_000) < 4000, `${e.name}: ${e.count}`);
  }
  assert.equal(rep.topClients[0].address, "10.0.0.5");
  // Per-workload counters see every query.
  assert.equal(rep.workloads.find((w) => w.workload === "shop/deployment/checkout")?.queries, 80_000);
  assert.equal(rep.totals.queries, n);
});

test("sampling: every query below the rate, 1 in a power of two above it, taken at random", () => {
  const ins = insights();
  ins.sampling.adapt(4000);
  assert.equal(ins.sampling.every, 1);
  ins.sampling.adapt(10_000);
  assert.equal(ins.sampling.every, 4);
  ins.sampling.adapt(10_000_000);
  assert.equal(ins.sampling.every, 64);
  ins.sampling.adapt(20_000);
  // Taken at random, not every 8th: queries that take turns in 8 are each taken about as often.
  const taken = new Array<number>(8).fill(0);
  for (let i = 0; i < 80_000; i++) if (ins.sampling.take()) taken[i % 8]++;
  for (const t of taken) assert.ok(t > 1000 && t < 1500, `taken ${taken.join(" ")}`);
});
