// resolv.conf as glibc's stub resolver reads it (resolv/res_init.c, checked against glibc 2.36 in a
// network namespace by test/resolver-glibc.test.ts). glibc never rejects a file: what it does not
// understand it skips, and malformed numbers become what atoi() makes of them. This parser does the
// same and lists what it skipped in `notes`, so `clusterdns resolve` can say why a line had no effect.

import { isIPv6 } from "node:net";

export interface ResolvConf {
  /** Servers glibc uses, "ADDR" (port 53), at most 3 (MAXNS); 127.0.0.1 when the file names none. */
  nameservers: string[];
  /** The search list, in order, as written (case kept; a leading "." is stripped only when searching). */
  search: string[];
  /** 0..15: names with at least this many dots are tried as they are before the search list. */
  ndots: number;
  /** Tries of the whole server list (glibc's retry; default 2, at most 5; 0 or less sends nothing). */
  attempts: number;
  /** Seconds to wait for the first server (retrans; default 5, at most 30; 0 or less waits 1 s). */
  timeout: number;
  rotate: boolean;
  singleRequest: boolean;
  singleRequestReopen: boolean;
  edns0: boolean;
  noTldQuery: boolean;
  /** glibc 2.36+: A queries only, for every lookup. */
  noAaaa: boolean;
  /** TCP for every query. */
  useVc: boolean;
  trustAd: boolean;
  /** Lines and words glibc ignores, and servers past the third, for explaining a file. */
  notes: ConfNote[];
}

export interface ConfNote {
  /** "file:line", or the variable name for LOCALDOMAIN / RES_OPTIONS. */
  where: string;
  message: string;
}

export interface ParseOptions {
  /** LOCALDOMAIN replaces the file's search/domain lines; RES_OPTIONS is applied after its options. */
  env?: { LOCALDOMAIN?: string; RES_OPTIONS?: string };
  /** Without search/domain lines glibc searches the domain part of the host name (after its first dot). */
  hostname?: string;
}

/** glibc's limits (resolv.h): MAXNS, RES_MAXNDOTS, RES_MAXRETRY, RES_MAXRETRANS. */
const MAXNS = 3;
const MAX_NDOTS = 15;
const MAX_ATTEMPTS = 5;
const MAX_TIMEOUT = 30;

/** Flag options in glibc's table order; a word matches when it STARTS with one (strncmp). */
const FLAGS: readonly [string, keyof ResolvConf | undefined][] = [
  ["inet6", undefined], // deprecated RES_USE_INET6: no effect on getaddrinfo or gethostbyname2
  ["rotate", "rotate"],
  ["edns0", "edns0"],
  ["single-request-reopen", "singleRequestReopen"],
  ["single-request", "singleRequest"],
  ["no_tld_query", "noTldQuery"],
  ["no-tld-query", "noTldQuery"],
  ["no-reload", undefined], // only when /etc/resolv.conf is re-read, never which queries are sent
  ["use-vc", "useVc"],
  ["trust-ad", "trustAd"],
  ["no-aaaa", "noAaaa"],
];

export function defaultConf(): ResolvConf {
  return {
    nameservers: [],
    search: [],
    ndots: 1,
    attempts: 2,
    timeout: 5,
    rotate: false,
    singleRequest: false,
    singleRequestReopen: false,
    edns0: false,
    noTldQuery: false,
    noAaaa: false,
    useVc: false,
    trustAd: false,
    notes: [],
  };
}

export function parseResolvConf(text: string, file = "resolv.conf", opts: ParseOptions = {}): ResolvConf {
  const conf = defaultConf();
  const localDomain = opts.env?.LOCALDOMAIN;
  const note = (where: string, message: string) => conf.notes.push({ where, message });
  if (localDomain !== undefined) {
    // Split on blanks up to the first newline, like the file's search line.
    conf.search = splitWords(localDomain.split("\n")[0], true);
  }
  const lines = text.split("\n");
  // A final newline does not start another line.
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  lines.forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    if (line.startsWith("#") || line.startsWith(";") || line === "") return;
    const key = keyword(line);
    if (key === undefined) {
      note(where, "ignored: not a keyword glibc knows followed by a blank (at the start of the line)");
      return;
    }
    const rest = line.slice(key.length).replace(/^[ \t]+/, "");
    switch (key) {
      case "domain":
      case "search": {
        if (localDomain !== undefined) {
          note(where, `ignored: LOCALDOMAIN overrides the ${key} line`);
          return;
        }
        if (rest === "") {
          note(where, `ignored: ${key} with nothing after it keeps the previous search list`);
          return;
        }
        // Only blanks separate names: "#" is not a comment here and a "\r" stays in the name.
        conf.search = key === "domain" ? [rest.split(/[ \t]/)[0]] : splitWords(rest, false);
        return;
      }
      case "nameserver": {
        const word = rest.split(/[ \t]/)[0];
        const address = parseNameserver(word);
        if (address === undefined) note(where, `ignored: '${word}' is not an IPv4 or IPv6 address`);
        else if (conf.nameservers.length >= MAXNS) {
          note(where, `ignored: glibc uses only the first ${MAXNS} nameservers`);
        } else conf.nameservers.push(address);
        return;
      }
      case "options":
        applyOptions(conf, rest, where);
        return;
      default:
        return; // sortlist: orders addresses in replies, never changes which queries are sent
    }
  });
  if (conf.nameservers.length === 0) conf.nameservers.push("127.0.0.1");
  if (conf.search.length === 0 && localDomain === undefined && opts.hostname !== undefined) {
    const dot = opts.hostname.indexOf(".");
    if (dot >= 0) conf.search = [opts.hostname.slice(dot + 1)];
  }
  if (opts.env?.RES_OPTIONS !== undefined) applyOptions(conf, opts.env.RES_OPTIONS, "RES_OPTIONS");
  return conf;
}

/** The keyword a line starts with, when a blank follows it (glibc's MATCH). */
function keyword(line: string): string | undefined {
  const m = /^(domain|search|nameserver|sortlist|options)[ \t]/.exec(line);
  return m?.[1];
}

/** Blank-separated words; LOCALDOMAIN keeps an empty first word (a search list of just the root). */
function splitWords(s: string, keepEmptyFirst: boolean): string[] {
  const words = s.split(/[ \t]+/);
  const out = words.filter((w, i) => w !== "" || (keepEmptyFirst && i === 0));
  return out;
}

/** res_setoptions: words separated by blanks; unknown words are skipped. */
function applyOptions(conf: ResolvConf, text: string, where: string): void {
  for (const m of text.matchAll(/[^ \t]+/g)) {
    const word = m[0];
    // atoi reads from right after the prefix to wherever the number ends, past this word if it must.
    const numberAfter = (prefix: string) => atoi(text.slice(m.index + prefix.length));
    if (word.startsWith("ndots:")) {
      // The value lands in a 4-bit field (struct __res_state.ndots): -1 becomes 15, -16 becomes 0.
      const n = numberAfter("ndots:");
      conf.ndots = (n <= MAX_NDOTS ? n : MAX_NDOTS) & 0xf;
    } else if (word.startsWith("timeout:")) {
      const n = numberAfter("timeout:");
      conf.timeout = n <= MAX_TIMEOUT ? n : MAX_TIMEOUT;
    } else if (word.startsWith("attempts:")) {
      const n = numberAfter("attempts:");
      conf.attempts = n <= MAX_ATTEMPTS ? n : MAX_ATTEMPTS;
    } else {
      const bare = word.replace(/\n$/, "");
      if (bare === "") continue;
      const flag = FLAGS.find(([prefix]) => word.startsWith(prefix));
      if (flag === undefined) conf.notes.push({ where, message: `ignored: unknown option '${bare}'` });
      else if (flag[1] === undefined)
        conf.notes.push({ where, message: `'${bare}' has no effect on lookups` });
      else (conf as unknown as Record<string, boolean>)[flag[1]] = true;
    }
  }
}

/**
 * C's atoi: skips white space (so "ndots: 2" reads the 2 that glibc then also skips as an unknown
 * word), an optional sign, digits; 0 when there are none. strtol clamps to the long range, and the
 * int result keeps the low 32 bits.
 */
export function atoi(s: string): number {
  const m = /^[ \t\n\v\f\r]*([+-]?\d+)/.exec(s);
  if (!m) return 0;
  const LONG_MAX = (1n << 63n) - 1n;
  let big = BigInt(m[1]);
  if (big > LONG_MAX) big = LONG_MAX;
  if (big < -LONG_MAX - 1n) big = -LONG_MAX - 1n;
  return Number(BigInt.asIntN(32, big));
}

/** An address as glibc accepts it on a nameserver line, normalised; undefined when it does not. */
export function parseNameserver(word: string): string | undefined {
  const v4 = inetAton(word);
  if (v4 !== undefined) return v4;
  const bare = word.split("%")[0];
  return bare !== "" && isIPv6(bare) ? bare.toLowerCase() : undefined;
}

/**
 * inet_aton_exact: "a.b.c.d", "a.b.c" (c is 16 bits), "a.b" (b is 24 bits) or "a" (32 bits), each
 * part decimal, octal (leading 0) or hex (0x), the whole string consumed. Returns dotted decimal.
 */
export function inetAton(s: string): string | undefined {
  const parts = s.split(".");
  if (parts.length > 4) return undefined;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0[xX][0-9a-fA-F]*$/.test(p)) n = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]*$/.test(p)) n = parseInt(p, 8);
    else if (/^[1-9]\d*$/.test(p)) n = parseInt(p, 10);
    else return undefined;
    if (!Number.isSafeInteger(n) || n > 0xffffffff) return undefined;
    nums.push(n);
  }
  const last = nums.pop()!;
  if (nums.some((n) => n > 255) || last >= 2 ** (8 * (4 - nums.length))) return undefined;
  let value = last;
  nums.forEach((n, i) => (value += n * 2 ** (8 * (3 - i))));
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join(".");
}

/** The resolv.conf of a pod in namespace `ns` with ClusterFirst DNS policy (kubelet's shape). */
export function podResolvConf(ns: string, zone = "cluster.local", nameserver?: string): string {
  const z = zone.replace(/\.$/, "");
  const server = nameserver === undefined ? "" : `nameserver ${nameserver}\n`;
  return `${server}search ${ns}.svc.${z} svc.${z} ${z}\noptions ndots:5\n`;
}
