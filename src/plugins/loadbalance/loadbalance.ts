// loadbalance: the order of the address records in replies. round_robin shuffles the address records
// (A and AAAA together) and the MX records of every section; weighted puts first an address picked at
// random in proportion to its weight (weights.ts), as CoreDNS's weighted policy does; `prefer` then moves
// the addresses of the listed networks before the others. CNAMEs go first, because stub resolvers such
// as glibc expect the chain before the addresses it leads to.

import { SHUFFLED_REPLAY_SECONDS } from "../../answers/policy.ts";
import type { Handler, Plugin } from "../../chain/handler.ts";
import type { LaneStep } from "../../answers/lane-step.ts";
import type { Msg, RR } from "../../dns/message.ts";
import type { NetSet } from "../../dns/nets.ts";
import type { Weights } from "./weights.ts";
import { Type } from "../../dns/constants.ts";
import { canonicalAddress } from "./weights.ts";
import { wireRecords } from "../../dns/wire-msg.ts";
import { afterOwner } from "../../dns/wire-ttl.ts";
import { rotateRecords, rotationOf } from "../../answers/replay.ts";

export interface LoadbalanceOptions {
  /** Keep at most this many records in the answer section, after shuffling. */
  limitAnswers?: number;
  /** The weighted policy's weights, read per query (a reload replaces them); round_robin without. */
  weights?: () => Weights;
  /** Networks whose addresses go first, in this order (`prefer`). */
  prefer?: readonly NetSet[];
  /** A number in [0, 1); injected by tests. */
  random?: () => number;
}

export function loadbalance(o: LoadbalanceOptions = {}): Plugin {
  const random = o.random ?? Math.random;
  // Plain round robin is what the answer store's rotation replays; anything else reorders per query.
  const plain = o.weights === undefined && o.prefer === undefined && o.limitAnswers === undefined;
  const lane: LaneStep | undefined = plain
    ? { kind: "rotate", shuffle: (m) => void shuffleReply(m, random) }
    : undefined;
  return (next: Handler): Handler => ({
    name: "loadbalance",
    lane,
    async serve(req) {
      const reply = await next.serve(req);
      // Zone transfers keep their order: the SOA must stay first and last.
      if (req.qtype === Type.AXFR || req.qtype === Type.IXFR) return reply;
      const weights = o.weights?.();
      if (plain && rotateWire(reply, random)) {
        req.cache.rotate = true;
        return reply;
      }
      const drawn = weights ? weighReply(reply, weights, random) : shuffleReply(reply, random);
      const grouped = o.prefer !== undefined && preferReply(reply, o.prefer);
      if (drawn && weights) {
        // Every query draws anew: a replayed reply would put one address first for everyone.
        req.cache.limit(0);
      } else if (drawn) {
        const limited = o.limitAnswers !== undefined && reply.answer.length > o.limitAnswers;
        // The answer cache can rotate a set of same-sized records on every replay; anything else it
        // would replay in one order, so that reply may be replayed for a short while only. Rotating
        // addresses that `prefer` put in groups would mix the groups.
        if (!limited && !grouped && rotatable(reply)) req.cache.rotate = true;
        else req.cache.limit(SHUFFLED_REPLAY_SECONDS);
      }
      return limit(reply, o.limitAnswers);
    },
  });
}

/** Plain round robin on a reply whose records are still octets (a forwarded one), when its answer is
 * address records of one name in one size and no other section has an order to change: rotated a
 * random number of places in place, nothing decoded (the answer store rotates it on every replay).
 * False when it has another shape: then it is shuffled as records. */
function rotateWire(reply: Msg, random: () => number): boolean {
  const raw = wireRecords(reply);
  // No answer record (a denial, an upstream's SERVFAIL): nothing to rotate, and no first record to read.
  if (raw === undefined || raw.counts[0] === 0 || raw.counts[1] > 1 || raw.counts[2] > 1) return false;
  const w = raw.wire;
  const first = afterOwner(w, raw.questionEnd);
  const type = (w[first] << 8) | w[first + 1];
  if (type !== Type.A && type !== Type.AAAA) return false;
  const rotation = rotationOf(w, raw.questionEnd, raw.end);
  if (rotation === 0) return false;
  const count = rotation >>> 16;
  rotateRecords(w, raw.questionEnd, count, rotation & 0xffff, Math.floor(random() * count));
  return true;
}

function limit(reply: Msg, n: number | undefined): Msg {
  if (n !== undefined && reply.answer.length > n) reply.answer = reply.answer.slice(0, n);
  return reply;
}

/** The answer is only A or only AAAA records of one owner, and no other section had an order to keep
 * changing: a headless Service's addresses, the common case. */
function rotatable(m: Msg): boolean {
  const first = m.answer[0];
  if (first === undefined || (first.type !== Type.A && first.type !== Type.AAAA)) return false;
  const sameSet = (rr: RR) => rr.type === first.type && rr.name === first.name;
  const fixed = (rrs: RR[]) =>
    rrs.filter((rr) => rr.type === Type.A || rr.type === Type.AAAA || rr.type === Type.MX).length < 2;
  return m.answer.every(sameSet) && fixed(m.authority) && fixed(m.additional);
}

/** Shuffles every section in place; true when some section had an order to change. */
export function shuffleReply(m: Msg, random: () => number): boolean {
  const a = roundRobin(m.answer, random);
  const b = roundRobin(m.authority, random);
  const c = roundRobin(m.additional, random);
  m.answer = a.rrs;
  m.authority = b.rrs;
  m.additional = c.rrs;
  return a.shuffled || b.shuffled || c.shuffled;
}

/** CNAMEs, then every other record in its order, then the addresses and the MX records, each set
 * shuffled. `shuffled` is true when a set had two or more records. */
export function roundRobin(rrs: RR[], random: () => number): { rrs: RR[]; shuffled: boolean } {
  if (rrs.length < 2) return { rrs, shuffled: false };
  const { cname, rest, address, mx } = split(rrs);
  shuffle(address, random);
  shuffle(mx, random);
  return { rrs: [...cname, ...rest, ...address, ...mx], shuffled: address.length > 1 || mx.length > 1 };
}

/** A section's records by kind, each in its order. */
function split(rrs: RR[]): { cname: RR[]; rest: RR[]; address: RR[]; mx: RR[] } {
  const out = { cname: [] as RR[], rest: [] as RR[], address: [] as RR[], mx: [] as RR[] };
  for (const rr of rrs) {
    if (rr.type === Type.CNAME) out.cname.push(rr);
    else if (rr.type === Type.A || rr.type === Type.AAAA) out.address.push(rr);
    else if (rr.type === Type.MX) out.mx.push(rr);
    else out.rest.push(rr);
  }
  return out;
}

/** Fisher-Yates: every order equally likely. */
function shuffle<T>(a: T[], random: () => number): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

/** The weighted policy over every section: CNAMEs first, other records in their order, then the
 * addresses with one picked by weight moved to the front (the rest keep their order), then MX. True
 * when a pick was made among two or more addresses. */
export function weighReply(m: Msg, weights: Weights, random: () => number): boolean {
  let drawn = false;
  for (const section of ["answer", "authority", "additional"] as const) {
    const { cname, rest, address, mx } = split(m[section]);
    if (address.length > 1) {
      drawn = true;
      const top = pick(address, weights, random);
      if (top > 0) address.unshift(...address.splice(top, 1));
    }
    m[section] = [...cname, ...rest, ...address, ...mx];
  }
  return drawn;
}

/** An index into `address` drawn with probability weight / total weight; an address the weights do
 * not list weighs 1. -1 when every weight is 0. */
function pick(address: RR[], weights: Weights, random: () => number): number {
  const w = address.map((rr) => {
    const listed = weights.get(rr.name)?.get(canonicalAddress((rr.data as { address: string }).address));
    return listed ?? 1;
  });
  let draw = random() * w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < w.length; i++) {
    if (draw < w[i]) return i;
    draw -= w[i];
  }
  return -1;
}

/** Moves, in every section, the addresses in `nets[0]` before those in `nets[1]`, ... before the
 * others, keeping each group's order and the place of the addresses among the other records. True
 * when some section had addresses in more than one group. */
export function preferReply(m: Msg, nets: readonly NetSet[]): boolean {
  let grouped = false;
  for (const section of ["answer", "authority", "additional"] as const) {
    const rrs = m[section];
    const at: number[] = [];
    const groups: RR[][] = Array.from({ length: nets.length + 1 }, () => []);
    rrs.forEach((rr, i) => {
      if (rr.type !== Type.A && rr.type !== Type.AAAA) return;
      at.push(i);
      const address = (rr.data as { address: string }).address;
      const g = nets.findIndex((n) => n.has(address));
      groups[g < 0 ? nets.length : g].push(rr);
    });
    if (groups.filter((g) => g.length > 0).length < 2) continue;
    grouped = true;
    const ordered = groups.flat();
    const out = [...rrs];
    at.forEach((i, k) => (out[i] = ordered[k]));
    m[section] = out;
  }
  return grouped;
}
