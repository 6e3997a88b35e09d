// The path of one query, shared by UDP and TCP:
//   scan header and question -> fast path (answer cache) -> on a miss: zone mux -> plugin chain ->
//   encode -> fit to the client's size -> bytes for the socket.
// A cache hit is answered synchronously, without a promise, a decode or an encode.

import type { Logger } from "pino";
import type { Block } from "./block.ts";
import { SHUFFLED_REPLAY_SECONDS, type QueryDone, type Request } from "../plugin.ts";
import type { Msg } from "../dns/message.ts";
import { AnswerCache, rotateInto, rotationOf } from "./answer-cache.ts";
import { serverStats } from "../metrics/server-stats.ts";
import { ZoneMux } from "./mux.ts";
import { scanQuery, errorReply, toQueryMsg, type Scanned } from "../dns/scan.ts";
import { encode } from "../dns/encode.ts";
import { newQuery, replyTo } from "../dns/message.ts";
import { Class, EDNS_UDP_SIZE, PLAIN_UDP_SIZE, Rcode } from "../dns/constants.ts";

export type Proto = "udp" | "tcp";

export interface Peer {
  proto: Proto;
  remoteAddress: string;
  remotePort: number;
  localAddress: string;
  localPort: number;
}

/** Nested internal lookups allowed (an ExternalName pointing at an ExternalName...). */
const MAX_LOOKUP_DEPTH = 8;

/** Longest a reply may be replayed from the answer cache, whatever its TTLs say. */
const MAX_CACHE_SECONDS = 3600;

/** How long a `stable` reply is replayed: its plugin invalidates it on change, so this bound only
 * limits the damage of an invalidation that a bug would miss. */
export const STABLE_CACHE_SECONDS = 60;

export class Pipeline {
  /** "dns://:53": the server as CoreDNS names it in logs and metrics (set again once the port is bound). */
  label: string;
  readonly mux = new ZoneMux<Block>();
  readonly cache: AnswerCache;
  readonly #log: Logger;
  /** Queries answered through the chain and not finished yet (for graceful stop). */
  inFlight = 0;

  constructor(label: string, log: Logger, cache = new AnswerCache()) {
    this.label = label;
    this.#log = log;
    this.cache = cache;
  }

  /** The reply to one query packet, or undefined to drop it. */
  handle(buf: Buffer, peer: Peer): Buffer | undefined | Promise<Buffer | undefined> {
    const s = scanQuery(buf);
    if ("drop" in s) return s.drop ? undefined : errorReply(buf, s);

    const maxSize = peer.proto === "tcp" ? 65535 : s.edns ? clampUdp(s.edns.udpSize) : PLAIN_UDP_SIZE;
    const hit = this.cache.get(s.key, Date.now());
    if (hit !== undefined && hit.bytes.length <= maxSize) {
      const block = hit.owner as Block;
      const start = block.hooks.length > 0 ? performance.now() : 0;
      const out = Buffer.allocUnsafe(hit.bytes.length);
      // Uint8Array's own set and a loop: Buffer.copy's argument checks cost more than these short copies.
      out.set(hit.bytes);
      // The client's ID and spelling of the question (0x20), and its RD and CD bits.
      out[0] = buf[0];
      out[1] = buf[1];
      out[2] = (hit.bytes[2] & 0xfe) | (buf[2] & 0x01);
      out[3] = (hit.bytes[3] & 0xef) | (buf[3] & 0x10);
      for (let i = 12, end = s.questionEnd; i < end; i++) out[i] = buf[i];
      if (hit.rotation !== undefined) rotateInto(out, hit.bytes, hit.rotation);
      if (block.hooks.length > 0) {
        this.#finish(block, s, buf.length, peer, hit.rcode, hit.rflags, out.length, start, true, hit.plugin);
      }
      return out;
    }
    return this.#slow(buf, s, peer, maxSize, performance.now());
  }

  async #slow(
    buf: Buffer,
    s: Scanned,
    peer: Peer,
    maxSize: number,
    start: number,
  ): Promise<Buffer | undefined> {
    const query = toQueryMsg(s);
    const m = this.mux.match(s.qname);
    if (s.qclass !== Class.IN && s.qclass !== Class.CH && s.qclass !== Class.ANY) {
      return this.#simple(buf, s, query, Rcode.NOTIMP, maxSize);
    }
    if (m === undefined) return this.#simple(buf, s, query, Rcode.REFUSED, maxSize);
    const block = m.value;
    const req: Request = {
      msg: query,
      qname: s.qname,
      qtype: s.qtype,
      qclass: s.qclass,
      zone: m.zone,
      proto: peer.proto,
      remoteAddress: peer.remoteAddress,
      remotePort: peer.remotePort,
      localAddress: peer.localAddress,
      localPort: peer.localPort,
      server: this.label,
      maxSize,
      private: false,
    };
    const generation = this.cache.generation;
    let reply: Msg;
    this.inFlight++;
    try {
      reply = await block.chain.serve(req);
    } catch (err) {
      // The top-level catch: logged once here, answered SERVFAIL, the server keeps serving.
      serverStats.panics++;
      this.#log.error({ err, qname: s.qname, qtype: s.qtype }, "plugin chain failed");
      reply = replyTo(query, Rcode.SERVFAIL);
    } finally {
      this.inFlight--;
    }
    normalise(reply, query);
    let full: Buffer;
    try {
      full = encode(reply);
    } catch (err) {
      this.#log.error({ err, qname: s.qname, qtype: s.qtype }, "reply could not be encoded");
      reply = replyTo(query, Rcode.SERVFAIL);
      normalise(reply, query);
      full = encode(reply);
    }
    const out = full.length <= maxSize ? full : encode(reply, maxSize);
    buf.copy(out, 12, 12, s.questionEnd);
    const rflags = flagsText(reply, out.length < full.length);
    if (!req.private && !reply.tc && (reply.rcode === Rcode.NOERROR || reply.rcode === Rcode.NXDOMAIN)) {
      const rotation = req.rotate ? rotationOf(full, s.questionEnd) : undefined;
      const ttl = Math.min(
        req.maxAge ?? MAX_CACHE_SECONDS,
        req.stable ? STABLE_CACHE_SECONDS : minTtl(reply),
        // A rotation asked for and not possible: this order is replayed for a short while only.
        req.rotate && rotation === undefined ? SHUFFLED_REPLAY_SECONDS : MAX_CACHE_SECONDS,
      );
      if (ttl > 0) {
        this.cache.set(s.key, {
          bytes: full,
          generation,
          expires: Date.now() + ttl * 1000,
          rcode: reply.rcode,
          rflags: flagsText(reply, false),
          plugin: req.answeredBy ?? "",
          owner: block,
          rotation,
        });
      }
    }
    if (block.hooks.length > 0) {
      const plugin = req.answeredBy ?? "";
      this.#finish(block, s, buf.length, peer, reply.rcode, rflags, out.length, start, false, plugin);
    }
    return out;
  }

  /** An internal query through the zone mux and the chain, for plugins (SetupContext.lookup): no answer
   * cache, no finish hooks, and a failure is a SERVFAIL reply rather than an exception. */
  async lookup(name: string, qtype: number, depth: number): Promise<Msg> {
    const query = newQuery(name, qtype);
    const m = this.mux.match(name);
    if (m === undefined) return replyTo(query, Rcode.REFUSED);
    if (depth > MAX_LOOKUP_DEPTH) {
      this.#log.warn({ qname: name, qtype, depth }, "internal lookups nested too deep; answering SERVFAIL");
      return replyTo(query, Rcode.SERVFAIL);
    }
    const req: Request = {
      msg: query,
      qname: name,
      qtype,
      qclass: Class.IN,
      zone: m.zone,
      proto: "tcp",
      remoteAddress: "",
      remotePort: 0,
      localAddress: "",
      localPort: 0,
      server: this.label,
      maxSize: 65535,
      private: true,
      depth,
    };
    try {
      return await m.value.chain.serve(req);
    } catch (err) {
      this.#log.error({ err, qname: name, qtype }, "plugin chain failed in an internal lookup");
      return replyTo(query, Rcode.SERVFAIL);
    }
  }

  /** A reply with only an rcode, for queries no block may answer. */
  #simple(buf: Buffer, s: Scanned, query: Msg, rcode: number, maxSize: number): Buffer {
    const reply = replyTo(query, rcode);
    normalise(reply, query);
    const out = encode(reply, maxSize);
    buf.copy(out, 12, 12, s.questionEnd);
    return out;
  }

  /** Runs the block's finish hooks (metrics, log) for one answered query. */
  #finish(
    block: Block,
    s: Scanned,
    size: number,
    peer: Peer,
    rcode: number,
    rflags: string,
    rsize: number,
    start: number,
    cached: boolean,
    plugin: string,
  ): void {
    const done = new FinishedQuery(s);
    done.server = this.label;
    done.zone = block.zones[0];
    done.proto = peer.proto;
    done.remoteAddress = peer.remoteAddress;
    done.remotePort = peer.remotePort;
    done.size = size;
    done.rcode = rcode;
    done.rflags = rflags;
    done.rsize = rsize;
    done.duration = (performance.now() - start) / 1000;
    done.cached = cached;
    done.plugin = plugin;
    for (const hook of block.hooks) {
      try {
        hook(done);
      } catch (err) {
        this.#log.error({ err }, "finish hook failed");
      }
    }
  }
}

/** What the finish hooks see of a query. The text qname is built only when a hook reads it (log does,
 * the metrics hook does not): one string less per query answered with only metrics on. */
class FinishedQuery implements QueryDone {
  server = "";
  zone = "";
  proto: Proto = "udp";
  remoteAddress = "";
  remotePort = 0;
  readonly id: number;
  readonly qtype: number;
  readonly qclass: number;
  size = 0;
  readonly do: boolean;
  readonly bufsize: number;
  rcode = 0;
  rflags = "";
  rsize = 0;
  duration = 0;
  cached = false;
  plugin = "";
  readonly #scanned: Scanned;

  constructor(s: Scanned) {
    this.id = s.id;
    this.qtype = s.qtype;
    this.qclass = s.qclass;
    this.do = s.edns?.do ?? false;
    this.bufsize = s.edns?.udpSize ?? PLAIN_UDP_SIZE;
    this.#scanned = s;
  }

  get qname(): string {
    return this.#scanned.qname;
  }
}

/** What every reply gets whatever the plugin did: the query's ID and question, QR, and our EDNS. */
function normalise(reply: Msg, query: Msg): void {
  reply.id = query.id;
  reply.qr = true;
  reply.opcode = query.opcode;
  reply.rd = query.rd;
  reply.cd = query.cd;
  reply.question = query.question;
  if (query.edns) {
    reply.edns = { udpSize: EDNS_UDP_SIZE, version: 0, do: query.edns.do, options: [] };
  } else {
    reply.edns = undefined;
    if (reply.rcode > 15) reply.rcode = Rcode.SERVFAIL;
  }
}

/** UDP payload we send to an EDNS client: its size, at least 512, at most what we advertise. Capping
 * at 1232 avoids IP fragmentation on overlay networks (DNS flag day 2020). */
function clampUdp(size: number): number {
  return Math.max(PLAIN_UDP_SIZE, Math.min(size, EDNS_UDP_SIZE));
}

function minTtl(m: Msg): number {
  let ttl = MAX_CACHE_SECONDS;
  for (const rr of m.answer) if (rr.ttl < ttl) ttl = rr.ttl;
  for (const rr of m.authority) if (rr.ttl < ttl) ttl = rr.ttl;
  return ttl;
}

function flagsText(m: Msg, truncated: boolean): string {
  const f: string[] = [];
  if (m.qr) f.push("qr");
  if (m.aa) f.push("aa");
  if (m.tc || truncated) f.push("tc");
  if (m.rd) f.push("rd");
  if (m.ra) f.push("ra");
  if (m.ad) f.push("ad");
  if (m.cd) f.push("cd");
  return f.join(",");
}
