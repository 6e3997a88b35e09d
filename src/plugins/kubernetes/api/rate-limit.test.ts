import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { Slots, TokenBucket, limitClient, type Clock } from "./rate-limit.ts";
import type { ApiClient, ListPage } from "./api.ts";
import { pageOf } from "./list-page.ts";

/** A clock the test moves by hand: sleepers wake when advance() passes their time. */
function fakeClock() {
  let t = 0;
  const sleepers: { at: number; wake: () => void; fail: (e: unknown) => void }[] = [];
  const clock: Clock = {
    now: () => t,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        const s = { at: t + ms, wake: resolve, fail: reject };
        sleepers.push(s);
        signal?.addEventListener("abort", () => {
          sleepers.splice(sleepers.indexOf(s), 1);
          reject(new Error("aborted"));
        });
      }),
  };
  return {
    clock,
    async advance(ms: number) {
      t += ms;
      for (const s of sleepers.filter((x) => x.at <= t)) {
        sleepers.splice(sleepers.indexOf(s), 1);
        s.wake();
      }
      for (let i = 0; i < 10; i++) await Promise.resolve();
    },
  };
}

/** Starts `n` takes and reports how many have got their token so far. */
function takers(bucket: TokenBucket, n: number) {
  let done = 0;
  for (let i = 0; i < n; i++) void bucket.take().then(() => done++);
  return () => done;
}

describe("apiserver limits: the token bucket (qps, burst)", () => {
  it("lets a burst through at once, then one request per 1/qps seconds, in order", async () => {
    const c = fakeClock();
    const done = takers(new TokenBucket(2, 3, c.clock), 6);
    await c.advance(0);
    assert.equal(done(), 3, "the burst");
    await c.advance(499);
    assert.equal(done(), 3);
    await c.advance(1);
    assert.equal(done(), 4, "one more after 500 ms at 2 qps");
    await c.advance(1000);
    assert.equal(done(), 6);
  });

  it("refills while idle, up to the burst and no further", async () => {
    const c = fakeClock();
    const bucket = new TokenBucket(1, 2, c.clock);
    let done = takers(bucket, 2);
    await c.advance(0);
    assert.equal(done(), 2);
    await c.advance(60_000);
    done = takers(bucket, 3);
    await c.advance(0);
    assert.equal(done(), 2, "a minute idle refills two tokens, not sixty");
  });

  it("a request aborted while it waits gets an error and gives its turn back", async () => {
    const c = fakeClock();
    const bucket = new TokenBucket(1, 1, c.clock);
    await bucket.take();
    const ctl = new AbortController();
    const waiting = bucket.take(ctl.signal);
    ctl.abort();
    await assert.rejects(waiting);
    let got = false;
    void bucket.take().then(() => (got = true));
    await c.advance(1000);
    assert.equal(got, true);
  });
});

describe("apiserver limits: requests in flight (max_inflight)", () => {
  it("holds at most max at once; a released slot goes to the next waiter", async () => {
    const slots = new Slots(2);
    const releases: (() => void)[] = [];
    let got = 0;
    for (let i = 0; i < 4; i++)
      void slots.acquire().then((r) => {
        got++;
        releases.push(r);
      });
    const settle = () => new Promise((r) => setImmediate(r));
    await settle();
    assert.equal(got, 2);
    releases[0]();
    releases[0]();
    await settle();
    assert.equal(got, 3, "one release (twice) lets one more in");
    assert.equal(slots.held, 2);
  });

  it("lists and discovery take slots; watches, which stay open, do not", async () => {
    const open: (() => void)[] = [];
    let inFlight = 0;
    let most = 0;
    const hold = <T>(v: T) =>
      new Promise<T>((resolve) => {
        inFlight++;
        most = Math.max(most, inFlight);
        open.push(() => {
          inFlight--;
          resolve(v);
        });
      });
    const inner: ApiClient = {
      server: "http://api",
      list: () => hold<ListPage>(pageOf([])),
      serves: () => hold(true),
      watch: () => Promise.resolve(new AbortController()),
    };
    const client = limitClient(inner, { maxInflight: 1 });
    const signal = new AbortController().signal;
    const lists = [
      client.list("/a", {}, signal),
      client.serves("v1", "x", signal),
      client.list("/b", {}, signal),
    ];
    await client.watch(
      "/c",
      {},
      () => {},
      () => {},
    );
    await client.watch(
      "/d",
      {},
      () => {},
      () => {},
    );
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setImmediate(r));
      open.shift()!();
    }
    await Promise.all(lists);
    assert.equal(most, 1);
  });

  it("no limit set: the client itself", () => {
    const inner = {} as ApiClient;
    assert.equal(limitClient(inner, {}), inner);
  });
});
