import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCorefile } from "./parser.ts";
import { ConfigErrors } from "./errors.ts";

/** The lines and messages of the placeholders a Corefile is refused for. */
function refused(text: string): string[] {
  try {
    parseCorefile(text, "Corefile", { env: { DOMAIN: "cluster.local" } });
  } catch (err) {
    assert.ok(err instanceof ConfigErrors, String(err));
    assert.equal(err.message, err.all[0].message, "start-up names the first");
    return err.all.map((e) => e.message);
  }
  return [];
}

test("k3s's, Helm's and shell placeholders stop the Corefile, one line each, naming them", () => {
  const k3s = [
    ".:53 {", // 1
    "    kubernetes %{CLUSTER_DOMAIN}% in-addr.arpa ip6.arpa {", // 2
    "      pods insecure", // 3
    "    }", // 4
    "    hosts /etc/coredns/NodeHosts {", // 5
    "      ttl 60", // 6
    "    }", // 7
    "    forward . %{UPSTREAMNAMESERVER}% %{X}%", // 8
    "}", // 9
  ].join("\n");
  const k = refused(k3s);
  assert.equal(k.length, 2, k.join("\n"));
  assert.match(
    k[0],
    /^Corefile:2 - Error during parsing: '%\{CLUSTER_DOMAIN\}%' is a template placeholder \(k3s\) that was never filled in: render the template first/,
  );
  assert.match(k[1], /^Corefile:8 - .*'%\{UPSTREAMNAMESERVER\}%' .*\(k3s\)/);

  const helm = refused(
    ". {\n    kubernetes {{ .Values.clusterDomain }} {\n    }\n    forward . ${UPSTREAM}\n}\n",
  );
  assert.match(
    helm[0],
    /^Corefile:2 - .*'\{\{ \.Values\.clusterDomain \}\}' is a template placeholder \(Helm/,
  );
  assert.match(helm[1], /^Corefile:4 - .*'\$\{UPSTREAM\}' is a template placeholder \(a shell or envsubst\)/);
  // NodeLocal DNSCache's ConfigMap, whose binary fills these in at start-up.
  const pillar = refused(
    ". {\n    bind __PILLAR__LOCAL__DNS__\n    forward . __PILLAR__UPSTREAM__SERVERS__\n}\n",
  );
  assert.equal(pillar.length, 2);
  assert.match(
    pillar[1],
    /^Corefile:3 - .*'__PILLAR__UPSTREAM__SERVERS__' is a template placeholder \(k8s-dns-node-cache/,
  );
});

test("CoreDNS's own environment syntax and the template plugin's Go templates are no placeholders", () => {
  assert.deepEqual(
    refused(
      [
        "{$DOMAIN} {",
        "    template IN A {",
        '        answer "{{ .Name }} 60 IN A 192.0.2.1"',
        '        additional "ns.{{ .Zone }} 60 IN A 192.0.2.2"',
        "    }",
        '    log . "{remote} {type} {>id}"',
        "    rewrite name regex (.*)\\.old\\.org {1}.new.org",
        "}",
      ].join("\n"),
    ),
    [],
  );
});
