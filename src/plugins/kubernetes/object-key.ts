// How the store names the objects it holds, and how it tells an update that changes nothing.

import type { Kind } from "./source.ts";

/** The store's key of an object: its name for a namespace, "name.namespace" for a service (as DNS
 * names it), "namespace/name" for the rest. Made with join, which gives one flat string: a template
 * literal gives a pair of strings under a third. */
export function objectKey(kind: Kind, name: string, ns: string | undefined): string {
  if (kind === "namespaces") return name;
  return kind === "services" ? [name, ns ?? ""].join(".") : [ns ?? "", name].join("/");
}

/** True when the two values serialise alike: an update that changes nothing the store keeps. */
export function sameJSON(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
