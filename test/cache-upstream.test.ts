// cache in front of forward, against a real upstream (Knot DNS on loopback): TTLs count down, prefetch
// refreshes a popular name before it expires, and serve_stale keeps answering with the upstream gone.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { sample } from "./helpers/metrics.ts";
import { startKnot } from "./upstream/knot.ts";

const WWW = "www.example.org";

async function metrics(port: number, server: string) {
  const text = (await httpGet(port, "/metrics")).body;
  const labels = { server, zones: ".", view: "" };
  return {
    forwarded: forwardedTo(text),
    prefetch: sample(text, "coredns_cache_prefetch_total", labels),
    stale: sample(text, "coredns_cache_served_stale_total", labels),
  };
}

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
  // Entries live 3 s; from 50% left, an entry asked once in the minute is fetched again.
  const { knot, metricsPort, srv } = await start("success 100 3 1\n        prefetch 1 1m 50%");
  const server = `dns://:${srv.port}`;
  try {
    assert.equal(await ttlOf(srv.port), 300, "the first answer is the upstream's");
    await sleep(1100);
    const second = await ttlOf(srv.port);
    assert.ok(second >= 1 && second <= 2, `kept 3 s at most, about 1 s gone: TTL ${second}`);
    await sleep(1100);
    // 1 s left, under 50% of 3: this hit is answered from the cache and starts a refresh.
    assert.ok((await ttlOf(srv.port)) <= 1);
    await sleep(300);
    const m = await metrics(metricsPort, server);
    assert.equal(m.prefetch, 1);
    assert.equal(m.forwarded, 2, "one query, one prefetch");
    await sleep(900);
    // Past the first entry's 3 s: the refreshed entry answers, nothing is forwarded.
    const ttl = await ttlOf(srv.port);
    assert.ok(ttl >= 1 && ttl <= 3, `TTL ${ttl} from the refreshed entry`);
    assert.equal((await metrics(metricsPort, server)).forwarded, 2);
  } finally {
    await srv.stop();
    await knot.stop();
  }
});

test("cache: serve_stale keeps answering while the upstream is down", async () => {
  const { knot, metricsPort, srv } = await start("success 100 2 1\n        serve_stale 1m");
  try {
    assert.equal(await ttlOf(srv.port), 300);
    await knot.stop();
    await sleep(2200);
    for (let i = 0; i < 3; i++) {
      const r = await dig(srv.port, WWW);
      assert.equal(r.status, "NOERROR", `stale answer ${i}: ${r.text}`);
      assert.deepEqual(r.answer, [`${WWW}. 0 IN A 192.0.2.1`]);
    }
    const m = await metrics(metricsPort, `dns://:${srv.port}`);
    assert.ok((m.stale ?? 0) >= 1, `served stale ${m.stale}`);
    // Not in the cache at all: the upstream is needed, and it is gone.
    assert.equal((await dig(srv.port, "alias.example.org")).status, "SERVFAIL");
  } finally {
    await srv.stop();
    await knot.stop();
  }
});
