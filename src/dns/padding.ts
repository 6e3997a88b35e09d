// EDNS(0) Padding (RFC 7830) on the wire: whether a query carries the option, and a message padded
// with it to a multiple of a block length, RFC 8467 4.1's recommended policy: responses to 468
// octets, queries to 128. Only the encrypted listeners call it (RFC 7830 6: no padding over plain
// transports), on the bytes they are about to send, so what the answer store replays stays unpadded.

import { optRecord } from "./walk.ts";
import { EdnsOption } from "./constants.ts";

/** RFC 8467 4.1: a response is padded to a multiple of this. */
export const RESPONSE_BLOCK = 468;
/** RFC 8467 4.1: a query is padded to a multiple of this. */
export const QUERY_BLOCK = 128;

const MAX_MESSAGE = 65535;
/** An option's code and length. */
const OPTION_HEAD = 4;

/** True when `msg`'s OPT record (TYPE field at `opt`) carries an option of `code`. */
function hasOption(msg: Buffer, opt: number, code: number): boolean {
  const end = Math.min(opt + 10 + ((msg[opt + 8] << 8) | msg[opt + 9]), msg.length);
  for (let o = opt + 10; o + OPTION_HEAD <= end; o += OPTION_HEAD + ((msg[o + 2] << 8) | msg[o + 3]))
    if (((msg[o] << 8) | msg[o + 1]) === code) return true;
  return false;
}

/** True when the query has an OPT record with a Padding option: the client takes padded replies
 * (RFC 8467 4: a server pads only for a client that showed it supports padding). */
export function asksPadding(query: Buffer): boolean {
  const opt = optRecord(query, query.length).at;
  return opt >= 0 && hasOption(query, opt, EdnsOption.PADDING);
}

/**
 * `msg` with a Padding option added to its OPT record, of the length that makes the whole message,
 * with the `tail` octets still to be appended to it (a TSIG record), a multiple of `block` octets;
 * when that would pass `limit` (the most the peer takes), of the length that makes it `limit`
 * octets, and none when even an empty option does not fit (RFC 7830 4: padding never makes a
 * message larger than the peer takes). Returns `msg` itself, unpadded, when it has no OPT record
 * (the peer sent none: RFC 6891 7), has a Padding option already, or has a record after its OPT: a
 * TSIG record, whose MAC covers the OPT record as it is (RFC 7830 4: padding goes in before signing;
 * the signer pads, ReplySigner). The padding is zero octets (RFC 7830 3).
 */
export function padded(msg: Buffer, block: number, { limit = MAX_MESSAGE, tail = 0 } = {}): Buffer {
  const opt = optRecord(msg, msg.length).at;
  if (opt < 0) return msg;
  const rdLength = (msg[opt + 8] << 8) | msg[opt + 9];
  if (opt + 10 + rdLength !== msg.length || hasOption(msg, opt, EdnsOption.PADDING)) return msg;
  const bare = msg.length + OPTION_HEAD;
  const most = Math.min(limit, MAX_MESSAGE) - tail;
  if (bare > most) return msg;
  const size = Math.min(Math.ceil((bare + tail) / block) * block - tail, most);
  const out = Buffer.alloc(size);
  msg.copy(out, 0);
  out.writeUInt16BE(rdLength + size - msg.length, opt + 8);
  out.writeUInt16BE(EdnsOption.PADDING, msg.length);
  out.writeUInt16BE(size - bare, msg.length + 2);
  return out;
}

/** The reply to `query` as an encrypted transport sends it: padded to RESPONSE_BLOCK when the query
 * asks for padding, else as it is. */
export function paddedReply(query: Buffer, reply: Buffer): Buffer {
  return asksPadding(query) ? padded(reply, RESPONSE_BLOCK) : reply;
}
