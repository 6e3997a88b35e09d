// IXFR with history (RFC 1995) end to end: a zone file changed twice on clusterdns; Knot DNS, its
// real secondary, must get the change as an incremental transfer (its log tells an IXFR from an
// AXFR-style one), and `dig IXFR=SERIAL` must print the differences record by record.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { digTransfer } from "./helpers/dig.ts";
import { freeUdpTcpPort } from "./helpers/free-port.ts";
import { clusterdns, knotAnswers, knotSecondary, running, zoneText } from "./upstream/knot-secondary.ts";

after(async () => {
  for (const r of running.reverse()) await r.stop();
});

const SOA = (serial: number) =>
  `example.org. 300 IN SOA ns.example.org. hostmaster.example.org. ${serial} 3600 600 86400 60`;

test("IXFR: Knot follows two edits of a zone file incrementally; dig IXFR=N gets the differences", async () => {
  const port = await freeUdpTcpPort();
  const k = await knotSecondary(port);
  const s = await clusterdns(port, k.port);
  await knotAnswers(k, "www.example.org", "192.0.2.1", 15_000);
  const before = k.log.length;

  writeFileSync(join(s.dir, "example.org.zone"), zoneText(2, "192.0.2.2", ["new A 192.0.2.20"]));
  await knotAnswers(k, "new.example.org", "192.0.2.20", 15_000);
  writeFileSync(join(s.dir, "example.org.zone"), zoneText(3, "192.0.2.2", ["new 60 A 192.0.2.20"]));
  await knotAnswers(k, "www.example.org", "192.0.2.2", 1000);
  // Serial 3 only changed a TTL: wait for Knot's own SOA to say 3.
  const deadline = Date.now() + 15_000;
  while (!k.log.some((l) => l.includes("serial 2 -> 3")) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
  }
  const since = k.log.slice(before).join("\n");
  assert.match(since, /\[example\.org\.\] refresh, remote 127\.0\.0\.1@\d+, zone updated, .*serial 1 -> 2/);
  assert.match(since, /serial 2 -> 3/);
  assert.match(since, /\[example\.org\.\] IXFR, incoming, remote 127\.0\.0\.1@\d+, finished/);
  assert.doesNotMatch(since, /AXFR-style IXFR|AXFR, incoming/, since);
  const outgoing = s.logs.filter((l) => l.msg === "outgoing transfer").map((l) => `${l.how} ${l.serial}`);
  assert.deepEqual(outgoing, ["AXFR 1", "IXFR 2", "IXFR 3"]);

  // RFC 1995 4: the current SOA, then per change the old SOA, what it removed, the new SOA, what it
  // added, and the current SOA again.
  const fromOne = await digTransfer(port, "example.org", "IXFR=1");
  assert.deepEqual(fromOne.records, [
    SOA(3),
    SOA(1),
    "www.example.org. 300 IN A 192.0.2.1",
    SOA(2),
    "new.example.org. 300 IN A 192.0.2.20",
    "www.example.org. 300 IN A 192.0.2.2",
    SOA(2),
    "new.example.org. 300 IN A 192.0.2.20",
    SOA(3),
    "new.example.org. 60 IN A 192.0.2.20",
    SOA(3),
  ]);
  const fromTwo = await digTransfer(port, "example.org", "IXFR=2");
  assert.deepEqual(fromTwo.records, [
    SOA(3),
    SOA(2),
    "new.example.org. 300 IN A 192.0.2.20",
    SOA(3),
    "new.example.org. 60 IN A 192.0.2.20",
    SOA(3),
  ]);
  // Current: the single SOA. A serial the journal never held: the whole zone.
  assert.deepEqual((await digTransfer(port, "example.org", "IXFR=3")).records, [SOA(3)]);
  const unknown = await digTransfer(port, "example.org", "IXFR=0");
  assert.deepEqual(unknown.records, [
    SOA(3),
    "example.org. 300 IN NS ns.example.org.",
    "new.example.org. 60 IN A 192.0.2.20",
    "ns.example.org. 300 IN A 127.0.0.1",
    "www.example.org. 300 IN A 192.0.2.2",
    SOA(3),
  ]);
});
