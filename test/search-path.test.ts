// Search domains and ndots end to end, with the real glibc resolver. A network namespace plays a pod in
// namespace "web": its resolv.conf is a pod's (search web.svc.cluster.local svc.cluster.local
// cluster.local, ndots:5, nameserver 127.0.0.1) and clusterdns serves it on its 127.0.0.1:53, reading
// the demo cluster from the test API server (in there too), with `example.com` from a file zone and
// every other name NXDOMAIN from a root zone.
//
// For each name, `getent ahosts` runs in the namespace, and clusterdns's query log shows what glibc
// sent. `clusterdns resolve` must have predicted the same queries and the same result. This runs
// twice, without autopath and with it. With autopath, the outside name costs one query per type
// instead of four.

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

const EXAMPLE_ZONE = `$ORIGIN example.com.
$TTL 300
@    IN SOA ns.example.com. hostmaster.example.com. 1 7200 1800 86400 60
@    IN NS  ns.example.com.
ns   IN A   192.0.2.1
api  IN A   192.0.2.10
a.b.c.d.e IN A 192.0.2.55
`;

const ROOT_ZONE = `$ORIGIN .
$TTL 60
@    IN SOA ns.root. hostmaster.root. 1 7200 1800 86400 60
@    IN NS  ns.root.
; A name that exists only as is, while its expansion default.svc.cluster.local is a namespace (NODATA),
; as a node's own search domain may hold a host named like a namespace.
default IN A 192.0.2.77
`;

const corefile = (
  kubeconfig: string,
  dir: string,
  autopath: boolean,
) => `cluster.local in-addr.arpa ip6.arpa {
    log
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods verified
    }
    ${autopath ? "autopath @kubernetes" : ""}
}
example.com {
    log
    file ${join(dir, "example.com.zone")} example.com
}
. {
    log
    file ${join(dir, "root.zone")} .
}
`;

interface Sent {
  name: string;
  type: string;
}

/** Names a pod in "web" looks up, and the addresses getent must print (none: not found). */
const NAMES: [string, string[]][] = [
  ["nginx", ["192.168.136.206", "192.168.76.144"]], // the headless nginx.web
  ["nginx.default", ["10.102.97.154"]], // a partial name: nginx.default.svc.cluster.local
  ["nginx-0.nginx", ["192.168.136.206"]], // a StatefulSet pod of the headless service
  ["nginx.default.svc.cluster.local.", ["10.102.97.154"]], // absolute
  ["a.b.c.d.e.example.com", ["192.0.2.55"]], // 6 dots: asked as is first
  ["api.example.com", ["192.0.2.10"]], // only outside the cluster zone
  ["nope", []], // nowhere
  ["default", ["192.0.2.77"]], // NODATA at default.svc.cluster.local (a namespace): the walk goes on
];

for (const autopath of [false, true]) {
  describe(`glibc in a pod's network namespace, autopath ${autopath ? "on" : "off"}`, () => {
    let ns: Netns;
    let server: NetnsServer | undefined;
    let dir: string;
    const counts = new Map<string, number>();

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "clusterdns-search-"));
      ns = await createNetns(undefined, POD_RESOLV_CONF);
      // The namespace is the pod: its address (here its loopback, where glibc's queries come from)
      // belongs to a pod in "web", which autopath finds through `pods verified`.
      const objects = [
        ...readObjects(join(ROOT, "zones", "demo-cluster.yaml")),
        pod("web", "client", "127.0.0.1"),
      ];
      const kubeconfig = await startApiInNetns(ns, objects, dir);
      writeFileSync(join(dir, "example.com.zone"), EXAMPLE_ZONE);
      writeFileSync(join(dir, "root.zone"), ROOT_ZONE);
      writeFileSync(join(dir, "Corefile"), corefile(kubeconfig, dir, autopath));
      server = await startClusterdnsInNetns(ns, join(dir, "Corefile"));
    });

    after(async () => {
      await server?.stop();
      await ns?.destroy();
      rmSync(dir, { recursive: true, force: true });
    });

    let sentinels = 0;

    /** Asks the server for a name of its own and resolves with the index of that query's log line. The
     * log line of a query is written before its reply leaves, so every line of a query answered
     * before it is in the log by then, however slowly the log pipe is read (no quiet period to guess). */
    async function sentinel(): Promise<number> {
      const name = `sentinel-${++sentinels}.`;
      await ns.exec("dig", ["@127.0.0.1", "+tries=1", "+time=5", name, "TXT"]);
      const at = () => server!.logs.findIndex((l) => l.name === name);
      for (let i = 0; i < 500 && at() < 0; i++) await sleep(20);
      assert.ok(at() >= 0, `the sentinel ${name} was logged`);
      return at();
    }

    /** The queries clusterdns logged while `fn` ran, and no other: a sentinel before and after it. */
    async function logged(fn: () => Promise<void>): Promise<Sent[]> {
      const from = (await sentinel()) + 1;
      await fn();
      const end = await sentinel();
      return server!.logs
        .slice(from, end)
        .filter((l) => typeof l.name === "string" && typeof l.rcode === "string")
        .map((l) => ({ name: l.name as string, type: l.type as string }));
    }

    for (const [name, want] of NAMES) {
      it(`${name}: getent gets what clusterdns resolve predicted, with the same queries`, async () => {
        let getent = { code: null as number | null, stdout: "" };
        const sent = await logged(async () => {
          getent = await ns.exec("getent", ["ahosts", name]);
        });
        const addresses = [
          ...new Set(
            getent.stdout
              .split("\n")
              .filter(Boolean)
              .map((l) => l.split(/\s+/)[0]),
          ),
        ];
        assert.deepEqual(addresses.sort(), [...want].sort(), getent.stdout);
        assert.equal(getent.code, want.length > 0 ? 0 : 2);

        const predicted = await ns.exec(process.execPath, [
          join(ROOT, "bin", "clusterdns"),
          "resolve",
          name,
          "--resolv-conf",
          join(ns.etcDir, "resolv.conf"),
          "--json",
          "--no-explain",
        ]);
        const trace = JSON.parse(predicted.stdout) as {
          queries: Sent[];
          result: { resolved: boolean; addresses: string[] };
        };
        const key = (q: Sent) => `${q.name.toLowerCase()} ${q.type}`;
        // A and AAAA leave together; the log has them in the order their answers went out.
        assert.deepEqual(trace.queries.map(key).sort(), sent.map(key).sort(), "the same queries");
        assert.deepEqual(
          [...new Set(trace.queries.map((q) => q.name.toLowerCase()))],
          [...new Set(sent.map((q) => q.name.toLowerCase()))],
          "the same names in the same order",
        );
        assert.equal(trace.result.resolved, want.length > 0);
        assert.deepEqual([...new Set(trace.result.addresses)].sort(), [...want].sort());
        counts.set(name, sent.length);
      });
    }

    it(`an outside name costs ${autopath ? "2 queries (autopath answers the first try)" : "8 queries (the whole search list, A and AAAA)"}`, () => {
      assert.equal(counts.get("api.example.com"), autopath ? 2 : 8);
      assert.equal(counts.get("nginx"), 2, "a short cluster name is found at the first try either way");
    });
  });
}
