// Why clusterdns uses, or does not use, each package it was specified with, measured: dns2 (its server
// against clusterdns's on one name; its encoder against src/dns/encode.ts), @kubernetes/client-node's
// informers against the own reflectors on a generated cluster, lru-cache against the answer store,
// and pino's cost per line. Every comparison alternates A and B in rounds within this one run, each
// side in a fresh process, and prints each round and the medians (docs/design.md, "The packages").
//   npm install --prefix /tmp/lru lru-cache      (not a dependency of clusterdns)
//   node bench/packages.ts [--lru /tmp/lru] [--rounds 3] [--seconds 4] [--services 10000]
//                          [--only dns2,encode,k8s,cache,pino]

import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { generateCluster } from "./cluster-gen.ts";
import { serveCluster } from "./cluster-api.ts";
import { dnsperf } from "./dnsperf.ts";
import { cpuSecondsOf, PIN, startPinned, stop } from "./processes.ts";

const { values } = parseArgs({
  options: {
    lru: { type: "string", default: "/tmp/lru" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "4" },
    services: { type: "string", default: "10000" },
    only: { type: "string", default: "dns2,encode,k8s,cache,pino" },
  },
});
const ROUNDS = Number(values.rounds);
const parts = new Set(values.only.split(","));
const run = promisify(execFile);
const here = import.meta.dirname;
const dir = mkdtempSync(join(tmpdir(), "clusterdns-packages-"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (x: number, digits = 1) => x.toFixed(digits);

/** Runs a node script to its end and returns the JSON lines it printed. */
async function json(script: string, args: string[]): Promise<Record<string, unknown>[]> {
  const { stdout } = await run(process.execPath, ["--expose-gc", join(here, script), ...args], {
    timeout: 300_000,
    maxBuffer: 1 << 24,
  });
  return stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

console.log(
  `node ${process.version}, ${ROUNDS} rounds, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} at the start`,
);

// --- dns2's server against clusterdns's ---------------------------------------------------------------

/** Loads a server with one question for `seconds`: QPS and the server's CPU time per query. */
async function load(pid: number, port: number, queryFile: string) {
  const cpu0 = cpuSecondsOf(pid);
  const r = await dnsperf({ port, queryFile, seconds: Number(values.seconds), core: PIN ? 1 : undefined });
  return { qps: r.qps, lost: r.lost, usPerQuery: ((cpuSecondsOf(pid) - cpu0) / r.completed) * 1e6 };
}

if (parts.has("dns2")) {
  const queries = join(dir, "queries");
  writeFileSync(queries, "a.example A\n");
  const corefile = join(dir, "Corefile");
  writeFileSync(corefile, "example {\n    hosts {\n        192.0.2.1 a.example\n    }\n}\n");
  const bin = join(here, "..", "bin", "clusterdns");
  const sides: Record<string, () => Promise<{ pid: number; port: number; stop(): Promise<void> }>> = {
    dns2: async () => {
      const s = await startPinned(
        process.execPath,
        [join(here, "packages-micro.ts"), "dns2-server"],
        /^listening/,
      );
      return { pid: s.proc.pid!, port: Number(s.line.split(" ")[1]), stop: () => stop(s.proc, 0) };
    },
    ...Object.fromEntries(
      ["dgram", "batched"].map((engine) => [
        `clusterdns ${engine}`,
        async () => {
          const args = [
            "--max-semi-space-size=1",
            bin,
            "-conf",
            corefile,
            "-dns.port",
            "0",
            "-udp.engine",
            engine,
          ];
          const s = await startPinned(process.execPath, args, /"msg":"started"/);
          const port = (JSON.parse(s.line) as { ports: number[] }).ports[0];
          return { pid: s.proc.pid!, port, stop: () => stop(s.proc, 0) };
        },
      ]),
    ),
  };
  const got = new Map<string, { qps: number; usPerQuery: number }[]>();
  for (let r = 1; r <= ROUNDS; r++) {
    for (const [name, start] of Object.entries(sides)) {
      const s = await start();
      try {
        const m = await load(s.pid, s.port, queries);
        console.log(
          `dns2 server, round ${r}: ${name}: ${fmt(m.qps, 0)} QPS, ${fmt(m.usPerQuery)} us CPU/query`,
        );
        got.set(name, [...(got.get(name) ?? []), m]);
      } finally {
        await s.stop();
      }
    }
  }
  console.log("\n| server (one name, UDP, dnsperf) | QPS | server CPU us/query |\n|---|---|---|");
  for (const [name, ms] of got) {
    console.log(
      `| ${name} | ${fmt(median(ms.map((m) => m.qps)), 0)} | ${fmt(median(ms.map((m) => m.usPerQuery)))} |`,
    );
  }
  console.log();
}

// --- dns2's encoder against src/dns/encode.ts -----------------------------------------------------------

if (parts.has("encode")) {
  const rows = await json("packages-micro.ts", ["encode", "--rounds", String(ROUNDS)]);
  for (const r of rows)
    console.log(
      `encode, round ${r.round}: dns2 ${fmt(r.dns2Us as number)} us, clusterdns ${fmt(r.clusterdnsUs as number)} us`,
    );
  const col = (k: string) => median(rows.map((r) => r[k] as number));
  console.log(`\n| 120 A records (1,949 octets) | us per message |\n|---|---|`);
  console.log(
    `| dns2 Packet.toBuffer | ${fmt(col("dns2Us"))} |\n| src/dns/encode.ts encode | ${fmt(col("clusterdnsUs"))} |\n`,
  );
}

// --- @kubernetes/client-node's informers against the reflectors ---------------------------------------

if (parts.has("k8s")) {
  const cluster = generateCluster({ services: Number(values.services) });
  const { api, kubeconfig } = await serveCluster(cluster.objects, dir);
  try {
    const got = new Map<string, Record<string, unknown>[]>();
    for (let r = 1; r <= ROUNDS; r++) {
      for (const side of ["informer", "reflector"]) {
        const [row] = await json("packages-k8s.ts", [side, kubeconfig]);
        const m = row as { objects: number; cpuS: number; wallS: number; loaded: Mem; synced: Mem };
        console.log(
          `list/watch, round ${r}: ${side}: ${m.objects} objects, ${fmt(m.cpuS, 2)} CPU s, ${fmt(m.wallS, 2)} s, ` +
            `RSS ${fmt(m.loaded.rssMiB)} -> ${fmt(m.synced.rssMiB)} MiB, heap ${fmt(m.loaded.heapMiB)} -> ${fmt(m.synced.heapMiB)} MiB`,
        );
        got.set(side, [...(got.get(side) ?? []), row]);
      }
    }
    console.log(
      `\n| ${cluster.counts.services} Services, ${cluster.counts.namespaces} namespaces, their EndpointSlices | CPU s to sync | wall s | RSS loaded -> synced MiB | heap loaded -> synced MiB |`,
    );
    console.log("|---|---|---|---|---|");
    const names: Record<string, string> = {
      informer: "@kubernetes/client-node informers",
      reflector: "reflector.ts + http-client.ts",
    };
    for (const [side, rows] of got) {
      const ms = rows as unknown as { cpuS: number; wallS: number; loaded: Mem; synced: Mem }[];
      const m = (f: (x: (typeof ms)[number]) => number) => fmt(median(ms.map(f)));
      console.log(
        `| ${names[side]} | ${fmt(median(ms.map((x) => x.cpuS)), 2)} | ${fmt(median(ms.map((x) => x.wallS)), 2)} | ` +
          `${m((x) => x.loaded.rssMiB)} -> ${m((x) => x.synced.rssMiB)} | ${m((x) => x.loaded.heapMiB)} -> ${m((x) => x.synced.heapMiB)} |`,
      );
    }
    console.log();
  } finally {
    await api.close();
  }
}
interface Mem {
  rssMiB: number;
  heapMiB: number;
}

// --- lru-cache against the answer store -----------------------------------------------------------------

if (parts.has("cache")) {
  const got = new Map<string, Record<string, number>[]>();
  for (let r = 1; r <= ROUNDS; r++) {
    for (const side of ["lru-cache", "store"]) {
      const [row] = (await json("packages-micro.ts", ["cache", values.lru, side])) as Record<
        string,
        number
      >[];
      console.log(
        `cache, round ${r}: ${side}: ${fmt(row.bytesPerEntry, 0)} B/entry (heap ${fmt(row.heapPerEntry, 0)}, RSS ${fmt(row.rssPerEntry, 0)}), ` +
          `${fmt(row.lookupsPerS, 0)} lookups/s, full GC ${fmt(row.gcMs)} ms (empty ${fmt(row.emptyGcMs)})`,
      );
      got.set(side, [...(got.get(side) ?? []), row]);
    }
  }
  console.log(
    "\n| 100k answers | bytes/entry | of it JS heap | RSS/entry | lookups/s | full GC ms (empty heap) |",
  );
  console.log("|---|---|---|---|---|---|");
  for (const [side, rows] of got) {
    const m = (k: string, d = 0) => fmt(median(rows.map((x) => x[k])), d);
    console.log(
      `| ${side} | ${m("bytesPerEntry")} | ${m("heapPerEntry")} | ${m("rssPerEntry")} | ${m("lookupsPerS")} | ${m("gcMs", 1)} (${m("emptyGcMs", 1)}) |`,
    );
  }
  console.log();
}

// --- pino -------------------------------------------------------------------------------------------------

if (parts.has("pino")) {
  const rows = await json("packages-micro.ts", ["pino", "--rounds", String(ROUNDS)]);
  for (const r of rows) {
    console.log(
      `pino, round ${r.round}: ${fmt(r.pinoNs as number, 0)} ns/line, JSON.stringify + write ${fmt(r.stringifyWriteNs as number, 0)} ns, debug off ${fmt(r.debugOffNs as number)} ns`,
    );
  }
  const col = (k: string) => fmt(median(rows.map((r) => r[k] as number)), 0);
  console.log("\n| a log line to /dev/null | ns |\n|---|---|");
  console.log(`| pino (src/log.ts's settings, a child logger) | ${col("pinoNs")} |`);
  console.log(`| JSON.stringify + writeSync | ${col("stringifyWriteNs")} |`);
  console.log(`| pino, a level that is off | ${col("debugOffNs")} |\n`);
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} at the end`,
);
rmSync(dir, { recursive: true, force: true });
