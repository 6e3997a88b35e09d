// The ApiClient over node:http / node:https with one keep-alive agent: LIST and discovery as plain
// GETs, WATCH as a streamed GET whose newline-delimited JSON events are split, parsed and handed on
// in slices by the client's ApplyQueue (watch-stream.ts). Objects come back as the
// parsed JSON the API sent. Plain http servers are used as they are, as kubectl does.
//
// Credentials: a token (a token file is read again at most once a minute, as client-go does), basic
// auth, impersonation headers and client certificates come from the KubeConnection. Users with `exec`
// or `auth-provider` get theirs from @kubernetes/client-node, imported on first use so that only they
// pay for the library's memory.

import { http } from "../../../http/node-http.ts";
import https from "node:https";
import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders } from "node:http";
import { readFileSync } from "node:fs";
import { KubeError, KubeErrorCode, statusError } from "./api.ts";
import type { ApiClient, KStatus, ListPage, Query } from "./api.ts";
import type { KubeConnection } from "./kubeconfig.ts";
import { ApplyQueue } from "./apply-queue.ts";
import { WatchStream, transportError } from "./watch-stream.ts";
import { PageBuffers, readListPage } from "./list-page.ts";

export interface HttpClientOptions {
  /** Clock for the token file's re-read interval (tests). */
  now?: () => number;
  /** Where watch events wait to be applied (apply-queue.ts); one of its own by default. */
  queue?: ApplyQueue;
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

export class HttpClient implements ApiClient {
  readonly server: string;
  readonly #conn: KubeConnection;
  readonly #agent: Agent;
  readonly #send: (url: URL, o: https.RequestOptions) => ClientRequest;
  readonly #now: () => number;
  /** Watch events on their way to the sink, applied in slices (apply-queue.ts). */
  readonly queue: ApplyQueue;
  /** Headers that never change: Accept, User-Agent, basic auth, impersonation. */
  readonly #fixed: OutgoingHttpHeaders;
  #token?: string;
  #tokenReadAt: number;
  #plugin?: Promise<() => Promise<RequestAuth>>;
  /** Where answers' bytes are gathered, buffers used again (list-page.ts). */
  readonly #pages = new PageBuffers();

  constructor(conn: KubeConnection, o: HttpClientOptions = {}) {
    this.#conn = conn;
    this.server = conn.server;
    this.#now = o.now ?? Date.now;
    this.queue = o.queue ?? new ApplyQueue();
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

  /** One GET: the status, and the body's bytes in a buffer of #pages (given back by the caller). */
  async #fetch(
    path: string,
    query: Query,
    signal: AbortSignal,
  ): Promise<{ status: number; buffer: Buffer; length: number }> {
    try {
      const auth = await this.#credentials();
      const req = this.#request(this.#url(path, query), auth, signal);
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        req.once("response", resolve);
        // Kept for the request's whole life: an abort while the body is read also emits here.
        req.on("error", reject);
      });
      const expected = Number(res.headers["content-length"] ?? 0);
      const body = await this.#pages.gather(res, Number.isSafeInteger(expected) ? expected : 0);
      return { status: res.statusCode ?? 0, ...body };
    } catch (err) {
      throw transportError(`GET ${path}`, err);
    }
  }

  async #get(path: string, query: Query, signal: AbortSignal): Promise<{ status: number; body: unknown }> {
    const { status, buffer, length } = await this.#fetch(path, query, signal);
    try {
      return { status, body: parseBody(`GET ${path}`, status, buffer.subarray(0, length)) };
    } finally {
      this.#pages.give(buffer);
    }
  }

  /** A page's items are parsed one at a time as the reflector applies them (list-page.ts); its
   * buffer comes back to #pages when the reflector releases the page. */
  async list(path: string, query: Query, signal: AbortSignal): Promise<ListPage> {
    const { status, buffer, length } = await this.#fetch(path, query, signal);
    const what = `GET ${path}`;
    try {
      if (status !== 200)
        throw statusError(parseBody(what, status, buffer.subarray(0, length)) as KStatus | undefined, status);
      return readListPage(what, buffer.subarray(0, length), () => this.#pages.give(buffer));
    } catch (err) {
      this.#pages.give(buffer);
      throw err;
    }
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
    const w = new WatchStream({ what: `watch ${path}`, onEvent, onDone, inactivityMs, queue: this.queue });
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

/** A body as JSON; a body that is not JSON is a DECODE error with status 200, and nothing otherwise
 * (the status says what went wrong). */
function parseBody(what: string, status: number, bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    if (status !== 200) return undefined;
    throw new KubeError(KubeErrorCode.DECODE, `${what}: answer is not JSON`, { cause: err });
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
