// A process opens its DNS sockets only once the kubernetes store can answer: synced from the API (or,
// past startup_timeout, serving its warm-start snapshot or SERVFAIL, as CoreDNS starts serving then).
// With -reuseport the kernel hands a new process its share of the queries the moment it binds, so a
// process that bound before its first LIST made those queries wait for it (issue 25: 1,100-1,600
// queries waiting up to a second per rolling restart, some lost). /health and /ready listen before.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { namespace, service } from "./k8s/objects.ts";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";

const corefile = (kubeconfig: string, healthPort: number, readyPort: number, extra = "") => `cluster.local {
    health 127.0.0.1:${healthPort}
    ready 127.0.0.1:${readyPort}
    kubernetes {
        kubeconfig ${kubeconfig}
        ${extra}
    }
}
`;

/** The index of the first log line with this message, or -1. */
const at = (logs: Record<string, unknown>[], msg: string) => logs.findIndex((l) => l.msg === msg);

test("DNS listens only once the store has synced; /health and /ready answer before", async () => {
  const api = await startApiServer({ bookmarkIntervalMs: 0 });
  api.create("namespaces", namespace("default"));
  api.create("services", service("default", "web", { clusterIP: "10.96.5.1" }));
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-listen-"));
  const [healthPort, readyPort] = [await freePort(), await freePort()];
  // Every LIST waits until the test has looked at the process while it syncs.
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  api.onList(() => held);
  const starting = startServer(corefile(writeKubeconfig(dir, api.url), healthPort, readyPort), {
    timeoutMs: 30_000,
  });
  try {
    let health = await httpGet(healthPort, "/health").catch(() => undefined);
    for (let i = 0; i < 100 && health?.status !== 200; i++) {
      await sleep(50);
      health = await httpGet(healthPort, "/health").catch(() => undefined);
    }
    assert.equal(health?.status, 200, "/health answers while the store syncs");
    assert.equal((await httpGet(readyPort, "/ready")).status, 503, "/ready says not yet");
    await sleep(500);
    release();
    const srv = await starting;
    try {
      const listening = at(srv.logs, "listening");
      const synced = at(srv.logs, "synced");
      assert.ok(
        synced >= 0 && listening > synced,
        `synced (line ${synced}) before listening (line ${listening})`,
      );
      const first = await dig(srv.port, "web.default.svc.cluster.local", "A");
      assert.equal(first.status, "NOERROR");
      assert.deepEqual(first.answer, ["web.default.svc.cluster.local. 5 IN A 10.96.5.1"]);
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  } finally {
    release();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the API does not answer: DNS listens at startup_timeout and cluster names get SERVFAIL", async () => {
  const api = await startApiServer({ bookmarkIntervalMs: 0 });
  api.failLists(500);
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-listen-"));
  try {
    const srv = await startServer(
      corefile(writeKubeconfig(dir, api.url), await freePort(), await freePort(), "startup_timeout 1s"),
    );
    try {
      const waited = at(srv.logs, "waiting for the first sync before listening");
      const gaveUp = srv.logs.findIndex((l) =>
        String(l.msg).startsWith("listening with the Kubernetes API not synced"),
      );
      const listening = at(srv.logs, "listening");
      assert.ok(
        waited >= 0 && gaveUp > waited && listening > gaveUp,
        `lines ${waited}, ${gaveUp}, ${listening}`,
      );
      assert.equal((await dig(srv.port, "web.default.svc.cluster.local", "A")).status, "SERVFAIL");
    } finally {
      assert.equal(await srv.stop(), 0);
    }
  } finally {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
