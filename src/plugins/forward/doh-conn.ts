// DNS over HTTPS to an upstream (RFC 8484): one HTTP/2 connection per upstream (h2-session.ts), kept
// and shared by the queries in flight (each is a stream of its own), closed once idle for `expire`. A
// query is a POST of application/dns-message to /dns-query (CoreDNS's default), or a GET with
// ?dns=BASE64URL with `doh_method GET`; ID 0, as RFC 8484 4.1 asks, so HTTP caches can share replies.
// A reply is taken only with status 200 and the DNS media type, and then goes through the same checks
// as any other (reply-match.ts); one that fails them ends the exchange. HTTP/2 only: CoreDNS's Go
// client would fall back to HTTP/1.1 for a server without h2, but DoH servers speak h2 (Unbound's and
// dnsdist's only it, RFC 8484 5.2 recommends it).

import http2 from "node:http2";
import type { Mismatch } from "../../client/reply-match.ts";
import { Conn, ExchangeCode, ExchangeError } from "./conn.ts";
import { h2Request } from "./h2-session.ts";

export const DOH_PATH = "/dns-query";
const MEDIA_TYPE = "application/dns-message";
const MAX_REPLY = 65535;

export type DohMethod = "GET" | "POST";

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
    const body = get ? undefined : query;
    this.#stream = h2Request(this.#session, { headers, body, maxBody: MAX_REPLY }, (r) => {
      if (r instanceof Error) {
        this.fail(new ExchangeError(ExchangeCode.NETWORK, r.message, { cause: r }));
        return;
      }
      const type = String(r.headers["content-type"] ?? "")
        .split(";")[0]
        .trim()
        .toLowerCase();
      const status = Number(r.headers[":status"]);
      if (status !== 200)
        this.fail(new ExchangeError(ExchangeCode.NETWORK, `the upstream answered HTTP ${status}`));
      else if (type !== MEDIA_TYPE)
        this.fail(new ExchangeError(ExchangeCode.NETWORK, `the upstream answered with media type '${type}'`));
      // The stream's one reply: one that fails the checks ends the exchange, as no other can come.
      else if (this.deliver(r.body) !== undefined)
        this.fail(new ExchangeError(ExchangeCode.NETWORK, "the upstream's reply does not match the query"));
    });
  }

  protected destroy(): void {
    this.#stream?.close();
  }
}
