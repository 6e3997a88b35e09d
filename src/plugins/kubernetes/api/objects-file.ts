// The offline Source: Kubernetes objects read from YAML or JSON files instead of the API. A file holds
// one or more documents (YAML `---`); a document is one object or a list of them (`kind: List`, or
// `ServiceList` and the like), as `kubectl get svc,endpointslices,endpoints,pods -A -o yaml` prints it.
// Services, EndpointSlices, Endpoints, Namespaces, Pods and ServiceImports are used; other kinds are
// skipped. The files are read once, when the source is built, so a bad file stops start-up with the
// file and line.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { isIP } from "node:net";
import type * as Yaml from "yaml";
import type { Kind, KObject, Sink, Source } from "../model/source.ts";
import type { LabelSelector } from "../model/label-selector.ts";

/** The YAML parser, loaded when a file is read: every thread of -workers loads this module (the
 * plugin's setup does), and the parser's 72 modules cost each thread about 2 MiB it never uses. */
let yamlModule: typeof Yaml | undefined;
const yaml = (): typeof Yaml => (yamlModule ??= createRequire(import.meta.url)("yaml") as typeof Yaml);

export class ObjectsError extends Error {
  readonly code = "KUBE_ERR_OBJECTS";
  readonly file: string;
  readonly line: number;
  constructor(file: string, line: number, message: string) {
    super(`${file}:${line}: ${message}`);
    this.name = "ObjectsError";
    this.file = file;
    this.line = line;
  }
}

const KINDS: Readonly<Record<string, Kind>> = {
  Service: "services",
  EndpointSlice: "endpointslices",
  Endpoints: "endpoints",
  Namespace: "namespaces",
  Pod: "pods",
  ServiceImport: "serviceimports",
};

/** Kinds whose objects `labels` filters, as the API source does. */
const SELECTED: ReadonlySet<Kind> = new Set(["services", "endpointslices", "endpoints"]);

export type ObjectsByKind = Map<Kind, KObject[]>;

/** One object as found in a file, before it is checked. */
interface Found {
  value: unknown;
  line: number;
  where: string;
}

/** Reads every file; throws ObjectsError (or the fs error for a missing file). */
export function loadObjects(files: readonly string[]): ObjectsByKind {
  const out: ObjectsByKind = new Map();
  for (const file of files) {
    for (const f of readDocuments(file)) {
      const checked = checkObject(f, file);
      if (!checked) continue;
      const list = out.get(checked.kind) ?? [];
      list.push(checked.obj);
      out.set(checked.kind, list);
    }
  }
  // Without Namespace objects, the namespaces the objects name are taken to exist.
  if (!out.has("namespaces")) {
    const names = new Set<string>();
    for (const list of out.values())
      for (const o of list) if (o.metadata.namespace) names.add(o.metadata.namespace);
    if (names.size > 0) {
      out.set(
        "namespaces",
        [...names].sort().map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
      );
    }
  }
  return out;
}

function readDocuments(file: string): Found[] {
  const text = readFileSync(file, "utf8");
  // A JSON dump (`-o json`) can be megabytes: JSON.parse is much faster than the YAML parser, which
  // is still used when it fails, to point at the line.
  if (/^\s*[{[]/.test(text)) {
    let parsed: unknown = undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON after all (or broken): the YAML parser says where
    }
    if (parsed !== undefined) return expand(file, parsed, 1, "document 1", () => 1);
  }
  const { LineCounter, isMap, isSeq, parseAllDocuments } = yaml();
  const lc = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lc });
  const found: Found[] = [];
  for (const [i, doc] of (Array.isArray(docs) ? docs : [docs]).entries()) {
    const where = `document ${i + 1}`;
    const err = doc.errors[0];
    if (err) {
      const line = err.linePos?.[0].line ?? lc.linePos(doc.range[0]).line;
      throw new ObjectsError(file, line, `${where}: ${err.message.split("\n")[0]}`);
    }
    const start = doc.contents?.range?.[0] ?? doc.range[0];
    const items = isMap(doc.contents) ? doc.contents.get("items", true) : undefined;
    const itemLine = (j: number) => {
      const node = isSeq(items) ? items.items[j] : undefined;
      const at = (node as { range?: [number, number, number] } | undefined)?.range?.[0];
      return lc.linePos(at ?? start).line;
    };
    found.push(...expand(file, doc.toJS() as unknown, lc.linePos(start).line, where, itemLine));
  }
  return found;
}

/** A document's objects: the document itself, or the items of a list. */
function expand(
  file: string,
  value: unknown,
  line: number,
  where: string,
  itemLine: (j: number) => number,
): Found[] {
  if (value === null || value === undefined) return [];
  const kind = (value as { kind?: unknown }).kind;
  const items = (value as { items?: unknown }).items;
  if (typeof kind === "string" && kind.endsWith("List") && isPlainObject(value)) {
    if (items === null || items === undefined) return [];
    if (!Array.isArray(items)) throw new ObjectsError(file, line, `${where}: 'items' is not a list`);
    return items.map((v: unknown, j) => ({ value: v, line: itemLine(j), where: `${where} item ${j + 1}` }));
  }
  return [{ value, line, where }];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Checks the fields DNS reads; returns undefined for kinds DNS does not use. */
function checkObject(f: Found, file: string): { kind: Kind; obj: KObject } | undefined {
  const fail = (msg: string): never => {
    throw new ObjectsError(file, f.line, `${f.where}: ${msg}`);
  };
  const o = f.value;
  if (!isPlainObject(o)) return fail("not an object");
  if (typeof o.kind !== "string" || o.kind === "") return fail("no 'kind'");
  const kind = KINDS[o.kind];
  if (!kind) return undefined;
  const meta = o.metadata;
  if (!isPlainObject(meta) || typeof meta.name !== "string" || meta.name === "") {
    return fail(`${o.kind} without metadata.name`);
  }
  const name = `${o.kind} ${meta.name}`;
  const failOn: Fail = (msg) => fail(`${name}: ${msg}`);
  if (meta.labels !== undefined && meta.labels !== null && !isPlainObject(meta.labels)) {
    failOn("metadata.labels is not a map");
  }
  CHECKS[kind]?.(o, failOn);
  // kubectl puts a namespaced object without a namespace in "default"; so does this.
  const obj = (kind === "namespaces" || typeof meta.namespace === "string"
    ? o
    : { ...o, metadata: { ...meta, namespace: "default" } }) as unknown as KObject;
  return { kind, obj };
}

/** Throws an ObjectsError naming the file, line and object. */
type Fail = (msg: string) => never;

/** The checks of the kinds whose fields DNS reads beyond metadata. */
const CHECKS: Partial<Record<Kind, (o: Record<string, unknown>, fail: Fail) => void>> = {
  services: checkService,
  endpointslices: checkSlice,
  endpoints: (o, fail) => listField(o.subsets, "subsets", fail),
  serviceimports: checkImport,
};

function listField(v: unknown, path: string, fail: Fail): void {
  if (v !== undefined && v !== null && !Array.isArray(v)) fail(`${path} is not a list`);
}

function checkService(o: Record<string, unknown>, fail: Fail): void {
  if (o.spec !== undefined && !isPlainObject(o.spec)) fail("spec is not a map");
  const spec = (o.spec ?? {}) as Record<string, unknown>;
  listField(spec.ports, "spec.ports", fail);
  listField(spec.clusterIPs, "spec.clusterIPs", fail);
  if (spec.type === "ExternalName" && typeof spec.externalName !== "string") {
    fail("type ExternalName without spec.externalName");
  }
  for (const [j, p] of ((spec.ports ?? []) as unknown[]).entries()) {
    if (!isPlainObject(p) || typeof p.port !== "number") fail(`spec.ports[${j}] has no port number`);
    if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535) {
      fail(`spec.ports[${j}].port ${p.port} is not a port number (1 to 65535)`);
    }
  }
  // The API server refuses these; a file is checked here, or the address would just be dropped.
  const clusterIP = (ip: unknown, path: string) => {
    if (
      ip !== undefined &&
      ip !== null &&
      ip !== "" &&
      ip !== "None" &&
      (typeof ip !== "string" || !isIP(ip))
    )
      fail(`${path} '${String(ip)}' is not an IP address`);
  };
  clusterIP(spec.clusterIP, "spec.clusterIP");
  for (const [j, ip] of ((spec.clusterIPs ?? []) as unknown[]).entries())
    clusterIP(ip, `spec.clusterIPs[${j}]`);
}

function checkSlice(o: Record<string, unknown>, fail: Fail): void {
  if (typeof o.addressType !== "string") fail("no addressType");
  listField(o.endpoints, "endpoints", fail);
  listField(o.ports, "ports", fail);
  for (const [j, e] of ((o.endpoints ?? []) as unknown[]).entries()) {
    if (!isPlainObject(e) || !Array.isArray(e.addresses)) fail(`endpoints[${j}] has no addresses`);
    const family = o.addressType === "IPv4" ? 4 : o.addressType === "IPv6" ? 6 : 0;
    if (family === 0) continue;
    for (const [k, a] of (e as { addresses: unknown[] }).addresses.entries()) {
      if (typeof a !== "string" || isIP(a) !== family)
        fail(`endpoints[${j}].addresses[${k}] '${String(a)}' is not an ${String(o.addressType)} address`);
    }
  }
}

function checkImport(o: Record<string, unknown>, fail: Fail): void {
  if (!isPlainObject(o.spec)) fail("no spec");
  const spec = o.spec as Record<string, unknown>;
  if (spec.type !== "ClusterSetIP" && spec.type !== "Headless") {
    fail("spec.type is not ClusterSetIP or Headless");
  }
  listField(spec.ips, "spec.ips", fail);
  listField(spec.ports, "spec.ports", fail);
}

export interface ObjectsSourceOptions {
  /** Absolute paths. */
  files: readonly string[];
  /** The kinds to deliver (a kind missing from the files is delivered as an empty list). */
  kinds: readonly Kind[];
  /** CoreDNS `namespaces`: only objects of these namespaces. */
  namespaces?: readonly string[];
  /** CoreDNS `labels`: applies to services, endpointslices and endpoints. */
  labelSelector?: LabelSelector;
}

export interface ObjectsSource extends Source {
  /** Objects read per kind, before filtering. */
  counts(): Record<string, number>;
}

/** Reads the files now (throws ObjectsError); start() delivers them as one list per kind. */
export function objectsSource(o: ObjectsSourceOptions): ObjectsSource {
  // Read at setup, so a bad file stops start-up with its file and line; handed to the store once and
  // then let go: the store keeps slim records, and the raw objects (at 100k services, 200 MB more
  // than the store) would otherwise stay for the life of the process.
  let objects: ObjectsByKind | undefined = loadObjects(o.files);
  const counts = Object.fromEntries([...objects].map(([k, list]) => [k, list.length]));
  const namespaces = o.namespaces && o.namespaces.length > 0 ? new Set(o.namespaces) : undefined;
  const wanted = (kind: Kind, obj: KObject) => {
    if (
      namespaces &&
      !namespaces.has(kind === "namespaces" ? obj.metadata.name : (obj.metadata.namespace ?? ""))
    ) {
      return false;
    }
    return !(o.labelSelector && SELECTED.has(kind) && !o.labelSelector(obj.metadata.labels));
  };
  return {
    start(sink: Sink) {
      const all = objects ?? loadObjects(o.files);
      objects = undefined;
      for (const kind of o.kinds) {
        sink.listStart(kind);
        for (const obj of all.get(kind) ?? []) if (wanted(kind, obj)) sink.apply(kind, "ADDED", obj);
        sink.listDone(kind);
      }
      return Promise.resolve();
    },
    stop() {
      return Promise.resolve();
    },
    describe() {
      return `file ${o.files.join(", ")}`;
    },
    counts() {
      return counts;
    },
  };
}
