// Query log formats: CoreDNS's placeholders, compiled once at setup into a list of small functions, so
// a log line costs one pass over the parts and no parsing.

import type { QueryDone } from "../../metrics/query-done.ts";
import type { MetaLabel } from "../metadata/labels.ts";
import { Opcode, PLAIN_UDP_SIZE, className, rcodeName, typeName } from "../../dns/constants.ts";
import { bracketed } from "../../dns/host-port.ts";

/** What a finished query offers the formatter. `opcode` and `answers` are read when the server
 * provides them (FinishedQuery does). */
export type Finished = QueryDone & { opcode?: number; answers?: number };

export const COMMON_FORMAT =
  '{remote}:{port} - {>id} "{type} {class} {name} {proto} {size} {>do} {>bufsize}" {rcode} {>rflags} {rsize} {duration}';
export const COMBINED_FORMAT = COMMON_FORMAT + ' "{>opcode}"';

type Part = string | ((q: Finished) => string);

const placeholders: Record<string, (q: Finished) => string> = {
  "{type}": (q) => typeName(q.qtype),
  "{name}": (q) => q.qname,
  "{class}": (q) => className(q.qclass),
  "{proto}": (q) => q.proto,
  "{remote}": (q) => remoteText(q.remoteAddress),
  // The address the query's UDP socket is bound to (a wildcard listener: 0.0.0.0 or [::], as CoreDNS
  // prints its own), the connection's own address over TCP.
  "{local}": (q) => (q.localAddress ? remoteText(q.localAddress) : "-"),
  "{port}": (q) => String(q.remotePort),
  "{size}": (q) => String(q.size),
  "{duration}": (q) => goSeconds(q.duration),
  "{rcode}": (q) => rcodeText(q.rcode),
  "{rsize}": (q) => String(q.rsize),
  "{>rflags}": (q) => q.rflags,
  // CoreDNS's request size: 64 KiB over TCP, else the EDNS buffer but never under 512 (RFC 6891 6.2.5).
  "{>bufsize}": (q) => (q.proto === "tcp" ? "65535" : String(Math.max(q.bufsize, PLAIN_UDP_SIZE))),
  "{>do}": (q) => String(q.do),
  "{>id}": (q) => String(q.id),
  // A number, as CoreDNS prints it ({combined} ends with "0" for a query).
  "{>opcode}": (q) => String(q.opcode ?? Opcode.QUERY),
};

export class FormatError extends Error {
  readonly code = "CDNS_ERR_LOG_FORMAT";
}

/** Compiles a format string; throws FormatError for a placeholder it does not know. `{/LABEL}` is the
 * label's value from `metadata`, "-" when it has none or the block has no `metadata`. */
export function compileFormat(
  format: string,
  metadata?: (label: string) => MetaLabel,
): (q: Finished) => string {
  const text = format.replaceAll("{common}", COMMON_FORMAT).replaceAll("{combined}", COMBINED_FORMAT);
  const parts: Part[] = [];
  let at = 0;
  for (const m of text.matchAll(/\{[^{}\s]*\}/g)) {
    if (m.index > at) parts.push(text.slice(at, m.index));
    const p = m[0];
    if (p.startsWith("{/")) {
      const label = metadata?.(p.slice(2, -1));
      parts.push(label === undefined ? "-" : (q) => label.value(q) ?? "-");
      at = m.index + p.length;
      continue;
    }
    if (!Object.hasOwn(placeholders, p)) throw new FormatError(`unknown placeholder ${p}`);
    parts.push(placeholders[p]);
    at = m.index + p.length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return (q) => {
    let out = "";
    for (const p of parts) out += typeof p === "string" ? p : p(q);
    return out;
  };
}

/** An IPv6 client in brackets, as CoreDNS prints it: "[::1]". */
export function remoteText(ip: string): string {
  return bracketed(ip);
}

/** "NOERROR", or the number for an rcode without a name (as CoreDNS prints it). */
export function rcodeText(rcode: number): string {
  const name = rcodeName(rcode);
  return name.startsWith("RCODE") ? String(rcode) : name;
}

/** Seconds as Go prints a duration's Seconds() with 'f', -1: "0.000123s", "1.5s", "0s". */
export function goSeconds(seconds: number): string {
  const ns = String(Math.max(0, Math.round(seconds * 1e9))).padStart(10, "0");
  const frac = ns.slice(-9).replace(/0+$/, "");
  return `${ns.slice(0, -9)}${frac ? "." + frac : ""}s`;
}
