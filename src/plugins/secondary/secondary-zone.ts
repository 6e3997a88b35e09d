// One secondary zone: the copy we serve and the SOA timers that keep it (RFC 1034 4.3.5, RFC 1996).
// - Until the first transfer succeeds the zone is not served (SERVFAIL, as CoreDNS); the transfer is
//   tried again after 1, 2, 4, 8 s and then every 10 s (CoreDNS: every 10 s).
// - Every REFRESH seconds the primaries' SOA serial is asked; a newer one is transferred (IXFR from
//   our serial, AXFR when the primary will not or cannot). A check that fails is tried again every
//   RETRY seconds; EXPIRE seconds after the last check that succeeded the zone stops being served.
// - A NOTIFY from a primary starts a check at once (a check under way is followed by another).
// A small jitter (up to 10% of the wait, at most CoreDNS's 5 s) keeps many zones from asking at once.

import type { Logger } from "pino";
import type { RR } from "../../dns/message.ts";
import { Zone } from "../file/zone.ts";
import { newer } from "../transfer/transfer.ts";
import { primarySerial, pullZone, type Primary } from "./primary.ts";
import type { Signer } from "../../client/tsig-signer.ts";
import { PrimaryError } from "./primary-error.ts";
import { applyDiffs, serialOf } from "./stream.ts";
import { Rcode } from "../../dns/constants.ts";
import { MAX_TIMER_MS } from "../../corefile/args.ts";

export interface SecondaryZoneOptions {
  origin: string;
  /** Tried in order; the first that answers is used. */
  primaries: readonly Primary[];
  log: Logger;
  /** Signs what is sent to the primaries (tsig); undefined: unsigned. */
  signer?: () => Signer;
}

/** Waits before the first transfer is tried again, then the last one for ever. */
const FIRST_RETRIES_MS = [1_000, 2_000, 4_000, 8_000, 10_000];
const MAX_JITTER_MS = 5_000;
/** The shortest wait between checks (Knot's refresh-min-interval is 2 s), and the longest a timer
 * takes less the jitter. */
const MIN_WAIT_MS = 1_000;
const MAX_WAIT_MS = MAX_TIMER_MS - MAX_JITTER_MS;

export class SecondaryZone {
  readonly origin: string;
  readonly #o: SecondaryZoneOptions;
  /** The zone as transferred, with its records (for the next IXFR). */
  #zone: Zone | undefined;
  #records: RR[] = [];
  #expired = false;
  /** performance.now() of the last check that reached a primary. */
  #lastOk = 0;
  #failures = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Fires EXPIRE seconds after the last good check; #errors: why the checks since then failed. */
  #expiry: NodeJS.Timeout | undefined;
  #errors: string[] = [];
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;
  /** Called after the served zone changed (drops cached answers); replaced by a reload's instance. */
  onChange: () => void = () => {};

  constructor(o: SecondaryZoneOptions) {
    this.origin = o.origin;
    this.#o = o;
  }

  /** The zone to answer from: undefined before the first transfer and once expired. */
  get serving(): Zone | undefined {
    return this.#expired ? undefined : this.#zone;
  }

  /** Starts the first transfer (idempotent: a reload's instance that adopts this zone calls it again). */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    void this.check();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#expiry);
    this.#timer = undefined;
  }

  /** Checks the primaries now (a NOTIFY, a timer); one under way is followed by another. */
  check(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    clearTimeout(this.#timer);
    this.#running = this.#checkNow().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        void this.check();
      }
    });
    return this.#running;
  }

  async #checkNow(): Promise<void> {
    const log = this.#o.log;
    const errors: string[] = [];
    for (const p of this.#o.primaries) {
      try {
        const serial = await primarySerial(p, this.origin, this.#o.signer);
        if (this.#zone !== undefined && !newer(serial, serialOf(this.#zone.soa))) {
          this.#succeeded();
          return;
        }
        await this.#transfer(p);
        this.#succeeded();
        return;
      } catch (err) {
        errors.push(`${p.to}: ${(err as Error).message}`);
      }
    }
    if (this.#stopped) return;
    this.#failures++;
    if (this.#zone === undefined) {
      const wait = FIRST_RETRIES_MS[Math.min(this.#failures, FIRST_RETRIES_MS.length) - 1];
      log.warn(
        { zone: this.origin, errors, retryMs: wait },
        "zone transfer failed; the zone is not served yet",
      );
      this.#schedule(wait);
      return;
    }
    const soa = this.#zone.soa.data as { retry: number; expire: number };
    this.#errors = errors;
    if (!this.#expired && performance.now() - this.#lastOk >= soa.expire * 1000) this.#expire();
    else if (!this.#expired) {
      log.warn(
        { zone: this.origin, errors, retryS: soa.retry },
        "zone refresh failed; serving the copy held",
      );
    }
    this.#schedule(soa.retry * 1000);
  }

  #expire(): void {
    if (this.#stopped || this.#expired) return;
    this.#expired = true;
    this.onChange();
    this.#o.log.error(
      { zone: this.origin, errors: this.#errors },
      "zone expired: no primary answered for the SOA's expire time; answering SERVFAIL",
    );
  }

  /** Transfers the zone from `p`: IXFR from our serial when we hold the zone, AXFR otherwise or when the
   * primary does not do IXFR. */
  async #transfer(p: Primary): Promise<void> {
    const started = performance.now();
    const held = this.#zone;
    let pulled;
    try {
      pulled = await pullZone(p, this.origin, { serial: held?.soa, signer: this.#o.signer });
    } catch (err) {
      // RFC 1995 doesn't oblige a primary to serve IXFR: NOTIMP, REFUSED or FORMERR mean "ask AXFR".
      const rcode = err instanceof PrimaryError ? err.rcode : undefined;
      const fallBack =
        held !== undefined && (rcode !== undefined || /newer SOA alone/.test((err as Error).message));
      if (!fallBack || rcode === Rcode.NOTAUTH) throw err;
      pulled = await pullZone(p, this.origin, { signer: this.#o.signer });
    }
    if (pulled.kind === "current") return;
    const records =
      pulled.kind === "full"
        ? [pulled.soa, ...pulled.records]
        : applyDiffs(this.#records, serialOf(held!.soa), pulled.diffs, pulled.soa);
    let zone: Zone;
    try {
      zone = new Zone(this.origin, records);
    } catch (err) {
      throw new PrimaryError(`the transferred zone is not valid: ${(err as Error).message}`);
    }
    if (this.#stopped) return;
    this.#zone = zone;
    this.#records = records;
    this.#expired = false;
    this.onChange();
    this.#o.log.info(
      {
        zone: this.origin,
        primary: p.to,
        serial: serialOf(zone.soa),
        how: pulled.kind === "full" ? (held === undefined ? "AXFR" : "AXFR (full)") : "IXFR",
        records: zone.size,
        ms: Math.round(performance.now() - started),
      },
      "incoming transfer",
    );
  }

  #succeeded(): void {
    this.#failures = 0;
    this.#lastOk = performance.now();
    this.#errors = [];
    // The copy expires EXPIRE after this check, on time, not at the first failed RETRY after it.
    clearTimeout(this.#expiry);
    const expire = (this.#zone!.soa.data as { expire: number }).expire * 1000;
    this.#expiry = setTimeout(() => this.#expire(), Math.min(expire, MAX_WAIT_MS));
    this.#expiry.unref();
    if (this.#expired) {
      this.#expired = false;
      this.onChange();
    }
    this.#schedule((this.#zone!.soa.data as { refresh: number }).refresh * 1000);
  }

  #schedule(soaMs: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    // An SOA's REFRESH or RETRY of 0 would ask the primary back to back, and one over Node's longest
    // timer (24.8 days: a REFRESH of 30 days) fires at once: either way, a loop of SOA queries.
    const ms = Math.min(Math.max(soaMs, MIN_WAIT_MS), MAX_WAIT_MS);
    const jitter = Math.random() * Math.min(MAX_JITTER_MS, ms / 10);
    this.#timer = setTimeout(() => void this.check(), ms + jitter);
    this.#timer.unref();
  }
}
