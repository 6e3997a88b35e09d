// What no real gRPC server sends: a frame cut short, an HTTP error, a missing status, a cut connection,
// a compressed message. A node:http2 server answers each call with the fault the test asks for, and
// the upstream must fail the try with the reason it gives in its log line and failures metric. (A
// well-behaved upstream, python3-grpcio, is test/grpc-upstream.test.ts's.)

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { GrpcUpstream } from "./upstream.ts";
import { GrpcCallError } from "./grpc-conn.ts";
import { newQuery } from "../../dns/message.ts";
import { Type } from "../../dns/constants.ts";
import { decodePacket, encodePacket, frame } from "../../dns/grpc-packet.ts";

type Fault = (stream: http2.ServerHttp2Stream, query: Buffer) => void;
let fault: Fault;
let server: http2.Http2Server;
let upstream: GrpcUpstream;

const GRPC = { ":status": 200, "content-type": "application/grpc" };

before(async () => {
  server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("error", () => {}); // the cut the test asks for
    const parts: Buffer[] = [];
    stream.on("data", (c: Buffer) => parts.push(c));
    stream.on("end", () => fault(stream, decodePacket(Buffer.concat(parts).subarray(5)) as Buffer));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  upstream = new GrpcUpstream(
    { host: "127.0.0.1", port, to: `127.0.0.1:${port}` },
    undefined,
    pino({ level: "silent" }),
  );
});

after(async () => {
  upstream.close();
  await new Promise((r) => server.close(r));
});

/** The error of one exchange with the upstream answering by `f`. */
async function failure(f: Fault): Promise<GrpcCallError | Error> {
  fault = f;
  try {
    await upstream.exchange(newQuery("www.example.org.", Type.A), 2000);
  } catch (err) {
    return err as Error;
  }
  assert.fail("the exchange succeeded");
}

/** Answers `query` as the trailers say, the message framed by `body`. */
function reply(stream: http2.ServerHttp2Stream, body: Buffer, trailers = { "grpc-status": "0" }): void {
  stream.respond(GRPC, { waitForTrailers: true });
  stream.once("wantTrailers", () => stream.sendTrailers(trailers));
  stream.end(body);
}

/** A NOERROR reply to `query`, with its ID and question. */
function answer(query: Buffer): Buffer {
  const m = Buffer.from(query);
  m[2] |= 0x80;
  return m;
}

test("a reply whose frame is cut short, or compressed, or two messages: malformed", async () => {
  const cut = await failure((s, q) => reply(s, frame(encodePacket(answer(q))).subarray(0, 20)));
  assert.ok(cut instanceof GrpcCallError && cut.reason === "malformed", String(cut));
  assert.match(cut.message, /cut short \(15 of \d+ octets\)/);
  const compressed = await failure((s, q) => {
    const f = frame(encodePacket(answer(q)));
    f[0] = 1;
    reply(s, f);
  });
  assert.match(compressed.message, /compressed messages are not accepted/);
  const two = await failure((s, q) =>
    reply(s, Buffer.concat([frame(encodePacket(answer(q))), frame(Buffer.alloc(0))])),
  );
  assert.match(two.message, /more than one gRPC message/);
});

test("HTTP errors take gRPC's mapping; a missing status or a connection cut mid-reply fails the try", async () => {
  const http = await failure((s) => {
    s.respond({ ":status": 503 });
    s.end();
  });
  assert.ok(http instanceof GrpcCallError && http.reason === "http_status");
  assert.match(http.message, /HTTP 503 \(taken as gRPC status 14 UNAVAILABLE\)/);
  const none = await failure((s, q) => {
    s.respond(GRPC);
    s.end(frame(encodePacket(answer(q))));
  });
  assert.match(none.message, /no grpc-status/);
  const reset = await failure((s) => {
    s.respond(GRPC);
    // The connection cut in the middle of the reply; the next call opens a new one.
    s.write(Buffer.from([0, 0, 0, 0, 40]), () => s.session?.socket.destroy());
  });
  assert.ok(!(reset instanceof GrpcCallError), String(reset));
  assert.match(reset.message, /stream/i);
});

test("a status with a percent-encoded message; then a good reply is taken", async () => {
  const status = await failure((s) => {
    s.respond({ ...GRPC, "grpc-status": "8", "grpc-message": "too%20many" }, { endStream: true });
  });
  assert.match(status.message, /gRPC status 8 RESOURCE_EXHAUSTED: too many/);
  fault = (s, q) => reply(s, frame(encodePacket(answer(q))));
  const m = await upstream.exchange(newQuery("www.example.org.", Type.A), 2000);
  assert.equal(m.question[0].name, "www.example.org.");
  assert.deepEqual(Object.fromEntries(upstream.stats.failures), {
    malformed: 4,
    http_status: 1,
    network: 1,
    grpc_status: 1,
  });
});
