// dnssec through real sockets, checked by real validators: a clusterdns process signing a zone file
// and the cluster zone (the demo cluster's objects), keys made by BIND's dnssec-keygen, and the
// answers validated by BIND's delv (with the zone's key as its trust anchor) and by Unbound (a
// validating resolver stubbing the zones to clusterdns: the AD bit). Positive answers, NODATA and
// NXDOMAIN (the black lie) of each zone; a reply with one signature octet flipped must fail.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer, ROOT, type RunningServer } from "./helpers/server.ts";
import { dig, digUntil } from "./helpers/dig.ts";
import { freePort } from "./helpers/free-port.ts";
import { httpGet } from "./helpers/http-get.ts";
import { sample } from "./helpers/metrics.ts";
import { startApiServer, type TestApiServer } from "./k8s/api-server.ts";
import { writeKubeconfig } from "./k8s/kubeconfig.ts";
import { namespace, service } from "./k8s/objects.ts";
import { zoneText } from "./helpers/zone-text.ts";
import { startUnboundValidator, type UnboundValidator } from "./upstream/unbound-validator.ts";
import { anchorFile, delv, dnskeyLine, keygen, tamperingRelay } from "./helpers/dnssec-tools.ts";

const ZONE = zoneText(
  "example.test",
  "www 120 IN A 192.0.2.33",
  "www 120 IN A 192.0.2.34",
  "alias 60 IN CNAME www",
  'txt 60 IN TXT "hello" "World"',
  "a.b.deep 60 IN A 192.0.2.9",
  "*.wild 60 IN TXT any",
);

const corefile = (keys: { file: string[]; cluster: string[] }) => `example.test {
    dnssec {
        key file ${keys.file.join(" ")}
    }
    cache 30
    file db.example.test
}
cluster.local {
    dnssec {
        key file ${keys.cluster.join(" ")}
        cache_capacity 100
    }
    kubernetes cluster.local {
        objects ${join(ROOT, "zones", "demo-cluster.yaml")}
    }
}
`;

describe("dnssec validated by delv and unbound", () => {
  let dir: string;
  let srv: RunningServer;
  let unbound: UnboundValidator;
  const anchors: Record<string, string> = {};
  const ksks: Record<string, string> = {};

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "clusterdns-dnssec-"));
    // example.test: a KSK (ECDSA P-256) and a ZSK (Ed25519); cluster.local: one CSK (RSASHA256).
    ksks["example.test."] = keygen(dir, "example.test", "ECDSAP256SHA256", true);
    const zsk = keygen(dir, "example.test", "ED25519");
    ksks["cluster.local."] = keygen(dir, "cluster.local", "RSASHA256");
    for (const [zone, base] of Object.entries(ksks)) anchors[zone] = anchorFile(dir, base);
    srv = await startServer(
      corefile({
        file: [`${ksks["example.test."]}.key`, zsk],
        cluster: [`${ksks["cluster.local."]}.private`],
      }),
      { files: { "db.example.test": ZONE } },
    );
    unbound = await startUnboundValidator(
      Object.fromEntries(Object.entries(ksks).map(([z, base]) => [z, dnskeyLine(base)])),
      srv.port,
    );
  });

  after(async () => {
    await unbound?.stop();
    await srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: [string, string, string, RegExp][] = [
    [
      "example.test.",
      "www.example.test",
      "A",
      /^; fully validated\nwww\.example\.test\.\s+\d+\s+IN\s+A\s+192\.0\.2\.3/m,
    ],
    [
      "example.test.",
      "alias.example.test",
      "A",
      /^; fully validated\nalias\.example\.test\.\s+\d+\s+IN\s+CNAME/m,
    ],
    [
      "example.test.",
      "example.test",
      "DNSKEY",
      /^; fully validated\nexample\.test\.\s+\d+\s+IN\s+DNSKEY\s+256 3 15/m,
    ],
    ["example.test.", "www.example.test", "TXT", /^; negative response, fully validated$/m],
    ["example.test.", "deep.example.test", "A", /^; negative response, fully validated$/m],
    ["example.test.", "nope.example.test", "A", /^; negative response, fully validated$/m],
    // A wildcard's answer is signed as the name asked (labels count it whole): no wildcard proof needed.
    [
      "example.test.",
      "x.y.wild.example.test",
      "TXT",
      /^; fully validated\nx\.y\.wild\.example\.test\.\s+\d+\s+IN\s+TXT\s+"any"/m,
    ],
    ["example.test.", "x.wild.example.test", "A", /^; negative response, fully validated$/m],
    [
      "cluster.local.",
      "kubernetes.default.svc.cluster.local",
      "A",
      /^; fully validated\nkubernetes\.default\.svc\.cluster\.local\.\s+5\s+IN\s+A\s/m,
    ],
    [
      "cluster.local.",
      "kubernetes.default.svc.cluster.local",
      "TXT",
      /^; negative response, fully validated$/m,
    ],
    ["cluster.local.", "nope.default.svc.cluster.local", "A", /^; negative response, fully validated$/m],
    ["cluster.local.", "cluster.local", "SOA", /^; fully validated\ncluster\.local\.\s+\d+\s+IN\s+SOA/m],
    // An NSEC question gets the name's black-lie NSEC as its answer (CoreDNS too), not an unsigned NODATA.
    [
      "example.test.",
      "www.example.test",
      "NSEC",
      /^; fully validated\nwww\.example\.test\.\s+\d+\s+IN\s+NSEC\s+\\000\.www\.example\.test\. A RRSIG NSEC$/m,
    ],
    [
      "example.test.",
      "nope.example.test",
      "NSEC",
      /^; fully validated\nnope\.example\.test\.\s+\d+\s+IN\s+NSEC\s+\\000\.nope\.example\.test\. RRSIG NSEC$/m,
    ],
    [
      "cluster.local.",
      "default.svc.cluster.local",
      "NSEC",
      /^; fully validated\ndefault\.svc\.cluster\.local\.\s+\d+\s+IN\s+NSEC\s/m,
    ],
  ];

  for (const [zone, name, type, want] of cases) {
    it(`delv validates ${name} ${type}`, async () => {
      const out = await delv(anchors[zone], zone, srv.port, name, type);
      assert.match(out, want, out);
    });
  }

  it("unbound validates (AD) a positive answer, a NODATA and a black-lie NXDOMAIN of each zone", async () => {
    const asks: [string, string, string, number][] = [
      ["www.example.test", "A", "NOERROR", 2],
      ["www.example.test", "TXT", "NOERROR", 0],
      ["nope.example.test", "A", "NOERROR", 0],
      ["kubernetes.default.svc.cluster.local", "A", "NOERROR", 1],
      ["kubernetes.default.svc.cluster.local", "TXT", "NOERROR", 0],
      ["nope.default.svc.cluster.local", "A", "NOERROR", 0],
    ];
    for (const [name, type, status, records] of asks) {
      const r = await dig(unbound.port, name, type, "+dnssec");
      assert.equal(r.status, status, `${name} ${type}\n${r.text}\n${unbound.log()}`);
      assert.ok(r.flags.includes("ad"), `${name} ${type}: no AD bit\n${r.text}\n${unbound.log()}`);
      assert.equal(r.answer.filter((l) => l.split(" ")[3] === type).length, records, r.text);
    }
  });

  it("the NSEC black lies: NXDOMAIN answers NOERROR with \\000.<name>, NODATA lists the name's types", async () => {
    // Records without their TTLs (cache counts them down).
    const rest = (lines: string[]) => lines.map((l) => l.split(" ").toSpliced(1, 1).join(" "));
    const nx = await dig(srv.port, "nope.example.test", "A", "+dnssec", "+norec");
    assert.equal(nx.status, "NOERROR");
    assert.ok(
      rest(nx.authority).includes("nope.example.test. IN NSEC \\000.nope.example.test. RRSIG NSEC"),
      nx.text,
    );
    const nodata = await dig(srv.port, "www.example.test", "TXT", "+dnssec", "+norec");
    assert.ok(
      rest(nodata.authority).includes("www.example.test. IN NSEC \\000.www.example.test. A RRSIG NSEC"),
      nodata.text,
    );
    const apex = await dig(srv.port, "example.test", "TXT", "+dnssec", "+norec");
    assert.ok(
      rest(apex.authority).includes("example.test. IN NSEC \\000.example.test. NS SOA RRSIG NSEC DNSKEY"),
      apex.text,
    );
  });

  it("a reply with one signature octet flipped fails validation (delv)", async () => {
    const relay = await tamperingRelay(srv.port);
    try {
      const out = await delv(
        anchors["example.test."],
        "example.test.",
        relay.port,
        "txt.example.test",
        "TXT",
      );
      assert.doesNotMatch(out, /fully validated/, out);
      assert.match(out, /resolution failed|verify failure|insecurity proof failed|no valid signature/i, out);
      // The same question straight from clusterdns validates.
      assert.match(
        await delv(anchors["example.test."], "example.test.", srv.port, "txt.example.test", "TXT"),
        /^; fully validated/m,
      );
    } finally {
      relay.close();
    }
  });

  it("the answer store keeps signed and unsigned replies apart, and cache's countdown stays within the RRSIG's TTL", async () => {
    for (let i = 0; i < 3; i++) {
      const signed = await dig(srv.port, "www.example.test", "A", "+dnssec");
      assert.ok(
        signed.answer.some((l) => l.includes(" RRSIG A ")),
        signed.text,
      );
      const plain = await dig(srv.port, "www.example.test", "A");
      assert.ok(!plain.text.includes("RRSIG"), plain.text);
      const noEdns = await dig(srv.port, "nope.example.test", "A", "+noedns");
      assert.equal(noEdns.status, "NXDOMAIN");
      assert.ok(!noEdns.text.includes("NSEC"), noEdns.text);
    }
    await new Promise((r) => setTimeout(r, 1100));
    const later = await dig(srv.port, "www.example.test", "A", "+dnssec");
    const sig = later.answer.find((l) => l.includes(" RRSIG A "))!.split(" ");
    const ttl = Number(later.answer[0].split(" ")[1]);
    assert.ok(ttl < 120 && ttl <= Number(sig[7]), later.text);
    assert.match(
      await delv(anchors["example.test."], "example.test.", srv.port, "www.example.test", "A"),
      /^; fully validated/m,
    );
  });

  it("dnssec-keygen's key tag is the one the RRSIGs carry", async () => {
    const tag = Number(/\+(\d+)$/.exec(ksks["cluster.local."])![1]);
    const r = await dig(srv.port, "cluster.local", "SOA", "+dnssec");
    const sig = r.answer.find((l) => l.includes(" RRSIG SOA "))!.split(" ");
    assert.equal(Number(sig[10]), tag, r.text);
    assert.ok(readdirSync(dir).length >= 6);
  });
});

describe("dnssec on the cluster zone from the API: answers signed anew when a Service changes", () => {
  let api: TestApiServer;
  let dir: string;
  let srv: RunningServer;
  let metrics: number;
  let anchor: string;

  before(async () => {
    api = await startApiServer();
    api.create("namespaces", namespace("default"));
    api.create("services", service("default", "web", { clusterIP: "10.96.0.20" }));
    dir = mkdtempSync(join(tmpdir(), "clusterdns-dnssec-api-"));
    const key = keygen(dir, "cluster.local", "ED25519");
    anchor = anchorFile(dir, key);
    metrics = await freePort();
    srv = await startServer(
      `cluster.local {
    prometheus 127.0.0.1:${metrics}
    cache 30
    dnssec {
        key file ${key}
    }
    kubernetes cluster.local {
        kubeconfig ${writeKubeconfig(dir, api.url)}
    }
}
`,
    );
    await digUntil(srv.port, "web.default.svc.cluster.local", "A", [
      "web.default.svc.cluster.local. 5 IN A 10.96.0.20",
    ]);
  });

  after(async () => {
    await srv?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The A records and RRSIGs of a DO=1 answer, once it holds `address` (or the status), ~10 s at most. */
  async function signedUntil(name: string, want: string): Promise<string[]> {
    let last = "";
    for (let i = 0; i < 200; i++) {
      const r = await dig(srv.port, name, "A", "+dnssec");
      const a = r.answer.filter((l) => l.split(" ")[3] === "A").map((l) => l.split(" ")[4]);
      last = a.length > 0 ? a.join(",") : r.status;
      if (last === want) return r.answer;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.fail(`${name}: still ${last}, want ${want}`);
  }

  it("a Service created, changed and deleted: the signed answer (kept by cache and the answer store) follows, and validates", async () => {
    const name = "later.default.svc.cluster.local";
    // No such Service yet: a black lie, NOERROR without an A record.
    const before = await dig(srv.port, name, "A", "+dnssec");
    assert.equal(before.status, "NOERROR");
    assert.ok(
      before.authority.some((l) => l.includes(" NSEC \\000.later.")),
      before.text,
    );
    assert.match(
      await delv(anchor, "cluster.local.", srv.port, name, "A"),
      /negative response, fully validated/,
    );
    api.create("services", service("default", "later", { clusterIP: "10.96.0.22" }));
    const created = await signedUntil(name, "10.96.0.22");
    assert.ok(created.some((l) => l.includes(" RRSIG A ")));
    assert.match(
      await delv(anchor, "cluster.local.", srv.port, name, "A"),
      /^; fully validated\n.*10\.96\.0\.22/m,
    );
    api.update("services", service("default", "later", { clusterIP: "10.96.0.23" }));
    await signedUntil(name, "10.96.0.23");
    assert.match(
      await delv(anchor, "cluster.local.", srv.port, name, "A"),
      /^; fully validated\n.*10\.96\.0\.23/m,
    );
    // The DO=0 answer moved with it, unsigned.
    const plain = await dig(srv.port, name, "A");
    assert.deepEqual(plain.answer, [`${name}. 5 IN A 10.96.0.23`]);
    api.remove("services", { name: "later", namespace: "default" });
    await signedUntil(name, "NOERROR");
  });

  it("the signature cache's series, as CoreDNS names them", async () => {
    await dig(srv.port, "web.default.svc.cluster.local", "A", "+dnssec", "+tcp");
    const text = (await httpGet(metrics, "/metrics")).body;
    const server = `dns://:${srv.port}`;
    assert.ok((sample(text, "coredns_dnssec_cache_misses_total", { server }) ?? 0) > 0, text);
    assert.ok((sample(text, "coredns_dnssec_cache_entries", { server, type: "signature" }) ?? 0) > 0, text);
    assert.notEqual(sample(text, "coredns_dnssec_cache_hits_total", { server }), undefined, text);
  });
});
