// Idle memory A/B: two or more checkouts of clusterdns each start on the benchmark's cluster behind
// one test API server (kubeadm's Corefile), with 1 and with 2 threads, in alternating rounds, and the
// RSS of each (anonymous and file-backed, from /proc) is read BENCH_IDLE seconds (15) after the start,
// synced and without queries. Each checkout runs from its sources (bin/clusterdns).
//   git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/node_modules
//   node bench/memory-ab.ts /tmp/before .          (BENCH_SERVICES 10000, BENCH_ROUNDS 2, BENCH_IDLE 15)

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchCorefile, serveCluster } from "./cluster-api.ts";
import { generateCluster } from "./cluster-gen.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const checkouts = process.argv.slice(2).map((c) => resolve(c));
if (checkouts.length === 0) throw new Error("usage: node bench/memory-ab.ts CHECKOUT...");
const { objects } = generateCluster({ services: env("BENCH_SERVICES", 10_000), seed: 1 });
const dir = mkdtempSync(join(tmpdir(), "clusterdns-memory-ab-"));
const { api, kubeconfig } = await serveCluster(objects, dir);
const conf = join(dir, "Corefile");
// No query leaves the server, so the upstream's port need not answer.
writeFileSync(conf, benchCorefile("kubeadm", kubeconfig, 9));

const mib = (line: string | undefined) => Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
function rss(pid: number): string {
  const lines = readFileSync(`/proc/${pid}/status`, "utf8").split("\n");
  const get = (key: string) => mib(lines.find((l) => l.startsWith(key)));
  return `${get("VmRSS:")} MiB (anon ${get("RssAnon:")} + file ${get("RssFile:")})`;
}

try {
  for (let round = 1; round <= env("BENCH_ROUNDS", 2); round++) {
    for (const root of checkouts) {
      for (const workers of ["1", "2"]) {
        const args = ["-conf", conf, "-dns.port", "0", "-workers", workers];
        const p = spawn(join(root, "bin/clusterdns"), args, { stdio: "ignore" });
        await new Promise((r) => setTimeout(r, env("BENCH_IDLE", 15) * 1000));
        console.log(`round ${round}, ${root}, ${workers} thread(s): ${rss(p.pid!)}`);
        p.kill("SIGKILL");
        await new Promise((r) => p.once("exit", r));
      }
    }
  }
} finally {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
}
