// DNS over HTTPS (RFC 8484) for an https:// block: HTTP/2 over TLS, as CoreDNS serves it, with HTTP/1.1
// for clients that do not offer h2 (ALPN); plain HTTP/1.1 without a `tls` directive (as CoreDNS: for
// a proxy that ends TLS in front). Queries come at /dns-query, as GET ?dns=BASE64URL or as a POST of an
// application/dns-message body, and go through the listener's pipeline like any TCP query (answer
// store, chain, a reply up to 65,535 octets). What is not a DoH query gets an HTTP status, never a
// DNS reply: 404 another path, 405 another method, 415 a POST of another media type, 413 a body over
// 65,535 octets, 414 a longer ?dns=, 400 no or bad base64url, or no DNS query in it.
// The TCP limits apply: at most maxConnections connections, maxInFlight streams at once on each (an
// HTTP/2 setting), the read timeout on the TLS handshake and on a request's headers, idle to close a
// connection without requests.
// Over TLS, the reply to a query that carries an EDNS Padding option is padded (padding.ts); over
// plain HTTP it is not (RFC 7830 6), even where a proxy in front ends TLS.

import { http } from "../http/node-http.ts";
import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from "node:http";
import http2 from "node:http2";
import type tls from "node:tls";
import type { Logger } from "pino";
import type { Peer, Pipeline } from "./pipeline.ts";
import type { TcpOptions } from "./tcp-connection.ts";
import type { TlsSettings } from "../setup/block.ts";
import { clientAllowed, keyLog, retls, tlsOptions } from "./secure.ts";
import { HttpConnections } from "./http-server.ts";
import { WireFacts } from "../answers/wire-facts.ts";
import { afterOwner } from "../dns/wire-ttl.ts";
import { paddedReply } from "../dns/padding.ts";
import { PlainCounter } from "../metrics/plain.ts";
import { registry } from "../metrics/registry.ts";

/** CoreDNS's coredns_dns_https_responses_total{server,status}: DoH replies by HTTP status (in the
 * "dns" subsystem, as its other per-query series). */
const httpsResponses = new PlainCounter(
  "coredns_dns_https_responses_total",
  "DNS-over-HTTPS replies by server and HTTP status.",
);
registry.registerMetric(httpsResponses.asMetric());

export const DOH_PATH = "/dns-query";
const MEDIA_TYPE = "application/dns-message";
const MAX_MESSAGE = 65535;
/** base64url of the largest message, unpadded. */
const MAX_BASE64 = Math.ceil((MAX_MESSAGE * 4) / 3);
/** HTTP/1.1 request head an HTTP/1.1 client may send: room for a GET of the longest query, whose
 * ?dns= is MAX_BASE64 characters (Node's default, 16 KiB, answered such a GET 431 where HTTP/2 took it). */
const MAX_HEADER_OCTETS = MAX_BASE64 + 8192;
/** CoreDNS's cap on the max-age it derives from a reply's TTLs. */
const MAX_AGE = 3600;
/** How often Node checks HTTP/1.1 connections against the read timeout (headers, whole request). */
const CHECK_MS = 500;

type Request = IncomingMessage | http2.Http2ServerRequest;
type Response = ServerResponse | http2.Http2ServerResponse;

/** A status and a line of text for what is not a DoH query. */
class HttpRefusal {
  readonly status: number;
  readonly why: string;
  constructor(status: number, why: string) {
    this.status = status;
    this.why = why;
  }
}

export class DohListener {
  pipeline: Pipeline;
  /** The address it was asked to listen on: what a reload's new listener group takes it over by. */
  address = "";
  opts: TcpOptions;
  readonly log: Logger;
  readonly #server: Server | http2.Http2SecureServer;
  #tls: TlsSettings | undefined;
  readonly #facts = new WireFacts();
  readonly #connections: HttpConnections;

  constructor(pipeline: Pipeline, opts: TcpOptions, log: Logger, secure?: TlsSettings) {
    this.pipeline = pipeline;
    this.opts = opts;
    this.log = log;
    this.#tls = secure;
    const handle = (req: Request, res: Response) => void this.#handle(req, res);
    if (secure === undefined) {
      this.#server = http.createServer(
        { connectionsCheckingInterval: CHECK_MS, maxHeaderSize: MAX_HEADER_OCTETS },
        handle,
      );
    } else {
      // maxHeaderSize reaches the HTTP/1.1 fallback (Node reads its HTTP/1 server options), though
      // http2's types leave it out.
      const options: http2.SecureServerOptions & { maxHeaderSize: number } = {
        ...tlsOptions(secure, ["h2", "http/1.1"]),
        allowHTTP1: true,
        maxHeaderSize: MAX_HEADER_OCTETS,
        handshakeTimeout: opts.readMs,
        settings: { maxConcurrentStreams: opts.maxInFlight },
      };
      const server = http2.createSecureServer(options, handle);
      server.on("secureConnection", (socket: tls.TLSSocket) => {
        if (this.#tls !== undefined && !clientAllowed(this.#tls, socket)) socket.destroy();
        // HTTP/1.1 over TLS has no session to time out: a connection silent for idle is let go.
        else if (socket.alpnProtocol !== "h2") socket.setTimeout(this.opts.idleMs, () => socket.destroy());
      });
      keyLog(server, secure, log);
      // Node's HTTP/1.1 fallback checks its timeouts every 30 s unless told otherwise.
      (server as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval = CHECK_MS;
      this.#server = server;
    }
    http1Timeouts(this.#server, opts);
    this.#server.maxConnections = opts.maxConnections;
    this.#connections = new HttpConnections(this.#server, {
      what: "https",
      log,
      idleMs: () => this.opts.idleMs,
    });
  }

  /** A reload: later requests go to `pipeline`, later handshakes get the new certificate,
   * client_auth and key log. */
  use(pipeline: Pipeline, opts: TcpOptions = this.opts, secure?: TlsSettings): void {
    this.pipeline = pipeline;
    this.opts = opts;
    http1Timeouts(this.#server, opts);
    if (secure === undefined || !("setSecureContext" in this.#server)) return;
    this.#tls = secure;
    retls(this.#server, secure, ["h2", "http/1.1"], this.log);
  }

  listen(address: string, port: number, reusePort = false): Promise<number> {
    this.address = address;
    return this.#connections.listen(address, port, reusePort);
  }

  close(): Promise<void> {
    return this.#connections.close();
  }

  async #handle(req: Request, res: Response): Promise<void> {
    // An HTTP/2 request (a stream) must be whole and answered within read + write, as one that
    // trickles in its body would otherwise hold a stream (HTTP/1.1: requestTimeout does it).
    if (req instanceof http2.Http2ServerRequest)
      req.setTimeout(this.opts.readMs + this.opts.writeMs, () =>
        req.stream.close(http2.constants.NGHTTP2_CANCEL),
      );
    let status = 200;
    let headers: OutgoingHttpHeaders;
    let body: Buffer | string;
    try {
      const query = await this.#query(req);
      const s = req.socket;
      const peer: Peer = {
        proto: "tcp",
        padded: this.#tls !== undefined,
        remoteAddress: s.remoteAddress ?? "",
        remotePort: s.remotePort ?? 0,
        localAddress: s.localAddress ?? "",
        localPort: s.localPort ?? 0,
      };
      let reply = await this.pipeline.handle(query, peer);
      if (reply === undefined) throw new HttpRefusal(400, "not a DNS query");
      if (this.#tls !== undefined) reply = paddedReply(query, reply);
      headers = {
        "content-type": MEDIA_TYPE,
        "content-length": reply.length,
        "cache-control": `max-age=${this.#maxAge(reply)}`,
      };
      body = reply;
    } catch (err) {
      if (!(err instanceof HttpRefusal)) this.log.error({ err }, "https: query failed");
      const refusal = err instanceof HttpRefusal ? err : new HttpRefusal(500, "no reply");
      status = refusal.status;
      headers = { "content-type": "text/plain; charset=utf-8" };
      if (status === 405) headers.allow = "GET, POST";
      body = `${refusal.why}\n`;
    }
    // The client may have gone (a reset stream, a closed connection) while the query was answered.
    if (res.headersSent || res.writableEnded || req.socket?.destroyed !== false) return;
    try {
      (res as ServerResponse).writeHead(status, headers);
      res.end(body);
      this.#count(status);
    } catch (err) {
      this.log.debug({ err }, "https: the client left before its reply");
    }
  }

  #count(status: number): void {
    httpsResponses.series({ server: this.pipeline.label, status: String(status) }).value++;
  }

  /** The DNS message of a DoH request, or an HttpRefusal. */
  async #query(req: Request): Promise<Buffer> {
    const url = new URL(req.url ?? "/", "https://doh.invalid");
    if (url.pathname !== DOH_PATH) throw new HttpRefusal(404, `not found: DNS queries go to ${DOH_PATH}`);
    let msg: Buffer;
    if (req.method === "GET") {
      const values = url.searchParams.getAll("dns");
      if (values.length !== 1) throw new HttpRefusal(400, "a GET needs one 'dns' parameter");
      const b64 = values[0];
      if (b64.length > MAX_BASE64) throw new HttpRefusal(414, "the 'dns' parameter is too long");
      // RFC 8484 4.1: base64url without padding; padding is tolerated, anything else is not base64url.
      if (!/^[A-Za-z0-9_-]*={0,2}$/.test(b64))
        throw new HttpRefusal(400, "the 'dns' parameter is not base64url");
      msg = Buffer.from(b64, "base64url");
    } else if (req.method === "POST") {
      const type = String(req.headers["content-type"] ?? "")
        .split(";")[0]
        .trim()
        .toLowerCase();
      if (type !== MEDIA_TYPE) throw new HttpRefusal(415, `a POST must carry ${MEDIA_TYPE}`);
      msg = await body(req);
    } else {
      throw new HttpRefusal(405, "DNS queries are GET or POST");
    }
    if (msg.length < 12) throw new HttpRefusal(400, "not a DNS message");
    return msg;
  }

  /** RFC 8484 5.1: the reply may be kept as long as its records (a denial: its SOA's negative TTL). */
  #maxAge(reply: Buffer): number {
    if (reply.length < 12 || reply[4] !== 0 || reply[5] !== 1) return 0;
    const qEnd = afterOwner(reply, 12) + 4;
    if (qEnd > reply.length) return 0;
    const qtype = (reply[qEnd - 4] << 8) | reply[qEnd - 3];
    const said = this.#facts.read(reply, 0, reply.length, qEnd, qtype).said;
    return Math.max(0, Math.min(said, MAX_AGE));
  }
}

/** The block's timeouts for HTTP/1.1 clients, plain or over TLS (the secure server's HTTP/1.1 fallback
 * has the same settings, untyped, with Node's defaults: 60 s for headers, 5 s of keep-alive). */
function http1Timeouts(server: Server | http2.Http2SecureServer, opts: TcpOptions): void {
  const s = server as Pick<Server, "headersTimeout" | "requestTimeout" | "keepAliveTimeout">;
  s.headersTimeout = opts.readMs;
  s.requestTimeout = opts.readMs + opts.writeMs;
  s.keepAliveTimeout = opts.idleMs;
}

/** A POST's body, up to MAX_MESSAGE octets; a longer one (declared or sent) is a 413. */
function body(req: Request): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_MESSAGE)
    return Promise.reject(new HttpRefusal(413, "a DNS message is at most 65535 octets"));
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_MESSAGE) {
        req.removeAllListeners("data");
        req.resume();
        reject(new HttpRefusal(413, "a DNS message is at most 65535 octets"));
      } else parts.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
    // Cut or reset before its end (after 'end' this changes nothing).
    req.on("close", () => reject(new HttpRefusal(400, "the request's body did not arrive whole")));
  });
}
