// insights with the real glibc resolver: a network namespace plays a pod of Deployment web/client
// (its resolv.conf is a pod's: search web.svc.cluster.local svc.cluster.local cluster.local, ndots:5;
// its loopback address is the pod's), clusterdns and the test API server run in it, and `getent
// ahosts` looks an outside name up. clusterdns top must name the walk glibc made and its cost.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createNetns, type Netns } from "./helpers/netns.ts";
import {
  readObjects,
  startApiInNetns,
  startClusterdnsInNetns,
  POD_RESOLV_CONF,
  type NetnsServer,
} from "./helpers/netns-cluster.ts";
import { ROOT } from "./helpers/server.ts";
import { pod } from "./k8s/objects.ts";

const ROOT_ZONE =
  "$ORIGIN .\n$TTL 60\n@ IN SOA ns.root. hostmaster.root. 1 7200 1800 86400 60\n@ IN NS ns.root.\n";

describe("insights sees glibc's search-list walk", () => {
  let ns: Netns;
  let server: NetnsServer | undefined;
  let dir: string;
  const top = async () =>
    (
      await ns.exec(process.execPath, [
        join(ROOT, "bin", "clusterdns"),
        "top",
        "--server",
        "127.0.0.1:9155",
        "--once",
      ])
    ).stdout;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-insights-glibc-"));
    ns = await createNetns(undefined, POD_RESOLV_CONF);
    const client = pod("web", "client-6b7c8d9f4-k2j4h", "127.0.0.1", {
      labels: { "pod-template-hash": "6b7c8d9f4" },
    });
    Object.assign(client.metadata, {
      ownerReferences: [{ kind: "ReplicaSet", name: "client-6b7c8d9f4", controller: true }],
    });
    const kubeconfig = await startApiInNetns(
      ns,
      [...readObjects(join(ROOT, "zones", "demo-cluster.yaml")), client],
      dir,
    );
    writeFileSync(join(dir, "root.zone"), ROOT_ZONE);
    writeFileSync(
      join(dir, "Corefile"),
      `. {
    insights {
        kubeconfig ${kubeconfig}
    }
    kubernetes cluster.local {
        kubeconfig ${kubeconfig}
    }
    hosts {
        192.0.2.10 api.example.com
        fallthrough
    }
    file ${join(dir, "root.zone")} .
}
`,
    );
    server = await startClusterdnsInNetns(ns, join(dir, "Corefile"));
    // The demo cluster has 16 pods; with the client, 17.
    for (let i = 0; i < 20 && !/ 17 pods/.test(await top()); i++) await sleep(200);
  });

  after(async () => {
    await server?.stop();
    await ns?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it("getent ahosts api.example.com costs 6 NXDOMAIN from web/deployment/client", async () => {
    const r = await ns.exec("getent", ["ahosts", "api.example.com"]);
    assert.match(r.stdout, /^192\.0\.2\.10 /m);
    const out = await top();
    assert.match(out, /api\.example\.com cost 6 NXDOMAIN from web\/deployment\/client/, out);
    assert.match(out, /web\/deployment\/client +8 +6 +6 +dnsConfig ndots/, out);
  });
});
