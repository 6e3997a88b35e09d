// erratic: a fault injector for testing clients. It answers every A and AAAA query with a fixed
// address, AXFR with a small zone, anything else with SERVFAIL; one query in N is dropped, delayed or
// truncated, by one counter of the queries that reached it. Its replies are never stored: a replay
// from the answer store or `cache` would skip the counter and the faults it drives.

import type { Handler } from "../../chain/handler.ts";
import type { Request } from "../../chain/request.ts";
import type { Msg, RR } from "../../dns/message.ts";
import { failure } from "../../chain/handler.ts";
import { replyTo } from "../../dns/message.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";

export interface ErraticOptions {
  /** Drop one query in `drop`; 0: never. */
  drop: number;
  /** Truncate (TC) one reply in `truncate`; 0: never. */
  truncate: number;
  /** Delay one reply in `delay` by `delayMs`; 0: never. */
  delay: number;
  delayMs: number;
  /** CoreDNS's undocumented `large`: 30 A records instead of one (a reply over 512 octets). */
  large: boolean;
}

/** What one query gets: the faults its number in the count falls on. */
interface Faults {
  drop: boolean;
  truncate: boolean;
  delay: boolean;
}

export class Erratic {
  readonly #o: ErraticOptions;
  /** Queries that reached the plugin so far; the first is number 0, which every fault falls on. */
  #count = 0;

  constructor(o: ErraticOptions) {
    this.#o = o;
  }

  handler(): Handler {
    // No lane step: every query takes the chain, so that each one is counted.
    return { name: "erratic", serve: (req) => this.#serve(req) };
  }

  async #serve(req: Request): Promise<Msg> {
    const f = this.#next();
    req.answeredBy = "erratic";
    req.cache.private = true;
    if (f.drop) {
      req.noReply = true;
      return failure(req, Rcode.SERVFAIL);
    }
    if (f.delay) await pause(this.#o.delayMs, req.deadline);
    return reply(req, f.truncate, this.#o.large);
  }

  #next(): Faults {
    const n = this.#count;
    // A whole number of queries past 2^53 is not a concern; wrapping keeps the count an integer.
    this.#count = n >= Number.MAX_SAFE_INTEGER ? 0 : n + 1;
    const { drop, truncate, delay } = this.#o;
    return {
      drop: drop > 0 && n % drop === 0,
      truncate: truncate > 0 && n % truncate === 0,
      delay: delay > 0 && n % delay === 0,
    };
  }
}

/** Waits `ms`, or until the query's deadline (`cancel`) if that comes first. */
function pause(ms: number, deadline: number | undefined): Promise<void> {
  const wait = deadline === undefined ? ms : Math.max(0, Math.min(ms, deadline - Date.now()));
  return new Promise((resolve) => setTimeout(resolve, wait));
}

const A_ADDRESS = "192.0.2.53"; // RFC 5737
const AAAA_ADDRESS = "2001:db8::53"; // RFC 3849

function reply(req: Request, truncated: boolean, large: boolean): Msg {
  const name = req.qname;
  if (req.qtype === Type.AXFR) return transfer(req, truncated);
  if (req.qtype !== Type.A && req.qtype !== Type.AAAA) return failure(req, Rcode.SERVFAIL);
  const m = replyTo(req.msg);
  m.aa = true;
  m.tc = truncated;
  const rr: RR =
    req.qtype === Type.A
      ? { name, type: Type.A, class: Class.IN, ttl: 0, data: { type: Type.A, address: A_ADDRESS } }
      : { name, type: Type.AAAA, class: Class.IN, ttl: 0, data: { type: Type.AAAA, address: AAAA_ADDRESS } };
  m.answer = req.qtype === Type.A && large ? Array.from({ length: 30 }, () => rr) : [rr];
  return m;
}

/** A small zone at the question's name, in one message: SOA, two NS, their AAAA, then the closing
 * SOA, which a truncated transfer leaves out (the client sees an incomplete AXFR; TC stays clear). */
function transfer(req: Request, truncated: boolean): Msg {
  const zone = req.qname;
  const at = (label: string) => (zone === "." ? `${label}.` : `${label}.${zone}`);
  const rr = (name: string, data: RR["data"]): RR => ({
    name,
    type: data.type,
    class: Class.IN,
    ttl: 0,
    data,
  });
  const soa = rr(zone, {
    type: Type.SOA,
    mname: "sns.dns.icann.org.",
    rname: "noc.dns.icann.org.",
    serial: 2018050825,
    refresh: 7200,
    retry: 3600,
    expire: 1209600,
    minimum: 3600,
  });
  const m = replyTo(req.msg);
  m.aa = true;
  m.answer = [
    soa,
    rr(zone, { type: Type.NS, target: at("b") }),
    rr(zone, { type: Type.NS, target: at("a") }),
    rr(at("a"), { type: Type.AAAA, address: "2001:bd8::53" }),
    rr(at("b"), { type: Type.AAAA, address: "2001:500::54" }),
  ];
  if (!truncated) m.answer.push(soa);
  return m;
}
