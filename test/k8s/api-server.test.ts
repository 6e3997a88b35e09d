// The test API server speaks kube-apiserver's protocol: checked here with plain fetch, so the
// reflector's tests stand on a server whose behaviour is pinned down on its own.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { startApiServer } from "./api-server.ts";
import type { TestApiServer } from "./api-server.ts";
import { endpointSlice, endpoints, namespace, pod, service, serviceImport } from "./objects.ts";

interface Event {
  type: string;
  object: {
    kind?: string;
    apiVersion?: string;
    metadata: { name?: string; resourceVersion?: string; labels?: Record<string, string> };
    code?: number;
    reason?: string;
  };
}

async function getJson(s: TestApiServer, path: string, init?: RequestInit) {
  const res = await fetch(s.url + path, { signal: AbortSignal.timeout(5000), ...init });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { items?: Item[] } };
}

interface Item {
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion: string;
    uid: string;
    creationTimestamp: string;
  };
}

/** Reads watch events until `count` arrived or the stream ended; bounded by a 5 s abort. */
async function readEvents(s: TestApiServer, path: string, count: number, until?: (e: Event) => boolean) {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 5000);
  const res = await fetch(s.url + path, { signal: ctl.signal });
  const events: Event[] = [];
  let ended = false;
  if (res.status === 200) {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    try {
      while (events.length < count) {
        const { value, done } = await reader.read();
        if (done) {
          ended = true;
          break;
        }
        buf += value;
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0 && events.length < count) {
          const e = JSON.parse(buf.slice(0, nl)) as Event;
          buf = buf.slice(nl + 1);
          if (!until || until(e)) events.push(e);
        }
      }
    } finally {
      clearTimeout(timer);
      ctl.abort();
    }
  } else clearTimeout(timer);
  return { status: res.status, headers: res.headers, events, ended };
}

describe("test API server", () => {
  let s: TestApiServer;
  before(async () => {
    s = await startApiServer({ bookmarkIntervalMs: 50 });
  });
  after(() => s.close());

  test("discovery documents list the resources served", async () => {
    const api = await getJson(s, "/api");
    assert.equal(api.body.kind, "APIVersions");
    assert.deepEqual(api.body.versions, ["v1"]);
    const v1 = await getJson(s, "/api/v1");
    assert.equal(v1.body.kind, "APIResourceList");
    const names = (v1.body.resources as { name: string; namespaced: boolean }[]).map((r) => r.name).sort();
    assert.deepEqual(names, ["endpoints", "namespaces", "pods", "services"]);
    const groups = await getJson(s, "/apis");
    assert.equal(groups.body.kind, "APIGroupList");
    assert.deepEqual(
      (groups.body.groups as { name: string }[]).map((g) => g.name),
      ["discovery.k8s.io", "multicluster.x-k8s.io"],
    );
    const disc = await getJson(s, "/apis/discovery.k8s.io/v1");
    assert.equal(disc.body.groupVersion, "discovery.k8s.io/v1");
    assert.deepEqual(
      (disc.body.resources as { name: string; kind: string; namespaced: boolean }[]).map((r) => [
        r.name,
        r.kind,
        r.namespaced,
      ]),
      [["endpointslices", "EndpointSlice", true]],
    );
    const mcs = await getJson(s, "/apis/multicluster.x-k8s.io/v1alpha1");
    assert.deepEqual(
      (mcs.body.resources as { name: string; kind: string }[]).map((r) => [r.name, r.kind]),
      [["serviceimports", "ServiceImport"]],
    );
    assert.equal((await getJson(s, "/apis/multicluster.x-k8s.io")).body.kind, "APIGroup");
  });

  test("created objects are stamped and listed without kind, as items of a typed list", async () => {
    const before = Number(s.resourceVersion());
    const created = s.create(
      "services",
      service("ns1", "web", { clusterIP: "10.96.1.1", ports: [{ name: "http", port: 80 }] }),
    );
    assert.equal(created.metadata.resourceVersion, String(before + 1));
    s.create("services", service("ns2", "db", { headless: true }));
    s.create("namespaces", namespace("ns1"));
    const all = await getJson(s, "/api/v1/services");
    assert.equal(all.status, 200);
    assert.equal(all.body.kind, "ServiceList");
    assert.equal(all.body.apiVersion, "v1");
    assert.equal((all.body.metadata as { resourceVersion: string }).resourceVersion, s.resourceVersion());
    const items = all.body.items!;
    assert.deepEqual(
      items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`),
      ["ns1/web", "ns2/db"],
    );
    for (const i of items) {
      assert.equal(i.kind, undefined);
      assert.match(i.metadata.uid, /^[0-9a-f-]{36}$/);
      assert.match(i.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    const web = items[0] as unknown as { spec: Record<string, unknown> };
    assert.deepEqual(web.spec.clusterIPs, ["10.96.1.1"]);
    assert.deepEqual(web.spec.ipFamilies, ["IPv4"]);
    assert.equal(web.spec.ipFamilyPolicy, "SingleStack");
    assert.deepEqual(web.spec.ports, [{ port: 80, name: "http", protocol: "TCP", targetPort: 80 }]);
    assert.equal(web.spec.sessionAffinity, "None");

    const scoped = await getJson(s, "/api/v1/namespaces/ns2/services");
    assert.deepEqual(
      scoped.body.items!.map((i) => i.metadata.name),
      ["db"],
    );
    const one = await getJson(s, "/api/v1/namespaces/ns1/services/web");
    assert.equal(one.body.kind, "Service");
    const ns = await getJson(s, "/api/v1/namespaces/ns1");
    assert.equal(ns.body.kind, "Namespace");
    const missing = await getJson(s, "/api/v1/namespaces/ns1/services/nope");
    assert.equal(missing.status, 404);
    assert.equal(missing.body.kind, "Status");
    assert.equal(missing.body.reason, "NotFound");
    const wrongScope = await getJson(s, "/api/v1/namespaces/ns1/namespaces");
    assert.equal(wrongScope.status, 404);
    for (const n of ["web", "db"]) s.remove("services", { name: n, namespace: n === "web" ? "ns1" : "ns2" });
    s.remove("namespaces", { name: "ns1" });
  });

  test("limit and continue page through a consistent snapshot", async () => {
    for (let i = 0; i < 7; i++) s.create("pods", pod("paging", `p${i}`, `10.244.0.${i + 1}`));
    const names: string[] = [];
    const first = await getJson(s, "/api/v1/namespaces/paging/pods?limit=3");
    const meta1 = first.body.metadata as { resourceVersion: string; continue?: string };
    assert.equal(first.body.items!.length, 3);
    assert.ok(meta1.continue);
    names.push(...first.body.items!.map((i) => i.metadata.name));
    // Changes after the first page do not show in the rest of this list.
    s.create("pods", pod("paging", "p9", "10.244.0.99"));
    s.remove("pods", { name: "p5", namespace: "paging" });
    let cont: string | undefined = meta1.continue;
    let pages = 1;
    while (cont && pages < 10) {
      const page = await getJson(
        s,
        `/api/v1/namespaces/paging/pods?limit=3&continue=${encodeURIComponent(cont)}`,
      );
      assert.equal(page.status, 200);
      const meta = page.body.metadata as { resourceVersion: string; continue?: string };
      assert.equal(meta.resourceVersion, meta1.resourceVersion);
      names.push(...page.body.items!.map((i) => i.metadata.name));
      cont = meta.continue;
      pages++;
    }
    assert.equal(pages, 3);
    assert.deepEqual(names, ["p0", "p1", "p2", "p3", "p4", "p5", "p6"]);
    const fresh = await getJson(s, "/api/v1/namespaces/paging/pods");
    assert.deepEqual(
      fresh.body.items!.map((i) => i.metadata.name),
      ["p0", "p1", "p2", "p3", "p4", "p6", "p9"],
    );
  });

  test("a continue token from before a compaction is 410 Expired", async () => {
    const first = await getJson(s, "/api/v1/namespaces/paging/pods?limit=2");
    const cont = (first.body.metadata as { continue: string }).continue;
    // Compaction drops the revisions before the newest; the token's must be older than that.
    s.create("pods", pod("paging", "p10", "10.244.0.10"));
    s.compact();
    const res = await getJson(
      s,
      `/api/v1/namespaces/paging/pods?limit=2&continue=${encodeURIComponent(cont)}`,
    );
    assert.equal(res.status, 410);
    assert.equal(res.body.kind, "Status");
    assert.equal(res.body.reason, "Expired");
    assert.equal(res.body.code, 410);
    const bad = await getJson(s, "/api/v1/pods?continue=garbage");
    assert.equal(bad.status, 400);
  });

  test("label and field selectors filter lists", async () => {
    s.create("services", service("sel", "a", { labels: { tier: "web", env: "prod" } }));
    s.create("services", service("sel", "b", { labels: { tier: "db" } }));
    s.create("services", service("sel", "c"));
    const names = async (q: string) => {
      const r = await getJson(s, `/api/v1/namespaces/sel/services?${q}`);
      assert.equal(r.status, 200, q);
      return r.body.items!.map((i) => i.metadata.name);
    };
    assert.deepEqual(await names("labelSelector=tier%3Dweb"), ["a"]);
    assert.deepEqual(await names("labelSelector=tier%3D%3Dweb"), ["a"]);
    assert.deepEqual(await names("labelSelector=tier!%3Dweb"), ["b", "c"]);
    assert.deepEqual(await names("labelSelector=tier"), ["a", "b"]);
    assert.deepEqual(await names("labelSelector=!tier"), ["c"]);
    assert.deepEqual(await names("labelSelector=tier,!env"), ["b"]);
    assert.deepEqual(await names("fieldSelector=metadata.name%3Db"), ["b"]);
    assert.deepEqual(await names("fieldSelector=metadata.name!%3Db"), ["a", "c"]);
    assert.deepEqual(await names("labelSelector=tier%20in%20(web%2C%20db)%2C!env"), ["b"]);
    assert.deepEqual(await names("labelSelector=tier%20notin%20(web)"), ["b", "c"]);
    assert.equal((await getJson(s, "/api/v1/services?labelSelector=tier%20in%20(a")).status, 400);
    assert.equal((await getJson(s, "/api/v1/services?fieldSelector=spec.clusterIP%3D1")).status, 400);
  });

  test("a watch replays the events after its resourceVersion, typed, in order", async () => {
    const from = s.resourceVersion();
    const a = s.create(
      "endpointslices",
      endpointSlice("w", "web", "web-1", ["10.244.1.1"], { ports: [{ name: "http", port: 8080 }] }),
    );
    a.endpoints![0].conditions!.ready = false;
    s.update("endpointslices", a);
    s.remove("endpointslices", a);
    const r = await readEvents(
      s,
      `/apis/discovery.k8s.io/v1/endpointslices?watch=1&resourceVersion=${from}`,
      3,
    );
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.events.map((e) => e.type),
      ["ADDED", "MODIFIED", "DELETED"],
    );
    for (const e of r.events) {
      assert.equal(e.object.kind, "EndpointSlice");
      assert.equal(e.object.apiVersion, "discovery.k8s.io/v1");
    }
    const rvs = r.events.map((e) => Number(e.object.metadata.resourceVersion));
    assert.deepEqual(rvs, [Number(from) + 1, Number(from) + 2, Number(from) + 3]);
    assert.equal(s.resourceVersion(), String(Number(from) + 3));
  });

  test("a watch without resourceVersion starts with the current state as ADDED", async () => {
    const r = await readEvents(s, "/api/v1/namespaces/sel/services?watch=true", 3);
    assert.deepEqual(
      r.events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ["ADDED a", "ADDED b", "ADDED c"],
    );
  });

  test("a watch with a label selector sees an object leave and enter the selection", async () => {
    const from = s.resourceVersion();
    const b = s.get("services", "sel", "b")!;
    b.metadata.labels = { tier: "web" };
    s.update("services", b);
    b.metadata.labels = { tier: "db" };
    s.update("services", b);
    s.create("services", service("sel", "d", { labels: { tier: "cache" } }));
    s.remove("services", { name: "a", namespace: "sel" });
    const r = await readEvents(
      s,
      `/api/v1/services?watch=1&labelSelector=tier%3Dweb&resourceVersion=${from}`,
      3,
    );
    assert.deepEqual(
      r.events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ["ADDED b", "DELETED b", "DELETED a"],
    );
  });

  test("bookmarks carry only the resourceVersion; timeoutSeconds ends the stream", async () => {
    const r = await readEvents(
      s,
      `/api/v1/endpoints?watch=1&allowWatchBookmarks=true&resourceVersion=${s.resourceVersion()}`,
      2,
    );
    assert.deepEqual(
      r.events.map((e) => e.type),
      ["BOOKMARK", "BOOKMARK"],
    );
    assert.deepEqual(r.events[0].object, {
      kind: "Endpoints",
      apiVersion: "v1",
      metadata: { resourceVersion: s.resourceVersion() },
    });
    const ended = await readEvents(
      s,
      `/api/v1/endpoints?watch=1&timeoutSeconds=1&resourceVersion=${s.resourceVersion()}`,
      1,
    );
    assert.equal(ended.ended, true);
    assert.deepEqual(ended.events, []);
  });

  test("a watch from before a compaction gets an ERROR event with a 410 Status", async () => {
    const old = s.resourceVersion();
    s.create("endpoints", endpoints("x", "web", [{ addresses: ["10.244.2.1"], ports: [{ port: 80 }] }]));
    s.compact();
    const r = await readEvents(s, `/api/v1/endpoints?watch=1&resourceVersion=${old}`, 1);
    assert.equal(r.status, 200);
    assert.equal(r.events[0].type, "ERROR");
    assert.equal(r.events[0].object.kind, "Status");
    assert.equal(r.events[0].object.code, 410);
    assert.equal(r.events[0].object.reason, "Expired");
    // Watching from the compaction point itself loses nothing.
    const now = await readEvents(
      s,
      `/api/v1/endpoints?watch=1&allowWatchBookmarks=true&resourceVersion=${s.resourceVersion()}`,
      1,
    );
    assert.equal(now.events[0].type, "BOOKMARK");
  });

  test("failNext answers errors with a Status; the request log records every request", async () => {
    const n = s.requests.length;
    s.failNext(2, 503);
    const a = await getJson(s, "/api/v1/pods?limit=5");
    const b = await getJson(s, "/api");
    const c = await getJson(s, "/api/v1/pods?limit=5");
    assert.equal(a.status, 503);
    assert.equal(a.body.reason, "ServiceUnavailable");
    assert.equal(b.status, 503);
    assert.equal(c.status, 200);
    assert.deepEqual(
      s.requests.slice(n).map((r) => [r.path, r.query.limit]),
      [
        ["/api/v1/pods", "5"],
        ["/api", undefined],
        ["/api/v1/pods", "5"],
      ],
    );
    assert.equal(s.requestsFor("pods", false).length >= 2, true);
  });

  test("hangNext never answers; dropWatches cuts open watches", async () => {
    s.hangNext(1);
    await assert.rejects(fetch(s.url + "/api/v1/pods", { signal: AbortSignal.timeout(200) }), {
      name: "TimeoutError",
    });

    const ctl = new AbortController();
    const res = await fetch(`${s.url}/api/v1/pods?watch=1&resourceVersion=${s.resourceVersion()}`, {
      signal: ctl.signal,
    });
    assert.equal(res.status, 200);
    assert.equal(s.openWatches("pods"), 1);
    const reading = res.body!.getReader().read();
    s.dropWatches();
    await assert.rejects(reading);
    assert.equal(s.openWatches(), 0);
    ctl.abort();
  });
});

describe("test API server options", () => {
  test("without endpointslices: absent from discovery, 404 on its paths", async () => {
    const s = await startApiServer({ endpointSlices: false });
    try {
      const groups = await getJson(s, "/apis");
      assert.deepEqual(
        (groups.body.groups as { name: string }[]).map((g) => g.name),
        ["multicluster.x-k8s.io"],
      );
      assert.equal((await getJson(s, "/apis/discovery.k8s.io/v1")).status, 404);
      const list = await getJson(s, "/apis/discovery.k8s.io/v1/endpointslices");
      assert.equal(list.status, 404);
      assert.equal(list.body.reason, "NotFound");
      assert.equal((await getJson(s, "/api/v1/endpoints")).status, 200);
    } finally {
      await s.close();
    }
  });

  test("ServiceImports: served as an installed CRD, listed in their namespace; absent without the CRDs", async () => {
    const s = await startApiServer();
    try {
      s.create("serviceimports", serviceImport("shop", "cart", { ips: ["10.42.0.5"], ports: [80] }));
      const list = await getJson(s, "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/shop/serviceimports");
      assert.equal(list.status, 200);
      assert.equal(list.body.kind, "ServiceImportList");
      assert.equal(list.body.apiVersion, "multicluster.x-k8s.io/v1alpha1");
      assert.deepEqual(
        list.body.items!.map((o) => (o as unknown as { spec: { ips: string[] } }).spec.ips),
        [["10.42.0.5"]],
      );
    } finally {
      await s.close();
    }
    const without = await startApiServer({ serviceImports: false });
    try {
      assert.equal((await getJson(without, "/apis/multicluster.x-k8s.io/v1alpha1")).status, 404);
      assert.equal(
        (await getJson(without, "/apis/multicluster.x-k8s.io/v1alpha1/serviceimports")).status,
        404,
      );
    } finally {
      await without.close();
    }
  });

  test("expiredWatch http answers a stale watch with HTTP 410; token auth is enforced", async () => {
    const s = await startApiServer({ expiredWatch: "http", token: "secret" });
    try {
      const auth = { headers: { Authorization: "Bearer secret" } };
      assert.equal((await getJson(s, "/api/v1/services")).status, 401);
      s.create("services", service("a", "b"));
      s.compact();
      const r = await getJson(s, "/api/v1/services?watch=true&resourceVersion=1", auth);
      assert.equal(r.status, 410);
      assert.equal(r.body.reason, "Expired");
    } finally {
      await s.close();
    }
  });
});

describe("test API server restored from a backup", () => {
  test("restore rewinds objects and resourceVersion; a LIST or WATCH from beyond it waits, then 504", async () => {
    const s = await startApiServer({ tooLargeWaitMs: 100 });
    try {
      s.create("services", service("r", "kept"));
      const backup = Number(s.resourceVersion());
      for (const n of ["old0", "old1"]) s.create("services", service("r", n));
      const beyond = backup + 2;
      const open = readEvents(s, `/api/v1/services?watch=1&resourceVersion=${beyond}`, 1);
      while (s.openWatches("services") === 0) await new Promise((r) => setTimeout(r, 5));
      s.restore(String(backup));
      await assert.rejects(open, /terminated/, "the restore cuts open watches");
      assert.equal(s.openWatches(), 0);
      s.create("services", service("r", "n1"));
      const list = await getJson(s, "/api/v1/services");
      assert.deepEqual(
        list.body.items?.map((i) => i.metadata.name),
        ["kept", "n1"],
      );
      assert.deepEqual(list.body.metadata, { resourceVersion: String(backup + 1) });

      const started = performance.now();
      const w = await getJson(s, `/api/v1/services?watch=1&resourceVersion=${beyond}`);
      assert.ok(performance.now() - started >= 90, "it waited for the resourceVersion first");
      assert.equal(w.status, 504);
      assert.deepEqual(w.body, {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `Timeout: Too large resource version: ${beyond}, current: ${backup + 1}`,
        reason: "Timeout",
        details: {
          causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
          retryAfterSeconds: 1,
        },
        code: 504,
      });
      const tooNew = `/api/v1/services?resourceVersion=${beyond}&resourceVersionMatch=NotOlderThan`;
      assert.equal((await getJson(s, tooNew)).status, 504);
      // Reached while it waits: answered.
      const waiting = getJson(s, tooNew);
      s.create("services", service("r", "n2"));
      assert.equal((await waiting).status, 200);
      assert.throws(() => s.restore(String(backup + 10)), /not between the last compaction/);
    } finally {
      await s.close();
    }
  });
});

describe("test API server faults", () => {
  let s: TestApiServer;
  before(async () => {
    s = await startApiServer({ bookmarkIntervalMs: 50 });
    for (let i = 0; i < 5; i++) s.create("services", service("f", `s${i}`));
  });
  after(() => s.close());

  test("kill refuses connections until restart; a watch from before the restart is 410", async () => {
    const rv = s.resourceVersion();
    s.create("services", service("f", "late"));
    await s.kill();
    await assert.rejects(fetch(s.url + "/api/v1/services", { signal: AbortSignal.timeout(1000) }), (err) => {
      assert.equal(((err as Error).cause as { code?: string }).code, "ECONNREFUSED");
      return true;
    });
    await s.restart();
    assert.equal((await getJson(s, "/api/v1/services")).body.items?.length, 6);
    const w = await readEvents(s, `/api/v1/services?watch=1&resourceVersion=${rv}`, 1);
    assert.equal(w.events[0].type, "ERROR");
    assert.equal(w.events[0].object.code, 410);
    s.remove("services", { namespace: "f", name: "late" });
  });

  test("expireWatches ends open watches with a 410 ERROR event", async () => {
    const open = s.openWatches("services");
    const reading = readEvents(s, `/api/v1/services?watch=1&resourceVersion=${s.resourceVersion()}`, 1);
    while (s.openWatches("services") === open) await new Promise((r) => setTimeout(r, 5));
    s.expireWatches();
    const w = await reading;
    assert.equal(w.events[0].type, "ERROR");
    assert.equal(w.events[0].object.code, 410);
    assert.equal(w.events[0].object.reason, "Expired");
    assert.equal(s.openWatches(), 0);
  });

  test("failLists fails every list while set, and only lists", async () => {
    s.failLists(500);
    assert.equal((await getJson(s, "/api/v1/services?limit=2")).status, 500);
    assert.equal((await getJson(s, "/api/v1/services")).body.reason, "InternalError");
    assert.equal((await getJson(s, "/api/v1")).status, 200);
    const w = await readEvents(s, `/api/v1/services?watch=1&allowWatchBookmarks=true`, 1);
    assert.equal(w.status, 200);
    assert.equal(w.events[0].type, "ADDED");
    s.failLists(undefined);
    assert.equal((await getJson(s, "/api/v1/services")).status, 200);
  });

  test("silenceWatches: no event and no bookmark reach a silenced watch; new watches get them", async () => {
    const rv = s.resourceVersion();
    const ctl = new AbortController();
    const res = await fetch(
      `${s.url}/api/v1/services?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`,
      {
        signal: ctl.signal,
      },
    );
    const reader = res.body!.getReader();
    s.silenceWatches();
    const obj = s.create("services", service("f", "during-silence"));
    const next = reader.read();
    const silence = await Promise.race([
      next.then(() => "data"),
      new Promise((r) => setTimeout(() => r("silent"), 300)),
    ]);
    assert.equal(silence, "silent", "nothing within six bookmark intervals");
    assert.equal(s.openWatches("services"), 1, "and the stream stays open");
    ctl.abort();
    await next.catch(() => {});
    const fresh = await readEvents(s, `/api/v1/services?watch=1&resourceVersion=${rv}`, 1);
    assert.equal(fresh.events[0].object.metadata.name, obj.metadata.name);
    s.remove("services", obj);
  });

  test("truncateNext cuts a list's body and a watch's first frame", async () => {
    s.truncateNext(2);
    const res = await fetch(s.url + "/api/v1/services");
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.throws(() => JSON.parse(text) as unknown, SyntaxError);
    assert.match(text, /^\{"kind":"ServiceList"/);

    const ctl = new AbortController();
    const w = await fetch(`${s.url}/api/v1/services?watch=1`, { signal: ctl.signal });
    const body = await w.text();
    assert.equal(body.split("\n").length, 2, "one cut line, then the end");
    assert.throws(() => JSON.parse(body.split("\n")[0]) as unknown, SyntaxError);
    assert.match(body, /^\{"type":"ADDED"/);
    assert.equal((await getJson(s, "/api/v1/services")).status, 200, "then whole again");
  });

  test("onList runs before each list is answered: objects deleted between pages", async () => {
    const seen: (string | undefined)[] = [];
    let deleted = false;
    s.onList((q) => {
      seen.push(q.continue);
      if (q.continue && !deleted) {
        deleted = true;
        s.remove("services", { namespace: "f", name: "s0" });
        s.remove("services", { namespace: "f", name: "s4" });
      }
    });
    try {
      const p1 = await getJson(s, "/api/v1/services?limit=2");
      const token = (p1.body.metadata as { continue: string }).continue;
      const p2 = await getJson(s, `/api/v1/services?limit=10&continue=${encodeURIComponent(token)}`);
      // A list is one snapshot: the pages after the delete still hold s4.
      const names = [...p1.body.items!, ...p2.body.items!].map((i) => i.metadata.name);
      assert.deepEqual(names, ["s0", "s1", "s2", "s3", "s4"]);
      assert.deepEqual(
        s.objects("services").map((o) => o.metadata.name),
        ["s1", "s2", "s3"],
      );
      assert.equal(seen.length, 2);
      assert.equal(seen[0], undefined);
    } finally {
      s.onList(undefined);
    }
  });
});
