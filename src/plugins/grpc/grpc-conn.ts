// One call of /coredns.dns.DnsService/Query on an upstream's HTTP/2 connection (a stream of its own):
// the query in a DnsPacket, framed as gRPC frames a message, with the time the reply is waited for as
// `grpc-timeout`, so the upstream can give up when we do. The outcome is the trailers' grpc-status (or
// the headers', for a Trailers-Only reply): 0 with one message holding the reply, which then goes
// through the same checks as any forwarded reply (reply-match.ts); NOT_FOUND is NXDOMAIN, as CoreDNS
// takes it; any other status, an HTTP status other than 200, a body that is not one whole message or
// a reply that fails the checks ends the call with a GrpcCallError saying which.

import http2 from "node:http2";
import type { Mismatch } from "../../client/reply-match.ts";
import { Conn, ExchangeCode, ExchangeError } from "../forward/conn.ts";
import { h2Request } from "../forward/h2-session.ts";
import {
  decodePacket,
  encodePacket,
  frame,
  GrpcStatus,
  MAX_MESSAGE,
  statusOfHttp,
  statusText,
  unframe,
} from "../../dns/grpc-packet.ts";
import { Rcode } from "../../dns/constants.ts";

export const QUERY_PATH = "/coredns.dns.DnsService/Query";
/** A DnsPacket of the largest DNS message, framed: 5 octets of prefix, 4 of key and length. */
const MAX_BODY = MAX_MESSAGE + 5 + 4;

/** Why a call that reached the upstream got no reply: the `reason` label of the failures metric. */
export type CallFailure = "grpc_status" | "http_status" | "malformed" | "mismatch";

/** A call the upstream answered without a usable reply. */
export class GrpcCallError extends ExchangeError {
  readonly reason: CallFailure;
  constructor(reason: CallFailure, message: string) {
    super(ExchangeCode.NETWORK, message);
    this.name = "GrpcCallError";
    this.reason = reason;
  }
}

export class GrpcConn extends Conn<"grpc"> {
  readonly proto = "grpc";
  readonly #session: http2.ClientHttp2Session;
  readonly #authority: string;
  #stream: http2.ClientHttp2Stream | undefined;

  constructor(
    session: http2.ClientHttp2Session,
    authority: string,
    onReject: (why: Mismatch, packet?: Uint8Array) => void,
  ) {
    super(onReject);
    this.#session = session;
    this.#authority = authority;
  }

  protected send(query: Buffer, timeoutMs: number): void {
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": QUERY_PATH,
      ":authority": this.#authority,
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": `${Math.ceil(timeoutMs)}m`,
    };
    const body = frame(encodePacket(query));
    this.#stream = h2Request(this.#session, { headers, body, maxBody: MAX_BODY }, (r) => {
      if (r instanceof Error) this.fail(new ExchangeError(ExchangeCode.NETWORK, r.message, { cause: r }));
      else this.#outcome(r.headers, r.body, r.trailers, query);
    });
  }

  #outcome(
    headers: http2.IncomingHttpHeaders,
    body: Buffer,
    trailers: http2.IncomingHttpHeaders,
    query: Buffer,
  ): void {
    const http = Number(headers[":status"]);
    if (http !== 200) {
      const why = `HTTP ${http} (taken as gRPC status ${statusText(statusOfHttp(http))})`;
      this.fail(new GrpcCallError("http_status", `the upstream answered ${why}`));
      return;
    }
    const raw = trailers["grpc-status"] ?? headers["grpc-status"];
    if (raw === undefined) {
      this.fail(new GrpcCallError("malformed", "the upstream's reply has no grpc-status"));
      return;
    }
    const status = Number(raw);
    if (status === GrpcStatus.NOT_FOUND) {
      this.#deliver(nxdomain(query));
      return;
    }
    if (status !== GrpcStatus.OK) {
      const message = grpcMessage(trailers["grpc-message"] ?? headers["grpc-message"]);
      const why = `gRPC status ${statusText(status)}${message ? `: ${message}` : ""}`;
      this.fail(new GrpcCallError("grpc_status", `the upstream answered ${why}`));
      return;
    }
    const packet = unframe(body);
    const msg = Buffer.isBuffer(packet) ? decodePacket(packet) : packet.why;
    if (typeof msg === "string") this.fail(new GrpcCallError("malformed", `the upstream's reply: ${msg}`));
    else this.#deliver(msg);
  }

  /** The call's one reply: one that fails the checks ends the exchange, as no other can come. */
  #deliver(msg: Buffer): void {
    const why = this.deliver(msg);
    if (why !== undefined && !this.closed)
      this.fail(new GrpcCallError("mismatch", `the upstream's reply is not the query's (${why})`));
  }

  protected destroy(): void {
    this.#stream?.close(http2.constants.NGHTTP2_CANCEL);
  }
}

/** grpc-message is percent-encoded (gRPC over HTTP/2); a bad escape is shown as it came. */
function grpcMessage(v: string | string[] | undefined): string {
  const s = Array.isArray(v) ? v.join(", ") : (v ?? "");
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The NXDOMAIN reply to `query` (its ID and question), for a NOT_FOUND status. */
function nxdomain(query: Buffer): Buffer {
  const qd = query.readUInt16BE(4);
  let end = 12;
  for (let i = 0; i < qd; i++) {
    while (end < query.length && query[end] !== 0) end += query[end] + 1;
    end += 5;
  }
  const reply = Buffer.from(query.subarray(0, end));
  reply[2] = 0x80 | (query[2] & 0x79); // QR, the query's opcode and RD
  reply[3] = 0x80 | Rcode.NXDOMAIN; // RA
  reply.fill(0, 6, 12); // no answer, authority or additional records (the OPT is left out)
  return reply;
}
