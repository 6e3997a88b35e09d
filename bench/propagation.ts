// Propagation: the time from a write to the API to the first answer that shows it. A generated
// cluster (BENCH_SERVICES, default 10k) behind the test API server, one clusterdns; then
// BENCH_CHANGES (default 100) services get a new ClusterIP one after another, and each is asked over
// UDP every millisecond (bounded) until the new address comes back.
//   npm run bench:propagation

import dgram from "node:dgram";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateCluster } from "./cluster-gen.ts";
import { benchCorefile, serveCluster } from "./cluster-api.ts";
import { NODE_FLAGS, memoryOf, startPinned, stop } from "./processes.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { newQuery } from "../src/dns/message.ts";
import { Type } from "../src/dns/constants.ts";
import type { KService } from "../src/plugins/kubernetes/source.ts";

const ROOT = resolve(import.meta.dirname, "..");
const services = Number(process.env.BENCH_SERVICES ?? 10_000);
const changes = Number(process.env.BENCH_CHANGES ?? 100);
const dir = mkdtempSync(join(tmpdir(), "clusterdns-prop-"));

async function main(): Promise<void> {
  const cluster = generateCluster({ services });
  const { api, kubeconfig } = await serveCluster(cluster.objects, dir);
  writeFileSync(join(dir, "Corefile"), benchCorefile(kubeconfig));
  const t0 = performance.now();
  const cd = await startPinned(
    process.execPath,
    [...NODE_FLAGS, join(ROOT, "bin", "clusterdns"), "-conf", join(dir, "Corefile"), "-dns.port", "0"],
    /"msg":"started"/,
    { CLUSTERDNS_LOG_LEVEL: "info" },
  );
  const port = Number(/"ports":\[(\d+)/.exec(cd.lines.find((l) => l.includes('"started"'))!)![1]);
  for (let i = 0; i < 3000 && !cd.lines.some((l) => l.includes('"msg":"synced"')); i++) await sleep(10);
  const readyMs = performance.now() - t0;

  const sock = dgram.createSocket("udp4");
  await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
  let waiting: ((addr: string) => void) | undefined;
  sock.on("message", (buf) => {
    const rr = decode(buf).answer[0];
    if (rr && "address" in rr.data) waiting?.(rr.data.address);
  });
  const ask = (name: string) =>
    new Promise<string>((res) => {
      const timer = setTimeout(() => res(""), 50);
      waiting = (addr) => {
        clearTimeout(timer);
        res(addr);
      };
      sock.send(encode(newQuery(name, Type.A)), port, "127.0.0.1");
    });

  const targets = cluster.objects.filter(
    (o): o is KService => (o as KService).kind === "Service" && (o as KService).spec?.type === "ClusterIP",
  );
  const times: number[] = [];
  for (let i = 0; i < changes; i++) {
    const svc = targets[(i * 7919) % targets.length];
    const name = `${svc.metadata!.name}.${svc.metadata!.namespace}.svc.cluster.local.`;
    const ip = `10.${100 + (i >> 8)}.${i & 255}.${7}`;
    svc.spec!.clusterIP = ip;
    svc.spec!.clusterIPs = [ip];
    const start = performance.now();
    api.update("services", svc);
    let seen = false;
    while (!seen && performance.now() - start < 5000) {
      seen = (await ask(name)) === ip;
      if (!seen) await sleep(1);
    }
    times.push(seen ? performance.now() - start : Infinity);
    await sleep(10);
  }
  const mem = memoryOf(cd.proc.pid);
  sock.close();
  await stop(cd.proc);
  await api.close();
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
  process.stdout.write(
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${services} services, ${changes} changes: ` +
      `API write -> new answer p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${times.at(-1)!.toFixed(1)} ms; ` +
      `start to synced ${readyMs.toFixed(0)} ms; RSS ${mem.rss.toFixed(0)} MB (peak ${mem.peak.toFixed(0)})\n`,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
