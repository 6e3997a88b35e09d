// TSIG secrets as CoreDNS's tsig takes them: `secret NAME KEY` lines, and `secrets FILE` in BIND's
// named.conf form (`key "NAME" { secret "BASE64"; algorithm ALG; };`, the algorithm accepted and not
// used: the query's own algorithm is checked, as CoreDNS does).

import { readFileSync } from "node:fs";
import { canonical } from "../../dns/name.ts";

/** The secret's octets, or a string saying why `text` is no base64 secret. */
export function decodeSecret(text: string): Buffer | string {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || text.length % 4 !== 0) return `'${text}' is not base64`;
  const b = Buffer.from(text, "base64");
  return b.length === 0 ? "the secret is empty" : b;
}

/** The keys of a named.conf-style file, by canonical name; throws an Error whose message says which
 * key of the file is wrong. */
export function readSecretsFile(path: string): Map<string, Buffer> {
  const text = readFileSync(path, "utf8").replace(/(#|\/\/).*$/gm, "");
  const out = new Map<string, Buffer>();
  const keyRe = /key\s+"?([^"\s{]+)"?\s*\{([^}]*)\}\s*;/g;
  let found = 0;
  for (let m = keyRe.exec(text); m !== null; m = keyRe.exec(text)) {
    found++;
    const name = canonical(m[1]);
    const secret = /secret\s+"([^"]*)"\s*;/.exec(m[2]);
    if (secret === null) throw new Error(`${path}: key "${m[1]}" has no secret`);
    const decoded = decodeSecret(secret[1]);
    if (typeof decoded === "string") throw new Error(`${path}: key "${m[1]}": ${decoded}`);
    if (out.has(name)) throw new Error(`${path}: key "${m[1]}" is defined twice`);
    out.set(name, decoded);
  }
  if (found === 0) throw new Error(`${path}: no key "NAME" { secret "..."; }; entries`);
  return out;
}
