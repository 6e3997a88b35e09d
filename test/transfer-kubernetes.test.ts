// The cluster zone transferred to Knot DNS, its real secondary: the first AXFR, and a change made in
// the same second as the serial Knot holds. The kubernetes SOA serial is the time of the last change
// in seconds, so a change inside the second of a serial already transferred must still move it on,
// or Knot (NOTIFY or SOA refresh alike) sees nothing new and keeps the old zone.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer } from "./helpers/server.ts";
import { freeUdpTcpPort } from "./helpers/free-port.ts";
import { kdig } from "./helpers/kdig.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";
import { startApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { namespace, service } from "./k8s/objects.ts";

const running: { stop(): Promise<unknown> }[] = [];
after(async () => {
  for (const r of running.reverse()) await r.stop();
});

/** Asks Knot until `name` A holds `want`, for `ms` at most; false when it never did. */
async function knotHas(k: Knot, name: string, want: string, ms: number): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if ((await kdig(k.port, name, "A", "+short")).records.includes(want)) return true;
    await sleep(50);
  }
  return false;
}

test("Knot follows the cluster zone, also a change in the second of the serial it transferred", async () => {
  const api = await startApiServer();
  running.push({ stop: () => api.close() });
  api.create("namespaces", namespace("default"));
  api.create("services", service("default", "web", { clusterIP: "10.96.0.20" }));
  const port = await freeUdpTcpPort();
  const k = await startKnot({
    zone: { origin: "cluster.local.", text: "" },
    conf: { primary: port, control: true },
  });
  running.push(k);
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-xfr-k8s-"));
  running.push({ stop: async () => rmSync(dir, { recursive: true, force: true }) });
  const s = await startServer(
    `cluster.local {
    kubernetes cluster.local {
        kubeconfig ${writeKubeconfig(dir, api.url)}
    }
    transfer {
        to 127.0.0.1:${k.port}
    }
}
`,
    { args: ["-dns.port", String(port)] },
  );
  running.push(s);
  assert.ok(await knotHas(k, "web.default.svc.cluster.local", "10.96.0.20", 15_000), k.log.join("\n"));

  // Early in a second: a Service, Knot's transfer of it, and a second Service, all in that second.
  for (let tries = 0; ; tries++) {
    while (Date.now() % 1000 > 50) await sleep(5);
    const second = Math.floor(Date.now() / 1000);
    api.create("services", service("default", `a${tries}`, { clusterIP: `10.96.1.${tries}` }));
    await sleep(100);
    await k.knotc("zone-retransfer", "cluster.local");
    const got = await knotHas(k, `a${tries}.default.svc.cluster.local`, `10.96.1.${tries}`, 600);
    api.create("services", service("default", `b${tries}`, { clusterIP: `10.96.2.${tries}` }));
    if (got && Math.floor(Date.now() / 1000) === second) {
      // NOTIFY waits out its 5 s hold at most: Knot has the second Service within 8 s.
      const name = `b${tries}.default.svc.cluster.local`;
      assert.ok(await knotHas(k, name, `10.96.2.${tries}`, 8000), `Knot never got ${name}`);
      return;
    }
    assert.ok(tries < 5, "could not fit the steps into one second");
  }
});
