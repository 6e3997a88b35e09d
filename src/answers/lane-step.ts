// The lane's side of a handler (Handler.lane): what the wire lane (./lane.ts) shows a handler of a
// query, and what the handler may do with it. It sits beside the answer store, below the handler
// contract (src/chain/handler.ts) that carries it.

import type { Msg } from "../dns/message.ts";
import type { CacheRules } from "./policy.ts";

/** A query as the wire lane shows it to handlers: one object, refilled for every query (do not keep). */
export interface LaneQuery {
  /** Canonical (lowercase, absolute). */
  readonly qname: string;
  readonly qtype: number;
  readonly qclass: number;
  /** The name as the client spelled it, when that is not `qname` (0x20 mixed case), as Request.spelled. */
  readonly spelled: string | undefined;
  /** The query carries the EDNS option `code`. */
  option(code: number): boolean;
  /** "dns://:53": the server this query reached. */
  readonly server: string;
  /** The OPT record's DO bit (dnssec signs the replies of these queries only). */
  readonly dnssecOk: boolean;
}

/** The reply a lane answer writes: a message refilled for every query (its question, ID and flags are
 * the server's to set), whether the plugin invalidates it on change (AnswerPolicy.stable), and which
 * plugin answered. Sections may be the plugin's own arrays: the lane only reads them. */
export interface LaneReply {
  readonly msg: Msg;
  stable: boolean;
  plugin: string;
}

export const LaneResult = {
  /** Not this handler's query: the next one in the lane. */
  next: 0,
  /** The handler must see this query as a Request (the chain). */
  chain: 1,
  /** Answered into the LaneReply. */
  answered: 2,
} as const;
export type LaneResult = (typeof LaneResult)[keyof typeof LaneResult];

/** The lane step of a handler that passes every query through and leaves every reply alone. */
export const PASS_ALL: LaneStep = { kind: "pass", passes: () => true };

export type LaneStep =
  /** Lets the query through and leaves the reply as it is when passes() says so; else the lane stops. */
  | { readonly kind: "pass"; passes(q: LaneQuery): boolean }
  /** loadbalance's round robin: the store rotates address answers on every replay; a reply it
   * cannot rotate is shuffled by shuffle() and replayed in that order for a second. */
  | { readonly kind: "rotate"; shuffle(m: Msg): void }
  /** `cache`: what the handlers after it answer is kept by its rules, and refilled from what they
   * answered before. */
  | { readonly kind: "keep"; readonly rules: CacheRules }
  | { readonly kind: "answer"; answer(q: LaneQuery, reply: LaneReply): LaneResult };
