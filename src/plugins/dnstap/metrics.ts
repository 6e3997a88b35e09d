// clusterdns_dnstap_*: what each dnstap target sent and dropped, read from its writers at scrape time.

import { scrapedCounter } from "../../metrics/registry.ts";
import { endpointText, type FrameStream } from "./frame-stream.ts";

/** The writers of every running dnstap target (setup adds them, shutdown removes them). */
export const streams = new Set<FrameStream>();

/** Counts of writers that stopped (a reload), so that the totals never go down. */
const gone = new Map<string, { sent: number; dropped: number }>();

/** Removes a stopped writer, keeping its counts. */
export function retire(s: FrameStream): void {
  streams.delete(s);
  const key = endpointText(s.endpoint);
  const g = gone.get(key) ?? { sent: 0, dropped: 0 };
  g.sent += s.stats.sent;
  g.dropped += s.stats.dropped;
  gone.set(key, g);
}

function fill(which: "sent" | "dropped"): Parameters<typeof scrapedCounter>[3] {
  return (c) => {
    for (const [endpoint, g] of gone) c.inc({ endpoint }, g[which]);
    for (const s of streams) c.inc({ endpoint: endpointText(s.endpoint) }, s.stats[which]);
  };
}

scrapedCounter(
  "clusterdns_dnstap_messages_total",
  "dnstap messages handed to the receiver's socket, by endpoint.",
  ["endpoint"],
  fill("sent"),
);
scrapedCounter(
  "clusterdns_dnstap_dropped_total",
  "dnstap messages dropped because the receiver was absent or slower than the queries (the queue was " +
    "full), by endpoint.",
  ["endpoint"],
  fill("dropped"),
);
