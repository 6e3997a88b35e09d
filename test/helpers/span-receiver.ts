// A receiver of trace spans for the tests: an HTTP server on loopback that keeps every POSTed JSON
// body (Zipkin's v2 API, OTLP/HTTP's JSON), and readers of the spans in them.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** A Zipkin v2 span as the API takes it. */
export interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  kind?: string;
  localEndpoint?: { serviceName?: string };
  tags: Record<string, string>;
}

/** An HTTP receiver that keeps the JSON body of every POST, by path; `answer` says how to reply. */
export class Receiver {
  readonly bodies: { path: string; body: unknown }[] = [];
  readonly server: Server;
  constructor(answer: "ok" | "never" = "ok") {
    this.server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        this.bodies.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(parts).toString()) });
        if (answer === "ok") res.writeHead(202).end();
      });
    });
  }
  async listen(): Promise<number> {
    await new Promise<void>((done) => this.server.listen(0, "127.0.0.1", done));
    return (this.server.address() as AddressInfo).port;
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => this.server.close(() => done()));
  }
  zipkinSpans(): ZipkinSpan[] {
    return this.bodies.filter((b) => b.path === "/api/v2/spans").flatMap((b) => b.body as ZipkinSpan[]);
  }
}

/** An OTLP attribute value as the JSON encoding carries it (64-bit integers as strings). */
type AttrValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
type OtlpBody = {
  resourceSpans: {
    resource: { attributes: { key: string; value: AttrValue }[] };
    scopeSpans: { spans: OtlpSpanJson[] }[];
  }[];
};
interface OtlpSpanJson {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's SpanKind: 2 SERVER, 3 CLIENT, 1 INTERNAL. */
  kind: number;
  /** Nanoseconds since the epoch, as a decimal string. */
  startTimeUnixNano: string;
  /** OTLP's status: code 2 is ERROR, 1 OK, 0 (or none) UNSET. */
  status?: { code?: number; message?: string };
  attributes: { key: string; value: AttrValue }[];
}

export interface OtlpSpan extends OtlpSpanJson {
  service: string | undefined;
  /** An attribute's value as a string (an integer's digits), or undefined when the span has none. */
  tag(key: string): string | undefined;
}

/** The spans of OTLP/HTTP JSON bodies (ExportTraceServiceRequest), with their resource's service. */
export function otlpSpans(r: Receiver): OtlpSpan[] {
  const text = (v: AttrValue | undefined) =>
    v === undefined ? undefined : (v.stringValue ?? (v.intValue ?? v.boolValue)?.toString());
  return r.bodies
    .filter((b) => b.path === "/v1/traces")
    .flatMap((b) => (b.body as OtlpBody).resourceSpans)
    .flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) =>
        ss.spans.map((sp) => ({
          ...sp,
          service: text(rs.resource.attributes.find((a) => a.key === "service.name")?.value),
          tag: (k: string) => text(sp.attributes.find((a) => a.key === k)?.value),
        })),
      ),
    );
}

/** `what()` once it is not undefined, asked every 50 ms for at most `ms`. */
export async function until<T>(what: () => T | undefined, why: string, ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) {
    const v = what();
    if (v !== undefined) return v;
  }
  throw new Error(`timed out waiting for ${why}`);
}
