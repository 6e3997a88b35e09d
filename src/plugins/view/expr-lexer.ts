// The words of a view expression: the part of expr-lang's syntax (github.com/expr-lang/expr, which
// CoreDNS's view plugin compiles) that its README uses. Numbers, 'single' and "double" quoted strings
// with backslash escapes, names, and the operators; anything else is an error at its column.

export type TokenKind = "number" | "string" | "name" | "op" | "end";

export interface ExprToken {
  kind: TokenKind;
  /** The string's value (escapes applied), a number's or name's text, the operator. */
  text: string;
  /** 1-based column in the expression, for errors. */
  column: number;
}

export class ExprError extends Error {
  readonly code = "CDNS_ERR_VIEW_EXPR";
}

/** Longest first, so `<=` is not read as `<`. */
const OPERATORS = [
  "==",
  "!=",
  "<=",
  ">=",
  "&&",
  "||",
  "**",
  "??",
  "?.",
  "..",
  "<",
  ">",
  "!",
  "+",
  "-",
  "*",
  "/",
  "%",
  "^",
  "(",
  ")",
  "[",
  "]",
  "{",
  "}",
  ",",
  ".",
  "?",
  ":",
  "|",
  "#",
];

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "0": "\0",
};

export function lex(src: string): ExprToken[] {
  const out: ExprToken[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === " " || c === "\t" || c === "\n") {
      i++;
      continue;
    }
    const column = i + 1;
    if (c === "'" || c === '"') {
      let text = "";
      i++;
      for (;;) {
        if (i >= src.length) throw new ExprError(`string at column ${column} is not closed`);
        const ch = src[i++];
        if (ch === c) break;
        if (ch !== "\\") {
          text += ch;
          continue;
        }
        const e = src[i++];
        if (e === undefined || !Object.hasOwn(ESCAPES, e)) {
          throw new ExprError(`unknown escape '\\${e ?? ""}' in the string at column ${column}`);
        }
        text += ESCAPES[e];
      }
      out.push({ kind: "string", text, column });
      continue;
    }
    const number = /^(0x[0-9a-fA-F]+|\d+(\.\d+)?)/.exec(src.slice(i));
    if (number) {
      out.push({ kind: "number", text: number[0], column });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(src.slice(i));
    if (name) {
      out.push({ kind: "name", text: name[0], column });
      i += name[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => src.startsWith(o, i));
    if (op === undefined) throw new ExprError(`unexpected '${c}' at column ${column}`);
    out.push({ kind: "op", text: op, column });
    i += op.length;
  }
  out.push({ kind: "end", text: "", column: src.length + 1 });
  return out;
}
