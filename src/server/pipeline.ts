// The path of one query, shared by UDP and TCP:
//   scan header and question -> fast path (answer cache) -> on a miss: zone mux -> plugin chain ->
//   encode -> fit to the client's size (src/dns/fit.ts) -> bytes for the socket.
// A cache hit is answered synchronously, without a promise, a decode or an encode.

import type { Logger } from "pino";
import type { Block } from "./block.ts";
import {
  AnswerPolicy,
  SHUFFLED_REPLAY_SECONDS,
  cacheClock,
  type QueryDone,
  type Request,
} from "../plugin.ts";
import type { Msg } from "../dns/message.ts";
import { AnswerCache, CachedAnswer, rotate, rotationOf, type Meta } from "./answer-cache.ts";
import { answerCacheStats, serverStats } from "../metrics/server-stats.ts";
import { ZoneMux } from "./mux.ts";
import { ScannedQuery, scanQuery, errorReply, spelledQname, toQueryMsg, type Scanned } from "../dns/scan.ts";
import { encode, encodeUncached } from "../dns/encode.ts";
import { setTtls } from "../dns/wire-ttl.ts";
import { fitReply } from "../dns/fit.ts";
import { newQuery, replyTo, type RR } from "../dns/message.ts";
import { decode } from "../dns/decode.ts";
import { wireKey } from "../dns/name.ts";
import { Class, EDNS_UDP_SIZE, PLAIN_UDP_SIZE, Rcode, Type } from "../dns/constants.ts";

export type Proto = "udp" | "tcp";

export interface Peer {
  proto: Proto;
  remoteAddress: string;
  remotePort: number;
  localAddress: string;
  localPort: number;
  /** TCP: writes one message of a reply that takes several (Request.stream). */
  write?: (msg: Buffer) => Promise<boolean>;
}

/** Nested internal lookups allowed (an ExternalName pointing at an ExternalName...). */
const MAX_LOOKUP_DEPTH = 8;

/** Longest a reply may be replayed from the answer cache, whatever its TTLs say. */
const MAX_CACHE_SECONDS = 3600;

/** How long a `stable` reply is replayed: its plugin invalidates it on change, so this bound only
 * limits the damage of an invalidation that a bug would miss. */
export const STABLE_CACHE_SECONDS = 60;

/** What a stored reply is filed under and how it is finished: from the client's scanned query, or from
 * an internal lookup's name. */
interface Question {
  key: string;
  questionEnd: number;
  query: Msg;
}

export class Pipeline {
  /** "dns://:53": the server as CoreDNS names it in logs and metrics (set again once the port is bound). */
  label: string;
  readonly mux = new ZoneMux<Block>();
  readonly cache: AnswerCache;
  readonly #log: Logger;
  /** A clock tests inject; undefined is cacheClock, read once per query with the duration's start. */
  readonly #now: (() => number) | undefined;
  /** What the finish hooks see, filled anew for every query they run for (they must not keep it). */
  readonly #done = new FinishedQuery();
  /** What the fast path scans every query into; the slow path keeps a copy. */
  readonly #scan = new ScannedQuery();
  readonly #metas = new Map<Block, Map<string, Meta>>();
  /** Queries answered through the chain and not finished yet (for graceful stop). */
  inFlight = 0;

  constructor(label: string, log: Logger, cache = new AnswerCache(), now?: () => number) {
    this.label = label;
    this.#log = log;
    this.cache = cache;
    this.#now = now;
  }

  /** The reply to one query packet, or undefined to drop it. The caller may reuse `peer` for its next
   * packet once this returns: what a reply computed later needs of it is copied. */
  handle(buf: Buffer, peer: Peer): Buffer | undefined | Promise<Buffer | undefined> {
    const s = scanQuery(buf, this.#scan);
    if ("drop" in s) return s.drop ? undefined : errorReply(buf, s);

    const maxSize = peer.proto === "tcp" ? 65535 : s.udpSize > 0 ? clampUdp(s.udpSize) : PLAIN_UDP_SIZE;
    const start = performance.now();
    const now = this.#now === undefined ? performance.timeOrigin + start : this.#now();
    const hit = this.cache.get(s.key, now);
    if (hit === undefined || now >= hit.expires) {
      answerCacheStats.misses++;
      return this.#slow(buf, s.copy(), { ...peer }, maxSize, start, hit);
    }
    // A reply `cache` keeps goes out with its time left as every TTL, and may be due for a refresh.
    let ttl = -1;
    const kept = hit.kept;
    if (kept !== undefined) {
      const left = kept.ttl - Math.floor((now - kept.stored) / 1000);
      if (kept.keeper.prefetch !== undefined && kept.keeper.due(hit, left, now)) {
        answerCacheStats.misses++;
        return this.#slow(buf, s.copy(), { ...peer }, maxSize, start, hit);
      }
      ttl = kept.keeper.keepTtl ? kept.ttl : left;
    }
    const seen = hit.seenBy;
    if (seen !== undefined) {
      seen.requests++;
      if (kept !== undefined) seen.hits[kept.kind]++;
      else seen.misses++;
    }
    answerCacheStats.hits++;
    const meta = hit.meta;
    const block = meta.owner as Block;
    const out = Buffer.allocUnsafe(hit.wire.length);
    hit.copyInto(out);
    // The client's ID and spelling of the question (0x20), and its RD and CD bits.
    out[0] = buf[0];
    out[1] = buf[1];
    out[2] = (out[2] & 0xfe) | (buf[2] & 0x01);
    out[3] = (out[3] & 0xef) | (buf[3] & 0x10);
    for (let i = 12, end = s.questionEnd; i < end; i++) out[i] = buf[i];
    if (hit.rotation !== undefined) rotate(out, hit.rotation);
    if (ttl >= 0) setTtls(out, s.questionEnd, ttl);
    // Too big for this client (or for the block's bufsize): cut on the wire, as the slow path would
    // (RFC 2181 9, dns/fit.ts).
    const limit =
      peer.proto === "udp" && block.udpSize !== undefined ? Math.min(maxSize, block.udpSize) : maxSize;
    let sent: Buffer | undefined = out.length > limit ? fitReply(out, s.questionEnd, limit) : out;
    if (block.rrl !== undefined && peer.proto === "udp") {
      sent = block.rrl.limit(sent, s, peer.remoteAddress, now);
      if (sent === undefined) return undefined;
    }
    if (block.hooks.length > 0) {
      this.#finish(block, s, buf.length, peer, meta.rcode, sent, start, true, meta.plugin);
    }
    return sent;
  }

  async #slow(
    buf: Buffer,
    s: Scanned,
    peer: Peer,
    maxSize: number,
    start: number,
    stored: CachedAnswer | undefined,
  ): Promise<Buffer | undefined> {
    const query = toQueryMsg(s);
    // An IXFR names the client's version by the SOA in its authority section (RFC 1995 3).
    if (s.qtype === Type.IXFR) query.authority = authorityOf(buf);
    const m = this.mux.match(s.qname);
    if (s.qclass !== Class.IN && s.qclass !== Class.CH && s.qclass !== Class.ANY) {
      return this.#simple(buf, s, query, Rcode.NOTIMP);
    }
    if (m === undefined) return this.#simple(buf, s, query, Rcode.REFUSED);
    const block = m.value;
    if (peer.proto === "udp" && block.udpSize !== undefined) maxSize = Math.min(maxSize, block.udpSize);
    const q: Question = { key: s.key, questionEnd: s.questionEnd, query };
    let streamed = 0;
    const write = peer.write;
    const req: Request = {
      msg: query,
      qname: s.qname,
      spelled: spelledQname(buf, s.questionEnd),
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
      cache: new AnswerPolicy(),
      stored,
      refresh: (fetch) => this.#refresh(q, block, req, fetch),
      stream:
        write &&
        ((part) => {
          normalise(part, query);
          const bytes = encodeUncached(part);
          buf.copy(bytes, 12, 12, s.questionEnd);
          streamed += bytes.length;
          return write(bytes);
        }),
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
    if (req.noReply) return undefined;
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
    const out = fitReply(full, s.questionEnd, maxSize);
    buf.copy(out, 12, 12, s.questionEnd);

    this.#file(q, block, reply, full, req, generation);
    // A response over its rate limit (`rrl`) is dropped, or sent empty and truncated; it was stored.
    let sent: Buffer | undefined = out;
    if (block.rrl !== undefined && peer.proto === "udp") {
      sent = block.rrl.limit(out, s, peer.remoteAddress, this.#clock());
      if (sent === undefined) return undefined;
    }
    if (block.hooks.length > 0) {
      const plugin = req.answeredBy ?? "";
      this.#finish(block, s, buf.length, peer, reply.rcode, sent, start, false, plugin, streamed);
    }
    return sent;
  }

  /** Request.refresh: the fetch runs on a request of its own, and the reply is stored only if the data
   * behind it did not change while it ran. */
  async #refresh(
    q: Question,
    block: Block,
    client: Request,
    fetch: (req: Request) => Promise<Msg | undefined>,
  ): Promise<CachedAnswer | undefined> {
    const generation = this.cache.generation;
    const own: Request = {
      ...client,
      cache: new AnswerPolicy(),
      stored: undefined,
      refresh: undefined,
      answeredBy: undefined,
    };
    const reply = await fetch(own);
    return reply === undefined ? undefined : this.#store(q, block, reply, own, generation);
  }

  /** Encodes and stores a reply produced away from a client's query (a refresh, an internal lookup). */
  #store(q: Question, block: Block, reply: Msg, req: Request, generation: number): CachedAnswer | undefined {
    normalise(reply, q.query);
    try {
      return this.#file(q, block, reply, encode(reply), req, generation);
    } catch (err) {
      this.#log.error({ err, qname: q.query.question[0].name }, "a reply to store could not be encoded");
      return undefined;
    }
  }

  /** Puts an encoded reply in the answer cache when the request's policy allows, for as long as it
   * allows. */
  #file(
    q: Question,
    block: Block,
    reply: Msg,
    full: Buffer,
    req: Request,
    generation: number,
  ): CachedAnswer | undefined {
    const policy = req.cache;
    if (policy.private || reply.tc) return undefined;
    const kept = policy.kept;
    if (kept === undefined && reply.rcode !== Rcode.NOERROR && reply.rcode !== Rcode.NXDOMAIN)
      return undefined;
    const now = this.#clock();
    const rotation = policy.rotate ? rotationOf(full, q.questionEnd) : undefined;
    // A rotation asked for and not possible: this order is replayed for a short while only.
    const replay = policy.rotate && rotation === undefined ? SHUFFLED_REPLAY_SECONDS : policy.maxAge;
    let expires: number;
    let dropAt: number;
    if (kept !== undefined) {
      const end = kept.stored + kept.ttl * 1000;
      expires = Math.min(end, now + replay * 1000);
      dropAt = end + kept.keeper.staleMs;
      if (dropAt <= now) return undefined;
    } else {
      const ttl = Math.min(replay, MAX_CACHE_SECONDS, policy.stable ? STABLE_CACHE_SECONDS : minTtl(reply));
      if (ttl <= 0) return undefined;
      expires = dropAt = now + ttl * 1000;
    }
    const entry = new CachedAnswer({
      bytes: full,
      expires,
      dropAt,
      // A hit on what `cache` keeps is the cache's answer, as CoreDNS labels it.
      meta: this.#meta(block, reply.rcode, kept ? "cache" : (req.answeredBy ?? "")),
      rotation,
      kept,
      seenBy: policy.seenBy,
    });
    // The same kept reply filed again (a new order for loadbalance) keeps its popularity and refresh.
    const before = req.stored;
    if (kept !== undefined && before?.kept === kept) {
      entry.hits = before.hits;
      entry.lastHit = before.lastHit;
      entry.refreshing = before.refreshing;
    }
    this.cache.set(q.key, entry, generation);
    return entry;
  }

  /** An internal query through the zone mux and the chain, for plugins (SetupContext.lookup): no finish
   * hooks, and a failure is a SERVFAIL reply rather than an exception. It answers from and fills the
   * answer cache only through `cache` (as a client without EDNS would see it). */
  async lookup(name: string, qtype: number, depth: number): Promise<Msg> {
    const query = newQuery(name, qtype);
    const m = this.mux.match(name);
    if (m === undefined) return replyTo(query, Rcode.REFUSED);
    if (depth > MAX_LOOKUP_DEPTH) {
      this.#log.warn({ qname: name, qtype, depth }, "internal lookups nested too deep; answering SERVFAIL");
      return replyTo(query, Rcode.SERVFAIL);
    }
    const key = lookupKey(name, qtype);
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
      cache: new AnswerPolicy(),
      stored: this.cache.get(key, this.#clock()),
      depth,
    };
    const generation = this.cache.generation;
    try {
      const reply = await m.value.chain.serve(req);
      if (req.cache.kept !== undefined) {
        const copy = { ...reply, answer: [...reply.answer], authority: [...reply.authority] };
        this.#store({ key, questionEnd: 12 + key.length - 1, query }, m.value, copy, req, generation);
      }
      return reply;
    } catch (err) {
      this.#log.error({ err, qname: name, qtype }, "plugin chain failed in an internal lookup");
      return replyTo(query, Rcode.SERVFAIL);
    }
  }

  /** The one Meta of these values for this block (there are a few per block). */
  #meta(owner: Block, rcode: number, plugin: string): Meta {
    let byBlock = this.#metas.get(owner);
    if (byBlock === undefined) this.#metas.set(owner, (byBlock = new Map()));
    const key = `${rcode} ${plugin}`;
    let m = byBlock.get(key);
    if (m === undefined) byBlock.set(key, (m = { rcode, plugin, owner }));
    return m;
  }

  #clock(): number {
    return this.#now === undefined ? cacheClock() : this.#now();
  }

  /** A reply with only an rcode, for queries no block may answer: header, question and OPT, which
   * always fit 512 octets. */
  #simple(buf: Buffer, s: Scanned, query: Msg, rcode: number): Buffer {
    const reply = replyTo(query, rcode);
    normalise(reply, query);
    const out = encode(reply);
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
    sent: Buffer,
    start: number,
    cached: boolean,
    plugin: string,
    /** Octets of the messages streamed before `sent` (a zone transfer). */
    streamed = 0,
  ): void {
    const done = this.#done;
    done.reset(s);
    done.server = this.label;
    done.zone = block.zones[0];
    done.proto = peer.proto;
    done.remoteAddress = peer.remoteAddress;
    done.remotePort = peer.remotePort;
    done.size = size;
    done.rcode = rcode;
    done.header = (sent[2] << 8) | sent[3];
    done.rsize = sent.length + streamed;
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

/** What the finish hooks see of a query: one per pipeline, filled anew for each query (hooks run
 * synchronously and must not keep it). The text qname is built only when a hook reads it (log does,
 * the metrics hook does not): one string less per query answered with only metrics on. */
class FinishedQuery implements QueryDone {
  server = "";
  zone = "";
  proto: Proto = "udp";
  remoteAddress = "";
  remotePort = 0;
  id = 0;
  qtype = 0;
  qclass = 0;
  size = 0;
  do = false;
  bufsize = PLAIN_UDP_SIZE;
  rcode = 0;
  /** Octets 2 and 3 of the reply sent: its flags. */
  header = 0;
  rsize = 0;
  duration = 0;
  cached = false;
  plugin = "";
  #scanned: Scanned | undefined = undefined;

  reset(s: Scanned): void {
    this.id = s.id;
    this.qtype = s.qtype;
    this.qclass = s.qclass;
    this.do = s.dnssecOk;
    this.bufsize = s.udpSize > 0 ? s.udpSize : PLAIN_UDP_SIZE;
    this.#scanned = s;
  }

  get qname(): string {
    return this.#scanned?.qname ?? ".";
  }

  /** The reply's flags as dig prints them ("qr,aa,rd"): only log reads them. */
  get rflags(): string {
    const h = this.header;
    const f: string[] = [];
    if (h & 0x8000) f.push("qr");
    if (h & 0x0400) f.push("aa");
    if (h & 0x0200) f.push("tc");
    if (h & 0x0100) f.push("rd");
    if (h & 0x0080) f.push("ra");
    if (h & 0x0020) f.push("ad");
    if (h & 0x0010) f.push("cd");
    return f.join(",");
  }
}

/** What every reply gets whatever the plugin did: the query's ID and question, QR, and our EDNS, with
 * the options the plugins put in the reply (nsid's identifier). */
function normalise(reply: Msg, query: Msg): void {
  reply.id = query.id;
  reply.qr = true;
  reply.opcode = query.opcode;
  reply.rd = query.rd;
  reply.cd = query.cd;
  reply.question = query.question;
  if (query.edns) {
    const options = reply.edns?.options ?? [];
    reply.edns = { udpSize: EDNS_UDP_SIZE, version: 0, do: query.edns.do, options };
  } else {
    reply.edns = undefined;
    if (reply.rcode > 15) reply.rcode = Rcode.SERVFAIL;
  }
}

/** The answer-cache key of a query without EDNS for a canonical name (see Scanned.key). */
function lookupKey(name: string, qtype: number): string {
  return wireKey(name) + String.fromCharCode(qtype >> 8, qtype & 0xff, 0, Class.IN) + "0";
}

/** The authority section of a query the scan passed; empty if it does not decode after all. */
function authorityOf(buf: Buffer): RR[] {
  try {
    return decode(buf).authority;
  } catch {
    return [];
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
