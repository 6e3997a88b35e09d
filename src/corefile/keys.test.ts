import { test } from "node:test";
import assert from "node:assert/strict";
import { blockKeys, parseKey } from "./keys.ts";
import { checkKeys } from "./check.ts";
import { ConfigError } from "./errors.ts";
import type { ServerBlock, Token } from "./types.ts";

const tok = (text: string, line = 1): Token => ({ text, file: "Corefile", line, quoted: false });
const zones = (text: string) => parseKey(tok(text)).map((k) => k.zone);
const block = (line: number, ...keys: string[]): ServerBlock => ({
  keys: keys.map((k) => tok(k, line)),
  directives: [],
  file: "Corefile",
  line,
});

test("zones, ports and the dns:// scheme", () => {
  assert.deepEqual(parseKey(tok(".:53")), [{ scheme: "dns", zone: ".", port: 53, text: ".:53" }]);
  assert.deepEqual(parseKey(tok(":1053")), [{ scheme: "dns", zone: ".", port: 1053, text: ":1053" }]);
  assert.deepEqual(parseKey(tok(".")), [{ scheme: "dns", zone: ".", port: undefined, text: "." }]);
  assert.deepEqual(parseKey(tok("Cluster.Local")), [
    { scheme: "dns", zone: "cluster.local.", port: undefined, text: "Cluster.Local" },
  ]);
  assert.deepEqual(parseKey(tok("dns://example.org:5300")), [
    { scheme: "dns", zone: "example.org.", port: 5300, text: "dns://example.org:5300" },
  ]);
  assert.deepEqual(zones("dns://example.org."), ["example.org."]);
  assert.deepEqual(zones("DNS://.:53"), ["."]);
  assert.equal(parseKey(tok("example.org:65535"))[0].port, 65535);
  // DNS over TLS and over HTTPS: their own default ports, as CoreDNS's.
  assert.deepEqual(parseKey(tok("tls://.")), [{ scheme: "tls", zone: ".", port: 853, text: "tls://." }]);
  assert.deepEqual(parseKey(tok("TLS://example.org:5853"))[0], {
    scheme: "tls",
    zone: "example.org.",
    port: 5853,
    text: "TLS://example.org:5853",
  });
  assert.deepEqual(parseKey(tok("https://.")), [
    { scheme: "https", zone: ".", port: 443, text: "https://." },
  ]);
  assert.deepEqual(parseKey(tok("grpc://cluster.local")), [
    { scheme: "grpc", zone: "cluster.local.", port: 443, text: "grpc://cluster.local" },
  ]);
});

test("reverse zones written as names", () => {
  assert.deepEqual(zones("in-addr.arpa"), ["in-addr.arpa."]);
  assert.deepEqual(zones("10.in-addr.arpa."), ["10.in-addr.arpa."]);
  assert.deepEqual(zones("ip6.arpa:53"), ["ip6.arpa."]);
});

test("IPv4 CIDR keys become their reverse zones", () => {
  assert.deepEqual(zones("10.0.0.0/8"), ["10.in-addr.arpa."]);
  assert.deepEqual(zones("172.16.0.0/16"), ["16.172.in-addr.arpa."]);
  assert.deepEqual(zones("10.0.0.0/24"), ["0.0.10.in-addr.arpa."]);
  assert.deepEqual(zones("192.168.1.7/32"), ["7.1.168.192.in-addr.arpa."]);
  assert.deepEqual(zones("0.0.0.0/0"), ["in-addr.arpa."]);
  // Not on an octet boundary: every zone of the next boundary the prefix covers.
  assert.deepEqual(zones("10.0.0.0/23"), ["0.0.10.in-addr.arpa.", "1.0.10.in-addr.arpa."]);
  assert.deepEqual(zones("10.0.1.0/23"), ["0.0.10.in-addr.arpa.", "1.0.10.in-addr.arpa."]); // host bits ignored
  const twelve = zones("172.16.0.0/12");
  assert.equal(twelve.length, 16);
  assert.equal(twelve[0], "16.172.in-addr.arpa.");
  assert.equal(twelve[15], "31.172.in-addr.arpa.");
  const upper = zones("10.0.0.128/25");
  assert.deepEqual(
    [upper.length, upper[0], upper[127]],
    [128, "128.0.0.10.in-addr.arpa.", "255.0.0.10.in-addr.arpa."],
  );
  const k = parseKey(tok("10.0.0.0/23:1053"));
  assert.deepEqual(
    k.map((x) => [x.zone, x.port, x.text]),
    [
      ["0.0.10.in-addr.arpa.", 1053, "10.0.0.0/23:1053"],
      ["1.0.10.in-addr.arpa.", 1053, "10.0.0.0/23:1053"],
    ],
  );
});

test("IPv6 CIDR keys become their nibble reverse zones", () => {
  assert.deepEqual(zones("fd00::/64"), ["0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa."]);
  assert.deepEqual(zones("2001:db8:0:ab00::/56"), ["b.a.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."]);
  assert.deepEqual(zones("fd00::/8"), ["d.f.ip6.arpa."]);
  assert.deepEqual(zones("fd00::/7"), ["c.f.ip6.arpa.", "d.f.ip6.arpa."]);
  assert.deepEqual(zones("::/0"), ["ip6.arpa."]);
  const k = parseKey(tok("dns://fd00::/64:53"));
  assert.deepEqual([k[0].zone, k[0].port], ["0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.", 53]);
});

test("blockKeys flattens every key of a block", () => {
  assert.deepEqual(
    blockKeys(block(1, "cluster.local:53", "10.0.0.0/23")).map((k) => k.zone),
    ["cluster.local.", "0.0.10.in-addr.arpa.", "1.0.10.in-addr.arpa."],
  );
});

test("bad keys are ConfigErrors naming the key and its line", () => {
  const bad = (text: string, why: RegExp) =>
    assert.throws(
      () => parseKey(tok(text, 7)),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.code === "CDNS_ERR_CONFIG" &&
        e.message.startsWith(`Corefile:7 - Error during parsing: invalid server block key '${text}'`) &&
        why.test(e.message),
      text,
    );
  bad("quic://.:853", /Node 24 is built without node:quic/);
  bad("https3://.", /HTTP\/3 is not served/);
  bad("ftp://example.org", /unknown scheme/);
  bad("example.org:0", /out of range/);
  bad("example.org:65536", /out of range/);
  bad("example.org:", /missing port/);
  bad("example.org:http", /not a valid zone name/);
  bad("exa mple.org", /not a valid zone name/);
  bad("a..b", /not a valid zone name/);
  bad(".example.org", /not a valid zone name/);
  bad(`${"a".repeat(64)}.org`, /not a valid zone name/);
  bad("10.0.0.0/33", /not a CIDR prefix/);
  bad("10.0.0/8", /not a CIDR prefix/);
  bad("10.0.0.256/24", /not a CIDR prefix/);
  bad("fd00::/129", /not a CIDR prefix/);
  bad("fd00:::1/64", /not a CIDR prefix/);
  bad("example.org/24", /not a CIDR prefix/);
});

test("checkKeys rejects a zone served twice on one port, across and within blocks", () => {
  const dup = (blocks: ServerBlock[], line: number, defaultPort?: number) =>
    assert.throws(
      () => checkKeys(blocks, defaultPort),
      (e: unknown) =>
        e instanceof ConfigError && e.line === line && /already defined at Corefile:1/.test(e.message),
    );
  dup([block(1, "example.org:53"), block(5, "example.org.:53")], 5);
  dup([block(1, "example.org", "Example.Org")], 1);
  dup([block(1, "10.0.0.0/23"), block(4, "1.0.10.in-addr.arpa")], 4);
  dup([block(1, "."), block(3, ".:1053")], 3, 1053);
  // Different ports, or an unknown default against an explicit port, are fine.
  checkKeys([block(1, "example.org:53"), block(2, "example.org:1053"), block(3, "example.org")]);
  checkKeys([block(1, "."), block(3, ".:53")], 1053);
  checkKeys([block(1, "0.0.10.in-addr.arpa"), block(2, "10.0.1.0/24")]);
});

test("checkKeys lets blocks with a view share a zone and port, and only them", () => {
  const viewed = (line: number, key: string): ServerBlock => ({
    ...block(line, key),
    directives: [{ name: "view", args: [], file: "Corefile", line: line + 1 }],
  });
  checkKeys([viewed(1, "."), viewed(4, "."), block(7, ".")]);
  checkKeys([block(1, "."), viewed(4, ".")]);
  assert.throws(() => checkKeys([block(1, ".:853"), viewed(4, "tls://.:853")]), /one transport per port/);
  assert.throws(
    () => checkKeys([viewed(1, "."), block(4, "."), block(7, ".")]),
    (e: unknown) =>
      e instanceof ConfigError && e.line === 7 && /already defined at Corefile:4/.test(e.message),
  );
});

test("checkKeys: one transport per port; tls:// and https:// beside dns:// on their own ports", () => {
  assert.throws(
    () => checkKeys([block(1, ".:853"), block(4, "tls://example.org:853")]),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.line === 4 &&
      /port 853 already serves dns:\/\/ at Corefile:1 \(one transport per port\)/.test(e.message),
  );
  assert.throws(
    () => checkKeys([block(1, "tls://.:8443"), block(2, "https://example.org:8443")]),
    /tls:\/\//,
  );
  checkKeys([block(1, "."), block(2, "tls://."), block(3, "https://.")], 53);
  checkKeys([block(1, "tls://example.org"), block(2, "tls://example.net")]);
});
