// The one reply classifier: what the answer store and `cache` need to know of a reply to keep it, its
// rcode and kind, its TTLs (the lowest, and a denial's SOA negative TTL), and whether its answer
// section holds the type asked. Read off an encoded reply's octets in one walk (read: the store, the
// wire lane, `cache` on a forwarded reply), or off a decoded message (readMsg: `cache` on the reply of
// a plugin that built one); both keep their facts in the same fields and judge the kind by one rule.

import { Rcode, Type } from "../dns/constants.ts";
import { afterOwner } from "../dns/wire-ttl.ts";
import type { Msg, RR } from "../dns/message.ts";
import type { CacheKind } from "./policy.ts";

/** How `cache` keeps a reply, or undefined when it does not: NOERROR with records (and referrals:
 * NS records in the authority section) are successes; NXDOMAIN and NODATA are denials; SERVFAIL is
 * a denial (kept only `servfail` seconds). */
export function replyKind(rcode: number, answerCount: number, authorityNs: boolean): CacheKind | undefined {
  if (rcode === Rcode.NOERROR) return answerCount > 0 || authorityNs ? "success" : "denial";
  return rcode === Rcode.NXDOMAIN || rcode === Rcode.SERVFAIL ? "denial" : undefined;
}

/** Most CNAMEs followed in a decoded answer section before giving up (a loop, or a chain too long to be
 * real). */
const MAX_CHAIN = 16;

export class WireFacts {
  rcode = 0;
  tc = false;
  kind: CacheKind | undefined = undefined;
  /** Lowest TTL of the answer and authority records, or -1 without any. */
  minTtl = -1;
  /** Lowest TTL of every record but OPT, or -1 without any. */
  minTtlAll = -1;
  /** min(SOA TTL, SOA MINIMUM) of the authority section's SOA, or -1 without one. */
  negativeTtl = -1;
  /** The answer section holds a record of the type asked (any type for ANY): the question is answered,
   * directly or at the end of CNAMEs (owners are not compared: the chain's records are the reply's). */
  answers = false;

  /** What the records say of how long to keep the reply as its kind: a denial's negative TTL, any
   * other's lowest TTL of every record (minTtlAll); -1 when nothing says. A denial's records live no
   * longer than their own TTLs either (the CNAME that led to an NXDOMAIN). */
  get said(): number {
    if (this.kind !== "denial") return this.minTtlAll;
    return this.negativeTtl < 0 ? -1 : Math.min(this.negativeTtl, this.minTtlAll);
  }

  /** Reads the reply in msg[at..at+length), whose question ends at questionEnd (relative to at). */
  read(msg: Uint8Array, at: number, length: number, questionEnd: number, qtype: number): this {
    const end = at + length;
    this.rcode = msg[at + 3] & 0x0f;
    this.tc = (msg[at + 2] & 0x02) !== 0;
    const an = (msg[at + 6] << 8) | msg[at + 7];
    const ns = (msg[at + 8] << 8) | msg[at + 9];
    const ar = (msg[at + 10] << 8) | msg[at + 11];
    this.minTtl = this.minTtlAll = this.negativeTtl = -1;
    this.answers = false;
    let authorityNs = false;
    let p = at + questionEnd;
    for (let i = 0; i < an + ns + ar && p < end; i++) {
      p = afterOwner(msg, p);
      const type = (msg[p] << 8) | msg[p + 1];
      const ttl = ((msg[p + 4] << 24) | (msg[p + 5] << 16) | (msg[p + 6] << 8) | msg[p + 7]) >>> 0;
      const rdlen = (msg[p + 8] << 8) | msg[p + 9];
      if (type !== Type.OPT) {
        if (this.minTtlAll < 0 || ttl < this.minTtlAll) this.minTtlAll = ttl;
        if (i < an + ns && (this.minTtl < 0 || ttl < this.minTtl)) this.minTtl = ttl;
      }
      if (i < an && (type === qtype || qtype === Type.ANY)) this.answers = true;
      if (i >= an && i < an + ns) {
        if (type === Type.NS) authorityNs = true;
        if (type === Type.SOA && this.negativeTtl < 0 && rdlen >= 20) {
          const m = p + 10 + rdlen - 4;
          const minimum = ((msg[m] << 24) | (msg[m + 1] << 16) | (msg[m + 2] << 8) | msg[m + 3]) >>> 0;
          this.negativeTtl = Math.min(ttl, minimum);
        }
      }
      p += 10 + rdlen;
    }
    this.kind = replyKind(this.rcode, an, authorityNs);
    return this;
  }

  /** The same facts of a decoded reply to `qname`. `answers` follows the answer section's CNAMEs by
   * owner name from qname (the names are at hand here), and is read only for a success. */
  readMsg(reply: Msg, qname: string, qtype: number): this {
    this.rcode = reply.rcode;
    this.tc = reply.tc;
    this.minTtl = this.minTtlAll = this.negativeTtl = -1;
    let authorityNs = false;
    for (const rr of reply.answer) this.#lowest(rr, true);
    for (const rr of reply.authority) {
      this.#lowest(rr, true);
      if (rr.type === Type.NS) authorityNs = true;
      if (rr.type === Type.SOA && this.negativeTtl < 0 && "minimum" in rr.data) {
        this.negativeTtl = Math.min(rr.ttl, rr.data.minimum);
      }
    }
    for (const rr of reply.additional) this.#lowest(rr, false);
    this.kind = replyKind(this.rcode, reply.answer.length, authorityNs);
    this.answers = this.kind === "success" && answersQuestion(reply, qname, qtype);
    return this;
  }

  #lowest(rr: RR, answerOrAuthority: boolean): void {
    if (rr.type === Type.OPT) return;
    if (this.minTtlAll < 0 || rr.ttl < this.minTtlAll) this.minTtlAll = rr.ttl;
    if (answerOrAuthority && (this.minTtl < 0 || rr.ttl < this.minTtl)) this.minTtl = rr.ttl;
  }
}

/** The answer section holds a record of the type asked for `qname`, or for the name its CNAMEs lead
 * to (ANY: a record of any type). */
export function answersQuestion(reply: Msg, qname: string, qtype: number): boolean {
  let name = qname.toLowerCase();
  for (let hop = 0; hop <= MAX_CHAIN; hop++) {
    let next: string | undefined;
    for (const rr of reply.answer) {
      if (rr.name.toLowerCase() !== name) continue;
      if (rr.type === qtype || qtype === Type.ANY) return true;
      if (rr.type === Type.CNAME && "target" in rr.data) next = rr.data.target.toLowerCase();
    }
    if (next === undefined) return false;
    name = next;
  }
  return false;
}
