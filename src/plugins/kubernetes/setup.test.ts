import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Directive } from "../../corefile/types.ts";
import type { Handler, Plugin } from "../../chain/handler.ts";
import { ConfigError } from "../../corefile/errors.ts";
import { Class, Rcode, Type } from "../../dns/constants.ts";
import { replyTo } from "../../dns/message.ts";
import { parseRRText } from "../../dns/text.ts";
import { directive, fakeContext } from "../../../test/helpers/setup-context.ts";
import { makeRequest, recordingNext } from "../../../test/helpers/request.ts";
import { setup } from "./setup.ts";
import { kindsFor, parseConfig } from "./config.ts";
import { StartupGate } from "./sync/startup-gate.ts";
import { kubernetesHandler } from "./kubernetes.ts";
import { gcStats } from "../../runtime/heap.ts";
import { Records } from "./answers/records.ts";
import { Store } from "./store/store.ts";
import { ObjectsError, loadObjects, objectsSource } from "./api/objects-file.ts";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Kind, KObject, Sink } from "./model/source.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const DEMO = join(ROOT, "zones", "demo-cluster.yaml");
const ZONES = ["cluster.local.", "in-addr.arpa.", "ip6.arpa."];
const tmp = mkdtempSync(join(tmpdir(), "clusterdns-k8s-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
}

/** A `kubernetes` directive with a block of `name args...` lines, each on its own line number. */
function k8s(args: string[], lines: string[] = []): Directive {
  const block = lines.map((l, i) => {
    const [name, ...rest] = l.split(/\s+/);
    return directive(name, rest, undefined, 4 + i);
  });
  return directive("kubernetes", args, lines.length > 0 ? block : undefined, 3);
}

const ctxZones = { zones: ["."], root: ROOT };

function configError(d: Directive, line: number, pattern: RegExp): void {
  assert.throws(
    () => parseConfig(d, ctxZones),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, `a ConfigError, not ${String(err)}`);
      assert.equal(err.code, "CDNS_ERR_CONFIG");
      assert.equal(err.line, line, `line of ${err.message}`);
      assert.match(err.message, /^Corefile:\d+ - Error during parsing: kubernetes: /);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

describe("setup: options", () => {
  it("has CoreDNS's defaults", () => {
    const c = parseConfig(k8s(["cluster.local"]), ctxZones);
    assert.deepEqual(c, {
      zones: ["cluster.local."],
      unreached: [],
      namespaces: [],
      pods: "disabled",
      endpointPodNames: false,
      ttl: 5,
      noEndpoints: false,
      ignoreEmptyService: false,
      startupTimeoutMs: 5000,
      limits: {},
    });
    assert.deepEqual(kindsFor(c), ["services", "namespaces", "endpointslices"]);
  });

  it("takes the block's zones without arguments, and reverse zones beside a forward one", () => {
    const c = parseConfig(k8s([]), { zones: ["cluster.local.", "0.0.10.in-addr.arpa."], root: ROOT });
    assert.deepEqual(c.zones, ["cluster.local.", "0.0.10.in-addr.arpa."]);
    assert.deepEqual(parseConfig(k8s(["Cluster.Local", "in-addr.arpa", "ip6.arpa"]), ctxZones).zones, ZONES);
  });

  it("parses every option", () => {
    const c = parseConfig(
      k8s(
        ["cluster.local", "in-addr.arpa"],
        [
          "endpoint https://10.0.0.1:6443",
          "tls cert.pem key.pem ca.pem",
          "namespaces default kube-system",
          "namespaces Web",
          "labels environment in (staging, qa),application=nginx",
          "pods verified",
          "endpoint_pod_names",
          "ttl 30",
          "noendpoints",
          "fallthrough in-addr.arpa ip6.arpa",
          "ignore empty_service",
          "startup_timeout 2s",
          "snapshot state/snapshot.json 30s",
          "apiserver_qps 2.5",
          "apiserver_burst 20",
          "apiserver_max_inflight 4",
        ],
      ),
      ctxZones,
    );
    assert.equal(c.endpoint, "https://10.0.0.1:6443");
    assert.deepEqual(c.tls, {
      cert: join(ROOT, "cert.pem"),
      key: join(ROOT, "key.pem"),
      ca: join(ROOT, "ca.pem"),
    });
    assert.deepEqual(c.namespaces, ["default", "kube-system", "web"]);
    assert.equal(c.labels, "environment in (staging, qa),application=nginx");
    assert.equal(c.labelSelector!({ environment: "qa", application: "nginx" }), true);
    assert.equal(c.pods, "verified");
    assert.equal(c.endpointPodNames, true);
    assert.equal(c.ttl, 30);
    assert.equal(c.noEndpoints, true);
    assert.deepEqual(c.fallthrough, ["in-addr.arpa.", "ip6.arpa."]);
    assert.equal(c.ignoreEmptyService, true);
    assert.equal(c.startupTimeoutMs, 2000);
    assert.deepEqual(c.snapshot, { file: join(ROOT, "state/snapshot.json"), intervalMs: 30_000 });
    assert.deepEqual(c.limits, { qps: 2.5, burst: 20, maxInflight: 4 });
    assert.deepEqual(kindsFor(c), ["services", "namespaces", "pods"]);
  });

  it("namespace_labels (without namespaces, which CoreDNS does not take beside it)", () => {
    const c = parseConfig(k8s([], ["namespace_labels istio-injection=enabled"]), ctxZones);
    assert.equal(c.namespaceSelector!({ "istio-injection": "enabled" }), true);
    assert.equal(c.namespaceSelector!({}), false);
  });

  it("zones outside the block, as CoreDNS takes them: the PTR targets' zone, and zones no query reaches", () => {
    const rev = parseConfig(k8s(["cluster.local", "in-addr.arpa"]), { zones: ["in-addr.arpa."], root: ROOT });
    assert.deepEqual(rev.zones, ["cluster.local.", "in-addr.arpa."]);
    assert.deepEqual(rev.unreached, []);
    const fwd = parseConfig(k8s(["cluster.local", "in-addr.arpa"]), {
      zones: ["cluster.local."],
      root: ROOT,
    });
    assert.deepEqual(fwd.unreached, ["in-addr.arpa."]);
  });

  it("zonal: off by default, on with the option (CoreDNS PR 8388)", () => {
    assert.equal(parseConfig(k8s([]), ctxZones).zonal, undefined);
    assert.equal(parseConfig(k8s([], ["zonal"]), ctxZones).zonal, true);
  });

  it("kubeconfig with and without a context; fallthrough without zones means all; objects", () => {
    const a = parseConfig(k8s([], ["kubeconfig kube.conf prod", "fallthrough"]), ctxZones);
    assert.equal(a.kubeconfig, join(ROOT, "kube.conf"));
    assert.equal(a.context, "prod");
    assert.deepEqual(a.fallthrough, ["."]);
    const b = parseConfig(k8s([], ["kubeconfig /etc/kube.conf", "ttl 0"]), ctxZones);
    assert.equal(b.kubeconfig, "/etc/kube.conf");
    assert.equal(b.context, undefined);
    assert.equal(b.ttl, 0);
    const o = parseConfig(k8s([], ["objects zones/demo-cluster.yaml /abs/b.json"]), ctxZones);
    assert.deepEqual(o.objects, [DEMO, "/abs/b.json"]);
  });

  it("multicluster: clusterset.local by default, or the zones given; the API's ServiceImports read", () => {
    const zones = ["cluster.local", "clusterset.local", "in-addr.arpa", "ip6.arpa"];
    const a = parseConfig(k8s(zones, ["multicluster"]), ctxZones);
    assert.deepEqual(a.multicluster, ["clusterset.local."]);
    assert.deepEqual(kindsFor(a), ["services", "namespaces", "endpointslices", "serviceimports"]);
    const b = parseConfig(k8s(["cluster.local", "mesh.example"], ["multicluster mesh.example"]), ctxZones);
    assert.deepEqual(b.multicluster, ["mesh.example."]);
    assert.equal(parseConfig(k8s(zones), ctxZones).multicluster, undefined);
    assert.ok(!kindsFor(parseConfig(k8s(zones), ctxZones)).includes("serviceimports"));
  });

  const bad: [string, string[], string[], number, RegExp][] = [
    ["an unknown option", [], ["frobnicate"], 4, /unknown property 'frobnicate'/],
    [
      "a multicluster zone the plugin does not serve",
      ["cluster.local"],
      ["ttl 5", "multicluster clusterset.local"],
      5,
      /multicluster: 'clusterset\.local\.' is not one of the plugin's zones \(cluster\.local\.\)/,
    ],
    [
      "multicluster without a zone for the cluster itself",
      ["clusterset.local", "in-addr.arpa"],
      ["multicluster"],
      4,
      /multicluster: the plugin needs a zone for its own cluster besides/,
    ],
    [
      "a reverse multicluster zone",
      ["cluster.local", "in-addr.arpa"],
      ["multicluster in-addr.arpa"],
      4,
      /'in-addr\.arpa\.' is not one/,
    ],
    [
      "multicluster with a snapshot",
      ["cluster.local", "clusterset.local"],
      ["multicluster", "snapshot s.json"],
      3,
      /'snapshot' does not keep multi-cluster services yet/,
    ],
    ["transfer", [], ["transfer to *"], 4, /'transfer' is not supported: .*transfer plugin/],
    ["upstream", [], ["upstream"], 4, /'upstream' is not supported/],
    ["a bad endpoint", [], ["endpoint k8s:8443"], 4, /endpoint 'k8s:8443' is not an http\(s\) URL/],
    ["a bad second endpoint", [], ["endpoint http://a:1 b:2"], 4, /endpoint 'b:2' is not an http\(s\) URL/],
    ["tls with two files", [], ["tls cert key"], 4, /takes 3 argument/],
    ["kubeconfig with three words", [], ["kubeconfig a b c"], 4, /takes 1 to 2 argument/],
    ["namespaces without names", [], ["namespaces"], 4, /takes at least 1 argument/],
    ["a bad label selector", [], ["labels a in b"], 4, /labels: .*'\(' after 'in'/],
    ["a bad namespace selector", [], ["namespace_labels =x"], 4, /namespace_labels: invalid label key/],
    ["an unknown pod mode", [], ["pods sometimes"], 4, /unknown mode 'sometimes'/],
    ["endpoint_pod_names with an argument", [], ["endpoint_pod_names yes"], 4, /takes 0 argument/],
    ["a TTL over 3600", [], ["ttl 3601"], 4, /3601 is out of range \[0, 3600\]/],
    ["apiserver_qps of 0", [], ["apiserver_qps 0"], 4, /apiserver_qps: '0' is not a number above 0/],
    ["apiserver_qps that is no number", [], ["apiserver_qps fast"], 4, /'fast' is not a number above 0/],
    ["apiserver_burst of 0", [], ["apiserver_burst 0"], 4, /0 is out of range \[1, /],
    [
      "apiserver_max_inflight twice",
      [],
      ["apiserver_max_inflight 2", "apiserver_max_inflight 3"],
      5,
      /given twice/,
    ],
    ["apiserver limits with objects", [], ["objects a.yaml", "apiserver_qps 5"], 3, /'objects' reads files/],
    ["a negative TTL", [], ["ttl -1"], 4, /out of range/],
    ["a TTL that is no number", [], ["ttl 5s"], 4, /'5s' is not an integer/],
    ["noendpoints with an argument", [], ["noendpoints please"], 4, /takes 0 argument/],
    ["zonal with an argument", [], ["zonal pin"], 4, /takes 0 argument/],
    // CoreDNS: zonal names come from the endpoints, which noendpoints does not read.
    [
      "zonal with noendpoints",
      [],
      ["zonal", "noendpoints"],
      3,
      /zonal requires the endpoint cache; remove noendpoints/,
    ],
    [
      "ignore something else",
      [],
      ["ignore emptyservice"],
      4,
      /unknown value 'emptyservice' \(want empty_service\)/,
    ],
    ["a bad startup_timeout", [], ["startup_timeout soon"], 4, /invalid duration 'soon'/],
    ["objects without files", [], ["objects"], 4, /takes at least 1 argument/],
    ["snapshot without a file", [], ["snapshot"], 4, /takes 1 to 2 argument/],
    ["a snapshot interval under 1s", [], ["snapshot s.json 10ms"], 4, /at least 1s/],
    [
      "snapshot with objects",
      [],
      ["objects a.yaml", "snapshot s.json"],
      3,
      /'snapshot' keeps what the API said/,
    ],
    ["an option given twice", [], ["ttl 5", "pods insecure", "ttl 6"], 6, /'ttl' is given twice/],
    [
      "objects and endpoint",
      [],
      ["objects a.yaml", "endpoint https://a"],
      3,
      /'objects' reads the cluster from files/,
    ],
    ["only reverse zones", ["in-addr.arpa"], [], 3, /needs a zone that is not a reverse zone/],
  ];
  for (const [what, args, lines, line, pattern] of bad) {
    it(`rejects ${what} at its line`, () => {
      const d = k8s(args, lines);
      if (what === "a zone outside the block") {
        assert.throws(() => parseConfig(d, { zones: ["cluster.local."], root: ROOT }), pattern);
        return;
      }
      configError(d, line, pattern);
    });
  }

  it("rejects a block after an option", () => {
    const d = directive("kubernetes", [], [directive("ttl", ["5"], [directive("x")], 4)]);
    configError(d, 4, /'ttl' takes no block/);
  });
});

describe("objects files", () => {
  it("reads a List of mixed kinds, skips kinds DNS does not use, and derives namespaces", () => {
    const path = file(
      "list.yaml",
      `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: a, namespace: ns1}
  spec: {clusterIP: 10.96.0.1, ports: [{name: http, port: 80}]}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: a, namespace: ns1}
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  status: {podIP: 10.244.0.1}
`,
    );
    const objs = loadObjects([path]);
    assert.equal(objs.get("services")!.length, 1);
    assert.equal(objs.get("pods")![0].metadata.namespace, "default", "like kubectl, no namespace is default");
    assert.deepEqual(
      objs.get("namespaces")!.map((n) => n.metadata.name),
      ["default", "ns1"],
    );
  });

  it("reads multi-document YAML and JSON, and keeps Namespace objects when there are some", () => {
    const yaml = file(
      "multi.yaml",
      `kind: Namespace
apiVersion: v1
metadata: {name: only}
---
kind: ServiceList
apiVersion: v1
items:
- {kind: Service, apiVersion: v1, metadata: {name: s, namespace: other}, spec: {type: ExternalName, externalName: a.example}}
---
`,
    );
    const json = file(
      "dump.json",
      JSON.stringify({
        apiVersion: "v1",
        kind: "List",
        items: [
          { apiVersion: "v1", kind: "Endpoints", metadata: { name: "s", namespace: "other" }, subsets: [] },
        ],
      }),
    );
    const objs = loadObjects([yaml, json]);
    assert.deepEqual(
      objs.get("namespaces")!.map((n) => n.metadata.name),
      ["only"],
    );
    assert.equal(objs.get("services")!.length, 1);
    assert.equal(objs.get("endpoints")!.length, 1);
  });

  const broken: [string, string, number, RegExp][] = [
    ["bad YAML", "kind: List\nitems:\n  - {a: [1,}\n", 3, /document 1: /],
    ["a scalar document", "kind: Namespace\nmetadata: {name: a}\n---\n42\n", 4, /document 2: not an object/],
    [
      "an object without kind",
      "kind: List\nitems:\n- metadata: {name: a}\n",
      3,
      /document 1 item 1: no 'kind'/,
    ],
    [
      "a Service without a name",
      "kind: List\nitems:\n- kind: Namespace\n  metadata: {name: a}\n- kind: Service\n  metadata: {namespace: a}\n",
      5,
      /document 1 item 2: Service without metadata.name/,
    ],
    [
      "ports that are not a list",
      "kind: Service\nmetadata: {name: a}\nspec: {ports: 80}\n",
      1,
      /Service a: spec.ports is not a list/,
    ],
    [
      "a port without a number",
      "kind: Service\nmetadata: {name: a}\nspec:\n  ports: [{name: x}]\n",
      1,
      /spec.ports\[0\] has no port number/,
    ],
    // The API server takes 1 to 65535 only; the store's tables cannot hold a negative or fractional one.
    [
      "a port number out of range",
      "kind: Service\nmetadata: {name: a}\nspec:\n  ports: [{port: 80}, {port: -1}]\n",
      1,
      /Service a: spec.ports\[1\].port -1 is not a port number \(1 to 65535\)/,
    ],
    [
      "a fractional port number",
      "kind: Service\nmetadata: {name: a}\nspec:\n  ports: [{port: 80.5}]\n",
      1,
      /spec.ports\[0\].port 80.5 is not a port number/,
    ],
    [
      "an ExternalName without a name",
      "kind: Service\nmetadata: {name: a}\nspec: {type: ExternalName}\n",
      1,
      /without spec.externalName/,
    ],
    [
      "a slice without addressType",
      "kind: EndpointSlice\nmetadata: {name: a}\nendpoints: []\n",
      1,
      /no addressType/,
    ],
    ["items that are not a list", "kind: List\nitems: {a: 1}\n", 1, /'items' is not a list/],
    // Found by the soak's control-plane part: these were taken, and the address silently dropped.
    [
      "a cluster IP that is no address",
      "kind: Service\nmetadata: {name: a}\nspec: {clusterIP: 10.96.0.500}\n",
      1,
      /Service a: spec.clusterIP '10.96.0.500' is not an IP address/,
    ],
    [
      "cluster IPs that are no addresses",
      "kind: Service\nmetadata: {name: a}\nspec: {clusterIPs: [10.96.0.5, fd00::zz]}\n",
      1,
      /Service a: spec.clusterIPs\[1\] 'fd00::zz' is not an IP address/,
    ],
    [
      "an endpoint address that is not of the slice's type",
      "kind: EndpointSlice\nmetadata: {name: a}\naddressType: IPv4\nendpoints: [{addresses: [fd00::1]}]\n",
      1,
      /EndpointSlice a: endpoints\[0\].addresses\[0\] 'fd00::1' is not an IPv4 address/,
    ],
    [
      "an endpoint without addresses",
      "kind: EndpointSlice\nmetadata: {name: a}\naddressType: IPv4\nendpoints: [{hostname: x}]\n",
      1,
      /EndpointSlice a: endpoints\[0\] has no addresses/,
    ],
    [
      "labels that are not a map",
      "kind: Pod\nmetadata: {name: a, labels: [x]}\n",
      1,
      /Pod a: metadata.labels is not a map/,
    ],
    [
      "a spec that is not a map",
      "kind: Service\nmetadata: {name: a}\nspec: [x]\n",
      1,
      /Service a: spec is not a map/,
    ],
    [
      "subsets that are not a list",
      "kind: Endpoints\nmetadata: {name: a}\nsubsets: {}\n",
      1,
      /Endpoints a: subsets is not a list/,
    ],
    [
      "a ServiceImport without spec",
      "kind: ServiceImport\nmetadata: {name: a}\n",
      1,
      /ServiceImport a: no spec/,
    ],
    [
      "a ServiceImport of another type",
      "kind: ServiceImport\nmetadata: {name: a}\nspec: {type: LoadBalancer}\n",
      1,
      /ServiceImport a: spec.type is not ClusterSetIP or Headless/,
    ],
  ];
  for (const [what, text, line, pattern] of broken) {
    it(`names the file, line and document of ${what}`, () => {
      const path = file(`broken-${what.replaceAll(" ", "-")}.yaml`, text);
      assert.throws(
        () => loadObjects([path]),
        (err: unknown) => {
          assert.ok(err instanceof ObjectsError, String(err));
          assert.equal(err.code, "KUBE_ERR_OBJECTS");
          assert.equal(err.file, path);
          assert.equal(err.line, line, err.message);
          assert.ok(err.message.startsWith(`${path}:${line}: `), err.message);
          assert.match(err.message, pattern);
          return true;
        },
      );
    });
  }

  it("the source delivers one list per kind, filtered by namespaces and labels", async () => {
    const lists: string[] = [];
    const applied: string[] = [];
    const sink: Sink = {
      listStart: (k) => void lists.push(`start ${k}`),
      apply: (k, t, o) => void applied.push(`${k} ${t} ${o.metadata.namespace ?? ""}/${o.metadata.name}`),
      listDone: (k) => void lists.push(`done ${k}`),
    };
    const src = objectsSource({
      files: [DEMO],
      kinds: ["services", "pods", "namespaces"],
      namespaces: ["default", "web"],
      labelSelector: (l) => l?.app === "nginx",
    });
    await src.start(sink);
    assert.deepEqual(lists, [
      "start services",
      "done services",
      "start pods",
      "done pods",
      "start namespaces",
      "done namespaces",
    ]);
    const services = applied.filter((a) => a.startsWith("services"));
    assert.deepEqual(services, ["services ADDED default/nginx", "services ADDED web/nginx"]);
    assert.ok(applied.includes("pods ADDED web/nginx-0"), "labels do not filter pods");
    assert.ok(!applied.some((a) => a.includes("kube-system")));
    assert.equal(src.describe(), `file ${DEMO}`);
    assert.equal(src.counts().services, 7);
    await src.stop();
  });

  it("lets go of the file's objects once it handed them over (the store keeps slim records only)", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    let held: WeakRef<object> | undefined;
    const sink: Sink = {
      listStart: () => {},
      apply: (_k, _t, o) => void (held ??= new WeakRef(o)),
      listDone: () => {},
    };
    const src = objectsSource({ files: [DEMO], kinds: ["services"] });
    await src.start(sink);
    for (let i = 0; i < 3 && held?.deref() !== undefined; i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    assert.equal(held?.deref(), undefined, "an object the sink did not keep is collected");
    assert.equal(src.counts().services, 7, "its counts stay");
  });
});

/** Runs setup and the start-up hooks; returns the handler over `next`. */
async function started(lines: string[], args = ["cluster.local", "in-addr.arpa", "ip6.arpa"]) {
  const f = fakeContext({ zones: ["."], root: ROOT });
  const plugin = (await setup(k8s(args, lines), f.ctx)) as Plugin;
  assert.ok(plugin);
  const next = recordingNext();
  const handler = plugin(next);
  return { f, handler, next };
}

describe("setup: the plugin over the demo cluster", () => {
  it("is ready once synced and its heap compacted, not before; the sync drops the whole answer cache", async () => {
    const f = fakeContext({ zones: ["."], root: ROOT });
    const plugin = await setup(k8s(["cluster.local"], ["objects zones/demo-cluster.yaml"]), f.ctx);
    assert.ok(plugin);
    assert.equal(f.ready(), false);
    assert.ok(f.readyChecks.has("kubernetes"));
    const compactions = gcStats.compactions;
    for (const fn of f.startup) await fn();
    assert.equal(f.invalidations, 1);
    // Synced, but the collection that gives back the LIST's heap pauses the process: it must run
    // before /ready lets traffic in, and before the DNS listeners open, not while traffic is coming.
    assert.equal(f.ready(), false);
    assert.equal(gcStats.compactions, compactions);
    assert.equal(f.holds.length, 1);
    await f.holds[0]();
    assert.equal(f.ready(), true);
    assert.equal(gcStats.compactions, compactions + 1);
    const synced = f.logs.find((l) => l.msg === "synced" && l.plugin === "kubernetes");
    assert.ok(synced, "logged once ready");
    assert.equal(typeof synced.compactMs, "number");
    await f.stop();
  });

  it("in a reload's new instance, does not compact: the old instance is serving meanwhile", async () => {
    const f = fakeContext({ zones: ["."], root: ROOT, takesOver: true });
    const plugin = await setup(k8s(["cluster.local"], ["objects zones/demo-cluster.yaml"]), f.ctx);
    assert.ok(plugin);
    const compactions = gcStats.compactions;
    await f.start();
    for (let i = 0; i < 500 && !f.ready(); i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(f.ready(), true);
    assert.equal(gcStats.compactions, compactions, "a pause here would stall every query being answered");
    const synced = f.logs.find((l) => l.msg === "synced" && l.plugin === "kubernetes");
    assert.equal(synced?.compactMs, undefined);
    await f.stop();
  });

  it("answers its zones with aa, refuses other classes there, passes other names on", async () => {
    const { f, handler, next } = await started(["objects zones/demo-cluster.yaml"]);
    await f.start();
    const r = await handler.serve(makeRequest("nginx.default.svc.cluster.local", Type.A));
    assert.equal(r.rcode, Rcode.NOERROR);
    assert.equal(r.aa, true);
    assert.deepEqual(
      r.answer.map((rr) => rr.data),
      [{ type: Type.A, address: "10.102.97.154" }],
    );
    const other = await handler.serve(makeRequest("example.org", Type.A));
    assert.equal(other.rcode, Rcode.REFUSED, "from next");
    const chaos = await handler.serve(
      makeRequest("nginx.default.svc.cluster.local", Type.TXT, { qclass: Class.CH }),
    );
    assert.equal(chaos.rcode, Rcode.REFUSED);
    assert.equal(next.calls.length, 1, "a class other than IN is refused here, not passed on");
    const axfr = await handler.serve(makeRequest("cluster.local", Type.AXFR));
    assert.equal(axfr.rcode, Rcode.REFUSED);
    assert.equal(next.calls.length, 1, "a transfer is refused here, not passed on");
  });

  it("falls through on NXDOMAIN only in the fallthrough zones", async () => {
    const { f, handler, next } = await started([
      "objects zones/demo-cluster.yaml",
      "fallthrough in-addr.arpa",
    ]);
    await f.start();
    const nx = await handler.serve(makeRequest("nope.default.svc.cluster.local", Type.A));
    assert.equal(nx.rcode, Rcode.NXDOMAIN);
    assert.equal(next.calls.length, 0);
    const rev = await handler.serve(makeRequest("9.9.9.9.in-addr.arpa", Type.PTR));
    assert.equal(rev.rcode, Rcode.REFUSED, "passed to next");
    assert.equal(next.calls.length, 1);
    const ptr = await handler.serve(makeRequest("10.0.0.10.in-addr.arpa", Type.PTR));
    assert.equal(ptr.rcode, Rcode.NOERROR);
    assert.equal(next.calls.length, 1);
  });

  it("resolves an ExternalName target through the server, one level deeper", async () => {
    const asked: [string, number, number | undefined][] = [];
    const f = fakeContext({
      zones: ["."],
      root: ROOT,
      lookup: (name, qtype, depth) => {
        asked.push([name, qtype, depth]);
        const reply = replyTo(makeRequest(name, qtype).msg);
        reply.answer.push(parseRRText("www.iij.ad.jp. 300 IN A 202.232.2.180"));
        return Promise.resolve(reply);
      },
    });
    const plugin = (await setup(
      k8s(["cluster.local"], ["objects zones/demo-cluster.yaml"]),
      f.ctx,
    )) as Plugin;
    await f.start();
    const r = await plugin(recordingNext()).serve(makeRequest("iij.default.svc.cluster.local", Type.A));
    assert.deepEqual(asked, [["www.iij.ad.jp.", Type.A, 1]]);
    assert.deepEqual(
      r.answer.map((rr) => rr.type),
      [Type.CNAME, Type.A],
    );
  });

  it("a missing or broken objects file fails setup with the Corefile's line", async () => {
    const f = fakeContext({ zones: ["."], root: ROOT });
    await assert.rejects(
      async () => setup(k8s([], ["objects zones/none.yaml"]), f.ctx),
      (err: unknown) => err instanceof ConfigError && err.line === 3 && /ENOENT/.test(err.message),
    );
    const broken = file("broken.yaml", "kind: List\nitems: [\n");
    await assert.rejects(
      async () => setup(k8s([], [`objects ${broken}`]), f.ctx),
      (err: unknown) => err instanceof ConfigError && err.message.includes(`${broken}:`),
    );
  });

  it("builds an API source without connecting, and rejects a kubeconfig that does not exist", async () => {
    const f = fakeContext({ zones: ["."], root: ROOT });
    const plugin = await setup(k8s([], ["endpoint http://127.0.0.1:1"]), f.ctx);
    assert.ok(plugin);
    assert.equal(f.ready(), false);
    await assert.rejects(
      async () =>
        setup(k8s([], [`kubeconfig ${join(tmp, "missing.conf")}`]), fakeContext({ zones: ["."] }).ctx),
      ConfigError,
    );
  });
});

describe("handler: before the first sync", () => {
  function unsynced(startupTimeoutMs: number, startedAt: number, fallthrough?: string[]) {
    const store = new Store({ zones: ZONES, waitFor: ["services"] });
    const records = new Records(store, { zones: ZONES, ttl: 5, pods: "disabled" });
    const lookup = () => Promise.reject(new Error("no lookups here"));
    const gate = new StartupGate({ store, timeoutMs: startupTimeoutMs, startedAt: () => startedAt });
    const h: Handler = kubernetesHandler({ store, records, gate, lookup, fallthrough }, recordingNext());
    const sync = (objs: [Kind, KObject][] = []) => {
      store.listStart("services");
      for (const [k, o] of objs) store.apply(k, "ADDED", o);
      store.listDone("services");
    };
    return { h, sync };
  }

  it("holds a query until the sync and then answers it", async () => {
    const { h, sync } = unsynced(60_000, Date.now());
    const pending = h.serve(makeRequest("a.default.svc.cluster.local", Type.A));
    sync([
      [
        "services",
        {
          kind: "Service",
          metadata: { name: "a", namespace: "default" },
          spec: { clusterIP: "10.96.0.1" },
        } as KObject,
      ],
    ]);
    const r = await pending;
    assert.equal(r.rcode, Rcode.NOERROR);
    assert.equal(r.answer.length, 1);
  });

  it("answers SERVFAIL with the zone's SOA at the deadline, and at once after it", async () => {
    const waited = unsynced(20, Date.now());
    const r1 = await waited.h.serve(makeRequest("a.default.svc.cluster.local", Type.A));
    assert.equal(r1.rcode, Rcode.SERVFAIL);
    // CoreDNS's BackendError: authoritative, the SOA of the zone in the authority section.
    assert.equal(r1.aa, true);
    assert.deepEqual(
      r1.authority.map((rr) => [rr.name, rr.type]),
      [["cluster.local.", Type.SOA]],
    );
    const late = unsynced(5000, Date.now() - 10_000);
    const r2 = await late.h.serve(makeRequest("1.0.96.10.in-addr.arpa", Type.PTR));
    assert.equal(r2.rcode, Rcode.SERVFAIL);
    assert.deepEqual(
      r2.authority.map((rr) => [rr.name, rr.type]),
      [["in-addr.arpa.", Type.SOA]],
    );
  });

  it("passes a name in a fallthrough zone on once the deadline passed unsynced", async () => {
    const late = unsynced(5000, Date.now() - 10_000, ["in-addr.arpa."]);
    const r = await late.h.serve(makeRequest("1.0.96.10.in-addr.arpa", Type.PTR));
    assert.equal(r.rcode, Rcode.REFUSED, "the next plugin (the recorder) answered");
    const own = await late.h.serve(makeRequest("a.default.svc.cluster.local", Type.A));
    assert.equal(own.rcode, Rcode.SERVFAIL);
  });

  it("marks verified pod answers in another spelling private (not cached)", async () => {
    const pods = file(
      "pods.yaml",
      "kind: Pod\nmetadata: {name: p, namespace: default}\nstatus: {phase: Running, podIP: 'fd00::5'}\n",
    );
    const { f, handler } = await started([`objects ${pods}`, "pods verified"]);
    await f.start();
    const short = makeRequest("fd00--5.default.pod.cluster.local", Type.AAAA);
    assert.equal((await handler.serve(short)).answer.length, 1);
    assert.equal(short.cache.private, false);
    const long = makeRequest("fd00-0-0-0-0-0-0-5.default.pod.cluster.local", Type.AAAA);
    assert.equal((await handler.serve(long)).answer.length, 1);
    assert.equal(long.cache.private, true);
    const elsewhere = makeRequest("fd00--5.kube-system.pod.cluster.local", Type.AAAA);
    assert.equal((await handler.serve(elsewhere)).rcode, Rcode.NXDOMAIN);
  });
});
