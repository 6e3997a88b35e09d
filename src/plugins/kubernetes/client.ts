// Access to the Kubernetes API for the reflectors: a KubeConfig from @kubernetes/client-node (so every
// auth method it knows applies: tokens, token files, client certificates, exec plugins), raw LIST
// through the library's own fetch and dispatcher, raw WATCH through its Watch class, and a discovery
// check. Objects come back as the parsed JSON the API sent, never the library's typed models: the
// store reads a few fields and the models would cost a full copy of every object.

import {
  HttpMethod,
  IsomorphicFetchHttpLibrary,
  KubeConfig,
  RequestContext,
  Watch,
} from "@kubernetes/client-node";
import type { Cluster } from "@kubernetes/client-node";
import { readFileSync } from "node:fs";
import type { KObject } from "./source.ts";

export interface ClientOptions {
  /** A kubeconfig file (CoreDNS `kubeconfig KUBECONFIG [CONTEXT]`). Wins over everything else. */
  kubeconfig?: string;
  context?: string;
  /** An API URL to use without credentials (CoreDNS `endpoint URL`), when no kubeconfig is given. */
  endpoint?: string;
  /** Client certificate, key and CA for `endpoint` (CoreDNS `tls CERT KEY CACERT`). */
  tls?: { cert: string; key: string; ca: string };
}

export const KubeErrorCode = {
  /** The connection settings are unusable (missing file, unknown context, no cluster). */
  CONFIG: "KUBE_ERR_CONFIG",
  /** The API answered with an HTTP error; `status` and `reason` say which. */
  STATUS: "KUBE_ERR_STATUS",
  /** No answer: connection refused or reset, TLS failure, timeout, abort. */
  TRANSPORT: "KUBE_ERR_TRANSPORT",
  /** The answer was not the JSON expected. */
  DECODE: "KUBE_ERR_DECODE",
} as const;
export type KubeErrorCode = (typeof KubeErrorCode)[keyof typeof KubeErrorCode];

export class KubeError extends Error {
  readonly code: KubeErrorCode;
  /** HTTP status (or the code of a Status in a watch ERROR event). */
  readonly status?: number;
  /** The Status reason: "Expired", "Gone", "Forbidden", ... */
  readonly reason?: string;
  constructor(
    code: KubeErrorCode,
    message: string,
    o: { status?: number; reason?: string; cause?: unknown } = {},
  ) {
    super(message, { cause: o.cause });
    this.name = "KubeError";
    this.code = code;
    this.status = o.status;
    this.reason = o.reason;
  }

  /** 410 Gone / Expired: the resourceVersion or continue token is too old; list again. */
  get gone(): boolean {
    return this.status === 410;
  }
}

/** A Status object as the API sends it in error bodies and watch ERROR events. */
export interface KStatus {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
}

/** Turns a Status object into a KubeError. */
export function statusError(s: KStatus | undefined, httpStatus?: number): KubeError {
  const code = s?.code ?? httpStatus ?? 0;
  const reason = s?.reason;
  const text = s?.message ?? "no status message";
  return new KubeError(KubeErrorCode.STATUS, `HTTP ${code}${reason ? ` ${reason}` : ""}: ${text}`, {
    status: code,
    reason,
  });
}

export interface KList {
  kind?: string;
  apiVersion?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: KObject[];
}

export type Query = Record<string, string | number | boolean | undefined>;

/** What the reflector needs from the API; a fake can stand in for it. */
export interface ApiClient {
  /** The API server URL, for logs and /ready. */
  readonly server: string;
  /** One LIST request (one page). Rejects with a KubeError. */
  list(path: string, query: Query, signal: AbortSignal): Promise<KList>;
  /** Starts a WATCH. `onEvent` gets each event's type and object as sent; `onDone` is called once
   * when the stream ends (null) or fails (a KubeError). `inactivityMs` aborts the stream when no
   * byte arrives for that long. Aborting the returned controller ends it. */
  watch(
    path: string,
    query: Query,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err: KubeError | null) => void,
    inactivityMs?: number,
  ): Promise<AbortController>;
  /** Whether the API serves `resource` in `groupVersion` ("discovery.k8s.io/v1", "endpointslices"). */
  serves(groupVersion: string, resource: string, signal: AbortSignal): Promise<boolean>;
}

function configError(message: string, cause?: unknown): KubeError {
  return new KubeError(KubeErrorCode.CONFIG, message, { cause });
}

/** Builds the KubeConfig CoreDNS would use for these options: the kubeconfig file (and context);
 * else `endpoint` without credentials (plus `tls`); else in-cluster when KUBERNETES_SERVICE_HOST is
 * set; else $KUBECONFIG or ~/.kube/config. Throws a KubeError (CONFIG) when unusable. */
export function loadKubeConfig(o: ClientOptions): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (o.kubeconfig !== undefined) {
      kc.loadFromFile(o.kubeconfig);
      if (o.context !== undefined) {
        if (!kc.getContextObject(o.context)) {
          throw configError(`context "${o.context}" not found in ${o.kubeconfig}`);
        }
        kc.setCurrentContext(o.context);
      }
    } else if (o.endpoint !== undefined) {
      let url: URL;
      try {
        url = new URL(o.endpoint);
      } catch (err) {
        throw configError(`endpoint ${JSON.stringify(o.endpoint)} is not a URL`, err);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw configError(`endpoint ${o.endpoint}: scheme must be http or https`);
      }
      // Read now, so a missing or unreadable file stops start-up (as client-go does for CoreDNS).
      for (const file of o.tls ? [o.tls.cert, o.tls.key, o.tls.ca] : []) {
        try {
          readFileSync(file);
        } catch (err) {
          throw configError(`tls: cannot read ${file}: ${(err as Error).message}`, err);
        }
      }
      kc.loadFromClusterAndUser(
        {
          name: "endpoint",
          server: o.endpoint.replace(/\/+$/, ""),
          skipTLSVerify: false,
          caFile: o.tls?.ca,
        },
        { name: "endpoint", certFile: o.tls?.cert, keyFile: o.tls?.key },
      );
    } else if (process.env.KUBERNETES_SERVICE_HOST) {
      kc.loadFromCluster();
    } else {
      kc.loadFromDefault();
    }
  } catch (err) {
    if (err instanceof KubeError) throw err;
    throw configError(`cannot load Kubernetes client config: ${(err as Error).message}`, err);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw configError(`no cluster in the current context "${kc.getCurrentContext()}"`);
  if (cluster.server.startsWith("http:") && !cluster.skipTLSVerify) {
    // The library refuses plain http unless the cluster says insecure-skip-tls-verify, a flag that
    // means nothing without TLS; kubectl and client-go accept http servers as they are.
    const fixed: Cluster = { ...cluster, skipTLSVerify: true };
    kc.loadFromOptions({
      clusters: kc.clusters.map((c) => (c === cluster ? fixed : c)),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
  }
  return kc;
}

function transportError(err: unknown): KubeError {
  if (err instanceof KubeError) return err;
  const e = err as { name?: string; message?: string; cause?: { message?: string; code?: string } };
  const detail = e.cause?.code ?? e.cause?.message;
  return new KubeError(
    KubeErrorCode.TRANSPORT,
    `${e.message ?? String(err)}${detail ? ` (${detail})` : ""}`,
    {
      cause: err,
    },
  );
}

/** The ApiClient over a KubeConfig. */
export class KubeClient implements ApiClient {
  readonly server: string;
  private readonly kc: KubeConfig;
  private readonly http = new IsomorphicFetchHttpLibrary();

  constructor(kc: KubeConfig) {
    this.kc = kc;
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw configError("no current cluster");
    this.server = cluster.server;
  }

  private async get(
    path: string,
    query: Query,
    signal: AbortSignal,
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    let status: number;
    let text: string;
    try {
      const ctx = new RequestContext(url.toString(), HttpMethod.GET);
      ctx.setHeaderParam("Accept", "application/json");
      await this.kc.applySecurityAuthentication(ctx);
      ctx.setSignal(signal);
      const res = await this.http.send(ctx).toPromise();
      status = res.httpStatusCode;
      text = await res.body.text();
    } catch (err) {
      throw transportError(err);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      if (status !== 200) body = undefined;
      else throw new KubeError(KubeErrorCode.DECODE, `GET ${path}: answer is not JSON`, { cause: err });
    }
    return { status, body };
  }

  async list(path: string, query: Query, signal: AbortSignal): Promise<KList> {
    const { status, body } = await this.get(path, query, signal);
    if (status !== 200) throw statusError(body as KStatus | undefined, status);
    const l = body as KList;
    if (!l || typeof l !== "object" || !Array.isArray(l.items) || typeof l.metadata !== "object") {
      throw new KubeError(KubeErrorCode.DECODE, `GET ${path}: answer is not a list`);
    }
    return l;
  }

  async watch(
    path: string,
    query: Query,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err: KubeError | null) => void,
    inactivityMs?: number,
  ): Promise<AbortController> {
    const w = new Watch(this.kc);
    if (inactivityMs !== undefined) {
      // Watch aborts a stream that got no byte for requestTimeoutMs (30 s, and the same bound while
      // waiting for headers). It is private in the typings; align it with the caller's bound so a
      // hung connect is dropped as soon as a silent stream is.
      (w as unknown as { requestTimeoutMs: number }).requestTimeoutMs = inactivityMs;
    }
    try {
      return await w.watch(
        path,
        query,
        (type, obj) => onEvent(type, obj),
        (err: unknown) => {
          if (!err) return onDone(null);
          const status = (err as { statusCode?: number }).statusCode;
          if (status !== undefined) {
            onDone(
              new KubeError(KubeErrorCode.STATUS, `HTTP ${status}: ${(err as Error).message}`, { status }),
            );
          } else onDone(transportError(err));
        },
      );
    } catch (err) {
      onDone(transportError(err));
      return new AbortController();
    }
  }

  async serves(groupVersion: string, resource: string, signal: AbortSignal): Promise<boolean> {
    const path = groupVersion === "v1" ? "/api/v1" : `/apis/${groupVersion}`;
    const { status, body } = await this.get(path, {}, signal);
    if (status === 404) return false;
    if (status !== 200) throw statusError(body as KStatus | undefined, status);
    const resources = (body as { resources?: { name?: string }[] } | undefined)?.resources;
    if (!Array.isArray(resources))
      throw new KubeError(KubeErrorCode.DECODE, `GET ${path}: not an APIResourceList`);
    return resources.some((r) => r.name === resource);
  }
}

/** Loads the config for these options and returns a client over it. Throws a KubeError (CONFIG). */
export function createClient(o: ClientOptions): KubeClient {
  return new KubeClient(loadKubeConfig(o));
}
