// Soak part "amplification": replies to spoofable UDP are never larger than the client allows, and
// optional response-rate limiting (src/plugins/rrl) holds a flood down.
// 1. Every record type the server produces, in RRsets too large for 512 and for 1232 octets: a file
//    zone with A, AAAA, NS and glue, MX, TXT, SRV, CAA, PTR, CNAME (the types `file` reads), a referral
//    and ANY; Kubernetes' A, AAAA, SRV with its glue, PTR, TXT and CNAME (a 100-endpoint headless Service,
//    a StatefulSet); forwarded answers of 40 and 120 records (Knot); CH TXT. Each asked over UDP with
//    no EDNS and with EDNS sizes from 0 to 65535 (and DO), on both UDP engines. Every reply must fit
//    what the client offered (at least 512) and 1232; a reply with fewer answer records than over TCP
//    must carry TC, and one without TC the whole answer.
// 2. A flood of one question from one address against a block with `rrl`: the replies sent over the
//    flood's octets (target far below 1), most of the excess dropped, every other one slipped (TC),
//    another address served in full, and dig (UDP, then TCP on TC) from the flooded address answered.
//   node test/soak/amplification.ts [--reduced]

import { execFile } from "node:child_process";
import dgram from "node:dgram";
import { promisify } from "node:util";
import { runAlone, Report, type SoakPart, type PartOptions } from "./part.ts";
import { startServer, ROOT, type RunningServer } from "../helpers/server.ts";
import { UDP_ENGINES, engineArgs } from "../helpers/engines.ts";
import { startKnot, type Knot } from "../upstream/knot.ts";
import { headlessObjects } from "../k8s/headless.ts";
import { exchangeUdp } from "../helpers/udp-exchange.ts";
import { kernelUdpDrops } from "./fuzz-udp.ts";
import { FrameReader, tcpFrame } from "../../src/dns/tcp-frames.ts";
import { encode } from "../../src/dns/encode.ts";
import { decode } from "../../src/dns/decode.ts";
import { newQuery, type Msg } from "../../src/dns/message.ts";
import { Class, Type } from "../../src/dns/constants.ts";
import type { UdpEngineName } from "../../src/cli-flags.ts";
import net from "node:net";

const run = promisify(execFile);

/** A zone whose every RRset outgrows a plain UDP reply, most of them 1232 octets too. */
function ampZone(): string {
  const lines = ["$ORIGIN amp.test.", "$TTL 300", "@ SOA ns1 hostmaster 1 7200 900 1209600 300"];
  const n = (k: number, f: (i: number) => string) => Array.from({ length: k }, (_, i) => f(i));
  lines.push(...n(20, (i) => `@ NS ns${i + 1}`));
  lines.push(...n(20, (i) => `ns${i + 1} A 192.0.2.${i + 1}\nns${i + 1} AAAA 2001:db8::${i + 1}`));
  lines.push(...n(100, (i) => `a A 10.0.${i >> 8}.${i & 255}`));
  lines.push(...n(60, (i) => `aaaa AAAA 2001:db8:1::${(i + 1).toString(16)}`));
  lines.push(...n(50, (i) => `mx MX ${i} mail${i}.amp.test.\nmail${i} A 198.51.100.${i + 1}`));
  lines.push(...n(20, (i) => `txt TXT "${String(i).padStart(3, "0")}${"t".repeat(200)}"`));
  lines.push(
    ...n(60, (i) => `_sip._udp.srv SRV 10 ${i} 5060 host${i}.amp.test.\nhost${i} A 203.0.113.${i + 1}`),
  );
  lines.push(...n(30, (i) => `caa CAA 0 issue "ca${i}.example.net; account=${"x".repeat(20)}"`));
  lines.push(...n(50, (i) => `ptr PTR pointer-to-a-rather-long-name-${i}.amp.test.`));
  lines.push("cname CNAME a");
  lines.push(...n(30, (i) => `sub NS ns${i}.sub\nns${i}.sub A 192.0.2.${100 + i}`));
  return lines.join("\n") + "\n";
}

/** Every question: what each record type looks like too large. */
const QUESTIONS: [string, number, number][] = [
  ["amp.test.", Type.NS, Class.IN],
  ["amp.test.", Type.SOA, Class.IN],
  ["a.amp.test.", Type.A, Class.IN],
  ["aaaa.amp.test.", Type.AAAA, Class.IN],
  ["mx.amp.test.", Type.MX, Class.IN],
  ["txt.amp.test.", Type.TXT, Class.IN],
  ["_sip._udp.srv.amp.test.", Type.SRV, Class.IN],
  ["caa.amp.test.", Type.CAA, Class.IN],
  ["ptr.amp.test.", Type.PTR, Class.IN],
  ["cname.amp.test.", Type.A, Class.IN],
  ["x.sub.amp.test.", Type.A, Class.IN],
  ["a.amp.test.", Type.ANY, Class.IN],
  ["nothere.amp.test.", Type.A, Class.IN],
  ["many.default.svc.cluster.local.", Type.A, Class.IN],
  ["_http._tcp.many.default.svc.cluster.local.", Type.SRV, Class.IN],
  ["_http._tcp.nine.default.svc.cluster.local.", Type.SRV, Class.IN],
  ["nginx.web.svc.cluster.local.", Type.A, Class.IN],
  ["7.7.244.10.in-addr.arpa.", Type.PTR, Class.IN],
  ["dns-version.cluster.local.", Type.TXT, Class.IN],
  ["iij.default.svc.cluster.local.", Type.A, Class.IN],
  ["cluster.local.", Type.NS, Class.IN],
  ["big.example.org.", Type.A, Class.IN],
  ["mid.example.org.", Type.A, Class.IN],
  ["version.bind.", Type.TXT, Class.CH],
  ["anything.example.com.", Type.A, Class.IN],
];

/** No EDNS (-1), then the EDNS sizes clients offer, 0 and the largest included. */
const SIZES = [-1, 0, 512, 600, 1000, 1232, 1400, 4096, 65535];

async function startAmpServer(engine: UdpEngineName, knot: Knot, rrl = ""): Promise<RunningServer> {
  return startServer(
    `amp.test {
    ${rrl}
    file amp.zone
}
cluster.local in-addr.arpa ip6.arpa {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        objects ${ROOT}/zones/demo-cluster.yaml headless.json
        pods insecure
    }
}
. {
    forward . 127.0.0.1:${knot.port}
    cache 30
    chaos
    whoami
}
`,
    {
      args: engineArgs(engine),
      files: {
        "amp.zone": ampZone(),
        "headless.json": JSON.stringify({ kind: "List", apiVersion: "v1", items: headlessObjects() }),
      },
    },
  );
}

function query(name: string, type: number, qclass: number, size: number, dnssecOk: boolean): Buffer {
  const m = newQuery(name, type, qclass, 0x4242);
  if (size >= 0) m.edns = { udpSize: size, version: 0, do: dnssecOk, options: [] };
  return encode(m);
}

/** One TCP exchange: the complete reply. */
function exchangeTcp(port: number, q: Buffer): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    const frames = new FrameReader();
    const done = (m: Buffer | undefined) => {
      clearTimeout(timer);
      s.destroy();
      resolve(m);
    };
    const timer = setTimeout(() => done(undefined), 5000);
    s.on("error", () => done(undefined));
    s.on("data", (d: Buffer) => frames.push(d, (m) => done(Buffer.from(m))));
    s.write(tcpFrame(q));
  });
}

interface SizeCheck {
  asked: number;
  wrong: string[];
  largest: number;
  /** Largest reply over its query's size, and the question it answered. */
  ratio: number;
  ratioOf: string;
  truncated: number;
}

async function checkSizes(port: number): Promise<SizeCheck> {
  const c: SizeCheck = { asked: 0, wrong: [], largest: 0, ratio: 0, ratioOf: "", truncated: 0 };
  for (const [name, type, qclass] of QUESTIONS) {
    const full = await exchangeTcp(port, query(name, type, qclass, 65535, false));
    const whole = full === undefined ? undefined : decode(full);
    for (const size of SIZES) {
      for (const dnssecOk of size >= 0 ? [false, true] : [false]) {
        const q = query(name, type, qclass, size, dnssecOk);
        const reply = await exchangeUdp(port, q, 3000);
        c.asked++;
        const what = `${name} ${type} EDNS ${size}${dnssecOk ? " DO" : ""}`;
        if (reply === undefined || whole === undefined) {
          c.wrong.push(`${what}: no reply${whole === undefined ? " over TCP" : ""}`);
          continue;
        }
        const allowed = Math.max(512, size);
        if (reply.length > allowed || reply.length > 1232) c.wrong.push(`${what}: ${reply.length} octets`);
        c.largest = Math.max(c.largest, reply.length);
        if (reply.length / q.length > c.ratio) {
          c.ratio = reply.length / q.length;
          c.ratioOf = `${name} ${type}, ${q.length} -> ${reply.length} octets`;
        }
        const m: Msg = decode(reply);
        if (m.tc) c.truncated++;
        else if (m.answer.length !== whole.answer.length)
          c.wrong.push(`${what}: ${m.answer.length} of ${whole.answer.length} answer records without TC`);
        if (m.answer.length < whole.answer.length && !m.tc) c.wrong.push(`${what}: records missing, no TC`);
      }
    }
  }
  return c;
}

interface Flood {
  sent: number;
  bytesIn: number;
  /** Replies with the answer (in whole or as much as fits, as without rrl). */
  answered: number;
  /** Empty replies with TC set: rrl's slips. */
  slipped: number;
  bytesOut: number;
  /** Datagrams the kernel dropped meanwhile (whole machine: queries the server never read, replies the
   * client never read), which the counts above cannot tell apart. */
  kernelDrops: number;
}

/** `count` queries for one question from `address`, as fast as the socket takes them; counts the
 * replies that come back within a second of the last. */
async function flood(port: number, address: string, count: number, q: Buffer): Promise<Flood> {
  const sock = dgram.createSocket("udp4");
  await new Promise<void>((r) => sock.bind(0, address, r));
  const f: Flood = { sent: 0, bytesIn: 0, answered: 0, slipped: 0, bytesOut: 0, kernelDrops: 0 };
  const drops0 = kernelUdpDrops();
  sock.on("message", (m) => {
    f.bytesOut += m.length;
    if (m.readUInt16BE(6) > 0) f.answered++;
    else if ((m[2] & 0x02) !== 0) f.slipped++;
  });
  for (let i = 0; i < count; i++) {
    q.writeUInt16BE(i & 0xffff, 0);
    sock.send(q, port, "127.0.0.1");
    f.sent++;
    f.bytesIn += q.length;
    // 20 queries a millisecond at most: the server reads them all (no kernel drops to blur the
    // counts), still 1000 times the allowance.
    if (i % 20 === 19) await new Promise((r) => setTimeout(r, 1));
  }
  await new Promise((r) => setTimeout(r, 1000));
  sock.close();
  f.kernelDrops = kernelUdpDrops() - drops0;
  return f;
}

async function rrlFigures(report: Report, engine: UdpEngineName, knot: Knot, n: number): Promise<void> {
  const limited = await startAmpServer(
    engine,
    knot,
    "rrl {\n        responses-per-second 20\n        window 5\n        ipv4-prefix-length 32\n        slip-ratio 2\n    }",
  );
  const open = await startAmpServer(engine, knot);
  try {
    const q = query("a.amp.test.", Type.A, Class.IN, 1232, false);
    const without = await flood(open.port, "127.0.0.1", n, Buffer.from(q));
    const f = await flood(limited.port, "127.0.0.1", n, Buffer.from(q));
    const run = `rrl (${engine}), ${n} queries from one address`;
    report.note(`${run}: octets out / in without rrl`, (without.bytesOut / without.bytesIn).toFixed(1));
    const ratio = f.bytesOut / f.bytesIn;
    report.check(`${run}: octets out / in with rrl`, ratio.toFixed(2), ratio < 1, "< 1");
    const seconds = f.sent / 20 / 1000;
    report.note(
      `${run}: answered / slipped / dropped`,
      `${f.answered} / ${f.slipped} / ${f.sent - f.answered - f.slipped}`,
    );
    // 20 a second, plus the first second's worth.
    const most = Math.ceil(20 * (seconds + 1)) + 5;
    report.check(`${run}: answered`, f.answered, f.answered <= most, `<= ${most} (20 a second)`);
    const over = f.sent - f.answered;
    // A query the kernel dropped (on a busy machine: the server stalled, its socket buffer full) is
    // one rrl never saw, so each drop may take one from the half.
    report.check(
      `${run}: slipped (TC), of those over the limit`,
      `${f.slipped} of ${over}` +
        (f.kernelDrops > 0 ? ` (${f.kernelDrops} datagrams dropped by the kernel)` : ""),
      Math.abs(f.slipped - over / 2) <= over * 0.05 + 5 + f.kernelDrops,
      "half (slip-ratio 2)",
    );
    const other = await flood(limited.port, "127.0.0.2", 10, Buffer.from(q));
    report.check(
      `${run}: another address's 10 queries answered`,
      other.answered,
      other.answered === 10,
      "10",
    );
    const dig = await digAfterFlood(limited.port);
    report.check(
      `${run}: dig from the flooded address (UDP, then TCP on TC)`,
      dig,
      dig === "NOERROR, 100 records",
      "NOERROR, 100 records",
    );
  } finally {
    await limited.stop();
    await open.stop();
  }
}

/** dig from the flooded address right after the flood: its UDP query is limited, TC sends it to TCP. */
async function digAfterFlood(port: number): Promise<string> {
  const { stdout } = await run(
    "dig",
    [
      "-b",
      "127.0.0.1",
      "@127.0.0.1",
      "-p",
      String(port),
      "a.amp.test",
      "A",
      "+tries=3",
      "+time=1",
      "+nocookie",
    ],
    { timeout: 15_000 },
  );
  const status = /status: ([A-Z]+)/.exec(stdout)?.[1] ?? "no reply";
  const records = [...stdout.matchAll(/^a\.amp\.test\.\s+\d+\s+IN\s+A\s/gm)].length;
  return `${status}, ${records} records`;
}

export const amplification: SoakPart = {
  name: "amplification",
  what: "replies never over the client's size for every record type, both engines; rrl under a flood",
  async run(o: PartOptions): Promise<Report> {
    const report = new Report("amplification");
    const knot = await startKnot();
    try {
      for (const engine of UDP_ENGINES) {
        const srv = await startAmpServer(engine, knot);
        try {
          const c = await checkSizes(srv.port);
          report.note(`${engine}: questions x client sizes asked`, c.asked);
          report.check(
            `${engine}: replies over the client's size, or TC wrong`,
            c.wrong.length,
            c.wrong.length === 0,
            "0",
          );
          for (const w of c.wrong.slice(0, 5)) report.note(`${engine}: wrong`, w);
          report.note(`${engine}: replies truncated (TC)`, c.truncated);
          report.note(`${engine}: largest UDP reply`, c.largest, "octets");
          report.note(`${engine}: largest reply / query`, `${c.ratio.toFixed(1)} (${c.ratioOf})`);
        } finally {
          await srv.stop();
        }
      }
      for (const engine of UDP_ENGINES) await rrlFigures(report, engine, knot, o.reduced ? 2000 : 50_000);
    } finally {
      await knot.stop();
    }
    return report;
  },
};

if (import.meta.main) await runAlone(amplification);
