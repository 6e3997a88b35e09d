// DNS over gRPC for a grpc:// block, as CoreDNS serves it: the unary call /coredns.dns.DnsService/Query
// whose request and response are a protobuf DnsPacket { bytes msg = 1; } holding one DNS message.
// HTTP/2 over TLS (ALPN h2) with the block's `tls`, cleartext HTTP/2 (h2c, prior knowledge) without
// one, as CoreDNS. Each query goes through the listener's pipeline like a TCP query.
// Every gRPC message is a 5-octet prefix (a compressed flag, a 4-octet length) and the message; the
// outcome is the trailers' grpc-status: 0 with the reply, 12 UNIMPLEMENTED for another method or a
// compressed message, 13 INTERNAL for a body that is not one DnsPacket, 3 INVALID_ARGUMENT for a
// packet that holds no DNS query. Another content-type is HTTP 415, another method than POST 405.
// The TCP limits apply as for DoH: maxConnections, maxInFlight streams per session, the read timeout
// on the handshake and on a call, idle to close a session without calls.
// Over TLS, the reply to a query that carries an EDNS Padding option is padded (padding.ts); over h2c
// it is not (RFC 7830 6).

import http2 from "node:http2";
import type tls from "node:tls";
import type { Logger } from "pino";
import type { Peer, Pipeline } from "./pipeline.ts";
import type { TcpOptions } from "./tcp-connection.ts";
import type { TlsSettings } from "../setup/block.ts";
import { clientAllowed, keyLog, retls, tlsOptions } from "./secure.ts";
import { HttpConnections } from "./http-server.ts";
import { paddedReply } from "../dns/padding.ts";
import { decodePacket, encodePacket, frame, GrpcStatus, MAX_MESSAGE, unframe } from "../dns/grpc-packet.ts";

export const GRPC_PATH = "/coredns.dns.DnsService/Query";

class CallError {
  readonly status: number;
  readonly why: string;
  constructor(status: number, why: string) {
    this.status = status;
    this.why = why;
  }
}

export class GrpcListener {
  pipeline: Pipeline;
  /** The address it was asked to listen on: what a reload's new listener group takes it over by. */
  address = "";
  opts: TcpOptions;
  readonly log: Logger;
  readonly #server: http2.Http2Server | http2.Http2SecureServer;
  #tls: TlsSettings | undefined;
  readonly #connections: HttpConnections;

  constructor(pipeline: Pipeline, opts: TcpOptions, log: Logger, secure?: TlsSettings) {
    this.pipeline = pipeline;
    this.opts = opts;
    this.log = log;
    this.#tls = secure;
    const settings = { maxConcurrentStreams: opts.maxInFlight };
    if (secure === undefined) {
      this.#server = http2.createServer({ settings });
    } else {
      const server = http2.createSecureServer({
        ...tlsOptions(secure, ["h2"]),
        handshakeTimeout: opts.readMs,
        settings,
      });
      server.on("secureConnection", (socket: tls.TLSSocket) => {
        if (this.#tls !== undefined && !clientAllowed(this.#tls, socket)) socket.destroy();
      });
      keyLog(server, secure, log);
      this.#server = server;
    }
    this.#server.on("stream", (stream, headers) => void this.#call(stream, headers));
    this.#server.maxConnections = opts.maxConnections;
    this.#connections = new HttpConnections(this.#server, {
      what: "grpc",
      log,
      idleMs: () => this.opts.idleMs,
    });
  }

  /** A reload: later calls go to `pipeline`, later handshakes get the new certificate,
   * client_auth and key log. */
  use(pipeline: Pipeline, opts: TcpOptions = this.opts, secure?: TlsSettings): void {
    this.pipeline = pipeline;
    this.opts = opts;
    if (secure === undefined || !("setSecureContext" in this.#server)) return;
    this.#tls = secure;
    retls(this.#server, secure, ["h2"], this.log);
  }

  listen(address: string, port: number, reusePort = false): Promise<number> {
    this.address = address;
    return this.#connections.listen(address, port, reusePort);
  }

  /** Stops accepting; calls being answered finish (GOAWAY), what is still open a second later is cut. */
  close(): Promise<void> {
    return this.#connections.close();
  }

  async #call(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): Promise<void> {
    // A call must be whole and answered within read + write, as one that trickles in would hold a stream.
    stream.setTimeout(this.opts.readMs + this.opts.writeMs, () =>
      stream.close(http2.constants.NGHTTP2_CANCEL),
    );
    stream.on("error", (err) => this.log.debug({ err }, "grpc: stream error"));
    if (headers[":method"] !== "POST") return this.#http(stream, 405, "gRPC calls are POST");
    const type = String(headers["content-type"] ?? "");
    if (type !== "application/grpc" && !type.startsWith("application/grpc+"))
      return this.#http(stream, 415, "gRPC calls carry application/grpc");
    let reply: Buffer;
    try {
      if (headers[":path"] !== GRPC_PATH)
        throw new CallError(GrpcStatus.UNIMPLEMENTED, `unknown method ${headers[":path"]}`);
      const msg = decodePacket(await body(stream));
      if (typeof msg === "string") throw new CallError(GrpcStatus.INTERNAL, msg);
      if (msg.length < 12) throw new CallError(GrpcStatus.INVALID_ARGUMENT, "not a DNS message");
      const s = stream.session?.socket;
      const peer: Peer = {
        proto: "tcp",
        padded: this.#tls !== undefined,
        remoteAddress: s?.remoteAddress ?? "",
        remotePort: s?.remotePort ?? 0,
        localAddress: s?.localAddress ?? "",
        localPort: s?.localPort ?? 0,
      };
      const answer = await this.pipeline.handle(msg, peer);
      if (answer === undefined) throw new CallError(GrpcStatus.INVALID_ARGUMENT, "not a DNS query");
      reply = this.#tls !== undefined ? paddedReply(msg, answer) : answer;
    } catch (err) {
      if (!(err instanceof CallError)) this.log.error({ err }, "grpc: query failed");
      const e = err instanceof CallError ? err : new CallError(GrpcStatus.INTERNAL, "no reply");
      return this.#trailersOnly(stream, e);
    }
    if (stream.destroyed || stream.closed) return;
    try {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(frame(encodePacket(reply)));
    } catch (err) {
      this.log.debug({ err }, "grpc: the client left before its reply");
    }
  }

  /** A failed call: headers and its status in one HEADERS frame (gRPC's Trailers-Only). */
  #trailersOnly(stream: http2.ServerHttp2Stream, e: CallError): void {
    if (stream.destroyed || stream.closed || stream.headersSent) return;
    stream.respond(
      {
        ":status": 200,
        "content-type": "application/grpc",
        "grpc-status": String(e.status),
        "grpc-message": encodeURIComponent(e.why),
      },
      { endStream: true },
    );
  }

  #http(stream: http2.ServerHttp2Stream, status: number, why: string): void {
    if (stream.destroyed || stream.closed || stream.headersSent) return;
    stream.respond({ ":status": status, "content-type": "text/plain; charset=utf-8" });
    stream.end(`${why}\n`);
  }
}

/** The request's body, at most one prefixed message of at most MAX_MESSAGE octets of DnsPacket. */
function body(stream: http2.ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const cap = MAX_MESSAGE + 5 + 8;
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) {
        stream.removeAllListeners("data");
        stream.resume();
        reject(new CallError(GrpcStatus.RESOURCE_EXHAUSTED, "a DNS message is at most 65535 octets"));
      } else parts.push(chunk);
    });
    stream.on("end", () => {
      const message = unframe(Buffer.concat(parts));
      if (Buffer.isBuffer(message)) resolve(message);
      else reject(new CallError(message.status, message.why));
    });
    stream.on("close", () => reject(new CallError(GrpcStatus.CANCELLED, "the call was cut")));
  });
}
