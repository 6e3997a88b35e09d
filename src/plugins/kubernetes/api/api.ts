// The contract between the reflectors and the Kubernetes API: ApiClient (paged LIST, streamed WATCH,
// a discovery check), its coded errors, and the shapes of a list and a Status. Types and errors only,
// so that the client (http-client.ts), the connection settings (kubeconfig.ts) and the reflector all
// import from here and never from each other.

import type { KObject } from "../model/source.ts";

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

/** A list's own metadata: where the next page starts, and the list's resourceVersion. */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** One LIST page: its metadata, and its items one at a time (list-page.ts parses each only when it
 * is asked for). */
export interface ListPage {
  readonly metadata: ListMeta;
  /** How many items the page holds. */
  readonly size: number;
  /** Item `i` (0 <= i < size); throws a DECODE KubeError when it is not an object. */
  item(i: number): KObject;
  /** Done with the page: its bytes may be reused for another (no item is read afterwards). */
  release(): void;
}

export type Query = Record<string, string | number | boolean | undefined>;

/** What the reflector needs from the API; a fake can stand in for it. */
export interface ApiClient {
  /** The API server URL, for logs and /ready. */
  readonly server: string;
  /** One LIST request (one page). Rejects with a KubeError. */
  list(path: string, query: Query, signal: AbortSignal): Promise<ListPage>;
  /** Starts a WATCH. `onEvent` gets each event's type and object as sent; `onDone` is called once
   * when the stream ends (null) or fails (a KubeError; after an ERROR event, its Status as from
   * statusError). `inactivityMs` aborts the stream when no byte arrives for that long, headers
   * included. Aborting the returned controller ends it (onDone gets a TRANSPORT error, still once). */
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
