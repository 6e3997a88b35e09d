// What the answer store needs to know of an encoded reply to keep it, read off its octets in one walk:
// its rcode and kind, its TTLs (the lowest, and a denial's SOA negative TTL), and whether its answer
// section holds the type asked. The same facts cache/entry.ts reads off a decoded message.

import { Rcode, Type } from "../dns/constants.ts";
import { afterOwner } from "../dns/wire-ttl.ts";
import type { CacheKind } from "./policy.ts";

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
    this.kind =
      this.rcode === Rcode.NOERROR
        ? an > 0 || authorityNs
          ? "success"
          : "denial"
        : this.rcode === Rcode.NXDOMAIN || this.rcode === Rcode.SERVFAIL
          ? "denial"
          : undefined;
    return this;
  }
}
