// transfer's NOTIFY signed with TSIG, end to end with Knot DNS as the secondary: Knot takes NOTIFY and
// transfers only with the key (its notify and transfer ACLs name it), and looks at the zone on its own
// only at the SOA refresh, an hour away. A change of the zone file on clusterdns must reach Knot
// within seconds when the `to` line gives the key; unsigned, or signed with a key Knot does not hold,
// the NOTIFY is turned away and the change does not arrive.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { freeUdpTcpPort } from "./helpers/free-port.ts";
import { kdig } from "./helpers/kdig.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";
import { knotAnswers, zoneText } from "./upstream/knot-secondary.ts";

const SECRET = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=";
const OTHER = Buffer.from("a secret Knot has never heard of").toString("base64");

const running: { stop(): Promise<unknown> }[] = [];
after(async () => {
  for (const r of running.reverse()) await r.stop();
});

/** clusterdns, primary of example.org with transfers signed by transfer-key., its `to` line `to`. */
async function primary(port: number, to: string): Promise<RunningServer> {
  const s = await startServer(
    `example.org {
    tsig {
        secret transfer-key. ${SECRET}
        secret other-key. ${OTHER}
        require AXFR IXFR
    }
    file example.org.zone {
        reload 1s
    }
    transfer {
        ${to}
    }
}
`,
    { args: ["-dns.port", String(port)], files: { "example.org.zone": zoneText(1, "192.0.2.1") } },
  );
  running.push(s);
  return s;
}

/** Starts the pair, waits for Knot's first (signed) transfer, then raises the serial on clusterdns. */
async function changeAfterTransfer(toLine: (knotPort: number) => string) {
  const port = await freeUdpTcpPort();
  const knotPort = await freeUdpTcpPort();
  const s = await primary(port, toLine(knotPort));
  const k = await startKnotOn(port, knotPort);
  await knotAnswers(k, "www.example.org", "192.0.2.1", 15_000);
  writeFileSync(join(s.dir, "example.org.zone"), zoneText(2, "192.0.2.2"));
  return { s, k };
}

/** Knot on `knotPort` (the port clusterdns notifies), the secondary of clusterdns on `port`. */
async function startKnotOn(port: number, knotPort: number): Promise<Knot> {
  const k = await startKnot({
    port: knotPort,
    zone: { origin: "example.org.", text: "" },
    conf: { primary: port, key: { name: "transfer-key", algorithm: "hmac-sha256", secret: SECRET } },
  });
  running.push(k);
  return k;
}

const notifiedSerial2 = (k: Knot) =>
  k.log.some((l) => /\[example\.org\.\] notify, incoming, remote 127\.0\.0\.1@\d+, serial 2/.test(l));

test("transfer NOTIFY signed with the `to` line's key: Knot, which requires it, transfers the change at once", async () => {
  const { s, k } = await changeAfterTransfer((knot) => `to 127.0.0.1:${knot} key transfer-key.`);
  // The file is read within a second, its serial seen within one more; Knot's refresh is an hour away.
  const took = await knotAnswers(k, "www.example.org", "192.0.2.2", 10_000);
  assert.ok(notifiedSerial2(k), k.log.join("\n"));
  const answered = s.logs.filter((l) => l.msg === "NOTIFY answered").map((l) => l.serial);
  assert.ok(answered.includes(2), JSON.stringify(s.logs.slice(-10)));
  console.log(`# Knot served serial 2 ${took} ms after the file was written`);
});

/** Knot still answers the old address `ms` after the change: no NOTIFY got through. */
async function stillOld(k: Knot, ms: number): Promise<void> {
  await sleep(ms);
  assert.deepEqual((await kdig(k.port, "www.example.org", "A", "+short")).records, ["192.0.2.1"]);
  assert.ok(!notifiedSerial2(k), k.log.join("\n"));
}

test("transfer NOTIFY unsigned (no key on the `to` line): Knot turns it away and keeps the old zone", async () => {
  const { s, k } = await changeAfterTransfer((knot) => `to 127.0.0.1:${knot}`);
  await stillOld(k, 6000);
  assert.ok(
    s.logs.some((l) => l.msg === "NOTIFY refused by the secondary" && l.serial === 2),
    JSON.stringify(s.logs.slice(-10)),
  );
});

test("transfer NOTIFY signed with a key Knot does not hold: turned away, the old zone stays", async () => {
  const { s, k } = await changeAfterTransfer((knot) => `to 127.0.0.1:${knot} key other-key.`);
  await stillOld(k, 6000);
  // Knot answers NOTAUTH with the TSIG error BADKEY, unsigned (RFC 8945 5.2): not sent again.
  const refused = s.logs.filter((l) => l.msg === "NOTIFY refused by the secondary" && l.serial === 2);
  assert.equal(refused.length, 1, JSON.stringify(s.logs.slice(-10)));
  assert.match(String(refused[0].tsig), /BADKEY/, JSON.stringify(refused[0]));
  assert.equal(refused[0].sends, 1);
});

test("a `to` key the block's tsig does not hold stops start-up", async () => {
  await assert.rejects(primary(await freeUdpTcpPort(), "to 127.0.0.1:5300 key nobody."), /nobody/);
});
