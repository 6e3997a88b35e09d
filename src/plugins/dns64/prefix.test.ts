import { test } from "node:test";
import assert from "node:assert/strict";
import { embed, isMapped, parsePrefix, type Pref64 } from "./prefix.ts";
import { expandIPv6 } from "../../dns/name.ts";

function prefix(text: string): Pref64 {
  const p = parsePrefix(text);
  assert.ok(typeof p !== "string", String(p));
  return p;
}

test("RFC 6052 2.4's table: 192.0.2.33 under each prefix length", () => {
  // The rows as the RFC prints them (the /96 ones with the IPv4 address dotted), compared as addresses.
  const table: [string, string][] = [
    ["2001:db8::/32", "2001:db8:c000:221::"],
    ["2001:db8:100::/40", "2001:db8:1c0:2:21::"],
    ["2001:db8:122::/48", "2001:db8:122:c000:2:2100::"],
    ["2001:db8:122:300::/56", "2001:db8:122:3c0:0:221::"],
    ["2001:db8:122:344::/64", "2001:db8:122:344:c0:2:2100::"],
    ["2001:db8:122:344::/96", "2001:db8:122:344::192.0.2.33"],
    ["64:ff9b::/96", "64:ff9b::192.0.2.33"],
  ];
  for (const [p, want] of table) {
    const got = embed(prefix(p), "192.0.2.33");
    assert.equal(expandIPv6(got), expandIPv6(want), `${p}: ${got}`);
  }
  // RFC 5952 text: no "::" for one zero group.
  assert.equal(embed(prefix("2001:db8:122:344::/64"), "192.0.2.33"), "2001:db8:122:344:c0:2:2100:0");
});

test("RFC 6052 2.4: the Well-Known Prefix, and the u octet skipped and zero", () => {
  assert.equal(embed(prefix("64:ff9b::/96"), "192.0.2.33"), "64:ff9b::c000:221");
  // /56: three octets before bit 64, one after the u octet.
  assert.equal(embed(prefix("2001:db8:122:300::/56"), "255.255.255.255"), "2001:db8:122:3ff:ff:ffff::");
  // /64: all four after it.
  assert.equal(embed(prefix("2001:db8::/64"), "10.0.0.1"), "2001:db8::a:0:100:0");
});

test("prefix text: bits past the length dropped; lengths and the u octet checked", () => {
  assert.equal(prefix("2001:db8::ff/32").text, "2001:db8::/32");
  assert.equal(prefix("64:1337::/96").text, "64:1337::/96");
  for (const [bad, why] of [
    ["64:ff9b::", /not an IPv6 prefix/],
    ["192.0.2.0/24", /not an IPv6 prefix/],
    ["64:ff9b::/33", /must be one of 32, 40, 48, 56, 64, 96/],
    ["64:ff9b::/128", /must be one of/],
    ["64:ff9b::/x", /must be one of/],
    ["nonsense/96", /not an IPv6 prefix/],
    ["2001:db8:0:0:ff00::/96", /bits 64-71 of the prefix must be zero/],
  ] as const) {
    const p = parsePrefix(bad);
    assert.equal(typeof p, "string", bad);
    assert.match(p as string, why, bad);
  }
});

test("IPv4-mapped addresses are told apart", () => {
  assert.equal(isMapped("::ffff:192.0.2.1"), true);
  assert.equal(isMapped("::ffff:c000:201"), true);
  assert.equal(isMapped("2001:db8::1"), false);
  assert.equal(isMapped("64:ff9b::c000:221"), false);
});
