// A steady UDP load that times every query, as a process of its own so that nothing the soak part
// does in its own process (a test API server serialising 10k Services, its own timers) shows up as
// server latency. Queries go round a list of questions from SOCKETS sockets (several source ports,
// so SO_REUSEPORT spreads them over the processes sharing a port), QPS a second, for at most SECONDS.
// A query without a reply within TIMEOUT_MS is lost.
//
//   node test/soak/udp-probe.ts PORT QPS SECONDS SOCKETS TIMEOUT_MS WARM_SECONDS NAME[/TYPE]...
//
// For its first WARM_SECONDS it sends the same load and measures nothing: a probe that has just
// started answers its own first replies late (its code not compiled yet: 10-35 ms worst against a
// server that only echoes), which made the p99 of a phase of a few seconds.
//
// It prints one JSON line per second ({"second":s,"sent":n,"answered":n,"lost":n,"worstMs":x}) and a
// last one with the whole run ({"done":true,...Summary}), then exits; it stops early, with that line,
// when its stdin closes (udpProbe's stop()).

import dgram from "node:dgram";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { encode } from "../../src/dns/encode.ts";
import { newQuery } from "../../src/dns/message.ts";
import { Type } from "../../src/dns/constants.ts";

export interface ProbeSecond {
  second: number;
  sent: number;
  answered: number;
  lost: number;
  worstMs: number;
}

export interface ProbeSummary {
  sent: number;
  answered: number;
  lost: number;
  /** Replies with an rcode other than NOERROR or NXDOMAIN. */
  failed: number;
  p50Ms: number;
  p99Ms: number;
  worstMs: number;
  /** Answered after more than 100 ms. */
  over100Ms: number;
}

const TYPES: Record<string, number> = { A: Type.A, AAAA: Type.AAAA, SRV: Type.SRV, PTR: Type.PTR };

/** About `count` of a cluster's dnsperf lines ("NAME TYPE"), spread over the list, as the probe takes
 * names ("NAME/TYPE-NUMBER"); types the probe does not ask are left out. */
export function probeNames(queries: readonly string[], count = 400): string[] {
  return queries
    .filter((_, i) => i % Math.max(1, Math.floor(queries.length / count)) === 0)
    .map((q) => q.split(" "))
    .filter(([, type]) => TYPES[type] !== undefined)
    .map(([name, type]) => `${name}/${TYPES[type]}`);
}

/** The p-th percentile (0-100) of sorted values. */
export function percentile(sorted: number[] | Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

/** What the probe's child process is asked to do (its command line, in this order). */
interface ProbeRun {
  port: number;
  qps: number;
  seconds: number;
  sockets: number;
  timeoutMs: number;
  warmSeconds: number;
  names: string[];
}

function run({ port, qps, seconds, sockets, timeoutMs, warmSeconds, names }: ProbeRun) {
  const questions = names.map((n) => {
    const [name, type] = n.split("/");
    return (id: number) => encode(newQuery(name, type === undefined ? Type.A : Number(type), 1, id));
  });
  const socks = Array.from({ length: sockets }, () => dgram.createSocket("udp4"));
  /** When each query in flight was sent, by socket * 65536 + id (0: none). */
  const sentAt = new Float64Array(sockets * 65536);
  const latencies: number[] = [];
  const total: ProbeSummary = {
    sent: 0,
    answered: 0,
    lost: 0,
    failed: 0,
    p50Ms: NaN,
    p99Ms: NaN,
    worstMs: 0,
    over100Ms: 0,
  };
  let second = { second: 0, sent: 0, answered: 0, lost: 0, worstMs: 0 };
  const started = performance.now();
  const measureFrom = started + warmSeconds * 1000;
  socks.forEach((sock, si) =>
    sock.on("message", (buf) => {
      if (buf.length < 12) return;
      const slot = si * 65536 + buf.readUInt16BE(0);
      const at = sentAt[slot];
      if (at === 0) return;
      sentAt[slot] = 0;
      if (at < measureFrom) return;
      const ms = performance.now() - at;
      latencies.push(ms);
      total.answered++;
      second.answered++;
      if ((buf[3] & 0x0f) !== 0 && (buf[3] & 0x0f) !== 3) total.failed++;
      if (ms > 100) total.over100Ms++;
      total.worstMs = Math.max(total.worstMs, ms);
      second.worstMs = Math.max(second.worstMs, ms);
    }),
  );
  // Warming and measuring go at one pace from the start; a query sent before measureFrom is not counted.
  const limit = Math.round(qps * (warmSeconds + seconds));
  let queued = 0;
  let next = 0;
  const send = setInterval(() => {
    const due = Math.min(limit, Math.floor(((performance.now() - started) / 1000) * qps));
    for (; queued < due; queued++) {
      const t = performance.now();
      const measured = t >= measureFrom;
      if (measured) total.sent++;
      const si = queued % sockets;
      // Round the sockets' IDs in turn; a slot still waiting is skipped (it is lost or soon answered).
      const id = Math.floor(queued / sockets) & 0xffff;
      const slot = si * 65536 + id;
      if (sentAt[slot] !== 0) continue;
      sentAt[slot] = t;
      if (measured) second.sent++;
      socks[si].send(questions[next++ % questions.length](id), port, "127.0.0.1");
    }
  }, 2);
  const sweep = () => {
    const now = performance.now();
    for (let slot = 0; slot < sentAt.length; slot++) {
      if (sentAt[slot] !== 0 && now - sentAt[slot] > timeoutMs) {
        const warm = sentAt[slot] < measureFrom;
        sentAt[slot] = 0;
        if (warm) continue;
        total.lost++;
        second.lost++;
      }
    }
  };
  const tick = setInterval(() => {
    sweep();
    process.stdout.write(JSON.stringify(second) + "\n");
    second = { second: second.second + 1, sent: 0, answered: 0, lost: 0, worstMs: 0 };
  }, 1000);
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    clearInterval(send);
    // The last queries get their timeout to answer.
    setTimeout(() => {
      clearInterval(tick);
      sweep();
      for (let slot = 0; slot < sentAt.length; slot++) if (sentAt[slot] >= measureFrom) total.lost++;
      const sorted = Float64Array.from(latencies).sort();
      total.p50Ms = percentile(sorted, 50);
      total.p99Ms = percentile(sorted, 99);
      for (const s of socks) s.close();
      // Gone once it has said so: its stdin, which the parent may never close, keeps it alive else.
      process.stdout.write(JSON.stringify({ done: true, ...total }) + "\n", () => process.exit(0));
    }, timeoutMs + 50);
  };
  setTimeout(finish, (warmSeconds + seconds) * 1000).unref();
  process.stdin.on("end", finish).resume();
}

export interface UdpProbeOptions {
  qps: number;
  /** The longest it runs. */
  seconds: number;
  sockets?: number;
  timeoutMs?: number;
  /** Seconds of load before the measure (0 by default). */
  warmSeconds?: number;
  /** "name" (A) or "name/TYPE-NUMBER". */
  names: string[];
  onSecond?: (s: ProbeSecond) => void;
}

/** Starts the probe in a process of its own; stop() ends it early and resolves with the summary. */
export function udpProbe(port: number, o: UdpProbeOptions) {
  const args = [o.qps, o.seconds, o.sockets ?? 16, o.timeoutMs ?? 2000, o.warmSeconds ?? 0].map(String);
  const child = spawn(process.execPath, [import.meta.filename, String(port), ...args, ...o.names], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const done = new Promise<ProbeSummary>((resolve, reject) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      const e = JSON.parse(line) as (ProbeSummary & { done: true }) | ProbeSecond;
      if ("done" in e) resolve(e);
      else o.onSecond?.(e);
    });
    child.on("exit", (code) => reject(new Error(`udp probe exited with ${code} before its summary`)));
  });
  return {
    done,
    stop(): Promise<ProbeSummary> {
      child.stdin.end();
      return done;
    },
  };
}

if (import.meta.main) {
  const [port, qps, seconds, sockets, timeoutMs, warmSeconds, ...names] = process.argv.slice(2);
  run({
    port: Number(port),
    qps: Number(qps),
    seconds: Number(seconds),
    sockets: Number(sockets),
    timeoutMs: Number(timeoutMs),
    warmSeconds: Number(warmSeconds),
    names,
  });
}
