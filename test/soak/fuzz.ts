// Soak part "fuzz": a million mutated and random packets (test/helpers/fuzz-packets.ts) over UDP on
// each engine and over TCP, each run against a fresh server (test/soak/target.ts), with a valid query
// interleaved every few packets. Figures per run: packets sent, server alive, valid queries answered
// (target 100%), replies over what the client allows (target 0), RSS after warm-up and at the end
// (target: growth within noise), the largest reply and amplification.
//   node test/soak/fuzz.ts [--reduced]      SOAK_FUZZ_PACKETS sets the packets per run

import { UDP_ENGINES } from "../helpers/engines.ts";
import { runAlone, Report, type SoakPart, type PartOptions } from "./part.ts";
import { startTarget, type Target } from "./target.ts";
import { fuzzUdp, type FuzzResult } from "./fuzz-udp.ts";
import { fuzzTcp } from "./fuzz-tcp.ts";

/** RSS growth from warm-up to the end that counts as noise: V8 may hold a few MB more heap for a while
 * after a burst, and the heap limit (src/runtime/heap.ts) allows 30% over the live heap. */
const RSS_NOISE_MB = 16;

async function withTarget<T>(
  engine: "dgram" | "batched",
  fn: (t: Target) => Promise<T>,
): Promise<{ value: T; alive: boolean; fatal: number; code: number | null }> {
  const t = await startTarget(engine);
  try {
    const value = await fn(t);
    const alive = t.srv.proc.exitCode === null && t.srv.proc.signalCode === null;
    const fatal = t.srv.logs.filter((l) => typeof l.level === "number" && l.level >= 60).length;
    return { value, alive, fatal, code: await t.stop() };
  } catch (err) {
    await t.stop();
    throw err;
  }
}

function figures(
  report: Report,
  run: string,
  f: FuzzResult,
  alive: boolean,
  fatal: number,
  reduced: boolean,
): void {
  const udp = run.startsWith("UDP");
  report.note(`${run}: packets sent`, f.sent);
  report.note(`${run}: packets per second`, Math.round(f.sent / f.seconds));
  report.check(`${run}: server alive at the end`, alive ? "yes" : "no", alive, "yes");
  report.check(`${run}: fatal log lines (uncaught exceptions)`, fatal, fatal === 0, "0");
  const share = f.canaries === 0 ? 0 : (100 * f.canariesAnswered) / f.canaries;
  report.check(
    `${run}: valid queries answered`,
    `${f.canariesAnswered} of ${f.canaries} (${share.toFixed(share === 100 ? 0 : 3)}%)`,
    f.canaries > 0 && f.canariesAnswered === f.canaries,
    "100%",
  );
  for (const line of f.canaryFailures.slice(0, 5)) report.note(`${run}: canary failure`, line);
  if (udp) {
    report.check(`${run}: replies over the client's size`, f.overLimit.length, f.overLimit.length === 0, "0");
    for (const line of f.overLimit.slice(0, 5)) report.note(`${run}: over the limit`, line);
  }
  report.check(`${run}: replies to runts or responses`, f.badReplies.length, f.badReplies.length === 0, "0");
  for (const line of f.badReplies.slice(0, 5)) report.note(`${run}: bad reply`, line);
  report.note(`${run}: replies`, f.replies);
  report.note(`${run}: largest reply`, f.largestReply, "octets");
  if (udp) report.note(`${run}: largest reply / query size`, f.largestRatio.toFixed(1));
  report.note(`${run}: octets out / octets in`, (f.bytesOut / Math.max(1, f.bytesIn)).toFixed(2));
  const growth = f.rssEnd - f.rssWarm;
  const rss = `${f.rssWarm.toFixed(0)} -> ${f.rssEnd.toFixed(0)} MB (peak ${f.rssPeak.toFixed(0)})`;
  // A few thousand packets say nothing about growth: the reduced run reports RSS without a target.
  if (reduced) report.note(`${run}: RSS after warm-up -> at the end`, rss);
  else
    report.check(
      `${run}: RSS after warm-up -> at the end`,
      rss,
      growth <= RSS_NOISE_MB,
      `growth <= ${RSS_NOISE_MB} MB`,
    );
  if (f.kernelDrops > 0) report.note(`${run}: datagrams the kernel dropped (whole machine)`, f.kernelDrops);
}

export const fuzz: SoakPart = {
  name: "fuzz",
  what: "a million mutated and random packets over UDP (both engines) and TCP, valid queries interleaved",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("fuzz");
    const packets = Number(process.env.SOAK_FUZZ_PACKETS ?? (o.reduced ? 3000 : 1_000_000));
    for (const engine of UDP_ENGINES) {
      o.log(`UDP, engine ${engine}: ${packets} packets`);
      const { value, alive, fatal } = await withTarget(engine, (t) =>
        fuzzUdp({ port: t.port, pid: t.srv.proc.pid!, packets, every: 32, seed: 18, log: o.log }),
      );
      figures(report, `UDP ${engine}`, value, alive, fatal, o.reduced);
    }
    o.log(`TCP: ${packets} packets`);
    const { value, alive, fatal } = await withTarget(UDP_ENGINES.at(-1)!, (t) =>
      fuzzTcp({ port: t.port, pid: t.srv.proc.pid!, packets, every: 32, seed: 19, log: o.log }),
    );
    figures(report, "TCP", value, alive, fatal, o.reduced);
    return report;
  },
};

if (import.meta.main) await runAlone(fuzz);
