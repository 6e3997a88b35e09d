// The functions a view expression may call, as CoreDNS's expression package defines them (its view
// README, "Available Expression Functions"): what each returns and takes, and its value for a query.

import { isIP } from "node:net";
import type { ViewQuery } from "../../setup/block.ts";
import { className, typeName } from "../../dns/constants.ts";
import { NetSet, plainAddress } from "../../dns/nets.ts";
import type { MetaLabel } from "../metadata/labels.ts";

export type Ty = "bool" | "string" | "int" | "list" | "nil";
export type Value = boolean | string | number | null | readonly Value[];

/** Thrown while evaluating (incidr given something that is not an address): CoreDNS then holds the
 * view false for the query. */
export class EvalError extends Error {}

export interface Fn {
  args: readonly Ty[];
  returns: Ty;
  /** `args` are the evaluated arguments; `constant` says which were literals (incidr compiles a
   * literal CIDR once). */
  make(
    constant: readonly (Value | undefined)[],
    labelOf: (name: string) => MetaLabel,
  ): (q: ViewQuery, args: Value[]) => Value;
}

const plain = (returns: Ty, get: (q: ViewQuery) => Value): Fn => ({
  args: [],
  returns,
  make: () => (q) => get(q),
});

/** A client or server address as CoreDNS's request gives it: IPv4 clients of a dual-stack socket as
 * IPv4. */
const address = (a: string) => plainAddress(a);

export const FUNCTIONS: Record<string, Fn> = {
  bufsize: plain("int", (q) => (q.proto === "tcp" ? 65535 : Math.max(512, q.udpSize))),
  class: plain("string", (q) => className(q.qclass)),
  client_ip: plain("string", (q) => address(q.remoteAddress)),
  do: plain("bool", (q) => q.dnssecOk),
  id: plain("int", (q) => q.id),
  name: plain("string", (q) => q.qname),
  opcode: plain("int", (q) => q.opcode),
  port: plain("string", (q) => String(q.remotePort)),
  proto: plain("string", (q) => q.proto),
  server_ip: plain("string", (q) => address(q.localAddress)),
  server_port: plain("string", (q) => String(q.localPort)),
  size: plain("int", (q) => q.size),
  type: plain("string", (q) => typeName(q.qtype)),
  incidr: {
    args: ["string", "string"],
    returns: "bool",
    make(constant) {
      const fixed = typeof constant[1] === "string" ? cidrSet(constant[1]) : undefined;
      return (_q, [ip, cidr]) => {
        if (isIP(plainAddress(ip as string)) === 0)
          throw new EvalError("first argument is not an IP address");
        return (fixed ?? cidrSet(cidr as string)).has(ip as string);
      };
    },
  },
  metadata: {
    args: ["string"],
    returns: "string",
    make(constant, labelOf) {
      const fixed = typeof constant[0] === "string" ? labelOf(constant[0]) : undefined;
      return (q, [label]) => (fixed ?? labelOf(label as string)).value(q) ?? "";
    },
  },
};

/** A CIDR as Go's net.ParseCIDR takes it (the prefix length is required); throws EvalError. */
export function cidrSet(cidr: string): NetSet {
  const set = new NetSet();
  const wrong = cidr.includes("/") ? set.add(cidr) : `'${cidr}' has no prefix length`;
  if (wrong !== undefined) throw new EvalError(`invalid CIDR address: ${wrong}`);
  return set;
}
