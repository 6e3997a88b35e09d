// cache in front of forward, against a real upstream (Knot DNS on loopback): TTLs count down, prefetch
// refreshes a popular name before it expires, serve_stale keeps answering with the upstream gone, and a
// reply over 16 KiB is not kept.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { sample } from "./helpers/metrics.ts";
import { startKnot } from "./upstream/knot.ts";
import { bigZone } from "./soak/costly-client.ts";
import { bigQuery } from "./soak/big-client.ts";
import { exchangeTcp } from "./helpers/tcp-exchange.ts";

const WWW = "www.example.org";

/** Queries sent to any upstream (one series per upstream). */
function forwardedTo(text: string): number {
  let n = 0;
  for (const m of text.matchAll(/^coredns_forward_requests_total\{to="[^"]+"\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

const ttlOf = async (port: number) => {
  const r = await dig(port, WWW);
  assert.equal(r.status, "NOERROR", r.text);
  return Number(r.answer[0].split(/\s+/)[1]);
};

/** Knot, and clusterdns forwarding to it through a cache with these options (and metrics). */
async function start(cacheOptions: string) {
  const knot = await startKnot();
  const metricsPort = await freePort();
  const srv = await startServer(`. {
    prometheus 127.0.0.1:${metricsPort}
    forward . 127.0.0.1:${knot.port}
    cache {
        ${cacheOptions}
    }
}
`);
  return { knot, metricsPort, srv };
}

test("cache: TTLs count down, and prefetch refreshes a popular name before it expires", async () => {
  // Entries live 4 s; from 50% left, an entry asked once in the minute is fetched again.
  const { knot, metricsPort, srv } = await start("success 100 4 1\n        prefetch 1 1m 50%");
  const server = `dns://:${srv.port}`;
  try {
    assert.equal(await ttlOf(srv.port), 4, "the upstream's 300, capped at what the cache keeps");
    // A popular name: asked every 300 ms for 7 s, well past the entry's 4 s. Every answer after the
    // first comes from the cache (TTL at most 4), and no query ever misses: prefetch kept it fresh.
    const ttls: number[] = [];
    for (const end = Date.now() + 7000; Date.now() < end;) {
      ttls.push(await ttlOf(srv.port));
      await sleep(300);
    }
    assert.ok(
      ttls.every((t) => t >= 0 && t <= 4),
      `TTLs ${ttls.join(" ")}`,
    );
    assert.ok(
      ttls.some((t) => t <= 2) && ttls.some((t) => t >= 3),
      `they count down and come back: ${ttls.join(" ")}`,
    );
    const text = (await httpGet(metricsPort, "/metrics")).body;
    const labels = { server, zones: ".", view: "" };
    assert.equal(sample(text, "coredns_cache_misses_total", labels), 1, "only the first query missed");
    const prefetched = sample(text, "coredns_cache_prefetch_total", labels) ?? 0;
    assert.ok(prefetched >= 1, `prefetched ${prefetched}`);
    assert.equal(forwardedTo(text), 1 + prefetched, "the upstream saw the first query and the prefetches");
  } finally {
    await srv.stop();
    await knot.stop();
  }
});

test("cache: serve_stale keeps answering while the upstream is down", async () => {
  const { knot, metricsPort, srv } = await start("success 100 2 1\n        serve_stale 1m");
  try {
    assert.equal(await ttlOf(srv.port), 2);
    await knot.stop();
    await sleep(2200);
    for (let i = 0; i < 3; i++) {
      const r = await dig(srv.port, WWW);
      assert.equal(r.status, "NOERROR", `stale answer ${i}: ${r.text}`);
      assert.deepEqual(r.answer, [`${WWW}. 0 IN A 192.0.2.1`]);
    }
    const text = (await httpGet(metricsPort, "/metrics")).body;
    const stale = sample(text, "coredns_cache_served_stale_total", {
      server: `dns://:${srv.port}`,
      zones: ".",
      view: "",
    });
    assert.ok((stale ?? 0) >= 1, `served stale ${stale}`);
    // Not in the cache at all: the upstream is needed, and it is gone.
    assert.equal((await dig(srv.port, "alias.example.org")).status, "SERVFAIL");
  } finally {
    await srv.stop();
    await knot.stop();
  }
});

test("cache: a forwarded reply over 16 KiB is answered whole, replayed for its client's retry only, never kept", async () => {
  // Knot answers every name below r2000.big.test. with 2,000 A records (32 KB, over TCP).
  const knot = await startKnot({ zone: { origin: "big.test.", text: bigZone([2000]) } });
  const metricsPort = await freePort();
  const srv = await startServer(`. {
    prometheus 127.0.0.1:${metricsPort}
    forward . 127.0.0.1:${knot.port}
    cache 30
}
`);
  const forwarded = async () => forwardedTo((await httpGet(metricsPort, "/metrics")).body);
  /** Asks over TCP, in this process (no dig started between a query and its retry): the answer count. */
  const ask = async (name: string) => {
    const r = await exchangeTcp(srv.port, bigQuery(name), 5000);
    assert.ok(r !== undefined && (r[3] & 0x0f) === 0, `${name}: NOERROR`);
    return r.readUInt16BE(6);
  };
  try {
    const big = "one.r2000.big.test.";
    const start = await forwarded();
    assert.equal(await ask(big), 2000, "answered whole");
    // The client's retry (over TCP after a truncated UDP reply) comes within its second: replayed.
    assert.equal(await ask(big), 2000);
    const once = (await forwarded()) - start;
    assert.equal(await ask("ns.big.test."), 1);
    const asked = await forwarded();
    await sleep(1500);
    assert.equal(await ask("ns.big.test."), 1);
    assert.equal(await forwarded(), asked, "a small reply is kept for cache's 30 s");
    assert.equal(await ask(big), 2000);
    const again = (await forwarded()) - asked;
    assert.ok(once > 0, "the big name went to Knot");
    assert.equal(
      again,
      once,
      "asked of Knot again after its second, as often as the first time: not kept, and its retry was replayed",
    );
  } finally {
    await srv.stop();
    await knot.stop();
  }
});

test("cache: an NXDOMAIN through a CNAME is kept no longer than the CNAME's TTL, nor shown with more", async () => {
  // Knot: the SOA's negative TTL is 60, the CNAME that leads to the missing name lives 10 s.
  const text = [
    "$ORIGIN neg.test.",
    "$TTL 300",
    "@ SOA ns hostmaster 1 3600 600 86400 60",
    "@ NS ns",
    "ns A 127.0.0.1",
    "dangling 10 CNAME gone",
  ].join("\n");
  const knot = await startKnot({ zone: { origin: "neg.test.", text: text + "\n" } });
  const srv = await startServer(`. {\n    forward . 127.0.0.1:${knot.port}\n    cache\n}\n`);
  try {
    for (let i = 0; i < 2; i++) {
      const r = await dig(srv.port, "dangling.neg.test");
      assert.equal(r.status, "NXDOMAIN", r.text);
      for (const rr of [...r.answer, ...r.authority]) {
        assert.ok(Number(rr.split(" ")[1]) <= 10, `answer ${i}: no record kept past the CNAME's 10 s: ${rr}`);
      }
    }
  } finally {
    await srv.stop();
    await knot.stop();
  }
});

test("cache: forward's own SERVFAIL (no upstream answered) is not kept: the upstream back, the name answers", async () => {
  const knot = await startKnot();
  const port = knot.port;
  await knot.stop();
  const srv = await startServer(
    `. {\n    forward . 127.0.0.1:${port} {\n        max_fails 0\n    }\n    cache\n}\n`,
  );
  let again: Awaited<ReturnType<typeof startKnot>> | undefined;
  try {
    assert.equal((await dig(srv.port, WWW)).status, "SERVFAIL", "no upstream");
    // Back within cache's 5 s for a SERVFAIL an upstream sent.
    again = await startKnot({ port });
    const r = await dig(srv.port, WWW);
    assert.equal(r.status, "NOERROR", `the upstream answers again: ${r.text}`);
  } finally {
    await srv.stop();
    await again?.stop();
  }
});
