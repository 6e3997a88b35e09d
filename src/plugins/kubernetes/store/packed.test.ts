import { test } from "node:test";
import assert from "node:assert/strict";
import { ipKey, ipText } from "./packed.ts";
import { rng } from "../../../../test/helpers/rng.ts";

test("ipKey: a canonical IPv4 address is an integer that ipText turns back into the same text", () => {
  const r = rng(7);
  const octet = () => Math.floor(r() * 256);
  const samples = ["0.0.0.0", "255.255.255.255", "10.0.0.1", "192.168.100.10"];
  for (let i = 0; i < 2000; i++) samples.push([octet(), octet(), octet(), octet()].join("."));
  for (const ip of samples) {
    const k = ipKey(ip);
    assert.equal(typeof k, "number", ip);
    assert.equal(ipText(k), ip);
  }
  assert.notEqual(ipKey("10.0.0.1"), ipKey("10.0.1.0"));
});

test("ipKey: anything else is kept as its text", () => {
  for (const ip of [
    "fd00::1",
    "::ffff:1.2.3.4",
    "010.0.0.1",
    "10.0.0.01",
    "256.1.1.1",
    "1.2.3.256",
    "1.2.3.1000",
    "1.2.3",
    "1.2.3.4.5",
    "1.2.3.",
    ".1.2.3",
    "1..2.3",
    "1.2.3.4 ",
    "",
  ])
    assert.equal(ipKey(ip), ip, ip);
});
