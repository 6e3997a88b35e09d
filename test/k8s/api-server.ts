// A small Kubernetes API server for tests: the list/watch HTTP protocol of kube-apiserver over
// node:http on loopback, with in-memory objects, a global resourceVersion, an event log that can be
// compacted (410 Gone afterwards), bookmarks, limit/continue paging, label and field selectors, the
// discovery documents, a restore to an earlier resourceVersion (504 "Too large resource version"
// afterwards), and fault injection. It shares no code with the client it tests.
//
// Deviations from the real server, on purpose: only GET is served (tests change objects through the
// methods below), label selectors know equality, existence and `in`/`notin` (not `<`/`>`), field
// selectors know metadata.name and metadata.namespace only, and no Table/protobuf negotiation.

import { createServer as createHttpServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { randomUUID } from "node:crypto";
import type { EventType, Kind, KObject } from "../../src/plugins/kubernetes/model/source.ts";

interface ResourceInfo {
  kind: string;
  listKind: string;
  singular: string;
  group: string;
  version: string;
  namespaced: boolean;
  shortNames?: string[];
}

const RESOURCES: Record<Kind, ResourceInfo> = {
  services: {
    kind: "Service",
    listKind: "ServiceList",
    singular: "service",
    group: "",
    version: "v1",
    namespaced: true,
    shortNames: ["svc"],
  },
  endpoints: {
    kind: "Endpoints",
    listKind: "EndpointsList",
    singular: "endpoints",
    group: "",
    version: "v1",
    namespaced: true,
    shortNames: ["ep"],
  },
  namespaces: {
    kind: "Namespace",
    listKind: "NamespaceList",
    singular: "namespace",
    group: "",
    version: "v1",
    namespaced: false,
    shortNames: ["ns"],
  },
  pods: {
    kind: "Pod",
    listKind: "PodList",
    singular: "pod",
    group: "",
    version: "v1",
    namespaced: true,
    shortNames: ["po"],
  },
  endpointslices: {
    kind: "EndpointSlice",
    listKind: "EndpointSliceList",
    singular: "endpointslice",
    group: "discovery.k8s.io",
    version: "v1",
    namespaced: true,
  },
  // A CRD of the Multi-Cluster Services API (sigs.k8s.io/mcs-api), served as kube-apiserver serves
  // an installed custom resource.
  serviceimports: {
    kind: "ServiceImport",
    listKind: "ServiceImportList",
    singular: "serviceimport",
    group: "multicluster.x-k8s.io",
    version: "v1alpha1",
    namespaced: true,
    shortNames: ["svcim"],
  },
};
const KINDS = Object.keys(RESOURCES) as Kind[];
const READ_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

function apiVersionOf(info: ResourceInfo): string {
  return info.group === "" ? info.version : `${info.group}/${info.version}`;
}

type Stored = KObject & Record<string, unknown>;

interface LogEntry {
  rv: number;
  kind: Kind;
  type: EventType;
  obj: Stored;
  /** The object before this event (MODIFIED, DELETED), for selector transitions and snapshots. */
  prev?: Stored;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  watch: boolean;
  /** performance.now() when it arrived. */
  at: number;
}

export interface ApiServerOptions {
  /** Serve discovery.k8s.io/v1 endpointslices (default true); false = 404 and absent from discovery. */
  endpointSlices?: boolean;
  /** Serve multicluster.x-k8s.io/v1alpha1 serviceimports, as with the MCS CRDs installed (default
   * true); false = 404 and absent from discovery. */
  serviceImports?: boolean;
  /** How often an open watch that asked for bookmarks gets one (default 1000 ms; 0 = never). */
  bookmarkIntervalMs?: number;
  /** Require `Authorization: Bearer <token>`; 401 otherwise. */
  token?: string;
  /** The answer to a watch from a compacted resourceVersion: an ERROR event on a 200 stream (what
   * kube-apiserver sends, the default) or an HTTP 410 before the stream starts. */
  expiredWatch?: "event" | "http";
  /** Drops the oldest half of the event log past this many events, as etcd compaction would. */
  maxLogEvents?: number;
  /** Serve HTTPS with this key and certificate; with `ca`, require a client certificate it signed. */
  tls?: { key: string | Buffer; cert: string | Buffer; ca?: string | Buffer };
  /** Answer every request but a watch this much later, as a busy server would (default 0). */
  latencyMs?: number;
  /** How long a LIST or WATCH from a resourceVersion the server has not reached waits for it before
   * the 504 (default 3000 ms, kube-apiserver's watch cache wait). */
  tooLargeWaitMs?: number;
}

export interface HangOptions {
  /** For a watch: hang before sending headers instead of sending 200 and then nothing. */
  beforeHeaders?: boolean;
}

interface WatchConn {
  kind: Kind;
  info: ResourceInfo;
  namespace?: string;
  labels: LabelRequirement[];
  fields: FieldRequirement[];
  res: ServerResponse;
  timers: NodeJS.Timeout[];
  /** Sends nothing more, not even bookmarks, and never ends (silenceWatches). */
  silent?: boolean;
  /** Event lines kept back (holdWatches), oldest first. */
  held?: string[];
  /** Its first frame is cut in the middle of the JSON and the stream ends (truncateNext). */
  truncate?: boolean;
}

export interface TestApiServer {
  /** "http://127.0.0.1:PORT" (https with the tls option) */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** The current (last written) resourceVersion. */
  resourceVersion(): string;
  create<T extends KObject>(kind: Kind, obj: T): T;
  update<T extends KObject>(kind: Kind, obj: T): T;
  remove(kind: Kind, obj: KObject | { name: string; namespace?: string }): void;
  get(kind: Kind, namespace: string | undefined, name: string): KObject | undefined;
  /** Drops the event log: a watch or continue token from before now gets 410 Gone. */
  compact(): void;
  /** The next n requests (any path) fail with this HTTP status and a Status body. */
  failNext(n: number, status?: number): void;
  /** The next n requests are accepted and never answered (a watch gets 200 and then nothing). */
  hangNext(n: number, opts?: HangOptions): void;
  /** Destroys the connection of every open watch (and of every hung request). */
  dropWatches(): void;
  /** While down, every request's connection is reset at once and open watches are dropped: an API
   * server that is not there. */
  setDown(down: boolean): void;
  /** Open watch streams, of one kind or all. */
  openWatches(kind?: Kind): number;
  /** Stops listening and drops every connection: requests are refused until restart(). */
  kill(): Promise<void>;
  /** Listens again on the same port after kill(). As with a restarted kube-apiserver, whose watch
   * cache starts at the current resourceVersion, a watch from before the restart gets 410 Gone. */
  restart(): Promise<void>;
  /** The API comes back from an etcd backup taken at resourceVersion `at` (not before the last
   * compaction): the objects as they were then, the resourceVersion back to `at`, open watches
   * dropped. A LIST or WATCH from a later resourceVersion then waits tooLargeWaitMs and gets 504
   * Timeout with the cause ResourceVersionTooLarge, as from kube-apiserver. */
  restore(at: string): void;
  /** Compacts and ends every open watch with an ERROR event holding a 410 Expired Status. */
  expireWatches(): void;
  /** While set, every LIST is answered with this HTTP status and a Status body; undefined ends it. */
  failLists(status?: number): void;
  /** The open watches stay open and send nothing more: no event, no bookmark, no end. */
  silenceWatches(): void;
  /** Open watches keep their events (bookmarks too) instead of sending them, until released: a
   * storm written in bursts, without the cost of making each event counted in the burst. */
  holdWatches(): void;
  /** Sends up to `n` of each open watch's held events, in order (all with no n); once none is held,
   * watches send as they go again. Returns how many were sent. */
  releaseWatches(n?: number): number;
  /** The next n answers of a LIST or WATCH are cut in the middle of their JSON: a list's body (its
   * Content-Length says so), a watch's first frame, after which the stream ends. */
  truncateNext(n: number): void;
  /** Runs before each LIST is answered, and the answer waits for what it returns: a test changes
   * objects between the pages of a list. Undefined removes it. */
  onList(hook?: (query: Record<string, string>) => void | Promise<void>): void;
  /** Every object of a kind, as a GET of each would return it. */
  objects(kind: Kind): KObject[];
  /** Requests of one kind's collection (list or watch), for assertions. */
  requestsFor(kind: Kind, watch?: boolean): RecordedRequest[];
  /** The most requests other than watches that were open at once. */
  maxInFlight(): number;
  close(): Promise<void>;
}

// --- selectors ------------------------------------------------------------------------------------

interface LabelRequirement {
  key: string;
  op: "=" | "!=" | "exists" | "!exists" | "in" | "notin";
  value?: string;
  /** The set of `in` and `notin`. */
  values?: string[];
}

interface FieldRequirement {
  field: "metadata.name" | "metadata.namespace";
  op: "=" | "!=";
  value: string;
}

class BadRequest extends Error {}

const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function parseLabelSelector(s: string | null): LabelRequirement[] {
  if (!s) return [];
  // Commas inside the parentheses of `in (a, b)` separate values, not requirements.
  return s.split(/,(?![^(]*\))/).map((raw) => {
    const term = raw.trim();
    let req: LabelRequirement;
    const ne = term.indexOf("!=");
    const eq = term.indexOf("=");
    const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
    if (set) {
      const values = set[3].split(",").map((v) => v.trim());
      if (values.some((v) => !LABEL_VALUE.test(v))) {
        throw new BadRequest(`unable to parse requirement: ${JSON.stringify(term)}`);
      }
      req = { key: set[1], op: set[2] as "in" | "notin", values };
    } else if (term.startsWith("!")) req = { key: term.slice(1).trim(), op: "!exists" };
    else if (ne >= 0) req = { key: term.slice(0, ne).trim(), op: "!=", value: term.slice(ne + 2).trim() };
    else if (eq >= 0) {
      const value = term.slice(term.startsWith("==", eq) ? eq + 2 : eq + 1).trim();
      req = { key: term.slice(0, eq).trim(), op: "=", value };
    } else req = { key: term, op: "exists" };
    if (!LABEL_KEY.test(req.key) || (req.value !== undefined && !LABEL_VALUE.test(req.value))) {
      throw new BadRequest(`unable to parse requirement: ${JSON.stringify(term)}`);
    }
    return req;
  });
}

function parseFieldSelector(s: string | null): FieldRequirement[] {
  if (!s) return [];
  return s.split(",").map((raw) => {
    const term = raw.trim();
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(term);
    if (!m) throw new BadRequest(`invalid selector: '${term}'; can't understand '${term}'`);
    const field = m[1].trim();
    if (field !== "metadata.name" && field !== "metadata.namespace") {
      throw new BadRequest(`field label not supported: ${field}`);
    }
    return { field, op: m[2] === "!=" ? "!=" : "=", value: m[3].trim() };
  });
}

function matchesLabels(obj: KObject, reqs: LabelRequirement[]): boolean {
  const labels = obj.metadata.labels ?? {};
  for (const r of reqs) {
    const has = Object.hasOwn(labels, r.key);
    if (r.op === "exists" && !has) return false;
    if (r.op === "!exists" && has) return false;
    if (r.op === "=" && labels[r.key] !== r.value) return false;
    if (r.op === "!=" && has && labels[r.key] === r.value) return false;
    if (r.op === "in" && !(has && r.values!.includes(labels[r.key]))) return false;
    if (r.op === "notin" && has && r.values!.includes(labels[r.key])) return false;
  }
  return true;
}

function matchesFields(obj: KObject, reqs: FieldRequirement[]): boolean {
  for (const r of reqs) {
    const v = r.field === "metadata.name" ? obj.metadata.name : (obj.metadata.namespace ?? "");
    if ((v === r.value) !== (r.op === "=")) return false;
  }
  return true;
}

// --- Status objects -------------------------------------------------------------------------------

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "AlreadyExists",
  410: "Expired",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

function status(code: number, message: string, reason = REASONS[code] ?? "Unknown", details?: object) {
  const s: Record<string, unknown> = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
  };
  if (details) s.details = details;
  s.code = code;
  return s;
}

// --- the server -----------------------------------------------------------------------------------

function clone<T>(o: T): T {
  return structuredClone(o);
}

function keyOf(obj: KObject): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

/** Strips kind/apiVersion (list items carry none) and puts the rest in the server's field order. */
function stored(obj: KObject): Stored {
  const { kind: _k, apiVersion: _a, ...rest } = clone(obj) as Stored;
  return rest as Stored;
}

function typed(info: ResourceInfo, obj: Stored): Stored {
  return { kind: info.kind, apiVersion: apiVersionOf(info), ...obj };
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv, start })).toString("base64");
}

function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const t = JSON.parse(Buffer.from(token, "base64").toString("utf8")) as {
      v?: string;
      rv?: number;
      start?: string;
    };
    if (t.v === "meta.k8s.io/v1" && typeof t.rv === "number" && typeof t.start === "string")
      return { rv: t.rv, start: t.start };
  } catch {
    // fall through
  }
  throw new BadRequest(
    "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
  );
}

/** The index of the first of the sorted `keys` above `start`. */
function firstAfter(keys: readonly string[], start: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid] > start) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

export async function startApiServer(o: ApiServerOptions = {}): Promise<TestApiServer> {
  const slices = o.endpointSlices ?? true;
  const bookmarkMs = o.bookmarkIntervalMs ?? 1000;
  const maxLog = o.maxLogEvents ?? 100_000;
  const objects = new Map<Kind, Map<string, Stored>>(KINDS.map((k) => [k, new Map()]));
  let rv = 1;
  let compactedRv = 1;
  let eventLog: LogEntry[] = [];
  const watches = new Set<WatchConn>();
  const hung = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const requests: RecordedRequest[] = [];
  const faults: ({ fail: number } | { hang: HangOptions })[] = [];
  let down = false;
  let inFlight = 0;
  let mostInFlight = 0;
  let listFailure: number | undefined;
  let truncations = 0;
  let listHook: ((query: Record<string, string>) => void | Promise<void>) | undefined;

  const imports = o.serviceImports ?? true;
  const served = (kind: Kind) =>
    kind === "endpointslices" ? slices : kind === "serviceimports" ? imports : true;

  function record(kind: Kind, type: EventType, obj: Stored, prev?: Stored): void {
    const entry: LogEntry = { rv, kind, type, obj, prev };
    eventLog.push(entry);
    if (eventLog.length > maxLog) {
      const drop = eventLog.length >> 1;
      compactedRv = eventLog[drop - 1].rv;
      eventLog = eventLog.slice(drop);
    }
    for (const w of watches) if (w.kind === kind) deliver(w, entry);
  }

  /** The event a watch sees for one log entry, after its namespace and selectors, or none. */
  function eventFor(w: WatchConn, e: LogEntry): { type: string; obj: Stored } | undefined {
    if (w.namespace !== undefined && e.obj.metadata.namespace !== w.namespace) return undefined;
    const match = (x: Stored | undefined) =>
      x !== undefined && matchesLabels(x, w.labels) && matchesFields(x, w.fields);
    const now = e.type !== "DELETED" && match(e.obj);
    const before = e.type === "ADDED" ? false : match(e.prev ?? e.obj);
    if (e.type === "DELETED") return before ? { type: "DELETED", obj: e.obj } : undefined;
    if (now && before) return { type: "MODIFIED", obj: e.obj };
    if (now) return { type: "ADDED", obj: e.obj };
    if (before) return { type: "DELETED", obj: e.obj };
    return undefined;
  }

  function send(w: WatchConn, type: string, object: unknown): void {
    if (w.silent || !watches.has(w)) return;
    const line = JSON.stringify({ type, object });
    if (w.held) {
      w.held.push(line);
      return;
    }
    if (!w.truncate) {
      w.res.write(line + "\n");
      return;
    }
    w.res.write(line.slice(0, line.length >> 1) + "\n");
    closeWatch(w, false);
  }

  function deliver(w: WatchConn, e: LogEntry): void {
    const ev = eventFor(w, e);
    if (ev) send(w, ev.type, typed(w.info, ev.obj));
  }

  function closeWatch(w: WatchConn, destroy: boolean): void {
    if (!watches.delete(w)) return;
    for (const t of w.timers) clearTimeout(t);
    if (destroy) w.res.socket?.destroy();
    else w.res.end();
  }

  /** The objects of a kind as they were at resourceVersion `at` (undoing later log entries). */
  function snapshot(kind: Kind, at: number): Map<string, Stored> {
    const cur = objects.get(kind)!;
    if (at >= rv) return cur;
    const snap = new Map(cur);
    for (let i = eventLog.length - 1; i >= 0 && eventLog[i].rv > at; i--) {
      const e = eventLog[i];
      if (e.kind !== kind) continue;
      const key = keyOf(e.obj);
      if (e.type === "ADDED") snap.delete(key);
      else snap.set(key, e.prev!);
    }
    return snap;
  }

  function stamp(kind: Kind, obj: KObject, prev?: Stored): Stored {
    const info = RESOURCES[kind];
    const s = stored(obj);
    if (info.namespaced) s.metadata.namespace ??= "default";
    else delete s.metadata.namespace;
    const m = s.metadata as Stored["metadata"] & Record<string, unknown>;
    rv++;
    m.uid = prev?.metadata.uid ?? randomUUID();
    m.resourceVersion = String(rv);
    m.creationTimestamp =
      (prev?.metadata as Record<string, unknown> | undefined)?.creationTimestamp ?? nowTimestamp();
    m.managedFields = [
      {
        manager: "clusterdns-test",
        operation: prev ? "Update" : "Apply",
        apiVersion: apiVersionOf(info),
        time: nowTimestamp(),
        fieldsType: "FieldsV1",
        fieldsV1: { "f:metadata": {} },
      },
    ];
    return s;
  }

  // --- HTTP ---------------------------------------------------------------------------------------

  function json(res: ServerResponse, code: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
    res.end(text);
  }

  function fail(res: ServerResponse, code: number, message: string, reason?: string, details?: object): void {
    json(res, code, status(code, message, reason, details));
  }

  function discovery(path: string): object | undefined {
    if (path === "/api") {
      return {
        kind: "APIVersions",
        versions: ["v1"],
        serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: new URL(url).host }],
      };
    }
    // One API group per group of a served kind, each with its one version.
    const groups: { name: string; versions: object[]; preferredVersion: { groupVersion: string } }[] = [];
    for (const k of KINDS) {
      const info = RESOURCES[k];
      if (!served(k) || info.group === "" || groups.some((g) => g.name === info.group)) continue;
      const version = { groupVersion: apiVersionOf(info), version: info.version };
      groups.push({ name: info.group, versions: [version], preferredVersion: version });
    }
    if (path === "/apis") return { kind: "APIGroupList", apiVersion: "v1", groups };
    const group = groups.find((g) => path === `/apis/${g.name}`);
    if (group) return { kind: "APIGroup", apiVersion: "v1", ...group };
    if (path === "/version") {
      return { major: "1", minor: "33", gitVersion: "v1.33.0-clusterdns-test", platform: "linux/amd64" };
    }
    const gv =
      path === "/api/v1"
        ? "v1"
        : groups.map((g) => g.preferredVersion.groupVersion).find((v) => path === `/apis/${v}`);
    if (gv === undefined) return undefined;
    const resources = KINDS.filter((k) => served(k) && apiVersionOf(RESOURCES[k]) === gv).map((k) => {
      const info = RESOURCES[k];
      const r: Record<string, unknown> = {
        name: k,
        singularName: info.singular,
        namespaced: info.namespaced,
        kind: info.kind,
        verbs: READ_VERBS,
      };
      if (info.shortNames) r.shortNames = info.shortNames;
      return r;
    });
    return { kind: "APIResourceList", apiVersion: "v1", groupVersion: gv, resources };
  }

  /** Parses a resource path: the kind, an optional namespace and an optional object name. */
  function route(path: string): { kind: Kind; namespace?: string; name?: string } | undefined {
    let rest: string[];
    let gv: string;
    if (path.startsWith("/api/v1/")) {
      gv = "v1";
      rest = path.slice("/api/v1/".length).split("/");
    } else if (path.startsWith("/apis/")) {
      const parts = path.slice("/apis/".length).split("/");
      gv = `${parts[0]}/${parts[1]}`;
      rest = parts.slice(2);
    } else return undefined;
    if (rest.some((s) => s === "")) return undefined;
    let namespace: string | undefined;
    if (rest[0] === "namespaces" && rest.length >= 3) {
      namespace = rest[1];
      rest = rest.slice(2);
    } else if (rest[0] === "namespaces" && rest.length === 2 && gv === "v1") {
      return { kind: "namespaces", name: decodeURIComponent(rest[1]) };
    }
    const kind = rest[0] as Kind;
    if (!Object.hasOwn(RESOURCES, kind) || !served(kind) || rest.length > 2) return undefined;
    const info = RESOURCES[kind];
    if (apiVersionOf(info) !== gv || (namespace !== undefined && !info.namespaced)) return undefined;
    if (rest.length === 2 && info.namespaced && namespace === undefined) return undefined;
    return {
      kind,
      namespace: namespace && decodeURIComponent(namespace),
      name: rest[1] && decodeURIComponent(rest[1]),
    };
  }

  /** The last listed snapshot of each kind, sorted by key. A snapshot at a resourceVersion never
   * changes, so the pages of one list share it: one sort per list instead of one per page (at 100k
   * services, 200 pages of 500, the sorts took most of a start's 24 s). */
  const listed = new Map<Kind, { at: number; keys: string[]; objs: Stored[] }>();

  function sortedSnapshot(kind: Kind, at: number): { keys: string[]; objs: Stored[] } {
    const cached = listed.get(kind);
    if (cached?.at === at) return cached;
    const snap = snapshot(kind, at);
    const keys = [...snap.keys()].sort();
    const sorted = { at, keys, objs: keys.map((k) => snap.get(k)!) };
    listed.set(kind, sorted);
    return sorted;
  }

  function list(res: ServerResponse, kind: Kind, namespace: string | undefined, q: URLSearchParams): void {
    const info = RESOURCES[kind];
    const labels = parseLabelSelector(q.get("labelSelector"));
    const fields = parseFieldSelector(q.get("fieldSelector"));
    const limit = Number(q.get("limit") ?? 0);
    if (!Number.isInteger(limit) || limit < 0) throw new BadRequest(`invalid limit: ${q.get("limit")}`);
    const cont = q.get("continue");
    const qrv = q.get("resourceVersion");
    let at = rv;
    let start = "";
    if (!cont && qrv && waitForRv(res, Number(qrv), () => list(res, kind, namespace, q))) return;
    if (cont) {
      if (qrv) throw new BadRequest("specifying resource version is not allowed when using continue");
      const t = decodeContinue(cont);
      if (t.rv < compactedRv) {
        fail(
          res,
          410,
          "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
        );
        return;
      }
      at = t.rv;
      start = t.start;
    } else if (qrv && qrv !== "0" && q.get("resourceVersionMatch") === "Exact") {
      const want = Number(qrv);
      if (!Number.isInteger(want)) throw new BadRequest(`invalid resource version: ${qrv}`);
      if (want < compactedRv) {
        fail(res, 410, `The resourceVersion for the provided list is too old.`);
        return;
      }
      at = Math.min(want, rv);
    }
    const { keys, objs } = sortedSnapshot(kind, at);
    const items: Stored[] = [];
    let next = "";
    let remaining = 0;
    for (let i = firstAfter(keys, start); i < keys.length; i++) {
      const obj = objs[i];
      if (namespace !== undefined && obj.metadata.namespace !== namespace) continue;
      if (!matchesLabels(obj, labels) || !matchesFields(obj, fields)) continue;
      if (limit > 0 && items.length === limit) {
        next = encodeContinue(at, keys[i - 1] + "\u0000");
        remaining = keys.length - i;
        break;
      }
      items.push(obj);
    }
    const metadata: Record<string, unknown> = { resourceVersion: String(at) };
    if (next) {
      metadata.continue = next;
      // The real server gives the count only without selectors; so does this one.
      if (labels.length === 0 && fields.length === 0 && namespace === undefined)
        metadata.remainingItemCount = remaining;
    }
    const body = { kind: info.listKind, apiVersion: apiVersionOf(info), metadata, items };
    if (truncations === 0) return json(res, 200, body);
    truncations--;
    const text = JSON.stringify(body);
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(text.slice(0, text.length >> 1));
  }

  /** A request from resourceVersion `want`, which the server has not reached, waits for it as
   * kube-apiserver's watch cache does, then is answered by `retry` or, still too new, with 504 (the
   * Status kube-apiserver sends). Returns whether it waits. */
  function waitForRv(res: ServerResponse, want: number, retry: () => void): boolean {
    if (!(want > rv)) return false;
    const t = setTimeout(() => {
      if (want <= rv) return guarded(res, retry);
      fail(res, 504, `Timeout: Too large resource version: ${want}, current: ${rv}`, "Timeout", {
        causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
        retryAfterSeconds: 1,
      });
    }, o.tooLargeWaitMs ?? 3000);
    res.on("close", () => clearTimeout(t));
    return true;
  }

  function watch(res: ServerResponse, kind: Kind, namespace: string | undefined, q: URLSearchParams): void {
    const info = RESOURCES[kind];
    const w: WatchConn = {
      kind,
      info,
      namespace,
      labels: parseLabelSelector(q.get("labelSelector")),
      fields: parseFieldSelector(q.get("fieldSelector")),
      res,
      timers: [],
    };
    const from = q.get("resourceVersion") ?? "";
    const fromRv = from === "" ? 0 : Number(from);
    if (!Number.isInteger(fromRv) || fromRv < 0) throw new BadRequest(`invalid resource version: ${from}`);
    if (waitForRv(res, fromRv, () => watch(res, kind, namespace, q))) return;
    const expired = fromRv > 0 && fromRv < compactedRv;
    const expiredMsg = `too old resource version: ${fromRv} (${compactedRv})`;
    if (expired && o.expiredWatch === "http") {
      fail(res, 410, expiredMsg);
      return;
    }
    res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private" });
    res.flushHeaders();
    if (expired) {
      res.end(JSON.stringify({ type: "ERROR", object: status(410, expiredMsg) }) + "\n");
      return;
    }
    if (truncations > 0) {
      truncations--;
      w.truncate = true;
    }
    watches.add(w);
    res.on("close", () => closeWatch(w, false));
    if (fromRv === 0) {
      // No resourceVersion (or "0"): the current state as ADDED events, then changes.
      const keys = [...objects.get(kind)!.keys()].sort();
      for (const k of keys) deliver(w, { rv, kind, type: "ADDED", obj: objects.get(kind)!.get(k)! });
    } else {
      for (const e of eventLog) if (e.rv > fromRv && e.kind === kind) deliver(w, e);
    }
    if (q.get("allowWatchBookmarks") === "true" && bookmarkMs > 0) {
      const t = setInterval(
        () =>
          send(w, "BOOKMARK", {
            kind: info.kind,
            apiVersion: apiVersionOf(info),
            metadata: { resourceVersion: String(rv) },
          }),
        bookmarkMs,
      );
      w.timers.push(t);
    }
    const timeout = Number(q.get("timeoutSeconds") ?? 0);
    if (timeout > 0) w.timers.push(setTimeout(() => closeWatch(w, false), timeout * 1000));
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const u = new URL(req.url ?? "/", "http://localhost");
    const q = u.searchParams;
    const isWatch = q.get("watch") === "true" || q.get("watch") === "1";
    requests.push({
      method: req.method ?? "",
      path: u.pathname,
      query: Object.fromEntries(q),
      watch: isWatch,
      at: performance.now(),
    });
    if (isWatch) return answer(req, res, u, q, isWatch);
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    res.on("close", () => inFlight--);
    if ((o.latencyMs ?? 0) > 0) setTimeout(() => answer(req, res, u, q, isWatch), o.latencyMs);
    else answer(req, res, u, q, isWatch);
  }

  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    u: URL,
    q: URLSearchParams,
    isWatch: boolean,
  ): void {
    if (down) {
      req.socket.destroy();
      return;
    }
    const fault = faults.shift();
    if (fault && "fail" in fault) {
      fail(res, fault.fail, `injected failure (HTTP ${fault.fail})`);
      return;
    }
    if (fault && "hang" in fault) {
      if (isWatch && !fault.hang.beforeHeaders) {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.flushHeaders();
      }
      hung.add(res);
      res.on("close", () => hung.delete(res));
      return;
    }
    if (o.token !== undefined && req.headers.authorization !== `Bearer ${o.token}`) {
      fail(res, 401, "Unauthorized");
      return;
    }
    if (req.method !== "GET") {
      fail(res, 405, `the server does not allow this method on the requested resource`);
      return;
    }
    try {
      const doc = discovery(u.pathname);
      if (doc) return json(res, 200, doc);
      const r = route(u.pathname);
      if (!r) return fail(res, 404, "the server could not find the requested resource");
      if (r.name !== undefined) {
        const key = r.namespace ? `${r.namespace}/${r.name}` : r.name;
        const obj = objects.get(r.kind)!.get(key);
        if (!obj)
          return fail(res, 404, `${r.kind} "${r.name}" not found`, "NotFound", {
            name: r.name,
            kind: r.kind,
          });
        return json(res, 200, typed(RESOURCES[r.kind], obj));
      }
      if (isWatch) watch(res, r.kind, r.namespace, q);
      else if (listFailure !== undefined) fail(res, listFailure, `injected failure (HTTP ${listFailure})`);
      else if (listHook) {
        const query = Object.fromEntries(q);
        void Promise.resolve(listHook(query)).then(() =>
          guarded(res, () => list(res, r.kind, r.namespace, q)),
        );
      } else list(res, r.kind, r.namespace, q);
    } catch (err) {
      answerError(res, err);
    }
  }

  function answerError(res: ServerResponse, err: unknown): void {
    if (err instanceof BadRequest) fail(res, 400, err.message);
    else fail(res, 500, String(err));
  }

  function guarded(res: ServerResponse, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      answerError(res, err);
    }
  }

  const server = o.tls
    ? createHttpsServer(
        {
          key: o.tls.key,
          cert: o.tls.cert,
          ca: o.tls.ca,
          requestCert: !!o.tls.ca,
          rejectUnauthorized: !!o.tls.ca,
        },
        handle,
      )
    : createHttpServer(handle);
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `${o.tls ? "https" : "http"}://127.0.0.1:${port}`;

  function find(kind: Kind, obj: { name: string; namespace?: string }): { key: string; cur?: Stored } {
    const ns = RESOURCES[kind].namespaced ? (obj.namespace ?? "default") : undefined;
    const key = ns ? `${ns}/${obj.name}` : obj.name;
    return { key, cur: objects.get(kind)!.get(key) };
  }

  function compact(): void {
    compactedRv = rv;
    eventLog = [];
  }

  function dropWatches(): void {
    for (const w of [...watches]) closeWatch(w, true);
    for (const res of hung) res.socket?.destroy();
    hung.clear();
  }

  return {
    url,
    requests,
    resourceVersion: () => String(rv),
    create(kind, obj) {
      const { key, cur } = find(kind, obj.metadata);
      if (cur) throw new Error(`${kind} "${key}" already exists`);
      const s = stamp(kind, obj);
      objects.get(kind)!.set(key, s);
      record(kind, "ADDED", s);
      return typed(RESOURCES[kind], clone(s)) as unknown as typeof obj;
    },
    update(kind, obj) {
      const { key, cur } = find(kind, obj.metadata);
      if (!cur) throw new Error(`${kind} "${key}" not found`);
      const s = stamp(kind, obj, cur);
      objects.get(kind)!.set(key, s);
      record(kind, "MODIFIED", s, cur);
      return typed(RESOURCES[kind], clone(s)) as unknown as typeof obj;
    },
    remove(kind, obj) {
      const ref = "metadata" in obj ? obj.metadata : obj;
      const { key, cur } = find(kind, ref);
      if (!cur) throw new Error(`${kind} "${key}" not found`);
      objects.get(kind)!.delete(key);
      rv++;
      // A delete event carries the last state, stamped with the revision of the delete.
      const gone = clone(cur);
      gone.metadata.resourceVersion = String(rv);
      record(kind, "DELETED", gone, cur);
    },
    get(kind, namespace, name) {
      const obj = find(kind, { name, namespace }).cur;
      return obj && typed(RESOURCES[kind], clone(obj));
    },
    compact,
    failNext(n, code = 500) {
      for (let i = 0; i < n; i++) faults.push({ fail: code });
    },
    hangNext(n, opts = {}) {
      for (let i = 0; i < n; i++) faults.push({ hang: opts });
    },
    setDown(d) {
      down = d;
      if (d) dropWatches();
    },
    dropWatches,
    async kill() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      dropWatches();
      for (const s of sockets) s.destroy();
      await closed;
    },
    async restart() {
      compact();
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => {
          server.off("error", reject);
          resolve();
        });
      });
    },
    restore(at) {
      const to = Number(at);
      if (!Number.isInteger(to) || to < compactedRv || to > rv)
        throw new Error(`restore: ${at} is not between the last compaction (${compactedRv}) and ${rv}`);
      for (const kind of KINDS) objects.set(kind, new Map(snapshot(kind, to)));
      eventLog = eventLog.filter((e) => e.rv <= to);
      rv = to;
      // Snapshots are cached by resourceVersion, which now means other objects.
      listed.clear();
      dropWatches();
    },
    expireWatches() {
      compact();
      for (const w of [...watches]) {
        send(w, "ERROR", status(410, `too old resource version (compacted at ${compactedRv})`));
        closeWatch(w, false);
      }
    },
    failLists(code) {
      listFailure = code;
    },
    silenceWatches() {
      for (const w of watches) {
        w.silent = true;
        for (const t of w.timers) clearTimeout(t);
      }
    },
    holdWatches() {
      for (const w of watches) w.held ??= [];
    },
    releaseWatches(n = Infinity) {
      let sent = 0;
      for (const w of watches) {
        const lines = w.held ?? [];
        const now = lines.splice(0, n);
        if (lines.length === 0) w.held = undefined;
        // One chunk per event, as kube-apiserver frames them, written together.
        w.res.cork();
        for (const line of now) w.res.write(line + "\n");
        w.res.uncork();
        sent += now.length;
      }
      return sent;
    },
    truncateNext(n) {
      truncations += n;
    },
    onList(hook) {
      listHook = hook;
    },
    objects(kind) {
      return [...objects.get(kind)!.values()].map((obj) => typed(RESOURCES[kind], clone(obj)));
    },
    openWatches(kind) {
      let n = 0;
      for (const w of watches) if (kind === undefined || w.kind === kind) n++;
      return n;
    },
    requestsFor(kind, isWatch) {
      const info = RESOURCES[kind];
      const prefix = info.group === "" ? "/api/v1/" : `/apis/${info.group}/${info.version}/`;
      return requests.filter((r) => {
        if (!r.path.startsWith(prefix) || (isWatch !== undefined && r.watch !== isWatch)) return false;
        const rest = r.path.slice(prefix.length).split("/");
        return (
          (rest.length === 1 && rest[0] === kind) ||
          (rest.length === 3 && rest[0] === "namespaces" && rest[2] === kind)
        );
      });
    },
    maxInFlight: () => mostInFlight,
    async close() {
      for (const w of [...watches]) closeWatch(w, true);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
