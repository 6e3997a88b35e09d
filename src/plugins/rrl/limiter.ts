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
import { AccountTable } from "./accounts.ts";
import { KeyHash, nameEnd, suffixStart } from "./account-key.ts";
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

/** The kinds of response, each with accounts of its own. */
const Kind = { Answer: 1, Referral: 2, Nodata: 3, Nxdomain: 4, Error: 5 } as const;
type Kind = (typeof Kind)[keyof typeof Kind];

/** Options beside the block's rrl settings. */
export interface LimiterOptions {
  /** Whether a name is in the block's ZONES (when the rrl line names some). */
  inZones?: (qname: string) => boolean;
  /** The accounts, shared with the other threads (shared-accounts.ts); a table of its own without. */
  table?: AccountTable;
}

export class ResponseLimiter implements ReplyLimiter {
  readonly #options: RrlOptions;
  readonly #table: AccountTable;
  readonly #inZones: ((qname: string) => boolean) | undefined;
  /** The last source address and its network: replies mostly go to the client asked just before. */
  #lastAddress = "";
  #lastNetwork: string | undefined = undefined;
  /** The account of the reply at hand: #identify sets its kind and the range of the cache key it goes
   * by, fields rather than a returned tuple, so that nothing is made per reply. */
  #kind: Kind = Kind.Error;
  #from = 0;
  #to = 0;
  readonly #hash = new KeyHash();

  constructor(o: RrlOptions, lo: LimiterOptions = {}) {
    this.#options = o;
    this.#inZones = o.zones.length > 0 ? lo.inZones : undefined;
    this.#table = lo.table ?? AccountTable.create(o.maxTable);
  }

  get accounts(): number {
    return this.#table.held;
  }

  limit(reply: Buffer, q: Scanned, remoteAddress: string, now: number): Buffer | undefined {
    if (this.#inZones !== undefined && !this.#inZones(q.qname)) return reply;
    const o = this.#options;
    const { questionEnd, key } = q;
    const rate = this.#identify(reply, questionEnd, key);
    if (rate === 0) return reply;
    if (remoteAddress !== this.#lastAddress) {
      this.#lastAddress = remoteAddress;
      this.#lastNetwork = prefixKey(remoteAddress, o.v4Bits, o.v6Bits);
    }
    const network = this.#lastNetwork;
    if (network === undefined) return reply;
    const h = this.#hash;
    h.start(network, this.#kind);
    h.add(key, this.#from, this.#to);
    h.finish();
    const limited = this.#table.charge(h.a, h.b, 1000 / rate, o.windowS * 1000, now);
    if (limited === 0) return reply;
    const slip = o.slip > 0 && limited % o.slip === 0;
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

  /** The category's allowance; sets what identifies the response within its network: the kind, and
   * the range of the answer-cache key (whose first octets are the question's name in wire form). */
  #identify(reply: Buffer, questionEnd: number, key: string): number {
    const o = this.#options;
    const rcode = reply[3] & 0x0f;
    if (rcode === Rcode.NOERROR) {
      if (((reply[6] << 8) | reply[7]) > 0) return this.#account(Kind.Answer, 0, key.length, o.responses);
      const auth = firstAuthority(reply, questionEnd);
      if (auth >= 0 && (auth & 0xffff) === Type.NS) return this.#suffix(Kind.Referral, key, auth >>> 16);
      return this.#account(Kind.Nodata, 0, key.length - 5, o.nodata);
    }
    if (rcode === Rcode.NXDOMAIN)
      return this.#suffix(Kind.Nxdomain, key, Math.max(0, firstAuthority(reply, questionEnd)) >>> 16);
    return this.#account(Kind.Error, 0, 0, o.errors);
  }

  /** An account by the last `labels` labels of the question's name (the zone, the delegation). */
  #suffix(kind: typeof Kind.Referral | typeof Kind.Nxdomain, key: string, labels: number): number {
    const end = nameEnd(key);
    const rate = kind === Kind.Referral ? this.#options.referrals : this.#options.nxdomains;
    return this.#account(kind, suffixStart(key, labels, end), end, rate);
  }

  #account(kind: Kind, from: number, to: number, rate: number): number {
    this.#kind = kind;
    this.#from = from;
    this.#to = to;
    return rate;
  }
}

/** The number of labels of the owner (high 16 bits), and the type (low 16), of the first record after
 * the answer section, or -1; one number, so that nothing is made per reply. In a denial or a referral that owner (the zone's SOA, the delegation's NS) is the
 * question's name or an ancestor of it: its label count picks the suffix of the question's name. */
function firstAuthority(reply: Buffer, questionEnd: number): number {
  const records = ((reply[6] << 8) | reply[7]) + 1;
  if (((reply[8] << 8) | reply[9]) === 0) return -1;
  let p = questionEnd;
  for (let i = 1; i < records; i++) {
    p = skipName(reply, p, reply.length);
    if (p < 0 || p + 10 > reply.length) return -1;
    p += 10 + ((reply[p + 8] << 8) | reply[p + 9]);
  }
  const end = skipName(reply, p, reply.length);
  if (end < 0 || end + 2 > reply.length) return -1;
  let labels = 0;
  for (let q = p, l = reply[q]; l !== 0; l = reply[q]) {
    if (l >= 0xc0) q = ((l & 0x3f) << 8) | reply[q + 1];
    else {
      labels++;
      q += l + 1;
    }
  }
  return labels * 0x10000 + ((reply[end] << 8) | reply[end + 1]);
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
