// The reflector against the test API server, through a generated kubeconfig and the real client
// library: paging, watch events, relist after 410, recovery from errors and hangs, selectors, the
// Endpoints fallback, and the backoff it waits with.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import type { Logger } from "pino";
import { startApiServer } from "../../../../test/k8s/api-server.ts";
import type { ApiServerOptions, TestApiServer } from "../../../../test/k8s/api-server.ts";
import { writeKubeconfig } from "../../../../test/k8s/kubeconfig.ts";
import { endpointSlice, endpoints, namespace, service } from "../../../../test/k8s/objects.ts";
import { Backoff } from "./backoff.ts";
import type { BackoffOptions } from "./backoff.ts";
import { KubeError, KubeErrorCode } from "./api.ts";
import type { ApiClient } from "./api.ts";
import { createClient } from "./client.ts";
import { loadKubeConfig } from "./kubeconfig.ts";
import { REFUSALS_BEFORE_LIST, Reflector } from "./reflector.ts";
import type { ReflectorTuning } from "./reflector.ts";
import { apiSource } from "./source-api.ts";
import { ApplyQueue } from "./apply-queue.ts";
import { itemsOf } from "./list-page.ts";
import type { EventType, Kind, KObject, Sink } from "../model/source.ts";
import { HAVE_OPENSSL, makeCerts } from "../../../../test/k8s/certs.ts";

const TUNING: ReflectorTuning = {
  pageSize: 3,
  listTimeoutMs: 400,
  silentTimeoutMs: 500,
  watchTimeoutSeconds: 60,
  minWatchMs: 1000,
  backoff: { initialMs: 10, maxMs: 100 },
};

interface Call {
  op: "listStart" | "apply" | "listDone";
  kind: Kind;
  type?: EventType;
  key?: string;
  rv?: string;
  /** Requests the server had seen when the call was made. */
  requests: number;
}

/** Records every sink call and keeps a model store with listDone's sweep, as the contract says. */
class RecordingSink implements Sink {
  calls: Call[] = [];
  store = new Map<string, KObject>();
  #seen?: Set<string>;
  readonly #server: TestApiServer;
  constructor(server: TestApiServer) {
    this.#server = server;
  }
  #key(kind: Kind, obj: KObject): string {
    return `${kind}:${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
  }
  listStart(kind: Kind): void {
    this.calls.push({ op: "listStart", kind, requests: this.#server.requests.length });
    this.#seen = new Set();
  }
  apply(kind: Kind, type: EventType, obj: KObject): void {
    const key = this.#key(kind, obj);
    const rv = obj.metadata.resourceVersion;
    this.calls.push({ op: "apply", kind, type, key, rv, requests: this.#server.requests.length });
    this.#seen?.add(key);
    if (type === "DELETED") this.store.delete(key);
    else this.store.set(key, obj);
  }
  listDone(kind: Kind): void {
    this.calls.push({ op: "listDone", kind, requests: this.#server.requests.length });
    for (const key of [...this.store.keys()]) {
      if (key.startsWith(`${kind}:`) && !this.#seen?.has(key)) this.store.delete(key);
    }
    this.#seen = undefined;
  }
  keys(kind: Kind): string[] {
    return [...this.store.keys()].filter((k) => k.startsWith(`${kind}:`)).sort();
  }
  applied(kind?: Kind): string[] {
    return this.calls
      .filter((c) => c.op === "apply" && (!kind || c.kind === kind))
      .map((c) => `${c.type} ${c.key}`);
  }
}

interface LogLine {
  level: number;
  msg: string;
  kind?: string;
}

function captureLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l) as LogLine);
      cb();
    },
  });
  return { log: pino({ level: "debug" }, stream), lines };
}

/** Polls until `cond` holds; fails after 5 s. */
async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for: ${what}`);
}

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "clusterdns-reflector-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

interface Harness {
  server: TestApiServer;
  sink: RecordingSink;
  reflector: Reflector;
  lines: LogLine[];
  done(): Promise<void>;
}

/** A harness whose backoff waits are short and counted (each wait draws one random number). */
async function harnessCountingWaits(kind: Kind): Promise<Harness & { waits(): number }> {
  let waits = 0;
  const h = await harness(kind, { backoff: { initialMs: 10, maxMs: 100, random: () => (waits++, 0) } });
  return Object.assign(h, { waits: () => waits });
}

let serial = 0;
async function harness(
  kind: Kind,
  o: {
    server?: ApiServerOptions;
    setup?: (s: TestApiServer) => void;
    labelSelector?: string;
    namespaces?: string[];
    backoff?: BackoffOptions;
    queue?: ApplyQueue;
    pageSize?: number;
    /** Wraps the client (to watch what the reflector asks of it). */
    wrap?: (c: ApiClient) => ApiClient;
  } = {},
): Promise<Harness> {
  const server = await startApiServer({ bookmarkIntervalMs: 100, ...o.server });
  o.setup?.(server);
  const kubeconfig = writeKubeconfig(dir, server.url, { fileName: `kc-${serial++}` });
  const sink = new RecordingSink(server);
  const { log, lines } = captureLog();
  const reflector = new Reflector({
    ...TUNING,
    backoff: o.backoff ?? TUNING.backoff,
    client: (o.wrap ?? ((c) => c))(createClient({ kubeconfig })),
    kind,
    sink,
    log,
    labelSelector: o.labelSelector,
    namespaces: o.namespaces,
    queue: o.queue,
    pageSize: o.pageSize ?? TUNING.pageSize,
  });
  reflector.start();
  return {
    server,
    sink,
    reflector,
    lines,
    async done() {
      await reflector.stop();
      await server.close();
    },
  };
}

describe("reflector", () => {
  test("a LIST page goes through the apply queue: the event loop comes round between its objects", async () => {
    // A relist of 100k services (a 410, a reload with a new source) applied page by page in one go
    // held the answering thread for seconds; through the queue, answers pass between slices.
    let turns = 0;
    let spinning = true;
    const spin = () => {
      turns++;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    const seen = new Set<number>();
    const h = await harness("services", {
      queue: new ApplyQueue({ sliceMs: 0.05 }),
      pageSize: 500,
      setup(s) {
        for (let i = 0; i < 400; i++) s.create("services", service("default", `s${i}`));
      },
    });
    try {
      const apply = h.sink.apply.bind(h.sink);
      h.sink.apply = (kind, type, obj) => {
        seen.add(turns);
        const until = performance.now() + 0.02;
        while (performance.now() < until);
        apply(kind, type, obj);
      };
      await h.reflector.waitSynced();
      assert.equal(h.server.requestsFor("services", false).length, 1, "one page");
      assert.equal(h.sink.applied("services").length, 400);
      assert.equal(h.sink.calls.at(-1)!.op, "listDone");
      assert.ok(seen.size > 1, `the 400 objects of one page saw ${seen.size} turn(s) of the loop`);
    } finally {
      spinning = false;
      await h.done();
    }
  });

  test("lists page by page, applying each page before it asks for the next, then watches", async () => {
    // What the reflector asked for and applied, in order: "list <continue given>" and "apply <name>".
    const order: string[] = [];
    const h = await harness("services", {
      setup(s) {
        for (let i = 0; i < 7; i++) s.create("services", service("default", `s${i}`));
      },
      wrap: (c) => ({
        server: c.server,
        list(path, query, signal) {
          order.push(`list ${query.continue !== undefined}`);
          return c.list(path, query, signal);
        },
        serves: (gv, r, signal) => c.serves(gv, r, signal),
        watch: (path, query, onEvent, onDone, ms) => c.watch(path, query, onEvent, onDone, ms),
      }),
    });
    try {
      const apply = h.sink.apply.bind(h.sink);
      h.sink.apply = (kind, type, obj) => {
        order.push(`apply ${obj.metadata.name}`);
        apply(kind, type, obj);
      };
      await h.reflector.waitSynced();
      const lists = h.server.requestsFor("services", false);
      assert.equal(lists.length, 3);
      assert.deepEqual(
        lists.map((r) => [r.query.limit, r.query.continue !== undefined]),
        [
          ["3", false],
          ["3", true],
          ["3", true],
        ],
      );
      const calls = h.sink.calls;
      assert.equal(calls[0].op, "listStart");
      assert.equal(calls.at(-1)!.op, "listDone");
      assert.equal(calls.filter((c) => c.op === "apply").length, 7);
      assert.deepEqual(order, [
        "list false",
        "apply s0",
        "apply s1",
        "apply s2",
        "list true",
        "apply s3",
        "apply s4",
        "apply s5",
        "list true",
        "apply s6",
      ]);
      assert.deepEqual(
        h.sink.keys("services"),
        [0, 1, 2, 3, 4, 5, 6].map((i) => `services:default/s${i}`),
      );

      await until("watch open", () => h.server.openWatches("services") === 1);
      const w = h.server.requestsFor("services", true)[0];
      assert.equal(w.query.resourceVersion, h.server.resourceVersion());
      assert.equal(w.query.allowWatchBookmarks, "true");
      assert.ok(Number(w.query.timeoutSeconds) >= 60 && Number(w.query.timeoutSeconds) < 120);
      const st = h.reflector.stats();
      assert.equal(st.synced, true);
      assert.equal(st.connected, true);
      assert.equal(st.lists, 1);
      assert.equal(st.relists, 0);
      assert.equal(st.errors, 0);
      assert.ok(h.lines.some((l) => l.msg === "listed"));
    } finally {
      await h.done();
    }
  });

  test("applies watch events in order and tracks the resourceVersion", async () => {
    const h = await harness("endpointslices", {
      setup(s) {
        s.create(
          "endpointslices",
          endpointSlice("app", "web", "web-a", ["10.244.0.1"], { ports: [{ name: "http", port: 80 }] }),
        );
        s.create(
          "endpointslices",
          endpointSlice("app", "web", "web-b", ["10.244.0.2"], { ports: [{ name: "http", port: 80 }] }),
        );
      },
    });
    try {
      await h.reflector.waitSynced();
      const before = h.sink.calls.length;
      const s = h.server;
      const a = s.get("endpointslices", "app", "web-a") as ReturnType<typeof endpointSlice>;
      a.endpoints![0].conditions = { ready: false, serving: true, terminating: true };
      s.update("endpointslices", a);
      s.remove("endpointslices", { name: "web-b", namespace: "app" });
      s.create("endpointslices", endpointSlice("app", "web", "web-c", ["10.244.0.3"]));
      await until("three events", () => h.sink.calls.length === before + 3);
      assert.deepEqual(
        h.sink.calls.slice(before).map((c) => `${c.type} ${c.key}`),
        [
          "MODIFIED endpointslices:app/web-a",
          "DELETED endpointslices:app/web-b",
          "ADDED endpointslices:app/web-c",
        ],
      );
      const rvs = h.sink.calls.slice(before).map((c) => Number(c.rv));
      assert.deepEqual(
        rvs,
        [...rvs].sort((x, y) => x - y),
      );
      assert.deepEqual(h.sink.keys("endpointslices"), [
        "endpointslices:app/web-a",
        "endpointslices:app/web-c",
      ]);
      // Bookmarks keep the resourceVersion current.
      await until("bookmark rv", () => h.reflector.stats().resourceVersion === s.resourceVersion());
    } finally {
      await h.done();
    }
  });

  for (const expired of ["event", "http"] as const) {
    test(`relists after 410 (${expired}); objects deleted while away are swept at listDone`, async () => {
      const h = await harness("services", {
        server: { expiredWatch: expired },
        setup(s) {
          for (const n of ["keep", "gone"]) s.create("services", service("default", n));
        },
      });
      try {
        await h.reflector.waitSynced();
        await until("watch open", () => h.server.openWatches("services") === 1);
        const s = h.server;
        s.dropWatches();
        s.remove("services", { name: "gone", namespace: "default" });
        s.create("services", service("default", "new"));
        s.compact();
        await until("relisted", () => h.reflector.stats().relists === 1);
        assert.deepEqual(h.sink.keys("services"), ["services:default/keep", "services:default/new"]);
        assert.equal(h.sink.calls.filter((c) => c.op === "listDone").length, 2);
        // The deletion was never seen as an event: only the relist removed it.
        assert.equal(h.sink.applied().includes("DELETED services:default/gone"), false);
        await until("watching again", () => h.server.openWatches("services") === 1);
        s.create("services", service("default", "after"));
        await until("event after relist", () => h.sink.keys("services").includes("services:default/after"));
      } finally {
        await h.done();
      }
    });
  }

  test("a 410 after a watch that delivered events relists at once, with no backoff", async () => {
    const h = await harnessCountingWaits("services");
    try {
      await h.reflector.waitSynced();
      for (let round = 1; round <= 3; round++) {
        await until("watch open", () => h.server.openWatches("services") === 1);
        h.server.create("services", service("default", `s${round}`));
        await until("event seen", () => h.sink.keys("services").includes(`services:default/s${round}`));
        h.server.expireWatches();
        await until("relisted", () => h.reflector.stats().relists === round);
      }
      assert.equal(h.waits(), 0, "each 410 came after a working watch: none waited");
    } finally {
      await h.done();
    }
  });

  test("an API restored to an earlier resourceVersion (watch: 504 Too large) is listed again", async () => {
    const h = await harness("services", {
      server: { tooLargeWaitMs: 100 },
      setup(s) {
        s.create("services", service("default", "kept"));
      },
    });
    try {
      await h.reflector.waitSynced();
      const s = h.server;
      const backup = s.resourceVersion();
      for (const n of ["old0", "old1"]) s.create("services", service("default", n));
      await until("old seen", () => h.sink.keys("services").includes("services:default/old1"));
      // etcd restored from the backup, and written to since: lower resourceVersions, other objects.
      s.restore(backup);
      s.create("services", service("default", "n1"));
      await until("relisted", () => h.reflector.stats().relists === 1);
      assert.deepEqual(h.sink.keys("services"), ["services:default/kept", "services:default/n1"]);
      assert.match(h.reflector.stats().lastError ?? "", /504 Timeout: Timeout: Too large resource version/);
      // A LIST without a resourceVersion is a consistent read, which no restore makes too new.
      assert.equal(s.requestsFor("services", false).at(-1)?.query.resourceVersion, undefined);
      await until("watching again", () => s.openWatches("services") === 1);
      assert.equal(h.reflector.stats().connected, true);
      s.create("services", service("default", "after"));
      await until("event after relist", () => h.sink.keys("services").includes("services:default/after"));
    } finally {
      await h.done();
    }
  });

  for (const [code, refusals, lists] of [
    [503, REFUSALS_BEFORE_LIST - 1, 1],
    [503, REFUSALS_BEFORE_LIST, 2],
    [429, REFUSALS_BEFORE_LIST, 1],
  ] as const) {
    const what = lists === 2 ? "lists again" : "is retried from its resourceVersion";
    test(`a watch refused with ${code} ${refusals} times in a row ${what}`, async () => {
      const h = await harness("services");
      try {
        await h.reflector.waitSynced();
        await until("watch open", () => h.server.openWatches("services") === 1);
        const watches = h.server.requestsFor("services", true).length;
        h.server.failNext(refusals, code);
        h.server.dropWatches();
        await until("refused", () => h.reflector.stats().errors >= refusals);
        await until("watching again", () => h.server.openWatches("services") === 1);
        assert.equal(h.reflector.stats().lists, lists);
        assert.equal(h.server.requestsFor("services", true).length, watches + refusals + 1);
      } finally {
        await h.done();
      }
    });
  }

  test("410s in a row, with no event in between, wait a backoff", async () => {
    const h = await harnessCountingWaits("services");
    try {
      await h.reflector.waitSynced();
      await until("watch open", () => h.server.openWatches("services") === 1);
      // The watch, then the relist's first two attempts: 410 each time.
      h.server.failNext(2, 410);
      h.server.expireWatches();
      await until("relisted", () => h.reflector.stats().relists === 1);
      assert.equal(h.waits(), 2, "the first 410 relists at once, the next two wait");
    } finally {
      await h.done();
    }
  });

  test("recovers after three 500s, logging one warning and one recovery", async () => {
    const h = await harness("namespaces", {
      setup(s) {
        s.failNext(3);
        s.create("namespaces", namespace("default"));
      },
    });
    try {
      await h.reflector.waitSynced();
      const st = h.reflector.stats();
      assert.equal(st.errors, 3);
      assert.match(st.lastError!, /500/);
      assert.equal(st.connected, true);
      assert.deepEqual(h.sink.keys("namespaces"), ["namespaces:/default"]);
      // listStart only once the first page arrived: failed attempts opened no list.
      assert.equal(h.sink.calls.filter((c) => c.op === "listStart").length, 1);
      const warns = h.lines.filter((l) => l.level === 40);
      assert.equal(warns.length, 1);
      assert.equal(h.lines.filter((l) => l.msg === "API connection restored").length, 1);
    } finally {
      await h.done();
    }
  });

  test("a list that hangs times out and is retried", async () => {
    const h = await harness("endpoints", {
      setup(s) {
        s.hangNext(1);
        s.create("endpoints", endpoints("default", "web", [{ addresses: ["10.244.0.9"] }]));
      },
    });
    try {
      await h.reflector.waitSynced();
      assert.equal(h.reflector.stats().errors, 1);
      assert.equal(h.server.requestsFor("endpoints", false).length, 2);
      assert.deepEqual(h.sink.keys("endpoints"), ["endpoints:default/web"]);
    } finally {
      await h.done();
    }
  });

  for (const beforeHeaders of [false, true]) {
    test(`a silent watch (${beforeHeaders ? "no headers" : "200, then nothing"}) is dropped and resumed`, async () => {
      const h = await harness("services", { server: { bookmarkIntervalMs: 100 } });
      try {
        await h.reflector.waitSynced();
        await until("watch open", () => h.server.openWatches("services") === 1);
        const watches = h.server.requestsFor("services", true).length;
        const restarts = h.reflector.stats().watchRestarts;
        h.server.hangNext(1, { beforeHeaders });
        h.server.dropWatches();
        await until(
          "hung watch requested",
          () => h.server.requestsFor("services", true).length === watches + 1,
        );
        h.server.create("services", service("default", "late"));
        await until("event after resume", () => h.sink.keys("services").includes("services:default/late"));
        const st = h.reflector.stats();
        assert.ok(st.watchRestarts > restarts);
        assert.match(st.lastError ?? "", /silent/);
        assert.equal(st.lists, 1);
      } finally {
        await h.done();
      }
    });
  }

  test("passes the label selector to list and watch", async () => {
    const h = await harness("services", {
      labelSelector: "tier=web",
      setup(s) {
        s.create("services", service("default", "a", { labels: { tier: "web" } }));
        s.create("services", service("default", "b", { labels: { tier: "db" } }));
      },
    });
    try {
      await h.reflector.waitSynced();
      assert.deepEqual(h.sink.keys("services"), ["services:default/a"]);
      await until("watch open", () => h.server.openWatches("services") === 1);
      for (const r of h.server.requestsFor("services")) assert.equal(r.query.labelSelector, "tier=web");
      const a = h.server.get("services", "default", "a")!;
      a.metadata.labels = { tier: "db" };
      h.server.update("services", a);
      await until("left the selection", () => h.sink.keys("services").length === 0);
      assert.equal(h.sink.applied().at(-1), "DELETED services:default/a");
    } finally {
      await h.done();
    }
  });

  test("namespaces restriction: only those namespaces reach the sink", async () => {
    const h = await harness("services", {
      namespaces: ["one"],
      setup(s) {
        s.create("services", service("one", "a"));
        s.create("services", service("two", "b"));
      },
    });
    try {
      await h.reflector.waitSynced();
      assert.deepEqual(h.sink.keys("services"), ["services:one/a"]);
      await until("watch open", () => h.server.openWatches("services") === 1);
      h.server.create("services", service("two", "c"));
      h.server.create("services", service("one", "d"));
      await until("d arrives", () => h.sink.keys("services").includes("services:one/d"));
      assert.deepEqual(h.sink.keys("services"), ["services:one/a", "services:one/d"]);
    } finally {
      await h.done();
    }
  });

  test("stop ends the watch and delivers nothing more", async () => {
    const h = await harness("pods");
    await h.reflector.waitSynced();
    await until("watch open", () => h.server.openWatches("pods") === 1);
    await h.reflector.stop();
    await until("watch closed", () => h.server.openWatches("pods") === 0);
    const n = h.sink.calls.length;
    h.server.create("pods", { metadata: { name: "x", namespace: "default" } });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(h.sink.calls.length, n);
    await h.server.close();
  });
});

describe("apiSource", () => {
  async function run(opts: ApiServerOptions, kinds: Kind[]) {
    const server = await startApiServer({ bookmarkIntervalMs: 100, ...opts });
    server.create("services", service("default", "web"));
    server.create("endpointslices", endpointSlice("default", "web", "web-1", ["10.244.0.5"]));
    server.create("endpoints", endpoints("default", "web", [{ addresses: ["10.244.0.5"] }]));
    const kubeconfig = writeKubeconfig(dir, server.url, { fileName: `kc-${serial++}`, token: opts.token });
    const sink = new RecordingSink(server);
    const { log, lines } = captureLog();
    const source = apiSource({ kubeconfig, kinds, log, tuning: TUNING });
    await source.start(sink);
    await source.waitSynced();
    return { server, sink, source, lines };
  }

  test("falls back to endpoints when endpointslices are not served", async () => {
    const { server, sink, source, lines } = await run({ endpointSlices: false }, [
      "services",
      "endpointslices",
    ]);
    try {
      assert.deepEqual(sink.keys("endpoints"), ["endpoints:default/web"]);
      assert.deepEqual(sink.keys("endpointslices"), []);
      const st = source.stats();
      assert.equal(st.endpointsFallback, true);
      assert.deepEqual(st.kinds.map((k) => k.kind).sort(), ["endpoints", "services"]);
      assert.equal(server.requestsFor("endpointslices").length, 0);
      assert.ok(lines.some((l) => l.level === 40 && /endpointslices/.test(l.msg)));
      assert.match(source.describe(), /^api http:\/\/127\.0\.0\.1:\d+ \(connected\)$/);
    } finally {
      await source.stop();
      await server.close();
    }
  });

  test("uses endpointslices when served, through a token-authenticated kubeconfig", async () => {
    const { server, sink, source } = await run({ token: "s3cret" }, ["services", "endpointslices"]);
    try {
      assert.deepEqual(sink.keys("endpointslices"), ["endpointslices:default/web-1"]);
      assert.deepEqual(sink.keys("endpoints"), []);
      assert.equal(source.stats().endpointsFallback, false);
      assert.equal(source.synced(), true);
    } finally {
      await source.stop();
      await server.close();
    }
    assert.match(source.describe(), /\(stopped\)$/);
  });

  test("keeps retrying discovery until the API answers", async () => {
    const server = await startApiServer();
    server.failNext(2, 503);
    const sink = new RecordingSink(server);
    const { log } = captureLog();
    const source = apiSource({ endpoint: server.url, kinds: ["endpointslices"], log, tuning: TUNING });
    try {
      await source.start(sink);
      assert.equal(source.synced(), false);
      await source.waitSynced();
      assert.equal(server.requests.filter((r) => r.path === "/apis/discovery.k8s.io/v1").length, 3);
    } finally {
      await source.stop();
      await server.close();
    }
  });

  test("describe() names its state: not started, syncing, failing, connected, disconnected, stopped", async () => {
    const server = await startApiServer({ bookmarkIntervalMs: 100 });
    const sink = new RecordingSink(server);
    const source = apiSource({
      endpoint: server.url,
      kinds: ["services"],
      log: captureLog().log,
      tuning: TUNING,
    });
    const state = () => /\((.*)\)$/.exec(source.describe())?.[1];
    try {
      assert.equal(state(), "not started");
      server.failLists(503);
      await source.start(sink);
      assert.equal(state(), "syncing");
      await until("failing", () => state() === "connecting, failing");
      server.failLists(undefined);
      await source.waitSynced();
      await until("connected", () => state() === "connected");
      server.setDown(true);
      await until("disconnected", () => state() === "disconnected, serving last known state");
      server.setDown(false);
    } finally {
      await source.stop();
      await server.close();
    }
    assert.equal(state(), "stopped");
  });
});

describe("client config", () => {
  test("a kubeconfig context picks its cluster; an unknown context is a config error", async () => {
    const server = await startApiServer();
    try {
      const path = writeKubeconfig(dir, "http://127.0.0.1:9", {
        fileName: `kc-${serial++}`,
        extraContexts: [{ name: "other", server: server.url }],
      });
      assert.equal(createClient({ kubeconfig: path, context: "other" }).server, server.url);
      assert.equal(createClient({ kubeconfig: path }).server, "http://127.0.0.1:9");
      assert.throws(
        () => loadKubeConfig({ kubeconfig: path, context: "nope" }),
        (e: unknown) => e instanceof KubeError && e.code === KubeErrorCode.CONFIG,
      );
      assert.throws(
        () => loadKubeConfig({ kubeconfig: join(dir, "missing") }),
        (e: unknown) => e instanceof KubeError && e.code === KubeErrorCode.CONFIG,
      );
      assert.throws(
        () => loadKubeConfig({ endpoint: "ftp://x" }),
        (e: unknown) => e instanceof KubeError && e.code === KubeErrorCode.CONFIG,
      );
    } finally {
      await server.close();
    }
  });

  test("HTTP errors carry status and reason; a refused connection is a transport error", async () => {
    const server = await startApiServer();
    const client = createClient({ endpoint: server.url });
    server.failNext(1, 403);
    await assert.rejects(
      client.list("/api/v1/services", {}, AbortSignal.timeout(2000)),
      (e: unknown) =>
        e instanceof KubeError &&
        e.code === KubeErrorCode.STATUS &&
        e.status === 403 &&
        e.reason === "Forbidden",
    );
    await server.close();
    await assert.rejects(
      client.list("/api/v1/services", {}, AbortSignal.timeout(2000)),
      (e: unknown) => e instanceof KubeError && e.code === KubeErrorCode.TRANSPORT,
    );
  });
});

describe("TLS", { skip: !HAVE_OPENSSL && "openssl not installed" }, () => {
  test("endpoint with tls CERT KEY CACERT, and a kubeconfig with CA and client certificate", async () => {
    const certDir = mkdtempSync(join(dir, "certs-"));
    const c = makeCerts(certDir);
    const server = await startApiServer({
      tls: { key: readFileSync(c.serverKey), cert: readFileSync(c.serverCert), ca: readFileSync(c.ca) },
    });
    try {
      server.create("services", service("default", "web"));
      const viaEndpoint = createClient({
        endpoint: server.url,
        tls: { cert: c.clientCert, key: c.clientKey, ca: c.ca },
      });
      const list = await viaEndpoint.list("/api/v1/services", {}, AbortSignal.timeout(2000));
      assert.deepEqual(
        itemsOf(list).map((i) => i.metadata.name),
        ["web"],
      );
      const kubeconfig = writeKubeconfig(dir, server.url, {
        fileName: `kc-${serial++}`,
        caFile: c.ca,
        certFile: c.clientCert,
        keyFile: c.clientKey,
      });
      const sink = new RecordingSink(server);
      const source = apiSource({ kubeconfig, kinds: ["services"], log: captureLog().log, tuning: TUNING });
      await source.start(sink);
      await source.waitSynced();
      await until("watch open", () => server.openWatches("services") === 1);
      server.create("services", service("default", "db"));
      await until("watched over TLS", () => sink.keys("services").length === 2);
      await source.stop();
      // Without the client certificate the server refuses the handshake; without the CA the client
      // refuses the server.
      const caOnly = writeKubeconfig(dir, server.url, { fileName: `kc-${serial++}`, caFile: c.ca });
      const noCert = createClient({ kubeconfig: caOnly });
      await assert.rejects(
        noCert.list("/api/v1/services", {}, AbortSignal.timeout(2000)),
        (e: unknown) => e instanceof KubeError && e.code === KubeErrorCode.TRANSPORT,
      );
      const noCa = createClient({ endpoint: server.url });
      await assert.rejects(
        noCa.list("/api/v1/services", {}, AbortSignal.timeout(2000)),
        (e: unknown) => e instanceof KubeError && e.code === KubeErrorCode.TRANSPORT,
      );
    } finally {
      await server.close();
    }
  });
});

describe("backoff", () => {
  test("grows by the factor within equal-jitter bounds, caps, and resets after a healthy period", () => {
    let now = 0;
    let r = 0;
    const b = new Backoff({
      initialMs: 100,
      maxMs: 1000,
      resetAfterMs: 5000,
      now: () => now,
      random: () => r,
    });
    r = 0;
    assert.deepEqual(
      [b.next(), b.next(), b.next(), b.next(), b.next(), b.next()],
      [50, 100, 200, 400, 500, 500],
    );
    b.reset();
    r = 1;
    assert.deepEqual([b.next(), b.next()], [100, 200]);
    // A failure long after the last retry starts over.
    now += 200 + 5000;
    assert.equal(b.next(), 100);
    // A failure soon after keeps growing.
    now += 150;
    assert.equal(b.next(), 200);
    assert.throws(() => new Backoff({ initialMs: 0 }), RangeError);
  });

  test("by default no wait is longer than 4 s, however long the API stays away", () => {
    // What bounds the time from the API's return to the next request, and so to fresh answers.
    const b = new Backoff({ random: () => 1, now: () => 0 });
    const waits = Array.from({ length: 40 }, () => b.next());
    assert.deepEqual(waits.slice(0, 6), [250, 500, 1000, 2000, 4000, 4000]);
    assert.equal(Math.max(...waits), 4000);
  });
});
