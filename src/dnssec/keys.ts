// DNSSEC keys from BIND's key files (what dnssec-keygen and ldns-keygen write):
// `K<zone>+<alg>+<tag>.key` holds the DNSKEY record in zone-file text, `.private` the private key as
// "Field: value" lines (Private-key-format v1.2/v1.3). Algorithms: RSASHA256 (8), ECDSAP256SHA256
// (13), ECDSAP384SHA384 (14), Ed25519 (15), each as node:crypto signs it.

import { createECDH, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { canonical } from "../dns/name.ts";

export const Algorithm = { RSASHA256: 8, ECDSAP256SHA256: 13, ECDSAP384SHA384: 14, ED25519: 15 } as const;

/** The DNSKEY flags' SEP bit (RFC 4034 2.1.1): set on a key-signing key. */
export const SEP = 0x0001;
const ZONE_KEY = 0x0100;

export interface SigningKey {
  /** The DNSKEY's owner, as its .key file names it. */
  readonly owner: string;
  readonly flags: number;
  readonly algorithm: number;
  /** RFC 4034 Appendix B. */
  readonly tag: number;
  /** The DNSKEY record's rdata: flags, protocol 3, algorithm, public key. */
  readonly rdata: Uint8Array;
  /** The file the key was read from, for messages. */
  readonly file: string;
  /** A signature over `data` as RRSIG records carry it for this algorithm. */
  sign(data: Uint8Array): Buffer;
}

/** A key file that cannot be used, with the reason; `file` names the file. */
export class KeyFileError extends Error {
  readonly code = "CDNS_ERR_DNSSEC_KEY";
}

/** RFC 4034 Appendix B: the key tag of a DNSKEY rdata (algorithm 1 is long gone and not handled). */
export function keyTag(rdata: Uint8Array): number {
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata[i] : rdata[i] << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

/** The two file names of a key given as its base name, its .key or its .private file. */
interface KeyFiles {
  key: string;
  private: string;
}

export function keyFiles(path: string): KeyFiles {
  const base = path.replace(/\.(key|private)$/, "");
  return { key: `${base}.key`, private: `${base}.private` };
}

/** Reads the key pair at `path` (base name, .key or .private). Throws KeyFileError. */
export function readKeyPair(path: string): SigningKey {
  const files = keyFiles(path);
  const pub = parseDnskeyFile(readText(files.key), files.key);
  const fields = parsePrivateFile(readText(files.private), files.private);
  const alg = Number(/^\s*(\d+)/.exec(fields.get("algorithm") ?? "")?.[1]);
  if (alg !== pub.algorithm)
    throw new KeyFileError(`${files.private}: algorithm ${alg} but ${files.key} says ${pub.algorithm}`);
  const rdata = Buffer.concat([
    Uint8Array.of(pub.flags >> 8, pub.flags & 0xff, 3, pub.algorithm),
    pub.publicKey,
  ]);
  const signer = signerFor(pub.algorithm, pub.publicKey, fields, files);
  // A .private that belongs to another key would sign what no resolver can check: caught here.
  const probe = Buffer.from("clusterdns key check");
  if (!verifies(pub.algorithm, pub.publicKey, probe, signer(probe))) throw mismatch(files);
  return { ...pub, rdata, tag: keyTag(rdata), file: files.key, sign: signer };
}

function readText(file: string): string {
  try {
    return readFileSync(file, "latin1");
  } catch (err) {
    throw new KeyFileError(`${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The DNSKEY record of a .key file: `owner [TTL] [IN] DNSKEY flags 3 alg base64...`, after
 * comment lines (";"). */
export function parseDnskeyFile(
  text: string,
  file: string,
): { owner: string; flags: number; algorithm: number; publicKey: Buffer } {
  const body = text
    .split("\n")
    .map((l) => l.replace(/;.*$/, "").trim())
    .filter((l) => l.length > 0)
    .join(" ")
    .replace(/[()]/g, " ");
  const tokens = body.split(/\s+/).filter((t) => t.length > 0);
  const at = tokens.findIndex((t) => t.toUpperCase() === "DNSKEY");
  if (at < 1 || tokens.length < at + 5) throw new KeyFileError(`${file}: no DNSKEY record`);
  const [flags, protocol, algorithm] = tokens.slice(at + 1, at + 4).map(Number);
  if (protocol !== 3) throw new KeyFileError(`${file}: DNSKEY protocol ${protocol}, not 3`);
  if (!Number.isInteger(flags) || (flags & ZONE_KEY) === 0)
    throw new KeyFileError(`${file}: flags ${tokens[at + 1]} lack the zone key bit (256)`);
  const publicKey = Buffer.from(tokens.slice(at + 4).join(""), "base64");
  return { owner: canonical(tokens[0]), flags, algorithm, publicKey };
}

/** The "Field: value" lines of a .private file, field names lowercased. */
function parsePrivateFile(text: string, file: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Za-z0-9-]+):\s*(.*?)\s*$/.exec(line);
    if (m) fields.set(m[1].toLowerCase(), m[2]);
  }
  if (!fields.has("private-key-format")) throw new KeyFileError(`${file}: not a Private-key-format file`);
  return fields;
}

const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");

/** PKCS #8's wrapping of a 32-octet Ed25519 seed (RFC 8410), in front of the seed. */
const ED25519_PKCS8 = Buffer.from("302e020100300506032b657004220420", "hex");

/** A .private of another key is caught before Node sees it: Node 24.22 and later refuse a JWK whose
 * private part is not its public key's ("Invalid JWK EC key"), earlier ones load it, and either way
 * the operator needs to hear which two files disagree. */
function matches(derived: Buffer, publicKey: Buffer, files: KeyFiles): void {
  if (!derived.equals(publicKey)) throw mismatch(files);
}

/** The error of a .private that belongs to another key than its .key. */
function mismatch(files: KeyFiles): KeyFileError {
  return new KeyFileError(`${files.private}: the private key does not match ${files.key}`);
}

/** The signing function of one algorithm, from the private fields and the public key. */
function signerFor(
  algorithm: number,
  publicKey: Buffer,
  fields: Map<string, string>,
  files: KeyFiles,
): (data: Uint8Array) => Buffer {
  const file = files.private;
  const field = (name: string): Buffer => {
    const v = fields.get(name);
    if (v === undefined) throw new KeyFileError(`${file}: no ${name} field`);
    return Buffer.from(v, "base64");
  };
  let key: KeyObject;
  try {
    switch (algorithm) {
      case Algorithm.ECDSAP256SHA256:
      case Algorithm.ECDSAP384SHA384: {
        const size = algorithm === Algorithm.ECDSAP256SHA256 ? 32 : 48;
        if (publicKey.length !== 2 * size)
          throw new KeyFileError(`${file}: public key is not ${2 * size} octets`);
        const d = field("privatekey");
        const ecdh = createECDH(size === 32 ? "prime256v1" : "secp384r1");
        ecdh.setPrivateKey(d);
        // The uncompressed point without its leading 4, as the DNSKEY holds it.
        matches(ecdh.getPublicKey().subarray(1), publicKey, files);
        const jwk = {
          kty: "EC",
          crv: size === 32 ? "P-256" : "P-384",
          x: b64url(publicKey.subarray(0, size)),
          y: b64url(publicKey.subarray(size)),
          d: b64url(d),
        };
        key = createPrivateKey({ key: jwk, format: "jwk" });
        const hash = size === 32 ? "sha256" : "sha384";
        // RFC 6605: r and s, each the curve's size, one after the other.
        return (data) => sign(hash, data, { key, dsaEncoding: "ieee-p1363" });
      }
      case Algorithm.ED25519: {
        const d = field("privatekey");
        const own = createPrivateKey({
          key: Buffer.concat([ED25519_PKCS8, d]),
          format: "der",
          type: "pkcs8",
        });
        matches(
          Buffer.from(createPublicKey(own).export({ format: "jwk" }).x ?? "", "base64url"),
          publicKey,
          files,
        );
        const jwk = { kty: "OKP", crv: "Ed25519", x: b64url(publicKey), d: b64url(d) };
        key = createPrivateKey({ key: jwk, format: "jwk" });
        return (data) => sign(null, data, key);
      }
      case Algorithm.RSASHA256: {
        const jwk = {
          kty: "RSA",
          n: b64url(field("modulus")),
          e: b64url(field("publicexponent")),
          d: b64url(field("privateexponent")),
          p: b64url(field("prime1")),
          q: b64url(field("prime2")),
          dp: b64url(field("exponent1")),
          dq: b64url(field("exponent2")),
          qi: b64url(field("coefficient")),
        };
        key = createPrivateKey({ key: jwk, format: "jwk" });
        return (data) => sign("sha256", data, key);
      }
      default:
        throw new KeyFileError(
          `${file}: algorithm ${algorithm} is not supported (RSASHA256 8, ECDSAP256SHA256 13, ECDSAP384SHA384 14, ED25519 15 are)`,
        );
    }
  } catch (err) {
    if (err instanceof KeyFileError) throw err;
    throw new KeyFileError(`${file}: the private key does not load: ${(err as Error).message}`);
  }
}

/** Whether `signature` over `data` verifies with a DNSKEY's public key of `algorithm`. */
export function verifies(
  algorithm: number,
  publicKey: Buffer,
  data: Uint8Array,
  signature: Uint8Array,
): boolean {
  let jwk: Record<string, string>;
  let hash: string | null = "sha256";
  if (algorithm === Algorithm.ECDSAP256SHA256 || algorithm === Algorithm.ECDSAP384SHA384) {
    const size = algorithm === Algorithm.ECDSAP256SHA256 ? 32 : 48;
    jwk = {
      kty: "EC",
      crv: size === 32 ? "P-256" : "P-384",
      x: b64url(publicKey.subarray(0, size)),
      y: b64url(publicKey.subarray(size)),
    };
    if (size === 48) hash = "sha384";
  } else if (algorithm === Algorithm.ED25519) {
    jwk = { kty: "OKP", crv: "Ed25519", x: b64url(publicKey) };
    hash = null;
  } else {
    // RFC 3110 2: the exponent's length in one octet, or 0 and two octets, then exponent and modulus.
    const long = publicKey[0] === 0;
    const elen = long ? publicKey.readUInt16BE(1) : publicKey[0];
    const at = long ? 3 : 1;
    jwk = {
      kty: "RSA",
      e: b64url(publicKey.subarray(at, at + elen)),
      n: b64url(publicKey.subarray(at + elen)),
    };
  }
  const key = createPublicKey({ key: jwk, format: "jwk" });
  return verify(hash, data, { key, dsaEncoding: "ieee-p1363" }, signature);
}
