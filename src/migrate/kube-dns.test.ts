// The kube-dns ConfigMap's translation, on the cases kubeadm's own tests cover for the same translation
// (stub domains with several servers and ports, hostnames left out, IPv6, no data at all), and what
// clusterdns refuses (federations) or says instead of writing an empty `forward`.

import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configMapData, InputError } from "../corefile/configmap.ts";
import { translateKubeDns } from "./kube-dns.ts";
import { kubeadmCorefile } from "./kubeadm-corefile.ts";
import { parseCorefile } from "../corefile/parser.ts";

const ROOT = join(import.meta.dirname, "..", "..");

/** The kube-dns ConfigMap as kubectl prints it, with these data keys (values as JSON text). */
function configMap(data: Record<string, string>): string {
  const lines = Object.entries(data).map(([k, v]) => `  ${k}: '${v}'`);
  return [
    "apiVersion: v1",
    ...(lines.length > 0 ? ["data:", ...lines] : []),
    "kind: ConfigMap",
    "metadata:",
    "  name: kube-dns",
    "  namespace: kube-system",
    "",
  ].join("\n");
}

function translate(data: Record<string, string>, domain = "cluster.local") {
  const cm = configMapData({ name: "kube-dns.yaml", text: configMap(data) });
  assert.ok(cm, "a ConfigMap");
  return translateKubeDns(cm, "kube-dns.yaml", domain);
}

/** The blocks after kubeadm's main one: "KEY forward-args" each. */
function stubs(corefile: string): string[] {
  const blocks = parseCorefile(corefile, "out");
  return blocks.slice(1).map((b) => {
    assert.deepEqual(
      b.directives.map((d) => d.name),
      ["errors", "cache", "loop", "forward"],
    );
    const fwd = b.directives.find((d) => d.name === "forward")!;
    return `${b.keys.map((k) => k.text).join(" ")} ${fwd.args.map((t) => t.text).join(" ")}`;
  });
}

/** The main block's forward targets (after its `.`). */
function upstreams(corefile: string): string {
  const main = parseCorefile(corefile, "out")[0];
  assert.deepEqual(
    main.keys.map((k) => k.text),
    [".:53"],
  );
  return main.directives
    .find((d) => d.name === "forward")!
    .args.slice(1)
    .map((t) => t.text)
    .join(" ");
}

const upstream = '["8.8.8.8", "8.8.4.4"]';

describe("migrate kube-dns: stubDomains", () => {
  it("one block per domain, in the ConfigMap's order, servers and ports as written", () => {
    const t = translate({
      stubDomains: '{"foo.com" : ["1.2.3.4:5300","3.3.3.3"], "my.cluster.local" : ["2.3.4.5"]}',
      upstreamNameservers: upstream,
    });
    assert.deepEqual(stubs(t.corefile), [
      "foo.com:53 . 1.2.3.4:5300 3.3.3.3",
      "my.cluster.local:53 . 2.3.4.5",
    ]);
    assert.deepEqual(t.warnings, []);
  });

  it("hostnames are left out with a warning, and a domain left with none is dropped", () => {
    const t = translate({
      stubDomains:
        '{"bar.com" : ["1.2.3.4:5300","service.consul"], "my.cluster.local" : ["2.3.4.5"], "foo.com" : ["service.consul"]}',
      upstreamNameservers: upstream,
    });
    assert.deepEqual(stubs(t.corefile), ["bar.com:53 . 1.2.3.4:5300", "my.cluster.local:53 . 2.3.4.5"]);
    assert.equal(t.lossy, true, "a server and a domain are not carried over");
    assert.deepEqual(t.warnings, [
      "kube-dns.yaml:3: stubDomains: bar.com: service.consul is a hostname: left out (forward takes IP addresses only)",
      "kube-dns.yaml:3: stubDomains: foo.com: service.consul is a hostname: left out (forward takes IP addresses only)",
      "kube-dns.yaml:3: stubDomains: foo.com has no server left: the domain is left out",
    ]);
  });

  it("a placeholder for a server is named as one, and is not carried over", () => {
    const t = translate({ stubDomains: '{"consul.local": ["CUSTOM_DNS_POD_IP"]}' });
    assert.equal(t.lossy, true);
    assert.deepEqual(t.warnings, [
      "kube-dns.yaml:3: stubDomains: consul.local: CUSTOM_DNS_POD_IP is a placeholder, not an address: left out (put the server's IP address there)",
      "kube-dns.yaml:3: stubDomains: consul.local has no server left: the domain is left out",
    ]);
  });

  it("only hostnames: no stub block at all", () => {
    const t = translate({
      stubDomains: '{"foo.com" : ["service.consul"], "my.cluster.local" : ["ns.foo.com"]}',
      upstreamNameservers: upstream,
    });
    assert.deepEqual(stubs(t.corefile), []);
    assert.equal(t.warnings.length, 4);
  });

  it("none: kubeadm's Corefile, which is Corefile.example", () => {
    for (const data of [{}, { upstreamNameservers: "[]" }] as Record<string, string>[]) {
      const t = translate(data);
      assert.deepEqual(stubs(t.corefile), []);
      assert.equal(upstreams(t.corefile), "/etc/resolv.conf");
      const example = readFileSync(join(ROOT, "Corefile.example"), "utf8").replace(/^#.*\n/gm, "");
      assert.equal(t.corefile, example);
    }
  });
});

describe("migrate kube-dns: upstreamNameservers", () => {
  it("become forward . of the main block, in order", () => {
    const t = translate({
      stubDomains: '{"foo.com" : ["1.2.3.4:5300"], "my.cluster.local" : ["2.3.4.5"]}',
      upstreamNameservers: '["8.8.8.8", "8.8.4.4", "4.4.4.4"]',
    });
    assert.equal(upstreams(t.corefile), "8.8.8.8 8.8.4.4 4.4.4.4");
    assert.equal(upstreams(translate({ upstreamNameservers: upstream }).corefile), "8.8.8.8 8.8.4.4");
  });

  it("hostnames are left out; IPv6 with a port stays as written", () => {
    const t = translate({
      upstreamNameservers: '["service.consul", "ns.foo.com", "8.8.4.4", "ns.moo.com:53"]',
    });
    assert.equal(upstreams(t.corefile), "8.8.4.4");
    assert.equal(t.warnings.length, 3);
    assert.equal(
      upstreams(translate({ upstreamNameservers: '["[2003::1]:53", "8.8.4.4"]' }).corefile),
      "[2003::1]:53 8.8.4.4",
    );
  });

  it("only hostnames: an error, not the empty forward kubeadm wrote", () => {
    assert.throws(
      () => translate({ upstreamNameservers: '["service.consul", "ns.foo.com"]' }),
      (err: Error) =>
        err instanceof InputError &&
        /^kube-dns\.yaml:3: upstreamNameservers: every server is a hostname, .*list their addresses/.test(
          err.message,
        ),
    );
  });

  it("the cluster domain is kubeadm's setting, not the ConfigMap's", () => {
    const t = translate({}, "corp.internal");
    const main = parseCorefile(t.corefile, "out")[0];
    assert.deepEqual(
      main.directives.find((d) => d.name === "kubernetes")!.args.map((a) => a.text),
      ["corp.internal", "in-addr.arpa", "ip6.arpa"],
    );
    assert.match(t.corefile, /disable success corp\.internal\n/);
  });
});

describe("migrate kube-dns: what it refuses", () => {
  const refuses = (data: Record<string, string>, message: RegExp) =>
    assert.throws(
      () => translate(data),
      (err: Error) => err instanceof InputError && message.test(err.message),
    );

  it("federations: not supported, said so with the line and what stops resolving", () => {
    refuses(
      {
        federations: '{"foo" : "foo.feddomain.com", "bar" : "bar.feddomain.com"}',
        stubDomains: '{"foo.com": ["1.2.3.4"]}',
      },
      /^kube-dns\.yaml:3: federations: kube-dns federations are not supported by clusterdns .*FEDERATION\.NAMESPACE\.svc\.cluster\.local will not resolve$/,
    );
    // An empty map federates nothing.
    assert.deepEqual(stubs(translate({ federations: "{}" }).corefile), []);
  });

  it("values that are not JSON, or not the shape kube-dns reads, name the key's line", () => {
    refuses(
      { stubDomains: "{foo.com: [1.2.3.4]}" },
      /^kube-dns\.yaml:3: stubDomains is not JSON \(it stops at 'f' in column 2\): JSON keys are quoted/,
    );
    refuses(
      { upstreamNameservers: '["8.8.8.8",]' },
      /upstreamNameservers is not JSON .*no comma before a closing/,
    );
    refuses(
      { upstreamNameservers: '"8.8.8.8"' },
      /upstreamNameservers must be a list of "IP" or "IP:PORT" strings/,
    );
    refuses({ stubDomains: '["foo.com"]' }, /stubDomains must be a map of domain to servers/);
    refuses({ stubDomains: '{"foo.com": ["1.2.3.4:99999"]}' }, /foo\.com: '1\.2\.3\.4:99999': port '99999'/);
    refuses(
      { upstreamNameservers: '["8.8.8.8/32"]' },
      /'8\.8\.8\.8\/32' is not an IP address, IP:PORT or \[IPv6\]:PORT/,
    );
  });

  it("a key kube-dns does not read is named, not silently dropped (and nothing is lost)", () => {
    const t = translate({ logLevel: "2" });
    assert.deepEqual(t.warnings, [
      "kube-dns.yaml:3: logLevel is not a kube-dns setting (stubDomains, upstreamNameservers, federations): left out",
    ]);
    assert.equal(t.lossy, false);
  });

  it("typographic quotes: one line, with the file's line where parsing stops and what to do", () => {
    const text = [
      "apiVersion: v1", // 1
      "kind: ConfigMap", // 2
      "metadata:", // 3
      "  name: kube-dns", // 4
      "data:", // 5
      "  stubDomains: |", // 6
      "    {", // 7
      '      "acme.local": ["1.2.3.4"],', // 8
      '      \u201ccorp.example\u201d: ["10.150.0.1"]', // 9
      "    }", // 10
      "",
    ].join("\n");
    const cm = configMapData({ name: "kube-dns.yaml", text })!;
    assert.throws(
      () => translateKubeDns(cm, "kube-dns.yaml", "cluster.local"),
      (err: Error) => {
        assert.ok(err instanceof InputError);
        assert.equal(
          err.message,
          "kube-dns.yaml:9: stubDomains is not JSON (it stops at '\u201c' in column 3): it holds typographic quotes (\u201c \u201d \u2018 \u2019), as word processors and chat tools write them; JSON takes only plain double quotes (\")",
        );
        return true;
      },
    );
  });
});

it("kubeadm's Corefile is written the same way for deploy/ and Corefile.example", () => {
  const example = readFileSync(join(ROOT, "Corefile.example"), "utf8").replace(/^#.*\n/gm, "");
  assert.equal(
    kubeadmCorefile({ domain: "cluster.local", upstreams: ["/etc/resolv.conf"], stubs: [] }),
    example,
  );
});
