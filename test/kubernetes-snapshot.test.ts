// The warm-start snapshot end to end: a clusterdns process synced from the test API server writes its
// snapshot at shutdown; restarted while the API server is down, it answers the names it knew (and
// /ready says it serves the snapshot); when the API comes back, the API's state replaces it.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { endpointSlice, namespace, service } from "./k8s/objects.ts";
import { startServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { httpGet } from "./helpers/http-get.ts";
import { freePort } from "./helpers/free-port.ts";

const corefile = (kubeconfig: string, snapshot: string, readyPort: number) => `cluster.local {
    ready 127.0.0.1:${readyPort}
    kubernetes {
        kubeconfig ${kubeconfig}
        snapshot ${snapshot} 1s
        startup_timeout 500ms
    }
}
`;

const WEB = "web.default.svc.cluster.local";
const DB = "db-0.db.default.svc.cluster.local";

async function answer(port: number, name: string, type = "A"): Promise<string> {
  const r = await dig(port, name, type);
  return r.answer.length > 0 ? [...r.answer].sort().join(" | ") : r.status;
}

async function until(port: number, name: string, want: string): Promise<void> {
  let last = "";
  for (let i = 0; i < 200; i++) {
    last = await answer(port, name);
    if (last === want) return;
    await sleep(50);
  }
  assert.fail(`${name}: still ${last}, want ${want}`);
}

describe("warm start from a snapshot", () => {
  let api: TestApiServer;
  let dir: string;
  let kubeconfig: string;
  let snapshot: string;
  before(async () => {
    api = await startApiServer({ bookmarkIntervalMs: 200 });
    api.create("namespaces", namespace("default"));
    api.create("services", service("default", "web", { clusterIP: "10.96.0.80" }));
    api.create(
      "services",
      service("default", "db", { clusterIP: "None", ports: [{ name: "pg", port: 5432 }] }),
    );
    api.create(
      "endpointslices",
      endpointSlice("default", "db", "db-1", [{ ip: "10.244.1.7", hostname: "db-0" }], {
        ports: [{ name: "pg", port: 5432 }],
      }),
    );
    dir = mkdtempSync(join(tmpdir(), "clusterdns-snapshot-"));
    kubeconfig = writeKubeconfig(dir, api.url);
    snapshot = join(dir, "snapshot.json");
  });
  after(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is written from the API's state at shutdown", async () => {
    const srv = await startServer(corefile(kubeconfig, snapshot, await freePort()));
    try {
      await until(srv.port, WEB, `${WEB}. 5 IN A 10.96.0.80`);
      await until(srv.port, DB, `${DB}. 5 IN A 10.244.1.7`);
    } finally {
      assert.equal(await srv.stop("SIGTERM"), 0);
    }
    assert.ok(existsSync(snapshot), "the snapshot file exists after shutdown");
    const s = JSON.parse(readFileSync(snapshot, "utf8")) as { services: [string, unknown][] };
    assert.deepEqual(s.services.map(([k]) => k).sort(), ["default/db", "default/web"]);
  });

  it("answers the last known cluster while the API is down, and says so on /ready", async () => {
    api.setDown(true);
    const readyPort = await freePort();
    const srv = await startServer(corefile(kubeconfig, snapshot, readyPort));
    try {
      // Held until the startup deadline, then answered from the snapshot: never SERVFAIL.
      assert.equal(await answer(srv.port, WEB), `${WEB}. 5 IN A 10.96.0.80`);
      assert.equal(await answer(srv.port, DB), `${DB}. 5 IN A 10.244.1.7`);
      assert.equal(await answer(srv.port, "nope.default.svc.cluster.local"), "NXDOMAIN");
      // Ready once the snapshot's load is compacted away, a moment after it answers.
      let ready = await httpGet(readyPort, "/ready");
      for (let i = 0; i < 100 && ready.status !== 200; i++, await sleep(20))
        ready = await httpGet(readyPort, "/ready");
      assert.equal(ready.status, 200);
      assert.match(ready.body, /^OK\nkubernetes: serving the snapshot written \S+ \(.*snapshot\.json\)/);
      assert.ok(
        srv.logs.some(
          (l) => l.msg === "the API has not synced by the startup deadline: serving the snapshot",
        ),
      );

      // The API comes back with a change: its state replaces the snapshot's, and /ready says plain OK.
      api.remove("services", { name: "web", namespace: "default" });
      api.create("services", service("default", "api", { clusterIP: "10.96.0.81" }));
      api.setDown(false);
      await until(srv.port, WEB, "NXDOMAIN");
      await until(
        srv.port,
        "api.default.svc.cluster.local",
        "api.default.svc.cluster.local. 5 IN A 10.96.0.81",
      );
      assert.equal(await answer(srv.port, DB), `${DB}. 5 IN A 10.244.1.7`);
      // Each kind's reflector comes back on its own backoff: the note goes once all were listed.
      let body = "";
      for (let i = 0; i < 100 && body !== "OK"; i++, await sleep(50))
        body = (await httpGet(readyPort, "/ready")).body;
      assert.equal(body, "OK");
    } finally {
      assert.equal(await srv.stop("SIGTERM"), 0);
    }
    const s = JSON.parse(readFileSync(snapshot, "utf8")) as { services: [string, unknown][] };
    assert.deepEqual(
      s.services.map(([k]) => k).sort(),
      ["default/api", "default/db"],
      "rewritten from the API",
    );
  });

  it("refuses a damaged snapshot or one written under other settings, and says why", async () => {
    api.setDown(true);
    try {
      for (const [body, reason] of [
        ["{not json", /not JSON/],
        [JSON.stringify({ version: 2, settings: "{}", services: [] }), /written under other settings/],
      ] as const) {
        writeFileSync(snapshot, body);
        const srv = await startServer(corefile(kubeconfig, snapshot, await freePort()));
        try {
          assert.equal(await answer(srv.port, "db.default.svc.cluster.local"), "SERVFAIL");
          const line = srv.logs.find((l) => l.msg === "no usable snapshot");
          assert.ok(line, "the refusal is logged");
          assert.match(String(line.reason), reason);
        } finally {
          assert.equal(await srv.stop("SIGTERM"), 0);
        }
      }
    } finally {
      api.setDown(false);
    }
  });
});
