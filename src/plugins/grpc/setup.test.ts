import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseGrpc } from "./setup.ts";
import { GRPC_DEFAULTS } from "./grpc.ts";
import { parseCorefile } from "../../corefile/parser.ts";

/** The grpc directive of a one-block Corefile, with the block's lines numbered from 2. */
function grpc(text: string) {
  return parseCorefile(`. {\n${text}\n}\n`, "Corefile")[0].directives[0];
}

test("TO: CoreDNS's port 53 for a bare address, 443 for grpc://, unix sockets, a resolv.conf", () => {
  const dir = mkdtempSync(join(tmpdir(), "grpc-setup-"));
  try {
    writeFileSync(join(dir, "resolv.conf"), "nameserver 10.10.255.252\nnameserver 10.10.255.253\n");
    const o = parseGrpc(
      grpc(
        "grpc . 127.0.0.1 grpc://192.0.2.1 grpc://192.0.2.2:8443 [::1]:8080 unix:///run/g.sock resolv.conf",
      ),
      dir,
    );
    assert.deepEqual(
      o.to.map((a) => a.to),
      [
        "127.0.0.1:53",
        "192.0.2.1:443",
        "192.0.2.2:8443",
        "[::1]:8080",
        "unix:///run/g.sock",
        "10.10.255.252:53",
        "10.10.255.253:53",
      ],
    );
    assert.equal(o.to[4].path, "/run/g.sock");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the defaults and every option", () => {
  const plain = parseGrpc(grpc("grpc . 127.0.0.1:9005"), "/");
  assert.equal(plain.from, ".");
  assert.equal(plain.policy, GRPC_DEFAULTS.policy);
  assert.equal(plain.tls, undefined, "cleartext without tls");
  assert.equal(plain.fallthrough, undefined);

  const o = parseGrpc(
    grpc(`grpc Example.ORG 10.0.0.10:1234 {
    except a.example.org B.example.org.
    tls_servername dns.quad9.net
    policy round_robin
    fallthrough example.org
}`),
    "/",
  );
  assert.equal(o.from, "example.org.");
  assert.deepEqual(o.except, ["a.example.org.", "b.example.org."]);
  assert.deepEqual(o.tls, { servername: "dns.quad9.net" }, "tls_servername alone turns TLS on");
  assert.equal(o.policy, "round_robin");
  assert.deepEqual(o.fallthrough, ["example.org."]);
  assert.deepEqual(parseGrpc(grpc("grpc . 10.0.0.1 {\n    tls\n    fallthrough\n}"), "/").fallthrough, ["."]);
  assert.deepEqual(parseGrpc(grpc("grpc . 10.0.0.1 {\n    tls\n}"), "/").tls, {}, "tls: the system's CAs");
});

test("mistakes are refused at their file:line", () => {
  const bad = (text: string, re: RegExp) => assert.throws(() => parseGrpc(grpc(text), "/"), re);
  bad("grpc .", /Corefile:2 .*'grpc' takes at least 2 argument/);
  bad("grpc exa$mple 127.0.0.1", /Corefile:2 .*invalid domain 'exa\$mple'/);
  bad("grpc . a27.0.0.1", /Corefile:2 .*'a27\.0\.0\.1' is not an IP address nor a readable resolv\.conf/);
  bad(
    "grpc . tls://127.0.0.1",
    /Corefile:2 .*TO is IP:PORT, grpc:\/\/IP:PORT, unix:\/\/PATH or a resolv\.conf/,
  );
  bad("grpc . grpc://dns.example", /Corefile:2 .*'grpc:\/\/dns\.example' is not an IP address/);
  bad("grpc . 127.0.0.1:99999", /Corefile:2 .*port '99999'/);
  bad(`grpc . ${Array.from({ length: 16 }, (_, i) => `10.0.0.${i + 1}`).join(" ")}`, /at most 15/);
  bad("grpc . 127.0.0.1 {\n    blaatl\n}", /Corefile:3 .*unknown property 'blaatl'/);
  bad(
    "grpc . 127.0.0.1 {\n    tls /nonexistent/ca.crt\n}",
    /Corefile:3 .*tls: cannot read '\/nonexistent\/ca\.crt'/,
  );
  bad("grpc . 127.0.0.1 {\n    tls a b c d\n}", /Corefile:3 .*'tls' takes 0 to 3 argument/);
  bad("grpc . 127.0.0.1 {\n    policy fastest\n}", /Corefile:3 .*unknown policy 'fastest'/);
  bad("grpc . 127.0.0.1 {\n    except\n}", /Corefile:3 .*'except' takes at least 1/);
  bad("grpc . 127.0.0.1 {\n    tls_servername\n}", /Corefile:3 .*'tls_servername' takes 1/);
});
