// Signing a message sent to another server with a TSIG key, and checking what comes back (RFC 8945):
// what secondary asks its primaries and the NOTIFYs transfer sends its secondaries. The query's MAC
// over the query; the first reply's over the query's MAC, a later message's (a transfer's) over the
// previous signed one's, the unsigned messages between them (up to 99, 5.3.1) and the timers.

import {
  FUDGE,
  TsigError,
  appendTsig,
  computeMac,
  macMatches,
  readTsig,
  tsigNow,
  tsigOffset,
  withoutTsig,
  type TsigKey,
} from "../dns/tsig.ts";

/** How one exchange's query is signed and its replies checked. */
export interface Signer {
  /** The query's octets, signed. */
  sign(query: Buffer): Buffer;
  /** Checks one reply of the exchange (in order); a string says why it fails. */
  verify(reply: Buffer): string | undefined;
}

const NONE = Buffer.alloc(0);
/** RFC 8945 5.3.1: a client may reject a transfer with more unsigned messages in a row than this. */
const MAX_UNSIGNED = 99;

/** A signer for one exchange with `key`. */
export function tsigSigner(key: TsigKey): () => Signer {
  return () => {
    let prior: Buffer = NONE;
    let first = true;
    let pending: Buffer[] = [];
    return {
      sign(query) {
        const timeSigned = tsigNow();
        const t = { timeSigned, fudge: FUDGE, error: 0, other: NONE };
        const mac = computeMac({ key, message: query, ...t });
        prior = mac;
        return appendTsig(query, { ...t, key, mac, originalId: query.readUInt16BE(0) });
      },
      verify(reply) {
        const at = tsigOffset(reply);
        if (at < 0) {
          if (first) return `the reply is not signed with key ${key.name}`;
          pending.push(reply);
          return pending.length > MAX_UNSIGNED
            ? `more than ${MAX_UNSIGNED} unsigned messages in a row`
            : undefined;
        }
        const rec = readTsig(reply, at);
        if (rec.error !== TsigError.NOERROR) return `the reply holds TSIG error ${errorName(rec.error)}`;
        if (rec.keyName !== key.name || rec.algorithm !== key.algorithm)
          return `the reply is signed with another key (${rec.keyName})`;
        const message = Buffer.concat([...pending, withoutTsig(reply, at, rec.originalId)]);
        const mac = {
          key,
          message,
          prior,
          timeSigned: rec.timeSigned,
          fudge: rec.fudge,
          error: rec.error,
          other: rec.other,
        };
        if (!macMatches(rec.mac, { ...mac, timersOnly: !first }))
          return "the reply's TSIG does not verify (BADSIG)";
        if (Math.abs(tsigNow() - rec.timeSigned) > rec.fudge)
          return "the reply's TSIG time is outside its fudge (BADTIME)";
        prior = rec.mac;
        first = false;
        pending = [];
        return undefined;
      },
    };
  };
}

function errorName(e: number): string {
  const name = Object.entries(TsigError).find(([, v]) => v === e)?.[0];
  return name ?? String(e);
}
