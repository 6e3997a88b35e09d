// The reduced run of the API faults soak (k8s-faults.ts): every fault, short, on a cluster of 600
// services (two pages per LIST), against a real clusterdns process under a steady load. The silent
// watch lasts the reflector's silent bound (SILENT_WATCH_MS, minutes) in a process, so here it runs
// in this process with a short bound, through the same store comparison.

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { runApiFaults } from "./k8s-faults.ts";
import { startApiServer } from "../k8s/api-server.ts";
import { writeKubeconfig } from "../k8s/kubeconfig.ts";
import { namespace, service } from "../k8s/objects.ts";
import { apiDump, compareDumps, type Comparison } from "../k8s/store-compare.ts";
import { apiSource } from "../../src/plugins/kubernetes/api/source-api.ts";
import { Store } from "../../src/plugins/kubernetes/store/store.ts";
import type { Kind } from "../../src/plugins/kubernetes/model/source.ts";

describe("API faults under a steady load", () => {
  test("no query for a known name fails, the Service created meanwhile answers, the store equals the API", async () => {
    const rows = await runApiFaults({
      services: 600,
      outageMs: 1000,
      listFailureMs: 1000,
      silent: false,
      qps: 100,
      pauseMs: 0,
      settleMs: 20_000,
    });
    assert.equal(rows.length, 6);
    for (const r of rows) {
      assert.ok(r.queries > 0, r.fault);
      assert.ok(r.exercised, `${r.fault}: the fault hit no request`);
      assert.deepEqual(r.failures, [], `${r.fault}: ${r.failed} of ${r.queries} failed`);
      assert.notEqual(r.recoveryMs, undefined, `${r.fault}: the new Service never answered`);
      assert.deepEqual(r.store.differences, [], `${r.fault}: the store differs from the API`);
      assert.ok(r.store.equal && r.store.records > 1000, r.fault);
    }
  });

  test("a silent watch is dropped and resumed from where it was: no relist, the store equals the API", async () => {
    const zones = ["cluster.local."];
    const kinds: Kind[] = ["services", "namespaces", "endpointslices"];
    const api = await startApiServer({ bookmarkIntervalMs: 100 });
    const dir = mkdtempSync(join(tmpdir(), "clusterdns-silent-"));
    api.create("namespaces", namespace("default"));
    for (let i = 0; i < 5; i++) api.create("services", service("default", `s${i}`));
    const store = new Store({ zones, waitFor: kinds });
    const source = apiSource({
      kubeconfig: writeKubeconfig(dir, api.url),
      kinds,
      log: pino({ level: "silent" }),
      tuning: { silentTimeoutMs: 500, backoff: { initialMs: 10, maxMs: 100 } },
    });
    try {
      await source.start(store);
      await source.waitSynced();
      while (api.openWatches() < kinds.length) await sleep(10);
      api.silenceWatches();
      api.create("services", service("default", "during"));
      api.remove("services", { namespace: "default", name: "s0" });
      const s1 = api.get("services", "default", "s1")!;
      s1.metadata.labels = { changed: "yes" };
      (s1 as ReturnType<typeof service>).spec.ports = [{ name: "dns", port: 53, protocol: "UDP" }];
      api.update("services", s1);
      let last: Comparison | undefined;
      for (let i = 0; i < 200 && !last?.equal; i++) {
        await sleep(50);
        last = compareDumps(store.dump(), apiDump(api, { zones, kinds }));
      }
      assert.deepEqual(last?.differences, []);
      const services = source.stats().kinds.find((k) => k.kind === "services")!;
      assert.ok(services.watchRestarts > 0, "the silent watch was dropped");
      assert.equal(services.relists, 0, "and resumed, not relisted");
      assert.match(services.lastError ?? "", /silent/);
    } finally {
      await source.stop();
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
