// The HTTP/2 connection to one upstream, shared by the queries in flight (a stream each): forward's
// DNS-over-HTTPS upstreams and grpc's upstreams. Over TLS (ALPN h2) when given TLS settings, else
// cleartext HTTP/2 with prior knowledge (h2c, what gRPC speaks without TLS); over a unix socket when
// given a path. Opened when first needed and again after it closed, and closed once idle for `idleMs`.
// A failure of the connection reaches the streams on it (their 'error'); the connection itself is only
// let go, so the next query opens a new one: an upstream that restarted is reached again at once. A
// try that timed out has the connection probed (`probe`).

import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import type { TlsSettings } from "./tcp-conn.ts";

export interface H2Target {
  host: string;
  port: number;
  /** A unix socket to connect to instead of host and port. */
  path?: string;
  /** TLS settings, or undefined for cleartext HTTP/2. */
  tls: TlsSettings | undefined;
  idleMs: number;
}

export class H2Session {
  /** The `:authority` of the requests: the certificate's name, else host:port. */
  readonly authority: string;
  readonly #origin: string;
  readonly #target: H2Target;
  #session: http2.ClientHttp2Session | undefined;
  #probing = false;

  constructor(t: H2Target) {
    const host = t.host.includes(":") ? `[${t.host}]` : t.host;
    this.#origin = `${t.tls ? "https" : "http"}://${t.path === undefined ? `${host}:${t.port}` : "localhost"}`;
    this.authority = t.tls?.servername ?? (t.path === undefined ? `${host}:${t.port}` : "localhost");
    this.#target = t;
  }

  /** The open connection, and whether it was already open (a reuse). */
  get(): { session: http2.ClientHttp2Session; reused: boolean } {
    const s = this.#session;
    if (s !== undefined && !s.closed && !s.destroyed) return { session: s, reused: true };
    const t = this.#target;
    const secure = t.tls && { ca: t.tls.ca, cert: t.tls.cert, key: t.tls.key, servername: t.tls.servername };
    const path = t.path;
    const session = http2.connect(this.#origin, {
      ...secure,
      ...(path === undefined
        ? {}
        : {
            createConnection: () =>
              secure ? tls.connect({ ...secure, path, ALPNProtocols: ["h2"] }) : net.connect({ path }),
          }),
    });
    // Failures reach the streams (their 'error'); the connection itself is only let go.
    session.on("error", () => session.destroy());
    session.once("close", () => {
      if (this.#session === session) this.#session = undefined;
    });
    session.setTimeout(t.idleMs, () => session.close());
    session.unref();
    this.#session = session;
    return { session, reused: false };
  }

  /** After a try on the connection timed out: is the upstream still at the other end? A PING not
   * acknowledged within `ms` closes the connection, so the next query opens a new one. Without it, a
   * connection to an upstream that vanished without a word (its node gone, a NAT's state lost) would
   * hold every later query until TCP gives up, many minutes later. An upstream that is only slow
   * acknowledges, and keeps its connection. */
  probe(ms: number): void {
    const s = this.#session;
    if (s === undefined || s.destroyed || this.#probing) return;
    this.#probing = true;
    const timer = setTimeout(() => s.destroy(), ms).unref();
    const pinged = s.ping((err) => {
      clearTimeout(timer);
      this.#probing = false;
      if (err) s.destroy();
    });
    if (!pinged) {
      clearTimeout(timer);
      this.#probing = false;
    }
  }

  close(): void {
    this.#session?.destroy();
    this.#session = undefined;
  }
}

/** What came back for one request: the response's headers, its body and its trailers (empty when
 * none came). */
export interface H2Response {
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
  trailers: http2.IncomingHttpHeaders;
}

/** One request on `session` with `body` (none: the headers end the stream). `done` is called once,
 * with the whole response or with why there is none: the connection failed, the stream was reset, or
 * the body ran over `maxBody` octets. Returns the stream (to cancel it), or undefined when the request
 * could not be made (`done` has been called). */
export function h2Request(
  session: http2.ClientHttp2Session,
  o: { headers: http2.OutgoingHttpHeaders; body: Buffer | undefined; maxBody: number },
  done: (r: H2Response | Error) => void,
): http2.ClientHttp2Stream | undefined {
  let stream: http2.ClientHttp2Stream;
  try {
    stream = session.request(o.headers, { endStream: o.body === undefined });
  } catch (err) {
    done(err as Error);
    return undefined;
  }
  let finished = false;
  const finish = (r: H2Response | Error) => {
    if (finished) return;
    finished = true;
    done(r);
  };
  const parts: Buffer[] = [];
  let size = 0;
  let headers: http2.IncomingHttpHeaders = {};
  let trailers: http2.IncomingHttpHeaders = {};
  stream.on("response", (h) => (headers = h));
  stream.on("trailers", (t) => (trailers = t));
  stream.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= o.maxBody) parts.push(chunk);
    else if (!finished) {
      finish(new Error(`the upstream's reply is over ${o.maxBody} octets`));
      stream.close(http2.constants.NGHTTP2_CANCEL);
    }
  });
  // The outcome is known at 'close': a stream the upstream reset also ends its readable side.
  let ended = false;
  stream.on("end", () => (ended = true));
  stream.on("error", (err) => finish(err));
  stream.on("close", () => {
    const code = stream.rstCode ?? http2.constants.NGHTTP2_NO_ERROR;
    if (ended && code === http2.constants.NGHTTP2_NO_ERROR)
      finish({ headers, body: Buffer.concat(parts), trailers });
    else finish(new Error(`the upstream reset the stream (HTTP/2 error code ${code})`));
  });
  if (o.body !== undefined) stream.end(o.body);
  return stream;
}
