// trace with grpc on a real server: clusterdns with `trace` sending OTLP/HTTP to a receiver the test
// starts and `grpc` relaying to Debian's python3-grpcio DnsService in front of Knot
// (test/upstream/grpc-relay.ts), asked with dig. Each try upstream is a span `query` under grpc's span,
// with the upstream's address and the reply's rcode, or an error status when the try failed.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { freePort } from "./helpers/free-port.ts";
import { Receiver, otlpSpans, until, type OtlpSpan } from "./helpers/span-receiver.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";
import { startGrpcRelay, type GrpcRelay } from "./upstream/grpc-relay.ts";

/** OTLP's SpanKind CLIENT and StatusCode ERROR. */
const CLIENT = 3;
const ERROR = 2;

let knot: Knot;
let relay: GrpcRelay;

before(async () => {
  knot = await startKnot();
  relay = await startGrpcRelay({ relay: knot.port });
});

after(async () => {
  await relay.stop();
  await knot.stop();
});

/** A clusterdns whose block traces every query to `r` and sends them with `grpcLine`. */
async function withServer(
  r: Receiver,
  grpcLine: string,
  body: (s: RunningServer) => Promise<void>,
): Promise<void> {
  const port = await r.listen();
  const s = await startServer(`. {
    trace otlp http://127.0.0.1:${port}/v1/traces {
        zipkin_max_batch_interval 50ms
    }
    ${grpcLine}
}
`);
  try {
    await body(s);
  } finally {
    assert.equal(await s.stop(), 0);
    await r.close();
  }
}

/** The traces of `n` queries: each root span with the spans under it, each level in start order. */
async function traces(r: Receiver, n: number) {
  const roots = await until(() => {
    const got = otlpSpans(r).filter((x) => !x.parentSpanId);
    return got.length >= n ? got : undefined;
  }, `${n} root spans`);
  // The children end, and are sent, before their root: all of a trace is in once its root is.
  const spans = otlpSpans(r);
  const under = (p: OtlpSpan) =>
    spans
      .filter((x) => x.parentSpanId === p.spanId && x.traceId === p.traceId)
      .sort((x, y) => Number(BigInt(x.startTimeUnixNano) - BigInt(y.startTimeUnixNano)));
  return roots.map((root) => {
    const plugins = under(root);
    assert.deepEqual(
      plugins.map((x) => x.name),
      ["grpc"],
      "grpc's span under the query's",
    );
    return { root, tries: under(plugins[0]) };
  });
}

test("grpc: a span `query` per try under grpc's span, with the upstream's address and the rcode", async () => {
  const r = new Receiver();
  const to = `127.0.0.1:${relay.port}`;
  await withServer(r, `grpc . ${to}`, async (s) => {
    assert.equal((await dig(s.port, "www.example.org")).status, "NOERROR");
    assert.equal((await dig(s.port, "nothing.example.org", "AAAA")).status, "NXDOMAIN");
    const [yes, no] = await traces(r, 2);
    for (const [t, rcode] of [
      [yes, "NOERROR"],
      [no, "NXDOMAIN"],
    ] as const) {
      assert.equal(t.root.tag("coredns.io/rcode"), rcode);
      assert.equal(t.root.tag("clusterdns.io/plugin"), "grpc");
      assert.deepEqual(
        t.tries.map((x) => x.name),
        ["query"],
        "one try, named as CoreDNS's grpc names it",
      );
      const [q] = t.tries;
      assert.equal(q.kind, CLIENT);
      assert.equal(q.tag("peer.address"), to);
      assert.equal(q.tag("coredns.io/rcode"), rcode, "the upstream's reply's rcode");
      assert.notEqual(q.status?.code, ERROR);
    }
  });
});

test("grpc: a try to an upstream that is down has an error status; the next try's span follows", async () => {
  const dead = `127.0.0.1:${await freePort()}`;
  const live = `127.0.0.1:${relay.port}`;
  const r = new Receiver();
  await withServer(r, `grpc . ${dead} ${live} {\n        policy sequential\n    }`, async (s) => {
    assert.equal((await dig(s.port, "www.example.org")).status, "NOERROR");
    const [t] = await traces(r, 1);
    assert.deepEqual(
      t.tries.map((x) => x.tag("peer.address")),
      [dead, live],
      "the dead upstream first, then the live one",
    );
    const [failed, answered] = t.tries;
    assert.equal(failed.status?.code, ERROR, "the failed try's status is an error");
    assert.match(failed.status?.message ?? "", /ECONNREFUSED/, "with why it failed");
    assert.equal(failed.tag("coredns.io/rcode"), undefined, "no reply, no rcode");
    assert.equal(answered.tag("coredns.io/rcode"), "NOERROR");
    assert.notEqual(answered.status?.code, ERROR);
    assert.equal(t.root.tag("coredns.io/rcode"), "NOERROR");
  });

  // No upstream answers: SERVFAIL, and the one try's span says why.
  const alone = new Receiver();
  await withServer(alone, `grpc . ${dead}`, async (s) => {
    assert.equal((await dig(s.port, "www.example.org")).status, "SERVFAIL");
    const [t] = await traces(alone, 1);
    assert.equal(t.root.tag("coredns.io/rcode"), "SERVFAIL");
    assert.deepEqual(
      t.tries.map((x) => [x.tag("peer.address"), x.status?.code]),
      [[dead, ERROR]],
    );
  });
});
