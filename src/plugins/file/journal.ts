// A zone's recent history, for IXFR (RFC 1995): the records each reload removed and added, from one
// serial to the next. A reload that raises the serial adds one change; one that lowers it or keeps it
// breaks the chain (a secondary asking from before it gets the whole zone).
//
// Bounded: the last MAX_CHANGES changes and MAX_RECORDS records in them at most, the oldest dropped
// first; a client whose serial is older than what is kept gets the whole zone. The differences are
// found by comparing the two versions record by record when the new one is swapped in: O(records)
// strings once per reload (a zone file's reload, not a query's path).

import type { RR } from "../../dns/message.ts";
import { Type } from "../../dns/constants.ts";
import { rrToText } from "../../dns/text.ts";
import { newer } from "../transfer/transfer.ts";
import type { ZoneChange } from "../transfer/transferer.ts";
import type { Zone } from "./zone.ts";

/** Changes kept per zone. */
const MAX_CHANGES = 32;
/** Records (removed plus added) kept per zone, over all its changes. */
const MAX_RECORDS = 100_000;

export class Journal {
  #changes: ZoneChange[] = [];
  #records = 0;

  /** Takes the step from `old` to `now` (same origin). */
  record(old: Zone, now: Zone): void {
    const from = serialOf(old.soa);
    const to = serialOf(now.soa);
    if (from === to) {
      // Same serial, maybe other records: no secondary can be told; the history no longer leads here.
      if (differs(old, now)) this.clear();
      return;
    }
    if (!newer(to, from)) {
      this.clear();
      return;
    }
    const change = { from: old.soa, to: now.soa, ...zoneDiff(old, now) };
    this.#changes.push(change);
    this.#records += size(change);
    while (this.#changes.length > MAX_CHANGES || this.#records > MAX_RECORDS) {
      this.#records -= size(this.#changes.shift()!);
    }
  }

  clear(): void {
    this.#changes = [];
    this.#records = 0;
  }

  /** The changes from `serial` to the zone's current version (whose SOA is `current`), oldest first;
   * undefined when `serial` is not a version the journal starts a change from. */
  since(serial: number, current: RR): readonly ZoneChange[] | undefined {
    const last = this.#changes.at(-1);
    if (last === undefined || serialOf(last.to) !== serialOf(current)) return undefined;
    const i = this.#changes.findIndex((c) => serialOf(c.from) === serial);
    return i < 0 ? undefined : this.#changes.slice(i);
  }
}

/** The records of `old` that `now` lacks and those `now` has that `old` lacked, the apex SOA aside
 * (a record is the same only when every field is: a changed TTL removes and adds it). */
export function zoneDiff(old: Zone, now: Zone): { removed: RR[]; added: RR[] } {
  const before = keyed(old);
  const added: RR[] = [];
  for (const chunk of now.transferRecords()) {
    for (const rr of chunk) {
      const key = rrToText(rr);
      if (before.has(key)) before.delete(key);
      else added.push(rr);
    }
  }
  return { removed: [...before.values()], added };
}

function differs(old: Zone, now: Zone): boolean {
  const d = zoneDiff(old, now);
  return d.removed.length + d.added.length > 0;
}

function keyed(zone: Zone): Map<string, RR> {
  const out = new Map<string, RR>();
  for (const chunk of zone.transferRecords()) for (const rr of chunk) out.set(rrToText(rr), rr);
  return out;
}

function size(c: ZoneChange): number {
  return c.removed.length + c.added.length;
}

function serialOf(soa: RR): number {
  return soa.type === Type.SOA ? (soa.data as { serial: number }).serial : NaN;
}
