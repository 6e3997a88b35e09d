// Is the store equal to the API? The one comparison every fault test ends with: what a clusterdns
// store holds (its dump, from a running process's snapshot file or from a store in this process)
// against a store built straight from the API's objects, with no list, watch or relist in between.
// Both sides are the same slim records, so a difference is a sync that lost an update or kept a
// deleted object, never a difference in how objects are cut down.

import { readFileSync } from "node:fs";
import { Store, type StoreDump } from "../../src/plugins/kubernetes/store/store.ts";
import type { Kind } from "../../src/plugins/kubernetes/model/source.ts";
import type { TestApiServer } from "./api-server.ts";

const DUMP_KINDS = ["services", "endpointslices", "endpoints", "namespaces", "pods"] as const;

export interface CompareOptions {
  /** The zones of the kubernetes stanza (canonical, with the trailing dot). */
  zones: readonly string[];
  /** The kinds it reads. */
  kinds: readonly Kind[];
}

/** The dump of a store that listed the API's current objects once. */
export function apiDump(api: TestApiServer, o: CompareOptions): StoreDump {
  const store = new Store({ zones: o.zones, waitFor: o.kinds });
  for (const kind of o.kinds) {
    store.listStart(kind);
    for (const obj of api.objects(kind)) store.apply(kind, "ADDED", obj);
    store.listDone(kind);
  }
  return store.dump();
}

/** The store dump in a snapshot file (`kubernetes { snapshot FILE }`), or undefined while there is none. */
export function snapshotDump(file: string): StoreDump | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as StoreDump;
  } catch {
    return undefined;
  }
}

export interface Comparison {
  equal: boolean;
  /** Records compared, per kind, on the API's side. */
  records: number;
  /** The first differences, one line each: "services web.default: missing", "...: stale", "...: extra". */
  differences: string[];
}

/** Compares two dumps record by record (as JSON, so packed records compare by their fields). */
export function compareDumps(got: StoreDump, want: StoreDump, max = 10): Comparison {
  const differences: string[] = [];
  let records = 0;
  let count = 0;
  const note = (line: string) => {
    if (count++ < max) differences.push(line);
  };
  for (const kind of DUMP_KINDS) {
    const have = new Map((got[kind] ?? []).map(([k, v]) => [k, JSON.stringify(v)]));
    for (const [key, value] of want[kind]) {
      records++;
      const mine = have.get(key);
      if (mine === undefined) note(`${kind} ${key}: missing`);
      else if (mine !== JSON.stringify(value)) note(`${kind} ${key}: stale (${mine})`);
      have.delete(key);
    }
    for (const key of have.keys()) note(`${kind} ${key}: extra`);
  }
  if (count > max) differences.push(`... ${count - max} more`);
  return { equal: count === 0, records, differences };
}
