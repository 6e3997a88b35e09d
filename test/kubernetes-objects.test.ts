// The kubernetes plugin end to end: a real clusterdns process serving the demo cluster from
// zones/demo-cluster.yaml (the `objects` source), asked with dig over UDP and TCP.

import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startServer, ROOT, type RunningServer } from "./helpers/server.ts";
import { dig, type DigResult } from "./helpers/dig.ts";
import { execFile } from "node:child_process";
import { join } from "node:path";

// A second block answers the ExternalName's target, so the CNAME is followed inside the server.
const COREFILE = `cluster.local in-addr.arpa ip6.arpa {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        objects ${ROOT}/zones/demo-cluster.yaml
    }
}
iij.ad.jp {
    hosts {
        202.232.2.180 www.iij.ad.jp
        reload 0
    }
}
`;

const SOA =
  /^cluster\.local\. 5 IN SOA ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 5$/;

let srv: RunningServer;
before(async () => {
  srv = await startServer(COREFILE);
});
after(async () => {
  assert.equal(await srv.stop(), 0);
});

const q = (name: string, type = "A", ...opts: string[]) => dig(srv.port, name, type, ...opts);

/** `clusterdns resolve ARGS`, as a user runs it. */
function runResolve(args: string[]): Promise<{ stdout: string; code: number | null }> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [join(ROOT, "bin", "clusterdns"), "resolve", ...args],
      { timeout: 20_000 },
      (_e, stdout) => done({ stdout, code: child.exitCode }),
    );
  });
}

function positive(r: DigResult, answer: string[], additional: string[] = []): void {
  assert.equal(r.status, "NOERROR", r.text);
  assert.ok(r.flags.includes("aa"), "authoritative");
  assert.deepEqual([...r.answer].sort(), [...answer].sort(), r.text);
  assert.deepEqual(r.authority, []);
  assert.deepEqual([...r.additional].sort(), [...additional].sort(), r.text);
}

function negative(r: DigResult, status: "NXDOMAIN" | "NOERROR"): void {
  assert.equal(r.status, status, r.text);
  assert.ok(r.flags.includes("aa"));
  assert.deepEqual(r.answer, []);
  assert.equal(r.authority.length, 1, r.text);
  assert.match(r.authority[0], SOA);
}

describe("the demo cluster over dig", () => {
  const addresses: [string, string[]][] = [
    ["kubernetes.default.svc.cluster.local", ["10.0.0.1"]],
    ["kube-dns.kube-system.svc.cluster.local", ["10.0.0.10"]],
    ["nginx.default.svc.cluster.local", ["10.102.97.154"]],
    ["my-nginx.default.svc.cluster.local", ["10.104.89.245"]],
    ["nginx.web.svc.cluster.local", ["192.168.136.206", "192.168.76.144"]],
    ["nginx-0.nginx.web.svc.cluster.local", ["192.168.136.206"]],
    ["nginx-1.nginx.web.svc.cluster.local", ["192.168.76.144"]],
    ["static-web.default.svc.cluster.local", ["202.232.2.180"]],
    ["202-232-2-180.static-web.default.svc.cluster.local", ["202.232.2.180"]],
    ["10-244-4-3.my-nginx.default.svc.cluster.local", ["10.244.4.3"]],
    ["ns.dns.cluster.local", ["10.0.0.10"]],
  ];
  for (const [name, ips] of addresses) {
    it(`${name} A`, async () => {
      positive(
        await q(name),
        ips.map((ip) => `${name}. 5 IN A ${ip}`),
      );
    });
  }

  it("the same answers over TCP, and in the client's spelling", async () => {
    const r = await q("NGINX.Default.svc.Cluster.Local", "A", "+tcp");
    positive(r, ["NGINX.Default.svc.Cluster.Local. 5 IN A 10.102.97.154"]);
  });

  it("SRV for a cluster IP service: one record to the service, its address in additional", async () => {
    positive(
      await q("_http._tcp.nginx.default.svc.cluster.local", "SRV"),
      ["_http._tcp.nginx.default.svc.cluster.local. 5 IN SRV 0 100 80 nginx.default.svc.cluster.local."],
      ["nginx.default.svc.cluster.local. 5 IN A 10.102.97.154"],
    );
    positive(
      await q("_dns._udp.kube-dns.kube-system.svc.cluster.local", "SRV"),
      [
        "_dns._udp.kube-dns.kube-system.svc.cluster.local. 5 IN SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.",
      ],
      ["kube-dns.kube-system.svc.cluster.local. 5 IN A 10.0.0.10"],
    );
  });

  it("SRV for the StatefulSet's headless service: one record per pod, with the pod names", async () => {
    positive(
      await q("_web._tcp.nginx.web.svc.cluster.local", "SRV"),
      [
        "_web._tcp.nginx.web.svc.cluster.local. 5 IN SRV 0 50 80 nginx-0.nginx.web.svc.cluster.local.",
        "_web._tcp.nginx.web.svc.cluster.local. 5 IN SRV 0 50 80 nginx-1.nginx.web.svc.cluster.local.",
      ],
      [
        "nginx-0.nginx.web.svc.cluster.local. 5 IN A 192.168.136.206",
        "nginx-1.nginx.web.svc.cluster.local. 5 IN A 192.168.76.144",
      ],
    );
  });

  it("the ExternalName is a CNAME, followed when the server answers the target", async () => {
    positive(await q("iij.default.svc.cluster.local", "A"), [
      "iij.default.svc.cluster.local. 5 IN CNAME www.iij.ad.jp.",
      "www.iij.ad.jp. 3600 IN A 202.232.2.180",
    ]);
    positive(await q("iij.default.svc.cluster.local", "CNAME"), [
      "iij.default.svc.cluster.local. 5 IN CNAME www.iij.ad.jp.",
    ]);
  });

  const reverse: [string, string, string][] = [
    ["10.0.0.10", "10.0.0.10.in-addr.arpa.", "kube-dns.kube-system.svc.cluster.local."],
    ["10.102.97.154", "154.97.102.10.in-addr.arpa.", "nginx.default.svc.cluster.local."],
    ["192.168.76.144", "144.76.168.192.in-addr.arpa.", "nginx-1.nginx.web.svc.cluster.local."],
    ["10.244.4.3", "3.4.244.10.in-addr.arpa.", "10-244-4-3.my-nginx.default.svc.cluster.local."],
    ["202.232.2.180", "180.2.232.202.in-addr.arpa.", "202-232-2-180.static-web.default.svc.cluster.local."],
  ];
  for (const [ip, owner, target] of reverse) {
    it(`dig -x ${ip}`, async () => {
      const r = await dig(srv.port, "-x", ip);
      assert.equal(r.status, "NOERROR", r.text);
      assert.deepEqual(r.answer, [`${owner} 5 IN PTR ${target}`]);
    });
  }

  it("dig -x of an address the cluster does not use is NXDOMAIN with the reverse zone's SOA", async () => {
    const r = await dig(srv.port, "-x", "192.0.2.1");
    assert.equal(r.status, "NXDOMAIN");
    assert.match(
      r.authority[0],
      /^in-addr\.arpa\. 5 IN SOA ns\.dns\.in-addr\.arpa\. hostmaster\.in-addr\.arpa\. /,
    );
  });

  it("the zone apex: SOA, NS with the name server's address, dns-version", async () => {
    const soa = await q("cluster.local", "SOA");
    assert.equal(soa.answer.length, 1);
    assert.match(soa.answer[0], SOA);
    positive(
      await q("cluster.local", "NS"),
      ["cluster.local. 5 IN NS ns.dns.cluster.local."],
      ["ns.dns.cluster.local. 5 IN A 10.0.0.10"],
    );
    positive(await q("dns-version.cluster.local", "TXT"), [
      'dns-version.cluster.local. 28800 IN TXT "1.1.0"',
    ]);
  });

  const nxdomain = [
    "nope.default.svc.cluster.local",
    "nginx.nowhere.svc.cluster.local",
    "nowhere.svc.cluster.local",
    "nginx-2.nginx.web.svc.cluster.local",
    "_https._tcp.nginx.default.svc.cluster.local",
    "foo.cluster.local",
    "192-168-76-141.default.pod.cluster.local",
  ];
  for (const name of nxdomain) {
    it(`${name} is NXDOMAIN with the SOA`, async () => negative(await q(name), "NXDOMAIN"));
  }

  const nodata: [string, string][] = [
    ["nginx.default.svc.cluster.local", "AAAA"],
    ["nginx.default.svc.cluster.local", "TXT"],
    ["default.svc.cluster.local", "A"],
    ["kube-public.svc.cluster.local", "A"],
    ["svc.cluster.local", "A"],
    ["_tcp.nginx.default.svc.cluster.local", "SRV"],
    ["nginx-0.nginx.web.svc.cluster.local", "SRV"],
    ["cluster.local", "A"],
  ];
  for (const [name, type] of nodata) {
    it(`${name} ${type} is NODATA with the SOA`, async () => negative(await q(name, type), "NOERROR"));
  }
  it("explains, on request (EDNS option 65430), which objects an answer came from, or why there is none", async () => {
    const txt = async (name: string) => {
      const r = await q(name, "A", "+ednsopt=65430");
      return r.additional.filter((l) => l.includes(" TXT ")).map((l) => l.replace(/^.*? 0 IN TXT /, ""));
    };
    assert.deepEqual(await txt("nginx-0.nginx.web.svc.cluster.local"), [
      '"clusterdns: Service web/nginx: headless"',
      "\"clusterdns: EndpointSlice web/nginx-ljp5w: 192.168.136.206 as 'nginx-0' (ready)\"",
    ]);
    assert.deepEqual(await txt("nginx.default.svc.cluster.local"), [
      '"clusterdns: Service default/nginx: ClusterIP 10.102.97.154"',
    ]);
    assert.deepEqual(await txt("nope.default.svc.cluster.local"), [
      "\"clusterdns: no Service 'nope' in namespace 'default'\"",
    ]);
    assert.deepEqual(await txt("nginx.nowhere.svc.cluster.local"), [
      "\"clusterdns: namespace 'nowhere' does not exist (or its labels do not match)\"",
    ]);
    // Without the option the same name has no TXT, also right after an explained answer (no cache mix-up).
    const plain = await q("nginx.default.svc.cluster.local");
    assert.equal(plain.additional.length, 0, plain.text);
  });
  it("clusterdns resolve shows a pod's queries for a short name, then which objects answered", async () => {
    const { stdout, code } = await runResolve([
      "nginx-0.nginx",
      "--namespace",
      "web",
      "--server",
      `127.0.0.1:${srv.port}`,
    ]);
    assert.equal(code, 0, stdout);
    const lines = stdout.split("\n");
    const queries = lines
      .filter((l) => /^\s+\d+\s/.test(l))
      .map((l) => l.trim().split(/\s+/).slice(1, 3).join(" "));
    assert.deepEqual(queries, [
      "A nginx-0.nginx.web.svc.cluster.local.",
      "AAAA nginx-0.nginx.web.svc.cluster.local.",
    ]);
    assert.ok(lines.includes("result: nginx-0.nginx.web.svc.cluster.local: 192.168.136.206"), stdout);
    const at = lines.indexOf("explain nginx-0.nginx.web.svc.cluster.local. (from the server):");
    assert.ok(at > 0, stdout);
    assert.deepEqual(lines.slice(at + 1, at + 3), [
      "  Service web/nginx: headless",
      "  EndpointSlice web/nginx-ljp5w: 192.168.136.206 as 'nginx-0' (ready)",
    ]);
  });
});
