// What the in-process watch benches (watch-event-cost.ts, index-read-stalls.ts, storm-lag.ts) feed a
// store: a generated cluster listed into it, then EndpointSlice events as a watch sends them.

import type { KEndpointSlice, Kind, KObject, Sink } from "../src/plugins/kubernetes/model/source.ts";

const KINDS: Record<string, Kind> = {
  Namespace: "namespaces",
  Service: "services",
  EndpointSlice: "endpointslices",
};

/** Lists `objects` into `sink` (namespaces, services, then slices), each call through `write` (a shared
 * index's write section; at once by default). */
export function listCluster(
  sink: Sink,
  objects: readonly object[],
  write: (fn: () => void) => void = (fn) => fn(),
): void {
  for (const kind of ["namespaces", "services", "endpointslices"] as const) {
    write(() => sink.listStart(kind));
    for (const o of objects as (KObject & { kind: string })[])
      if (KINDS[o.kind] === kind) write(() => sink.apply(kind, "ADDED", o));
    write(() => sink.listDone(kind));
  }
}

/** `count` MODIFIED events as JSON lines, the slices in turn: each flips the readiness of its slice's
 * first endpoint (a pod failing its probe, or coming back), as a rollout or a failing node does. */
export function readinessFlips(objects: readonly object[], count: number): string[] {
  const slices = objects.filter((o) => (o as KObject).kind === "EndpointSlice") as KEndpointSlice[];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const s = structuredClone(slices[i % slices.length]);
    const c = s.endpoints![0].conditions!;
    c.ready = c.serving = !c.ready;
    slices[i % slices.length] = s;
    lines.push(JSON.stringify({ type: "MODIFIED", object: s }));
  }
  return lines;
}
