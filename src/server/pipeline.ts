// The path of one query, shared by UDP and TCP:
//   scan header and question -> answer store (src/answers/: a stored reply is replayed) -> on a miss,
//   the wire lane (the block's handlers answer in the same turn when they can) -> else zone mux ->
//   plugin chain -> encode -> file in the store -> fit to the client's size (src/dns/fit.ts) -> bytes.
// A replay and a lane answer are synchronous: no promise, decode or decoded reply; a replay allocates
// nothing when the engine gives an output buffer (handleInto).

import type { Logger } from "pino";
import { zoneOf, type Block } from "./block.ts";
import type { Request } from "../chain/request.ts";
import { FinishedQuery } from "./finished-query.ts";
import { PluginError } from "../chain/plugin-error.ts";
import { panic } from "../runtime/panic.ts";
import type { Peer } from "./peer.ts";
import { Turn } from "./turn.ts";
import { AnswerPolicy, TIME_ORIGIN, cacheClock, type StoredAnswer } from "../answers/policy.ts";
import type { Msg } from "../dns/message.ts";
import { Answers, BIG_REPLY_OCTETS, Filing, SLOW } from "../answers/answers.ts";
import { NO_SLOT } from "../answers/store.ts";
import { replayInto, writeFor } from "../answers/replay.ts";
import { DIRECT, Lane } from "../answers/lane.ts";
import { VIEW_OCTET, hashBytes } from "../dns/key.ts";
import { answerCacheStats, memoryStats, serverStats } from "../metrics/server-stats.ts";
import { DROPPED_ZONES, countDropped } from "./dropped.ts";
import { ZoneMux } from "./mux.ts";
import type { Views, Match } from "./views.ts";
import { ClientCosts, REFUSE } from "./client-costs.ts";
import { memoryBudget } from "./memory-budget.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { ScannedQuery, scanQuery, errorReply, spelledQname, toQueryMsg, type Scanned } from "../dns/scan.ts";
import { encode } from "../dns/encode.ts";
import { fitReply } from "../dns/fit.ts";
import { newQuery, replyTo } from "../dns/message.ts";
import { Class, EDNS_UDP_SIZE, Opcode, Rcode, Type } from "../dns/constants.ts";
import { authorityOf, isIPv4Client, lookupKey, maxSizeOf, normalise, simpleReply } from "./query-parts.ts";
import type { ClientQuestion, Question } from "./question.ts";
import { checkSigned, type ReplySigner } from "./signed-query.ts";
import { ThrottledWarning } from "./throttled-warning.ts";
import { asksPadding } from "../dns/padding.ts";

export type { Peer, Proto } from "./peer.ts";

/** Nested internal lookups allowed (an ExternalName pointing at an ExternalName...). */
const MAX_LOOKUP_DEPTH = 8;

export { STABLE_CACHE_SECONDS } from "../answers/policy.ts";

/** The largest UDP reply: what handleInto's UDP callers keep room for (every reply is fitted to the
 * client's size, at most what we advertise in EDNS). */
export const MAX_UDP_REPLY = EDNS_UDP_SIZE;

/** How a query goes to the chain: the store's entry for it, the signer of a signed query, its block
 * when the caller knows it, and whether `trace` sampled it. */
interface ChainOptions {
  stored?: StoredAnswer;
  signer?: ReplySigner;
  match?: Match;
  sampled?: boolean;
}

export class Pipeline {
  /** "dns://:53": the server as CoreDNS names it in logs and metrics (set again once the port is bound). */
  label: string;
  /** With several bind addresses, the label of each ("dns://10.0.0.1:53"): CoreDNS runs a server per
   * address, so a query's metrics name the one it came to (set once listening, instance.ts). */
  addressLabels: ReadonlyMap<string, string> | undefined = undefined;
  readonly mux = new ZoneMux<Block>();
  readonly answers: Answers;
  readonly #log: Logger;
  /** Logged 10 s apart at most: a loop of ExternalNames meets the nesting limit on every query. */
  readonly #tooDeep: ThrottledWarning;
  /** A clock tests inject; undefined is cacheClock, read once per query with the duration's start. */
  readonly #now: (() => number) | undefined;
  /** What the finish hooks see, filled anew for every query they run for (they must not keep it). */
  readonly #done = new FinishedQuery();
  /** What the fast path scans every query into; the slow path keeps a copy. */
  readonly #scan = new ScannedQuery();
  readonly #lane: Lane;
  readonly #filing = new Filing();
  readonly #turn = new Turn();
  /** [0]: performance.now() when the query of this turn arrived. */
  readonly #times = new Float64Array(1);
  /** Queries answered through the chain and not finished yet (for graceful stop). */
  inFlight = 0;
  /** A block of this listener answers AAAA by the client's address family (BlockSettings.familyKeys):
   * an IPv4 client's AAAA question is keyed apart. */
  familyKeys = false;
  /** What each client has cost lately: one past its share waits (src/server/client-costs.ts). */
  costs = new ClientCosts();
  /** Set (instance.ts) once a block of this listener has a `view`: each query's block is then chosen
   * before the answer store is asked, and the key carries its view (views.ts). */
  views: Views | undefined = undefined;
  /** Set (instance.ts) once a block of this listener has `trace`: each query's block is then chosen
   * before the answer store is asked, for its trace to sample (BlockSettings.trace). */
  traced = false;

  constructor(label: string, log: Logger, answers = new Answers(), now?: () => number) {
    this.label = label;
    this.#log = log;
    this.#tooDeep = new ThrottledWarning(log, "internal lookups nested too deep; SERVFAIL", 10_000);
    this.answers = answers;
    this.#lane = new Lane(answers);
    this.#now = now;
  }

  /** The reply to one query packet, or undefined to drop it. The caller may reuse `peer` for its next
   * packet once this returns: what a reply computed later needs of it is copied. */
  handle(buf: Buffer, peer: Peer): Buffer | undefined | Promise<Buffer | undefined> {
    const r = this.#answer(buf, buf.length, peer, undefined, 0);
    if (typeof r !== "number") return r;
    return r === 0 ? undefined : this.#out!;
  }

  /**
   * handle() for an engine with an output buffer: the query is buf[0..length) (buf may be reused once
   * this returns); a reply answered now is written at out[at..] (which has room for the largest reply
   * of the transport: MAX_UDP_REPLY for UDP) and its length returned, 0 for none; a reply that takes
   * the chain comes as a promise.
   */
  handleInto(
    buf: Buffer,
    length: number,
    peer: Peer,
    out: Buffer,
    at: number,
  ): number | Promise<Buffer | undefined> {
    const r = this.#answer(buf, length, peer, out, at);
    if (typeof r !== "number" || r === 0 || out === this.#out) return r;
    // Built in a Buffer of its own (an error reply, a cut one, rrl's): copied.
    const b = this.#out!;
    b.copy(out, at);
    return b.length;
  }

  /** The last reply #answer built in a Buffer of its own (when it returned a length). */
  #out: Buffer | undefined = undefined;

  /** Answers a query: a length (0: nothing to send) with the reply in `out` at `at`, or in #out when
   * `out` is undefined or the reply had to be built apart; or a promise from the chain. */
  #answer(
    buf: Buffer,
    length: number,
    peer: Peer,
    out: Buffer | undefined,
    at: number,
  ): number | Promise<Buffer | undefined> {
    const s = scanQuery(buf, this.#scan, length);
    if ("drop" in s) {
      if (s.drop) return 0;
      const signed = s.tsig >= 0 ? checkSigned(buf.subarray(0, length), s, this.mux) : undefined;
      if (signed !== undefined && "scan" in signed) {
        signed.signer.pad = peer.padded === true && asksPadding(signed.scan.packet);
        const match = this.views?.choose(signed.scan, length, peer);
        const o = { signer: signed.signer, match };
        return this.#slow(signed.scan, { ...peer }, maxSizeOf(signed.scan, peer), performance.now(), o);
      }
      this.#out = signed?.reply ?? errorReply(length === buf.length ? buf : buf.subarray(0, length), s);
      return this.#out.length;
    }
    if (this.familyKeys && s.qtype === Type.AAAA && isIPv4Client(peer.remoteAddress)) s.keyApartForIPv4();
    const maxSize = maxSizeOf(s, peer);
    // Times live in typed arrays: a double passed to a call V8 does not inline is a number allocated.
    const times = this.#times;
    times[0] = performance.now();
    const views = this.views;
    const chosen = views?.choose(s, length, peer);
    // A NOTIFY (the one other opcode the scan lets through) is never replayed nor stored: its question
    // names a zone as a query's would. Nor is a query no view takes (views.ts): REFUSED or NOTIMP.
    if (s.opcode !== Opcode.QUERY || (views !== undefined && chosen === undefined)) {
      return this.#toChain(s, buf, length, peer, { match: chosen });
    }
    const answers = this.answers;
    answers.clock[0] = this.#now === undefined ? TIME_ORIGIN + times[0] : this.#now();
    let slot = answers.lookup(s.keyBytes, 0, s.keyLength, s.keyHash);
    // With views the block is chosen already; else it is looked up when needed.
    let m = chosen;
    if (this.traced && !answers.quiet) {
      // A query `trace` samples takes the chain, stored reply or not (cache answers it from there).
      m ??= this.mux.matchQuery(s);
      if (m?.value.trace?.sample() === true)
        return this.#toChain(s, buf, length, peer, { stored: answers.handle(slot), match: m, sampled: true });
    }
    let ttl = slot === NO_SLOT ? SLOW : answers.replayTtl(slot);
    let plugin = "";
    if (ttl === SLOW) {
      answerCacheStats.misses++;
      const stored = slot;
      m ??= this.mux.match(s.qname);
      slot = stored === NO_SLOT ? this.#runLane(s, buf, m) : NO_SLOT;
      if (slot === NO_SLOT)
        return this.#toChain(s, buf, length, peer, { stored: answers.handle(stored), match: m });
      answerCacheStats.lane++;
      plugin = this.#lane.plugin;
      // Filed just now, or DIRECT: a kept reply goes out with its whole TTL, any other as encoded.
      ttl = slot === DIRECT ? this.#lane.direct.ttl : answers.store.ttl(slot);
    } else {
      answers.countHit(slot);
    }
    const t = this.#turn;
    t.packet = buf;
    t.length = length;
    t.questionEnd = s.questionEnd;
    t.peer = peer;
    t.maxSize = maxSize;
    t.out = out;
    t.at = at;
    t.ttl = ttl;
    t.adWanted = s.ad || s.dnssecOk;
    return this.#replay(slot, plugin);
  }

  /** Sends the reply in `slot` (DIRECT: the lane's unfiled one) for this turn's query (#turn, #scan):
   * into its `out` when it fits the client and no rate limit applies, else built apart in #out.
   * `plugin` labels a reply the lane just answered ("": a replay, labelled by the plugin that stored it). */
  #replay(slot: number, plugin: string): number {
    const t = this.#turn;
    const s = this.#scan;
    const peer = t.peer!;
    const out = t.out;
    const answers = this.answers;
    const direct = slot === DIRECT ? this.#lane.direct : undefined;
    const meta = direct ?? answers.meta(slot);
    const block = meta.owner as Block;
    const limit =
      peer.proto === "udp" && block.udpSize !== undefined ? Math.min(t.maxSize, block.udpSize) : t.maxSize;
    const size = direct?.length ?? answers.store.replyLength(slot);
    if (size > MAX_UDP_REPLY) this.costs.chargeReplay(peer.remoteAddress, size, this.#times[0]);
    let sent: Buffer | undefined;
    let n: number;
    const rrl = answers.quiet ? undefined : block.rrl;
    if (out !== undefined && size <= limit && rrl === undefined) {
      n = direct ? writeFor(direct.bytes, size, t, out, t.at) : replayInto(answers.store, slot, t, out, t.at);
      this.#out = out;
    } else {
      // Too big for this client (or for the block's bufsize): cut on the wire, as the slow path would
      // (RFC 2181 9, dns/fit.ts); or rate limited (`rrl`).
      const full = Buffer.allocUnsafe(size);
      if (direct) writeFor(direct.bytes, size, t, full, 0);
      else replayInto(answers.store, slot, t, full, 0);
      sent = size > limit ? fitReply(full, s.questionEnd, limit) : full;
      if (rrl !== undefined && peer.proto === "udp") {
        sent = rrl.limit(sent, s, peer.remoteAddress, answers.clock[0]);
        if (sent === undefined) return 0;
      }
      this.#out = sent;
      n = sent.length;
    }
    if (block.hooks.length > 0 && !answers.quiet) {
      const done = this.#finishing(block, s, t.length, peer);
      done.micros = ((performance.now() - this.#times[0]) * 1000) | 0;
      done.header = sent !== undefined ? (sent[2] << 8) | sent[3] : (out![t.at + 2] << 8) | out![t.at + 3];
      done.rcode = meta.rcode;
      done.rsize = n;
      done.queryBytes = t.packet;
      done.replyBytes = sent ?? out;
      done.replyAt = sent !== undefined ? 0 : t.at;
      done.replyLength = n;
      done.cached = plugin === "";
      done.plugin = done.cached ? meta.plugin : plugin;
      this.#finish(block);
    }
    return n;
  }

  /** The query of this turn (scanned into `s`) through the chain, on copies of its own: buf, the scan
   * and the peer are reused once this returns. */
  #toChain(s: ScannedQuery, buf: Buffer, length: number, peer: Peer, o: ChainOptions) {
    if (this.answers.quiet) return Promise.resolve(undefined); // a warm-up's: no plugin runs
    const own = Buffer.from(buf.subarray(0, length));
    return this.#slow(s.copy(own), { ...peer }, maxSizeOf(s, peer), this.#times[0], o);
  }

  /** The wire lane for a query the store does not hold: the slot of the reply it filed, or NO_SLOT. */
  #runLane(s: ScannedQuery, buf: Buffer, m: Match | undefined): number {
    if (s.qclass !== Class.IN || s.qtype === Type.AXFR || s.qtype === Type.IXFR) return NO_SLOT;
    const steps = m?.value.lane;
    if (steps === undefined) return NO_SLOT;
    try {
      return this.#lane.run(m!.value, steps, s, buf, this.label);
    } catch (err) {
      // The chain answers it; its errors plugin says why.
      this.#log.debug({ err, qname: s.qname }, "wire lane failed; taking the chain");
      return NO_SLOT;
    }
  }

  /** A client's query through the chain; `match`: its block when the caller knows it (on a listener
   * with views, undefined is none: REFUSED). */
  async #slow(
    s: ScannedQuery,
    peer: Peer,
    maxSize: number,
    start: number,
    { stored, signer, match, sampled }: ChainOptions,
  ): Promise<Buffer | undefined> {
    const buf = s.packet;
    const query = toQueryMsg(s);
    // An IXFR names the client's version by the SOA in its authority section (RFC 1995 3).
    if (s.qtype === Type.IXFR) query.authority = authorityOf(buf);
    const m = match ?? (this.views !== undefined ? undefined : this.mux.match(s.qname));
    if (s.qclass !== Class.IN && s.qclass !== Class.CH && s.qclass !== Class.ANY) {
      return simpleReply(buf, s, query, Rcode.NOTIMP);
    }
    if (m === undefined) {
      const out = simpleReply(buf, s, query, Rcode.REFUSED);
      return countDropped(this.#finishing(undefined, s, buf.length, peer), out, start, this.#log);
    }
    // A client past its share of the server waits (client-costs.ts), or is refused past a bound.
    const wait = this.costs.admit(peer.remoteAddress, start);
    if (wait === REFUSE) return simpleReply(buf, s, query, Rcode.REFUSED);
    if (wait > 0) await this.#defer(wait);
    const block = m.value;
    // NOTIFY goes to a block with a plugin that takes it (secondary); elsewhere it is not implemented.
    if (s.opcode === Opcode.NOTIFY && block.notify !== true) return simpleReply(buf, s, query, Rcode.NOTIMP);
    if (peer.proto === "udp" && block.udpSize !== undefined) maxSize = Math.min(maxSize, block.udpSize);
    const q: ClientQuestion = {
      key: s.keyBytes,
      keyLength: s.keyLength,
      hash: s.keyHash,
      questionEnd: s.questionEnd,
      query,
      block,
      packet: buf,
      scan: s,
      peer,
      maxSize,
      zone: m.zone,
      stored,
      streamed: 0,
      signer,
      sampled,
    };
    const req = this.#request(q);
    if (s.opcode !== Opcode.QUERY || signer !== undefined) req.cache.private = true;
    const generation = this.answers.generation;
    const reply = await this.#serve(block, req);
    if (req.noReply) return undefined;
    const full = this.#encode(reply, req);
    this.costs.chargeChain(peer.remoteAddress, full.length + q.streamed, start);
    if (memoryBudget.shedding && full.length > BIG_REPLY_OCTETS) {
      memoryStats.refused++;
      return simpleReply(buf, s, query, Rcode.REFUSED);
    }
    let out = fitReply(full, s.questionEnd, maxSize - (signer?.room ?? 0));
    buf.copy(out, 12, 12, s.questionEnd);
    if (signer !== undefined) out = signer.sign(out);

    this.#storeReply(q, reply, full, req, generation);
    // A response over its rate limit (`rrl`) is dropped, or sent empty and truncated; it was stored.
    let sent: Buffer | undefined = out;
    if (block.rrl !== undefined && peer.proto === "udp") {
      sent = block.rrl.limit(out, s, peer.remoteAddress, this.#clock());
      if (sent === undefined) return undefined;
    }
    if (block.hooks.length > 0) {
      const done = this.#finishing(block, s, buf.length, peer);
      done.header = (sent[2] << 8) | sent[3];
      done.micros = ((performance.now() - start) * 1000) | 0;
      done.rcode = reply.rcode;
      done.rsize = sent.length + q.streamed;
      done.queryBytes = buf;
      done.replyBytes = sent;
      done.replyAt = 0;
      done.replyLength = sent.length;
      done.cached = false;
      done.plugin = req.answeredBy ?? "";
      this.#finish(block);
    }
    return sent;
  }

  async #defer(ms: number): Promise<void> {
    this.costs.deferred++;
    try {
      await sleep(ms);
    } finally {
      this.costs.deferred--;
    }
  }

  /** The Request the chain sees for the client's query `q`. Over TCP its stream() writes a message of a
   * long reply ahead of the last, counting the octets in q.streamed. */
  #request(q: ClientQuestion): Request {
    const { packet, scan: s, peer, query } = q;
    const write = peer.write;
    const req: Request = {
      msg: query,
      qname: s.qname,
      spelled: spelledQname(packet, s.questionEnd),
      qtype: s.qtype,
      qclass: s.qclass,
      zone: q.zone,
      proto: peer.proto,
      remoteAddress: peer.remoteAddress,
      remotePort: peer.remotePort,
      localAddress: peer.localAddress,
      localPort: peer.localPort,
      server: this.addressLabels?.get(peer.localAddress) ?? this.label,
      maxSize: q.maxSize,
      tsig: q.signer?.keyName,
      sampled: q.sampled,
      cache: this.#policy(q.stored, (fetch) => this.#refresh(q, req, fetch)),
      stream:
        write &&
        ((part) => {
          normalise(part, query);
          let bytes = encode(part);
          packet.copy(bytes, 12, 12, s.questionEnd);
          if (q.signer !== undefined) bytes = q.signer.sign(bytes);
          q.streamed += bytes.length;
          return write(bytes);
        }),
    };
    return req;
  }

  /** The block's chain's reply to `req`. The top-level catch: a chain that throws is logged once
   * here and answered SERVFAIL, and the server keeps serving. */
  async #serve(block: Block, req: Request): Promise<Msg> {
    this.inFlight++;
    try {
      return await block.chain.serve(req);
    } catch (err) {
      serverStats.panics++;
      // `debug`: no recovery from what no plugin meant to throw.
      if (block.debug && !(err instanceof PluginError)) panic(err);
      this.#log.error({ err, qname: req.qname, qtype: req.qtype }, "plugin chain failed");
      return replyTo(req.msg, Rcode.SERVFAIL);
    } finally {
      this.inFlight--;
    }
  }

  /** The reply made whole (ID, question, EDNS) and encoded; a reply that cannot be encoded is logged
   * and becomes SERVFAIL. */
  #encode(reply: Msg, req: Request): Buffer {
    normalise(reply, req.msg);
    try {
      return encode(reply);
    } catch (err) {
      this.#log.error({ err, qname: req.qname, qtype: req.qtype }, "reply could not be encoded");
      // The reply becomes the failure: what is stored and counted is what was sent.
      Object.assign(reply, replyTo(req.msg, Rcode.SERVFAIL));
      normalise(reply, req.msg);
      return encode(reply);
    }
  }

  /** AnswerPolicy.refresh: the fetch runs on a request of its own, and the reply is stored only if the data
   * behind it did not change while it ran. */
  async #refresh(
    q: Question,
    client: Request,
    fetch: (req: Request) => Promise<Msg | undefined>,
  ): Promise<StoredAnswer | undefined> {
    const generation = this.answers.generation;
    const own: Request = { ...client, cache: new AnswerPolicy(), answeredBy: undefined };
    const reply = await fetch(own);
    if (reply === undefined) return undefined;
    return this.answers.handle(this.#encodeAndStore(q, reply, own, generation));
  }

  /** Encodes and stores a reply produced away from a client's query (a refresh, an internal lookup). */
  #encodeAndStore(q: Question, reply: Msg, req: Request, generation: number): number {
    normalise(reply, q.query);
    try {
      return this.#storeReply(q, reply, encode(reply), req, generation);
    } catch (err) {
      this.#log.error({ err, qname: q.query.question[0].name }, "a reply to store could not be encoded");
      return NO_SLOT;
    }
  }

  /** Puts an encoded reply in the answer store when the request's policy allows, for as long as it
   * allows: the slot, or NO_SLOT. */
  #storeReply(q: Question, reply: Msg, full: Buffer, req: Request, generation: number): number {
    const f = this.#filing;
    f.policy = req.cache;
    f.owner = q.block;
    f.rcode = reply.rcode;
    f.tc = reply.tc;
    f.plugin = req.answeredBy ?? "";
    f.reply = full;
    f.replyFrom = 0;
    f.replyLength = full.length;
    f.questionEnd = q.questionEnd;
    f.key = q.key;
    f.keyFrom = 0;
    f.keyLength = q.keyLength;
    f.hash = q.hash;
    f.generation = generation;
    this.answers.clock[0] = this.#clock();
    f.before = req.cache.stored;
    return this.answers.file(f);
  }

  /** An internal query through the zone mux and the chain, for plugins (SetupContext.lookup): no finish
   * hooks, and a failure is a SERVFAIL reply rather than an exception. It answers from and fills the
   * answer store only through `cache` (as a client without EDNS would see it). It carries the asking
   * query's `deadline` (Request.deadline), and past it answers SERVFAIL without running. `from`: the
   * block that asks (Views.forLookup). */
  async lookup(name: string, qtype: number, depth: number, deadline?: number, from?: Block): Promise<Msg> {
    const query = newQuery(name, qtype);
    const m = this.views !== undefined ? this.views.forLookup(name, from) : this.mux.match(name);
    if (m === undefined) return replyTo(query, Rcode.REFUSED);
    if (depth > MAX_LOOKUP_DEPTH) {
      this.#tooDeep.hit({ qname: name, qtype, depth });
      return replyTo(query, Rcode.SERVFAIL);
    }
    if (deadline !== undefined && Date.now() >= deadline) return replyTo(query, Rcode.SERVFAIL);
    const key = lookupKey(name, qtype);
    key[key.length - VIEW_OCTET] = m.value.viewKey ?? 0;
    const hash = hashBytes(key, 0, key.length);
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
      cache: this.#policy(this.#storedFor(key, hash), undefined),
      depth,
      deadline,
    };
    const generation = this.answers.generation;
    try {
      const reply = await m.value.chain.serve(req);
      if (req.cache.kept !== undefined) {
        const copy = { ...reply, answer: [...reply.answer], authority: [...reply.authority] };
        const q = {
          key,
          keyLength: key.length,
          hash,
          questionEnd: 12 + key.length - 1,
          query,
          block: m.value,
        };
        this.#encodeAndStore(q, copy, req, generation);
      }
      return reply;
    } catch (err) {
      this.#log.error({ err, qname: name, qtype }, "plugin chain failed in an internal lookup");
      return replyTo(query, Rcode.SERVFAIL);
    }
  }

  /** A new request's view of the answer store. */
  #policy(
    stored: StoredAnswer | undefined,
    refresh: AnswerPolicy<Request>["refresh"],
  ): AnswerPolicy<Request> {
    const p = new AnswerPolicy<Request>();
    p.stored = stored;
    p.refresh = refresh;
    return p;
  }

  #storedFor(key: Uint8Array, hash: number): StoredAnswer | undefined {
    this.answers.clock[0] = this.#clock();
    return this.answers.handle(this.answers.lookup(key, 0, key.length, hash));
  }

  #clock(): number {
    return this.#now === undefined ? cacheClock() : this.#now();
  }

  /** What the finish hooks see of `s` (`size` octets) from `peer`, answered in `block` (none: dropped.ts);
   * the caller adds the reply's side (rcode, header: its octets 2-3, rsize: with what was streamed before,
   * micros: where V8 optimized the double arithmetic, cached, plugin), then calls #finish. */
  #finishing(block: Block | undefined, s: Scanned, size: number, peer: Peer): FinishedQuery {
    const done = this.#done;
    done.reset(s);
    done.from(peer, size, this.addressLabels?.get(peer.localAddress) ?? this.label);
    const zones = block?.zones ?? DROPPED_ZONES;
    done.zone = zones.length === 1 ? zones[0] : zoneOf(zones, s.qname);
    return done;
  }

  /** Runs the block's finish hooks (metrics, log, dnstap) on the query #finishing filled; the octets
   * they saw are the engine's to reuse after. */
  #finish(block: Block): void {
    const done = this.#done;
    for (const hook of block.hooks) {
      try {
        hook(done);
      } catch (err) {
        this.#log.error({ err }, "finish hook failed");
      }
    }
    done.queryBytes = undefined;
    done.replyBytes = undefined;
  }
}
