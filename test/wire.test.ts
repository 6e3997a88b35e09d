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
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { exchangeUdp } from "./helpers/udp-exchange.ts";
import { queryMsg } from "./helpers/query-msg.ts";
import { encode } from "../src/dns/encode.ts";
import { decode } from "../src/dns/decode.ts";
import type { Msg } from "../src/dns/message.ts";
import { Rcode, Type } from "../src/dns/constants.ts";

/** A zone whose owner a\.b is one label holding a dot. */
const DOTTED_ZONE = `$ORIGIN dotted.test.
@      60 SOA ns hostmaster 1 7200 900 1209600 60
@      60 NS  ns
ns     60 A   192.0.2.53
a\\.b   60 A   192.0.2.41
b      60 A   192.0.2.42
`;

let srv: RunningServer;
let tmp: string;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), "wire-"));
  const objects = writeHeadlessObjects(join(tmp, "headless.json"));
  writeFileSync(join(tmp, "dotted.zone"), DOTTED_ZONE);
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
dotted.test {
    log
    file ${join(tmp, "dotted.zone")}
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

/** A TSIG rdata (RFC 8945 4.2): algorithm hmac-sha256., time signed, fudge 300, a 32-octet MAC,
 * original ID 0x1234, no error, no other data. */
const TSIG_RDATA = new Uint8Array([
  ...[11, ...Buffer.from("hmac-sha256"), 0],
  ...[0, 0, 0x65, 0x43, 0x21, 0x0f, 1, 0x2c, 0, 32],
  ...new Array<number>(32).fill(7),
  ...[0x12, 0x34, 0, 0, 0, 0],
]);

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

test("classes: CH for a name in a zone or nowhere is REFUSED, never SERVFAIL; HS and NONE NOTIMP", async () => {
  const cases: [string, string, string, string][] = [
    [MANY, "A", "CH", "REFUSED"], // kubernetes
    ["www.example.org", "A", "CH", "REFUSED"], // file
    ["whoami.example.net", "A", "CH", "REFUSED"], // chaos passes, whoami passes, end of the chain
    ["www.example.org", "A", "HS", "NOTIMP"],
    [MANY, "A", "ANY", "NOERROR"],
    ["version.bind", "TXT", "CH", "NOERROR"],
  ];
  for (const [name, type, cls, status] of cases) {
    const r = await dig(srv.port, name, type, "-c", cls);
    assert.equal(r.status, status, `${cls} ${name}`);
  }
  const none = await exchangeUdp(srv.port, encode(queryMsg("www.example.org.", Type.A, { qclass: 254 })));
  assert.equal(decode(none!).rcode, Rcode.NOTIMP);
});

test("unknown opcodes: NOTIMP with RD and CD clear", async () => {
  for (const opcode of ["1", "2", "3", "6", "15"]) {
    const r = await dig(srv.port, "www.example.org", "A", `+opcode=${opcode}`, "+cd", "+rec");
    assert.equal(r.status, "NOTIMP", `opcode ${opcode}`);
    assert.deepEqual(r.flags, ["qr"], `opcode ${opcode}`);
  }
  const query = await dig(srv.port, "www.example.org", "A", "+cd", "+rec");
  assert.ok(query.flags.includes("rd") && query.flags.includes("cd"), "QUERY keeps them");
});

test("TSIG under a key the server does not have: NOTAUTH with an unsigned BADKEY TSIG, no answer", async () => {
  for (const proto of ["+notcp", "+tcp"]) {
    const r = await dig(
      srv.port,
      "www.example.org",
      "A",
      "-y",
      "hmac-sha256:nokey.example:c2VjcmV0c2VjcmV0",
      proto,
    );
    assert.equal(r.status, "NOTAUTH");
    assert.equal(r.answer.length, 0);
    // dig prints the reply's TSIG: key name, algorithm, time, fudge, MAC size 0, original ID, error.
    assert.match(r.text, /^nokey\.example\.\s+0\s+ANY\s+TSIG\s+hmac-sha256\. \d+ 300 0 \d+ BADKEY 0/m);
  }
  // A TSIG record anywhere but last in the additional section is FORMERR.
  const signed = (sections: Partial<Msg>) =>
    exchangeUdp(srv.port, encode(queryMsg("www.example.org.", Type.A, sections)));
  const tsig = {
    name: "k.",
    type: Type.TSIG,
    class: 255,
    ttl: 0,
    data: { type: Type.TSIG, raw: TSIG_RDATA },
  };
  const a = { name: "k.", type: Type.A, class: 1, ttl: 0, data: { type: Type.A, address: "192.0.2.1" } };
  assert.equal(decode((await signed({ answer: [tsig] }))!).rcode, Rcode.FORMERR);
  assert.equal(decode((await signed({ additional: [tsig, a] }))!).rcode, Rcode.FORMERR);
  assert.equal(decode((await signed({ additional: [a, tsig] }))!).rcode, Rcode.NOTAUTH);
});

test("meta and obsolete QTYPEs: FORMERR or NOTIMP, the question echoed", async () => {
  // [QTYPE as dig takes it, as dig prints it, status]
  const cases: [string, string, string][] = [
    ["TYPE0", "TYPE0", "FORMERR"],
    ["TYPE41", "OPT", "FORMERR"],
    ["TYPE250", "TSIG", "FORMERR"],
    ["TYPE249", "TKEY", "NOTIMP"],
    ["MAILB", "MAILB", "NOTIMP"],
    ["MAILA", "MAILA", "NOTIMP"],
  ];
  for (const [type, printed, status] of cases) {
    for (const name of [MANY, "www.example.org"]) {
      const r = await dig(srv.port, name, type);
      assert.equal(r.status, status, `${type} ${name}`);
      const question = r.text.split("\n").find((l) => l.startsWith(`;${name}.`));
      assert.deepEqual(question?.split(/\s+/), [`;${name}.`, "IN", printed], `${type} ${name}`);
    }
  }
});

test("a label holding a '.' octet (RFC 2181 11): one label, answered, echoed and logged escaped", async () => {
  for (let i = 0; i < 2; i++) {
    // Twice: the second from the answer cache.
    const r = await dig(srv.port, "A\\.b.dotted.test", "A");
    assert.equal(r.status, "NOERROR");
    // The owner points at the question, so it shows the client's spelling.
    assert.deepEqual(r.answer, ["A\\.b.dotted.test. 60 IN A 192.0.2.41"]);
    assert.match(r.text, /^;A\\\.b\.dotted\.test\.\s+IN\s+A$/m, "the client's spelling echoed");
  }
  assert.equal((await dig(srv.port, "a.b.dotted.test", "A")).status, "NXDOMAIN");
  // Not a name below cluster.local's namespace "default": one label "many.default".
  const k = await dig(srv.port, "many\\.default.svc.cluster.local", "A");
  assert.equal(k.status, "NXDOMAIN");
  assert.match(k.authority[0], /^cluster\.local\. \d+ IN SOA /);
  // x\.cluster.local. is the label "x.cluster" under local., which no block but "." serves: whoami.
  const w = await dig(srv.port, "x\\.cluster.local", "A");
  assert.deepEqual([w.status, w.answer.length], ["NOERROR", 0]);
  assert.match(w.additional[0], /^x\\\.cluster\.local\. 0 IN A 127\.0\.0\.1$/);
  // The log line prints the name escaped.
  const logged = await waitForLog((rec) => rec.name === "many\\.default.svc.cluster.local.");
  assert.equal(logged.rcode, "NXDOMAIN");
  assert.match(String(logged.msg), / many\\\.default\.svc\.cluster\.local\. /);
});

/** The first log record `match` accepts, waiting for it a little (stdout is asynchronous). */
async function waitForLog(
  match: (rec: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  for (let i = 0; i < 50; i++) {
    const rec = srv.logs.find(match);
    if (rec) return rec;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("no such log line");
}

test("whoami for a 255-octet name: the address without the SRV record, not SERVFAIL", async () => {
  const name = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join(".");
  for (const proto of ["+notcp", "+tcp"]) {
    const r = await dig(srv.port, name, "A", proto);
    assert.equal(r.status, "NOERROR", proto);
    assert.equal(r.additional.length, 1, proto);
    assert.match(r.additional[0], /^a{63}\.b{63}\.c{63}\.d{61}\. 0 IN A 127\.0\.0\.1$/);
  }
});
