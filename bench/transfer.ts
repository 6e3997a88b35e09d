// The zone transfer at scale: clusterdns serving a generated cluster through the test API server, as
// in a cluster, with `transfer { to * }`, sends its whole cluster zone over TCP to a client that
// counts what arrives.
// It measures how long the AXFR takes, how many records, messages and octets it sends, how much the
// process's RSS grows above its synced level (the transfer streams: it must not hold the zone), and
// how long UDP queries asked every 10 ms during the transfer wait for their answers.
//   npm run build && node bench/transfer.ts [--services 100000] [--rounds 3]

import dgram from "node:dgram";
import net from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { generateCluster } from "./cluster-gen.ts";
import { serveCluster } from "./cluster-api.ts";
import { startClusterdns, untilSynced, sleep, quantile } from "./clusterdns-run.ts";
import { memoryOf, pidOf, resetPeak, stop } from "./processes.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import { newQuery } from "../src/dns/message.ts";
import { Type } from "../src/dns/constants.ts";
import { FrameReader, tcpFrame } from "../src/dns/tcp-frames.ts";

const { values } = parseArgs({
  options: { services: { type: "string", default: "100000" }, rounds: { type: "string", default: "3" } },
});

interface Transfer {
  ms: number;
  records: number;
  messages: number;
  bytes: number;
}

/** One AXFR of cluster.local, read to its closing SOA. */
function axfr(port: number): Promise<Transfer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const sock = net.connect(port, "127.0.0.1");
    const reader = new FrameReader();
    const got: Transfer = { ms: 0, records: 0, messages: 0, bytes: 0 };
    let soas = 0;
    sock.on("data", (chunk: Buffer) =>
      reader.push(chunk, (frame) => {
        const m = decode(frame);
        got.messages++;
        got.bytes += frame.length;
        got.records += m.answer.length;
        soas += m.answer.filter((rr) => rr.type === Type.SOA).length;
        if (m.rcode !== 0 || soas >= 2) {
          got.ms = performance.now() - t0;
          sock.destroy();
          if (m.rcode !== 0) reject(new Error(`AXFR failed: rcode ${m.rcode}`));
          else resolve(got);
          return false;
        }
      }),
    );
    sock.on("error", reject);
    sock.write(tcpFrame(encode(newQuery("cluster.local.", Type.AXFR))));
  });
}

/** Asks a cluster name over UDP every 10 ms until stopped; the answer times, ms. */
function probe(port: number, name: string): { stop(): Promise<number[]> } {
  const sock = dgram.createSocket("udp4");
  const times: number[] = [];
  const sent = new Map<number, number>();
  let id = 0;
  sock.on("message", (m) => {
    const at = sent.get(m.readUInt16BE(0));
    if (at !== undefined) times.push(performance.now() - at);
  });
  const timer = setInterval(() => {
    id = (id + 1) & 0xffff;
    const q = newQuery(name, Type.A, 1, id);
    sent.set(id, performance.now());
    sock.send(encode(q), port, "127.0.0.1");
  }, 10);
  return {
    async stop() {
      clearInterval(timer);
      await sleep(200);
      sock.close();
      return times;
    },
  };
}

async function main(): Promise<void> {
  const services = Number(values.services);
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-transfer-"));
  const { api, kubeconfig } = await serveCluster(generateCluster({ services }).objects, dir);
  const corefile = join(dir, "Corefile");
  writeFileSync(
    corefile,
    `cluster.local {\n    transfer {\n        to *\n    }\n    kubernetes {\n        kubeconfig ${kubeconfig}\n        ttl 30\n    }\n}\n`,
  );
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean);
  const { cd, port } = await startClusterdns(corefile, { nodeFlags });
  await untilSynced(cd);
  await sleep(2000);
  const pid = pidOf(cd)!;
  const name = `svc-0.team-0.svc.cluster.local.`;
  process.stderr.write(`${services} services synced, RSS ${memoryOf(pid).rss.toFixed(0)} MB\n`);
  const rows: string[] = [];
  for (let round = 0; round < Number(values.rounds); round++) {
    const before = memoryOf(pid).rss;
    resetPeak(pid);
    const p = probe(port, name);
    const t = await axfr(port);
    const times = (await p.stop()).sort((a, b) => a - b);
    const after = memoryOf(pid);
    rows.push(
      `| ${services} | ${round + 1} | ${(t.ms / 1000).toFixed(2)} | ${t.records} | ${t.messages} | ${(t.bytes / 1e6).toFixed(1)} | ${before.toFixed(0)} | ${after.peak.toFixed(0)} | ${(after.peak - before).toFixed(0)} | ${after.rss.toFixed(0)} | ${quantile(times, 0.5)} / ${quantile(times, 0.99)} / ${Math.max(...times).toFixed(1)} |`,
    );
    await sleep(3000);
  }
  await stop(cd.proc);
  await api.close();
  process.stdout.write(
    [
      `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, node bench/transfer.ts --services ${services}`,
      "",
      "| services | round | AXFR s | records | messages | MB sent | RSS before MB | peak RSS MB | growth MB | RSS after MB | UDP query p50 / p99 / max ms during it |",
      "|---|---|---|---|---|---|---|---|---|---|---|",
      ...rows,
      "",
    ].join("\n"),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
