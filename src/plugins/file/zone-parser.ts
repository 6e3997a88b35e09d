// RFC 1035 section 5 master files: $ORIGIN, $TTL (RFC 2308), $INCLUDE, `;` comments, parentheses
// spanning lines, quoted strings, `@`, relative names, a blank owner repeating the previous one, TTL and
// class in either order. The result is validated as one zone (one SOA at the apex, nothing outside
// the origin, no CNAME beside other data), and every error names file:line.

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { RR } from "../../dns/message.ts";
import { Class, Type, typeName } from "../../dns/constants.ts";
import { canonical, isSubdomain } from "../../dns/name.ts";
import { DNSSEC_TYPES, dnssecRdataFromText } from "../../dnssec/text.ts";
import { NSEC, RRSIG } from "../../dnssec/rrsig.ts";
import {
  nameFromText,
  parseRecordHead,
  parseTime,
  rdataFromText,
  rdataToText,
  MAX_TTL,
  stringFromText,
} from "../../dns/text.ts";

/** A zone file that cannot be used. The message starts with `file:line:` (or `file:` for whole-zone
 * problems such as a missing SOA). */
export class ZoneError extends Error {
  readonly code = "CDNS_ERR_ZONE";
  readonly file: string;
  readonly line: number | undefined;
  constructor(file: string, line: number | undefined, message: string, options?: { cause?: unknown }) {
    super(`${line === undefined ? file : `${file}:${line}`}: ${message}`, options);
    this.name = "ZoneError";
    this.file = file;
    this.line = line;
  }
}

export interface ParseOptions {
  /** Shown in errors; $INCLUDE paths resolve against its folder. */
  file: string;
  /** The zone's apex; also the initial $ORIGIN. */
  origin: string;
  /** TTL of records that state none, before any $TTL. Without it (and $TTL) the SOA minimum applies. */
  defaultTtl?: number;
  /** Reads an included file (tests inject one); defaults to reading from disk. */
  readFile?: (path: string) => string;
}

/** The record types a zone file may hold. */
const SUPPORTED = new Set<number>([
  Type.A,
  Type.AAAA,
  Type.CNAME,
  Type.NS,
  Type.SOA,
  Type.MX,
  Type.SRV,
  Type.TXT,
  Type.PTR,
  Type.CAA,
]);

/** $INCLUDE nesting limit: deep enough for any real layout, and it stops include cycles. */
const MAX_INCLUDE_DEPTH = 8;

/** Reads and parses the zone file at `path` for the zone `origin`. Throws ZoneError. */
export function loadZone(path: string, origin: string): RR[] {
  return parseZone(readZoneFile(path), { file: path, origin });
}

/** Parses a whole master file into the records of the zone `opts.origin`. Throws ZoneError. */
export function parseZone(text: string, opts: ParseOptions): RR[] {
  const origin = canonical(opts.origin);
  const read = opts.readFile ?? ((p: string) => readFileSync(p, "latin1"));
  const out: Located[] = [];
  parseInto(text, opts.file, { origin, ttl: opts.defaultTtl, owner: undefined, depth: 0 }, out, read);
  return finish(out, origin, opts.file);
}

interface Located {
  rr: RR;
  file: string;
  line: number;
}

interface State {
  origin: string;
  /** $TTL, or undefined: records without a TTL then take the SOA minimum. */
  ttl: number | undefined;
  /** The previous owner, for lines that start with blank space. */
  owner: string | undefined;
  /** How many $INCLUDEs deep the file being read is (0: the zone file itself). */
  depth: number;
}

/** An entry: one record or directive, possibly spread over lines by parentheses. */
interface Entry {
  line: number;
  /** The entry's first line starts with a blank: the owner is the previous one. */
  blankOwner: boolean;
  fields: string[];
}

function parseInto(
  text: string,
  file: string,
  state: State,
  out: Located[],
  read: (path: string) => string,
): void {
  for (const e of lex(text, file)) {
    const fail = (message: string): ZoneError => new ZoneError(file, e.line, message);
    try {
      const f = e.fields;
      if (!e.blankOwner && f[0].startsWith("$")) {
        directive(e, file, state, out, read);
        continue;
      }
      let owner: string;
      if (e.blankOwner) {
        if (state.owner === undefined) throw fail("the first record has no owner name");
        owner = state.owner;
      } else {
        owner = nameFromText(f[0], state.origin);
      }
      const head = parseRecordHead(f, e.blankOwner ? 0 : 1);
      if (head.rclass !== undefined && head.rclass !== Class.IN) throw fail("only class IN is supported");
      const dnssec = DNSSEC_TYPES.has(head.type);
      if (!SUPPORTED.has(head.type) && !dnssec) throw fail(`unsupported record type ${typeName(head.type)}`);
      const fields = f.slice(head.rdataAt);
      // A signed zone's DNSSEC records are read into their wire rdata, whichever form they are in.
      const data =
        dnssec && fields[0] !== "\\#"
          ? dnssecRdataFromText(head.type, fields, state.origin)
          : rdataFromText(head.type, fields, state.origin);
      state.owner = owner;
      // -1 marks "no TTL given and no $TTL": resolved from the SOA minimum once the whole zone is read.
      const ttl = head.ttl ?? state.ttl ?? -1;
      out.push({ rr: { name: owner, type: head.type, class: Class.IN, ttl, data }, file, line: e.line });
    } catch (err) {
      if (err instanceof ZoneError) throw err;
      throw new ZoneError(file, e.line, (err as Error).message, { cause: err });
    }
  }
}

function directive(
  e: Entry,
  file: string,
  state: State,
  out: Located[],
  read: (path: string) => string,
): void {
  const [name, ...args] = e.fields;
  const want = (min: number, max: number): void => {
    if (args.length < min || args.length > max) {
      throw new Error(
        `${name} takes ${min === max ? min : `${min} or ${max}`} argument(s), got ${args.length}`,
      );
    }
  };
  switch (name.toUpperCase()) {
    case "$ORIGIN":
      want(1, 1);
      state.origin = nameFromText(args[0], state.origin);
      return;
    case "$TTL": {
      want(1, 1);
      const t = parseTime(args[0]);
      if (t === undefined) throw new Error(`$TTL '${args[0]}' is not a time (want seconds or e.g. 1h, 2d)`);
      if (t > MAX_TTL) throw new Error(`$TTL ${args[0]} is larger than ${MAX_TTL}`);
      state.ttl = t;
      return;
    }
    case "$INCLUDE": {
      want(1, 2);
      if (state.depth + 1 > MAX_INCLUDE_DEPTH)
        throw new Error(`$INCLUDE nested deeper than ${MAX_INCLUDE_DEPTH}`);
      const path = resolve(dirname(file), stringFromText(args[0], 4096));
      const origin = args[1] === undefined ? state.origin : nameFromText(args[1], state.origin);
      let included: string;
      try {
        included = read(path);
      } catch (err) {
        throw new Error(`cannot read included file ${path}: ${(err as Error).message}`, { cause: err });
      }
      // The included file starts from the parent's state, and its changes do not leak back (RFC 1035 5.1).
      parseInto(included, path, { ...state, origin, depth: state.depth + 1 }, out, read);
      return;
    }
  }
  throw new Error(`unsupported directive ${name}`);
}

/** Zone files are read as latin1: one char per octet, the form text.ts expects for character-strings. */
function readZoneFile(path: string): string {
  try {
    return readFileSync(path, "latin1");
  } catch (err) {
    throw new ZoneError(path, undefined, `cannot read zone file: ${(err as Error).message}`, { cause: err });
  }
}

/** What ends a word: blanks (RFC 1035 5.1: spaces and tabs), the end of a line, and ; ( ) ". */
const WORD_END = new Set([" ", "\t", "\r", "\n", ";", "(", ")", '"']);

/** Splits a master file into entries, following quotes, comments and parentheses. */
function lex(text: string, file: string): Entry[] {
  const entries: Entry[] = [];
  let line = 1;
  let depth = 0;
  let openedAt = 0;
  let lineBlank = text[0] === " " || text[0] === "\t";
  let entry: Entry | undefined;
  const push = (field: string): void => {
    entry ??= { line, blankOwner: lineBlank, fields: [] };
    entry.fields.push(field);
  };
  for (let i = 0; i < text.length;) {
    const c = text[i];
    if (c === "\n") {
      line++;
      i++;
      lineBlank = text[i] === " " || text[i] === "\t";
      if (depth === 0 && entry) {
        entries.push(entry);
        entry = undefined;
      }
    } else if (c === " " || c === "\t" || c === "\r") {
      i++;
    } else if (c === ";") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "(") {
      if (depth === 0) openedAt = line;
      depth++;
      i++;
    } else if (c === ")") {
      if (depth === 0) throw new ZoneError(file, line, "')' without '('");
      depth--;
      i++;
    } else if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === "\\") i++;
        if (text[i] === "\n") throw new ZoneError(file, line, "quoted string runs past the end of the line");
      }
      if (i >= text.length) throw new ZoneError(file, line, "unterminated quoted string");
      i++;
      push(text.slice(start, i));
    } else {
      const start = i;
      // Exactly the characters the branches above take end a word: with \s, a vertical tab, form feed
      // or no-break space would end it before its first character, and the loop would never advance.
      for (; i < text.length && !WORD_END.has(text[i]); i++) {
        if (text[i] === "\\") {
          i++;
          if (text[i] === "\n" || i >= text.length)
            throw new ZoneError(file, line, "backslash at the end of a line");
        }
      }
      push(text.slice(start, i));
    }
  }
  if (depth > 0) throw new ZoneError(file, openedAt, "'(' is never closed");
  if (entry) entries.push(entry);
  return entries;
}

/** Whole-zone checks and fix-ups: TTLs from the SOA minimum, duplicates dropped, one TTL per RRset. */
function finish(records: Located[], origin: string, file: string): RR[] {
  let soa: Located | undefined;
  for (const r of records) {
    if (!isSubdomain(r.rr.name, origin)) {
      throw new ZoneError(r.file, r.line, `'${r.rr.name}' is outside the zone ${origin}`);
    }
    if (r.rr.type !== Type.SOA) continue;
    if (r.rr.name !== origin)
      throw new ZoneError(r.file, r.line, `SOA record must be at the zone apex ${origin}`);
    if (soa)
      throw new ZoneError(r.file, r.line, `second SOA record (the first is at ${soa.file}:${soa.line})`);
    soa = r;
  }
  if (!soa) throw new ZoneError(file, undefined, `zone ${origin} has no SOA record`);
  const minimum = (soa.rr.data as { minimum: number }).minimum;

  // Owner -> type -> records, to check CNAMEs and to merge RRsets.
  const byName = new Map<string, Map<number, Located[]>>();
  const seen = new Set<string>();
  const result: RR[] = [];
  for (const r of records) {
    if (r.rr.ttl < 0) r.rr.ttl = minimum;
    const key = `${r.rr.name} ${r.rr.type} ${rdataToText(r.rr.data)}`;
    if (seen.has(key)) continue; // RFC 2181 5: an RRset holds no duplicates
    seen.add(key);
    let types = byName.get(r.rr.name);
    if (!types) byName.set(r.rr.name, (types = new Map()));
    // RFC 4035 2.5: a CNAME's owner also holds its RRSIG and NSEC records.
    const proof = r.rr.type === RRSIG || r.rr.type === NSEC;
    const cname = types.get(Type.CNAME)?.[0];
    if (cname && r.rr.type === Type.CNAME) {
      throw new ZoneError(
        r.file,
        r.line,
        `${r.rr.name} has a second CNAME (the first is at ${cname.file}:${cname.line})`,
      );
    }
    if (cname && !proof) {
      throw new ZoneError(
        r.file,
        r.line,
        `${r.rr.name} has a CNAME (${cname.file}:${cname.line}) and other data`,
      );
    }
    const others = [...types.entries()].filter(([t]) => t !== RRSIG && t !== NSEC);
    if (r.rr.type === Type.CNAME && others.length > 0) {
      const other = others[0][1][0];
      throw new ZoneError(
        r.file,
        r.line,
        `${r.rr.name} has other data (${other.file}:${other.line}) and a CNAME`,
      );
    }
    const set = types.get(r.rr.type);
    if (set && r.rr.type !== RRSIG) {
      // RFC 2181 5.2: all records of an RRset share one TTL; take the lowest.
      const ttl = Math.min(set[0].rr.ttl, r.rr.ttl);
      for (const s of set) s.rr.ttl = ttl;
      r.rr.ttl = ttl;
      set.push(r);
    } else if (set) {
      set.push(r); // RRSIGs at one owner cover RRsets of different TTLs: each keeps its own
    } else {
      types.set(r.rr.type, [r]);
    }
    result.push(r.rr);
  }
  return result;
}
