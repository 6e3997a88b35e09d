// trace on a real server: clusterdns started from a Corefile, asked with dig, its spans received by an
// HTTP server the test starts (Zipkin's v2 JSON, OTLP/HTTP's JSON) and read back.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer, type RunningServer } from "../../../test/helpers/server.ts";
import { dig } from "../../../test/helpers/dig.ts";
import { serveTable, type TableServer } from "../../../test/helpers/recording-dns-server.ts";
import { freePort } from "../../../test/helpers/free-port.ts";
import { Receiver, otlpSpans, until, type ZipkinSpan } from "../../../test/helpers/span-receiver.ts";

const TABLE = { "up.example.net.": { A: ["192.0.2.99"] } };

async function withServers(
  traceLine: string,
  receiver: Receiver,
  body: (s: RunningServer, upstream: TableServer) => Promise<void>,
): Promise<void> {
  const upstream = await serveTable(TABLE, "127.0.0.1", 0, () => {});
  const corefile = `. {
    ${traceLine}
    cache 30
    hosts {
        10.0.0.1 web.example.
        fallthrough
    }
    forward . 127.0.0.1:${upstream.port}
}
`;
  const s = await startServer(corefile);
  try {
    await body(s, upstream);
  } finally {
    await s.stop();
    await upstream.close();
    await receiver.close();
  }
}

test("zipkin: a span per query with CoreDNS's name and tags, a child per plugin, forward's connect", async () => {
  const r = new Receiver();
  const port = await r.listen();
  const line = `trace zipkin 127.0.0.1:${port} {\n        zipkin_max_batch_interval 50ms\n    }`;
  await withServers(line, r, async (s, upstream) => {
    assert.deepEqual(
      (await dig(s.port, "web.example")).answer.map((a) => a.split(/\s+/).at(-1)),
      ["10.0.0.1"],
    );
    // The same question again: the answer store holds it, but a sampled query takes the chain, and
    // cache answers it from the stored entry (no hosts span under it).
    assert.equal((await dig(s.port, "web.example")).status, "NOERROR");
    assert.deepEqual(
      (await dig(s.port, "up.example.net")).answer.map((a) => a.split(/\s+/).at(-1)),
      ["192.0.2.99"],
    );
    assert.equal((await dig(s.port, "web.example", "AAAA", "+tcp")).status, "NOERROR");
    const roots = await until(() => {
      const got = r.zipkinSpans().filter((x) => x.parentId === undefined);
      return got.length >= 4 ? got : undefined;
    }, "four root spans");
    const spans = r.zipkinSpans();
    const under = (p: ZipkinSpan) => spans.filter((x) => x.parentId === p.id && x.traceId === p.traceId);
    const path = (root: ZipkinSpan) => {
      const names: string[] = [];
      for (let at = under(root); at.length > 0; at = under(at[0]))
        names.push(at.map((x) => x.name).join("+"));
      return names;
    };
    const [first, second, third, fourth] = roots;
    assert.equal(first.name, `servedns:dns://:${s.port} web.example.`);
    assert.equal(first.kind, "SERVER");
    assert.equal(first.localEndpoint?.serviceName, "coredns");
    assert.equal(first.tags["coredns.io/name"], "web.example.");
    assert.equal(first.tags["coredns.io/type"], "A");
    assert.equal(first.tags["coredns.io/proto"], "udp");
    assert.equal(first.tags["coredns.io/remote"], "127.0.0.1");
    assert.equal(first.tags["coredns.io/rcode"], "NOERROR");
    assert.equal(first.tags["clusterdns.io/zone"], ".");
    assert.equal(first.tags["clusterdns.io/plugin"], "hosts");
    assert.deepEqual(path(first), ["cache", "hosts"]);
    assert.deepEqual(path(second), ["cache"]);
    assert.equal(second.tags["clusterdns.io/plugin"], "cache");
    assert.deepEqual(path(third), ["cache", "hosts", "forward", "connect"]);
    const connect = spans.find((x) => x.name === "connect")!;
    assert.equal(connect.kind, "CLIENT");
    assert.equal(connect.tags["peer.address"], `127.0.0.1:${upstream.port}`);
    assert.equal(connect.tags["coredns.io/rcode"], "NOERROR", "the upstream's reply's rcode");
    assert.equal(third.tags["coredns.io/rcode"], "NOERROR");
    assert.deepEqual([fourth.tags["coredns.io/proto"], fourth.tags["coredns.io/type"]], ["tcp", "AAAA"]);
    assert.equal(new Set(roots.map((x) => x.traceId)).size, 4, "a trace per query");
  });
});

test("otlp with every 3: one query in three is traced, replays counted too", async () => {
  const r = new Receiver();
  const port = await r.listen();
  const line = `trace otlp http://127.0.0.1:${port}/v1/traces {\n        every 3\n        service dns\n        zipkin_max_batch_interval 50ms\n    }`;
  await withServers(line, r, async (s) => {
    // Six queries for one name: the store answers all but the first, and trace still counts each.
    // Then two that forward answers NXDOMAIN.
    for (let i = 0; i < 6; i++) assert.equal((await dig(s.port, "web.example")).status, "NOERROR");
    assert.equal((await dig(s.port, "nothing.example.net")).status, "NXDOMAIN");
    assert.equal((await dig(s.port, "nothing.example.net")).status, "NXDOMAIN");
    const roots = await until(() => {
      const got = otlpSpans(r).filter((x) => !x.parentSpanId);
      return got.length >= 2 ? got : undefined;
    }, "two root spans");
    await sleep(300);
    assert.equal(otlpSpans(r).filter((x) => !x.parentSpanId).length, 2, "the 3rd and 6th queries only");
    assert.ok(roots.every((x) => x.service === "dns"));
    assert.ok(roots.every((x) => x.tag("coredns.io/name") === "web.example."));
    const children = otlpSpans(r).filter((x) => x.parentSpanId === roots[0].spanId);
    assert.deepEqual(
      children.map((x) => x.name),
      ["cache"],
    );
    assert.equal(children[0].traceId, roots[0].traceId);
    // Queries 7 and 8 were not traced; the 9th is.
    await dig(s.port, "web.example");
    await until(
      () => (otlpSpans(r).filter((x) => !x.parentSpanId).length === 3 ? true : undefined),
      "the 9th",
    );
  });
});

test("a receiver that is down or never answers changes no answer", async () => {
  for (const kind of ["down", "never"] as const) {
    const r = new Receiver("never");
    const port = await r.listen();
    if (kind === "down") await r.close();
    const line = `trace 127.0.0.1:${port} {\n        zipkin_max_batch_interval 20ms\n        zipkin_max_backlog_size 10\n        zipkin_max_batch_size 5\n    }`;
    await withServers(line, r, async (s) => {
      for (let i = 0; i < 16; i++) {
        const d = await dig(s.port, i % 2 === 0 ? "web.example" : "up.example.net");
        assert.equal(d.status, "NOERROR", `${kind}: query ${i}`);
        assert.equal(d.answer.length, 1, `${kind}: query ${i}`);
      }
      if (kind === "down")
        await until(
          () => s.logs.find((l) => String(l.msg).startsWith("spans could not be sent")),
          "the line about spans not sent",
        );
    });
  }
});

test("otlp: forward's try to an upstream that is down has an error status, the next try the rcode", async () => {
  const r = new Receiver();
  const port = await r.listen();
  const upstream = await serveTable(TABLE, "127.0.0.1", 0, () => {});
  const dead = `127.0.0.1:${await freePort()}`;
  const live = `127.0.0.1:${upstream.port}`;
  const s = await startServer(`. {
    trace otlp http://127.0.0.1:${port}/v1/traces {
        zipkin_max_batch_interval 50ms
    }
    forward . ${dead} ${live} {
        policy sequential
        force_tcp
    }
}
`);
  try {
    assert.equal((await dig(s.port, "up.example.net")).status, "NOERROR");
    await until(() => (otlpSpans(r).some((x) => !x.parentSpanId) ? true : undefined), "the root span");
    const tries = otlpSpans(r)
      .filter((x) => x.name === "connect")
      .sort((x, y) => Number(BigInt(x.startTimeUnixNano) - BigInt(y.startTimeUnixNano)));
    assert.deepEqual(
      tries.map((x) => x.tag("peer.address")),
      [dead, live],
    );
    // OTLP's status code 2 is ERROR.
    assert.equal(tries[0].status?.code, 2, "the failed try's status is an error");
    assert.match(tries[0].status?.message ?? "", /ECONNREFUSED/);
    assert.equal(tries[0].tag("coredns.io/rcode"), undefined, "no reply, no rcode");
    assert.equal(tries[1].tag("coredns.io/rcode"), "NOERROR");
    assert.notEqual(tries[1].status?.code, 2);
  } finally {
    await s.stop();
    await upstream.close();
    await r.close();
  }
});
