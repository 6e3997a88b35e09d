import { test } from "node:test";
import assert from "node:assert/strict";
import type { NetworkInterfaceInfo } from "node:os";
import { localIPs } from "./local-ips.ts";

const nic = (address: string, internal = false) => ({ address, internal }) as NetworkInterfaceInfo;
const interfaces = () => ({
  lo: [nic("127.0.0.1", true), nic("::1", true)],
  eth0: [nic("10.244.0.7"), nic("fe80::1%eth0"), nic("169.254.3.4"), nic("fd00::7")],
});

test("local addresses: POD_IP(S) first, then the block's bind addresses, then the interfaces", () => {
  assert.deepEqual(localIPs({ POD_IP: "10.244.0.5" }, ["192.0.2.1"], interfaces), ["10.244.0.5"]);
  assert.deepEqual(localIPs({ POD_IPS: "10.244.0.5,fd00::5" }, [], interfaces), ["10.244.0.5", "fd00::5"]);
  assert.deepEqual(localIPs({}, ["192.0.2.1", "127.0.0.1"], interfaces), ["192.0.2.1"]);
  assert.deepEqual(
    localIPs({ POD_IP: "" }, ["0.0.0.0", "::"], interfaces),
    ["10.244.0.7", "fd00::7"],
    "link-local addresses (fe80::/10, 169.254/16) are no use to a client elsewhere",
  );
});
