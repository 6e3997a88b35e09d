// A small etcd v3 client over etcd's JSON gateway (POST /v3/kv/range, base64 keys), enough for the
// reads the etcd plugin makes. node:http(s) rather than fetch: a client certificate and a private CA
// (the `tls` option) are plain request options there, while fetch would need undici's Agent, a
// dependency of its own.

import { http } from "../../http/node-http.ts";
import { request as httpsRequest } from "node:https";
import type { SecureContextOptions } from "node:tls";

/** One key and value as read, with the lease it is attached to ("0": none). */
export interface KeyValue {
  key: string;
  value: string;
  lease: string;
}

export interface EtcdClientOptions {
  /** Base URLs, tried in order; the last one that answered is tried first next time. */
  endpoints: string[];
  /** Per request, as CoreDNS's etcdTimeout. */
  timeoutMs: number;
  credentials?: { username: string; password: string };
  /** Client certificate, key and CA for https endpoints. */
  tls?: SecureContextOptions;
}

/** etcd could not be asked, or refused: the query answers SERVFAIL. */
export class EtcdUnavailable extends Error {
  readonly code = "ETCD_UNAVAILABLE";
  /** The HTTP status etcd answered with; undefined when it did not answer. */
  readonly status: number | undefined;

  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

const b64 = (s: string | Buffer): string => Buffer.from(s).toString("base64");
const unb64 = (s: string | undefined): string => Buffer.from(s ?? "", "base64").toString("utf8");

/** The end of the range that holds every key starting with `prefix` (etcd's prefix rule: the last
 * byte below 0xff incremented, the bytes after it dropped). */
export function prefixEnd(prefix: string | Buffer): Buffer {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i] < 0xff) {
      const end = Buffer.from(b.subarray(0, i + 1));
      end[i]++;
      return end;
    }
  }
  return Buffer.from([0]);
}

export class EtcdClient {
  readonly #opts: EtcdClientOptions;
  #first = 0;
  #token: string | undefined;

  constructor(opts: EtcdClientOptions) {
    this.#opts = opts;
  }

  /** The keys equal to `key`, or starting with it when `prefix`. `deadline` (Date.now() time, the
   * query's `cancel`) shortens the timeout. */
  async range(key: string, prefix: boolean, deadline = Infinity): Promise<KeyValue[]> {
    const body: Record<string, string> = { key: b64(key) };
    if (prefix) body.range_end = b64(prefixEnd(key));
    const r = (await this.#call("/v3/kv/range", body, deadline)) as { kvs?: Record<string, string>[] };
    return (r.kvs ?? []).map((kv) => ({
      key: unb64(kv.key),
      value: unb64(kv.value),
      lease: kv.lease ?? "0",
    }));
  }

  /** Seconds left on a lease, or -1 when it has expired or is unknown. */
  async leaseTtl(id: string, deadline = Infinity): Promise<number> {
    const r = (await this.#call("/v3/lease/timetolive", { ID: id }, deadline)) as { TTL?: string };
    return Number(r.TTL ?? -1);
  }

  async #call(path: string, body: object, deadline: number): Promise<unknown> {
    const creds = this.#opts.credentials;
    if (creds && this.#token === undefined) this.#token = await this.#authenticate(creds);
    try {
      return await this.#post(path, body, this.#token, deadline);
    } catch (err) {
      // A simple token lasts minutes on the server: sign in again once when it is refused.
      if (!creds || !(err instanceof EtcdUnavailable) || !/token/i.test(err.message)) throw err;
      this.#token = await this.#authenticate(creds);
      return this.#post(path, body, this.#token, deadline);
    }
  }

  async #authenticate(c: { username: string; password: string }): Promise<string> {
    const r = (await this.#post("/v3/auth/authenticate", { name: c.username, password: c.password })) as {
      token?: string;
    };
    if (!r.token) throw new EtcdUnavailable("etcd authentication returned no token");
    return r.token;
  }

  /** POSTs to each endpoint in turn until one answers; the error of the last one otherwise. */
  async #post(path: string, body: object, token?: string, deadline = Infinity): Promise<unknown> {
    const eps = this.#opts.endpoints;
    let last: unknown;
    for (let n = 0; n < eps.length; n++) {
      const i = (this.#first + n) % eps.length;
      try {
        const r = await this.#postTo(eps[i], path, body, { token, deadline });
        this.#first = i;
        return r;
      } catch (err) {
        last = err;
        // etcd's refusal of the request itself (bad auth, bad request) is the same on every member.
        if (err instanceof EtcdUnavailable && err.status !== undefined && err.status < 500) throw err;
      }
    }
    throw last instanceof Error ? new EtcdUnavailable(last.message) : new EtcdUnavailable(String(last));
  }

  #postTo(
    base: string,
    path: string,
    body: object,
    o: { token?: string; deadline: number },
  ): Promise<unknown> {
    const { token } = o;
    const timeout = Math.max(1, Math.min(this.#opts.timeoutMs, o.deadline - Date.now()));
    const url = new URL(path, base.endsWith("/") ? base : `${base}/`);
    const send = url.protocol === "https:" ? httpsRequest : http.request;
    const data = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = send(
        url,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(data),
            ...(token ? { authorization: token } : {}),
          },
          timeout,
          ...(url.protocol === "https:" ? this.#opts.tls : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: { error?: string; message?: string } | undefined;
            try {
              parsed = JSON.parse(text) as typeof parsed;
            } catch {
              parsed = undefined;
            }
            if (res.statusCode !== 200 || parsed === undefined) {
              const why = parsed?.message ?? parsed?.error ?? text.slice(0, 200);
              reject(
                new EtcdUnavailable(`etcd ${url.host} answered ${res.statusCode}: ${why}`, res.statusCode),
              );
            } else resolve(parsed);
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`etcd ${url.host}: no answer in ${timeout} ms`)));
      req.on("error", (err) => reject(new Error(`${url.host}: ${err.message}`)));
      req.end(data);
    });
  }
}
