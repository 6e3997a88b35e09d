// Execution order of the directives, after CoreDNS's plugin.cfg: a query passes through the handlers in
// this order whatever order the Corefile lists them in. Directives clusterdns does not implement are
// absent, so naming one in a Corefile is a start-up error.

export const ORDER = [
  "reload",
  "bind",
  "ready",
  "health",
  "prometheus",
  "errors",
  "log",
  "chaos",
  "loadbalance",
  "cache",
  "rewrite",
  "autopath",
  "template",
  "transfer",
  "hosts",
  "kubernetes",
  "file",
  "loop",
  "forward",
  "whoami",
] as const;

export type DirectiveName = (typeof ORDER)[number];

const rank = new Map<string, number>(ORDER.map((name, i) => [name, i]));

/** Position of a directive in the chain, or undefined for one clusterdns does not know. */
export function orderOf(name: string): number | undefined {
  return rank.get(name);
}
