import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseForward, setup } from "./setup.ts";
import { FORWARD_DEFAULTS } from "./forward.ts";
import { nameservers } from "./upstream-address.ts";
import { parseCorefile } from "../../corefile/parser.ts";
import { Rcode } from "../../dns/constants.ts";
import { assertConfigErrors } from "../../../test/helpers/config-errors.ts";
import { directive, fakeContext } from "../../../test/helpers/setup-context.ts";

/** The forward directive of a one-block Corefile, with the block's lines numbered from 1. */
function fwd(text: string) {
  return parseCorefile(`. {\n${text}\n}\n`, "Corefile")[0].directives[0];
}

test("the defaults: CoreDNS's", () => {
  const o = parseForward(fwd("forward . 10.0.0.10"), "/");
  assert.equal(o.from, ".");
  assert.deepEqual(o.to, [{ host: "10.0.0.10", port: 53, to: "10.0.0.10:53" }]);
  assert.equal(o.policy, "random");
  assert.equal(o.maxFails, 2);
  assert.equal(o.expireMs, 10_000);
  assert.deepEqual(o.healthCheck, { intervalMs: 500, rd: true, name: "." });
  assert.equal(o.maxConcurrent, 0);
  assert.equal(o.forceTcp || o.preferUdp || o.failfastAllUnhealthy || o.nextOnNodata, false);
  assert.equal(o.readTimeoutMs, FORWARD_DEFAULTS.readTimeoutMs);
  assert.equal(o.maxAgeMs, 0);
  assert.deepEqual(o.tls, {});
});

test("every option is parsed", () => {
  const o = parseForward(
    fwd(`forward Example.ORG dns://10.0.0.1:5353 [2001:db8::1]:53 ::1 {
    except a.example.org B.example.org.
    force_tcp
    prefer_udp
    expire 3s
    max_idle_conns 4
    max_fails 5
    max_connect_attempts 2
    policy sequential
    health_check 250ms no_rec domain health.example.
    max_concurrent 1000
    next NXDOMAIN servfail
    next_on_nodata
    failover SERVFAIL REFUSED
    failfast_all_unhealthy_upstreams
}`),
    "/",
  );
  assert.equal(o.from, "example.org.");
  assert.deepEqual(
    o.to.map((u) => u.to),
    ["10.0.0.1:5353", "[2001:db8::1]:53", "[::1]:53"],
  );
  assert.equal(o.to[1].host, "2001:db8::1");
  assert.deepEqual(o.except, ["a.example.org.", "b.example.org."]);
  assert.equal(o.forceTcp && o.preferUdp && o.nextOnNodata && o.failfastAllUnhealthy, true);
  assert.equal(o.expireMs, 3000);
  assert.equal(o.maxIdleConns, 4);
  assert.equal(o.maxFails, 5);
  assert.equal(o.maxConnectAttempts, 2);
  assert.equal(o.policy, "sequential");
  assert.deepEqual(o.healthCheck, { intervalMs: 250, rd: false, name: "health.example." });
  assert.equal(o.maxConcurrent, 1000);
  assert.deepEqual([...o.next], [Rcode.NXDOMAIN, Rcode.SERVFAIL]);
  assert.deepEqual([...o.failover], [Rcode.SERVFAIL, Rcode.REFUSED]);
});

test("tls:// upstreams (port 853 by default), the tls forms, tls_servername, max_age, read_timeout", () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-forward-"));
  try {
    for (const f of ["ca.pem", "cert.pem", "key.pem"]) writeFileSync(join(dir, f), f);
    const o = parseForward(
      fwd(`forward . tls://9.9.9.9 tls://[2620:fe::fe]:8853 10.0.0.1 {
    tls cert.pem key.pem ca.pem
    tls_servername dns.quad9.net
    max_age 30s
    read_timeout 500ms
}`),
      dir,
    );
    assert.deepEqual(o.to, [
      { host: "9.9.9.9", port: 853, to: "9.9.9.9:853", tls: true },
      { host: "2620:fe::fe", port: 8853, to: "[2620:fe::fe]:8853", tls: true },
      { host: "10.0.0.1", port: 53, to: "10.0.0.1:53" },
    ]);
    const text = (b: Buffer | undefined) => b?.toString();
    assert.deepEqual(
      [text(o.tls.cert), text(o.tls.key), text(o.tls.ca), o.tls.servername],
      ["cert.pem", "key.pem", "ca.pem", "dns.quad9.net"],
    );
    assert.equal(o.maxAgeMs, 30_000);
    assert.equal(o.readTimeoutMs, 500);
    const tlsOf = (line: string) => parseForward(fwd(`forward . tls://9.9.9.9 {\n${line}\n}`), dir).tls;
    assert.deepEqual(tlsOf("tls"), {}, "the system's CAs");
    assert.equal(text(tlsOf("tls ca.pem").ca), "ca.pem");
    const pair = tlsOf("tls cert.pem key.pem");
    assert.deepEqual([text(pair.cert), text(pair.key), pair.ca], ["cert.pem", "key.pem", undefined]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a CIDR FROM stands for its reverse zone", () => {
  assert.equal(parseForward(fwd("forward 10.0.0.0/8 10.0.0.1"), "/").from, "10.in-addr.arpa.");
});

test("TO may be a resolv.conf: its nameservers, relative to the Corefile's folder", () => {
  const dir = mkdtempSync(join(tmpdir(), "clusterdns-forward-"));
  try {
    writeFileSync(
      join(dir, "resolv.conf"),
      "# comment\nsearch svc.cluster.local\nnameserver 10.0.0.1\nnameserver fd00::53 # six\noptions ndots:5\n",
    );
    writeFileSync(join(dir, "empty.conf"), "search example.org\n");
    writeFileSync(join(dir, "bad.conf"), "nameserver dns.example.org\n");
    const o = parseForward(fwd("forward . resolv.conf 10.0.0.9"), dir);
    assert.deepEqual(
      o.to.map((u) => u.to),
      ["10.0.0.1:53", "[fd00::53]:53", "10.0.0.9:53"],
    );
    assert.throws(() => parseForward(fwd("forward . empty.conf"), dir), /Corefile:2 .*no nameserver lines/);
    assert.throws(
      () => parseForward(fwd("forward . bad.conf"), dir),
      /Corefile:2 .*'dns.example.org' is not an IP/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("nameservers() reads only nameserver lines", () => {
  assert.deepEqual(
    nameservers("nameserver 1.1.1.1\n;nameserver 2.2.2.2\n  nameserver\t3.3.3.3\nnameserverx 4\n"),
    ["1.1.1.1", "3.3.3.3"],
  );
});

test("bad directives fail at start-up with file:line", async () => {
  const many = Array.from({ length: 16 }, (_, i) => `10.0.0.${i + 1}`).join(" ");
  await assertConfigErrors(setup, [
    [fwd("forward ."), /^Corefile:2 .*forward: 'forward' takes at least 2 argument/],
    [
      fwd("forward . grpc://9.9.9.9"),
      /^Corefile:2 .*DNS-over-gRPC \(grpc:\/\/\) is not supported: use dns:\/\/, tls:\/\/ or https:\/\//,
    ],
    [fwd("forward . tls://dns.quad9.net"), /^Corefile:2 .*is not an IP address/],
    [fwd("forward . udp://9.9.9.9"), /^Corefile:2 .*unknown protocol 'udp:\/\/'/],
    [fwd("forward . dns://resolver.example"), /^Corefile:2 .*is not an IP address/],
    [fwd("forward . 10.0.0.1:99999"), /^Corefile:2 .*port '99999'/],
    [fwd("forward . 10.0.0.1:"), /^Corefile:2 .*port ''/],
    [fwd("forward . dns.example.local"), /^Corefile:2 .*hostnames are not supported/],
    [fwd(`forward . ${many}`), /^Corefile:2 .*16 upstreams; at most 15/],
    [fwd("forward bad..name 10.0.0.1"), /^Corefile:2 .*invalid domain 'bad..name'/],
    [fwd("forward . 10.0.0.1 {\n  bogus\n}"), /^Corefile:3 .*unknown property 'bogus'/],
    [
      fwd("forward . tls://9.9.9.9 {\n\n  tls /nonexistent/cert.pem key.pem\n}"),
      /^Corefile:4 .*tls: cannot read '\/nonexistent\/cert.pem'/,
    ],
    [fwd("forward . tls://9.9.9.9 {\n  tls a b c d\n}"), /^Corefile:3 .*'tls' takes 0 to 3 argument/],
    [
      fwd("forward . tls://9.9.9.9 {\n  tls_servername\n}"),
      /^Corefile:3 .*'tls_servername' takes 1 argument/,
    ],
    [
      fwd("forward . 10.0.0.1 {\n  read_timeout 0\n}"),
      /^Corefile:3 .*read_timeout needs a positive duration/,
    ],
    [fwd("forward . 10.0.0.1 {\n  max_age soon\n}"), /^Corefile:3 .*invalid duration 'soon'/],
    [fwd("forward . 10.0.0.1 {\n  resolver 10.0.0.2\n}"), /^Corefile:3 .*hostnames are not resolved/],
    [fwd("forward . 10.0.0.1 {\n  policy fastest\n}"), /^Corefile:3 .*unknown policy 'fastest'/],
    [fwd("forward . 10.0.0.1 {\n  policy\n}"), /^Corefile:3 .*'policy' takes 1 argument/],
    [fwd("forward . 10.0.0.1 {\n  health_check 0\n}"), /^Corefile:3 .*positive duration/],
    [fwd("forward . 10.0.0.1 {\n  health_check soon\n}"), /^Corefile:3 .*invalid duration 'soon'/],
    [fwd("forward . 10.0.0.1 {\n  health_check 1s rec\n}"), /^Corefile:3 .*unexpected 'rec'/],
    [fwd("forward . 10.0.0.1 {\n  health_check 1s domain\n}"), /^Corefile:3 .*unexpected 'domain'/],
    [fwd("forward . 10.0.0.1 {\n  max_fails -1\n}"), /^Corefile:3 .*out of range/],
    [fwd("forward . 10.0.0.1 {\n  max_concurrent lots\n}"), /^Corefile:3 .*'lots' is not an integer/],
    [fwd("forward . 10.0.0.1 {\n  expire\n}"), /^Corefile:3 .*'expire' takes 1 argument/],
    [fwd("forward . 10.0.0.1 {\n  force_tcp yes\n}"), /^Corefile:3 .*'force_tcp' takes 0 argument/],
    [fwd("forward . 10.0.0.1 {\n  next NOPE\n}"), /^Corefile:3 .*'NOPE' is not an rcode name/],
    [fwd("forward . 10.0.0.1 {\n  next\n}"), /^Corefile:3 .*'next' takes at least 1/],
    [
      fwd("forward . 10.0.0.1 {\n  failover NOERROR\n}"),
      /^Corefile:3 .*failover cannot be used with NOERROR/,
    ],
    [fwd("forward . 10.0.0.1 {\n  except\n}"), /^Corefile:3 .*'except' takes at least 1/],
    [
      directive("forward", [".", "10.0.0.1"], [directive("force_tcp", [], [], 7)]),
      /^Corefile:7 .*takes no block/,
    ],
  ]);
});

test("setup opens nothing until queried and closes its upstreams at shutdown", async () => {
  const f = fakeContext();
  const plugin = await setup(fwd("forward . 127.0.0.1:9"), f.ctx);
  assert.equal(typeof plugin, "function");
  assert.equal(f.startup.length, 0);
  assert.equal(f.shutdown.length, 1);
  await f.stop();
});
