// reload end to end: a running server's Corefile is edited under a steady query load. A valid edit
// takes effect (by the interval and by SIGUSR1), an invalid one is logged and the old configuration
// keeps answering, a kubernetes source that changed is waited for as long as its sync takes, and no
// query of the load fails throughout.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { once } from "node:events";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { startServer } from "./helpers/server.ts";
import { startLoad } from "./helpers/load.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";
import { startApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { namespace, service } from "./k8s/objects.ts";
import type { Msg } from "../src/dns/message.ts";
import { Type } from "../src/dns/constants.ts";

const corefile = (address: string, extra = "") => `example.org {
    reload 2s 1s
    hosts {
        ${address} a.example.org
        reload 0
    }
    ${extra}
}
`;

const addressOf = (m: Msg | undefined) => {
  const rr = m?.answer[0];
  return rr && "address" in rr.data ? rr.data.address : undefined;
};

/** Waits (bounded) until `cond` holds. */
async function until(what: string, cond: () => boolean, ms = 8000): Promise<void> {
  for (const end = Date.now() + ms; !cond(); await sleep(20)) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
  }
}

test("a Corefile edit takes effect under load; an invalid one is rejected; no query fails", async () => {
  const srv = await startServer(corefile("192.0.2.1"));
  const file = join(srv.dir, "Corefile");
  const load = startLoad(srv.port, "a.example.org.", Type.A, { intervalMs: 3 });
  try {
    await until("the first answer", () => addressOf(load.last()) === "192.0.2.1");

    // By the interval (2s +- 1s): no signal.
    writeFileSync(file, corefile("192.0.2.2"));
    await until("the edit to be served", () => addressOf(load.last()) === "192.0.2.2");
    assert.ok(srv.logs.some((l) => l.msg === "reloaded"));

    // An unknown directive: rejected with file:line, the running configuration stays.
    writeFileSync(file, corefile("192.0.2.3", "no_such_plugin"));
    srv.proc.kill("SIGUSR1");
    await until("the rejection to be logged", () =>
      srv.logs.some(
        (l) => typeof l.msg === "string" && l.msg.startsWith("reload: the new Corefile was rejected"),
      ),
    );
    const rejected = srv.logs.find((l) => typeof l.msg === "string" && l.msg.includes("rejected"))!;
    assert.match(String(rejected.error), /Corefile:7.*no_such_plugin/);
    await sleep(100);
    assert.equal(addressOf(load.last()), "192.0.2.2");

    // Fixed again: SIGUSR1 applies it at once.
    writeFileSync(file, corefile("192.0.2.4"));
    srv.proc.kill("SIGUSR1");
    await until("the fixed edit to be served", () => addressOf(load.last()) === "192.0.2.4");
  } finally {
    const r = await load.stop();
    assert.ok(r.sent >= 50, `a real load (${r.sent} queries)`);
    assert.deepEqual(r.failures, [], `${r.failures.length} of ${r.sent} queries failed`);
    assert.equal(await srv.stop(), 0);
  }
});

test("a reload that removes `reload` stops watching; SIGUSR1 still reloads", async () => {
  const srv = await startServer(corefile("192.0.2.1"));
  const file = join(srv.dir, "Corefile");
  const load = startLoad(srv.port, "a.example.org.", Type.A, { intervalMs: 10 });
  try {
    writeFileSync(file, corefile("192.0.2.5").replace("    reload 2s 1s\n", ""));
    await until("the edit to be served", () => addressOf(load.last()) === "192.0.2.5");
    writeFileSync(file, corefile("192.0.2.6").replace("    reload 2s 1s\n", ""));
    await sleep(3500);
    assert.equal(addressOf(load.last()), "192.0.2.5", "no interval reload without `reload`");
    srv.proc.kill("SIGUSR1");
    await until("the signalled edit to be served", () => addressOf(load.last()) === "192.0.2.6");
  } finally {
    const r = await load.stop();
    assert.deepEqual(r.failures, []);
    assert.equal(await srv.stop(), 0);
  }
});

test("a kubernetes source that changed: the running configuration serves until the new store syncs, past 5 s; a newer edit replaces the wait", async () => {
  const api = await startApiServer({ bookmarkIntervalMs: 0 });
  api.create("namespaces", namespace("default"));
  api.create("services", service("default", "web", { clusterIP: "10.96.5.1" }));
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-reload-k8s-"));
  const kubeconfig = writeKubeconfig(dir, api.url);
  const k8s = (ttl: number, extra = "") => `cluster.local {
    kubernetes {
        kubeconfig ${kubeconfig}
        ttl ${ttl}
        ${extra}
    }
}
`;
  const srv = await startServer(k8s(5));
  const file = join(srv.dir, "Corefile");
  const load = startLoad(srv.port, "web.default.svc.cluster.local.", Type.A, { intervalMs: 10 });
  const logged = (msg: string) => srv.logs.some((l) => typeof l.msg === "string" && l.msg.startsWith(msg));
  let release = () => {};
  try {
    await until("the first answer", () => addressOf(load.last()) === "10.96.5.1");
    // The new source's LISTs hang (bounded) until released.
    const held = new Promise<void>((r) => (release = r));
    api.onList(() => Promise.race([held, sleep(30_000, undefined, { ref: false })]));
    writeFileSync(file, k8s(5, "labels !clusterdns.test/none"));
    srv.proc.kill("SIGUSR1");
    await sleep(6500);
    assert.ok(!logged("reloaded"), "no take-over before the new store synced, 5 s or not");
    assert.equal(load.last()?.answer[0]?.ttl, 5, "the running configuration answers");

    // The same source as the running one, with another ttl: the wait ends, the running store is kept.
    writeFileSync(file, k8s(9));
    srv.proc.kill("SIGUSR1");
    await until("the newer edit to be served", () => load.last()?.answer[0]?.ttl === 9);
    // The take-over answers first and logs after: the line can reach the test a moment later.
    await until("the reloaded line", () => logged("reloaded"));
    assert.ok(logged("reload: the Corefile changed again"));
    assert.equal(srv.logs.find((l) => l.msg === "reloaded")?.adopted, 1);
  } finally {
    release();
    api.onList(undefined);
    const r = await load.stop();
    assert.deepEqual(r.failures, [], `${r.failures.length} of ${r.sent} queries failed`);
    assert.equal(await srv.stop(), 0);
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a kubernetes source that cannot sync: /ready stays 200 from the running configuration; the interval keeps checking, and a newer Corefile replaces the wait", async () => {
  const api = await startApiServer({ bookmarkIntervalMs: 0 });
  api.create("namespaces", namespace("default"));
  api.create("services", service("default", "web", { clusterIP: "10.96.5.1" }));
  // An API that accepts connections and never answers: the new source cannot sync.
  const held: Socket[] = [];
  const dead = createServer((socket) => held.push(socket.on("error", () => {})));
  await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
  const tried = once(dead, "connection");
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-reload-ready-"));
  const live = writeKubeconfig(dir, api.url);
  const stuck = writeKubeconfig(dir, `http://127.0.0.1:${(dead.address() as AddressInfo).port}`, {
    fileName: "dead",
  });
  const readyPort = await freePort();
  const k8s = (kubeconfig: string, ttl: number) => `cluster.local {
    reload 2s 1s
    ready 127.0.0.1:${readyPort}
    kubernetes {
        kubeconfig ${kubeconfig}
        ttl ${ttl}
    }
}
`;
  const srv = await startServer(k8s(live, 5));
  const file = join(srv.dir, "Corefile");
  const load = startLoad(srv.port, "web.default.svc.cluster.local.", Type.A, { intervalMs: 10 });
  const logged = (msg: string) => srv.logs.some((l) => typeof l.msg === "string" && l.msg.startsWith(msg));
  const ready = async () => (await httpGet(readyPort, "/ready")).status;
  try {
    await until("the first answer", () => addressOf(load.last()) === "10.96.5.1");
    assert.equal(await ready(), 200);

    writeFileSync(file, k8s(stuck, 5));
    await tried;
    // Past the next interval (2 s +- 1 s), which finds the file as it is waiting for.
    for (const end = Date.now() + 3500; Date.now() < end; await sleep(250))
      assert.equal(await ready(), 200, "the running configuration is ready and serves");
    assert.equal(load.last()?.answer[0]?.ttl, 5, "the running configuration answers");

    // Back to exactly the running Corefile: the interval drops the pending one, with no signal.
    writeFileSync(file, k8s(live, 5));
    await until("the pending configuration to be dropped", () =>
      logged("reload: the Corefile changed again"),
    );
    assert.equal(await ready(), 200);
    assert.ok(!logged("reloaded"));

    // A newer edit is applied by the interval as well.
    writeFileSync(file, k8s(live, 9));
    await until("the newer edit to be served", () => load.last()?.answer[0]?.ttl === 9);
    assert.equal(await ready(), 200);
  } finally {
    const r = await load.stop();
    assert.deepEqual(r.failures, [], `${r.failures.length} of ${r.sent} queries failed`);
    assert.equal(await srv.stop(), 0);
    for (const s of held) s.destroy();
    await new Promise((r) => dead.close(r));
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an imported file that changed: SIGUSR1 applies it, and so does the interval", async () => {
  const hosts = (address: string) => `hosts {\n    ${address} a.example.org\n}\n`;
  const withReload = (reload: string) => `example.org {\n    ${reload}\n    import *.override\n}\n`;
  const srv = await startServer(withReload(""), { files: { "a.override": hosts("192.0.2.1") } });
  const file = join(srv.dir, "Corefile");
  const override = join(srv.dir, "a.override");
  const load = startLoad(srv.port, "a.example.org.", Type.A, { intervalMs: 10 });
  try {
    await until("the first answer", () => addressOf(load.last()) === "192.0.2.1");

    // No `reload`: only the signal reads the files again; the Corefile itself is unchanged.
    writeFileSync(override, hosts("192.0.2.2"));
    srv.proc.kill("SIGUSR1");
    await until("the signalled import to be served", () => addressOf(load.last()) === "192.0.2.2");
    assert.ok(srv.logs.some((l) => typeof l.msg === "string" && l.msg.startsWith("reload: SIGUSR1")));

    // Nothing changed: SIGUSR1 reloads all the same.
    const reloads = () => srv.logs.filter((l) => l.msg === "reloaded").length;
    const before = reloads();
    srv.proc.kill("SIGUSR1");
    await until("an unconditional reload", () => reloads() > before);

    // With `reload`, the interval compares the imported files too.
    writeFileSync(file, withReload("reload 2s 1s"));
    srv.proc.kill("SIGUSR1");
    await until("the reload directive", () => reloads() > before + 1);
    writeFileSync(override, hosts("192.0.2.3"));
    await until("the edited import to be served", () => addressOf(load.last()) === "192.0.2.3");
  } finally {
    const r = await load.stop();
    assert.deepEqual(r.failures, [], `${r.failures.length} of ${r.sent} queries failed`);
    assert.equal(await srv.stop(), 0);
  }
});
