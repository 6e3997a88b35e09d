// glibc's res_send (resolv/res_send.c) re-enacted with real sockets: which server gets which query,
// when a query is sent again, and which replies glibc keeps. One call sends the queries of one
// candidate name (A alone, or A and AAAA together) and reports every datagram through `onEvent`.
//
// The rules, from glibc 2.36 (with the fix for bug 30081) and checked by test/resolver-glibc.test.ts:
// - Tries: `attempts` passes over the servers (at most 3), first server first; 0 attempts send nothing.
// - A and AAAA leave together (sendmmsg); with single-request(-reopen) AAAA waits for A's reply.
// - SERVFAIL, NOTIMP, REFUSED, and a NOERROR reply with no answer, AA, RA or additional records (a
//   referral), make glibc wait for the other reply, then move to the next server (or try) unless
//   the other reply was usable. In single-request mode such a reply to A moves on at once.
// - TC: the same server is asked again over TCP, both queries; TCP replies are taken as they are.
// - A timeout after one of two replies switches this process to single-request, then to
//   single-request-reopen, before giving up on the missing reply.
// - Timeout for server i (0-based) of n: timeout << i, divided by n when i > 0, at least 1 second.
// Not modelled: rotate's random first server is drawn here too, but not with glibc's generator; TCP
// reads have a timeout here (glibc's have none).

import { createSocket, type Socket } from "node:dgram";
import { connect as tcpConnect, type Socket as TcpSocket } from "node:net";
import { decode } from "../dns/decode.ts";
import { encode } from "../dns/encode.ts";
import { tcpFrame } from "../dns/tcp-frames.ts";
import { newQuery, replyTo, type Msg } from "../dns/message.ts";
import { Rcode } from "../dns/constants.ts";
import type { ResolvConf } from "./resolv-conf.ts";
import { joinHostPort } from "../dns/host-port.ts";

export interface Server {
  address: string;
  port: number;
}

/** One query put on the wire, and what came of it. */
export interface QueryEvent {
  name: string;
  type: number;
  server: string;
  transport: "udp" | "tcp";
  /** The reply, when one arrived; `ignored` says why glibc did not use it. */
  reply?: Msg;
  /** "timeout", "refused" (ICMP or TCP), or what made glibc discard the reply. */
  note?: string;
}

/** What glibc's flags become during a process: a timeout can switch single-request on for good. */
export interface SendSession {
  singleRequest: boolean;
  singleRequestReopen: boolean;
}

export interface SendResult {
  /** The reply in glibc's first answer buffer when it counts (resplen > 0). */
  first?: Msg;
  /** The reply in the second buffer when it counts (resplen2 > 0). */
  second?: Msg;
  /** The rcode in the first buffer whether or not it counts; NOERROR when nothing was written. */
  firstRcode: number;
  failed?: "ECONNREFUSED" | "ETIMEDOUT";
}

export interface SendOptions {
  conf: ResolvConf;
  servers: Server[];
  session: SendSession;
  onEvent: (e: QueryEvent) => void;
  /** For rotate; Math.random by default. */
  random?: () => number;
}

const EDNS_SIZE = 1200; // RESOLV_EDNS_BUFFER_SIZE

export function buildQuery(name: string, type: number, conf: ResolvConf): Msg {
  const q = newQuery(name, type, 1, (Math.random() * 0x10000) | 0);
  if (conf.trustAd) q.ad = true;
  if (conf.edns0) q.edns = { udpSize: EDNS_SIZE, version: 0, do: false, options: [] };
  return q;
}

function serverText(s: Server): string {
  return joinHostPort(s.address, s.port);
}

/** Per-exchange state shared by the UDP and TCP paths (glibc's locals and pointers). */
interface Exchange {
  q1: Msg;
  q2?: Msg;
  buf1?: Msg;
  buf2?: Msg;
  /** glibc's *resplen2: 0 none, 1 the "no second reply" marker, else the second reply counts. */
  resplen2: number;
  gotsomewhere: boolean;
  vc: boolean;
}

/** Sends `queries` (1 or 2) the way res_send does and reports what glibc's buffers hold after. */
export async function resSend(queries: Msg[], o: SendOptions): Promise<SendResult> {
  const x: Exchange = {
    q1: queries[0],
    q2: queries[1],
    resplen2: 0,
    gotsomewhere: false,
    vc: o.conf.useVc,
  };
  const n = o.servers.length;
  const shift = o.conf.rotate && n > 1 ? Math.floor((o.random ?? Math.random)() * n) % n : 0;
  for (let attempt = 0; attempt < o.conf.attempts; attempt++) {
    for (let i = 0; i < n; i++) {
      const server = o.servers[(i + shift) % n];
      let seconds = o.conf.timeout << i;
      if (i > 0) seconds = Math.trunc(seconds / n);
      if (seconds <= 0) seconds = 1;
      let got = 0;
      if (!x.vc) got = await sendDg(x, server, seconds, o);
      if (x.vc) {
        attempt = o.conf.attempts; // over TCP each server is asked once
        got = await sendVc(x, server, seconds, o);
      }
      if (got === 0 && (x.q2 === undefined || x.resplen2 === 0)) continue;
      return {
        first: got > 0 ? x.buf1 : undefined,
        second: x.q2 !== undefined && x.resplen2 >= 12 ? x.buf2 : undefined,
        firstRcode: x.buf1?.rcode ?? Rcode.NOERROR,
      };
    }
  }
  return {
    firstRcode: x.buf1?.rcode ?? Rcode.NOERROR,
    failed: x.gotsomewhere ? "ETIMEDOUT" : "ECONNREFUSED",
  };
}

/** A reply to q: same ID and the same question (glibc's res_queriesmatch, names case-insensitive). */
function answers(q: Msg | undefined, r: Msg): boolean {
  if (q === undefined || q.id !== r.id || r.question.length !== q.question.length) return false;
  return q.question.every((a, i) => {
    const b = r.question[i];
    return a.type === b.type && a.class === b.class && a.name.toLowerCase() === b.name.toLowerCase();
  });
}

const REJECTING: ReadonlySet<number> = new Set([Rcode.SERVFAIL, Rcode.NOTIMP, Rcode.REFUSED]);

/** A datagram socket connected to one server that can be awaited packet by packet. */
class DgramLink {
  #sock: Socket;
  #queue: (Buffer | Error)[] = [];
  #wake: (() => void) | undefined;
  private constructor(sock: Socket) {
    this.#sock = sock;
    sock.on("message", (m) => this.#push(m));
    sock.on("error", (e) => this.#push(e));
  }
  static async open(server: Server): Promise<DgramLink> {
    const sock = createSocket(server.address.includes(":") ? "udp6" : "udp4");
    const link = new DgramLink(sock);
    await new Promise<void>((resolve) => sock.connect(server.port, server.address, () => resolve()));
    return link;
  }
  #push(item: Buffer | Error): void {
    this.#queue.push(item);
    this.#wake?.();
  }
  send(msg: Msg): void {
    // An ICMP error for an earlier datagram can surface as this send's error rather than an event.
    this.#sock.send(encode(msg), (err) => err && this.#push(err));
  }
  /** The next packet or socket error, or undefined at `deadline` (ms since the epoch). */
  async next(deadline: number): Promise<Buffer | Error | undefined> {
    if (this.#queue.length === 0) {
      const wait = deadline - Date.now();
      if (wait <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    return this.#queue.shift();
  }
  close(): void {
    try {
      this.#sock.close();
    } catch {
      // already closed after an error
    }
  }
}

/** What a step of send_dg leaves the exchange at: a resplen to return, or one of these. */
const WAIT = "wait"; // read the next packet
const RETRY = "retry"; // glibc's "goto retry": send again with a fresh deadline
type Step = number | typeof WAIT | typeof RETRY;

/** send_dg: returns glibc's resplen (0 = try the next server); sets x.vc on a truncated reply. */
async function sendDg(x: Exchange, server: Server, seconds: number, o: SendOptions): Promise<number> {
  const send = new DgSend(x, server, o, await DgramLink.open(server));
  try {
    return await send.run(seconds);
  } finally {
    send.close();
  }
}

/** One send_dg to one server: glibc's locals as fields, its labels as the steps of run(). */
class DgSend {
  readonly #x: Exchange;
  readonly #server: Server;
  readonly #options: SendOptions;
  readonly #where: string;
  /** Sent queries waiting for a reply, by which (1|2). */
  readonly #pending = new Map<number, QueryEvent>();
  readonly #saveGotsomewhere: boolean;
  #link: DgramLink;
  #single: boolean;
  #reopen: boolean;
  #resplen = 0;
  #recv1 = false;
  #recv2 = false;

  constructor(x: Exchange, server: Server, o: SendOptions, link: DgramLink) {
    this.#x = x;
    this.#server = server;
    this.#options = o;
    this.#where = serverText(server);
    this.#link = link;
    this.#saveGotsomewhere = x.gotsomewhere;
    this.#single = o.session.singleRequest || o.session.singleRequestReopen;
    this.#reopen = o.session.singleRequestReopen;
  }

  async run(seconds: number): Promise<number> {
    for (;;) {
      // glibc's "retry:" label: a fresh deadline and nothing sent yet.
      const deadline = Date.now() + seconds * 1000;
      this.#recv1 = false;
      this.#recv2 = this.#x.q2 === undefined;
      this.#put(1);
      if (this.#x.q2 !== undefined && !this.#single) this.#put(2);
      let step: Step = WAIT;
      while (step === WAIT) {
        const got = await this.#link.next(deadline);
        if (got === undefined) step = await this.#timedOut();
        else if (got instanceof Error) step = this.#failed(got);
        else step = await this.#received(got);
      }
      if (step !== RETRY) return step;
    }
  }

  close(): void {
    this.#link.close();
  }

  #put(which: 1 | 2): void {
    const q = which === 1 ? this.#x.q1 : this.#x.q2!;
    this.#pending.set(which, {
      name: q.question[0].name,
      type: q.question[0].type,
      server: this.#where,
      transport: "udp",
    });
    this.#link.send(q);
  }

  #report(which: number, e: Partial<QueryEvent>): void {
    const ev = this.#pending.get(which);
    if (ev === undefined) return;
    this.#pending.delete(which);
    this.#options.onEvent({ ...ev, ...e });
  }

  #flush(note: string): void {
    for (const which of [...this.#pending.keys()]) this.#report(which, { note });
  }

  async #reopenLink(): Promise<void> {
    this.#link.close();
    this.#link = await DgramLink.open(this.#server);
  }

  /** The deadline passed with a reply missing. */
  async #timedOut(): Promise<Step> {
    const x = this.#x;
    this.#flush("no reply (timeout)");
    if (this.#resplen > 1 && (this.#recv1 || (x.q2 !== undefined && this.#recv2))) {
      // One reply came, the other did not: fall back to sending them one at a time.
      if (!this.#single) {
        this.#single = this.#options.session.singleRequest = true;
        x.gotsomewhere = this.#saveGotsomewhere;
        return RETRY;
      }
      if (!this.#reopen) {
        this.#reopen = this.#options.session.singleRequestReopen = true;
        x.gotsomewhere = this.#saveGotsomewhere;
        await this.#reopenLink();
        return RETRY;
      }
      x.resplen2 = 1;
      return this.#resplen;
    }
    x.gotsomewhere = true;
    x.resplen2 = 0;
    return 0;
  }

  /** The socket reported an error (an ICMP port unreachable, most often). */
  #failed(err: Error): Step {
    this.#flush((err as NodeJS.ErrnoException).code === "ECONNREFUSED" ? "refused (ICMP)" : err.message);
    this.#x.resplen2 = 0;
    return 0;
  }

  /** A packet came. */
  async #received(got: Buffer): Promise<Step> {
    const x = this.#x;
    x.gotsomewhere = true;
    let r: Msg;
    try {
      r = decode(got);
    } catch {
      if (got.length < 12) {
        this.#flush("reply shorter than a header");
        x.resplen2 = 0;
        return 0;
      }
      return WAIT; // res_queriesmatch cannot parse it: a spurious packet
    }
    const toFirst = (!this.#recv1 && !this.#recv2) || x.q2 === undefined;
    if (toFirst) x.buf1 = r;
    else x.buf2 = r;
    const matching = !this.#recv1 && answers(x.q1, r) ? 1 : !this.#recv2 && answers(x.q2, r) ? 2 : 0;
    if (matching === 0) return WAIT;
    if (toFirst) this.#resplen = got.length;
    else x.resplen2 = got.length;
    const referral = r.rcode === Rcode.NOERROR && r.answer.length === 0 && !r.aa && !r.ra;
    const noAdditional = r.additional.length === 0 && r.edns === undefined;
    if (REJECTING.has(r.rcode) || (referral && noAdditional)) return this.#rejected(r, matching);
    if (r.tc) {
      this.#report(matching, { reply: r, note: "truncated: retrying over TCP" });
      this.#flush("abandoned for TCP");
      x.vc = true;
      x.resplen2 = 0;
      return 1;
    }
    this.#report(matching, { reply: r });
    if (matching === 1) this.#recv1 = true;
    else this.#recv2 = true;
    if (this.#recv1 && this.#recv2) return this.#resplen;
    if (this.#single) {
      if (this.#reopen) await this.#reopenLink();
      this.#put(this.#recv1 ? 2 : 1);
    }
    return WAIT;
  }

  /** A reply glibc cannot use (SERVFAIL, NOTIMP, REFUSED, a referral) to query `matching`. */
  #rejected(r: Msg, matching: 1 | 2): Step {
    const x = this.#x;
    this.#report(matching, { reply: r, note: REJECTING.has(r.rcode) ? undefined : "referral: next server" });
    if (this.#recv1 || (x.q2 !== undefined && this.#recv2)) {
      x.resplen2 = 0;
      return this.#resplen;
    }
    if (x.q2 !== undefined && !this.#single) {
      // No data from this reply; wait for the other one.
      this.#resplen = 0;
      if (matching === 1) this.#recv1 = true;
      else this.#recv2 = true;
      return WAIT;
    }
    x.resplen2 = 0;
    return 0;
  }
}

/** A TCP connection to one server that can be awaited message by message (length-prefixed). */
class TcpLink {
  readonly #sock: TcpSocket;
  #data = Buffer.alloc(0);
  /** Why the connection ended, once it has. */
  #ended: string | undefined;
  #wake: (() => void) | undefined;

  constructor(server: Server) {
    this.#sock = tcpConnect({ host: server.address, port: server.port });
    this.#sock.on("data", (d: Buffer) => {
      this.#data = Buffer.concat([this.#data, d]);
      this.#wake?.();
    });
    this.#sock.on("error", (e: NodeJS.ErrnoException) => {
      this.#ended = e.code === "ECONNREFUSED" ? "refused (TCP)" : e.message;
      this.#wake?.();
    });
    this.#sock.on("close", () => {
      this.#ended ??= "connection closed";
      this.#wake?.();
    });
  }

  send(msg: Msg): void {
    this.#sock.write(tcpFrame(encode(msg)));
  }

  /** The next message's octets, or why none came by `deadline` (ms since the epoch). */
  async next(deadline: number): Promise<Buffer | string> {
    if (!(await this.#need(2, deadline))) return this.#ended ?? "no reply (timeout)";
    const rlen = this.#data.readUInt16BE(0);
    if (!(await this.#need(2 + rlen, deadline))) return this.#ended ?? "no reply (timeout)";
    const wire = this.#data.subarray(2, 2 + rlen);
    this.#data = this.#data.subarray(2 + rlen);
    return wire;
  }

  /** Waits until `len` octets are buffered; false when the connection ends or the deadline passes first. */
  async #need(len: number, deadline: number): Promise<boolean> {
    while (this.#data.length < len && this.#ended === undefined) {
      const wait = deadline - Date.now();
      if (wait <= 0) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    return this.#data.length >= len;
  }

  destroy(): void {
    this.#sock.destroy();
  }
}

/** send_vc: both queries over one TCP connection; glibc takes the replies as they are. */
async function sendVc(x: Exchange, server: Server, seconds: number, o: SendOptions): Promise<number> {
  const where = serverText(server);
  const qs = x.q2 === undefined ? [x.q1] : [x.q1, x.q2];
  const events = qs.map((q) => ({
    name: q.question[0].name,
    type: q.question[0].type,
    server: where,
    transport: "tcp" as const,
  }));
  const reported = new Set<number>();
  const fail = (note: string) => {
    events.forEach((e, i) => reported.has(i) || o.onEvent({ ...e, note }));
    x.resplen2 = 0;
    return 0;
  };
  const link = new TcpLink(server);
  const deadline = Date.now() + seconds * 1000;
  try {
    for (const q of qs) link.send(q);
    let recv1 = false;
    let recv2 = x.q2 === undefined;
    let resplen = 0;
    x.resplen2 = 0;
    for (let reads = 0; reads < 64; reads++) {
      const wire = await link.next(deadline);
      if (typeof wire === "string") return fail(wire);
      const rlen = wire.length;
      if (rlen < 12) return fail("reply shorter than a header");
      let r: Msg;
      try {
        r = decode(wire);
      } catch {
        // glibc takes any TCP reply; one we cannot decode counts here as an empty one.
        r = { ...replyTo(x.q1, wire[3] & 0x0f), id: wire.readUInt16BE(0) };
      }
      const toFirst = (!recv1 && !recv2) || x.q2 === undefined;
      if ((recv1 || r.id !== x.q1.id) && (recv2 || r.id !== x.q2?.id)) continue; // an old answer
      if (toFirst) {
        x.buf1 = r;
        resplen = rlen;
      } else {
        x.buf2 = r;
        x.resplen2 = rlen;
      }
      const which = !recv1 && r.id === x.q1.id ? 0 : 1;
      if (which === 0) recv1 = true;
      else recv2 = true;
      o.onEvent({ ...events[which], reply: r });
      reported.add(which);
      if (recv1 && recv2) return resplen;
    }
    return fail("too many unexpected replies");
  } finally {
    link.destroy();
  }
}
