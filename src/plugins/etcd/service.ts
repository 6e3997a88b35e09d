// A SkyDNS service record as etcd holds it (a JSON value under a key that spells a name backwards),
// and the mapping between names and keys: /skydns/local/skydns/x is x.skydns.local.

import { posix } from "node:path";
import { isIP } from "node:net";
import { labels } from "../../dns/name.ts";

/** One decoded value, as CoreDNS reads it (SkyDNS's msg.Service). */
export interface Service {
  host: string;
  port: number;
  priority: number;
  weight: number;
  text: string;
  /** An MX record: `priority` is its preference. */
  mail: boolean;
  ttl: number;
  /** Labels to strip from the front of an SRV or MX target. */
  targetstrip: number;
  group: string;
  /** The etcd key the value was read from. */
  key: string;
}

/** A value etcd holds that does not decode: the whole query fails (SERVFAIL), as in CoreDNS. */
export class RecordError extends Error {
  readonly code = "ETCD_BAD_RECORD";
}

type Field = "string" | "int" | "uint32" | "bool";
const FIELDS: Record<string, [keyof Service, Field]> = {
  host: ["host", "string"],
  port: ["port", "int"],
  priority: ["priority", "int"],
  weight: ["weight", "int"],
  text: ["text", "string"],
  mail: ["mail", "bool"],
  ttl: ["ttl", "uint32"],
  targetstrip: ["targetstrip", "int"],
  group: ["group", "string"],
};

/** Decodes a value as Go's encoding/json does into SkyDNS's struct: field names match whatever
 * their case, unknown fields are ignored, null leaves a field as it was, a value of the wrong type
 * is an error (so "ttl": "60" fails there and here alike). */
export function parseService(key: string, value: string): Service {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch (err) {
    throw new RecordError(`${key}: ${(err as Error).message}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    throw new RecordError(`${key}: value is not a JSON object`);
  }
  const s: Service = {
    host: "",
    port: 0,
    priority: 0,
    weight: 0,
    text: "",
    mail: false,
    ttl: 0,
    targetstrip: 0,
    group: "",
    key,
  };
  const out = s as unknown as Record<string, unknown>;
  for (const [name, x] of Object.entries(v)) {
    const field = FIELDS[name.toLowerCase()];
    if (!field || x === null) continue;
    const [prop, kind] = field;
    const ok =
      kind === "string"
        ? typeof x === "string"
        : kind === "bool"
          ? typeof x === "boolean"
          : typeof x === "number" &&
            Number.isSafeInteger(x) &&
            (kind === "int" || (x >= 0 && x <= 0xffffffff));
    if (!ok) throw new RecordError(`${key}: field '${name}' cannot hold ${JSON.stringify(x)}`);
    out[prop] = x;
  }
  return s;
}

/** What the host field makes: an address record, a CNAME (a name), or TXT (no address, some text). */
export type HostKind = "A" | "AAAA" | "CNAME" | "TXT";

/** The kind of `s` and, for an address, its text form (an IPv4-mapped IPv6 address is IPv4). */
export function hostKind(s: Service): { kind: HostKind; address: string } {
  const v = isIP(s.host);
  if (v === 4) return { kind: "A", address: s.host };
  if (v === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s.host);
    return mapped ? { kind: "A", address: mapped[1] } : { kind: "AAAA", address: s.host };
  }
  return { kind: s.text === "" ? "CNAME" : "TXT", address: "" };
}

/** The key of a name under `prefix`: ("x.skydns.local.", "skydns") -> /skydns/local/skydns/x. With
 * `wildcard`, the key stops before the first `*` or `any` label, and `star` says one was found. */
export function keyOf(name: string, prefix: string, wildcard = false): { key: string; star: boolean } {
  const ls = labels(name).reverse();
  const at = wildcard ? ls.findIndex((l) => l === "*" || l === "any") : -1;
  const kept = at < 0 ? ls : ls.slice(0, at);
  return { key: posix.join(`/${prefix}/`, ...kept), star: at >= 0 };
}

/** The name a key stands for, the key's first segment (the prefix) left out. */
export function nameOf(key: string): string {
  const parts = key.split("/").filter((p, i, all) => i > 1 && !(p === "" && i === all.length - 1));
  return parts.length === 0 ? "." : parts.reverse().join(".") + ".";
}

/** Whether `key` matches a name with wildcard labels, segment by segment (`*` and `any` match any). */
export function matchesWildcard(key: string, nameKey: string): boolean {
  const keyParts = key.split("/");
  return nameKey
    .split("/")
    .every((p, i) => i >= keyParts.length || p === "*" || p === "any" || keyParts[i] === p);
}

/** SkyDNS groups: when the records nearest the name (fewest segments) agree on a group, only that
 * group's records and the records without a group answer; when they disagree, every record does. */
export function grouped(sx: Service[]): Service[] {
  if (sx.length === 0) return sx;
  const depth = (s: Service): number => s.key.split("/").length;
  let group = sx[0].group;
  let nearest = depth(sx[0]);
  for (const s of sx) {
    if (depth(s) >= nearest) continue;
    if (s.group === "") break;
    nearest = depth(s);
    group = s.group;
  }
  if (group === "") return sx;
  const kept: Service[] = [];
  for (const s of sx) {
    if (s.group === "") kept.push(s);
    else if (depth(s) === nearest && s.group !== group) return sx;
    else if (s.group === group) kept.push(s);
  }
  return kept;
}

/** An absolute target with its first `n` labels removed (all of them would leave the name whole). */
export function stripTarget(name: string, n: number): string {
  if (n <= 0) return name;
  const ls = labels(name);
  return n >= ls.length ? name : ls.slice(n).join(".") + ".";
}

/** A name as a record's target: absolute, lowercase as the server keeps names. */
export function absolute(name: string): string {
  return name.endsWith(".") ? name.toLowerCase() : `${name.toLowerCase()}.`;
}
