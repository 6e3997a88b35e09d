// What the answer cache lets go of: a reply it no longer holds (its name changed, the whole cache was
// dropped) must be garbage, whatever the cache did before. A walk of its entries kept across the
// Map's growth and shrinking held every table the Map outgrew, with the entries removed from them
// (issue 25: RSS 31 MB over its baseline after 5 minutes of API churn).

import { test } from "node:test";
import assert from "node:assert/strict";
import { AnswerCache, CachedAnswer } from "./answer-cache.ts";
import { collectGarbage } from "../runtime/heap.ts";
import { wireKey } from "../dns/name.ts";

const META = { rcode: 0, plugin: "test", owner: {} };
const key = (name: string) => wireKey(name) + "\x00\x01\x00\x01" + "0";

/** Stores a reply for each name and returns weak references to them. */
function fill(cache: AnswerCache, names: string[]): WeakRef<CachedAnswer>[] {
  return names.map((name) => {
    const e = new CachedAnswer({ bytes: Buffer.alloc(200), expires: Infinity, meta: META });
    cache.set(key(name), e, cache.generation);
    return new WeakRef(e);
  });
}

test("replies dropped by invalidateNames are garbage once the cache grew and shrank (API churn)", async () => {
  const cache = new AnswerCache(100_000);
  const refs: WeakRef<CachedAnswer>[] = [];
  // Services created and deleted: their names come and go, the cache never full.
  for (let round = 0; round < 20; round++) {
    const names = Array.from({ length: 300 }, (_, i) => `svc-${round}-${i}.ns.svc.cluster.local.`);
    refs.push(...fill(cache, names));
    cache.invalidateNames(names);
  }
  assert.equal(cache.size, 0);
  // The server stores on: the walks over the entries move to the Map's newest table.
  fill(cache, ["next.ns.svc.cluster.local."]);
  // WeakRefs hold their targets until the current job ends.
  await new Promise((r) => setImmediate(r));
  collectGarbage();
  const alive = refs.filter((r) => r.deref() !== undefined).length;
  assert.equal(alive, 0, `${alive} of ${refs.length} dropped replies still held`);
});

test("at capacity the oldest entry goes, and what it evicted is garbage too", async () => {
  const cache = new AnswerCache(500);
  const refs = fill(
    cache,
    Array.from({ length: 3000 }, (_, i) => `n${i}.example.`),
  );
  assert.equal(cache.size, 500);
  await new Promise((r) => setImmediate(r));
  collectGarbage();
  assert.equal(refs.slice(0, 2500).filter((r) => r.deref() !== undefined).length, 0);
  assert.equal(refs.slice(2500).filter((r) => r.deref() !== undefined).length, 500);
});

test("entries past their time go as new ones are stored, also when nobody asks for them again", () => {
  const cache = new AnswerCache(100_000);
  const store = (name: string, expires: number) => {
    cache.get(key(name), now);
    cache.set(
      key(name),
      new CachedAnswer({ bytes: Buffer.alloc(50), expires, meta: META }),
      cache.generation,
    );
  };
  let now = 0;
  // The NXDOMAIN answers of deleted Services, each asked once, living 5 s.
  for (let i = 0; i < 1000; i++) store(`gone-${i}.ns.svc.cluster.local.`, 5_000);
  assert.equal(cache.size, 1000);
  // A minute later other names are asked and stored: the expired ones are let go on the way.
  now = 60_000;
  for (let i = 0; i < 2000; i++) store(`new-${i}.ns.svc.cluster.local.`, 120_000);
  assert.equal(cache.size, 2000, `only the live entries are held: ${cache.size}`);
  assert.equal(cache.get(key("new-0.ns.svc.cluster.local."), now)?.expires, 120_000);
});
