// A watch storm's hold on the event loop, in one process: the store of a generated cluster (with an
// answer store taking its invalidations, as the server's does) fed by an EndpointSlice watch through
// the API client, while a 1 ms interval timer measures how late the loop comes round. The events
// (one endpoint flipping ready) are served from another process, BENCH_BURSTS bursts of 10,000 a
// second written at once. Unlike the watch-storm soak part, no UDP and no second process share the
// measure, so the OS's scheduling of a loaded machine weighs less. BENCH_CHECKOUT=DIR takes the API
// client from another checkout (a before/after in one run; the store is this checkout's).
//   node bench/storm-lag.ts [SERVICES]

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { generateCluster } from "./cluster-gen.ts";
import { Store } from "../src/plugins/kubernetes/store/store.ts";
import { AnswerStore } from "../src/answers/store.ts";
import type { KObject } from "../src/plugins/kubernetes/model/source.ts";
import { listCluster, readinessFlips } from "./slice-events.ts";
import type { HttpClient } from "../src/plugins/kubernetes/api/http-client.ts";

const PER_BURST = 10_000;

/** The other process: serves the file's event lines on one watch, PER_BURST a second. */
function feed(file: string): void {
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
  const server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    let at = 0;
    const burst = () => {
      res.cork();
      for (const l of lines.slice(at, at + PER_BURST)) res.write(l + "\n");
      res.uncork();
      at += PER_BURST;
      if (at < lines.length) setTimeout(burst, 1000);
      else res.end();
    };
    setTimeout(burst, 500);
  });
  server.listen(0, "127.0.0.1", () => {
    const addr = server.address();
    process.stdout.write(`${typeof addr === "object" && addr ? addr.port : 0}\n`);
  });
}

async function main(): Promise<void> {
  const services = Number(process.argv[2] ?? 10_000);
  const bursts = Number(process.env.BENCH_BURSTS ?? 5);
  const checkout = resolve(process.env.BENCH_CHECKOUT ?? join(import.meta.dirname, ".."));
  const { HttpClient: Client } = (await import(
    join(checkout, "src/plugins/kubernetes/api/http-client.ts")
  )) as { HttpClient: typeof HttpClient };
  const cluster = generateCluster({ services, seed: 33 });
  const lines = readinessFlips(cluster.objects, bursts * PER_BURST);
  const file = join(mkdtempSync(join(tmpdir(), "clusterdns-storm-lag-")), "events.jsonl");
  writeFileSync(file, lines.join("\n") + "\n");

  const answers = new AnswerStore({ capacity: 10_000 });
  const store = new Store({
    zones: ["cluster.local.", "in-addr.arpa.", "ip6.arpa."],
    waitFor: ["services", "endpointslices", "namespaces"],
    onChange: (names) => (names === "all" ? answers.invalidate() : answers.invalidateNames(names)),
  });
  listCluster(store, cluster.objects);
  const server = spawn(process.execPath, [import.meta.filename, "--feed", file], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<string>((r) => createInterface({ input: server.stdout }).once("line", r));
  const client = new Client({
    server: `http://127.0.0.1:${port}`,
    source: "bench",
    tls: { insecure: false },
    auth: {},
  });
  const gaps: number[] = [];
  let last = performance.now();
  const tick = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 1);
  let events = 0;
  const t0 = performance.now();
  await new Promise<void>((done) => {
    void client.watch(
      "/apis/discovery.k8s.io/v1/endpointslices",
      {},
      (type, obj) => {
        events++;
        store.apply("endpointslices", type as "MODIFIED", obj as KObject);
      },
      () => done(),
    );
  });
  const took = performance.now() - t0;
  clearInterval(tick);
  client.close();
  server.kill();
  gaps.sort((a, b) => a - b);
  const q = (p: number) => gaps[Math.min(gaps.length - 1, Math.floor(gaps.length * p))].toFixed(1);
  process.stdout.write(
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, client from ${checkout}: ${services} services, ` +
      `${events} events in ${(took / 1000).toFixed(1)} s; 1 ms timer's gaps p50 ${q(0.5)}, p99 ${q(0.99)}, ` +
      `p99.9 ${q(0.999)}, max ${gaps.at(-1)!.toFixed(1)} ms; load average ${loadavg()[0].toFixed(1)}\n`,
  );
}

if (process.argv[2] === "--feed") feed(process.argv[3]);
else await main();
