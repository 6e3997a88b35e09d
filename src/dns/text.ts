// Presentation format of resource records (RFC 1035 5.1; RFC 3597 for types without a parser): what dig
// prints and what zone files hold. Used by the zone parser, the hosts plugin, test helpers and logs.
//
// Character-strings (TXT strings, CAA values) are "binary strings": one JS char per octet (0-255), so
// \DDD escapes and non-ASCII bytes survive the trip text -> wire -> text. Encode them as latin1.

import { isIPv4, isIPv6 } from "node:net";
import type { RData, RR } from "./message.ts";
import { Class, Type, classFromName, className, typeFromName, typeName } from "./constants.ts";
import { canonical, expandIPv6, join, nameToWire } from "./name.ts";

/** Largest TTL a record may carry (RFC 2181 8). */
export const MAX_TTL = 0x7fffffff;

// ---------------------------------------------------------------------------------------------------
// Records to text

/** One record as dig prints it: `name<TAB>ttl<TAB>class<TAB>type<TAB>rdata`. */
export function rrToText(rr: RR): string {
  return `${nameToText(rr.name)}\t${rr.ttl}\t${className(rr.class)}\t${typeName(rr.type)}\t${rdataToText(rr.data)}`;
}

/** The rdata part of a record in presentation form. */
export function rdataToText(data: RData): string {
  if ("raw" in data) return genericToText(data.raw);
  switch (data.type) {
    case Type.A:
    case Type.AAAA:
      return data.address;
    case Type.NS:
    case Type.CNAME:
    case Type.PTR:
      return nameToText(data.target);
    case Type.MX:
      return `${data.preference} ${nameToText(data.exchange)}`;
    case Type.SOA:
      return [
        nameToText(data.mname),
        nameToText(data.rname),
        data.serial,
        data.refresh,
        data.retry,
        data.expire,
        data.minimum,
      ].join(" ");
    case Type.TXT:
      return data.strings.map(quoteString).join(" ");
    case Type.SRV:
      return `${data.priority} ${data.weight} ${data.port} ${nameToText(data.target)}`;
    case Type.CAA:
      return `${data.flags} ${data.tag} ${quoteString(data.value)}`;
  }
  return "";
}

/** RFC 3597 generic rdata: `\# 4 C0000201`. */
function genericToText(raw: Uint8Array): string {
  if (raw.length === 0) return "\\# 0";
  return `\\# ${raw.length} ${Buffer.from(raw).toString("hex").toUpperCase()}`;
}

/** A character-string in quotes, with `"` and `\` escaped and non-printable octets as \DDD. */
export function quoteString(s: string): string {
  let out = '"';
  for (const octet of octets(s)) {
    if (octet === 0x22 || octet === 0x5c) out += "\\" + String.fromCharCode(octet);
    else if (octet < 0x20 || octet > 0x7e) out += ddd(octet);
    else out += String.fromCharCode(octet);
  }
  return out + '"';
}

/** A name (name.ts's text form, escapes kept as they are) with the characters that would also break a
 * zone file escaped: quotes, parentheses, semicolons; raw octets outside 0x21-0x7e as \DDD. */
function nameToText(name: string): string {
  if (!/[^\x21-\x7e]|["();]/.test(name)) return name;
  let out = "";
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x5c) {
      const n = /^\d{3}/.test(name.slice(i + 1, i + 4)) ? 4 : 2;
      out += name.slice(i, i + n);
      i += n - 1;
    } else if (c === 0x22 || c === 0x28 || c === 0x29 || c === 0x3b) {
      out += "\\" + name[i];
    } else if (c <= 0x20 || c > 0x7e) {
      for (const octet of octets(name[i])) out += ddd(octet);
    } else {
      out += name[i];
    }
  }
  return out;
}

function ddd(octet: number): string {
  return "\\" + String(octet).padStart(3, "0");
}

/** The octets of a binary string; a char above 0xff (built in code, not parsed) is written as UTF-8. */
function* octets(s: string): Generator<number> {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0xff) yield c;
    else yield* Buffer.from(s[i], "utf8");
  }
}

// ---------------------------------------------------------------------------------------------------
// Text to records

/**
 * Parses the rdata fields of one record. `fields` are presentation tokens as written: quoted strings
 * keep their quotes and escapes stay escaped (`"a \"b\""`), see splitFields. Relative names are made
 * absolute against `origin`. Throws an Error whose message says what is wrong (no location).
 */
export function rdataFromText(type: number, fields: readonly string[], origin: string): RData {
  const want = (n: number): void => {
    if (fields.length !== n) {
      throw new Error(`${typeName(type)} takes ${n} rdata field(s), got ${fields.length}`);
    }
  };
  if (fields[0] === "\\#") return genericFromText(type, fields);
  switch (type) {
    case Type.A:
      want(1);
      if (!isIPv4(fields[0])) throw new Error(`'${fields[0]}' is not an IPv4 address`);
      return { type, address: fields[0] };
    case Type.AAAA: {
      want(1);
      const address = isIPv6(fields[0]) ? normalizeIPv6(fields[0]) : undefined;
      if (!address) throw new Error(`'${fields[0]}' is not an IPv6 address`);
      return { type, address };
    }
    case Type.NS:
    case Type.CNAME:
    case Type.PTR:
      want(1);
      return { type, target: nameFromText(fields[0], origin) };
    case Type.MX:
      want(2);
      return { type, preference: u16(fields[0], "preference"), exchange: nameFromText(fields[1], origin) };
    case Type.SOA:
      want(7);
      return {
        type,
        mname: nameFromText(fields[0], origin),
        rname: nameFromText(fields[1], origin),
        serial: u32(fields[2], "serial"),
        refresh: time(fields[3], "refresh"),
        retry: time(fields[4], "retry"),
        expire: time(fields[5], "expire"),
        minimum: time(fields[6], "minimum"),
      };
    case Type.TXT:
      if (fields.length === 0) throw new Error("TXT needs at least one string");
      return { type, strings: fields.map((f) => stringFromText(f)) };
    case Type.SRV:
      want(4);
      return {
        type,
        priority: u16(fields[0], "priority"),
        weight: u16(fields[1], "weight"),
        port: u16(fields[2], "port"),
        target: nameFromText(fields[3], origin),
      };
    case Type.CAA: {
      want(3);
      const flags = uint(fields[0], "flags", 0xff);
      if (!/^[a-zA-Z0-9]+$/.test(fields[1])) throw new Error(`invalid CAA tag '${fields[1]}'`);
      return { type, flags, tag: fields[1].toLowerCase(), value: stringFromText(fields[2], 0xffff) };
    }
  }
  throw new Error(`${typeName(type)} rdata must be in the RFC 3597 form '\\# LENGTH HEX'`);
}

/** RFC 3597 `\# LENGTH HEX...`, only for types that have no parser of their own. */
function genericFromText(type: number, fields: readonly string[]): RData {
  if (KNOWN_TYPES.has(type)) throw new Error(`write ${typeName(type)} rdata in its own format, not '\\#'`);
  if (fields.length < 2 || !/^\d+$/.test(fields[1])) throw new Error("'\\#' must be followed by a length");
  const length = Number(fields[1]);
  const hex = fields.slice(2).join("");
  if (!/^([0-9a-fA-F]{2})*$/.test(hex) || hex.length !== length * 2) {
    throw new Error(`'\\#' rdata does not hold ${length} octets of hex`);
  }
  return { type, raw: new Uint8Array(Buffer.from(hex, "hex")) };
}

const KNOWN_TYPES = new Set<number>([
  Type.A,
  Type.AAAA,
  Type.NS,
  Type.CNAME,
  Type.PTR,
  Type.MX,
  Type.SOA,
  Type.TXT,
  Type.SRV,
  Type.CAA,
]);

/**
 * A domain name field made absolute against `origin` and canonical (name.ts: lowercased, escapes in
 * their one form): `@` is the origin, a name without a trailing (unescaped) dot is relative. \DDD and
 * \X escapes may stand for any octet, "." too (RFC 2181 11).
 */
export function nameFromText(field: string, origin: string): string {
  if (field === "@") return origin;
  if (field.startsWith('"')) throw new Error(`a name cannot be quoted: ${field}`);
  const name = join(field, origin);
  // The field alone first: a trailing lone backslash would otherwise escape the joining dot.
  for (const n of [field, name]) {
    const wire = nameToWire(n);
    if (typeof wire === "string") throw new Error(`'${field}' ${wire}`);
  }
  return canonical(name);
}

/** A character-string field, quoted or not, decoded to a binary string of at most `max` octets. */
export function stringFromText(field: string, max = 255): string {
  const quoted = field.length >= 2 && field.startsWith('"') && field.endsWith('"');
  const s = decodeEscapes(quoted ? field.slice(1, -1) : field);
  if (s.length > max) throw new Error(`character-string of ${s.length} octets is longer than ${max}`);
  return s;
}

/** Decodes \DDD (a decimal octet) and \X (X itself). Non-ASCII input chars are kept as they are. */
function decodeEscapes(s: string): string {
  if (!s.includes("\\")) return s;
  let out = "";
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== "\\") {
      out += s[i];
      continue;
    }
    let c: string;
    if (/^\d{3}$/.test(s.slice(i + 1, i + 4))) {
      const n = Number(s.slice(i + 1, i + 4));
      if (n > 255) throw new Error(`escape \\${s.slice(i + 1, i + 4)} is not an octet`);
      c = String.fromCharCode(n);
      i += 3;
    } else if (i + 1 < s.length) {
      c = s[++i];
    } else {
      throw new Error(`'${s}' ends with a lone backslash`);
    }
    out += c;
  }
  return out;
}

function uint(s: string, what: string, max: number): number {
  if (!/^\d+$/.test(s)) throw new Error(`${what} '${s}' is not a number`);
  const n = Number(s);
  if (n > max) throw new Error(`${what} ${s} is larger than ${max}`);
  return n;
}

function u16(s: string, what: string): number {
  return uint(s, what, 0xffff);
}

function u32(s: string, what: string): number {
  return uint(s, what, 0xffffffff);
}

function time(s: string, what: string): number {
  const t = parseTime(s);
  if (t === undefined) throw new Error(`${what} '${s}' is not a time (want seconds or e.g. 1h, 2d, 1w)`);
  if (t > 0xffffffff) throw new Error(`${what} ${s} is larger than ${0xffffffff}`);
  return t;
}

const timeUnits: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** Seconds from `3600` or BIND's unit form (`1h`, `2d`, `1w`, `1h30m`); undefined when `s` is neither. */
export function parseTime(s: string): number | undefined {
  if (/^\d+$/.test(s)) return Number(s);
  if (!/^(\d+[smhdwSMHDW])+$/.test(s)) return undefined;
  let total = 0;
  for (const m of s.matchAll(/(\d+)([a-zA-Z])/g)) total += Number(m[1]) * timeUnits[m[2].toLowerCase()];
  return total;
}

/** RFC 5952 form of a valid IPv6 address: lowercase, leading zeros dropped, longest zero run as `::`. */
function normalizeIPv6(ip: string): string | undefined {
  const hex = expandIPv6(ip);
  if (!hex) return undefined;
  const groups: string[] = [];
  for (let i = 0; i < 32; i += 4) groups.push(hex.slice(i, i + 4).replace(/^0+(?=.)/, ""));
  let best = -1;
  let bestLen = 1; // a single zero group is not compressed (RFC 5952 4.2.2)
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  if (best < 0) return groups.join(":");
  return groups.slice(0, best).join(":") + "::" + groups.slice(best + bestLen).join(":");
}

/**
 * Splits one line of presentation text into fields at whitespace. A quoted string is one field, quotes
 * kept; backslash escapes are kept as written. No comments, parentheses or line continuations.
 */
export function splitFields(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  while (i < line.length) {
    if (line[i] === " " || line[i] === "\t") {
      i++;
      continue;
    }
    const start = i;
    if (line[i] === '"') {
      for (i++; i < line.length && line[i] !== '"'; i++) if (line[i] === "\\") i++;
      if (i >= line.length) throw new Error(`unterminated quoted string: ${line.slice(start)}`);
      i++;
    } else {
      for (; i < line.length && line[i] !== " " && line[i] !== "\t" && line[i] !== '"'; i++) {
        if (line[i] === "\\") i++;
      }
    }
    fields.push(line.slice(start, i));
  }
  return fields;
}

/** The optional TTL and class (in either order) and the type that open a record, from fields[at]. */
export interface RecordHead {
  ttl?: number;
  rclass?: number;
  type: number;
  /** Index of the first rdata field. */
  rdataAt: number;
}

/** Reads `[ttl] [class] type` or `[class] [ttl] type` starting at fields[at]. */
export function parseRecordHead(fields: readonly string[], at: number): RecordHead {
  let ttl: number | undefined;
  let rclass: number | undefined;
  for (let i = at; i < fields.length; i++) {
    const f = fields[i];
    const t = ttl === undefined ? parseTime(f) : undefined;
    if (t !== undefined) {
      if (t > MAX_TTL) throw new Error(`TTL ${f} is larger than ${MAX_TTL}`);
      ttl = t;
      continue;
    }
    const c = rclass === undefined ? recordClass(f) : undefined;
    if (c !== undefined) {
      rclass = c;
      continue;
    }
    const type = typeFromName(f);
    if (
      type === undefined ||
      type === Type.ANY ||
      type === Type.AXFR ||
      type === Type.IXFR ||
      type === Type.OPT
    ) {
      throw new Error(`unknown record type '${f}'`);
    }
    return { ttl, rclass, type, rdataAt: i + 1 };
  }
  throw new Error("record has no type");
}

/** A class a record can carry: IN, CH, HS or CLASSn (not the query-only ANY and NONE). */
function recordClass(s: string): number | undefined {
  const c = classFromName(s);
  return c === Class.ANY || c === Class.NONE ? undefined : c;
}

/**
 * One record in full presentation form, for tests and fixtures: `name [ttl] [class] type rdata...`
 * (TTL and class optional, in either order; TTL defaults to 3600 and class to IN). No comments or
 * parentheses.
 */
export function parseRRText(line: string, origin = "."): RR {
  const fields = splitFields(line.trim());
  if (fields.length < 2) throw new Error(`not a record: '${line}'`);
  const name = nameFromText(fields[0], origin);
  const head = parseRecordHead(fields, 1);
  const data = rdataFromText(head.type, fields.slice(head.rdataAt), origin);
  return { name, type: head.type, class: head.rclass ?? Class.IN, ttl: head.ttl ?? 3600, data };
}
