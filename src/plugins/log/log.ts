// log: one line per finished query, written from the finish hook, so cached answers are logged too and
// the plugin adds nothing to the chain. The line is CoreDNS's format; the same facts are pino fields.

import type { Logger } from "pino";
import type { Finished } from "./format.ts";
import { rcodeText } from "./format.ts";
import { className, Rcode, typeName } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";

export type ResponseClass = "success" | "denial" | "error";

export interface LogRule {
  /** Queries at or below this name (canonical) are this rule's. */
  name: string;
  format: (q: Finished) => string;
  /** Classes to log; undefined means all. */
  classes: ReadonlySet<ResponseClass> | undefined;
  /** Slower answers are logged whatever their class, in seconds. */
  minDuration: number | undefined;
}

/** CoreDNS's response classes: NXDOMAIN and NODATA are denials, other failures errors. */
export function classify(q: Finished): ResponseClass {
  if (q.rcode === Rcode.NXDOMAIN) return "denial";
  if (q.rcode !== Rcode.NOERROR) return "error";
  return q.answers === 0 ? "denial" : "success";
}

/** The finish hook for the rules of one server block: the first rule whose name matches decides. */
export function queryLogger(rules: readonly LogRule[], log: Logger): (q: Finished) => void {
  return (q) => {
    for (const rule of rules) {
      if (!isSubdomain(q.qname, rule.name)) continue;
      const wanted =
        rule.classes === undefined ||
        rule.classes.has(classify(q)) ||
        (rule.minDuration !== undefined && q.duration > rule.minDuration);
      if (wanted) log.info(fields(q), rule.format(q));
      return;
    }
  };
}

function fields(q: Finished) {
  return {
    remote: q.remoteAddress,
    port: q.remotePort,
    id: q.id,
    type: typeName(q.qtype),
    class: className(q.qclass),
    name: q.qname,
    proto: q.proto,
    size: q.size,
    do: q.do,
    bufsize: q.bufsize,
    rcode: rcodeText(q.rcode),
    rflags: q.rflags,
    rsize: q.rsize,
    duration: q.duration,
    cached: q.cached,
    // Which plugin answered: "autopath" marks a search list walked on the server.
    answeredBy: q.plugin,
  };
}
