// What `insights` costs a query, A/B in one process: two instances of the same Corefile (kubeadm's by
// default), one without and one with `insights`, each driven in turn through its pipeline (no socket)
// on the same mix, round after round, so the machine's load falls on both alike. Prints CPU ns and
// JS heap bytes allocated per query for each side by round, and the medians.
//   node --max-semi-space-size=64 bench/insights-cost.ts     (BENCH_ROUNDS=6, BENCH_MIX=over|unique|hot,
//                                                              BENCH_COREFILE, BENCH_SERVICES, BENCH_CLIENTS)
// The queries come from BENCH_CLIENTS (default 256) client addresses in turn, as a node's pods would.

import { heapGrowth } from "./heap-growth.ts";
import { benchCorefileChoice } from "./clusterdns-run.ts";
import { queryPackets, startInProcess, type InProcess } from "./in-process.ts";
import { mixChoice, mixQueries } from "./mixes.ts";

const services = Number(process.env.BENCH_SERVICES ?? 10_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const clients = Number(process.env.BENCH_CLIENTS ?? 256);
process.env.BENCH_MIX ??= "over";
const mix = mixChoice();
const which = benchCorefileChoice();

async function side(insights: boolean): Promise<InProcess> {
  process.env.BENCH_INSIGHTS = insights ? "1" : "0";
  return startInProcess(services, which);
}
const off = await side(false);
const on = await side(true);

const packets = queryPackets(mixQueries(off.cluster, mix));
const addresses = Array.from({ length: clients }, (_, i) => `10.244.${i >> 8}.${i & 255}`);
const outBuf = Buffer.alloc(128 * 1024);

async function pass(s: InProcess, list: Buffer[]): Promise<void> {
  const { pipeline, peer } = s;
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    peer.remoteAddress = addresses[i % clients];
    const out = pipeline.handleInto(p, p.length, peer, outBuf, 0);
    if (out instanceof Promise) await out;
  }
}

/** CPU ns and heap bytes allocated per query over one pass (heap growth between collections). */
async function measure(s: InProcess, list: Buffer[]): Promise<{ ns: number; bytes: number }> {
  const growth = heapGrowth();
  const cpu = process.cpuUsage();
  await pass(s, list);
  const used = process.cpuUsage(cpu);
  const allocated = growth().bytes;
  return { ns: ((used.user + used.system) * 1000) / list.length, bytes: allocated / list.length };
}

const warm = mix === "hot" ? packets : packets.slice(0, Math.min(20_000, packets.length));
for (const s of [off, on]) {
  await pass(s, warm);
  await pass(s, warm);
}
// Each round is the next part of the mix, for both sides: each pipeline sees the mix once, in order
// (a part asked again would be answered from the cache), and both see the same queries.
const timed = mix === "hot" ? packets : packets.slice(warm.length);
const part = Math.floor(timed.length / rounds);
const results = { off: [] as { ns: number; bytes: number }[], on: [] as { ns: number; bytes: number }[] };
for (let r = 0; r < rounds; r++) {
  const list = mix === "hot" ? timed : timed.slice(r * part, (r + 1) * part);
  // Alternate which side goes first, so neither always follows the other's garbage.
  const order = r % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
  for (const k of order) results[k].push(await measure(k === "off" ? off : on, list));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const line = (k: "off" | "on") => {
  const ns = results[k].map((x) => x.ns);
  const bytes = results[k].map((x) => x.bytes);
  return (
    `insights ${k.padEnd(3)}: CPU ns/query ${ns.map((x) => x.toFixed(0)).join(", ")} (median ${median(ns).toFixed(0)}); ` +
    `heap bytes/query ${bytes.map((x) => x.toFixed(0)).join(", ")} (median ${median(bytes).toFixed(0)})`
  );
};
const paired = results.on.map((x, i) => x.ns / results.off[i].ns - 1);
process.stdout.write(
  `${which}, ${mix} mix, ${services} services, ${mix === "hot" ? timed.length : part} queries a round from ${clients} clients, ${rounds} rounds\n` +
    `${line("off")}\n${line("on")}\n` +
    `on vs off, paired by round: ${paired.map((x) => `${(x * 100).toFixed(1)}%`).join(", ")} ` +
    `(median ${(median(paired) * 100).toFixed(1)}%)\n`,
);
await off.inst.stop();
await on.inst.stop();
process.exit(0);
