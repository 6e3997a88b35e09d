// Which packet answers which query. A reply is taken only when its ID, QR bit and question all match
// the query in flight (RFC 5452 9.1): a random 16-bit ID alone is guessable by an off-path attacker,
// and a late reply to an earlier query on a pooled connection must not answer a later one.

import type { Msg } from "../dns/message.ts";
import { readMessage } from "../dns/wire-msg.ts";

/** What the reply to one query must echo. `name` is lowercase. */
export interface Expect {
  id: number;
  name: string;
  type: number;
  class: number;
}

/** The reply when `pkt` answers `e`, else undefined (malformed packets included). Its records decode
 * when first read (dns/wire-msg.ts): a reply relayed as it came is never decoded. */
export function matchReply(pkt: Buffer, e: Expect): Msg | undefined {
  // The cheap checks first: most strays fail on the ID before anything is decoded.
  if (pkt.length < 12 || ((pkt[0] << 8) | pkt[1]) !== e.id || (pkt[2] & 0x80) === 0) return undefined;
  let m: Msg;
  try {
    m = readMessage(pkt);
  } catch {
    return undefined;
  }
  if (m.question.length !== 1) return undefined;
  const q = m.question[0];
  if (q.type !== e.type || q.class !== e.class || asciiLower(q.name) !== e.name) return undefined;
  return m;
}

/** DNS compares names ASCII-case-insensitively (RFC 4343); other octets stay as they are. */
export function asciiLower(name: string): string {
  return /[A-Z]/.test(name) ? name.replace(/[A-Z]+/g, (s) => s.toLowerCase()) : name;
}

const ids = new Uint16Array(256);
let nextId = ids.length;

/** A query ID from the system CSPRNG, drawn in batches. */
export function randomId(): number {
  if (nextId === ids.length) {
    crypto.getRandomValues(ids);
    nextId = 0;
  }
  return ids[nextId++];
}
