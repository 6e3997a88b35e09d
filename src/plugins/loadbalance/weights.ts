// The weights file of loadbalance's weighted policy, in CoreDNS's format: a line with a domain name
// starts its section, each following line is `ADDRESS WEIGHT`; `#` starts a comment.
//
//   www.example.org
//   192.0.2.1 100
//   192.0.2.2 10

import type { Logger } from "pino";
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import { canonical } from "../../dns/name.ts";
import { fileStamp } from "../file/file.ts";

/** Owner name (canonical) -> address (canonicalAddress) -> weight. */
export type Weights = ReadonlyMap<string, ReadonlyMap<string, number>>;

/** Largest weight, as CoreDNS takes it (one octet). */
const MAX_WEIGHT = 255;

/** The weights of a file's text; throws an Error starting with `file:line:` at the first bad line. */
export function parseWeights(text: string, file: string): Weights {
  const out = new Map<string, Map<string, number>>();
  let current: Map<string, number> | undefined;
  for (const [i, raw] of text.split("\n").entries()) {
    const fields = raw.replace(/#.*$/, "").trim().split(/\s+/).filter(Boolean);
    const fail = (why: string): never => {
      throw new Error(`${file}:${i + 1}: ${why}`);
    };
    if (fields.length === 0) continue;
    if (fields.length === 1) {
      const name = canonical(fields[0]);
      if (!/^([a-z0-9_*-]{1,63}\.)+$/.test(name)) fail(`'${fields[0]}' is not a domain name`);
      current = out.get(name) ?? new Map<string, number>();
      out.set(name, current);
      continue;
    }
    if (fields.length !== 2) fail(`want a domain name, or ADDRESS WEIGHT, got ${fields.length} fields`);
    if (current === undefined) fail("an address before any domain name");
    const [address, weight] = fields;
    if (isIP(address) === 0) fail(`'${address}' is not an IP address`);
    if (!/^\d{1,3}$/.test(weight) || Number(weight) > MAX_WEIGHT)
      fail(`weight '${weight}' is not 0 to ${MAX_WEIGHT}`);
    current!.set(canonicalAddress(address), Number(weight));
  }
  return out;
}

/** One spelling per address: IPv6 compressed and lowercase, as the wire decoder writes it. */
export function canonicalAddress(address: string): string {
  return address.includes(":") ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address;
}

/** The weights of one file, read again when it changes (every `intervalMs`). A file that no longer
 * parses, or is gone, is logged and the weights read before stay. */
export class WeightsFile {
  current: Weights;
  readonly #path: string;
  readonly #log: Logger;
  #stamp: string;
  #timer: NodeJS.Timeout | undefined;

  constructor(path: string, weights: Weights, stamp: string, log: Logger) {
    this.#path = path;
    this.current = weights;
    this.#stamp = stamp;
    this.#log = log;
  }

  start(intervalMs: number): void {
    this.#timer = setInterval(() => void this.check(), intervalMs).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One poll; true when new weights were taken. Never throws. */
  async check(): Promise<boolean> {
    const stamp = await fileStamp(this.#path);
    if (stamp === this.#stamp) return false;
    this.#stamp = stamp;
    try {
      this.current = parseWeights(await readFile(this.#path, "utf8"), this.#path);
    } catch (err) {
      this.#log.error(
        { file: this.#path, err: (err as Error).message },
        "weights not reloaded; the ones read before stay",
      );
      return false;
    }
    this.#log.info({ file: this.#path, names: this.current.size }, "weights reloaded");
    return true;
  }
}
