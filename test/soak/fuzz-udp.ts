// Fuzz over UDP: the corpus of test/helpers/fuzz-packets.ts sent from four client sockets in batches,
// each batch followed by a valid query (a canary, from a socket of its own) that must be answered
// before the next batch goes: the load paces itself to what the server takes, and a canary that goes
// unanswered is a failure of the server, not of a flood. Every reply is checked against the packet it
// answers: QR set, never a reply to a runt or a response (QR=1), never larger than the client allows
// (512 octets, or the size in its OPT record when the packet decodes with one), never over 1232.

import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import { mutate } from "../helpers/fuzz-packets.ts";
import { ednsView, replyEdns } from "../helpers/edns-view.ts";
import { rng } from "../helpers/rng.ts";
import { Canaries } from "./canaries.ts";
import { rssMb } from "./part.ts";

export interface FuzzOptions {
  port: number;
  /** The server's process, for its RSS. */
  pid: number;
  packets: number;
  /** Fuzz packets between two canaries. */
  every: number;
  seed: number;
  /** What the valid queries were answered before (a second pass over the corpus): held to the same. */
  canaries?: Canaries;
  log(line: string): void;
}

export interface FuzzResult {
  sent: number;
  replies: number;
  canaries: number;
  canariesAnswered: number;
  canaryFailures: string[];
  /** Replies larger than the client allows, or than 1232 octets. */
  overLimit: string[];
  /** Replies to packets that must get none (shorter than 12 octets, or QR=1), and replies without QR. */
  badReplies: string[];
  /** Replies without an OPT record to a packet with one (RFC 6891 7), and replies other than BADVERS
   * to a packet that parses with an OPT record of a version other than 0 (6.1.3); examples of both. */
  noOpt: number;
  noBadvers: number;
  ednsMissed: string[];
  largestReply: number;
  /** Largest reply size over the size of the packet it answered. */
  largestRatio: number;
  bytesIn: number;
  bytesOut: number;
  /** Datagrams the kernel dropped for a full receive buffer (the whole machine's, during the run). */
  kernelDrops: number;
  seconds: number;
}

interface Sent {
  /** Largest reply the client allows. */
  allowed: number;
  /** The packet has an OPT record: so must its reply (RFC 6891 7). */
  opt: boolean;
  /** The packet parses with an OPT record of a version other than 0: its reply is BADVERS. */
  badvers: boolean;
  /** The packet may get no reply at all. */
  mute: boolean;
  size: number;
  /** The question octets (12..end of question) when the packet has one, to tell a late reply to an
   * earlier packet of the same ID. */
  question: string | undefined;
}

const SOCKETS = 4;
/** Replies over UDP never exceed this (src/dns/constants.ts EDNS_UDP_SIZE). */
const UDP_CEILING = 1232;
const CANARY_TIMEOUT_MS = 3000;

/** Octets 12..end of the single question of a message, as hex, or undefined. */
function questionOf(b: Buffer): string | undefined {
  if (b.length < 12 || b.readUInt16BE(4) !== 1) return undefined;
  let p = 12;
  while (p < b.length && b[p] !== 0 && b[p] < 64) p += b[p] + 1;
  if (p >= b.length || b[p] !== 0 || p + 5 > b.length) return undefined;
  return b.toString("hex", 12, p + 5);
}

/** Two runs' results as one. */
export function addResults(a: FuzzResult, b: FuzzResult): FuzzResult {
  const sum = emptyResult();
  for (const k of Object.keys(sum) as (keyof FuzzResult)[]) {
    const [x, y] = [a[k], b[k]];
    if (Array.isArray(x) && Array.isArray(y)) (sum[k] as string[]) = [...x, ...y].slice(0, 20);
    else if (k === "largestReply" || k === "largestRatio") sum[k] = Math.max(x as number, y as number);
    else (sum[k] as number) = (x as number) + (y as number);
  }
  return sum;
}

export function emptyResult(): FuzzResult {
  return {
    sent: 0,
    replies: 0,
    canaries: 0,
    canariesAnswered: 0,
    canaryFailures: [],
    overLimit: [],
    badReplies: [],
    noOpt: 0,
    noBadvers: 0,
    ednsMissed: [],
    largestReply: 0,
    largestRatio: 0,
    bytesIn: 0,
    bytesOut: 0,
    kernelDrops: 0,
    seconds: 0,
  };
}

export function kernelUdpDrops(): number {
  const lines = readFileSync("/proc/net/snmp", "utf8")
    .split("\n")
    .filter((l) => l.startsWith("Udp:"));
  const head = lines[0]?.split(/\s+/) ?? [];
  const values = lines[1]?.split(/\s+/) ?? [];
  const at = head.indexOf("RcvbufErrors");
  return at < 0 ? 0 : Number(values[at]);
}

export async function fuzzUdp(o: FuzzOptions): Promise<FuzzResult> {
  const r = rng(o.seed);
  const canaries = o.canaries ?? new Canaries();
  const res = emptyResult();
  const socks: dgram.Socket[] = [];
  const sent: Map<number, Sent>[] = [];
  for (let s = 0; s < SOCKETS; s++) {
    const sock = dgram.createSocket({ type: "udp4", recvBufferSize: 4 << 20 });
    const byId = new Map<number, Sent>();
    sock.on("message", (m) => onReply(m, byId));
    await new Promise<void>((ok) => sock.bind(0, "127.0.0.1", ok));
    socks.push(sock);
    sent.push(byId);
  }
  const onReply = (m: Buffer, byId: Map<number, Sent>) => {
    res.replies++;
    res.bytesOut += m.length;
    if (m.length > res.largestReply) res.largestReply = m.length;
    const id = m.length >= 2 ? m.readUInt16BE(0) : -1;
    const s = byId.get(id);
    const note = (list: string[], what: string) => {
      if (list.length < 20) list.push(`${what}: reply ${m.toString("hex").slice(0, 120)}`);
    };
    if (m.length < 12 || (m[2] & 0x80) === 0) return note(res.badReplies, "not a response");
    if (m.length > UDP_CEILING) return note(res.overLimit, `${m.length} octets over UDP`);
    if (s === undefined) return note(res.badReplies, `ID ${id} was never sent`);
    // A late reply to an earlier packet of the same ID (the IDs wrap) is only held to the ceiling.
    const q = questionOf(m);
    if (q !== undefined && s.question !== undefined && q !== s.question) return;
    if (s.mute) return note(res.badReplies, "a reply to a runt or a response");
    if (m.length > s.allowed) return note(res.overLimit, `${m.length} octets, client allows ${s.allowed}`);
    const e = replyEdns(m);
    if (s.opt && !e.opt) {
      res.noOpt++;
      note(res.ednsMissed, "no OPT record in the reply to a query with one");
    }
    if (s.badvers && e.rcode !== 16) {
      res.noBadvers++;
      note(res.ednsMissed, `rcode ${e.rcode} to a version other than 0`);
    }
    if (m.length / s.size > res.largestRatio) res.largestRatio = m.length / s.size;
  };

  const canarySock = dgram.createSocket("udp4");
  await new Promise<void>((ok) => canarySock.bind(0, "127.0.0.1", ok));
  let waiting: { id: number; done: (m: Buffer | undefined) => void } | undefined;
  canarySock.on("message", (m) => {
    if (waiting !== undefined && m.length >= 2 && m.readUInt16BE(0) === waiting.id) waiting.done(m);
  });
  const askCanary = (n: number): Promise<Buffer | undefined> =>
    new Promise((resolve) => {
      const id = n & 0xffff;
      const timer = setTimeout(() => resolve(undefined), CANARY_TIMEOUT_MS);
      waiting = {
        id,
        done: (m) => {
          clearTimeout(timer);
          waiting = undefined;
          resolve(m);
        },
      };
      canarySock.send(canaries.query(n, id), o.port, "127.0.0.1");
    });

  const drops0 = kernelUdpDrops();
  const started = performance.now();
  const ids = new Array<number>(SOCKETS).fill(0);
  let nextLog = performance.now() + 10_000;
  let batch = 0;
  while (res.sent < o.packets) {
    const s = batch++ % SOCKETS;
    for (let k = 0; k < o.every && res.sent < o.packets; k++) {
      const pkt = mutate(r, res.sent);
      const edns = ednsView(pkt);
      const info: Sent = {
        allowed: edns.allowed,
        opt: edns.hasOpt,
        badvers: (edns.version ?? 0) > 0,
        mute: pkt.length < 12 || (pkt[2] & 0x80) !== 0,
        size: Math.max(1, pkt.length),
        question: questionOf(pkt),
      };
      if (pkt.length >= 2) {
        const id = ids[s]++ & 0xffff;
        pkt.writeUInt16BE(id, 0);
        sent[s].set(id, info);
      }
      socks[s].send(pkt, o.port, "127.0.0.1");
      res.sent++;
      res.bytesIn += pkt.length;
    }
    const n = res.canaries++;
    const reply = await askCanary(n);
    if (reply === undefined) {
      if (res.canaryFailures.length < 20)
        res.canaryFailures.push(`canary ${n}: no reply in ${CANARY_TIMEOUT_MS} ms`);
    } else if (canaries.check(n, reply)) {
      res.canariesAnswered++;
    }
    if (performance.now() > nextLog) {
      nextLog += 10_000;
      const rate = res.sent / ((performance.now() - started) / 1000);
      o.log(
        `${res.sent} packets (${rate.toFixed(0)}/s), ${res.canariesAnswered}/${res.canaries} canaries, RSS ${rssMb(o.pid).toFixed(0)} MB`,
      );
    }
  }
  res.seconds = (performance.now() - started) / 1000;
  // Late replies (forwarded queries) have a moment to arrive and be checked.
  await new Promise((ok) => setTimeout(ok, 500));
  res.kernelDrops = kernelUdpDrops() - drops0;
  res.canaryFailures.push(...canaries.wrong.splice(0).slice(0, 20));
  for (const sock of [...socks, canarySock]) sock.close();
  return res;
}
