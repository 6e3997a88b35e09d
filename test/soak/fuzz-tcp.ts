// Fuzz over TCP: the same corpus as over UDP, framed (RFC 1035 4.2.2) and pipelined on four long-lived
// connections, each batch followed on the same connection by a valid query whose reply must come back
// before the next batch goes. A packet of zero octets is sent on a connection of its own (a
// zero-length message ends a connection by design), and every 64th batch a connection carrying junk
// lengths (prefixes longer than what follows, 65535, bytes cut mid-frame) is opened and dropped. The
// server must answer or close each of those, keep every long-lived connection, and stay up.

import net from "node:net";
import { mutate } from "../helpers/fuzz-packets.ts";
import { rng } from "../helpers/rng.ts";
import { FrameReader, tcpFrame } from "../../src/dns/tcp-frames.ts";
import { Canaries } from "./canaries.ts";
import { rssMb } from "./part.ts";
import { emptyResult, type FuzzOptions, type FuzzResult } from "./fuzz-udp.ts";

const CONNECTIONS = 4;
const CANARY_TIMEOUT_MS = 3000;
const CANARY_ID = 0xffff;

interface Conn {
  sock: net.Socket;
  closed: boolean;
  waiting: ((m: Buffer | undefined) => void) | undefined;
}

function open(port: number, res: FuzzResult): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1");
    const c: Conn = { sock, closed: false, waiting: undefined };
    const frames = new FrameReader();
    sock.setNoDelay(true);
    sock.on("data", (chunk: Buffer) =>
      frames.push(chunk, (m) => {
        res.replies++;
        res.bytesOut += m.length;
        if (m.length > res.largestReply) res.largestReply = m.length;
        if (m.length < 12 || (m[2] & 0x80) === 0) {
          if (res.badReplies.length < 20)
            res.badReplies.push(`not a response: ${m.toString("hex").slice(0, 120)}`);
          return;
        }
        if (m.readUInt16BE(0) === CANARY_ID) c.waiting?.(m);
      }),
    );
    sock.on("error", () => undefined);
    sock.on("close", () => {
      c.closed = true;
      c.waiting?.(undefined);
    });
    sock.once("connect", () => resolve(c));
    sock.once("error", reject);
  });
}

/** Sends `bytes` on a connection of its own and waits until the server closes it or 2 s pass
 * (then drops it). Resolves true when the server closed it. */
function throwaway(port: number, bytes: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    const timer = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, 2000);
    s.on("error", () => undefined);
    s.on("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
    s.write(bytes);
  });
}

export async function fuzzTcp(o: FuzzOptions): Promise<FuzzResult> {
  const canaries = o.canaries ?? new Canaries();
  const res = emptyResult();
  const started = performance.now();
  let nextLog = performance.now() + 10_000;
  const fail = (line: string) => {
    if (res.canaryFailures.length < 20) res.canaryFailures.push(line);
  };
  // Junk connections run beside the load, not in its way: a partial frame holds one until the
  // server's timeout closes it.
  const junkRuns: Promise<boolean>[] = [];

  const worker = async (w: number) => {
    const r = rng(o.seed * 100 + w);
    let c = await open(o.port, res);
    let i = 0;
    for (let batch = 0; res.sent < o.packets; batch++) {
      const frames: Buffer[] = [];
      for (let k = 0; k < o.every && res.sent < o.packets; k++) {
        const pkt = mutate(r, i++);
        res.sent++;
        res.bytesIn += pkt.length;
        if (pkt.length === 0) {
          junkRuns.push(throwaway(o.port, tcpFrame(pkt)));
          continue;
        }
        if (pkt.length >= 2) pkt.writeUInt16BE(k, 0);
        frames.push(tcpFrame(pkt));
      }
      const n = res.canaries++;
      frames.push(tcpFrame(canaries.query(n, CANARY_ID)));
      const reply = await new Promise<Buffer | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(undefined), CANARY_TIMEOUT_MS);
        c.waiting = (m) => {
          clearTimeout(timer);
          c.waiting = undefined;
          resolve(m);
        };
        c.sock.write(Buffer.concat(frames));
      });
      if (reply === undefined)
        fail(`canary ${n}: ${c.closed ? "connection closed by the server" : "no reply"}`);
      else if (canaries.check(n, reply)) res.canariesAnswered++;
      if (c.closed) c = await open(o.port, res);
      if (batch % 64 === 63) junkRuns.push(throwaway(o.port, junk(r)));
      if (w === 0) {
        if (performance.now() > nextLog) {
          nextLog += 10_000;
          const rate = res.sent / ((performance.now() - started) / 1000);
          o.log(
            `${res.sent} packets (${rate.toFixed(0)}/s), ${res.canariesAnswered}/${res.canaries} canaries, RSS ${rssMb(o.pid).toFixed(0)} MB`,
          );
        }
      }
    }
    c.sock.destroy();
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, w) => worker(w)));
  res.seconds = (performance.now() - started) / 1000;
  const closed = (await Promise.all(junkRuns)).filter(Boolean).length;
  await new Promise((ok) => setTimeout(ok, 500));
  res.canaryFailures.push(...canaries.wrong.splice(0).slice(0, 20));
  // A junk connection holding a partial frame is closed by the idle timeout, later than 2 s: not a
  // failure here (the TCP abuse part waits for those).
  o.log(`${junkRuns.length} junk connections, ${junkRuns.length - closed} still open after 2 s`);
  return res;
}

/** A connection's worth of junk: frames whose length prefix is 0, 65535, longer or shorter than what
 * follows, and a last frame cut short. */
function junk(r: () => number): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const parts: Buffer[] = [];
  for (let i = 0, n = 1 + int(8); i < n; i++) {
    const body = Buffer.from(Array.from({ length: int(600) }, () => int(256)));
    const len = r() < 0.2 ? 65535 : r() < 0.2 ? 0 : r() < 0.5 ? body.length : int(65536);
    parts.push(Buffer.from([len >> 8, len & 0xff]), body);
  }
  return Buffer.concat(parts);
}
