// A query as the plugin chain sees it: what a handler (./handler.ts) serves.

import type { Msg } from "../dns/message.ts";
import type { AnswerPolicy } from "../answers/policy.ts";
import type { TraceSpan } from "./trace-span.ts";

export interface Request {
  /** The decoded query. `msg.question[0].name` is canonical (lowercase, absolute). */
  readonly msg: Msg;
  readonly qname: string;
  /** The question name as the client spelled it, when that is not `qname` (0x20 mixed case); for
   * names a plugin writes in rdata, which compression cannot give the client's spelling. A request a
   * plugin derives for another name (rewrite) may carry the original's: check it spells `qname`. */
  readonly spelled?: string;
  readonly qtype: number;
  readonly qclass: number;
  /** The server block zone that matched (longest suffix). */
  readonly zone: string;
  readonly proto: "udp" | "tcp";
  readonly remoteAddress: string;
  readonly remotePort: number;
  readonly localAddress: string;
  readonly localPort: number;
  /** "dns://:53": the server this query reached, as CoreDNS labels it in metrics. */
  readonly server: string;
  /** Largest reply this client takes over this transport (65535 for TCP). */
  readonly maxSize: number;
  /** The answer store as this query sees it: how the reply may be kept (set by the plugins that know)
   * and, for `cache`, the entry the fast path could not replay and a way to refresh it. A request a
   * plugin derives from this one (rewrite) shares the object, so what the inner plugins decide reaches
   * the pipeline. */
  readonly cache: AnswerPolicy<Request>;
  /** The name of the TSIG key the query was signed with and checked against (its replies are signed);
   * undefined for an unsigned query. */
  readonly tsig?: string;
  /** Which plugin produced the reply (for metrics' `plugin` label), set by whoever answers. */
  answeredBy?: string;
  /** EDNS options to send upstream with this query (rewrite's edns0 rules): forward puts them in its
   * own OPT record. The client's own options (its cookie, padding) never leave the server. */
  upstreamOptions?: readonly { code: number; data: Uint8Array }[];
  /** Set by a plugin that leaves the query unanswered (acl's drop): the server sends nothing, stores
   * nothing and runs no finish hooks. Only on the client's own request (plugins before rewrite). */
  noReply?: boolean;
  /** How many internal lookups (SetupContext.lookup) led to this request: 0 for a client's query. */
  readonly depth?: number;
  /** Date.now() past which the query's work is abandoned (`cancel`): forward stops waiting for its
   * upstreams, an internal lookup inherits it, and a plugin that waits should wait no longer. Set on
   * the client's own request (cancel runs first); requests derived later carry it along. */
  deadline?: number;
  /** TCP only (undefined over UDP and for internal lookups): sends one message of a reply that takes
   * several (a zone transfer), ahead of the message the handler returns, which goes out last. The
   * server gives it the query's ID and question as it does the returned one. Resolves once the socket
   * can take more, after a turn of the event loop, so a long stream neither fills memory nor holds up
   * other queries; resolves false when the client is gone, and the handler should then stop. */
  readonly stream?: (msg: Msg) => Promise<boolean>;
  /** Set by the pipeline on a query a block's `trace` sampled (its `every`); the trace handler then
   * opens the query's span. Queries not sampled never get one. */
  readonly sampled?: boolean;
  /** The span of the handler serving the query, when it is traced (./spanning-next.ts): a plugin that does
   * work of its own worth a span (forward's upstream tries) opens a child of it. */
  span?: TraceSpan;
}
