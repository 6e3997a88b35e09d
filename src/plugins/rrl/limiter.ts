// Response-rate limiting as BIND does it (and the coredns/rrl plugin after it): identical responses
// to one client network share an account. An account earns `rate` credits a second, holds at most one
// second's worth, and pays one per response; a response that takes it below zero is over the limit.
// Its debt goes down to `window` seconds' worth, so a network that floods stays limited until it has
// been quiet for up to `window` seconds. A response over the limit is dropped, but every `slip`-th
// one is answered with an empty truncated reply (TC=1): a real client behind a spoofed flood asks
// again over TCP and gets its answer, while the reply to a spoofed source is no larger than the query.
//
// "Identical" (BIND's categories), read off the encoded reply:
//   an answer (NOERROR, records)   the same question (name, type, class)
//   NODATA (NOERROR, no records)   the same name, any type
//   NXDOMAIN                       the same zone (the owner of the SOA in the authority section)
//   a referral (NS in authority)   the same delegation (the NS owner)
//   any other rcode                one account per network (errors)

import type { ReplyLimiter } from "../../setup/block.ts";
import type { Scanned } from "../../dns/scan.ts";
import { skipName } from "../../dns/walk.ts";
import { EDNS_UDP_SIZE, Rcode, Type } from "../../dns/constants.ts";
import { prefixKey } from "./prefix.ts";
import { rrlStats } from "./stats.ts";

export interface RrlOptions {
  /** Canonical zones whose replies are limited; empty for every zone of the block. */
  zones: string[];
  windowS: number;
  v4Bits: number;
  v6Bits: number;
  /** Allowances per second by category; 0 is no limit. */
  responses: number;
  nodata: number;
  nxdomains: number;
  referrals: number;
  errors: number;
  /** Every slip-th limited response gets a TC reply; 0 never. */
  slip: number;
  maxTable: number;
  /** Count what would be limited, limit nothing. */
  reportOnly: boolean;
}

class Account {
  balance: number;
  at: number;
  limited = 0;
  constructor(rate: number, now: number) {
    this.balance = rate;
    this.at = now;
  }
}

export class ResponseLimiter implements ReplyLimiter {
  readonly #options: RrlOptions;
  readonly #accounts = new Map<string, Account>();
  /** The accounts oldest first, one walk kept across evictions (see AnswerCache.#oldest). */
  #oldest: MapIterator<string> = this.#accounts.keys();
  readonly #inZones: ((qname: string) => boolean) | undefined;
  /** The last source address and its network: replies mostly go to the client asked just before. */
  #lastAddress = "";
  #lastNetwork: string | undefined = undefined;

  constructor(o: RrlOptions, inZones?: (qname: string) => boolean) {
    this.#options = o;
    this.#inZones = o.zones.length > 0 ? inZones : undefined;
  }

  get accounts(): number {
    return this.#accounts.size;
  }

  limit(reply: Buffer, q: Scanned, remoteAddress: string, now: number): Buffer | undefined {
    if (this.#inZones !== undefined && !this.#inZones(q.qname)) return reply;
    const o = this.#options;
    const { questionEnd, key } = q;
    const [rate, what] = this.#identity(reply, questionEnd, key);
    if (rate === 0) return reply;
    if (remoteAddress !== this.#lastAddress) {
      this.#lastAddress = remoteAddress;
      this.#lastNetwork = prefixKey(remoteAddress, o.v4Bits, o.v6Bits);
    }
    const network = this.#lastNetwork;
    if (network === undefined) return reply;
    const id = network + what;
    let a = this.#accounts.get(id);
    if (a === undefined) {
      if (this.#accounts.size >= o.maxTable) this.#evictOldest();
      a = new Account(rate, now);
      this.#accounts.set(id, a);
    }
    a.balance = Math.max(-o.windowS * rate, Math.min(rate, a.balance + ((now - a.at) / 1000) * rate) - 1);
    a.at = now;
    if (a.balance >= 0) return reply;
    a.limited++;
    const slip = o.slip > 0 && a.limited % o.slip === 0;
    if (o.reportOnly) {
      rrlStats.reported++;
      return reply;
    }
    if (!slip) {
      rrlStats.dropped++;
      return undefined;
    }
    rrlStats.slipped++;
    return truncated(reply, questionEnd, key);
  }

  /** The category's allowance and what identifies the response within its network (from the
   * answer-cache key, whose first octets are the question's name in wire form, lowercased). */
  #identity(reply: Buffer, questionEnd: number, key: string): [number, string] {
    const o = this.#options;
    const rcode = reply[3] & 0x0f;
    if (rcode === Rcode.NOERROR) {
      if (((reply[6] << 8) | reply[7]) > 0) return [o.responses, "a" + key];
      const auth = firstAuthority(reply, questionEnd);
      if (auth !== undefined && auth.type === Type.NS) return [o.referrals, "r" + suffix(key, auth.labels)];
      return [o.nodata, "d" + key.slice(0, -5)];
    }
    if (rcode === Rcode.NXDOMAIN) {
      const auth = firstAuthority(reply, questionEnd);
      return [o.nxdomains, "x" + suffix(key, auth?.labels ?? 0)];
    }
    return [o.errors, "e"];
  }

  #evictOldest(): void {
    let next = this.#oldest.next();
    if (next.done === true) next = (this.#oldest = this.#accounts.keys()).next();
    if (next.done !== true) this.#accounts.delete(next.value);
  }
}

/** The number of labels of the owner, and the type, of the first record after the answer section, or
 * undefined. In a denial or a referral that owner (the zone's SOA, the delegation's NS) is the
 * question's name or an ancestor of it: its label count picks the suffix of the question's name. */
function firstAuthority(reply: Buffer, questionEnd: number): { labels: number; type: number } | undefined {
  const records = ((reply[6] << 8) | reply[7]) + 1;
  if (((reply[8] << 8) | reply[9]) === 0) return undefined;
  let p = questionEnd;
  for (let i = 1; i < records; i++) {
    p = skipName(reply, p, reply.length);
    if (p < 0 || p + 10 > reply.length) return undefined;
    p += 10 + ((reply[p + 8] << 8) | reply[p + 9]);
  }
  const end = skipName(reply, p, reply.length);
  if (end < 0 || end + 2 > reply.length) return undefined;
  let labels = 0;
  for (let q = p, l = reply[q]; l !== 0; l = reply[q]) {
    if (l >= 0xc0) q = ((l & 0x3f) << 8) | reply[q + 1];
    else {
      labels++;
      q += l + 1;
    }
  }
  return { labels, type: (reply[end] << 8) | reply[end + 1] };
}

/** The last `labels` labels of the name that starts the answer-cache key (wire form), or the whole
 * name when it has fewer. */
function suffix(key: string, labels: number): string {
  if (labels === 0) return "";
  const starts: number[] = [];
  let p = 0;
  for (let l = key.charCodeAt(0); l !== 0 && p < key.length; p += l + 1, l = key.charCodeAt(p))
    starts.push(p);
  return key.slice(labels >= starts.length ? 0 : starts[starts.length - labels], p);
}

/** The slip reply: the reply's header and question, TC set, no records but an OPT record when the
 * query had one (its DO bit kept). No larger than the query that asked. */
function truncated(reply: Buffer, questionEnd: number, key: string): Buffer {
  const state = key.charCodeAt(key.length - 1) & 0x03;
  const out = Buffer.alloc(questionEnd + (state !== 0 ? 11 : 0));
  reply.copy(out, 0, 0, questionEnd);
  out[2] |= 0x02; // TC
  out[6] = out[7] = out[8] = out[9] = out[10] = 0;
  out[11] = state !== 0 ? 1 : 0;
  if (state !== 0) {
    out[questionEnd + 2] = Type.OPT;
    out.writeUInt16BE(EDNS_UDP_SIZE, questionEnd + 3);
    out[questionEnd + 7] = state === 2 ? 0x80 : 0;
  }
  return out;
}
