// TTLs written straight into an encoded message: how the answer cache ages a reply `cache` keeps.

import { Type } from "./constants.ts";

/**
 * Writes `ttl` into the TTL field of every record after the question (answer, authority, additional),
 * except OPT, whose TTL field holds the extended rcode and flags. `from` is the offset just past the
 * question. The message must be well formed, as the encoder writes it: names are labels ending in the
 * root octet or in a compression pointer.
 */
export function setTtls(msg: Uint8Array, from: number, ttl: number): void {
  const count = ((msg[6] << 8) | msg[7]) + ((msg[8] << 8) | msg[9]) + ((msg[10] << 8) | msg[11]);
  let p = from;
  for (let i = 0; i < count; i++) {
    for (let l = msg[p]; l !== 0; l = msg[p]) {
      if (l >= 0xc0) {
        p++;
        break;
      }
      p += l + 1;
    }
    p++;
    if ((msg[p] << 8) + msg[p + 1] !== Type.OPT) {
      msg[p + 4] = ttl >>> 24;
      msg[p + 5] = (ttl >>> 16) & 0xff;
      msg[p + 6] = (ttl >>> 8) & 0xff;
      msg[p + 7] = ttl & 0xff;
    }
    p += 10 + ((msg[p + 8] << 8) | msg[p + 9]);
  }
}
