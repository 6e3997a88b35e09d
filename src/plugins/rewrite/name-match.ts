// The five ways rewrite matches a name (exact, prefix, suffix, substring, regex), the rewrite itself,
// and its inverse for `answer auto`. Names are canonical: lowercase and absolute.

import { goRegExp, groupCount } from "./go-regexp.ts";
import { canonical, nameToWire } from "../../dns/name.ts";

export const MATCH_KINDS = ["exact", "prefix", "suffix", "substring", "regex"] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

export interface NameMatch {
  kind: MatchKind;
  /** exact and suffix: a canonical name; prefix and substring: lowercased text; regex: the pattern. */
  from: string;
  /** The replacement: for regex, a name with {0}..{N} standing for the groups. */
  to: string;
  re?: RegExp;
}

/** Builds a matcher; throws an Error with a message for the Corefile on a bad pattern. */
export function nameMatch(kind: MatchKind, from: string, to: string): NameMatch {
  switch (kind) {
    case "exact":
    case "suffix":
      return { kind, from: canonical(from), to: canonical(to) };
    case "prefix":
    case "substring":
      return { kind, from: from.toLowerCase(), to: to.toLowerCase() };
    case "regex":
      return { kind, from, to, re: compile(from, to) };
  }
}

function compile(pattern: string, replacement: string): RegExp {
  let re: RegExp;
  try {
    re = goRegExp(pattern);
  } catch (err) {
    throw new Error(`invalid regex '${pattern}': ${(err as Error).message}`, { cause: err });
  }
  const used = [...replacement.matchAll(/\{(\d+)\}/g)].map((m) => Number(m[1]));
  const groups = groupCount(re);
  if (used.some((n) => n > groups)) {
    throw new Error(`'${replacement}' uses a group that '${pattern}' does not have (it has ${groups})`);
  }
  return re;
}

/** True when the name matches (for rules that only test, such as ttl). */
export function matches(m: NameMatch, name: string): boolean {
  switch (m.kind) {
    case "exact":
      return name === m.from;
    case "prefix":
      return name.startsWith(m.from);
    case "suffix":
      return name.endsWith(m.from);
    case "substring":
      return name.includes(m.from);
    case "regex":
      return m.re!.test(name);
  }
}

/** The rewritten name (canonical), or undefined when the name does not match. */
export function rewriteName(m: NameMatch, name: string): string | undefined {
  switch (m.kind) {
    case "exact":
      return name === m.from ? m.to : undefined;
    case "prefix":
      return name.startsWith(m.from) ? canonical(m.to + name.slice(m.from.length)) : undefined;
    case "suffix":
      return name.endsWith(m.from) ? canonical(name.slice(0, -m.from.length) + m.to) : undefined;
    case "substring":
      return name.includes(m.from) ? canonical(name.replaceAll(m.from, m.to)) : undefined;
    case "regex": {
      const g = m.re!.exec(name);
      return g ? canonical(m.to.replace(/\{(\d+)\}/g, (_, n: string) => g[Number(n)] ?? "")) : undefined;
    }
  }
}

/** The inverse of a rewrite, for names in the reply: `original` and `rewritten` are the question's
 * names before and after, which is all a regex rewrite can be undone by. */
export function reverseName(m: NameMatch, original: string, rewritten: string): (name: string) => string {
  switch (m.kind) {
    case "exact":
    case "regex":
      return (n) => (n === rewritten ? original : n);
    case "prefix":
      return (n) => (n.startsWith(m.to) ? canonical(m.from + n.slice(m.to.length)) : n);
    case "suffix":
      return (n) => (n.endsWith(m.to) ? canonical(n.slice(0, -m.to.length) + m.from) : n);
    case "substring":
      return (n) => (m.to !== "" && n.includes(m.to) ? canonical(n.replaceAll(m.to, m.from)) : n);
  }
}

/** `answer name|value FROM TO`: FROM a regex matched against a reply name, TO the whole new name. */
export function regexMap(from: string, to: string): (name: string) => string {
  const m = nameMatch("regex", from, to);
  return (n) => rewriteName(m, n) ?? n;
}

/** True for a name that fits the wire: labels of 1 to 63 octets, 255 octets in all. */
export function validName(name: string): boolean {
  return typeof nameToWire(name) !== "string";
}
