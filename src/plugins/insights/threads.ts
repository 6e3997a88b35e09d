// insights with -workers N: every thread that answers counts, and the main thread shows the sum. Each
// worker runs the same hook into an Insights of its own and posts what it counted every FEED_MS (a
// Delta: its counters' rows that moved and its top lists' entries), then counts from zero again; the
// main thread adds it into its own, which alone keeps windows, serves the page, the API and the
// series. The cost on the query path is the same in every thread, and what crosses is bounded by the
// workload rows and the top lists' slots, whatever the traffic.
//
// The workers' copies of Workloads watch nothing: the main thread posts the rows it numbers and the
// addresses it maps (a worker's first "hello" gets the whole state, then every change), so a row is
// the same workload in every thread and deltas add up by row. One BroadcastChannel per listener
// carries both ways, so the worker pool and the relay need to know nothing of insights.

import { BroadcastChannel } from "node:worker_threads";
import type { Delta, Insights } from "./insights.ts";
import type { MirrorUpdate } from "./workloads.ts";

/** A "mirror" with `full` is the whole state (the answer to a hello), else the changes of a turn. */
type Message = { t: "hello" } | { t: "mirror"; m: MirrorUpdate; full?: true } | { t: "delta"; d: Delta };

/** How often a worker posts what it counted: what the page and the API may lag behind by. */
export const FEED_MS = 1000;

export interface ThreadLink {
  close(): void;
}

const channel = (key: string) => {
  const ch = new BroadcastChannel(`clusterdns insights ${key}`);
  ch.unref();
  return ch;
};
const data = (e: unknown) => (e as { data: Message }).data;

/** The main thread's side: adds the workers' deltas, and keeps their Workloads copies current from
 * the first hello on (without workers, nothing is posted). */
export function gather(ins: Insights, key: string): ThreadLink {
  const ch = channel(key);
  let pending: MirrorUpdate | undefined;
  const flush = () => {
    const m = pending;
    pending = undefined;
    if (m !== undefined) ch.postMessage({ t: "mirror", m } satisfies Message);
  };
  // The changes of one turn (a LIST page's pods) cross as one message.
  const post = (m: MirrorUpdate) => {
    if (pending === undefined) {
      pending = { rows: [], addresses: [], synced: false };
      queueMicrotask(flush);
    }
    for (const r of m.rows) pending.rows.push(r);
    for (const a of m.addresses) pending.addresses.push(a);
    pending.synced ||= m.synced;
  };
  ch.onmessage = (e) => {
    const msg = data(e);
    if (msg.t === "delta") ins.absorb(msg.d);
    else if (msg.t === "hello") {
      ins.workloads.mirror = post;
      flush();
      ch.postMessage({ t: "mirror", m: ins.workloads.mirrorState(), full: true } satisfies Message);
    }
  };
  return {
    close() {
      ins.workloads.mirror = undefined;
      ch.close();
    },
  };
}

/** A worker's side: says hello (again every FEED_MS until the main thread answers: it may not have
 * set up yet), takes the rows and addresses, and posts its delta every FEED_MS and when it closes. */
export function feed(ins: Insights, key: string): ThreadLink {
  const ch = channel(key);
  let heard = false;
  ch.onmessage = (e) => {
    const msg = data(e);
    if (msg.t !== "mirror") return;
    heard ||= msg.full === true;
    ins.workloads.applyMirror(msg.m);
  };
  const hello = () => ch.postMessage({ t: "hello" } satisfies Message);
  hello();
  const send = () => {
    if (!heard) hello();
    const d = ins.takeDelta();
    if (d !== undefined) ch.postMessage({ t: "delta", d } satisfies Message);
  };
  const timer = setInterval(send, FEED_MS);
  timer.unref();
  return {
    close() {
      clearInterval(timer);
      send();
      ch.close();
    },
  };
}
