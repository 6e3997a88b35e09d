// loadbalance: round-robin DNS. Shuffles the address records (A and AAAA together) and the MX records
// of every section of a reply; CNAMEs go first, because stub resolvers such as glibc expect the chain
// before the addresses it leads to.

import { SHUFFLED_REPLAY_SECONDS, type Handler, type Plugin } from "../../plugin.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { Type } from "../../dns/constants.ts";

export interface LoadbalanceOptions {
  /** Keep at most this many records in the answer section, after shuffling. */
  limitAnswers?: number;
  /** A number in [0, 1); injected by tests. */
  random?: () => number;
}

export function loadbalance(o: LoadbalanceOptions = {}): Plugin {
  const random = o.random ?? Math.random;
  return (next: Handler): Handler => ({
    name: "loadbalance",
    async serve(req) {
      const reply = await next.serve(req);
      // Zone transfers keep their order: the SOA must stay first and last.
      if (req.qtype === Type.AXFR || req.qtype === Type.IXFR) return reply;
      if (!shuffleReply(reply, random)) return limit(reply, o.limitAnswers);
      const limited = o.limitAnswers !== undefined && reply.answer.length > o.limitAnswers;
      // The answer cache can rotate a set of same-sized records on every replay; anything else it would
      // replay in one order, so that reply may be replayed for a short while only.
      if (!limited && rotatable(reply)) req.cache.rotate = true;
      else req.cache.limit(SHUFFLED_REPLAY_SECONDS);
      return limit(reply, o.limitAnswers);
    },
  });
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
  const cname: RR[] = [];
  const rest: RR[] = [];
  const address: RR[] = [];
  const mx: RR[] = [];
  for (const rr of rrs) {
    if (rr.type === Type.CNAME) cname.push(rr);
    else if (rr.type === Type.A || rr.type === Type.AAAA) address.push(rr);
    else if (rr.type === Type.MX) mx.push(rr);
    else rest.push(rr);
  }
  shuffle(address, random);
  shuffle(mx, random);
  return { rrs: [...cname, ...rest, ...address, ...mx], shuffled: address.length > 1 || mx.length > 1 };
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
