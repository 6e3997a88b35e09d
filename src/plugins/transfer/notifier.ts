// NOTIFY (RFC 1996) to the secondaries a transfer stanza names, whenever a zone it transfers changes.
//
// Changes are found by reading each zone's SOA serial once a second from its source (the same
// Transferer a transfer reads): one rule for file, auto, secondary and kubernetes zones alike, and a
// serial is what a secondary compares anyway. Reading it costs a lookup per zone (kubernetes keeps its
// SOA per serial), and the first notice of a change waits one poll at most.
//
// A zone is notified when its serial differs from the one last notified (at start-up too, as BIND and
// Knot notify when they load a zone: a secondary that kept running through a restart learns of a new
// file at once), then not again for HOLD_MS: a busy cluster moves the kubernetes serial every second,
// and each NOTIFY costs every secondary a transfer. The last serial is always notified, at most HOLD_MS
// late.
//
// Each secondary is sent the NOTIFY over UDP until it answers (RFC 1996 3.6), the wait doubling from
// FIRST_WAIT_MS to RFC 1996's suggested 60 s, and at most RETRANSMITS times again: then it is logged
// and left to its SOA refresh. A newer serial replaces a NOTIFY still waiting for its answer. A
// secondary given a key gets its NOTIFY signed with it (TSIG), and its answer must verify.

import type { Logger } from "pino";
import { newQuery, type Msg, type RR } from "../../dns/message.ts";
import { Class, Opcode, Rcode, Type } from "../../dns/constants.ts";
import { isSubdomain } from "../../dns/name.ts";
import { UnverifiedReply, udpExchange, type Exchange } from "../../client/udp-exchange.ts";
import { randomId } from "../../client/reply-match.ts";
import type { NotifyTarget } from "./secondaries.ts";
import type { Transferer } from "./transferer.ts";
import { joinHostPort } from "../../dns/host-port.ts";

/** How often the zones' serials are read. */
const POLL_MS = 1000;
/** The least time between two NOTIFYs of one zone. */
const HOLD_MS = 5000;
/** The wait for the first answer; each retransmission waits twice as long, up to MAX_WAIT_MS. */
const FIRST_WAIT_MS = 2000;
const MAX_WAIT_MS = 60_000;
/** RFC 1996 3.6's suggested bound. */
const RETRANSMITS = 5;

export interface NotifierOptions {
  /** The stanza's zones (canonical): a source's zone inside one of them is watched. */
  zones: readonly string[];
  targets: readonly NotifyTarget[];
  /** The block's transferers, in chain order: the first that holds a zone is its source. */
  sources: () => readonly Transferer[];
  log: Logger;
  /** Sends one NOTIFY and waits for its answer (tests inject one). */
  exchange?: Exchange;
  pollMs?: number;
  holdMs?: number;
  firstWaitMs?: number;
  /** The clock the hold is timed by (tests inject one). */
  now?: () => number;
}

interface Watched {
  /** The serial last notified. */
  notified: number;
  /** Date.now() of that NOTIFY. */
  at: number;
}

export class Notifier {
  readonly #o: NotifierOptions;
  readonly #exchange: Exchange;
  readonly #watched = new Map<string, Watched>();
  /** The newest NOTIFY per zone and secondary: an older one still retrying stops. */
  readonly #latest = new Map<string, number>();
  #round = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(o: NotifierOptions) {
    this.#o = o;
    this.#exchange = o.exchange ?? udpExchange;
  }

  start(): void {
    if (this.#timer !== undefined || this.#stopped || this.#o.targets.length === 0) return;
    this.#timer = setInterval(() => void this.poll(), this.#o.pollMs ?? POLL_MS);
    this.#timer.unref();
    void this.poll();
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Reads every watched zone's serial and notifies the zones that changed. Returns the NOTIFYs it
   * started, one per zone and secondary, each settling when answered or given up. */
  poll(): Promise<void>[] {
    const sent: Promise<void>[] = [];
    if (this.#stopped) return sent;
    const now = (this.#o.now ?? Date.now)();
    const seen = new Set<string>();
    for (const source of this.#o.sources()) {
      for (const zone of source.zones()) {
        if (seen.has(zone) || !this.#o.zones.some((z) => isSubdomain(zone, z))) continue;
        seen.add(zone);
        const offer = source.transfer(zone);
        if (offer === undefined || "unavailable" in offer) continue;
        const serial = (offer.soa.data as { serial: number }).serial;
        const w = this.#watched.get(zone);
        if (w !== undefined && (w.notified === serial || now - w.at < (this.#o.holdMs ?? HOLD_MS))) continue;
        this.#watched.set(zone, { notified: serial, at: now });
        this.#o.log.info({ zone, serial, to: this.#o.targets.map(label) }, "zone changed: sending NOTIFY");
        for (const t of this.#o.targets) sent.push(this.#notify(offer.soa, t));
      }
    }
    return sent;
  }

  async #notify(soa: RR, t: NotifyTarget): Promise<void> {
    const key = `${soa.name} ${label(t)}`;
    const round = ++this.#round;
    this.#latest.set(key, round);
    const serial = (soa.data as { serial: number }).serial;
    let wait = this.#o.firstWaitMs ?? FIRST_WAIT_MS;
    for (let sends = 0; sends <= RETRANSMITS; sends++, wait = Math.min(wait * 2, MAX_WAIT_MS)) {
      if (this.#stopped || this.#latest.get(key) !== round) return;
      const started = Date.now();
      let reply: Msg | undefined;
      /** Why a signed NOTIFY's answer does not verify: the secondary turned the key away (BADKEY,
       * BADSIG), or the answer is not from the key's holder. Sending again would meet the same. */
      let unverified: string | undefined;
      try {
        reply = await this.#exchange(t.host, t.port, notifyMessage(soa), wait, t.signer?.());
      } catch (err) {
        if (err instanceof UnverifiedReply) [reply, unverified] = [err.reply, err.message];
        else {
          this.#o.log.debug({ zone: soa.name, to: label(t), err: (err as Error).message }, "NOTIFY not sent");
          // A send that fails at once still waits its turn, so that retransmissions keep their pace.
          await new Promise((r) => setTimeout(r, Math.max(0, wait - (Date.now() - started))).unref());
        }
      }
      if (reply === undefined) continue;
      if (this.#latest.get(key) === round) this.#latest.delete(key);
      const fields = { zone: soa.name, serial, to: label(t), sends: sends + 1, key: t.key };
      if (reply.opcode === Opcode.NOTIFY && reply.rcode === Rcode.NOERROR && unverified === undefined) {
        this.#o.log.info(fields, "NOTIFY answered");
      } else {
        this.#o.log.warn(
          { ...fields, opcode: reply.opcode, rcode: reply.rcode, tsig: unverified },
          "NOTIFY refused by the secondary",
        );
      }
      return;
    }
    if (this.#latest.get(key) === round) this.#latest.delete(key);
    this.#o.log.warn(
      { zone: soa.name, serial, to: label(t), sends: RETRANSMITS + 1 },
      "NOTIFY not answered: the secondary will find the change at its SOA refresh",
    );
  }
}

/** RFC 1996 3.7: opcode NOTIFY, AA, the zone's SOA as the question, and its SOA as the answer (the
 * hint of the new serial a secondary may use). */
export function notifyMessage(soa: RR): Msg {
  const m = newQuery(soa.name, Type.SOA, Class.IN, randomId());
  return { ...m, opcode: Opcode.NOTIFY, aa: true, rd: false, answer: [soa] };
}

function label(t: NotifyTarget): string {
  return joinHostPort(t.host, t.port);
}
