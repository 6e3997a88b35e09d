// What a plugin holding whole zones offers the transfer plugin, after CoreDNS's transfer.Transferer:
// for a zone it is authoritative for, the zone's SOA and its records, produced a few at a time as the
// transfer writes them, so no plugin ever builds a whole zone in memory. kubernetes and file offer one
// through the block's `shared` map during their setup; transfer reads them when a transfer comes.

import type { RR } from "../../dns/message.ts";
import { OfferKey, offer, offered } from "../offers.ts";

/** One zone, ready to go out. */
export interface ZoneTransfer {
  /** The SOA that opens and closes the transfer: its serial is the version sent. */
  readonly soa: RR;
  /** Every other record of the zone, in order, in arrays of a few: each array is sent (or queued to
   * be) before the next is made. */
  records(): Iterable<readonly RR[]>;
  /** The changes from the client's `serial` to this version, oldest first, when the source keeps
   * them (RFC 1995 IXFR); undefined sends the whole zone. */
  changes?(serial: number): readonly ZoneChange[] | undefined;
}

/** One step of a zone's history, as an IXFR sends it (RFC 1995 4). */
export interface ZoneChange {
  /** The SOA of the version before. */
  readonly from: RR;
  /** The SOA of the version after. */
  readonly to: RR;
  readonly removed: readonly RR[];
  readonly added: readonly RR[];
}

/** The source holds the zone but cannot send it now (the kubernetes store has not synced). */
export interface Unavailable {
  readonly unavailable: string;
}

export interface Transferer {
  /** The plugin's name, for logs. */
  readonly name: string;
  /** The apexes of the zones it holds now (canonical): the zones whose serial NOTIFY watches. */
  zones(): Iterable<string>;
  /** The zone whose apex is `zone` (canonical), or undefined when the plugin has no such zone. */
  transfer(zone: string): ZoneTransfer | Unavailable | undefined;
}

/** The key under which the block's transferers are listed. */
const TRANSFERERS = new OfferKey<Transferer[]>("transfer");

/** Lists a plugin's transferer for the block's transfer plugin. Plugins set up in chain order, so the
 * block's transferers are asked in that order. */
export function offerTransferer(shared: Map<string, unknown>, t: Transferer): void {
  transferers(shared).push(t);
}

/** The block's transferers, in chain order (filled during setup: read it at start-up or later). */
export function transferers(shared: Map<string, unknown>): Transferer[] {
  let list = offered(shared, TRANSFERERS);
  if (list === undefined) {
    list = [];
    offer(shared, TRANSFERERS, list);
  }
  return list;
}
