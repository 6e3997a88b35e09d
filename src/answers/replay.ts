// A stored reply written out for one client: the stored octets, then the client's ID, RD and CD bits
// (AD cleared for a client that set neither AD nor DO) and its spelling of the question (0x20
// survives), the answer records rotated one place further when loadbalance asked for it, and every
// TTL the time left when `cache` keeps the reply.

import type { AnswerStore } from "./store.ts";
import { setTtls } from "../dns/wire-ttl.ts";
import { copyBytes } from "./slab.ts";

/** The client a stored reply is written out for: its packet, whose question ends at questionEnd, and
 * the TTL to write (>= 0: into every TTL field; -1: leave them as stored). The caller keeps one and
 * fills it for each query: nothing is allocated per replay. */
export interface ReplayFor {
  readonly packet: Uint8Array;
  readonly questionEnd: number;
  readonly ttl: number;
  /** The client set AD or DO: else the stored AD bit is cleared, as a reply kept for a client that
   * wanted it would otherwise tell one that did not (RFC 6840 5.7-5.8, CoreDNS's cache). */
  readonly adWanted: boolean;
}

/** Writes the reply in slot s for the client `c` into out[at..], which has room for
 * store.replyLength(s) octets. Returns the length written. */
export function replayInto(store: AnswerStore, s: number, c: ReplayFor, out: Uint8Array, at: number): number {
  const questionEnd = c.questionEnd;
  const ttl = c.ttl;
  const len = store.copyReply(s, out, at);
  forClient(c, out, at);
  const rotation = store.rotation(s);
  if (rotation !== 0)
    rotateRecords(out, at + questionEnd, rotation >>> 16, rotation & 0xffff, store.nextTurn(s));
  if (ttl >= 0) setTtls(out, questionEnd, ttl, at);
  return len;
}

/** Writes a reply that is not stored (an answer the lane did not file: lane.ts's DIRECT), reply[0..
 * length), for the client `c` into out[at..], as replayInto writes a stored one. Returns the length. */
export function writeFor(
  reply: Uint8Array,
  length: number,
  c: ReplayFor,
  out: Uint8Array,
  at: number,
): number {
  copyBytes(reply, 0, length, out, at);
  forClient(c, out, at);
  if (c.ttl >= 0) setTtls(out, c.questionEnd, c.ttl, at);
  return length;
}

/** The client's ID, RD and CD bits, AD as it may see it, and its spelling of the question, into the
 * reply at out[at..]. */
function forClient(c: ReplayFor, out: Uint8Array, at: number): void {
  const query = c.packet;
  out[at] = query[0];
  out[at + 1] = query[1];
  out[at + 2] = (out[at + 2] & 0xfe) | (query[2] & 0x01);
  out[at + 3] = (out[at + 3] & (c.adWanted ? 0xef : 0xcf)) | (query[3] & 0x10);
  for (let i = 12; i < c.questionEnd; i++) out[at + i] = query[i];
}

/** Where the answer records of an encoded reply are, when they are two or more records of one size
 * whose owner is one compression pointer: count << 16 | size, the layout rotateRecords needs; 0 for
 * any other shape. */
export function rotationOf(reply: Uint8Array, questionEnd: number, length = reply.length, base = 0): number {
  const count = (reply[base + 6] << 8) | reply[base + 7];
  if (count < 2) return 0;
  let size = 0;
  const first = base + questionEnd;
  for (let i = 0, p = first; i < count; i++) {
    // Owner a 2-octet pointer, then type, class, TTL, RDLENGTH and the RDATA.
    if (p + 12 > base + length || (reply[p] & 0xc0) !== 0xc0) return 0;
    const len = 12 + ((reply[p + 10] << 8) | reply[p + 11]);
    if (i === 0) size = len;
    else if (len !== size || reply[p] !== reply[first] || reply[p + 1] !== reply[first + 1]) return 0;
    p += len;
  }
  return size > 0xffff ? 0 : (count << 16) | size;
}

/** Room for the records a rotation moves to the end: at most 65535 octets of reply. */
const scratch = new Uint8Array(65536);

/** Moves the first k of `count` records of `size` octets at out[from..] to the end. */
export function rotateRecords(out: Uint8Array, from: number, count: number, size: number, k: number): void {
  if (k === 0) return;
  const split = from + k * size;
  const end = from + count * size;
  const head = split - from;
  for (let i = 0; i < head; i++) scratch[i] = out[from + i];
  out.copyWithin(from, split, end);
  for (let i = 0; i < head; i++) out[end - head + i] = scratch[i];
}
