// What a zone transfer's messages say, read record by record as they come: the whole zone (AXFR, or
// an IXFR answered the AXFR way, RFC 1995 4), the changes from our version (IXFR's sequence of
// "old SOA, deleted records, new SOA, added records", RFC 1995 2), or that our version is current (a
// single SOA). The transfer ends at the SOA that closes it; anything after is an error.

import type { Msg, RR } from "../../dns/message.ts";
import { Type } from "../../dns/constants.ts";
import { newer } from "../transfer/transfer.ts";
import { PrimaryError } from "./primary-error.ts";
import { rdataToText } from "../../dns/text.ts";

/** One change set of an IXFR: from one serial to the next. */
export interface Diff {
  from: number;
  to: number;
  deleted: RR[];
  added: RR[];
}

export type Pulled =
  | { kind: "current"; serial: number }
  | { kind: "full"; soa: RR; records: RR[] }
  | { kind: "diff"; soa: RR; diffs: Diff[] };

type State = "start" | "second" | "full" | "del" | "add" | "done";

export class TransferReader {
  readonly #zone: string;
  readonly #ours: number | undefined;
  #state: State = "start";
  #soa: RR | undefined;
  #records: RR[] = [];
  #diffs: Diff[] = [];
  #messages = 0;

  /** `ours`: the SOA of the version we hold, for an IXFR; undefined for an AXFR. */
  constructor(zone: string, ours: RR | undefined) {
    this.#zone = zone;
    this.#ours = ours === undefined ? undefined : serialOf(ours);
  }

  /** Reads one message; true once the transfer is whole. Throws PrimaryError for one that is not a
   * transfer of the zone. */
  push(m: Msg): boolean {
    this.#messages++;
    for (const rr of m.answer) this.#record(rr);
    // RFC 1995 4: an IXFR answered with the single current SOA; one that is newer than ours cannot be
    // sent incrementally by this primary (over TCP, that is no answer): the caller asks for AXFR.
    if (
      this.#state === "second" &&
      this.#ours !== undefined &&
      this.#messages === 1 &&
      m.answer.length === 1
    ) {
      if (newer(this.#serial(), this.#ours)) throw new PrimaryError("IXFR answered with a newer SOA alone");
      this.#state = "done";
    }
    return this.#state === "done";
  }

  result(): Pulled {
    if (this.#state !== "done") throw new PrimaryError("the transfer did not end with its SOA");
    const soa = this.#soa!;
    if (
      this.#ours !== undefined &&
      this.#records.length === 0 &&
      this.#diffs.length === 0 &&
      !newer(serialOf(soa), this.#ours)
    )
      return { kind: "current", serial: serialOf(soa) };
    return this.#diffs.length > 0
      ? { kind: "diff", soa, diffs: this.#diffs }
      : { kind: "full", soa, records: this.#records };
  }

  #serial(): number {
    return serialOf(this.#soa!);
  }

  #record(rr: RR): void {
    const soa = rr.type === Type.SOA ? serialOf(rr) : undefined;
    const last = this.#diffs.at(-1);
    switch (this.#state) {
      case "start":
        if (soa === undefined || rr.name.toLowerCase() !== this.#zone)
          throw new PrimaryError("the transfer does not open with the zone's SOA");
        this.#soa = rr;
        this.#state = "second";
        return;
      case "second":
        if (soa === undefined) {
          this.#records.push(rr);
          this.#state = "full";
        } else if (soa === this.#serial()) {
          this.#state = "done"; // a zone of nothing but its SOA
        } else if (this.#ours !== undefined) {
          this.#diffs.push({ from: soa, to: soa, deleted: [], added: [] });
          this.#state = "del";
        } else {
          throw new PrimaryError("an AXFR with two different SOA records");
        }
        return;
      case "full":
        if (soa === undefined) this.#records.push(rr);
        else if (soa === this.#serial()) this.#state = "done";
        else throw new PrimaryError("a SOA of another serial inside the zone");
        return;
      case "del":
        if (soa === undefined) last!.deleted.push(rr);
        else {
          last!.to = soa;
          this.#state = "add";
        }
        return;
      case "add":
        if (soa === undefined) last!.added.push(rr);
        else if (soa === this.#serial() && last!.to === soa) this.#state = "done";
        else {
          this.#diffs.push({ from: soa, to: soa, deleted: [], added: [] });
          this.#state = "del";
        }
        return;
      case "done":
        throw new PrimaryError("records after the SOA that closes the transfer");
    }
  }
}

/** The zone's records (SOA included) after applying `diffs` to `records`, ending at `soa`. Throws
 * PrimaryError when the diffs do not start at our serial or delete a record we do not hold. */
export function applyDiffs(records: readonly RR[], ours: number, diffs: readonly Diff[], soa: RR): RR[] {
  const held = new Map<string, RR>();
  for (const rr of records) if (rr.type !== Type.SOA) held.set(identity(rr), rr);
  let serial = ours;
  for (const d of diffs) {
    if (d.from !== serial) throw new PrimaryError(`an IXFR change from serial ${d.from}, we hold ${serial}`);
    for (const rr of d.deleted) {
      if (rr.type === Type.SOA) continue;
      if (!held.delete(identity(rr)))
        throw new PrimaryError(`an IXFR deletes a record we do not hold: ${rr.name}`);
    }
    for (const rr of d.added) if (rr.type !== Type.SOA) held.set(identity(rr), rr);
    serial = d.to;
  }
  if (serial !== serialOf(soa))
    throw new PrimaryError(`an IXFR ends at serial ${serial}, not ${serialOf(soa)}`);
  return [soa, ...held.values()];
}

/** A record's identity in an RRset (RFC 2181 5: TTL aside). Names inside the rdata compare as the
 * primary spells them: it spells a deleted record as it sent it. */
function identity(rr: RR): string {
  return `${rr.name.toLowerCase()} ${rr.type} ${rr.class} ${rdataToText(rr.data)}`;
}

export function serialOf(soa: RR): number {
  return (soa.data as { serial: number }).serial;
}
