// Soak part "tcp-abuse": clients that hold TCP connections without using them, one after another:
// 5,000 idle connections, slowloris (a query one octet a second), a length prefix of 65535 with
// 60,000 octets and then silence, and clients pipelining 10,000 queries that never read a reply.
// Throughout, a steady UDP load and a new TCP connection with one query every half second must be
// answered. Figures per attack: connections opened, the most the server held at once (its open file
// descriptors, target: at most the cap of 1000 over its own), and how long until it held none of them
// (target: within the deadline that applies, src/plugins/timeouts). Over the whole part: UDP and TCP
// queries answered (target 100%), RSS at the start, its peak (target: bounded) and after each of two
// rounds of all four (target: the second round adds nothing beyond noise).
//   node test/soak/tcp-abuse.ts [--reduced]

import net from "node:net";
import { runAlone, Report, openFds, rssMb, type SoakPart, type PartOptions } from "./part.ts";
import { RSS_NOISE_MB } from "./fuzz.ts";
import { startTarget } from "./target.ts";
import { tcpAttack, type AttackMode } from "./tcp-attacker.ts";
import { startLoad } from "../helpers/load.ts";
import { FrameReader, tcpFrame } from "../../src/dns/tcp-frames.ts";
import { encode } from "../../src/dns/encode.ts";
import { newQuery } from "../../src/dns/message.ts";
import { defaultTcpOptions } from "../../src/server/tcp.ts";
import { Type } from "../../src/dns/constants.ts";

/** How often the server's descriptors are counted during an attack. */
const POLL_MS = 100;
/** The deadline check runs every 250 ms (src/server/tcp.ts), and the machine is shared. */
const SLACK_MS = 2000;
/** What 1000 connections may hold at once: a partial message of up to 64 KiB each, plus 16 KiB of
 * replies waiting, plus what the kernel's socket and Node's stream cost: ~100 KiB each. */
const RSS_PEAK_MB = 128;

interface Attack {
  mode: AttackMode;
  count: number;
  what: string;
  /** Longest the server may hold such a connection: the deadline that applies, plus slack. */
  boundMs: number;
}

/** One new TCP connection per call, one query on it; true when the answer came back. */
function tcpQuery(port: number, id: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    const frames = new FrameReader();
    const done = (ok: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 3000);
    s.on("error", () => done(false));
    s.on("data", (d: Buffer) => frames.push(d, (m) => done(m.readUInt16BE(0) === id && (m[3] & 0x0f) === 0)));
    s.write(tcpFrame(encode(newQuery("nginx.default.svc.cluster.local.", Type.A, 1, id))));
  });
}

interface Outcome {
  opened: number;
  failed: number;
  /** The most descriptors the server held over its own. */
  most: number;
  /** ms from the last connection opening until the server held none of them (NaN: not in time). */
  heldMs: number;
}

/** Runs one attack and watches the server's descriptors until it holds none of its connections. */
async function runAttack(
  port: number,
  pid: number,
  baseFds: number,
  a: Attack,
  peak: { rss: number },
): Promise<Outcome> {
  const out: Outcome = { opened: 0, failed: 0, most: 0, heldMs: NaN };
  let lastOpen = 0;
  const attack = tcpAttack(port, a.mode, a.count, (e) => {
    if (e.open !== undefined) {
      out.opened++;
      lastOpen = performance.now();
    }
    if (e.failed !== undefined) out.failed++;
  });
  const started = performance.now();
  try {
    for (;;) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const held = openFds(pid) - baseFds;
      out.most = Math.max(out.most, held);
      peak.rss = Math.max(peak.rss, rssMb(pid));
      // Everything opened, and at most one of the probe's connections besides.
      if (out.opened + out.failed >= a.count && held <= 1) {
        out.heldMs = performance.now() - lastOpen;
        return out;
      }
      if (performance.now() - started > 60_000 + a.boundMs) return out;
    }
  } finally {
    await attack.stop();
  }
}

export const tcpAbuse: SoakPart = {
  name: "tcp-abuse",
  what: "5,000 idle connections, slowloris, 65535-octet prefixes, clients pipelining without reading",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("tcp-abuse");
    // The reduced run sets short limits through `timeouts` (which it checks on the way); the full run
    // keeps the defaults, as a deployment has them.
    const d = o.reduced
      ? { ...defaultTcpOptions, readMs: 1000, writeMs: 1000, idleMs: 2000 }
      : defaultTcpOptions;
    const timeouts = o.reduced ? "timeouts {\n        read 1s\n        write 1s\n        idle 2s\n    }" : "";
    const scale = o.reduced ? 0.06 : 1;
    const plan: Attack[] = [
      { mode: "idle", count: 5000, what: "idle connections", boundMs: d.readMs },
      { mode: "slowloris", count: 500, what: "slowloris, one octet a second", boundMs: d.readMs },
      { mode: "prefix", count: 500, what: "length 65535, 60,000 octets, silence", boundMs: d.readMs },
      // Replies the client never takes: reading stops, then the idle deadline (or the write one).
      {
        mode: "pipeline",
        count: 20,
        what: "10,000 queries pipelined, never read",
        boundMs: d.idleMs + d.writeMs,
      },
    ];
    const attacks = plan.map((a) => ({ ...a, count: Math.max(2, Math.round(a.count * scale)) }));

    const t = await startTarget("batched", timeouts, 6000);
    const pid = t.srv.proc.pid!;
    try {
      await new Promise((r) => setTimeout(r, 500));
      const baseFds = openFds(pid);
      const rssStart = rssMb(pid);
      const udp = startLoad(t.port, "nginx.default.svc.cluster.local.", Type.A, {
        intervalMs: 5,
        timeoutMs: 3000,
        maxQueries: 100_000,
      });
      let tcpAsked = 0;
      let tcpAnswered = 0;
      const tcpProbe = setInterval(() => {
        const id = tcpAsked++ & 0xffff;
        void tcpQuery(t.port, id).then((ok) => ok && tcpAnswered++);
      }, 500);

      // Twice over: what the first round leaves in memory, the second must not add to.
      const rounds = Number(process.env.SOAK_TCP_ROUNDS ?? (o.reduced ? 1 : 2));
      const rssAfter: number[] = [];
      const peak = { rss: rssStart };
      for (let round = 1; round <= rounds; round++) {
        for (const a of attacks) {
          o.log(`round ${round}: ${a.what}: ${a.count}`);
          const r = await runAttack(t.port, pid, baseFds, a, peak);
          if (round > 1) continue;
          const name = `${a.what} (${a.count})`;
          report.note(
            `${name}: connections opened`,
            `${r.opened}${r.failed > 0 ? ` (${r.failed} not)` : ""}`,
          );
          report.check(
            `${name}: most connections the server held`,
            r.most,
            r.most <= d.maxConnections + 10,
            `<= ${d.maxConnections} (+10 of the probes)`,
          );
          const bound = (a.boundMs + SLACK_MS) / 1000;
          report.check(
            `${name}: seconds from the last one opening until the server held none`,
            Number.isNaN(r.heldMs) ? "never" : (r.heldMs / 1000).toFixed(1),
            r.heldMs / 1000 <= bound,
            `<= ${bound} (deadline ${a.boundMs / 1000} s + ${SLACK_MS / 1000} s)`,
          );
        }
        await new Promise((r) => setTimeout(r, 2000));
        rssAfter.push(rssMb(pid));
      }
      clearInterval(tcpProbe);
      await new Promise((r) => setTimeout(r, 3500));
      const u = await udp.stop();
      report.check(
        "UDP queries answered during the attacks",
        `${u.answered} of ${u.sent}`,
        u.sent > 0 && u.failures.length === 0 && u.answered === u.sent,
        "100%",
      );
      for (const f of u.failures.slice(0, 3)) report.note("UDP failure", f);
      report.check(
        "TCP queries on new connections answered during the attacks",
        `${tcpAnswered} of ${tcpAsked}`,
        tcpAsked > 0 && tcpAnswered === tcpAsked,
        "100%",
      );
      const after = rssAfter.map((r) => r.toFixed(0)).join(", then ");
      report.note(
        "RSS at the start -> peak; after each round",
        `${rssStart.toFixed(0)} -> ${peak.rss.toFixed(0)} MB; ${after} MB`,
      );
      const rise = peak.rss - rssStart;
      report.check("RSS peak over the start", rise, rise <= RSS_PEAK_MB, `<= ${RSS_PEAK_MB} MB`, "MB");
      if (rounds > 1) {
        const growth = rssAfter[1] - rssAfter[0];
        report.check(
          "RSS growth over the second round",
          growth,
          growth <= RSS_NOISE_MB,
          `<= ${RSS_NOISE_MB} MB`,
          "MB",
        );
      }
      report.alive(t.srv.proc);
    } finally {
      await t.stop();
    }
    return report;
  },
};

if (import.meta.main) await runAlone(tcpAbuse);
