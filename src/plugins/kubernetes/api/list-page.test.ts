// A LIST page read item by item (list-page.ts) against the same page parsed whole: the same objects
// and metadata for any JSON, a DECODE error for what is not a list, the same store once applied; the
// buffers pages are gathered in; and the reflector failing a list whose item is not an object, then
// listing again.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { pino } from "pino";
import { KubeError, KubeErrorCode } from "./api.ts";
import type { ApiClient, ListPage } from "./api.ts";
import { PageBuffers, itemsOf, pageOf, readListPage } from "./list-page.ts";
import { Reflector } from "./reflector.ts";
import { Store } from "../store/store.ts";
import type { Kind, KObject } from "../model/source.ts";
import { startApiServer } from "../../../../test/k8s/api-server.ts";
import { endpointSlice, namespace, pod, service } from "../../../../test/k8s/objects.ts";
import { compareDumps } from "../../../../test/k8s/store-compare.ts";
import { randomText } from "../../../../test/k8s/random-slim.ts";
import { rng } from "../../../../test/helpers/rng.ts";

/** Strings that end or nest JSON if a reader takes them for structure. */
const TRICKY = [
  '"',
  "\\",
  '\\"',
  "]",
  "}",
  "[{",
  '"]}',
  "\u2028",
  "\u0000",
  "é日\u{1F600}",
  "items",
  '"items":[',
];

/** A random JSON value of the shapes an object can hold, strings tricky now and then. */
function randomValue(next: () => number, depth: number): unknown {
  const r = next();
  if (depth > 3 || r < 0.3) {
    const k = Math.floor(next() * 6);
    if (k === 0) return TRICKY[Math.floor(next() * TRICKY.length)];
    if (k === 1) return randomText(next);
    if (k === 2) return Math.round((next() - 0.5) * 1e6) / 100;
    if (k === 3) return next() < 0.5;
    if (k === 4) return null;
    return -Math.floor(next() * 1e12) * 1e10;
  }
  if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 4); i > 0; i--)
    o[randomText(next) + TRICKY[i]] = randomValue(next, depth + 1);
  return o;
}

function randomItem(next: () => number, i: number): Record<string, unknown> {
  return {
    kind: "Thing",
    metadata: { name: `t${i}`, annotations: { [TRICKY[i % TRICKY.length]]: randomText(next) } },
    spec: randomValue(next, 0),
  };
}

/** The page as a server might write it: `items` before or after `metadata`, compact or indented. */
function pageText(items: unknown[], seed: number): string {
  const metadata = { resourceVersion: String(seed), continue: seed % 2 ? "tok" : undefined, items: [1] };
  const body =
    seed % 3 === 0 ? { kind: "List", items, metadata, apiVersion: "v1" } : { kind: "List", metadata, items };
  return seed % 4 === 0 ? JSON.stringify(body, null, 2) : JSON.stringify(body);
}

const decodeError = (e: unknown) => e instanceof KubeError && e.code === KubeErrorCode.DECODE;

describe("a LIST page read item by item", () => {
  test("gives the objects and metadata that parsing the page whole gives, for any JSON", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = rng(seed);
      const items = Array.from({ length: Math.floor(next() * 8) }, (_, i) => randomItem(next, i));
      const text = pageText(items, seed);
      const whole = JSON.parse(text) as { metadata: unknown; items: unknown[] };
      const page = readListPage("GET /x", Buffer.from(text));
      assert.equal(page.size, whole.items.length, `seed ${seed}`);
      assert.deepEqual(itemsOf(page), whole.items, `seed ${seed}`);
      assert.deepEqual(page.metadata, whole.metadata, `seed ${seed}`);
    }
  });

  test("a page cut short anywhere, or not a list, is a DECODE error", () => {
    const next = rng(7);
    const text = pageText([randomItem(next, 0), randomItem(next, 1), randomItem(next, 2)], 5);
    const bytes = Buffer.from(text);
    for (let cut = 0; cut < bytes.length; cut++) {
      assert.throws(() => readListPage("GET /x", bytes.subarray(0, cut)), decodeError, `cut at ${cut}`);
    }
    for (const bad of [
      "[]",
      '{"metadata":{}}',
      '{"metadata":{},"items":null}',
      '{"items":[]}',
      '{"metadata":7,"items":[]}',
      '{"metadata":{},"items":[{}]} x',
      '{"metadata":{},"items":[{},]}',
      '{"metadata":{},"items":[{} {}]}',
    ]) {
      assert.throws(() => readListPage("GET /x", Buffer.from(bad)), decodeError, bad);
    }
  });

  test("an item that is not an object with metadata is a DECODE error when it is read, the others read", () => {
    const page = readListPage(
      "GET /x",
      Buffer.from('{"metadata":{},"items":[{"metadata": tru},{"metadata":{"name":"ok"}},7,"s",{"a":1}]}'),
    );
    assert.equal(page.size, 5);
    assert.throws(() => page.item(0), decodeError);
    assert.equal(page.item(1).metadata.name, "ok");
    for (const i of [2, 3, 4]) assert.throws(() => page.item(i), decodeError, `item ${i}`);
  });

  test("pages from the API server, applied item by item, give the store their whole parse gives", async () => {
    const api = await startApiServer({ bookmarkIntervalMs: 0 });
    try {
      const next = rng(11);
      const ip = () =>
        `10.${Math.floor(next() * 4)}.${Math.floor(next() * 9)}.${1 + Math.floor(next() * 200)}`;
      for (const ns of ["a", "b", "ü-not-dns"]) api.create("namespaces", namespace(ns, { note: '"]}' }));
      for (let i = 0; i < 120; i++) {
        const ns = next() < 0.5 ? "a" : "b";
        const headless = next() < 0.3;
        const ports = [{ name: "http", port: 80 }];
        api.create(
          "services",
          service(ns, `s${i}`, headless ? { headless: true, ports } : { clusterIP: ip(), ports }),
        );
        const eps = Array.from({ length: Math.floor(next() * 5) }, (_, e) => ({
          ip: ip(),
          ready: next() < 0.8,
          ...(next() < 0.5 ? { hostname: `h${e}` } : {}),
        }));
        api.create("endpointslices", endpointSlice(ns, `s${i}`, `s${i}-x`, eps));
        if (next() < 0.2) api.create("pods", pod(ns, `p${i}`, ip()));
      }
      const kinds: Kind[] = ["namespaces", "services", "endpointslices", "pods"];
      const paths: Record<string, string> = {
        namespaces: "/api/v1/namespaces",
        services: "/api/v1/services",
        endpointslices: "/apis/discovery.k8s.io/v1/endpointslices",
        pods: "/api/v1/pods",
      };
      const zones = ["cluster.local.", "in-addr.arpa.", "ip6.arpa."];
      const whole = new Store({ zones, waitFor: kinds });
      const byItem = new Store({ zones, waitFor: kinds });
      for (const kind of kinds) {
        whole.listStart(kind);
        byItem.listStart(kind);
        let cont = "";
        do {
          const url = `${api.url}${paths[kind]}?limit=7${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`;
          const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
          const parsed = JSON.parse(bytes.toString("utf8")) as {
            metadata: { continue?: string };
            items: KObject[];
          };
          for (const o of parsed.items) whole.apply(kind, "ADDED", o);
          const page = readListPage("GET", bytes);
          for (let i = 0; i < page.size; i++) byItem.apply(kind, "ADDED", page.item(i));
          assert.deepEqual(page.metadata, parsed.metadata);
          cont = page.metadata.continue ?? "";
        } while (cont);
        whole.listDone(kind);
        byItem.listDone(kind);
      }
      const c = compareDumps(byItem.dump(), whole.dump());
      assert.ok(c.records > 200, `records compared: ${c.records}`);
      assert.deepEqual(c.differences, []);
    } finally {
      await api.close();
    }
  });
});

describe("page buffers", () => {
  async function* chunksOf(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  }

  test("gather a body's chunks whole, growing past what was expected, and hand a buffer out again only once given back", async () => {
    const pages = new PageBuffers();
    const next = rng(3);
    const body = Buffer.from(Array.from({ length: 700_000 }, () => Math.floor(next() * 256)));
    for (const [chunk, expected] of [
      [65_536, 0],
      [1000, body.length],
      [333_333, 10],
    ]) {
      const a = await pages.gather(chunksOf(body, chunk), expected);
      assert.equal(a.length, body.length);
      assert.ok(a.buffer.subarray(0, a.length).equals(body), `chunks of ${chunk}`);
      // While `a` is held, another body gets a buffer of its own.
      const b = await pages.gather(chunksOf(Buffer.from("other"), 2), 0);
      assert.notEqual(b.buffer.buffer, a.buffer.buffer);
      assert.equal(b.buffer.subarray(0, b.length).toString(), "other");
      pages.give(b.buffer);
      pages.give(a.buffer);
      // Given back, it is used again.
      assert.equal(pages.take(body.length), a.buffer);
    }
  });
});

test("page buffers let their spares go once none has come back for a while", async () => {
  const pages = new PageBuffers();
  const b = pages.take(1000);
  pages.give(b);
  assert.equal(pages.take(1000), b);
  pages.give(b);
  // Timers run in the order they expire: the spares' is done before this wait's.
  await new Promise((r) => setTimeout(r, PageBuffers.IDLE_MS + 200));
  assert.notEqual(pages.take(1000), b);
});

describe("the reflector's pages", () => {
  test("an item that is not an object fails the list, and it lists again", async () => {
    const bad = Buffer.from(
      '{"metadata":{"resourceVersion":"5","continue":"p2"},"items":[' +
        JSON.stringify(service("default", "s0")) +
        ',{"metadata": tru}]}',
    );
    const good = Buffer.from(
      bad.toString().replace('{"metadata": tru}', JSON.stringify(service("default", "s1"))),
    );
    const asked: boolean[] = [];
    const client: ApiClient = {
      server: "http://fake",
      list(_path, query): Promise<ListPage> {
        asked.push(query.continue !== undefined);
        if (query.continue !== undefined)
          return Promise.resolve(pageOf([service("default", "s2")], { resourceVersion: "5" }));
        return Promise.resolve(readListPage("GET", asked.length === 1 ? bad : good));
      },
      serves: () => Promise.resolve(true),
      watch: () => Promise.resolve(new AbortController()),
    };
    const store = new Store({ zones: ["cluster.local."], waitFor: ["services"] });
    const reflector = new Reflector({
      client,
      kind: "services",
      sink: store,
      log: pino({ level: "silent" }),
      backoff: { initialMs: 1, maxMs: 5 },
    });
    reflector.start();
    try {
      await reflector.waitSynced();
      assert.deepEqual(asked, [false, false, true]);
      const st = reflector.stats();
      assert.equal(st.errors, 1);
      assert.match(st.lastError ?? "", /item 1 is not JSON/);
      assert.deepEqual(
        store.dump().services.map(([k]) => k),
        ["default/s0", "default/s1", "default/s2"],
      );
    } finally {
      await reflector.stop();
    }
  });
});
