// A query signed with TSIG (RFC 8945 5.2): the scan refuses every TSIG record (NOTAUTH, BADKEY: a
// block without keys knows none); here a query whose block has `tsig` keys is checked, and either
// answered with the error RFC 8945 asks for, or handed to the chain with a signer for its replies.
// Signed queries never meet the answer store: each reply is signed over the request's MAC.

import type { ScanError } from "../dns/scan.ts";
import { ScannedQuery, errorReply, scanQuery } from "../dns/scan.ts";
import type { Block } from "./block.ts";
import type { ZoneMux } from "./mux.ts";
import { isSubdomain } from "../dns/name.ts";
import { RESPONSE_BLOCK, padded } from "../dns/padding.ts";
import {
  FUDGE,
  TSIG_ALGORITHMS,
  TsigError,
  appendTsig,
  computeMac,
  macMatches,
  readTsig,
  tsigNow,
  tsigSize,
  withoutTsig,
  type TsigKey,
} from "../dns/tsig.ts";

/** Signs the messages of one reply in order: the first over the request's MAC, each later one (a
 * transfer's) over the previous message's MAC and the timers (RFC 8945 4.3.1, 5.3.1). */
export class ReplySigner {
  readonly keyName: string;
  /** Octets to leave free in a reply for its TSIG record. */
  readonly room: number;
  /** Pad each message before it is signed (the query asked for padding over an encrypted transport:
   * RFC 7830 4 puts the padding in before the MAC is computed). */
  pad = false;
  readonly #key: TsigKey;
  #prior: Buffer;
  #first = true;
  readonly #error: number;
  readonly #other: Buffer;
  readonly #time: number | undefined;

  constructor(key: TsigKey, requestMac: Buffer, o: { error?: number; other?: Buffer; time?: number } = {}) {
    this.keyName = key.name;
    this.#key = key;
    this.#prior = requestMac;
    this.room = tsigSize(key);
    this.#error = o.error ?? TsigError.NOERROR;
    this.#other = o.other ?? Buffer.alloc(0);
    this.#time = o.time;
  }

  sign(message: Buffer): Buffer {
    if (this.pad)
      message = padded(message, RESPONSE_BLOCK, { tail: tsigSize(this.#key, this.#other.length) });
    const timeSigned = this.#time ?? tsigNow();
    const mac = computeMac({
      key: this.#key,
      message,
      prior: this.#prior,
      timeSigned,
      fudge: FUDGE,
      error: this.#error,
      other: this.#other,
      timersOnly: !this.#first,
    });
    this.#first = false;
    this.#prior = mac;
    const t = { timeSigned, fudge: FUDGE, mac, originalId: message.readUInt16BE(0), error: this.#error };
    return appendTsig(message, { ...t, key: this.#key, other: this.#other });
  }
}

export type SignedQuery =
  /** Checked: the query without its TSIG, for the chain, and the signer of its replies. */
  | { scan: ScannedQuery; signer: ReplySigner }
  /** Refused: the reply to send. */
  | { reply: Buffer }
  /** No block of ours holds keys for it: the scan's BADKEY reply stands. */
  | undefined;

/** Checks the TSIG of `packet`, which the scan refused as `f` (a TSIG at f.tsig). */
export function checkSigned(packet: Buffer, f: ScanError, mux: ZoneMux<Block>, now = tsigNow()): SignedQuery {
  const rec = readTsig(packet, f.tsig);
  const scan = scanQuery(withoutTsig(packet, f.tsig, packet.readUInt16BE(0)), new ScannedQuery());
  if ("drop" in scan) return undefined;
  const policy = mux.match(scan.qname)?.value.tsig;
  if (policy === undefined || !policy.zones.some((z) => isSubdomain(scan.qname, z))) return undefined;
  const secret = policy.secrets.get(rec.keyName);
  if (secret === undefined || !TSIG_ALGORITHMS.has(rec.algorithm)) return undefined;
  const key: TsigKey = { name: rec.keyName, algorithm: rec.algorithm, secret };
  const message = withoutTsig(packet, f.tsig, rec.originalId);
  const mac = {
    key,
    message,
    timeSigned: rec.timeSigned,
    fudge: rec.fudge,
    error: rec.error,
    other: rec.other,
  };
  // RFC 8945 5.2.2: a MAC that does not match gets BADSIG, unsigned (5.3.2).
  if (!macMatches(rec.mac, mac)) return { reply: errorReply(packet, { ...f, tsigError: TsigError.BADSIG }) };
  // 5.2.3: outside the fudge, BADTIME, signed, the request's time echoed and ours in Other Data.
  if (Math.abs(now - rec.timeSigned) > rec.fudge) {
    const other = Buffer.alloc(6);
    other.writeUIntBE(now, 0, 6);
    const bare = errorReply(packet, { ...f, tsig: -1 });
    const signer = new ReplySigner(key, rec.mac, { error: TsigError.BADTIME, other, time: rec.timeSigned });
    return { reply: signer.sign(bare) };
  }
  return { scan, signer: new ReplySigner(key, rec.mac) };
}
