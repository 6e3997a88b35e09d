// DNS over HTTPS to an upstream (RFC 8484): one HTTP/2 connection per upstream, kept and shared by the
// queries in flight (each is a stream of its own), closed once idle for `expire`. A query is a POST of
// application/dns-message to /dns-query (CoreDNS's default), or a GET with ?dns=BASE64URL with
// `doh_method GET`; ID 0, as RFC 8484 4.1 asks, so HTTP caches can share replies. A reply is taken
// only with status 200 and the DNS media type, and then goes through the same checks as any other
// (reply-match.ts). HTTP/2 only: CoreDNS's Go client would fall back to HTTP/1.1 for a server without
// h2, but DoH servers speak h2 (Unbound's and dnsdist's only it, RFC 8484 5.2 recommends it).

import http2 from "node:http2";
import type { Mismatch } from "../../client/reply-match.ts";
import { Conn, ExchangeCode, ExchangeError } from "./conn.ts";
import type { TlsSettings } from "./tcp-conn.ts";

export const DOH_PATH = "/dns-query";
const MEDIA_TYPE = "application/dns-message";
const MAX_REPLY = 65535;

export type DohMethod = "GET" | "POST";

/** The HTTP/2 connection to one DoH upstream, opened when first needed and again after it closed. */
export class DohSession {
  readonly #origin: string;
  readonly #tls: TlsSettings;
  readonly #idleMs: number;
  #session: http2.ClientHttp2Session | undefined;

  constructor(o: { host: string; port: number; tls: TlsSettings; idleMs: number }) {
    const host = o.host.includes(":") ? `[${o.host}]` : o.host;
    this.#origin = `https://${host}:${o.port}`;
    this.#tls = o.tls;
    this.#idleMs = o.idleMs;
  }

  /** The open connection, and whether it was already open (a reuse). */
  get(): { session: http2.ClientHttp2Session; reused: boolean } {
    const s = this.#session;
    if (s !== undefined && !s.closed && !s.destroyed) return { session: s, reused: true };
    const t = this.#tls;
    const session = http2.connect(this.#origin, {
      ca: t.ca,
      cert: t.cert,
      key: t.key,
      servername: t.servername,
    });
    // Failures reach the streams (their 'error'); the connection itself is only let go.
    session.on("error", () => session.destroy());
    session.once("close", () => {
      if (this.#session === session) this.#session = undefined;
    });
    session.setTimeout(this.#idleMs, () => session.close());
    session.unref();
    this.#session = session;
    return { session, reused: false };
  }

  close(): void {
    this.#session?.destroy();
    this.#session = undefined;
  }
}

/** One query on the upstream's HTTP/2 connection: a stream, carrying one exchange. */
export class DohConn extends Conn {
  readonly proto = "https" as const;
  readonly #session: http2.ClientHttp2Session;
  readonly #method: DohMethod;
  readonly #authority: string;
  #stream: http2.ClientHttp2Stream | undefined;

  constructor(
    session: http2.ClientHttp2Session,
    o: { method: DohMethod; authority: string },
    onReject: (why: Mismatch) => void,
  ) {
    super(onReject);
    this.#session = session;
    this.#method = o.method;
    this.#authority = o.authority;
  }

  protected send(query: Buffer): void {
    const get = this.#method === "GET";
    const headers: http2.OutgoingHttpHeaders = {
      ":method": this.#method,
      ":path": get ? `${DOH_PATH}?dns=${query.toString("base64url")}` : DOH_PATH,
      ":authority": this.#authority,
      accept: MEDIA_TYPE,
    };
    if (!get) headers["content-type"] = MEDIA_TYPE;
    let stream: http2.ClientHttp2Stream;
    try {
      stream = this.#session.request(headers, { endStream: get });
    } catch (err) {
      this.fail(new ExchangeError(ExchangeCode.NETWORK, (err as Error).message, { cause: err }));
      return;
    }
    this.#stream = stream;
    const parts: Buffer[] = [];
    let size = 0;
    let refused: string | undefined;
    stream.on("response", (h) => {
      const type = String(h["content-type"] ?? "")
        .split(";")[0]
        .trim()
        .toLowerCase();
      if (h[":status"] !== 200) refused = `the upstream answered HTTP ${h[":status"]}`;
      else if (type !== MEDIA_TYPE) refused = `the upstream answered with media type '${type}'`;
    });
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REPLY) refused = "the upstream's reply is over 65535 octets";
      else parts.push(chunk);
    });
    stream.on("end", () => {
      if (refused !== undefined) this.fail(new ExchangeError(ExchangeCode.NETWORK, refused));
      else this.deliver(Buffer.concat(parts));
    });
    stream.on("error", (err) =>
      this.fail(new ExchangeError(ExchangeCode.NETWORK, err.message, { cause: err })),
    );
    if (!get) stream.end(query);
  }

  protected destroy(): void {
    this.#stream?.close();
  }
}
