// secondary end to end, with Knot DNS as the real primary on loopback: the first transfer, a change
// on Knot announced by NOTIFY (sent as IXFR from Knot's journal), a change found by the SOA refresh
// timer when no NOTIFY comes, a primary down at start-up (SERVFAIL, then the zone once it is up), the
// zone expiring when the primary stays away, and NOTIFYs from strangers or to blocks without it.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { dig, digTransfer, digUntil } from "./helpers/dig.ts";
import { freeUdpTcpPort } from "./helpers/free-port.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";

const running: { stop(): Promise<unknown> }[] = [];
after(async () => {
  for (const r of running.reverse()) await r.stop();
});

/** example.org with SOA timers `refresh retry expire` (seconds). */
function zone(timers: string, extra: string[] = []): { origin: string; text: string } {
  const text = [
    "$ORIGIN example.org.",
    "$TTL 300",
    `@ SOA ns.example.org. hostmaster.example.org. 1 ${timers} 60`,
    "@ NS ns",
    "ns A 127.0.0.1",
    "www A 192.0.2.1",
    "alias CNAME www",
    ...extra,
  ];
  return { origin: "example.org.", text: text.join("\n") + "\n" };
}

async function knot(o: Parameters<typeof startKnot>[0]): Promise<Knot> {
  const k = await startKnot(o);
  running.push(k);
  return k;
}

async function server(corefile: string, port: number): Promise<RunningServer> {
  const s = await startServer(corefile, { args: ["-dns.port", String(port)] });
  running.push(s);
  return s;
}

const corefile = (primary: number, extra = "") => `example.org {${extra}
    secondary {
        transfer from 127.0.0.1:${primary}
    }
    transfer {
        to *
    }
}
other.test {
    whoami
}
`;

const logged = (s: RunningServer, msg: string) =>
  s.logs.filter((l) => typeof l.msg === "string" && l.msg.startsWith(msg));

test("secondary: AXFR at start, NOTIFY then IXFR of a change made on Knot, re-served by transfer", async () => {
  const port = await freeUdpTcpPort();
  const k = await knot({
    zone: zone("3600 600 86400"),
    conf: { notifyPorts: [port], journal: true, control: true },
  });
  const s = await server(corefile(k.port), port);
  await digUntil(port, "www.example.org", "A", ["www.example.org. 300 IN A 192.0.2.1"]);
  const r = await dig(port, "alias.example.org", "A");
  assert.deepEqual(r.answer, [
    "alias.example.org. 300 IN CNAME www.example.org.",
    "www.example.org. 300 IN A 192.0.2.1",
  ]);
  assert.ok(r.flags.includes("aa"));
  assert.equal((await dig(port, "nope.example.org", "A")).status, "NXDOMAIN");
  assert.equal(logged(s, "incoming transfer")[0].how, "AXFR");

  await k.knotc("zone-begin", "example.org");
  await k.knotc("zone-set", "example.org", "new", "300", "A", "192.0.2.99");
  await k.knotc("zone-unset", "example.org", "www", "A", "192.0.2.1");
  await k.knotc("zone-set", "example.org", "www", "300", "A", "192.0.2.2");
  await k.knotc("zone-commit", "example.org");
  await digUntil(port, "new.example.org", "A", ["new.example.org. 300 IN A 192.0.2.99"]);
  assert.deepEqual((await dig(port, "www.example.org", "A")).answer, ["www.example.org. 300 IN A 192.0.2.2"]);
  assert.ok(logged(s, "NOTIFY received").length >= 1, "Knot's NOTIFY reached the secondary");
  const last = logged(s, "incoming transfer").at(-1)!;
  assert.deepEqual([last.how, last.serial], ["IXFR", 2]);

  // The transferred zone goes out again, the same as Knot sends it.
  const ours = await digTransfer(port, "example.org");
  const theirs = await digTransfer(k.port, "example.org");
  assert.ok(!ours.failed);
  assert.deepEqual([...ours.records].sort(), [...theirs.records].sort());
});

test("secondary: the refresh timer finds a change when no NOTIFY comes", async () => {
  const port = await freeUdpTcpPort();
  // No notifyPorts: Knot tells nobody. REFRESH 1 s.
  const k = await knot({ zone: zone("1 1 86400"), conf: { journal: true, control: true } });
  const s = await server(corefile(k.port), port);
  await digUntil(port, "www.example.org", "A", ["www.example.org. 300 IN A 192.0.2.1"]);
  await k.knotc("zone-begin", "example.org");
  await k.knotc("zone-set", "example.org", "late", "300", "TXT", '"found by refresh"');
  await k.knotc("zone-commit", "example.org");
  await digUntil(port, "late.example.org", "TXT", ['late.example.org. 300 IN TXT "found by refresh"']);
  assert.equal(logged(s, "NOTIFY received").length, 0);
});

test("secondary: primary down at start-up: SERVFAIL, the zone once it is up, SERVFAIL after EXPIRE", async () => {
  const port = await freeUdpTcpPort();
  const primary = await freeUdpTcpPort();
  const s = await server(corefile(primary), port);
  assert.equal((await dig(port, "www.example.org", "A")).status, "SERVFAIL");
  // Other blocks answer meanwhile.
  assert.equal((await dig(port, "a.other.test", "A")).status, "NOERROR");
  await sleep(1500);
  const k = await knot({ port: primary, zone: zone("1 1 4") });
  await digUntil(port, "www.example.org", "A", ["www.example.org. 300 IN A 192.0.2.1"]);
  assert.ok(logged(s, "zone transfer failed; the zone is not served yet").length >= 1);
  // EXPIRE 4 s: with the primary gone, the copy is served for 4 s more at most, then SERVFAIL.
  await k.stop();
  await digUntil(port, "www.example.org", "A", "SERVFAIL");
  assert.equal(
    logged(s, "zone expired: no primary answered for the SOA's expire time; answering SERVFAIL").length,
    1,
  );
});

test("secondary: NOTIFY from a stranger is REFUSED; a block without secondary answers NOTIFY NOTIMP", async () => {
  const port = await freeUdpTcpPort();
  const k = await knot({ zone: zone("3600 600 86400") });
  // With cache: a NOTIFY's reply must never be kept and replayed to a query of the same question.
  await server(corefile(k.port, "\n    cache 30"), port);
  // cache keeps the SERVFAIL of before the first transfer for a few seconds: wait it out.
  for (let i = 0; i < 150 && (await dig(port, "www.example.org", "A")).status !== "NOERROR"; i++)
    await sleep(100);
  const stranger = await dig(port, "example.org", "SOA", "+opcode=notify", "+norec", "-b", "127.0.0.2");
  assert.equal(stranger.status, "REFUSED");
  const primary = await dig(port, "example.org", "SOA", "+opcode=notify", "+norec");
  assert.equal(primary.status, "NOERROR");
  assert.ok(primary.flags.includes("aa"));
  assert.match(primary.text, /opcode: NOTIFY/);
  for (let i = 0; i < 2; i++) {
    const soa = await dig(port, "example.org", "SOA");
    assert.match(soa.text, /opcode: QUERY/);
    assert.equal(soa.answer.length, 1, "the query gets the zone's SOA, not the NOTIFY's empty reply");
  }
  const again = await dig(port, "example.org", "SOA", "+opcode=notify", "+norec");
  assert.deepEqual([again.answer, /opcode: NOTIFY/.test(again.text)], [[], true]);
  assert.equal((await dig(port, "other.test", "SOA", "+opcode=notify")).status, "NOTIMP");
});

test("secondary: a REFRESH over Node's longest timer (30 days) does not poll the primary in a loop", async () => {
  const port = await freeUdpTcpPort();
  // REFRESH 30 days, RETRY 1 day, EXPIRE 60 days: common values for a zone that rarely changes.
  const k = await knot({ zone: zone("2592000 86400 5184000"), conf: { journal: true, control: true } });
  const s = await server(corefile(k.port), port);
  await digUntil(port, "www.example.org", "A", ["www.example.org. 300 IN A 192.0.2.1"]);
  const before = k.log.length;
  await sleep(1500);
  // Knot logs nothing for a SOA query: change the zone, so a poll would transfer it again.
  await k.knotc("zone-begin", "example.org");
  await k.knotc("zone-set", "example.org", "polled", "300", "A", "192.0.2.7");
  await k.knotc("zone-commit", "example.org");
  await sleep(1500);
  assert.equal(
    (await dig(port, "polled.example.org", "A")).status,
    "NXDOMAIN",
    k.log.slice(before).join("\n"),
  );
  assert.equal(logged(s, "incoming transfer").length, 1);
  assert.doesNotMatch(s.stderr(), /TimeoutOverflowWarning/);
});

test("secondary: REFRESH 0 does not ask the primary back to back", async () => {
  const port = await freeUdpTcpPort();
  const k = await knot({ zone: zone("0 0 86400") });
  const s = await server(corefile(k.port), port);
  await digUntil(port, "www.example.org", "A", ["www.example.org. 300 IN A 192.0.2.1"]);
  // A SOA query every turn of the event loop would keep the server's core busy.
  const cpu = () => readFileSync(`/proc/${s.proc.pid}/stat`, "utf8").split(") ")[1].split(" ");
  const ticks = () => Number(cpu()[11]) + Number(cpu()[12]);
  const start = ticks();
  await sleep(2000);
  const used = (ticks() - start) / 100;
  // Idle, it uses none: asking back to back took 0.28 s.
  assert.ok(used < 0.1, `${used} s of CPU in 2 s, idle but for the refresh`);
});

test("secondary: the zone expires EXPIRE seconds after the last good check, not at the next RETRY", async () => {
  const port = await freeUdpTcpPort();
  // RETRY (30 s) longer than EXPIRE (6 s): the copy may not outlive EXPIRE waiting for a retry. The
  // check at REFRESH (2 s) fails after its 3 s timeout, inside EXPIRE.
  const k = await knot({ zone: zone("2 30 6") });
  await server(corefile(k.port), port);
  await digUntil(port, "www.example.org", "A", ["www.example.org. 300 IN A 192.0.2.1"]);
  await k.stop();
  const stopped = Date.now();
  let status = "";
  while (status !== "SERVFAIL" && Date.now() - stopped < 15_000) {
    status = (await dig(port, "www.example.org", "A")).status;
    await sleep(200);
  }
  const s = (Date.now() - stopped) / 1000;
  assert.ok(status === "SERVFAIL" && s < 10, `${status} after ${s} s`);
});
