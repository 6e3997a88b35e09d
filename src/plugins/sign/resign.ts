// When and how a zone is (re)signed, as CoreDNS's sign: when the signed file is missing or does not
// parse, when its source changed, when the SOA's signature was made more than 6 days ago, or when it
// has less than 14 days left. Signatures start 3 hours back, minus a jitter of up to 18 hours (which
// spreads the 6-day resigning of zones apart), and end 32 days on. The file is written beside its
// final name and renamed over it, so `file` never reads half of one.

import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SigningKey } from "../../dnssec/keys.ts";
import { RRSIG, coveredType } from "../../dnssec/rrsig.ts";
import { Type } from "../../dns/constants.ts";
import { loadZone } from "../file/zone-parser.ts";
import { signZone, zoneFileText } from "./signer.ts";

const HOUR = 3600;
const DAY = 24 * HOUR;
export const RESIGN_AFTER = 6 * DAY;
export const RESIGN_BEFORE_EXPIRY = 14 * DAY;
const VALID_FOR = 32 * DAY;
const INCEPTION_BACK = 3 * HOUR;
const INCEPTION_JITTER = 18 * HOUR;

export interface ZoneJob {
  origin: string;
  /** The unsigned zone file. */
  source: string;
  /** Where the signed file goes: DIR/db.<zone>.signed. */
  output: string;
  keys: readonly SigningKey[];
}

/** The signed file's name for `origin` in `dir` (CoreDNS: db.example.org.signed). */
export function signedPath(dir: string, origin: string): string {
  return join(dir, `db.${origin === "." ? "root" : origin.slice(0, -1)}.signed`);
}

/** Why the zone must be signed now, or undefined when the signed file is good. */
export function resignReason(job: ZoneJob, now: number): string | undefined {
  const digest = sha256(readFileSync(job.source));
  let text: string;
  try {
    text = readFileSync(job.output, "latin1");
  } catch {
    return "no signed file yet";
  }
  if (!text.includes(`; source sha256 ${digest}`)) return "the source file changed";
  let sig: Uint8Array | undefined;
  try {
    const soaSig = loadZone(job.output, job.origin).find(
      (rr) => rr.type === RRSIG && rr.name === job.origin && coveredType(rr) === Type.SOA,
    );
    sig = soaSig && (soaSig.data as { raw: Uint8Array }).raw;
  } catch (err) {
    return `the signed file does not parse: ${(err as Error).message}`;
  }
  if (!sig) return "the SOA has no signature";
  const view = new DataView(sig.buffer, sig.byteOffset, sig.byteLength);
  const expiration = view.getUint32(8);
  const inception = view.getUint32(12);
  if (now - (inception + INCEPTION_BACK) > RESIGN_AFTER) return "signed more than 6 days ago";
  if (expiration - now < RESIGN_BEFORE_EXPIRY) return "its signatures expire within 14 days";
  return undefined;
}

/** Signs the zone of `job` and writes it atomically; returns the new SOA serial. Throws ZoneError. */
export function signInto(job: ZoneJob, now: number, jitter = Math.random()): number {
  const bytes = readFileSync(job.source);
  const records = loadZone(job.source, job.origin);
  const inception = now - INCEPTION_BACK - Math.floor(jitter * INCEPTION_JITTER);
  const signed = signZone({
    origin: job.origin,
    records,
    keys: job.keys,
    validity: { inception, expiration: now + VALID_FOR },
    serial: now >>> 0,
  });
  const text = zoneFileText(job.origin, signed, [
    `signed by clusterdns's sign plugin at ${new Date(now * 1000).toISOString()}`,
    `source ${job.source}`,
    `source sha256 ${sha256(bytes)}`,
    `key tags ${job.keys.map((k) => k.tag).join(" ")}`,
  ]);
  mkdirSync(join(job.output, ".."), { recursive: true });
  const temporary = `${job.output}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, job.output);
  return now >>> 0;
}

function sha256(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex");
}
