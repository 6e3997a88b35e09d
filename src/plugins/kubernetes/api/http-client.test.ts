// The HTTP client against the test API server (and, where a test needs to see headers or shape the
// bytes on the wire, a small server of its own): LIST with paging and errors, discovery, WATCH events,
// events split across chunks, a burst applied in slices with backpressure, ERROR 410, inactivity,
// abort, bearer and basic auth, impersonation, client certificates over HTTPS, the token file re-read,
// in-cluster settings end to end, and the client library loaded only for exec users.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { startApiServer } from "../../../../test/k8s/api-server.ts";
import type { TestApiServer } from "../../../../test/k8s/api-server.ts";
import { writeKubeconfig } from "../../../../test/k8s/kubeconfig.ts";
import { service } from "../../../../test/k8s/objects.ts";
import { KubeError, KubeErrorCode } from "./api.ts";
import type { ApiClient, Query } from "./api.ts";
import { createClient } from "./client.ts";
import { HttpClient } from "./http-client.ts";
import { LineSplitter } from "./watch-stream.ts";
import { itemsOf } from "./list-page.ts";
import { ApplyQueue } from "./apply-queue.ts";
import { loadKubeConfig } from "./kubeconfig.ts";
import type { KubeConnection } from "./kubeconfig.ts";
import { HAVE_OPENSSL, makeCerts, type TestCerts } from "../../../../test/k8s/certs.ts";

let dir: string;
let serial = 0;
before(() => {
  dir = mkdtempSync(join(tmpdir(), "clusterdns-http-client-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const SERVICES = "/api/v1/services";
const signal = () => AbortSignal.timeout(5000);

/** A connection to `server` with no TLS settings and these credentials. */
function conn(server: string, auth: KubeConnection["auth"] = {}): KubeConnection {
  return { server, source: "test", tls: { insecure: false }, auth };
}

/** Polls until `cond` holds; fails after 5 s. */
async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for: ${what}`);
}

interface Watching {
  events: { type: string; name?: string; obj: unknown }[];
  /** Every onDone call (there must be one). */
  dones: (KubeError | null)[];
  /** The first onDone. */
  done: Promise<KubeError | null>;
  ctl: AbortController;
}

async function watch(
  client: ApiClient,
  path: string,
  query: Query,
  inactivityMs?: number,
): Promise<Watching> {
  const events: Watching["events"] = [];
  const dones: Watching["dones"] = [];
  let resolve!: (e: KubeError | null) => void;
  const done = new Promise<KubeError | null>((r) => (resolve = r));
  const ctl = await client.watch(
    path,
    query,
    (type, obj) => events.push({ type, obj, name: (obj as { metadata?: { name?: string } }).metadata?.name }),
    (err) => {
      dones.push(err);
      resolve(err);
    },
    inactivityMs,
  );
  return { events, dones, done, ctl };
}

function assertKube(e: unknown, code: KubeErrorCode, status?: number): asserts e is KubeError {
  assert.ok(e instanceof KubeError, `not a KubeError: ${String(e)}`);
  assert.equal(e.code, code, e.message);
  if (status !== undefined) assert.equal(e.status, status);
}

/** A matcher for assert.rejects. */
const kubeErr = (code: KubeErrorCode, status?: number) => (e: unknown) => {
  assertKube(e, code, status);
  return true;
};

/** A server of the test's own: records each request's headers and lets the test answer. */
async function rawServer(
  handle: (req: IncomingMessage, res: ServerResponse) => unknown,
): Promise<{ url: string; headers: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const headers: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    headers.push(req.headers);
    // A handler that fails ends its response; the test sees the cut stream.
    Promise.resolve(handle(req, res)).catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    headers,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const EMPTY_LIST = JSON.stringify({
  kind: "ServiceList",
  apiVersion: "v1",
  metadata: { resourceVersion: "1" },
  items: [],
});

describe("LineSplitter", () => {
  test("gives the same lines whatever the chunk boundaries, multi-byte characters included", () => {
    const text = '{"a":"ü"}\n\n{"b":"日本"}\n{"c":"🙂"}\nrest-ü';
    const bytes = Buffer.from(text);
    const whole: string[] = [];
    const s0 = new LineSplitter();
    s0.push(bytes, (l) => whole.push(l));
    assert.deepEqual(whole, ['{"a":"ü"}', "", '{"b":"日本"}', '{"c":"🙂"}']);
    assert.equal(s0.rest(), "rest-ü");
    // Every two-way split, and one byte at a time.
    for (let cut = 0; cut <= bytes.length; cut++) {
      const lines: string[] = [];
      const s = new LineSplitter();
      s.push(bytes.subarray(0, cut), (l) => lines.push(l));
      s.push(bytes.subarray(cut), (l) => lines.push(l));
      assert.deepEqual(lines, whole, `cut at ${cut}`);
      assert.equal(s.rest(), "rest-ü");
    }
    const lines: string[] = [];
    const s = new LineSplitter();
    for (const b of bytes) s.push(Buffer.from([b]), (l) => lines.push(l));
    assert.deepEqual(lines, whole);
    assert.equal(s.rest(), "rest-ü");
    assert.equal(s.rest(), "");
  });
});

describe("list and discovery", () => {
  let server: TestApiServer;
  let client: HttpClient;
  before(async () => {
    server = await startApiServer();
    for (let i = 0; i < 7; i++) server.create("services", service("default", `s${i}`));
    client = new HttpClient(conn(server.url));
  });
  after(async () => {
    client.close();
    await server.close();
  });

  test("a page, then the rest through continue tokens; the query goes as sent", async () => {
    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await client.list(
        SERVICES,
        { limit: 3, continue: cont, labelSelector: undefined },
        signal(),
      );
      names.push(...itemsOf(page).map((i) => i.metadata.name));
      cont = page.metadata.continue || undefined;
      pages++;
    } while (cont && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(names, ["s0", "s1", "s2", "s3", "s4", "s5", "s6"]);
    const first = server.requestsFor("services", false).at(-3)!;
    assert.deepEqual(first.query, { limit: "3" });
  });

  test("HTTP errors carry status and reason; a non-list answer is a decode error", async () => {
    server.failNext(1, 403);
    await assert.rejects(client.list(SERVICES, {}, signal()), (e) => {
      assertKube(e, KubeErrorCode.STATUS, 403);
      assert.equal(e.reason, "Forbidden");
      return true;
    });
    await assert.rejects(client.list("/api/v1/nothing", {}, signal()), (e) => {
      assertKube(e, KubeErrorCode.STATUS, 404);
      assert.equal(e.reason, "NotFound");
      return true;
    });
    await assert.rejects(client.list("/api", {}, signal()), kubeErr(KubeErrorCode.DECODE));
  });

  test("serves() reads discovery", async () => {
    assert.equal(await client.serves("discovery.k8s.io/v1", "endpointslices", signal()), true);
    assert.equal(await client.serves("v1", "services", signal()), true);
    assert.equal(await client.serves("v1", "widgets", signal()), false);
    const old = await startApiServer({ endpointSlices: false });
    const oldClient = new HttpClient(conn(old.url));
    try {
      assert.equal(await oldClient.serves("discovery.k8s.io/v1", "endpointslices", signal()), false);
    } finally {
      oldClient.close();
      await old.close();
    }
  });

  test("an aborted request and a refused connection are transport errors", async () => {
    server.hangNext(1);
    const ctl = new AbortController();
    const pending = client.list(SERVICES, {}, ctl.signal);
    await until("hung request arrived", () => server.requests.at(-1)?.path === SERVICES);
    ctl.abort();
    await assert.rejects(pending, kubeErr(KubeErrorCode.TRANSPORT));
    server.dropWatches();

    const gone = await startApiServer();
    const url = gone.url;
    await gone.close();
    const refused = new HttpClient(conn(url));
    await assert.rejects(refused.list(SERVICES, {}, signal()), (e) => {
      assertKube(e, KubeErrorCode.TRANSPORT);
      assert.match(e.message, /^GET \/api\/v1\/services: .*ECONNREFUSED/);
      return true;
    });
  });

  test("a 200 answer that is not JSON is a decode error; a non-JSON error body keeps its status", async () => {
    const raw = await rawServer((req, res) => {
      res.writeHead(req.url === "/bad" ? 200 : 503, { "Content-Type": "text/plain" });
      res.end("<html>oops</html>");
    });
    const c = new HttpClient(conn(raw.url));
    try {
      await assert.rejects(c.list("/bad", {}, signal()), kubeErr(KubeErrorCode.DECODE));
      await assert.rejects(c.list("/down", {}, signal()), kubeErr(KubeErrorCode.STATUS, 503));
    } finally {
      c.close();
      await raw.close();
    }
  });
});

describe("watch", () => {
  let server: TestApiServer;
  let client: HttpClient;
  before(async () => {
    server = await startApiServer({ bookmarkIntervalMs: 0 });
    client = new HttpClient(conn(server.url));
  });
  after(async () => {
    client.close();
    await server.close();
  });

  test("events in order, then the server's end is onDone(null), once", async () => {
    server.create("services", service("default", "before"));
    const rv = server.resourceVersion();
    server.create("services", service("default", "a"));
    const w = await watch(client, SERVICES, { resourceVersion: rv, timeoutSeconds: 1 });
    await until("watch open", () => server.openWatches("services") === 1);
    server.update("services", service("default", "a", { clusterIP: "10.96.0.99" }));
    server.remove("services", { name: "a", namespace: "default" });
    assert.equal(await w.done, null);
    assert.deepEqual(
      w.events.map((e) => `${e.type} ${e.name}`),
      ["ADDED a", "MODIFIED a", "DELETED a"],
    );
    assert.equal(server.requestsFor("services", true).at(-1)?.query.watch, "true");
    await new Promise((r) => setImmediate(r));
    assert.equal(w.dones.length, 1);
  });

  test("an ERROR event goes to onEvent, then ends the watch with its Status (410 Gone)", async () => {
    server.create("services", service("default", "old"));
    const rv = server.resourceVersion();
    server.create("services", service("default", "new"));
    server.compact();
    const w = await watch(client, SERVICES, { resourceVersion: rv });
    const err = await w.done;
    assertKube(err, KubeErrorCode.STATUS, 410);
    assert.equal(err.gone, true);
    assert.equal(err.reason, "Expired");
    assert.deepEqual(
      w.events.map((e) => e.type),
      ["ERROR"],
    );
    assert.equal((w.events[0].obj as { code?: number }).code, 410);
    assert.equal(w.dones.length, 1);
  });

  test("an HTTP error before the stream ends it with the Status's code and reason", async () => {
    const strict = await startApiServer({ expiredWatch: "http" });
    const c = new HttpClient(conn(strict.url));
    try {
      strict.create("services", service("default", "x"));
      const rv = strict.resourceVersion();
      strict.create("services", service("default", "y"));
      strict.compact();
      const w = await watch(c, SERVICES, { resourceVersion: rv });
      const err = await w.done;
      assertKube(err, KubeErrorCode.STATUS, 410);
      assert.equal(err.reason, "Expired");
      assert.deepEqual(w.events, []);
    } finally {
      c.close();
      await strict.close();
    }
  });

  test("no byte for inactivityMs ends it, also before the headers", async () => {
    for (const beforeHeaders of [false, true]) {
      server.hangNext(1, { beforeHeaders });
      const w = await watch(client, SERVICES, {}, 200);
      const err = await w.done;
      assertKube(err, KubeErrorCode.TRANSPORT);
      assert.match(err.message, /no data for 200 ms/);
      assert.equal(w.dones.length, 1);
    }
    server.dropWatches();
  });

  test("aborting ends it: onDone once, and the server sees the stream closed", async () => {
    const w = await watch(client, SERVICES, {});
    await until("watch open", () => server.openWatches("services") === 1);
    w.ctl.abort();
    assertKube(await w.done, KubeErrorCode.TRANSPORT);
    await until("watch closed on the server", () => server.openWatches("services") === 0);
    server.create("services", service("default", "after-abort"));
    w.ctl.abort();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(w.dones.length, 1);
    assert.ok(!w.events.some((e) => e.name === "after-abort"));
  });

  test("a dropped connection is a transport error", async () => {
    const w = await watch(client, SERVICES, {});
    await until("watch open", () => server.openWatches("services") === 1);
    server.dropWatches();
    assertKube(await w.done, KubeErrorCode.TRANSPORT);
    assert.equal(w.dones.length, 1);
  });

  test("events split across chunks anywhere, an unterminated last line, then a line that is not JSON", async () => {
    const event = (name: string) =>
      JSON.stringify({ type: "ADDED", object: { metadata: { name, annotations: { note: "ü日本🙂" } } } }) +
      "\n";
    const wire = Buffer.from(event("one") + event("two") + event("three").trimEnd());
    const pause = () => new Promise((r) => setTimeout(r, 15));
    let step = 0;
    const raw = await rawServer(async (req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      if (step++ === 0) {
        // Cut inside the first multi-byte character and between the two events' bytes.
        const cuts = [wire.indexOf("ü") + 1, wire.indexOf("\n") + 3, wire.lastIndexOf("🙂") + 2, wire.length];
        let at = 0;
        for (const cut of cuts) {
          res.write(wire.subarray(at, cut));
          at = cut;
          await pause();
        }
        res.end();
      } else {
        res.write(event("fine"));
        await pause();
        res.end("not json\n" + event("never"));
      }
    });
    const c = new HttpClient(conn(raw.url));
    try {
      const w = await watch(c, SERVICES, {});
      assert.equal(await w.done, null);
      assert.deepEqual(
        w.events.map((e) => e.name),
        ["one", "two", "three"],
      );
      const notes = w.events.map((e) => (e.obj as { metadata: { annotations: { note: string } } }).metadata);
      assert.ok(notes.every((m) => m.annotations.note === "ü日本🙂"));

      const bad = await watch(c, SERVICES, {});
      assertKube(await bad.done, KubeErrorCode.DECODE);
      assert.deepEqual(
        bad.events.map((e) => e.name),
        ["fine"],
      );
    } finally {
      c.close();
      await raw.close();
    }
  });

  test("a burst is applied in slices with the event loop turning between them; the socket is not read past the queue's bound; every event arrives, in order", async () => {
    const count = 3000;
    const pad = "x".repeat(1000);
    let written = 0;
    let blocked = 0;
    const raw = await rawServer(async (req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      // Every event at once, as a storm comes; write() says when the client stopped reading.
      for (; written < count; written++) {
        const line = JSON.stringify({ type: "MODIFIED", object: { metadata: { name: `s${written}` }, pad } });
        if (!res.write(line + "\n")) blocked++;
      }
      await new Promise((r) => res.once("drain", r));
      res.end();
    });
    const queue = new ApplyQueue({ sliceMs: 1, maxBytes: 16 * 1024 });
    const c = new HttpClient(conn(raw.url), { queue });
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    const turnsAt: number[] = [];
    let mostQueued = 0;
    try {
      const events: string[] = [];
      let resolve!: (e: KubeError | null) => void;
      const done = new Promise<KubeError | null>((r) => (resolve = r));
      await c.watch(
        SERVICES,
        {},
        (_type, obj) => {
          events.push((obj as { metadata: { name: string } }).metadata.name);
          turnsAt.push(turns);
          mostQueued = Math.max(mostQueued, queue.stats().bytes);
          // An event that costs a little, as applying one does.
          const until = performance.now() + 0.05;
          while (performance.now() < until);
        },
        resolve,
      );
      assert.equal(await done, null);
      assert.deepEqual(
        events,
        Array.from({ length: count }, (_, i) => `s${i}`),
      );
      // ~20 events a slice at 1 ms each; without slices, a read of the socket (up to 2 MB) at once.
      let run = 0;
      let longest = 0;
      for (let i = 1; i < turnsAt.length; i++) {
        run = turnsAt[i] === turnsAt[i - 1] ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      assert.ok(longest < 200, `at most ${longest + 1} events without a timer between them`);
      assert.ok(blocked > 0, "the server saw the client stop reading");
      assert.ok(queue.stats().fulls > 0, JSON.stringify({ mostQueued, ...queue.stats() }));
      // The bound, plus what one read of the socket may bring in past it.
      assert.ok(mostQueued <= 16 * 1024 + 65_536, `at most ${mostQueued} bytes queued`);
    } finally {
      clearInterval(tick);
      c.close();
      await raw.close();
    }
  });

  test("an event without a type, or one its handler throws on, ends the watch with a decode error", async () => {
    const raw = await rawServer((req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      const typed = new URL(req.url!, "http://x").searchParams.get("resourceVersion") === "typed";
      res.write(JSON.stringify(typed ? { type: "ADDED", object: {} } : { object: {} }) + "\n");
    });
    const c = new HttpClient(conn(raw.url));
    try {
      const untyped = await watch(c, SERVICES, {});
      const err = await untyped.done;
      assertKube(err, KubeErrorCode.DECODE);
      assert.match(err.message, /event has no type/);
      assert.deepEqual(untyped.events, []);

      const dones: (KubeError | null)[] = [];
      let ended!: () => void;
      const done = new Promise<void>((r) => (ended = r));
      const onEvent = () => {
        throw new Error("cannot take it");
      };
      await c.watch(SERVICES, { resourceVersion: "typed" }, onEvent, (e) => {
        dones.push(e);
        ended();
      });
      await done;
      assert.equal(dones.length, 1);
      assertKube(dones[0], KubeErrorCode.DECODE);
      assert.match(dones[0].message, /event handler failed: cannot take it/);
    } finally {
      c.close();
      await raw.close();
    }
  });
});

describe("credentials", () => {
  test("bearer token: accepted with it, 401 Unauthorized without", async () => {
    const server = await startApiServer({ token: "s3cret" });
    server.create("services", service("default", "web"));
    const good = new HttpClient(conn(server.url, { token: "s3cret" }));
    const bad = new HttpClient(conn(server.url, { token: "wrong" }));
    try {
      const l = await good.list(SERVICES, {}, signal());
      assert.deepEqual(
        itemsOf(l).map((i) => i.metadata.name),
        ["web"],
      );
      const w = await watch(good, SERVICES, {});
      await until("watched with the token", () => w.events.length === 1);
      w.ctl.abort();
      await assert.rejects(bad.list(SERVICES, {}, signal()), (e) => {
        assertKube(e, KubeErrorCode.STATUS, 401);
        assert.equal(e.reason, "Unauthorized");
        return true;
      });
    } finally {
      good.close();
      bad.close();
      await server.close();
    }
  });

  test("basic auth and impersonation headers, from a kubeconfig", async () => {
    const raw = await rawServer((_req, res) => res.end(EMPTY_LIST));
    const path = join(dir, `kc-${serial++}`);
    writeFileSync(
      path,
      stringify({
        clusters: [{ name: "c", cluster: { server: raw.url } }],
        users: [
          { name: "u", user: { username: "admin", password: "p:w", as: "jane", "as-groups": ["a", "b"] } },
        ],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    const c = createClient({ kubeconfig: path });
    try {
      await c.list(SERVICES, {}, signal());
      const h = raw.headers[0];
      assert.equal(h.authorization, `Basic ${Buffer.from("admin:p:w").toString("base64")}`);
      assert.equal(h["impersonate-user"], "jane");
      assert.equal(h["impersonate-group"], "a, b");
      assert.equal(h.accept, "application/json");
    } finally {
      c.close();
      await raw.close();
    }
  });

  test("a token file is read again at most once a minute; the last good token stays", async () => {
    const raw = await rawServer((_req, res) => res.end(EMPTY_LIST));
    const file = join(dir, `token-${serial++}`);
    writeFileSync(file, "one\n");
    let now = 1_000_000;
    const c = new HttpClient(conn(raw.url, { token: "one", tokenFile: file }), { now: () => now });
    const sent = async () => {
      await c.list(SERVICES, {}, signal());
      return raw.headers.at(-1)?.authorization;
    };
    try {
      assert.equal(await sent(), "Bearer one");
      writeFileSync(file, "two\n");
      now += 59_000;
      assert.equal(await sent(), "Bearer one");
      now += 1_000;
      assert.equal(await sent(), "Bearer two");
      rmSync(file);
      now += 60_000;
      assert.equal(await sent(), "Bearer two");
      writeFileSync(file, "three");
      now += 60_000;
      assert.equal(await sent(), "Bearer three");
    } finally {
      c.close();
      await raw.close();
    }
  });
});

describe("TLS", { skip: !HAVE_OPENSSL && "openssl not installed" }, () => {
  let certs: TestCerts;
  before(() => {
    certs = makeCerts(mkdtempSync(join(dir, "certs-")));
  });

  test("client certificates: list and watch with them; refused without them or without the CA", async () => {
    const c = certs;
    const server = await startApiServer({
      tls: { key: readFileSync(c.serverKey), cert: readFileSync(c.serverCert), ca: readFileSync(c.ca) },
    });
    const kubeconfig = writeKubeconfig(dir, server.url, {
      fileName: `kc-${serial++}`,
      caFile: c.ca,
      certFile: c.clientCert,
      keyFile: c.clientKey,
    });
    const client = createClient({ kubeconfig });
    const noCert = createClient({
      kubeconfig: writeKubeconfig(dir, server.url, { fileName: `kc-${serial++}`, caFile: c.ca }),
    });
    const noCa = createClient({ endpoint: server.url });
    try {
      server.create("services", service("default", "web"));
      const l = await client.list(SERVICES, {}, signal());
      assert.deepEqual(
        itemsOf(l).map((i) => i.metadata.name),
        ["web"],
      );
      const w = await watch(client, SERVICES, { resourceVersion: l.metadata.resourceVersion });
      await until("watch open", () => server.openWatches("services") === 1);
      server.create("services", service("default", "db"));
      await until("event over TLS", () => w.events.length === 1);
      w.ctl.abort();
      await assert.rejects(noCert.list(SERVICES, {}, signal()), kubeErr(KubeErrorCode.TRANSPORT));
      await assert.rejects(noCa.list(SERVICES, {}, signal()), kubeErr(KubeErrorCode.TRANSPORT));
    } finally {
      for (const x of [client, noCert, noCa]) x.close();
      await server.close();
    }
  });

  test("tls-server-name and insecure-skip-tls-verify change what the server's certificate is checked against", async () => {
    const c = certs;
    const server = await startApiServer({
      tls: { key: readFileSync(c.serverKey), cert: readFileSync(c.serverCert) },
    });
    const base = loadKubeConfig({ endpoint: server.url });
    const ca = readFileSync(c.ca);
    const clients = {
      named: new HttpClient({ ...base, tls: { ca, insecure: false, serverName: "api.test" } }),
      misnamed: new HttpClient({ ...base, tls: { ca, insecure: false, serverName: "other.test" } }),
      insecure: new HttpClient({ ...base, tls: { insecure: true } }),
    };
    try {
      assert.equal((await clients.named.list(SERVICES, {}, signal())).size, 0);
      assert.equal((await clients.insecure.list(SERVICES, {}, signal())).size, 0);
      await assert.rejects(clients.misnamed.list(SERVICES, {}, signal()), (e) => {
        assertKube(e, KubeErrorCode.TRANSPORT);
        assert.match(e.message, /other\.test/);
        return true;
      });
    } finally {
      for (const x of Object.values(clients)) x.close();
      await server.close();
    }
  });

  test("in-cluster settings reach an HTTPS API with the service account token and CA", async () => {
    const c = certs;
    const server = await startApiServer({
      token: "sa-token",
      tls: { key: readFileSync(c.serverKey), cert: readFileSync(c.serverCert) },
    });
    const sa = mkdtempSync(join(dir, "sa-"));
    writeFileSync(join(sa, "token"), "sa-token\n");
    writeFileSync(join(sa, "ca.crt"), readFileSync(c.ca));
    const { port } = new URL(server.url);
    const settings = loadKubeConfig(
      {},
      { env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: port }, serviceAccountDir: sa },
    );
    const client = new HttpClient(settings);
    try {
      server.create("services", service("kube-system", "kube-dns"));
      const l = await client.list(SERVICES, {}, signal());
      assert.deepEqual(
        itemsOf(l).map((i) => i.metadata.name),
        ["kube-dns"],
      );
    } finally {
      client.close();
      await server.close();
    }
  });
});

describe("exec users and the client library", () => {
  // The library is big: on a busy machine loading it took longer than a request's 5 s. Loaded here
  // once, so the requests below time the requests.
  before(async () => {
    await import("@kubernetes/client-node");
  });

  /** A kubeconfig whose user gets its token from a program printing an ExecCredential. */
  function execKubeconfig(server: string, token: string): string {
    const script = join(dir, `exec-${serial++}.mjs`);
    const credential = {
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token },
    };
    writeFileSync(script, `process.stdout.write(${JSON.stringify(JSON.stringify(credential))});\n`);
    const path = join(dir, `kc-${serial++}`);
    writeFileSync(
      path,
      stringify({
        clusters: [{ name: "c", cluster: { server } }],
        users: [
          {
            name: "u",
            user: {
              exec: {
                apiVersion: "client.authentication.k8s.io/v1",
                command: process.execPath,
                args: [script],
                interactiveMode: "Never",
              },
            },
          },
        ],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    return path;
  }

  test("an exec user's token comes from the program, through the lazily loaded library", async () => {
    const server = await startApiServer({ token: "from-exec" });
    server.create("services", service("default", "web"));
    const client = createClient({ kubeconfig: execKubeconfig(server.url, "from-exec") });
    try {
      assert.equal((await client.list(SERVICES, {}, signal())).size, 1);
      const w = await watch(client, SERVICES, {});
      await until("watched with the exec token", () => w.events.length === 1);
      w.ctl.abort();
    } finally {
      client.close();
      await server.close();
    }
  });

  test("the library is loaded for exec users only", async () => {
    const server = await startApiServer({ token: "t" });
    const probe = `
      import { registerHooks } from "node:module";
      let loaded = false;
      registerHooks({
        resolve(spec, ctx, next) {
          if (spec.startsWith("@kubernetes/client-node")) loaded = true;
          return next(spec, ctx);
        },
      });
      const { createClient } = await import(${JSON.stringify(new URL("./client.ts", import.meta.url).href)});
      const client = createClient({ kubeconfig: process.env.KC });
      const list = await client.list("/api/v1/services", {}, AbortSignal.timeout(30_000));
      client.close();
      console.log(JSON.stringify({ loaded, items: list.size }));`;
    const run = (kubeconfig: string) => {
      // Asynchronous, so this process's test API server can answer the child.
      return new Promise<{ loaded: boolean; items: number }>((resolve, reject) => {
        execFile(
          process.execPath,
          ["--input-type=module", "-e", probe],
          { env: { ...process.env, KC: kubeconfig }, timeout: 45_000 },
          (err, stdout, stderr) =>
            err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
        );
      });
    };
    try {
      const plain = writeKubeconfig(dir, server.url, { fileName: `kc-${serial++}`, token: "t" });
      assert.deepEqual(await run(plain), { loaded: false, items: 0 });
      assert.deepEqual(await run(execKubeconfig(server.url, "t")), { loaded: true, items: 0 });
    } finally {
      await server.close();
    }
  });
});
