// forward tries again when a try gets no reply, as CoreDNS's does: up to max_connect_attempts tries
// (twice the number of upstreams by default), going round the upstreams, within the query's 5 s. With
// a single upstream (a resolv.conf of one nameserver), one lost UDP packet must not be a SERVFAIL.
// Real packet loss: Knot in a network namespace whose firewall drops every other query sent to it.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createNetns, type Netns } from "./helpers/netns.ts";
import { startKnot, type Knot } from "./upstream/knot.ts";
import { startServer, type RunningServer } from "./helpers/server.ts";
import { parseDig } from "./helpers/dig.ts";

const KNOT_PORT = 15353;

let ns: Netns;
let knot: Knot;

before(async () => {
  ns = await createNetns(undefined, "nameserver 127.0.0.1\n");
  knot = await startKnot({ netns: ns.name, port: KNOT_PORT });
  // Every other UDP packet to Knot is lost: the 1st, 3rd, 5th...
  const drop = ["-A", "INPUT", "-p", "udp", "--dport", String(KNOT_PORT), "-m", "statistic"];
  const r = await ns.exec("iptables", [
    ...drop,
    "--mode",
    "nth",
    "--every",
    "2",
    "--packet",
    "0",
    "-j",
    "DROP",
  ]);
  assert.equal(r.code, 0, r.stderr);
});

after(async () => {
  await knot?.stop();
  await ns?.destroy();
});

async function start(options: string): Promise<RunningServer> {
  // No health checks: their packets would take turns with the queries' in the firewall's count.
  return startServer(
    `. {\n    forward . 127.0.0.1:${KNOT_PORT} {\n        max_fails 0\n        read_timeout 300ms\n${options}    }\n}\n`,
    { netns: ns.name },
  );
}

async function status(srv: RunningServer, name: string): Promise<string> {
  const args = ["@127.0.0.1", "-p", String(srv.port), name, "A", "+tries=1", "+time=8", "+nocookie"];
  const r = await ns.exec("dig", args);
  return parseDig(r.stdout).status;
}

test("one upstream losing every other packet: each query is tried again and answered", async () => {
  const srv = await start("");
  try {
    const got: string[] = [];
    for (let i = 0; i < 4; i++) got.push(await status(srv, `q${i}.www.example.org`));
    // www.example.org has no names below it: Knot's NXDOMAIN is the answer; SERVFAIL is a lost one.
    assert.deepEqual(got, ["NXDOMAIN", "NXDOMAIN", "NXDOMAIN", "NXDOMAIN"]);
  } finally {
    await srv.stop();
  }
});

test("max_connect_attempts 1: a single try, so a lost packet is a SERVFAIL", async () => {
  const srv = await start("        max_connect_attempts 1\n");
  try {
    const got: string[] = [];
    for (let i = 0; i < 4; i++) got.push(await status(srv, `r${i}.www.example.org`));
    assert.equal(got.filter((s) => s === "SERVFAIL").length, 2, got.join(" "));
    assert.equal(got.filter((s) => s === "NXDOMAIN").length, 2, got.join(" "));
  } finally {
    await srv.stop();
  }
});
