// Knot DNS as the real secondary of a clusterdns serving example.org from a zone file (transfer's
// NOTIFY and IXFR tests): the zone's text, the two processes, and a wait for Knot's answer.

import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { startServer, type RunningServer } from "../helpers/server.ts";
import { kdig } from "../helpers/kdig.ts";
import { startKnot, type Knot } from "./knot.ts";

/** What the test started, for its `after` to stop (last first). */
export const running: { stop(): Promise<unknown> }[] = [];

/** example.org at `serial`, www at `address`; refresh an hour, retry 10 minutes. */
export function zoneText(serial: number, address: string, extra: string[] = []): string {
  return [
    "$ORIGIN example.org.",
    "$TTL 300",
    `@ SOA ns.example.org. hostmaster.example.org. ${serial} 3600 600 86400 60`,
    "@ NS ns",
    "ns A 127.0.0.1",
    `www A ${address}`,
    ...extra,
  ].join("\n");
}

/** Knot as a secondary of clusterdns on `primary`. */
export async function knotSecondary(primary: number, journal = false): Promise<Knot> {
  const k = await startKnot({
    zone: { origin: "example.org.", text: "" },
    conf: { primary, journal },
  });
  running.push(k);
  return k;
}

export async function clusterdns(port: number, knot: number, extra = ""): Promise<RunningServer> {
  const s = await startServer(
    `example.org {
    file example.org.zone {
        reload 1s
    }
    transfer {
        to 127.0.0.1:${knot}
    }${extra}
}
`,
    { args: ["-dns.port", String(port)], files: { "example.org.zone": zoneText(1, "192.0.2.1") } },
  );
  running.push(s);
  return s;
}

/** Asks Knot until `name` A is `want`, for `ms` at most; returns how long it took. */
export async function knotAnswers(knot: Knot, name: string, want: string, ms: number): Promise<number> {
  const started = Date.now();
  let last: string[] = [];
  while (Date.now() - started < ms) {
    last = (await kdig(knot.port, name, "A", "+short")).records;
    if (last.includes(want)) return Date.now() - started;
    await sleep(200);
  }
  assert.fail(
    `Knot answered ${JSON.stringify(last)} for ${name}, not ${want}, after ${ms} ms\n${knot.log.join("\n")}`,
  );
}
