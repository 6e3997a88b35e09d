// The wire lane: a query the answer store misses, answered in the same turn when every handler it
// meets says how (Handler.lane), without a Request, a promise, a decoded query or a decoded reply. The
// answering plugin fills a reused message from its own data; the lane encodes it into the encoder's
// scratch with the question taken from the key's octets, and files it as the chain's reply would be
// filed. What a handler cannot do synchronously (a forward, a lookup, a first query before the sync),
// it hands back, and the query takes the chain as before: the lane is an optimisation, never a second
// set of rules (a handler's step carries out the decision its serve() makes: see
// plugins/kubernetes/answers/decision.ts).
//
// With `cache` in the block, the reply of the handlers after it is also filed once as a SOURCE entry
// (key.ts): the store's own copy of what kubernetes answers for that question, invalidated with the
// name like any other entry. When `cache` drops its copy (its capacity is reached: CoreDNS's default
// keeps 9,984 of each kind), the next query refills it from that source with a copy of octets instead
// of running the plugins again. An NXDOMAIN's first asking is answered but not filed (doorkeeper.ts):
// names asked once (random subdomains) pay one encode and one copy, and evict nothing.

import { spelledQname, type ScannedQuery } from "../dns/scan.ts";
import type { Msg, RR } from "../dns/message.ts";
import type { CacheCounters, CacheRules } from "./policy.ts";
import { LaneResult, type LaneQuery, type LaneReply, type LaneStep } from "./lane-step.ts";
import { AS_STORED, Answers, Filing, type Meta } from "./answers.ts";
import { Doorkeeper } from "./doorkeeper.ts";
import { DROP_AT, EXPIRES, FLAG, LAST_HIT, NO_SLOT, STORED } from "./store.ts";
import { KEY_TAIL, MAX_KEY, SOURCE, hashBytes } from "../dns/key.ts";
import { rotationOf } from "./replay.ts";
import { WireFacts } from "./wire-facts.ts";
import { AnswerPolicy, SHUFFLED_REPLAY_SECONDS } from "./policy.ts";
import { encodeInto, encoded } from "../dns/encode.ts";
import { EDNS_UDP_SIZE, EdnsOption, Rcode, Type } from "../dns/constants.ts";
import { answerCacheStats } from "../metrics/server-stats.ts";

/** The query as handlers see it in the lane: refilled for every query. */
class Query implements LaneQuery {
  qname = "";
  qtype = 0;
  qclass = 0;
  server = "";
  #s: ScannedQuery | undefined = undefined;
  #buf: Buffer | undefined = undefined;
  #mixedCase = false;

  fill(s: ScannedQuery, buf: Buffer, server: string): void {
    this.qname = s.qname;
    this.qtype = s.qtype;
    this.qclass = s.qclass;
    this.server = server;
    this.#s = s;
    this.#buf = buf;
    this.#mixedCase = hasUpper(buf, 12, s.questionEnd - 5);
  }

  /** Read from the packet only when the client spelled the name in mixed case (a string made). */
  get spelled(): string | undefined {
    return this.#mixedCase ? spelledQname(this.#buf!, this.#s!.questionEnd) : undefined;
  }

  get dnssecOk(): boolean {
    return this.#s!.dnssecOk;
  }

  option(code: number): boolean {
    // The key's state octet (scan.ts) says whether there is an OPT record and whether it holds a local
    // option or NSID: the record is decoded only when it may hold `code`.
    const local = code >= 65001 && code <= 65534;
    const bit = local ? 0x04 : code === EdnsOption.NSID ? 0x40 : 0x03;
    if ((this.#s!.keyState & bit) === 0) return false;
    const options = this.#s!.edns?.options ?? NO_OPTIONS;
    for (let i = 0; i < options.length; i++) if (options[i].code === code) return true;
    return false;
  }
}

const NO_OPTIONS: readonly { code: number }[] = [];

class Reply implements LaneReply {
  readonly msg: Msg = {
    id: 0,
    qr: true,
    opcode: 0,
    aa: false,
    tc: false,
    rd: false,
    ra: false,
    ad: false,
    cd: false,
    rcode: 0,
    question: [{ name: "", type: 0, class: 0 }],
    answer: [],
    authority: [],
    additional: [],
  };
  stable = false;
  plugin = "";
  readonly edns = { udpSize: EDNS_UDP_SIZE, version: 0, do: false, options: [] };

  reset(s: ScannedQuery): void {
    const m = this.msg;
    m.id = s.id;
    m.opcode = s.opcode;
    m.aa = m.tc = m.ra = m.ad = false;
    m.rd = s.rd;
    m.cd = s.cd;
    m.rcode = 0;
    const q = m.question[0];
    q.name = s.qname;
    q.type = s.qtype;
    q.class = s.qclass;
    m.answer = m.authority = m.additional = NONE;
    this.edns.do = s.dnssecOk;
    // The key's state says whether the query had an OPT record (see scan.ts).
    m.edns = (s.keyState & 0x03) !== 0 ? this.edns : undefined;
    this.stable = false;
    this.plugin = "";
  }
}

const NONE: RR[] = [];

/** What the lane knows of the query it files: one object, refilled for every query (the data plane
 * allocates nothing per query). */
class Filed {
  /** The block that owns what is filed (Meta.owner). */
  block: object = Filed;
  s: ScannedQuery | undefined = undefined;
  /** The cache that keeps the reply, and its counters (both or neither). */
  rules: CacheRules | undefined = undefined;
  counters: CacheCounters | undefined = undefined;
  /** loadbalance asked for the store's rotation on every replay. */
  rotate = false;
  /** Seconds the reply may be replayed at most (Infinity: until its name changes). */
  replay = Infinity;
  /** The plugin that answered. */
  plugin = "";
  /** The reply: bytes[0..length). */
  bytes: Uint8Array = NO_BYTES;
  length = 0;
}

const NO_BYTES = new Uint8Array(0);

/** run()'s result for a reply answered but not filed (an NXDOMAIN's first asking): Lane.direct. */
export const DIRECT = -2;

/** The reply run() answered without filing it, as the pipeline sends it: its octets (bytes[0..length),
 * the encoder's scratch, good until the next encode), the TTL to write into its records (`cache`'s,
 * as on a reply it keeps; AS_STORED: as encoded), and what the finish hooks report. */
export class DirectReply implements Meta {
  rcode = 0;
  plugin = "";
  owner: unknown = undefined;
  bytes: Uint8Array = NO_BYTES;
  length = 0;
  ttl = AS_STORED;
}

export class Lane {
  readonly #answers: Answers;
  readonly #q = new Query();
  readonly #reply = new Reply();
  readonly #filed = new Filed();
  readonly #filing = new Filing();
  readonly #facts = new WireFacts();
  readonly #sourceKey = new Uint8Array(MAX_KEY);
  readonly #policy = new AnswerPolicy();
  readonly #door = new Doorkeeper();
  /** The plugin whose answer the last run() filed (for the finish hooks). */
  plugin = "";
  /** The reply of the last run() that returned DIRECT. */
  readonly direct = new DirectReply();

  constructor(answers: Answers) {
    this.#answers = answers;
  }

  /**
   * Answers the query `s` (scanned from `buf`) into the store if the lane steps of the block's handlers
   * allow: returns the slot whose reply the client gets, DIRECT for a reply answered without being
   * filed (Lane.direct), or NO_SLOT for the chain. `block` owns what is filed (Meta.owner); `server`
   * labels the listener.
   */
  run(
    block: object,
    steps: readonly (LaneStep | undefined)[],
    s: ScannedQuery,
    buf: Buffer,
    server: string,
  ): number {
    const q = this.#q;
    q.fill(s, buf, server);
    const j = this.#filed;
    j.block = block;
    j.s = s;
    j.rules = j.counters = undefined;
    j.rotate = false;
    j.replay = Infinity;
    let shuffle: ((m: Msg) => void) | undefined;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i];
      if (step === undefined) return NO_SLOT;
      switch (step.kind) {
        case "pass":
          if (!step.passes(q)) return NO_SLOT;
          break;
        case "rotate":
          shuffle = step.shuffle;
          j.rotate = true;
          break;
        case "keep": {
          const counters = step.rules.counters(server, q.qname);
          if (counters === undefined) break;
          j.rules = step.rules;
          j.counters = counters;
          const source = this.#findSource(s);
          if (source !== NO_SLOT) return this.#refill(source);
          break;
        }
        case "answer": {
          const reply = this.#reply;
          reply.reset(s);
          const r = step.answer(q, reply);
          if (r === LaneResult.next) break;
          if (r === LaneResult.chain || !reply.stable) return NO_SLOT;
          return this.#answered(shuffle);
        }
      }
    }
    return NO_SLOT;
  }

  /** Files what the answering handler wrote: as the source and as `cache` keeps it when a cache
   * applies, else as the handler's own stable reply. A reply loadbalance must reorder in a way the
   * store's rotation cannot replay is shuffled once here and replayed for SHUFFLED_REPLAY_SECONDS, as
   * the chain would; it gets no source (a refill could not shuffle it). */
  #answered(shuffle: ((m: Msg) => void) | undefined): number {
    const j = this.#filed;
    const s = j.s!;
    const msg = this.#reply.msg;
    if (shuffle !== undefined && !rotatableOrPlain(msg)) {
      shuffle(msg);
      j.rotate = false;
      j.replay = SHUFFLED_REPLAY_SECONDS;
    }
    try {
      j.length = encodeInto(msg, s.keyBytes, 0, s.keyLength - KEY_TAIL);
    } catch {
      return NO_SLOT; // the chain answers it, and its errors plugin logs why
    }
    j.bytes = encoded();
    if ((j.bytes[2] & 0x02) !== 0) return NO_SLOT; // cut at 65535 octets: never stored
    j.plugin = this.plugin = this.#reply.plugin;
    if (msg.rcode === Rcode.NXDOMAIN && !this.#door.admits(s.keyHash)) return this.#direct(msg.rcode);
    if (j.rules === undefined) return this.#filePlain(msg.rcode, false);
    // The source holds the handlers' reply with its own TTLs, in pool 0 (the cache's copy, filed
    // next from the same octets, cannot evict it).
    if (j.replay === Infinity && this.#filePlain(msg.rcode, true) === NO_SLOT) return NO_SLOT;
    return this.#keep();
  }

  /** A source entry for this question that is still fresh, or NO_SLOT. */
  #findSource(s: ScannedQuery): number {
    const key = this.#sourceKeyOf(s);
    const store = this.#answers.store;
    const slot = this.#answers.lookup(key, 0, s.keyLength, hashBytes(key, 0, s.keyLength));
    return slot !== NO_SLOT && store.clock[0] < store.expires(slot) ? slot : NO_SLOT;
  }

  /** The cache's copy made again from the source: a copy of octets, no plugin run. */
  #refill(source: number): number {
    const answers = this.#answers;
    const j = this.#filed;
    j.plugin = this.plugin = answers.meta(source).plugin;
    answerCacheStats.refills++;
    j.length = answers.store.replyLength(source);
    j.bytes = scratchFor(j.length);
    answers.store.copyReply(source, j.bytes, 0);
    return this.#keep();
  }

  /** The reply answered as it is, not filed: what the cache counts and the TTL it gives are those of a
   * reply it keeps (CoreDNS's cache caps the TTLs of the reply it stores). */
  #direct(rcode: number): number {
    const j = this.#filed;
    const d = this.direct;
    d.owner = j.block;
    d.rcode = rcode;
    d.plugin = j.plugin;
    d.bytes = j.bytes;
    d.length = j.length;
    d.ttl = AS_STORED;
    if (j.rules !== undefined) {
      const ttl = this.#cacheTtl();
      if (ttl > 0) d.ttl = ttl;
    }
    return DIRECT;
  }

  /** A cache miss counted, and the TTL `cache` gives the reply in #filed (0: it keeps none); the
   * reply's facts are in #facts. */
  #cacheTtl(): number {
    const j = this.#filed;
    const s = j.s!;
    if (!this.#answers.quiet) {
      j.counters!.requests++;
      j.counters!.misses++;
    }
    const facts = this.#facts.read(j.bytes, 0, j.length, s.questionEnd, s.qtype);
    const kind = facts.kind;
    const said = facts.said;
    return kind === undefined ? 0 : j.rules!.ttlFor(s.qname, kind, facts.rcode, said < 0 ? undefined : said);
  }

  /** Files the reply under the client's key as `cache` keeps it (or, when it does not, as the plain
   * stable reply the chain would have filed), replayed for Filed.replay seconds at most. */
  #keep(): number {
    const answers = this.#answers;
    const j = this.#filed;
    const s = j.s!;
    const rules = j.rules!;
    const counters = j.counters!;
    const now = answers.store.clock[0];
    const ttl = this.#cacheTtl();
    const facts = this.#facts;
    const kind = facts.kind;
    if (kind === undefined || ttl <= 0) return this.#filePlain(facts.rcode, false);
    const d = answers.draft;
    d.pool = answers.poolFor(rules, kind);
    const t = d.times;
    t[EXPIRES] = now + Math.min(ttl, j.replay) * 1000;
    t[DROP_AT] = now + ttl * 1000 + rules.staleMs;
    d.ttl = ttl;
    t[STORED] = now;
    d.hits = 0;
    t[LAST_HIT] = now;
    d.rotation = j.rotate ? rotationOf(j.bytes, s.questionEnd, j.length) : 0;
    d.flags = kind === "success" && facts.answers ? FLAG.answers : 0;
    d.counters = answers.counterId(counters);
    d.meta = answers.metaId(j.block, facts.rcode, "cache");
    const f = this.#filing;
    this.#fillFiling(f, false);
    return answers.putDraft(f);
  }

  /** Files the reply the way the chain's stable reply is filed: under the client's key, or (`source`)
   * as the source entry under the SOURCE key, which is neither rotated nor counted by a cache. */
  #filePlain(rcode: number, source: boolean): number {
    const j = this.#filed;
    const p = this.#policy;
    p.private = false;
    p.maxAge = j.replay;
    p.stable = true;
    p.rotate = source ? false : j.rotate;
    p.kept = undefined;
    p.countedBy = source ? undefined : j.counters;
    const f = this.#filing;
    this.#fillFiling(f, source);
    f.policy = p;
    f.owner = j.block;
    f.rcode = rcode;
    f.tc = false;
    f.plugin = j.plugin;
    return this.#answers.file(f);
  }

  #fillFiling(f: Filing, source: boolean): void {
    const j = this.#filed;
    const s = j.s!;
    f.reply = j.bytes;
    f.replyFrom = 0;
    f.replyLength = j.length;
    f.questionEnd = s.questionEnd;
    f.key = source ? this.#sourceKeyOf(s) : s.keyBytes;
    f.keyFrom = 0;
    f.keyLength = s.keyLength;
    f.hash = source ? hashBytes(f.key, 0, s.keyLength) : s.keyHash;
    f.generation = this.#answers.generation;
    f.before = undefined;
  }

  #sourceKeyOf(s: ScannedQuery): Uint8Array {
    const key = this.#sourceKey;
    for (let i = 0; i < s.keyLength; i++) key[i] = s.keyBytes[i];
    key[s.keyLength - 1] |= SOURCE;
    return key;
  }
}

/** Address and MX records are the ones loadbalance's round robin shuffles. A reply it either leaves alone (no section with two or more address or MX
 * records) or shuffles only in the way the store's rotation can replay: two or more A records, or
 * AAAA records, of one owner as the whole answer section, with nothing to shuffle elsewhere. */
function rotatableOrPlain(m: Msg): boolean {
  const a = shuffled(m.answer);
  if (shuffled(m.authority) > 1 || shuffled(m.additional) > 1) return false;
  if (a < 2) return true;
  const first = m.answer[0];
  if (first.type !== Type.A && first.type !== Type.AAAA) return false;
  for (let i = 1; i < m.answer.length; i++) {
    if (m.answer[i].type !== first.type || m.answer[i].name !== first.name) return false;
  }
  return true;
}

function shuffled(rrs: readonly RR[]): number {
  let n = 0;
  for (let i = 0; i < rrs.length; i++) {
    const t = rrs[i].type;
    if (t === Type.A || t === Type.AAAA || t === Type.MX) n++;
  }
  return n;
}

function hasUpper(buf: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] >= 0x41 && buf[i] <= 0x5a) return true;
  return false;
}

let copyScratch = new Uint8Array(4096);

/** A scratch of at least `length` octets (kept for the next reply). */
function scratchFor(length: number): Uint8Array {
  if (copyScratch.length < length) copyScratch = new Uint8Array(Math.max(length, 2 * copyScratch.length));
  return copyScratch;
}
