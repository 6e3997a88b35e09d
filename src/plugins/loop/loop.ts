// loop: finds forwarding loops at start-up. Once the listeners are open it sends itself a query for a
// random name, `<random>.<random>.<zone>` of type HINFO, and counts how often that query passes
// through the chain. A query that comes back a third time went out through an upstream that leads
// back here (typically `forward . /etc/resolv.conf` on a node whose resolv.conf names this server):
// start-up fails, because every query that is not answered locally would circle until it times out.

import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Handler } from "../../chain/handler.ts";
import type { ListenAddress } from "../../setup/block.ts";
import type { Exchange } from "../../client/udp-exchange.ts";
import { failure } from "../../chain/handler.ts";
import { newQuery } from "../../dns/message.ts";
import { Rcode, Type } from "../../dns/constants.ts";
import { udpExchange } from "../../client/udp-exchange.ts";
import { joinHostPort } from "../../dns/host-port.ts";

export class LoopError extends Error {
  readonly code = "CDNS_ERR_LOOP";
}

export interface LoopOptions {
  exchange?: Exchange;
  /** How long to wait for the probe's reply before starting anyway (a slow upstream is no loop). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 2000;

/** A query seen this many times has looped. */
const LOOPED = 3;

export class Loop {
  /** The probe's name: random, so only the probe can match it. */
  readonly qname: string;
  readonly #log: Logger;
  readonly #exchange: Exchange;
  readonly #timeoutMs: number;
  #seen = 0;
  /** After the probe the plugin passes everything on, so no client query can stop the server. */
  #disabled = false;
  #target = "";
  #loopedFrom: string | undefined;
  #onLoop: (() => void) | undefined;

  constructor(zone: string, log: Logger, o: LoopOptions = {}) {
    this.qname = `${random()}.${random()}.${zone === "." ? "" : zone}`;
    this.#log = log;
    this.#exchange = o.exchange ?? udpExchange;
    this.#timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  get seen(): number {
    return this.#seen;
  }

  handler(next: Handler): Handler {
    return {
      name: "loop",
      lane: { kind: "pass", passes: (q) => q.qtype !== Type.HINFO || q.qname !== this.qname },
      serve: (req) => {
        if (this.#disabled || req.qtype !== Type.HINFO || req.qname !== this.qname) return next.serve(req);
        if (++this.#seen < LOOPED) return next.serve(req);
        // Stop the circle here: this hop answers, and the ones before it unwind.
        if (this.#loopedFrom === undefined) {
          this.#loopedFrom = `${req.remoteAddress}:${req.remotePort}`;
          this.#log.fatal(
            { qname: this.qname, server: this.#target, from: this.#loopedFrom },
            this.#message(),
          );
          this.#onLoop?.();
        }
        return Promise.resolve(failure(req, Rcode.SERVFAIL));
      },
    };
  }

  /** Sends the probe to the listener at `at` and waits for its reply, for a loop, or for the timeout;
   * rejects with a LoopError when the probe came back. */
  async probe(at: ListenAddress): Promise<void> {
    const host = at.address === "0.0.0.0" ? "127.0.0.1" : at.address === "::" ? "::1" : at.address;
    this.#target = joinHostPort(host, at.port);
    const looped = new Promise<void>((resolve) => (this.#onLoop = resolve));
    const query = newQuery(this.qname, Type.HINFO, 1, randomBytes(2).readUInt16BE());
    try {
      await Promise.race([this.#exchange(host, at.port, query, this.#timeoutMs), looped]);
    } catch (err) {
      this.#log.warn({ err, server: this.#target }, "loop: the probe could not be sent; loops go undetected");
    } finally {
      this.#disabled = true;
      this.#onLoop = undefined;
    }
    if (this.#loopedFrom !== undefined) throw new LoopError(`loop: ${this.#message()}`);
  }

  #message(): string {
    return (
      `forwarding loop detected: the probe "HINFO ${this.qname}" sent to ${this.#target} came back ` +
      `${this.#seen} times, the last time from ${this.#loopedFrom} (path ${this.#target} -> upstream -> ` +
      `${this.#target}); an upstream of this server forwards back to it`
    );
  }
}

/** A random decimal below 2^63, like the labels CoreDNS's probe uses. */
function random(): string {
  return (randomBytes(8).readBigUInt64BE() >> 1n).toString();
}
