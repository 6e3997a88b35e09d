// Two headless Services whose answers outgrow a UDP reply, for the truncation tests with real clients:
// `many` has 100 ready endpoints (its A answer is about 1650 octets: 29 records fit 512), `nine` is a
// StatefulSet of 9 pods with a named port, whose SRV answer fits 900 octets but not with its glue.

import { writeFileSync } from "node:fs";
import { endpointSlice, namespace, service } from "./objects.ts";

/** The addresses of `many.default.svc.cluster.local`, in slice order. */
export const MANY_ADDRESSES = Array.from({ length: 100 }, (_, i) => `10.244.7.${i + 1}`);

/** The pod hostnames behind `nine.default.svc.cluster.local` (long, as StatefulSet names often are). */
export const NINE_HOSTNAMES = Array.from({ length: 9 }, (_, i) => `nine-statefulset-replica-${i}`);

export function headlessObjects(): object[] {
  return [
    namespace("default"),
    service("default", "many", { headless: true, ports: [{ name: "http", port: 80 }] }),
    endpointSlice("default", "many", "many-a", MANY_ADDRESSES, { ports: [{ name: "http", port: 80 }] }),
    service("default", "nine", { headless: true, ports: [{ name: "http", port: 80 }] }),
    endpointSlice(
      "default",
      "nine",
      "nine-a",
      NINE_HOSTNAMES.map((hostname, i) => ({ ip: `10.244.9.${i + 1}`, hostname })),
      { ports: [{ name: "http", port: 80 }] },
    ),
  ];
}

/** Writes the objects as a `kind: List` JSON file for the kubernetes plugin's `objects` option. */
export function writeHeadlessObjects(file: string): string {
  writeFileSync(file, JSON.stringify({ kind: "List", apiVersion: "v1", items: headlessObjects() }));
  return file;
}
