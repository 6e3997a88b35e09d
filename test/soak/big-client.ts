// A client that costs the server much: it asks unique names whose answers hold thousands of records,
// as a resolver would, over UDP with EDNS 1232 first and again over TCP when the reply is truncated.
// Paced at `qps` (at most `inFlight` names at once), for at most `seconds`; counts what came back.

import { exchangeTcp } from "../helpers/tcp-exchange.ts";
import { exchangeUdp } from "../helpers/udp-exchange.ts";
import { encode } from "../../src/dns/encode.ts";
import { newQuery } from "../../src/dns/message.ts";
import { Type } from "../../src/dns/constants.ts";

export interface BigClientOptions {
  port: number;
  /** The zone under which every label is a new name with a big answer ("r4000.big.test."). */
  zone: string;
  qps: number;
  seconds: number;
  /** Names asked at once at most: past it a tick sends nothing (the server is behind). */
  inFlight?: number;
  /** Source address of the client's queries (the server limits per address). */
  from?: string;
}

export interface BigClientResult {
  /** Names asked, and answered in full (over TCP, after the truncated UDP reply). */
  asked: number;
  answered: number;
  /** Replies with REFUSED (the server declined the work), with another rcode, or none at all. */
  refused: number;
  failed: number;
  lost: number;
}

let serial = 0;

/** A name nobody asked before (the answer store never holds it). */
export function uniqueName(zone: string): string {
  return `u${process.pid}-${Date.now().toString(36)}-${serial++}.${zone}`;
}

export function bigQuery(name: string, udpSize = 1232): Buffer {
  const m = newQuery(name, Type.A, 1, (Math.random() * 65536) | 0);
  m.edns = { udpSize, version: 0, do: false, options: [] };
  return encode(m);
}

/** One name as a stub resolver asks it: UDP, then TCP on TC. Resolves with the rcode, or -1. */
export async function askBig(
  port: number,
  name: string,
  from = "127.0.0.1",
  timeoutMs = 5000,
): Promise<number> {
  const q = bigQuery(name);
  const udp = await exchangeUdp(port, q, timeoutMs, "127.0.0.1", from);
  if (udp === undefined) return -1;
  if ((udp[2] & 0x02) === 0) return udp[3] & 0x0f;
  const tcp = await exchangeTcp(port, q, timeoutMs, from);
  return tcp === undefined ? -1 : tcp[3] & 0x0f;
}

/** Asks unique big names at `qps` for `seconds`. */
export async function bigClient(o: BigClientOptions): Promise<BigClientResult> {
  const r: BigClientResult = { asked: 0, answered: 0, refused: 0, failed: 0, lost: 0 };
  const max = o.inFlight ?? 64;
  let open = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  const ends = started + o.seconds * 1000;
  while (performance.now() < ends) {
    const due = Math.floor(((performance.now() - started) / 1000) * o.qps);
    while (r.asked < due && open < max) {
      r.asked++;
      open++;
      pending.push(
        askBig(o.port, uniqueName(o.zone), o.from).then((rcode) => {
          open--;
          if (rcode === 0) r.answered++;
          else if (rcode === 5) r.refused++;
          else if (rcode > 0) r.failed++;
          else r.lost++;
        }),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await Promise.all(pending);
  return r;
}
