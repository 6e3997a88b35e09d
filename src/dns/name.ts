// Domain name helpers. Inside the server every name is absolute (ends with ".") and lowercased;
// the root is ".".

/** Makes a name absolute and lowercase: "Example.ORG" -> "example.org.". */
export function canonical(name: string): string {
  const lower = name.toLowerCase();
  if (lower === "" || lower === ".") return ".";
  return lower.endsWith(".") ? lower : lower + ".";
}

/** True when `name` equals `zone` or lies below it. Both canonical. */
export function isSubdomain(name: string, zone: string): boolean {
  if (zone === ".") return true;
  if (name.length === zone.length) return name === zone;
  return name.length > zone.length && name.endsWith(zone) && name[name.length - zone.length - 1] === ".";
}

/** Labels of a canonical name, leftmost first, without the root: "a.b." -> ["a", "b"]. */
export function labels(name: string): string[] {
  if (name === ".") return [];
  return name.slice(0, -1).split(".");
}

export function labelCount(name: string): number {
  return name === "." ? 0 : labels(name).length;
}

/** The name with its leftmost label removed; "." stays ".". */
export function parent(name: string): string {
  if (name === ".") return ".";
  const i = name.indexOf(".");
  return i === name.length - 1 ? "." : name.slice(i + 1);
}

/** Joins a relative name to an origin: ("www", "example.org.") -> "www.example.org.". */
export function join(relative: string, origin: string): string {
  if (relative === "@") return origin;
  if (relative.endsWith(".")) return relative;
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
function compressIPv6(full: string): string {
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
