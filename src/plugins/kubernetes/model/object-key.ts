// How the store names the objects it holds, and how it tells an update that changes nothing.

import type { Kind } from "./source.ts";

/** The store's key of an object: its name for a namespace, "namespace/name" for every other kind,
 * a Service too. One form, and Kubernetes's own (client-go's MetaNamespaceKeyFunc, kubectl, explain's
 * lines): a "name.namespace" key for Services read like the relative DNS names the store also passes
 * around, and an EndpointSlice or Endpoints object named its service's key in another form. Made with
 * join, which gives one flat string: a template literal gives a pair of strings under a third. */
export function objectKey(kind: Kind, name: string, ns: string | undefined): string {
  return kind === "namespaces" ? name : serviceKey(ns ?? "", name);
}

/** The key of the object `name` in namespace `ns` ("ns/name"), a Service's or any other's. */
export function serviceKey(ns: string, name: string): string {
  return [ns, name].join("/");
}

/** True when the two values serialise alike: an update that changes nothing the store keeps. */
export function sameJSON(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
