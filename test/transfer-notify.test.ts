// transfer's NOTIFY end to end, with Knot DNS as the real secondary on loopback: Knot serves
// example.org as a secondary of clusterdns (SOA refresh an hour, so only a NOTIFY makes it look
// sooner), and takes NOTIFY from it. A zone file changed on clusterdns must reach Knot within seconds,
// and a NOTIFY sent while Knot is away must be sent again until it answers.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { RunningServer } from "./helpers/server.ts";
import { freeUdpTcpPort } from "./helpers/free-port.ts";
import { startKnot } from "./upstream/knot.ts";
import { clusterdns, knotAnswers, knotSecondary, running, zoneText } from "./upstream/knot-secondary.ts";

after(async () => {
  for (const r of running.reverse()) await r.stop();
});

const logged = (s: RunningServer, msg: string) =>
  s.logs.filter((l) => typeof l.msg === "string" && l.msg.startsWith(msg));

test("transfer NOTIFY: a zone file changed on clusterdns reaches Knot, its secondary, within seconds", async () => {
  const port = await freeUdpTcpPort();
  const k = await knotSecondary(port);
  const s = await clusterdns(port, k.port);
  await knotAnswers(k, "www.example.org", "192.0.2.1", 15_000);

  writeFileSync(join(s.dir, "example.org.zone"), zoneText(2, "192.0.2.2"));
  // The file is read within a second, its serial seen within one more, and Knot transfers at once:
  // without the NOTIFY, Knot would look again only at the SOA refresh, an hour away.
  const took = await knotAnswers(k, "www.example.org", "192.0.2.2", 10_000);
  assert.ok(
    k.log.some((l) => /\[example\.org\.\] notify, incoming, remote 127\.0\.0\.1@\d+, serial 2/.test(l)),
    k.log.join("\n"),
  );
  const answered = logged(s, "NOTIFY answered").map((l) => l.serial);
  assert.ok(answered.includes(2), JSON.stringify(answered));
  console.log(`# Knot served serial 2 ${took} ms after the file was written`);
});

test("transfer NOTIFY: sent again until the secondary answers (Knot started after clusterdns)", async () => {
  const port = await freeUdpTcpPort();
  const knotPort = await freeUdpTcpPort();
  const s = await clusterdns(port, knotPort);
  // The first NOTIFY (at start-up) finds no one; the next comes 2 s later, then 4 s after that.
  await sleep(2500);
  const k = await startKnot({
    zone: { origin: "example.org.", text: "" },
    port: knotPort,
    conf: { primary: port },
  });
  running.push(k);
  await knotAnswers(k, "www.example.org", "192.0.2.1", 15_000);
  const deadline = Date.now() + 10_000;
  while (logged(s, "NOTIFY answered").length === 0 && Date.now() < deadline) await sleep(200);
  const answered = logged(s, "NOTIFY answered");
  assert.equal(answered.length, 1, JSON.stringify(s.logs.slice(-10)));
  assert.ok((answered[0].sends as number) >= 2, JSON.stringify(answered[0]));
  assert.ok(
    k.log.some((l) => l.includes("[example.org.] notify, incoming")),
    k.log.join("\n"),
  );
});
