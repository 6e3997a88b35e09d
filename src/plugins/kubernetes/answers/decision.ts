// The one decision for a question the kubernetes plugin or k8s_external may answer from the store:
// whose it is, whether it waits for the first sync, what the store answers, and how long that answer
// may be kept. Both ways a query arrives carry it out and neither adds a rule of its own: the plugin
// chain (serve-from-store.ts, which can wait and look up) and the wire lane (answer-in-lane.ts, which
// writes in the same turn what the answer store may replay until the name changes, and hands the
// rest to the chain).

import type { Msg, RR } from "../../../dns/message.ts";
import { Class, EXPLAIN_OPTION, Rcode, Type } from "../../../dns/constants.ts";
import { isSubdomain } from "../../../dns/name.ts";
import type { Answer } from "./records.ts";
import type { StartupGate } from "../sync/startup-gate.ts";
import { isReverseZone } from "../names/zones.ts";

/** What a plugin that answers from the store brings to the decision. */
export interface StoreAnswers {
  /** The plugin's name, for Request.answeredBy and the lane's label. */
  readonly name: string;
  readonly gate: StartupGate;
  /** Zones in which an NXDOMAIN goes to the next plugin (`fallthrough`); "." for all. */
  readonly fallthrough?: readonly string[];
  /** The plugin owns its zones' other classes and their transfers: REFUSED (kubernetes). Else they
   * go to the next plugin (k8s_external). */
  readonly refusesOthers: boolean;
  /** The zone of `qname` the plugin serves (the most specific), or undefined. */
  zoneOf(qname: string): string | undefined;
  soa(zone: string): RR;
  answer(zone: string, qname: string, qtype: number, spelled: string): Answer;
  /** The explain option's records for `qname` (kubernetes only; undefined: the option is ignored). */
  readonly explain?: (zone: string, qname: string) => RR[];
  /** SetupContext.lookup, for the chain to follow CNAME targets. */
  lookup(name: string, qtype: number, depth?: number, deadline?: number): Promise<Msg>;
}

/** `answer`, each call in one read section of the store when it has them (a worker thread's reader:
 * Store.read), so one question sees one view of it; `answer` itself where the store cannot change
 * meanwhile (no closure per question then). */
export function inOneRead(
  read: (<T>(fn: () => T) => T) | undefined,
  answer: StoreAnswers["answer"],
): StoreAnswers["answer"] {
  if (read === undefined) return answer;
  return (zone, qname, qtype, spelled) => read(() => answer(zone, qname, qtype, spelled));
}

/** A question as the decision reads it: a LaneQuery, or the chain's Request seen so. */
export interface Question {
  /** Canonical (lowercase, absolute). */
  readonly qname: string;
  readonly qtype: number;
  readonly qclass: number;
  /** The name as the client spelled it, when that is not `qname` (0x20 mixed case). */
  readonly spelled: string | undefined;
  /** The query carries the EDNS option `code`. */
  option(code: number): boolean;
}

export const Verdict = {
  /** Not this plugin's to answer: the next handler's (outside its zones, an NXDOMAIN under
   * `fallthrough`, another class for k8s_external). */
  next: 0,
  /** REFUSED: another class than IN (or ANY), or a zone transfer, in the kubernetes plugin's zones
   * (not SERVFAIL, which resolvers count against the server; transfers are the transfer plugin's). */
  refuse: 1,
  /** Not synced yet: wait for the first sync or the startup deadline, then decide again. */
  hold: 2,
  /** The startup deadline passed before the first sync: SERVFAIL with the zone's SOA, as CoreDNS. */
  servfail: 3,
  /** The store's answer (Decision.answer). */
  answer: 4,
} as const;
export type Verdict = (typeof Verdict)[keyof typeof Verdict];

/** How long an answer may be kept. */
export const Keep = {
  /** Until the store says its name changed (AnswerPolicy.stable). */
  untilChanged: 0,
  /** Only as `cache` keeps any reply, by its TTLs: a chased CNAME target may come from elsewhere. */
  byTtl: 1,
  /** Never (AnswerPolicy.private): it depends on the client's spelling, carries explain records, or
   * the records of a CNAME target in the plugin's zones. */
  never: 2,
} as const;
export type Keep = (typeof Keep)[keyof typeof Keep];

/** The decision for one question: the lane reuses one, the chain makes one per query. */
export class Decision {
  verdict: Verdict = Verdict.next;
  /** The zone of the question, when it is the plugin's ("" when not). */
  zone = "";
  /** With Verdict.answer: the store's answer, with the CNAME target to chase (Answer.chase). */
  answer: Answer | undefined = undefined;
  keep: Keep = Keep.never;
  /** With Verdict.answer: append the explain records. */
  explain = false;
}

/** Decides `q` for the plugin `s` into `d`. `waited`: the query was held (Verdict.hold) until the
 * first sync or the startup deadline. */
export function decide(s: StoreAnswers, q: Question, d: Decision, waited = false): Decision {
  d.answer = undefined;
  d.keep = Keep.never;
  d.explain = false;
  const zone = s.zoneOf(q.qname);
  d.zone = zone ?? "";
  if (zone === undefined) return verdict(d, Verdict.next);
  if (q.qclass !== Class.IN && q.qclass !== Class.ANY)
    return verdict(d, s.refusesOthers ? Verdict.refuse : Verdict.next);
  if (s.refusesOthers && (q.qtype === Type.AXFR || q.qtype === Type.IXFR)) return verdict(d, Verdict.refuse);
  if (!s.gate.open) {
    if (!waited) return verdict(d, Verdict.hold);
    return verdict(d, fallsThrough(s, q.qname) ? Verdict.next : Verdict.servfail);
  }
  const a = s.answer(zone, q.qname, q.qtype, spelledZone(q, zone));
  if (a.rcode === Rcode.NXDOMAIN && fallsThrough(s, q.qname)) return verdict(d, Verdict.next);
  d.answer = a;
  d.explain = s.explain !== undefined && q.option(EXPLAIN_OPTION) && !isReverseZone(zone);
  d.keep = keep(s, a, d.explain);
  return verdict(d, Verdict.answer);
}

/** Every store change drops the names it touched, so the store's own answers are kept until then. A
 * CNAME target chased outside the plugin's zones is kept by its TTLs, as `cache` keeps any reply. One
 * inside them changes with the store under the target's names, not the answer's: nothing would drop
 * the answer when the target changes, so it is not kept (it is answered anew, target and all). */
function keep(s: StoreAnswers, a: Answer, explain: boolean): Keep {
  if (a.uncacheable || explain) return Keep.never;
  if (a.chase === undefined) return Keep.untilChanged;
  return s.zoneOf(a.chase) === undefined ? Keep.byTtl : Keep.never;
}

function verdict(d: Decision, v: Verdict): Decision {
  d.verdict = v;
  return d;
}

function fallsThrough(s: StoreAnswers, qname: string): boolean {
  const zones = s.fallthrough;
  if (zones === undefined) return false;
  for (let i = 0; i < zones.length; i++) if (isSubdomain(qname, zones[i])) return true;
  return false;
}

/** `zone` as the client spelled it in the question (0x20), or `zone` itself. */
export function spelledZone(q: Question, zone: string): string {
  const s = q.spelled;
  if (s === undefined || s.toLowerCase() !== q.qname) return zone;
  return s.slice(s.length - zone.length);
}
