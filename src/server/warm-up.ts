// The answer path warmed before the first client's query. A fresh process runs its code in V8's
// interpreter with no type feedback until the optimizing compilers have seen enough calls: measured on
// kubeadm's Corefile at 10k services, a fresh server's first 2,000 queries at 10k QPS had a p99 of
// 30 ms (the whole first pass 5.8-8.2 ms, queries after the first 30,000 2.0-2.3 ms). So once per
// thread, when the kubernetes store first can answer and before the DNS sockets open or /ready
// passes, its plugin hands questions from the store here; they run through the pipeline's fast path
// quietly (quietly() below: no hook, counter or upstream sees them, and the answers they filed are
// dropped). A reload runs in a process already warm and does not run it again.

import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { encode } from "../dns/encode.ts";
import { newQuery } from "../dns/message.ts";
import { EDNS_UDP_SIZE } from "../dns/constants.ts";
import type { WarmQuestion } from "../setup/context.ts";
import { MAX_UDP_REPLY, type Peer, type Pipeline } from "./pipeline.ts";
import { answerCacheStats } from "../metrics/server-stats.ts";

/** Times the questions run: each time once through the miss path (the wire lane files the answer),
 * once replayed, then the answers are dropped. */
export const WARM_PASSES = 3;
/** Questions taken at most: enough calls of each step for V8 to optimize it, in tens of ms. */
export const WARM_QUESTIONS = 1500;
/** After the passes, the wait for V8's helper threads (optimizing compiles, collection) to finish,
 * which otherwise share the process's core with the first clients: until a window of SETTLE_MS uses
 * under a quarter of one core, SETTLE_MAX_MS at most. */
const SETTLE_MS = 20;
const SETTLE_MAX_MS = 300;

let warming: Promise<void> | undefined;

/** Warms `pipeline` with `questions` unless this thread has warmed already (or is warming); resolves
 * once the work it caused is done. */
export function warmUpOnce(
  pipeline: Pipeline,
  questions: () => Iterable<WarmQuestion>,
  log: Logger,
): Promise<void> {
  warming ??= warmUp(pipeline, questions, log);
  return warming;
}

async function warmUp(pipeline: Pipeline, questions: () => Iterable<WarmQuestion>, log: Logger) {
  const start = performance.now();
  const packets: Buffer[] = [];
  for (const [name, qtype] of questions()) {
    if (packets.length >= WARM_QUESTIONS) break;
    packets.push(packet(name, qtype, packets.length));
  }
  if (packets.length === 0) return;
  let answered = 0;
  for (let i = 0; i < WARM_PASSES; i++) answered += quietly(pipeline, packets, 2);
  const ran = performance.now() - start;
  await quiet();
  log.info(
    {
      questions: packets.length,
      answered,
      ms: Math.round(ran),
      settledMs: Math.round(performance.now() - start - ran),
    },
    "answer path warmed up before serving",
  );
}

/** Runs `packets`, `rounds` times over, through the pipeline's fast path (answer store, wire lane,
 * replay) as queries from loopback, quietly: while Answers.quiet is set no finish hook (metrics, log,
 * dnstap, insights), rate limit, trace or cache counter sees them and no query takes the chain (so
 * nothing is forwarded); the answers they filed are dropped afterwards. How many were answered. */
export function quietly(pipeline: Pipeline, packets: readonly Buffer[], rounds: number): number {
  const answers = pipeline.answers;
  const { hits, misses, lane, refills } = answerCacheStats;
  const out = Buffer.allocUnsafe(MAX_UDP_REPLY);
  let answered = 0;
  answers.quiet = true;
  try {
    for (let r = 0; r < rounds; r++)
      for (const p of packets) {
        const n = pipeline.handleInto(p, p.length, LOOPBACK, out, 0);
        if (typeof n === "number" && n > 0) answered++;
      }
  } finally {
    answers.quiet = false;
    answers.invalidate();
    Object.assign(answerCacheStats, { hits, misses, lane, refills });
  }
  return answered;
}

const LOOPBACK: Peer = {
  proto: "udp",
  remoteAddress: "127.0.0.1",
  remotePort: 0,
  localAddress: "127.0.0.1",
  localPort: 0,
};

/** Resolves once the process (every thread) uses under a quarter of a core over SETTLE_MS. */
async function quiet(): Promise<void> {
  const end = performance.now() + SETTLE_MAX_MS;
  while (performance.now() < end) {
    const cpu = process.cpuUsage();
    const t = performance.now();
    await sleep(SETTLE_MS);
    const used = process.cpuUsage(cpu);
    if ((used.user + used.system) / 1000 < (performance.now() - t) / 4) return;
  }
}

/** The query packet of question `i`: as clients vary them, with and without EDNS, and every fourth in
 * mixed case (0x20, a path of its own). */
function packet(name: string, qtype: number, i: number): Buffer {
  const q = newQuery(i % 4 === 3 ? mixedCase(name) : name, qtype, 1, i & 0xffff);
  if (i % 2 === 1) q.edns = { udpSize: EDNS_UDP_SIZE, version: 0, do: false, options: [] };
  return encode(q);
}

function mixedCase(name: string): string {
  let out = "";
  for (let i = 0; i < name.length; i++) out += i % 2 === 0 ? name[i].toUpperCase() : name[i];
  return out;
}
