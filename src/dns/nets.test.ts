import { test } from "node:test";
import assert from "node:assert/strict";
import { NetSet, plainAddress } from "./nets.ts";

test("prefixes and single addresses of both families; mapped IPv4 clients count as IPv4", () => {
  const s = new NetSet();
  for (const n of ["10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "::1"]) assert.equal(s.add(n), undefined);
  for (const a of ["10.1.2.3", "::ffff:10.1.2.3", "192.0.2.7", "2001:db8:5::1", "::1"])
    assert.ok(s.has(a), a);
  for (const a of ["11.0.0.1", "192.0.2.8", "2001:db9::1", "::2", "", "not an address"])
    assert.ok(!s.has(a), a);
});

test("an IPv6 prefix holds no IPv4 client, and an IPv4 one no IPv6 client", () => {
  const all6 = new NetSet();
  all6.add("::/0");
  assert.ok(all6.has("2001:db8::1"));
  assert.ok(!all6.has("192.0.2.1"));
  assert.ok(!all6.has("::ffff:192.0.2.1"));
  const all4 = new NetSet();
  all4.add("0.0.0.0/0");
  assert.ok(all4.has("192.0.2.1"));
  assert.ok(!all4.has("2001:db8::1"));
});

test("what is not a network says why", () => {
  const s = new NetSet();
  assert.match(s.add("10.0.0.0/33")!, /prefix length must be 0 to 32/);
  assert.match(s.add("2001:db8::/129")!, /0 to 128/);
  assert.match(s.add("10.0.0.0/x")!, /prefix length/);
  assert.match(s.add("example.org")!, /not an IP address or CIDR prefix/);
  assert.equal(plainAddress("::FFFF:1.2.3.4"), "1.2.3.4");
  assert.equal(plainAddress("::ffff:abcd"), "::ffff:abcd");
});
