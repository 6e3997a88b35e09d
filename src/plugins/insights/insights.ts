// The insights of one server block: the finish hook counts each query by the workload that sent it,
// follows search-list walks, and feeds the top lists; a 1 s timer moves the windows on. Reading
// (report.ts) builds the JSON the API, the page and `clusterdns top` show. The hook allocates
// nothing: counters are typed arrays indexed by row, the top lists copy octets into their own
// arrays, and the address string is the one the engine made.

import type { QueryDone } from "../../metrics/query-done.ts";
import { Rcode } from "../../dns/constants.ts";
import { C, COUNTERS, Counters, S, Seconds } from "./counters.ts";
import {
  NameTop,
  TextTop,
  nameHash,
  wireNameLength,
  type NameEntries,
  type NameKey,
  type TextEntries,
} from "./names.ts";
import { hashText, type TopEntry } from "./space-saving.ts";
import { WindowedTop } from "./windowed-top.ts";
import { Walks } from "./walk.ts";
import { Workloads, OTHER } from "./workloads.ts";
import { Upstreams } from "./upstreams.ts";
import { Sampling } from "./sampling.ts";

export interface InsightsOptions {
  /** The cluster domain in wire form (\7cluster\5local\0). */
  zone: Uint8Array;
  /** Workload rows tracked (the special rows included). */
  workloads: number;
  /** Entries shown per top list; each sketch holds 8 times as many. */
  top: number;
  /** False in a worker thread: it keeps no windows of its own, only what it posts (threads.ts). */
  windows?: boolean;
  /** Whether the block has autopath (then its fix is not offered); set again by a reload. */
  autopath: boolean;
}

/** What a worker thread counted since it last posted (threads.ts carries it to the main thread). */
export interface Delta {
  /** Rows with counts, and their COUNTERS counters each. */
  rows: Int32Array;
  counts: Uint32Array;
  names: NameEntries;
  nxNames: NameEntries;
  wasted: NameEntries;
  clients: TextEntries;
  servfails: [string, number][];
}

export class Insights {
  readonly options: InsightsOptions;
  readonly workloads: Workloads;
  readonly counters: Counters;
  readonly seconds = new Seconds();
  readonly walks: Walks;
  readonly names: WindowedTop<NameTop>;
  readonly nxNames: WindowedTop<NameTop>;
  /** Names whose search walks cost NXDOMAINs, tagged with the workload's row, weighted by the cost. */
  readonly wasted: WindowedTop<NameTop>;
  readonly clients: WindowedTop<TextTop>;
  /** SERVFAIL replies by the plugin that gave them ("" when the server did). */
  readonly servfails = new Map<string, number>();
  readonly upstreams = new Upstreams();
  readonly startedAt = Date.now();
  /** Which queries the top lists count (all of them below sampling.ts's RATE a second). */
  readonly sampling = new Sampling();
  #ticks = 0;
  /** Queries recorded since the last tick. */
  #recorded = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(o: InsightsOptions) {
    this.options = o;
    this.workloads = new Workloads(o.workloads);
    this.counters = new Counters(o.workloads, o.windows ?? true);
    this.walks = new Walks(o.zone);
    const k = o.top * 8;
    const windows = o.windows ?? true;
    const name = (e: TopEntry<unknown>) => `${(e.key as NameKey).tag} ${(e.key as NameKey).name}`;
    this.names = new WindowedTop((door) => new NameTop(k, door), name, windows);
    this.nxNames = new WindowedTop((door) => new NameTop(k, door), name, windows);
    // A walk's cost comes once per walk, with its weight: no doorkeeper.
    this.wasted = new WindowedTop(() => new NameTop(k, false), name, windows);
    this.clients = new WindowedTop(
      (door) => new TextTop(k, door),
      (e) => e.key as string,
      windows,
    );
  }

  start(): void {
    this.seconds.advance(Math.floor(Date.now() / 1000));
    this.#timer = setInterval(() => this.tick(Date.now()), 1000);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Once a second: the clock, the second ring; every 10 s the windows, the top lists' and the
   * upstreams. */
  tick(now: number): void {
    this.walks.now = now;
    this.seconds.advance(Math.floor(now / 1000));
    // This thread's own queries (the main thread's seconds also hold what workers post).
    this.sampling.adapt(this.#recorded);
    this.#recorded = 0;
    const s = Math.floor((now - this.startedAt) / 1000);
    if (s < (this.#ticks + 1) * 10) return;
    this.#ticks++;
    this.counters.step(this.#ticks);
    this.upstreams.sample();
    for (const t of [this.names, this.nxNames, this.wasted]) t.step(this.#ticks);
    this.clients.step(this.#ticks);
  }

  /** The finish hook: counts one answered query. */
  readonly record = (q: QueryDone): void => {
    const address = q.remoteAddress;
    const row = this.workloads.rowOf(address);
    const totals = this.counters.totals;
    const base = row * COUNTERS;
    totals[base + C.QUERIES]++;
    this.#recorded++;
    this.seconds.add(S.QUERIES);
    const rcode = q.rcode;
    if (rcode === Rcode.NOERROR) totals[base + C.NOERROR]++;
    else if (rcode === Rcode.NXDOMAIN) {
      totals[base + C.NXDOMAIN]++;
      this.seconds.add(S.NXDOMAIN);
    } else if (rcode === Rcode.SERVFAIL) {
      totals[base + C.SERVFAIL]++;
      this.seconds.add(S.SERVFAIL);
      this.servfails.set(q.plugin, (this.servfails.get(q.plugin) ?? 0) + 1);
    } else if (rcode === Rcode.REFUSED) totals[base + C.REFUSED]++;
    else totals[base + C.OTHER_RCODE]++;
    if (q.cached) {
      totals[base + C.CACHE_HITS]++;
      this.seconds.add(S.CACHE_HITS);
    }
    const h = hashText(address);
    const wire = q.nameWire;
    const length = wireNameLength(wire);
    if (this.sampling.take()) {
      const weight = this.sampling.every;
      this.clients.live.count(address, h, weight);
      if (length >= 0) {
        // One hash of the name for both lists.
        const nh = nameHash(wire, 0, length);
        this.names.live.countHashed(nh, wire, 0, length, weight);
        if (rcode === Rcode.NXDOMAIN) this.nxNames.live.countHashed(nh, wire, 0, length, weight);
      }
    }
    if (length < 0) return;
    const w = this.walks.q;
    w.address = address;
    w.h = h;
    w.wire = wire;
    w.length = length;
    w.rcode = rcode;
    w.namespace = this.workloads.rows[row].namespace;
    if (this.walks.observe()) this.#walkEnded(row, base);
  };

  #walkEnded(row: number, base: number): void {
    const e = this.walks.ended;
    const totals = this.counters.totals;
    totals[base + C.WALKS]++;
    if (e.wasted === 0) return;
    totals[base + C.WASTED] += e.wasted;
    this.seconds.add(S.WASTED, e.wasted);
    // ndots:2 asks a name with 2 dots or more as is first: it saves the walk when that is where the
    // name was found.
    if (e.asIs && e.dots >= 2) totals[base + C.WASTED_NDOTS2] += e.wasted;
    // autopath walks the list on the server for a client it knows by its pod.
    if (row > OTHER) totals[base + C.WASTED_AUTOPATH] += e.wasted;
    this.wasted.live.count(e.wire, 0, e.length, row, e.wasted);
  }

  /** In a worker thread: what was counted since the last call, then counted anew from zero (the
   * doorkeepers remember on). Undefined when nothing was. */
  takeDelta(): Delta | undefined {
    const totals = this.counters.totals;
    const rows: number[] = [];
    for (let row = 0; row < this.counters.rows; row++)
      if (totals[row * COUNTERS + C.QUERIES] > 0) rows.push(row);
    if (rows.length === 0) return undefined;
    const counts = new Uint32Array(rows.length * COUNTERS);
    rows.forEach((row, i) => counts.set(totals.subarray(row * COUNTERS, (row + 1) * COUNTERS), i * COUNTERS));
    totals.fill(0);
    const d: Delta = {
      rows: Int32Array.from(rows),
      counts,
      names: this.names.live.entries(),
      nxNames: this.nxNames.live.entries(),
      wasted: this.wasted.live.entries(),
      clients: this.clients.live.entries(),
      servfails: [...this.servfails],
    };
    for (const t of [this.names, this.nxNames, this.wasted, this.clients]) t.live.clear(true);
    this.servfails.clear();
    return d;
  }

  /** On the main thread: adds a worker's delta (rows are numbered alike in every thread: threads.ts). */
  absorb(d: Delta): void {
    const totals = this.counters.totals;
    for (let i = 0; i < d.rows.length; i++) {
      const base = d.rows[i] * COUNTERS;
      if (base >= totals.length) continue;
      for (let k = 0; k < COUNTERS; k++) totals[base + k] += d.counts[i * COUNTERS + k];
      const at = i * COUNTERS;
      this.seconds.add(S.QUERIES, d.counts[at + C.QUERIES]);
      this.seconds.add(S.NXDOMAIN, d.counts[at + C.NXDOMAIN]);
      this.seconds.add(S.SERVFAIL, d.counts[at + C.SERVFAIL]);
      this.seconds.add(S.CACHE_HITS, d.counts[at + C.CACHE_HITS]);
      this.seconds.add(S.WASTED, d.counts[at + C.WASTED]);
    }
    this.names.live.merge(d.names);
    this.nxNames.live.merge(d.nxNames);
    this.wasted.live.merge(d.wasted);
    this.clients.live.merge(d.clients);
    for (const [plugin, n] of d.servfails) this.servfails.set(plugin, (this.servfails.get(plugin) ?? 0) + n);
  }

  /** Bytes held in typed arrays (the fixed part; the pod map grows with the cluster, not traffic). */
  get bytes(): number {
    const tops = [this.names, this.nxNames, this.wasted, this.clients];
    return this.counters.bytes + this.walks.bytes + 3600 * 5 * 4 + tops.reduce((n, t) => n + t.bytes, 0);
  }
}
