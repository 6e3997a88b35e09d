// The rules of one rewrite directive, parsed from its words:
//   [continue|stop] name [MATCH] FROM TO [answer auto | answer name FROM TO | answer value FROM TO]...
//   [continue|stop] type FROM TO
//   [continue|stop] class FROM TO
//   [continue|stop] ttl [MATCH] NAME SECONDS|[MIN]-[MAX]
//   [continue|stop] edns0 local|nsid|subnet set|replace|append|unset ...   (edns0.ts)
//   [continue|stop] cname [MATCH] FROM TO
//   [continue|stop] rcode [MATCH] NAME FROM TO
// MATCH is exact (the default), prefix, suffix, substring or regex.

import type { Directive, Token } from "../../corefile/types.ts";
import type { NameMatch } from "./name-match.ts";
import type { EdnsRule } from "./edns0.ts";
import { MATCH_KINDS, nameMatch, regexMap } from "./name-match.ts";
import { configError } from "../../corefile/errors.ts";
import { Type, classFromName, rcodeFromName, typeFromName } from "../../dns/constants.ts";
import { parseEdnsRule, type LabelOf } from "./edns0.ts";
import { MAX_TTL } from "../../dns/text.ts";

export type Mode = "continue" | "stop";

/** How names in a reply are mapped back. */
export interface AnswerRewrite {
  /** `answer auto`: the inverse of the question's rewrite. */
  auto: boolean;
  /** `answer name`: owner names, and names inside CNAME, NS, PTR, MX, SRV and SOA records. */
  names: ((name: string) => string)[];
  /** `answer value`: names inside records only. */
  values: ((name: string) => string)[];
}

export type Rule =
  | { field: "name"; mode: Mode; match: NameMatch; answer: AnswerRewrite }
  | { field: "type"; mode: Mode; from: number; to: number }
  | { field: "class"; mode: Mode; from: number; to: number }
  | { field: "ttl"; mode: Mode; match: NameMatch; min: number; max: number }
  | { field: "edns0"; mode: Mode; option: EdnsRule }
  | { field: "cname"; mode: Mode; match: NameMatch }
  | { field: "rcode"; mode: Mode; match: NameMatch; from: number; to: number };

/** Parses one rule from the words after `rewrite` (from its line or its block); `at` names the line
 * for errors that have no word to point at. */
export function parseRule(words: Token[], at: Directive, labelOf: LabelOf): Rule {
  const fail = (t: Token | Directive, message: string): never => {
    throw configError(t, "rewrite", message);
  };
  let i = 0;
  let mode: Mode = "stop";
  if (words[0]?.text === "continue" || words[0]?.text === "stop") {
    mode = words[0].text;
    i++;
  }
  const field = words[i];
  if (field === undefined) return fail(at, `missing the field to rewrite (${FIELDS})`);
  const rest = words.slice(i + 1);
  const f = field.text.toLowerCase();
  switch (f) {
    case "name":
      return nameRule(mode, rest, field, fail);
    case "type":
    case "class": {
      if (rest.length !== 2) return fail(field, `'${f}' takes FROM and TO, got ${rest.length} word(s)`);
      const parse = f === "type" ? typeFromName : classFromName;
      const [from, to] = rest.map((t) => parse(t.text) ?? fail(t, `unknown ${f} '${t.text}'`));
      if (f === "type" && (to === Type.ANY || to === Type.AXFR || to === Type.IXFR || to === Type.OPT)) {
        return fail(rest[1], `cannot rewrite to type '${rest[1].text}'`);
      }
      return { field: f, mode, from, to };
    }
    case "ttl":
      return ttlRule(mode, rest, field, fail);
    case "edns0":
      return { field: f, mode, option: parseEdnsRule(rest, field, labelOf) };
    case "cname": {
      const { kind, rest: names } = matchOf(rest);
      if (names.length !== 2) return fail(field, "'cname' takes [MATCH] FROM TO");
      return { field: f, mode, match: compiled(kind, names[0], names[1].text, fail) };
    }
    case "rcode":
      return rcodeRule(mode, rest, field, fail);
    default:
      return fail(field, `unknown field '${field.text}' (want ${FIELDS})`);
  }
}

const FIELDS = "name, type, class, ttl, edns0, cname or rcode";

type Fail = (t: Token | Directive, message: string) => never;

/** The match type in front of `arity` words (exact when there is none). */
function matchOf(words: Token[], arity = 2): { kind: (typeof MATCH_KINDS)[number]; rest: Token[] } {
  const k = words[0]?.text.toLowerCase();
  const kind = MATCH_KINDS.find((m) => m === k);
  return kind === undefined || words.length <= arity
    ? { kind: "exact", rest: words }
    : { kind, rest: words.slice(1) };
}

/** A name matcher, its pattern's mistakes reported at the pattern's word. */
function compiled(kind: (typeof MATCH_KINDS)[number], from: Token, to: string, fail: Fail): NameMatch {
  try {
    return nameMatch(kind, from.text, to);
  } catch (err) {
    return fail(from, (err as Error).message);
  }
}

function rcodeRule(mode: Mode, words: Token[], field: Token, fail: Fail): Rule {
  const { kind, rest } = matchOf(words, 3);
  if (rest.length !== 3) return fail(field, "'rcode' takes [MATCH] NAME FROM TO");
  const [from, to] = rest.slice(1).map((t) => rcodeArg(t) ?? fail(t, `unknown rcode '${t.text}'`));
  return { field: "rcode", mode, match: compiled(kind, rest[0], "", fail), from, to };
}

/** An rcode by name (NXDOMAIN) or number (3), 0 to 4095. */
function rcodeArg(t: Token): number | undefined {
  if (/^\d{1,4}$/.test(t.text)) return Number(t.text) <= 4095 ? Number(t.text) : undefined;
  return rcodeFromName(t.text);
}

function nameRule(mode: Mode, words: Token[], field: Token, fail: Fail): Rule {
  const { kind, rest } = matchOf(words);
  if (rest.length < 2) return fail(field, "'name' takes [MATCH] FROM TO");
  const match = compiled(kind, rest[0], rest[1].text, fail);
  const answer: AnswerRewrite = { auto: kind === "exact", names: [], values: [] };
  for (let i = 2; i < rest.length;) {
    if (rest[i].text !== "answer") return fail(rest[i], `unexpected '${rest[i].text}' (want 'answer ...')`);
    const what = rest[i + 1]?.text;
    if (what === "auto") {
      answer.auto = true;
      i += 2;
      continue;
    }
    if (what !== "name" && what !== "value")
      return fail(rest[i], "'answer' takes auto, name FROM TO or value FROM TO");
    const [from, to] = [rest[i + 2], rest[i + 3]];
    if (from === undefined || to === undefined) return fail(rest[i], `'answer ${what}' takes FROM and TO`);
    try {
      (what === "name" ? answer.names : answer.values).push(regexMap(from.text, to.text));
    } catch (err) {
      return fail(from, (err as Error).message);
    }
    i += 4;
  }
  return { field: "name", mode, match, answer };
}

function ttlRule(mode: Mode, words: Token[], field: Token, fail: Fail): Rule {
  const { kind, rest } = matchOf(words);
  if (rest.length !== 2) return fail(field, "'ttl' takes [MATCH] NAME SECONDS or [MIN]-[MAX]");
  const match = compiled(kind, rest[0], "", fail);
  const t = rest[1];
  const m = /^(\d*)(-?)(\d*)$/.exec(t.text);
  if (!m || (m[1] === "" && m[3] === "")) {
    return fail(t, `invalid TTL '${t.text}' (want SECONDS, MIN-MAX, MIN- or -MAX)`);
  }
  const min = m[1] === "" ? 0 : Number(m[1]);
  const max = m[2] === "" ? min : m[3] === "" ? MAX_TTL : Number(m[3]);
  if (min > MAX_TTL || max > MAX_TTL || min > max) return fail(t, `invalid TTL range '${t.text}'`);
  return { field: "ttl", mode, match, min, max };
}
