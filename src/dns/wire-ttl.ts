// TTLs written straight into an encoded message: how the answer cache ages a reply `cache` keeps.

import { Type } from "./constants.ts";

/** The offset just past a record's owner name at `p`, as the encoder writes names: labels up to the
 * root octet or a compression pointer (the record's TYPE field starts there). */
export function afterOwner(msg: Uint8Array, p: number): number {
  // Bounded by the buffer: a walk sent past the last record ends there instead of looping on
  // undefined octets (loadbalance once read the first answer of a reply that had none: the server hung).
  while (p < msg.length) {
    const l = msg[p];
    if (l === 0) return p + 1;
    if (l >= 0xc0) return p + 2;
    p += l + 1;
  }
  return msg.length;
}

/**
 * Writes `ttl` into the TTL field of every record after the question (answer, authority, additional),
 * except OPT, whose TTL field holds the extended rcode and flags. `from` is the offset just past the
 * question. The message must be well formed, as the encoder writes it: names are labels ending in the
 * root octet or in a compression pointer. The message starts at `base` in `msg`; `from` counts from it.
 */
export function setTtls(msg: Uint8Array, from: number, ttl: number, base = 0): void {
  const b = base;
  const count =
    ((msg[b + 6] << 8) | msg[b + 7]) + ((msg[b + 8] << 8) | msg[b + 9]) + ((msg[b + 10] << 8) | msg[b + 11]);
  let p = b + from;
  for (let i = 0; i < count; i++) {
    p = afterOwner(msg, p);
    if ((msg[p] << 8) + msg[p + 1] !== Type.OPT) {
      msg[p + 4] = ttl >>> 24;
      msg[p + 5] = (ttl >>> 16) & 0xff;
      msg[p + 6] = (ttl >>> 8) & 0xff;
      msg[p + 7] = ttl & 0xff;
    }
    p += 10 + ((msg[p + 8] << 8) | msg[p + 9]);
  }
}
