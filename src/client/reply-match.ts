// Which packet answers which query. A reply is taken only when its ID, QR bit and question all match
// the query in flight (RFC 5452 9.1): a random 16-bit ID alone is guessable by an off-path attacker,
// and a late reply to an earlier query on a pooled connection must not answer a later one. With 0x20
// (draft-vixie-dnsext-dns0x20) the query's name went out in random case, and the reply must echo that
// case exactly: each letter is one more bit an attacker has to guess. Beyond that check, names are
// compared case-insensitively (RFC 4343).

import type { Msg } from "../dns/message.ts";
import { readMessage } from "../dns/wire-msg.ts";

/** What the reply to one query must echo. `name` is the name as sent. */
export interface Expect {
  id: number;
  name: string;
  type: number;
  class: number;
  /** The name's octets as sent in 0x20 case (queryName of the query): the reply's question must
   * hold the same octets, case included. Unset: any case will do. */
  wire?: Uint8Array;
}

/** Why a packet was not taken as the reply: the `reason` label of the rejected-replies metric. */
export type Mismatch = "malformed" | "id" | "qr" | "question" | "case";

/**
 * The reply when `pkt` answers `e`, else why not. Its records decode when first read
 * (dns/wire-msg.ts): a reply relayed as it came is never decoded. With `e.wire`, the reply's question octets
 * are compared before decoding and then lowercased in `pkt`, so that the reply decodes as if asked in
 * the server's own spelling: names the upstream compressed against the question (a CNAME's target
 * under the same zone) do not come back in the random case.
 */
export function checkReply(pkt: Buffer, e: Expect): Msg | Mismatch {
  // The cheap checks first: most strays (and a flood of guessed IDs) fail on the ID before any decoding.
  if (pkt.length < 12) return "malformed";
  if (((pkt[0] << 8) | pkt[1]) !== e.id) return "id";
  if ((pkt[2] & 0x80) === 0) return "qr";
  const octets = e.wire ? questionOctets(pkt, e.wire) : undefined;
  if (octets === "other") return "question";
  if (octets === "same") lowerAt(pkt, 12, e.wire!.length);
  let m: Msg;
  try {
    m = readMessage(pkt);
  } catch {
    return "malformed";
  }
  if (m.question.length !== 1) return "question";
  const q = m.question[0];
  if (q.type !== e.type || q.class !== e.class) return "question";
  if (octets === "case") return "case";
  // With `wire` the name was compared as octets; else in any case.
  if (!e.wire && q.name !== e.name && asciiLower(q.name) !== asciiLower(e.name)) return "question";
  return m;
}

/** How the name at the start of the question (offset 12: never compressed, nothing precedes it)
 * compares with `wire`: the same octets, the same but for the case of letters, or other octets. */
function questionOctets(pkt: Buffer, wire: Uint8Array): "same" | "case" | "other" {
  if (pkt.length < 12 + wire.length) return "other";
  let verdict: "same" | "case" = "same";
  for (let i = 0; i < wire.length; i++) {
    const a = pkt[12 + i];
    const b = wire[i];
    if (a === b) continue;
    // Length octets are below 64, so they never pass for letters.
    if ((a | 0x20) !== (b | 0x20) || (a | 0x20) < 0x61 || (a | 0x20) > 0x7a) return "other";
    verdict = "case";
  }
  return verdict;
}

/** ASCII uppercase letters in pkt[from, from+length) lowered in place (length octets are below 64). */
function lowerAt(pkt: Buffer, from: number, length: number): void {
  for (let i = from; i < from + length; i++) if (pkt[i] >= 0x41 && pkt[i] <= 0x5a) pkt[i] |= 0x20;
}

/** The first question's name octets in an encoded query (from offset 12 to its root label). */
export function queryName(query: Uint8Array): Uint8Array {
  let i = 12;
  while (i < query.length && query[i] !== 0) i += query[i] + 1;
  return query.subarray(12, i + 1);
}

/** The reply when `pkt` answers `e`, else undefined (malformed packets included). */
export function matchReply(pkt: Buffer, e: Expect): Msg | undefined {
  const m = checkReply(pkt, e);
  return typeof m === "string" ? undefined : m;
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

/** CSPRNG octets for 0x20, drawn 1 KiB at a time (a draw per name cost more than the rest of it). */
const caseBits = new Uint8Array(1024);
let nextBit = caseBits.length * 8;

/** `name` with each ASCII letter's case drawn from the CSPRNG (0x20): a name of n letters carries n
 * bits an off-path attacker must guess, on top of the ID and the source port. Other octets (digits,
 * hyphens, escapes) are left as they are. */
export function randomCase(name: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if ((c | 0x20) < 0x61 || (c | 0x20) > 0x7a) continue;
    if (nextBit === caseBits.length * 8) {
      crypto.getRandomValues(caseBits);
      nextBit = 0;
    }
    const flip = (caseBits[nextBit >> 3] >> (nextBit & 7)) & 1;
    nextBit++;
    if (flip === 0) continue;
    out += name.slice(from, i) + String.fromCharCode(c ^ 0x20);
    from = i + 1;
  }
  return out + name.slice(from);
}
