// The ApiClient over node:http / node:https with one keep-alive agent: LIST and discovery as plain
// GETs, WATCH as a streamed GET split into newline-delimited JSON events. Objects come back as the
// parsed JSON the API sent. Plain http servers are used as they are, as kubectl does.
//
// Credentials: a token (a token file is read again at most once a minute, as client-go does), basic
// auth, impersonation headers and client certificates come from the KubeConnection. Users with `exec`
// or `auth-provider` get theirs from @kubernetes/client-node, imported on first use so that only they
// pay for the library's memory.

import http from "node:http";
import https from "node:https";
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { readFileSync } from "node:fs";
import { KubeError, KubeErrorCode, statusError } from "./api.ts";
import type { ApiClient, KList, KStatus, Query } from "./api.ts";
import type { KubeConnection } from "./kubeconfig.ts";

export interface HttpClientOptions {
  /** Clock for the token file's re-read interval (tests). */
  now?: () => number;
}

/** How often a token file is read again. */
const TOKEN_FILE_TTL_MS = 60_000;
/** TCP keep-alive probes on idle connections start after this, as client-go's dialer does. */
const TCP_KEEPALIVE_MS = 30_000;

/** Per-request credentials: headers, and a client certificate when an exec plugin hands one out. */
interface RequestAuth {
  headers: OutgoingHttpHeaders;
  cert?: string | Buffer;
  key?: string | Buffer;
}

/** Splits a byte stream into lines on "\n", across chunk boundaries. Works on bytes, so a UTF-8
 * character cut by a chunk boundary is decoded whole. */
export class LineSplitter {
  #pending: Buffer[] = [];

  /** Calls `onLine` for each line `chunk` completes (without its newline) and keeps the rest. */
  push(chunk: Buffer, onLine: (line: string) => void): void {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      let line = chunk.subarray(start, nl);
      if (this.#pending.length > 0) {
        this.#pending.push(line);
        line = Buffer.concat(this.#pending);
        this.#pending = [];
      }
      start = nl + 1;
      onLine(line.toString("utf8"));
    }
    if (start < chunk.length) this.#pending.push(chunk.subarray(start));
  }

  /** The unterminated last line ("" when the stream ended on a newline). */
  rest(): string {
    const s = Buffer.concat(this.#pending).toString("utf8");
    this.#pending = [];
    return s;
  }
}

function transportError(what: string, err: unknown): KubeError {
  if (err instanceof KubeError) return err;
  const e = err as { message?: string; code?: string };
  const message = e.message ?? String(err);
  const code = e.code && !message.includes(e.code) ? ` (${e.code})` : "";
  return new KubeError(KubeErrorCode.TRANSPORT, `${what}: ${message}${code}`, { cause: err });
}

export class HttpClient implements ApiClient {
  readonly server: string;
  readonly #conn: KubeConnection;
  readonly #agent: http.Agent;
  readonly #send: (url: URL, o: https.RequestOptions) => ClientRequest;
  readonly #now: () => number;
  /** Headers that never change: Accept, User-Agent, basic auth, impersonation. */
  readonly #fixed: OutgoingHttpHeaders;
  #token?: string;
  #tokenReadAt: number;
  #plugin?: Promise<() => Promise<RequestAuth>>;

  constructor(conn: KubeConnection, o: HttpClientOptions = {}) {
    this.#conn = conn;
    this.server = conn.server;
    this.#now = o.now ?? Date.now;
    this.#token = conn.auth.token;
    this.#tokenReadAt = this.#now();
    const tls = conn.tls;
    if (conn.server.startsWith("https:")) {
      this.#send = https.request;
      // A plugin may hand out its own client certificate; then it goes with each request instead
      // (the agent's options would override the request's).
      const own = conn.auth.plugin ? {} : { cert: tls.cert, key: tls.key };
      this.#agent = new https.Agent({
        keepAlive: true,
        keepAliveMsecs: TCP_KEEPALIVE_MS,
        ca: tls.ca,
        ...own,
        rejectUnauthorized: !tls.insecure,
        servername: tls.serverName,
      });
    } else {
      this.#send = http.request;
      this.#agent = new http.Agent({ keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_MS });
    }
    this.#fixed = { Accept: "application/json", "User-Agent": "clusterdns", ...conn.auth.headers };
    const basic = conn.auth.basic;
    if (basic) {
      const b64 = Buffer.from(`${basic.username}:${basic.password}`).toString("base64");
      this.#fixed.Authorization = `Basic ${b64}`;
    }
  }

  /** Closes every connection of this client; requests still open fail with a transport error. */
  close(): void {
    this.#agent.destroy();
  }

  async #credentials(): Promise<RequestAuth> {
    const a = this.#conn.auth;
    if (a.plugin) {
      // Tried again on the next request when loading fails.
      this.#plugin ??= pluginAuth(a.plugin.kubeconfig, a.plugin.context, this.server).catch(
        (err: unknown) => {
          this.#plugin = undefined;
          throw err;
        },
      );
      const auth = await (await this.#plugin)();
      return { ...auth, headers: { ...this.#fixed, ...auth.headers } };
    }
    if (a.tokenFile && this.#now() - this.#tokenReadAt >= TOKEN_FILE_TTL_MS) {
      this.#tokenReadAt = this.#now();
      try {
        const t = readFileSync(a.tokenFile, "utf8").trim();
        if (t !== "") this.#token = t;
      } catch {
        // Keep the last good token: a rotation replaces the file, it does not remove it for long.
      }
    }
    if (!this.#token) return { headers: this.#fixed };
    return { headers: { ...this.#fixed, Authorization: `Bearer ${this.#token}` } };
  }

  #url(path: string, query: Query): URL {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  /** Starts one GET; the caller gets the request at once and listens on it. */
  #request(url: URL, auth: RequestAuth, signal?: AbortSignal): ClientRequest {
    const req = this.#send(url, {
      method: "GET",
      agent: this.#agent,
      headers: auth.headers,
      cert: auth.cert,
      key: auth.key,
      signal,
    });
    req.end();
    return req;
  }

  async #get(path: string, query: Query, signal: AbortSignal): Promise<{ status: number; body: unknown }> {
    const what = `GET ${path}`;
    let status: number;
    let text: string;
    try {
      const auth = await this.#credentials();
      const req = this.#request(this.#url(path, query), auth, signal);
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        req.once("response", resolve);
        // Kept for the request's whole life: an abort while the body is read also emits here.
        req.on("error", reject);
      });
      status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      text = Buffer.concat(chunks).toString("utf8");
    } catch (err) {
      throw transportError(what, err);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      if (status !== 200) body = undefined;
      else throw new KubeError(KubeErrorCode.DECODE, `${what}: answer is not JSON`, { cause: err });
    }
    return { status, body };
  }

  async list(path: string, query: Query, signal: AbortSignal): Promise<KList> {
    const { status, body } = await this.#get(path, query, signal);
    if (status !== 200) throw statusError(body as KStatus | undefined, status);
    const l = body as KList;
    if (!l || typeof l !== "object" || !Array.isArray(l.items) || typeof l.metadata !== "object") {
      throw new KubeError(KubeErrorCode.DECODE, `GET ${path}: answer is not a list`);
    }
    return l;
  }

  async serves(groupVersion: string, resource: string, signal: AbortSignal): Promise<boolean> {
    const path = groupVersion === "v1" ? "/api/v1" : `/apis/${groupVersion}`;
    const { status, body } = await this.#get(path, {}, signal);
    if (status === 404) return false;
    if (status !== 200) throw statusError(body as KStatus | undefined, status);
    const resources = (body as { resources?: { name?: string }[] } | undefined)?.resources;
    if (!Array.isArray(resources)) {
      throw new KubeError(KubeErrorCode.DECODE, `GET ${path}: not an APIResourceList`);
    }
    return resources.some((r) => r.name === resource);
  }

  async watch(
    path: string,
    query: Query,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err: KubeError | null) => void,
    inactivityMs?: number,
  ): Promise<AbortController> {
    const w = new WatchStream(`watch ${path}`, onEvent, onDone, inactivityMs);
    let auth: RequestAuth;
    try {
      auth = await this.#credentials();
    } catch (err) {
      w.failed(err);
      return w.ctl;
    }
    if (!w.ended) w.attach(this.#request(this.#url(path, { watch: true, ...query }), auth));
    return w.ctl;
  }
}

/** One watch request's life: its events, line by line; its inactivity timer; and its one end, which
 * calls onDone once (an abort through `ctl`, a timeout, an error, or the server ending the stream). */
class WatchStream {
  readonly ctl = new AbortController();
  readonly #what: string;
  readonly #onEvent: (type: string, obj: unknown) => void;
  readonly #onDone: (err: KubeError | null) => void;
  readonly #inactivityMs: number | undefined;
  readonly #onAbort = () => this.#finish(new KubeError(KubeErrorCode.TRANSPORT, `${this.#what}: aborted`));
  #req: ClientRequest | undefined;
  #ended = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    what: string,
    onEvent: (type: string, obj: unknown) => void,
    onDone: (err: KubeError | null) => void,
    inactivityMs: number | undefined,
  ) {
    this.#what = what;
    this.#onEvent = onEvent;
    this.#onDone = onDone;
    this.#inactivityMs = inactivityMs;
    this.ctl.signal.addEventListener("abort", this.#onAbort);
    this.#arm();
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Ends the watch with a transport error. */
  failed(err: unknown): void {
    this.#finish(transportError(this.#what, err));
  }

  /** Follows the request the watch was sent with. */
  attach(req: ClientRequest): void {
    this.#req = req;
    req.on("error", (err) => this.failed(err));
    req.on("response", (res) => {
      this.#arm();
      if (res.statusCode !== 200) this.#refused(res);
      else this.#stream(res);
    });
  }

  #finish(err: KubeError | null): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#timer);
    this.ctl.signal.removeEventListener("abort", this.#onAbort);
    // After a clean end the connection goes back to the agent; otherwise it is dropped.
    if (err) this.#req?.destroy();
    this.#onDone(err);
  }

  /** (Re)starts the inactivity timer. */
  #arm(): void {
    const ms = this.#inactivityMs;
    if (ms === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => this.#finish(new KubeError(KubeErrorCode.TRANSPORT, `${this.#what}: no data for ${ms} ms`)),
      ms,
    );
  }

  /** The events of a watch the server took, one JSON object a line. */
  #stream(res: IncomingMessage): void {
    const lines = new LineSplitter();
    const onLine = (line: string) => this.#line(line);
    res.on("data", (chunk: Buffer) => {
      this.#arm();
      lines.push(chunk, onLine);
    });
    res.on("end", () => {
      onLine(lines.rest());
      this.#finish(null);
    });
    res.on("error", (err) => this.failed(err));
    res.on("close", () => {
      if (!res.complete)
        this.#finish(new KubeError(KubeErrorCode.TRANSPORT, `${this.#what}: connection closed`));
    });
  }

  #line(line: string): void {
    if (this.#ended || line.trim() === "") return;
    const what = this.#what;
    let ev: { type?: unknown; object?: unknown };
    try {
      ev = JSON.parse(line) as typeof ev;
    } catch (err) {
      return this.#finish(new KubeError(KubeErrorCode.DECODE, `${what}: event is not JSON`, { cause: err }));
    }
    if (typeof ev?.type !== "string") {
      return this.#finish(new KubeError(KubeErrorCode.DECODE, `${what}: event has no type`));
    }
    try {
      this.#onEvent(ev.type, ev.object);
    } catch (err) {
      return this.#finish(
        new KubeError(KubeErrorCode.DECODE, `${what}: event handler failed: ${(err as Error).message}`, {
          cause: err,
        }),
      );
    }
    if (ev.type === "ERROR") this.#finish(statusError(ev.object as KStatus | undefined));
  }

  /** A watch answered with an HTTP error: reads the Status body and ends with it. */
  #refused(res: IncomingMessage): void {
    const chunks: Buffer[] = [];
    res.on("data", (chunk: Buffer) => {
      this.#arm();
      chunks.push(chunk);
    });
    res.on("end", () => {
      let body: KStatus | undefined;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as KStatus;
      } catch {
        body = undefined;
      }
      this.#finish(statusError(body, res.statusCode));
    });
    res.on("error", (err) => this.failed(err));
  }
}

/** Credentials from @kubernetes/client-node for a user with `exec` or `auth-provider`. */
async function pluginAuth(
  file: string,
  context: string,
  server: string,
): Promise<() => Promise<RequestAuth>> {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  kc.setCurrentContext(context);
  if (server.startsWith("http:")) {
    // The library refuses plain http unless the cluster says insecure-skip-tls-verify.
    const current = kc.getCurrentCluster();
    kc.loadFromOptions({
      clusters: kc.clusters.map((c) => (c === current ? { ...c, skipTLSVerify: true } : c)),
      users: kc.users,
      contexts: kc.contexts,
      currentContext: kc.currentContext,
    });
  }
  return async () => {
    const o: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k] = v;
    return {
      headers,
      cert: o.cert as string | Buffer | undefined,
      key: o.key as string | Buffer | undefined,
    };
  };
}
