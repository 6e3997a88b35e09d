// Domain name helpers. Inside the server every name is absolute (ends with ".") and lowercased;
// the root is ".". Any octet may sit in a label (RFC 2181 11), so the text form is the master-file one
// (RFC 1035 5.1) made unique: a "." inside a label is \., a backslash \\, an octet outside 0x21-0x7e
// \DDD (decimal), every other octet itself. Splitting a name into labels therefore skips escaped
// characters: a\.b.example. has the labels a\.b and example.

/** Anything but the octets a label's text form holds as they are: 0x21-0x7e but dot and backslash. */
const ESCAPED = /[^\x21-\x2d\x2f-\x5b\x5d-\x7e]/;

/** The text form of one label, given as its octets (one char per octet, 0-255). */
export function labelText(octets: string): string {
  if (!ESCAPED.test(octets)) return octets;
  let out = "";
  for (let i = 0; i < octets.length; i++) {
    const c = octets.charCodeAt(i);
    if (c === 0x2e || c === 0x5c) out += "\\" + octets[i];
    else if (c <= 0x20 || (c >= 0x7f && c <= 0xff)) out += "\\" + String(c).padStart(3, "0");
    else out += octets[i];
  }
  return out;
}

/** Index of the "." ending the label of `name` that starts at `from`, or -1. */
function labelEnd(name: string, from: number): number {
  for (let i = from; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x5c)
      i++; // the escaped char (or the first digit of \DDD) never ends a label
    else if (c === 0x2e) return i;
  }
  return -1;
}

/** True when name[i] is "." preceded by an even number of backslashes: a label separator. */
function separatorAt(name: string, i: number): boolean {
  if (name.charCodeAt(i) !== 0x2e) return false;
  let n = 0;
  while (i - n - 1 >= 0 && name.charCodeAt(i - n - 1) === 0x5c) n++;
  return n % 2 === 0;
}

/**
 * The labels of a text name as octet strings (one char per octet), escapes decoded; a final "." ends
 * the name. A char above U+00FF is kept as it is (no octet holds it: nameToWire refuses it). `error`
 * says what is wrong with an escape; the octets are then a best effort.
 */
function parseLabels(name: string): { labels: string[]; error?: string } {
  const labels: string[] = [];
  let error: string | undefined;
  let label = "";
  for (let i = 0; i < name.length; i++) {
    const ch = name[i];
    if (ch === ".") {
      labels.push(label);
      label = "";
      continue;
    }
    if (ch !== "\\") {
      label += ch;
      continue;
    }
    const digits = /^\d{3}/.exec(name.slice(i + 1, i + 4));
    if (digits && Number(digits[0]) <= 255) {
      label += String.fromCharCode(Number(digits[0]));
      i += 3;
    } else if (i + 1 < name.length && !/\d/.test(name[i + 1])) {
      label += name[++i];
    } else {
      error ??= `has a bad escape at '${name.slice(i, i + 4)}'`;
      label += ch;
    }
  }
  // "a.b." ends with a separator: nothing after it; "a.b" is taken as absolute.
  if (label !== "" || labels.length === 0) labels.push(label);
  if (labels.length === 1 && labels[0] === "" && name.length <= 1) return { labels: [], error };
  return { labels, error };
}

/**
 * The uncompressed wire form of a text name (escapes decoded, a relative name taken as absolute), or
 * a sentence saying why there is none: a bad escape, an empty label, a label over 63 octets, a name
 * over 255, a char above U+00FF.
 */
export function nameToWire(name: string): Uint8Array | string {
  const { labels: ls, error } = parseLabels(name);
  if (error !== undefined) return error;
  let size = 1;
  for (const l of ls) {
    if (l.length === 0) return "has an empty label";
    if (l.length > 63) return "has a label longer than 63 octets";
    size += l.length + 1;
  }
  if (size > 255) return "is longer than 255 octets";
  const wire = new Uint8Array(size);
  let o = 0;
  for (const l of ls) {
    wire[o++] = l.length;
    for (let i = 0; i < l.length; i++) {
      const c = l.charCodeAt(i);
      if (c > 0xff) return "has a character above U+00FF";
      wire[o++] = c;
    }
  }
  return wire;
}

/** A canonical name's wire form, ASCII lowercased, one char per octet and with the root octet: the
 * name part of an answer-cache key (Scanned.key). A name with no wire form gives its text. */
export function wireKey(name: string): string {
  let out = "";
  if (!name.includes("\\")) {
    if (name !== ".")
      for (const label of name.slice(0, -1).split(".")) out += String.fromCharCode(label.length) + label;
    return lowerAscii(out) + "\0";
  }
  const wire = nameToWire(name);
  if (typeof wire === "string") return name;
  for (const c of wire) out += String.fromCharCode(c);
  return lowerAscii(out);
}

/** What wireKey gives, written as octets into `out`: their count, or -1 when this needs wireKey
 * itself (an escape, a character above U+00FF, a label over 63 octets, or more than `out` holds).
 * Watch storms invalidate several names an event, and the string and array wireKey's octets took
 * were most of what invalidating them allocated. */
export function wireKeyInto(name: string, out: Uint8Array): number {
  const end = name.length - 1; // the root's dot
  if (end < 0 || name.charCodeAt(end) !== 46 || end + 2 > out.length) return -1;
  if (end === 0) return ((out[0] = 0), 1);
  let st = 0; // where the current label starts: its length octet, then its octets
  for (let i = 0; i < end; i++) {
    let c = name.charCodeAt(i);
    if (c === 46) {
      if (i - st > 63) return -1;
      out[st] = i - st;
      st = i + 1;
      continue;
    }
    if (c === 92 || c > 0xff) return -1;
    if (c >= 65 && c <= 90) c += 32;
    out[i + 1] = c;
  }
  if (end - st > 63) return -1;
  out[st] = end - st;
  out[end + 1] = 0;
  return end + 2;
}

/** Anything but printable ASCII other than the backslash: a name holding it is parsed to be made
 * canonical. */
const UNCANONICAL = /[^\x21-\x5b\x5d-\x7e]/;

/** Makes a name absolute and lowercase, escapes in their one form: Example.ORG -> example.org.,
 * A\046b\c. -> a\.bc. */
export function canonical(name: string): string {
  if (UNCANONICAL.test(name)) {
    const ls = parseLabels(name).labels;
    if (ls.length === 0) return ".";
    return ls.map((l) => labelText(lowerAscii(l))).join(".") + ".";
  }
  const lower = name.toLowerCase();
  if (lower === "" || lower === ".") return ".";
  return lower.endsWith(".") ? lower : lower + ".";
}

/** ASCII A-Z lowered, nothing else (DNS compares names so, RFC 4343). */
function lowerAscii(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** True when `name` equals `zone` or lies below it. Both canonical. */
export function isSubdomain(name: string, zone: string): boolean {
  if (zone === ".") return true;
  if (name.length === zone.length) return name === zone;
  return name.length > zone.length && name.endsWith(zone) && separatorAt(name, name.length - zone.length - 1);
}

/** Labels of a canonical name in text form, leftmost first, without the root: a.b. -> a and b,
 * a\.b.c. -> a\.b and c. */
export function labels(name: string): string[] {
  if (name === ".") return [];
  if (!name.includes("\\")) return name.slice(0, -1).split(".");
  const out: string[] = [];
  for (let i = 0; i < name.length;) {
    const end = labelEnd(name, i);
    const stop = end < 0 ? name.length : end;
    out.push(name.slice(i, stop));
    i = stop + 1;
  }
  return out;
}

/** The labels of `name` in front of `zone`, which it lies below: (a.b.zone., zone.) -> a and b. */
export function labelsBelow(name: string, zone: string): string[] {
  if (name === zone) return [];
  // The dot in front of the zone (of the root, the name's last). One copy, then split's exact array:
  // every question of a zone comes through here (a loop of push() allocates a larger array).
  const end = name.length - (zone === "." ? 1 : zone.length + 1);
  if (name.includes("\\")) return labels(name.slice(0, end + 1));
  return name.slice(0, end).split(".");
}

export function labelCount(name: string): number {
  return name === "." ? 0 : labels(name).length;
}

/** The name with its leftmost label removed; "." stays ".". */
export function parent(name: string): string {
  if (name === ".") return ".";
  const i = labelEnd(name, 0);
  return i < 0 || i === name.length - 1 ? "." : name.slice(i + 1);
}

/** Joins a relative name to an origin: ("www", "example.org.") -> "www.example.org.". A name ending in
 * an unescaped "." is absolute already. */
export function join(relative: string, origin: string): string {
  if (relative === "@") return origin;
  if (relative.endsWith(".") && separatorAt(relative, relative.length - 1)) return relative;
  return origin === "." ? relative + "." : relative + "." + origin;
}

/** Reverse-lookup name of an IPv4 or IPv6 address, or undefined for something that is neither. */
export function reverseName(ip: string): string | undefined {
  if (ip.includes(":")) {
    const nibbles = expandIPv6(ip);
    if (!nibbles) return undefined;
    return nibbles.split("").reverse().join(".") + ".ip6.arpa.";
  }
  const parts = ip.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reverse().join(".") + ".in-addr.arpa.";
}

/** 32 hex nibbles of an IPv6 address (no separators), or undefined when it does not parse. */
export function expandIPv6(ip: string): string | undefined {
  let s = ip.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const p = v4[1].split(".").map(Number);
    if (p.some((x) => x > 255)) return undefined;
    s =
      s.slice(0, -v4[1].length) + ((p[0] << 8) | p[1]).toString(16) + ":" + ((p[2] << 8) | p[3]).toString(16);
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return groups.map((g) => g.padStart(4, "0")).join("");
}

/** The address a reverse name stands for, or undefined when the name is not a full address. */
export function addressFromReverse(name: string): string | undefined {
  if (name.endsWith(".in-addr.arpa.")) {
    const parts = name.slice(0, -".in-addr.arpa.".length).split(".");
    if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) {
      return undefined;
    }
    return parts.reverse().join(".");
  }
  if (name.endsWith(".ip6.arpa.")) {
    const nibbles = name.slice(0, -".ip6.arpa.".length).split(".");
    if (nibbles.length !== 32 || nibbles.some((n) => !/^[0-9a-f]$/.test(n))) return undefined;
    const hex = nibbles.reverse().join("");
    const groups: string[] = [];
    for (let i = 0; i < 32; i += 4) groups.push(hex.slice(i, i + 4).replace(/^0+(?=.)/, ""));
    return compressIPv6(groups.join(":"));
  }
  return undefined;
}

/** RFC 5952 text form of an already-expanded colon-separated IPv6 address. */
export function compressIPv6(full: string): string {
  const groups = full.split(":");
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestStart < 0) return groups.join(":");
  return groups.slice(0, bestStart).join(":") + "::" + groups.slice(bestStart + bestLen).join(":");
}
