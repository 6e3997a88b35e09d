// The part of Go's text/template that CoreDNS's template plugin examples use, compiled once at setup:
//   {{ .Name }} {{ .Zone }} {{ .Class }} {{ .Type }} {{ .Remote }}
//   {{ .Group.NAME }} {{ .Group.N }} {{ index .Group "NAME" }} {{ index .Match N }}
//   {{ .Meta "LABEL" }}   (a metadata label's value, "" without one)
//   {{ parseInt VALUE BASE BITS }}   (VALUE one of the above, in parentheses for index)
// with `{{-` and `-}}` trimming white space as in Go. Anything else (pipelines, variables, if/range,
// other functions) is an error at setup, never a surprise at query time.

/** What a template reads: the query and the regex match that selected the template. */
export interface TemplateData {
  name: string;
  zone: string;
  class: string;
  type: string;
  remote: string;
  /** The whole match and every group, by position. */
  match: readonly string[];
  /** Groups by name and by position ("0", "1", ...). */
  group: Readonly<Record<string, string | undefined>>;
  /** A metadata label's value for the query, "" when it has none (CoreDNS's `.Meta`). */
  meta(label: string): string;
}

/** A value reference, resolved at query time; undefined renders as Go's "<no value>". */
type Ref = (d: TemplateData) => string | undefined;

export interface CompiledTemplate {
  render(d: TemplateData): string;
  /** Group names and numbers the template reads: setup checks that a regex defines them. */
  readonly groups: ReadonlySet<string>;
  readonly usesRemote: boolean;
  /** Metadata labels the template reads. */
  readonly labels: ReadonlySet<string>;
}

export class TemplateSyntaxError extends Error {
  readonly code = "CDNS_ERR_TEMPLATE";
}

/** A value that cannot be computed at query time (parseInt of something not a number). */
export class TemplateExecError extends Error {
  readonly code = "CDNS_ERR_TEMPLATE_EXEC";
}

const FIELDS: Record<string, Ref> = {
  Name: (d) => d.name,
  Zone: (d) => d.zone,
  Class: (d) => d.class,
  Type: (d) => d.type,
  Remote: (d) => d.remote,
};

/** What the actions compiled so far read, beyond the query's fields. */
interface Reads {
  groups: Set<string>;
  usesRemote: boolean;
  labels: Set<string>;
}

export function compileTemplate(text: string): CompiledTemplate {
  const parts: (string | Ref)[] = [];
  const reads: Reads = { groups: new Set(), usesRemote: false, labels: new Set() };
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf("{{", i);
    if (open < 0) {
      parts.push(text.slice(i));
      break;
    }
    const close = text.indexOf("}}", open + 2);
    if (close < 0) throw new TemplateSyntaxError(`unclosed action in '${text}'`);
    let literal = text.slice(i, open);
    let inner = text.slice(open + 2, close);
    if (/^-\s/.test(inner)) {
      literal = literal.trimEnd();
      inner = inner.slice(1);
    }
    i = close + 2;
    if (/\s-$/.test(inner)) {
      inner = inner.slice(0, -1);
      while (i < text.length && /\s/.test(text[i])) i++;
    }
    if (literal !== "") parts.push(literal);
    parts.push(action(inner.trim(), reads));
  }
  return {
    groups: reads.groups,
    usesRemote: reads.usesRemote,
    labels: reads.labels,
    render(d) {
      let out = "";
      for (const p of parts) out += typeof p === "string" ? p : (p(d) ?? "<no value>");
      return out;
    },
  };
}

/** One action, `src` without its braces. */
function action(src: string, reads: Reads): Ref {
  const words = tokens(src);
  if (words[0] === "parseInt") {
    if (words.length !== 4) throw new TemplateSyntaxError(`parseInt takes VALUE BASE BITS: '{{${src}}}'`);
    const value = valueRef(words[1], src, reads);
    const base = Number(words[2]);
    const bits = Number(words[3]);
    if (!/^\d+$/.test(words[2]) || base < 2 || base > 36) {
      throw new TemplateSyntaxError(`parseInt base must be 2 to 36: '{{${src}}}'`);
    }
    if (!/^\d+$/.test(words[3]) || bits < 1 || bits > 64) {
      throw new TemplateSyntaxError(`parseInt bit size must be 1 to 64: '{{${src}}}'`);
    }
    return (d) => parseUint(value(d) ?? "", base, bits);
  }
  if (words.length === 1 || words[0] === "index" || words[0] === ".Meta") return valueRef(src, src, reads);
  throw new TemplateSyntaxError(
    `unsupported template action '{{${src}}}' (supported: .Name .Zone .Class .Type .Remote .Group.X, ` +
      'index .Match N, index .Group "X", .Meta "LABEL", parseInt VALUE BASE BITS)',
  );
}

/** A value `word` of the action `src`: a field, a group, or an index into the match or the groups. */
function valueRef(word: string, src: string, reads: Reads): Ref {
  const w = word.startsWith("(") && word.endsWith(")") ? word.slice(1, -1).trim() : word;
  const ws = tokens(w);
  const group = (key: string, ref: Ref): Ref => {
    reads.groups.add(key);
    return ref;
  };
  if (ws.length === 3 && ws[0] === "index") {
    if (ws[1] === ".Match" && /^\d+$/.test(ws[2])) return group(ws[2], (d) => d.match[Number(ws[2])]);
    const key = /^"([^"]*)"$/.exec(ws[2])?.[1];
    if (ws[1] === ".Group" && key !== undefined) return group(key, (d) => d.group[key]);
  }
  const label = ws.length === 2 && ws[0] === ".Meta" ? /^"([^"]*)"$/.exec(ws[1])?.[1] : undefined;
  if (label !== undefined) {
    reads.labels.add(label);
    return (d) => d.meta(label);
  }
  if (ws.length === 1) {
    const g = /^\.Group\.([A-Za-z0-9_]+)$/.exec(w);
    if (g) return group(g[1], (d) => d.group[g[1]]);
    const f = /^\.([A-Za-z]+)$/.exec(w);
    if (f && Object.hasOwn(FIELDS, f[1])) {
      if (f[1] === "Remote") reads.usesRemote = true;
      return FIELDS[f[1]];
    }
  }
  throw new TemplateSyntaxError(`unsupported value '${word}' in '{{${src}}}'`);
}

/** Splits an action into words; a parenthesised group or a quoted string is one word. */
function tokens(src: string): string[] {
  const out: string[] = [];
  const re = /\s*(\([^()]*\)|"[^"]*"|[^\s()"]+)/y;
  let m: RegExpExecArray | null;
  let at = 0;
  while ((m = re.exec(src)) !== null) {
    out.push(m[1]);
    at = re.lastIndex;
  }
  if (src.slice(at).trim() !== "") throw new TemplateSyntaxError(`cannot read '{{${src}}}'`);
  return out;
}

/** Go's strconv.ParseUint, printed in decimal: base digits only, the value below 2^bits. */
function parseUint(s: string, base: number, bits: number): string {
  const digits = "0123456789abcdefghijklmnopqrstuvwxyz".slice(0, base);
  if (s === "" || ![...s.toLowerCase()].every((c) => digits.includes(c))) {
    throw new TemplateExecError(`parseInt: '${s}' is not a base ${base} number`);
  }
  let v = 0n;
  for (const c of s.toLowerCase()) v = v * BigInt(base) + BigInt(digits.indexOf(c));
  if (v >= 1n << BigInt(bits)) throw new TemplateExecError(`parseInt: '${s}' does not fit in ${bits} bits`);
  return v.toString();
}
