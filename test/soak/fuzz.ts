// Soak part "fuzz": a million mutated and random packets (test/helpers/fuzz-packets.ts) over UDP on
// each engine and over TCP, each run against a fresh server (test/soak/target.ts), with a valid query
// interleaved every 32 packets; the corpus is sent twice (half the packets each time). Figures per
// run: packets sent, server alive, valid queries answered (target 100%), replies over what the client
// allows (target 0), RSS after each pass (target: the second adds nothing beyond noise), the largest
// reply and the amplification.
//   node test/soak/fuzz.ts [--reduced]      SOAK_FUZZ_PACKETS sets the packets per run

import { UDP_ENGINES } from "../helpers/engines.ts";
import type { UdpEngineName } from "../../src/cli-flags.ts";
import { runAlone, Report, type SoakPart, type PartOptions } from "./part.ts";
import { startTarget, type Target } from "./target.ts";
import { addResults, fuzzUdp, type FuzzOptions, type FuzzResult } from "./fuzz-udp.ts";
import { fuzzTcp } from "./fuzz-tcp.ts";
import { Sampler, type Sample } from "./sampler.ts";
import { Canaries } from "./canaries.ts";
import { rssMb } from "./part.ts";

/** RSS growth over the second pass that counts as noise: the heap limit (src/runtime/heap.ts) lets V8
 * grow the heap 30% over what it holds live before collecting. */
export const RSS_NOISE_MB = 16;

interface Run<T> {
  value: T;
  alive: boolean;
  fatal: number;
  samples: Sample[];
}

interface TwoPasses {
  result: FuzzResult;
  /** RSS after the first pass over the corpus, and after the second. */
  rss: [number, number];
}

/** The corpus sent twice: the first pass fills every bounded structure (the answer cache with the
 * corpus's names, metric series); the second asks the same again, so whatever still grows is a leak. */
async function twoPasses(fuzz: (o: FuzzOptions) => Promise<FuzzResult>, o: FuzzOptions): Promise<TwoPasses> {
  const canaries = new Canaries();
  const half = { ...o, canaries, packets: Math.ceil(o.packets / 2) };
  const settle = () => new Promise((r) => setTimeout(r, 1000));
  const first = await fuzz(half);
  await settle();
  const rss1 = rssMb(o.pid);
  const second = await fuzz(half);
  await settle();
  return { result: addResults(first, second), rss: [rss1, rssMb(o.pid)] };
}

async function withTarget<T>(engine: UdpEngineName, fn: (t: Target) => Promise<T>): Promise<Run<T>> {
  const t = await startTarget(engine);
  const sampler = new Sampler(t.srv.proc.pid!, t.metricsPort);
  try {
    const value = await fn(t);
    const samples = sampler.stop();
    const alive = t.srv.proc.exitCode === null && t.srv.proc.signalCode === null;
    const fatal = t.srv.logs.filter((l) => typeof l.level === "number" && l.level >= 60).length;
    return { value, alive, fatal, samples };
  } finally {
    sampler.stop();
    await t.stop();
  }
}

/** Memory over a run, and (full runs) the check that the second pass left it where the first did. */
function memoryFigures(report: Report, run: string, r: Run<TwoPasses>, target: boolean): void {
  const first = r.samples[0];
  const last = r.samples.at(-1)!;
  const peak = Math.max(...r.samples.map((s) => s.rss));
  report.note(
    `${run}: RSS at the start -> at the end (peak)`,
    `${first.rss.toFixed(0)} -> ${last.rss.toFixed(0)} MB (${peak.toFixed(0)})`,
  );
  report.note(`${run}: answer cache entries at the end`, last.cacheEntries);
  const [after1, after2] = r.value.rss;
  const text = `${after1.toFixed(0)} -> ${after2.toFixed(0)} MB`;
  // A short run says nothing about growth: the reduced one reports memory without a target.
  if (!target) report.note(`${run}: RSS after the first pass -> after the second`, text);
  else
    report.check(
      `${run}: RSS after the first pass -> after the second`,
      text,
      after2 - after1 <= RSS_NOISE_MB,
      `growth <= ${RSS_NOISE_MB} MB`,
    );
}

function figures(report: Report, run: string, r: Run<TwoPasses>, reduced: boolean): void {
  const f = r.value.result;
  const udp = run.startsWith("UDP");
  report.note(`${run}: packets sent`, f.sent);
  report.note(`${run}: packets per second`, Math.round(f.sent / f.seconds));
  report.check(`${run}: server alive at the end`, r.alive ? "yes" : "no", r.alive, "yes");
  report.check(`${run}: fatal log lines (uncaught exceptions)`, r.fatal, r.fatal === 0, "0");
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
    report.check(`${run}: replies without OPT to a query with one`, f.noOpt, f.noOpt === 0, "0");
    report.check(
      `${run}: queries of EDNS version > 0 that parse, answered other than BADVERS`,
      f.noBadvers,
      f.noBadvers === 0,
      "0",
    );
    for (const line of f.ednsMissed.slice(0, 5)) report.note(`${run}: EDNS`, line);
  }
  report.check(`${run}: replies to runts or responses`, f.badReplies.length, f.badReplies.length === 0, "0");
  for (const line of f.badReplies.slice(0, 5)) report.note(`${run}: bad reply`, line);
  report.note(`${run}: replies`, f.replies);
  report.note(`${run}: largest reply`, f.largestReply, "octets");
  if (udp) report.note(`${run}: largest reply / query size`, f.largestRatio.toFixed(1));
  report.note(`${run}: octets out / octets in`, (f.bytesOut / Math.max(1, f.bytesIn)).toFixed(2));
  memoryFigures(report, run, r, !reduced);
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
      const run = await withTarget(engine, (t) =>
        twoPasses(fuzzUdp, { port: t.port, pid: t.srv.proc.pid!, packets, every: 32, seed: 18, log: o.log }),
      );
      figures(report, `UDP ${engine}`, run, o.reduced);
    }
    o.log(`TCP: ${packets} packets`);
    const run = await withTarget(UDP_ENGINES.at(-1)!, (t) =>
      twoPasses(fuzzTcp, { port: t.port, pid: t.srv.proc.pid!, packets, every: 32, seed: 19, log: o.log }),
    );
    figures(report, "TCP", run, o.reduced);
    return report;
  },
};

if (import.meta.main) await runAlone(fuzz);
