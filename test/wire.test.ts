// Wire behaviour real clients and EDNS compliance testers look at, end to end: partial answers under
// truncation, classes, opcodes, TSIG, meta query types, labels holding a "." octet, whoami at the
// name-length limit. One clusterdns serves the headless fixture (test/k8s/headless.ts) from an
// objects file, a zone file and the chaos/whoami block; dig and raw packets ask it.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { startServer, ROOT, type RunningServer } from "./helpers/server.ts";
import { dig } from "./helpers/dig.ts";
import { writeHeadlessObjects, MANY_ADDRESSES, NINE_HOSTNAMES } from "./k8s/headless.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";

let srv: RunningServer;
let tmp: string;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "wire-"));
  const objects = writeHeadlessObjects(join(tmp, "headless.json"));
  srv = await startServer(
    `cluster.local {
    log
    kubernetes cluster.local {
        objects ${objects}
    }
}
example.org {
    log
    file ${ROOT}/zones/example.org.zone
}
. {
    chaos
    whoami
}
`,
  );
});

after(async () => {
  assert.equal(await srv.stop(), 0);
  rmSync(tmp, { recursive: true, force: true });
});

const MANY = "many.default.svc.cluster.local";

test("too big for plain UDP: as many whole records as fit, TC=1, the rest over TCP", async () => {
  for (let i = 0; i < 2; i++) {
    // Twice: the second time the answer cache holds the reply.
    const plain = await dig(srv.port, MANY, "A", "+noedns", "+ignore");
    assert.ok(plain.flags.includes("tc"), "TC set");
    assert.ok(plain.size <= 512, `${plain.size} octets`);
    // 12 header + 36 question + 16 per record.
    assert.equal(plain.answer.length, 29);
    const addresses = plain.answer.map((l) => l.split(" ")[4]);
    for (const a of addresses) assert.ok(MANY_ADDRESSES.includes(a), a);
    assert.equal(new Set(addresses).size, 29);
  }
  const edns = await dig(srv.port, MANY, "A", "+bufsize=1232", "+ignore");
  assert.ok(edns.flags.includes("tc"));
  assert.equal(edns.answer.length, Math.floor((1232 - 12 - 36 - 11) / 16));
  assert.match(edns.text, /EDNS: version: 0, flags:; udp: 1232/);
  const tcp = await dig(srv.port, MANY, "A", "+tcp");
  assert.ok(!tcp.flags.includes("tc"));
  assert.deepEqual(tcp.answer.map((l) => l.split(" ")[4]).sort(), [...MANY_ADDRESSES].sort());
});

test("an SRV answer that fits without its glue: the glue is cut, not the answer, and TC stays clear", async () => {
  const name = "_http._tcp.nine.default.svc.cluster.local";
  const tcp = await dig(srv.port, name, "SRV", "+tcp");
  assert.equal(tcp.answer.length, 9);
  assert.equal(tcp.additional.length, 9);
  assert.ok(tcp.size > 900, `the whole reply is ${tcp.size} octets`);
  const r = await dig(srv.port, name, "SRV", "+bufsize=900", "+ignore");
  assert.ok(!r.flags.includes("tc"), "TC clear: only additional data is missing");
  assert.equal(r.status, "NOERROR");
  assert.equal(r.answer.length, 9);
  const targets = r.answer.map((l) => l.split(" ")[7].split(".")[0]).sort();
  assert.deepEqual(targets, [...NINE_HOSTNAMES].sort());
  assert.ok(r.additional.length > 0 && r.additional.length < 9, `${r.additional.length} glue records`);
  assert.ok(r.size <= 900);
});

test("a zone file's 40 A records over plain UDP: a partial answer, TC=1", async () => {
  const r = await dig(srv.port, "big.example.org", "A", "+noedns", "+ignore");
  assert.ok(r.flags.includes("tc"));
  assert.ok(r.answer.length > 20, `${r.answer.length} records`);
  for (const l of r.answer) assert.match(l, /^big\.example\.org\. \d+ IN A \d+\.\d+\.\d+\.\d+$/);
});
