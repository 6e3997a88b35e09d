// A view expression compiled into closures: parsed once at set-up (precedence climbing over the
// operators of expr-lang that CoreDNS's view README uses), types checked then, so a wrong expression
// is a start-up error with its column, never a query that silently fails. Nothing is evaluated as
// JavaScript.
//
//   or, ||   and, &&   == != < <= > >= in, not in, matches, contains, startsWith, endsWith   + -   * / %
//   not, !, - (unary)   literals: 'text' "text" 12 0x1f true false nil [a, b]   (...)   f(args)

import type { ViewQuery } from "../../setup/block.ts";
import type { MetaLabel } from "../metadata/labels.ts";
import { goRegExp } from "../rewrite/go-regexp.ts";
import { ExprError, lex, type ExprToken } from "./expr-lexer.ts";
import { EvalError, FUNCTIONS, type Ty, type Value } from "./expr-env.ts";

interface Node {
  ty: Ty;
  /** The value when the node is a literal (or built only of literals). */
  constant?: Value;
  run: (q: ViewQuery) => Value;
}

/** Binary operators by precedence (expr-lang's), lowest first; `not in` is read as one operator. */
const LEVELS: readonly (readonly string[])[] = [
  ["or", "||"],
  ["and", "&&"],
  ["==", "!=", "<", "<=", ">", ">=", "in", "not in", "matches", "contains", "startsWith", "endsWith"],
  ["+", "-"],
  ["*", "/", "%"],
];

/** What expr-lang has and this subset does not: named so the error says so. */
const UNSUPPORTED = new Set(["**", "^", "??", "?.", "..", "?", ":", "{", "}", "|", "#", "."]);

/** Compiles `src`; throws ExprError naming what is wrong and where. */
export function compileExpr(src: string, labelOf: (name: string) => MetaLabel): (q: ViewQuery) => boolean {
  const p = new Parser(lex(src), labelOf);
  const node = p.expression(0);
  p.expectEnd();
  if (node.ty !== "bool") throw new ExprError(`the expression gives a ${node.ty}, not true or false`);
  const run = node.run;
  return (q) => {
    try {
      return run(q) === true;
    } catch (err) {
      if (err instanceof EvalError) return false;
      throw err;
    }
  };
}

class Parser {
  #at = 0;
  readonly #tokens: ExprToken[];
  readonly #labelOf: (name: string) => MetaLabel;

  constructor(tokens: ExprToken[], labelOf: (name: string) => MetaLabel) {
    this.#tokens = tokens;
    this.#labelOf = labelOf;
  }

  expectEnd(): void {
    const t = this.#peek();
    if (t.kind !== "end") throw unexpected(t);
  }

  expression(level: number): Node {
    if (level === LEVELS.length) return this.#unary();
    let left = this.expression(level + 1);
    for (;;) {
      const op = this.#binaryOp(LEVELS[level]);
      if (op === undefined) return left;
      const right = this.expression(level + 1);
      left = binary(op.text, left, right, op.column);
    }
  }

  /** The operator at the cursor when it is one of `ops` (consumed), else undefined. */
  #binaryOp(ops: readonly string[]): ExprToken | undefined {
    const t = this.#peek();
    if (t.kind === "op" && UNSUPPORTED.has(t.text)) throw unsupported(t);
    if (t.kind !== "op" && t.kind !== "name") return undefined;
    if (t.text === "not" && ops.includes("not in") && this.#tokens[this.#at + 1]?.text === "in") {
      this.#at += 2;
      return { ...t, text: "not in" };
    }
    if (!ops.includes(t.text)) return undefined;
    this.#at++;
    return t;
  }

  #unary(): Node {
    const t = this.#peek();
    if (t.text === "not" || t.text === "!") {
      this.#at++;
      const operand = this.#unary();
      need(operand, "bool", `'${t.text}'`, t.column);
      return { ty: "bool", run: (q) => !operand.run(q) };
    }
    if (t.kind === "op" && t.text === "-") {
      this.#at++;
      const operand = this.#unary();
      need(operand, "int", "'-'", t.column);
      return { ty: "int", run: (q) => -(operand.run(q) as number) };
    }
    return this.#primary();
  }

  #primary(): Node {
    const t = this.#next();
    switch (t.kind) {
      case "string":
        return literal("string", t.text);
      case "number":
        return literal("int", Number(t.text));
      case "name":
        if (t.text === "true" || t.text === "false") return literal("bool", t.text === "true");
        if (t.text === "nil") return literal("nil", null);
        return this.#call(t);
      case "op":
        if (t.text === "(") {
          const inner = this.expression(0);
          this.#expect(")");
          return inner;
        }
        if (t.text === "[") return this.#list();
        throw UNSUPPORTED.has(t.text) ? unsupported(t) : unexpected(t);
      default:
        throw unexpected(t);
    }
  }

  #list(): Node {
    const items: Node[] = [];
    if (this.#peek().text !== "]") {
      do items.push(this.expression(0));
      while (this.#take(","));
    }
    this.#expect("]");
    if (items.every((i) => i.constant !== undefined))
      return literal(
        "list",
        items.map((i) => i.constant!),
      );
    return { ty: "list", run: (q) => items.map((i) => i.run(q)) };
  }

  #call(name: ExprToken): Node {
    const fn = Object.hasOwn(FUNCTIONS, name.text) ? FUNCTIONS[name.text] : undefined;
    if (fn === undefined) {
      const known = Object.keys(FUNCTIONS).join(", ");
      throw new ExprError(
        `unknown name '${name.text}' at column ${name.column} (the functions are ${known})`,
      );
    }
    this.#expect("(");
    const args: Node[] = [];
    if (this.#peek().text !== ")") {
      do args.push(this.expression(0));
      while (this.#take(","));
    }
    this.#expect(")");
    if (args.length !== fn.args.length) {
      throw new ExprError(
        `${name.text}() at column ${name.column} takes ${fn.args.length} argument(s), got ${args.length}`,
      );
    }
    args.forEach((a, i) => need(a, fn.args[i], `argument ${i + 1} of ${name.text}()`, name.column));
    let call;
    try {
      call = fn.make(
        args.map((a) => a.constant),
        this.#labelOf,
      );
    } catch (err) {
      if (err instanceof EvalError)
        throw new ExprError(`${name.text}() at column ${name.column}: ${err.message}`);
      throw err;
    }
    if (args.length === 0) return { ty: fn.returns, run: (q) => call(q, NO_ARGS) };
    return {
      ty: fn.returns,
      run: (q) =>
        call(
          q,
          args.map((a) => a.run(q)),
        ),
    };
  }

  #peek(): ExprToken {
    return this.#tokens[this.#at];
  }

  #next(): ExprToken {
    const t = this.#tokens[this.#at];
    if (t.kind !== "end") this.#at++;
    return t;
  }

  #take(op: string): boolean {
    if (this.#peek().kind !== "op" || this.#peek().text !== op) return false;
    this.#at++;
    return true;
  }

  #expect(op: string): void {
    if (!this.#take(op)) {
      const t = this.#peek();
      throw new ExprError(`expected '${op}' at column ${t.column}, found ${describe(t)}`);
    }
  }
}

const NO_ARGS: Value[] = [];

function literal(ty: Ty, value: Value): Node {
  return { ty, constant: value, run: () => value };
}

function need(n: Node, ty: Ty, what: string, column: number): void {
  if (n.ty !== ty) throw new ExprError(`${what} at column ${column} wants a ${ty}, got a ${n.ty}`);
}

function binary(op: string, l: Node, r: Node, column: number): Node {
  const lr = l.run;
  const rr = r.run;
  const both = (ty: Ty) => {
    need(l, ty, `'${op}'`, column);
    need(r, ty, `'${op}'`, column);
  };
  switch (op) {
    case "or":
    case "||":
      both("bool");
      return { ty: "bool", run: (q) => lr(q) === true || rr(q) === true };
    case "and":
    case "&&":
      both("bool");
      return { ty: "bool", run: (q) => lr(q) === true && rr(q) === true };
    case "==":
    case "!=": {
      if (l.ty !== r.ty && l.ty !== "nil" && r.ty !== "nil") {
        throw new ExprError(`'${op}' at column ${column} compares a ${l.ty} with a ${r.ty}`);
      }
      if (l.ty === "list") throw new ExprError(`'${op}' at column ${column} cannot compare lists`);
      const eq = op === "==";
      return { ty: "bool", run: (q) => (lr(q) === rr(q)) === eq };
    }
    case "<":
    case "<=":
    case ">":
    case ">=": {
      if (l.ty !== r.ty || (l.ty !== "int" && l.ty !== "string")) {
        throw new ExprError(
          `'${op}' at column ${column} orders two ints or two strings, got a ${l.ty} and a ${r.ty}`,
        );
      }
      const cmp = ORDER[op];
      return { ty: "bool", run: (q) => cmp(lr(q) as number, rr(q) as number) };
    }
    case "in":
    case "not in": {
      need(r, "list", `'${op}'`, column);
      const want = op === "in";
      return { ty: "bool", run: (q) => (rr(q) as Value[]).includes(lr(q)) === want };
    }
    case "matches": {
      both("string");
      const re = r.constant !== undefined ? regexp(r.constant as string, column) : undefined;
      return { ty: "bool", run: (q) => (re ?? atQueryTime(rr(q) as string)).test(lr(q) as string) };
    }
    case "contains":
      both("string");
      return { ty: "bool", run: (q) => (lr(q) as string).includes(rr(q) as string) };
    case "startsWith":
      both("string");
      return { ty: "bool", run: (q) => (lr(q) as string).startsWith(rr(q) as string) };
    case "endsWith":
      both("string");
      return { ty: "bool", run: (q) => (lr(q) as string).endsWith(rr(q) as string) };
    case "+":
      if (l.ty === "string") {
        both("string");
        return { ty: "string", run: (q) => (lr(q) as string) + (rr(q) as string) };
      }
      both("int");
      return { ty: "int", run: (q) => (lr(q) as number) + (rr(q) as number) };
    default: {
      both("int");
      const f = ARITHMETIC[op];
      return { ty: "int", run: (q) => f(lr(q) as number, rr(q) as number) };
    }
  }
}

const ORDER: Record<string, (a: number | string, b: number | string) => boolean> = {
  "<": (a, b) => a < b,
  "<=": (a, b) => a <= b,
  ">": (a, b) => a > b,
  ">=": (a, b) => a >= b,
};

const ARITHMETIC: Record<string, (a: number, b: number) => number> = {
  "-": (a, b) => a - b,
  "*": (a, b) => a * b,
  "/": (a, b) => {
    if (b === 0) throw new EvalError("division by zero");
    return a / b;
  },
  "%": (a, b) => {
    if (b === 0) throw new EvalError("division by zero");
    return a % b;
  },
};

/** A literal pattern fails at set-up; one built at query time (atQueryTime) fails the query. */
function regexp(pattern: string, column: number): RegExp {
  try {
    return goRegExp(pattern);
  } catch (err) {
    throw new ExprError(`'matches' at column ${column}: ${(err as Error).message}`);
  }
}

function atQueryTime(pattern: string): RegExp {
  try {
    return goRegExp(pattern);
  } catch (err) {
    throw new EvalError((err as Error).message);
  }
}

function describe(t: ExprToken): string {
  return t.kind === "end" ? "the end" : `'${t.text}'`;
}

function unexpected(t: ExprToken): ExprError {
  return new ExprError(`unexpected ${describe(t)} at column ${t.column}`);
}

function unsupported(t: ExprToken): ExprError {
  return new ExprError(`'${t.text}' at column ${t.column} is expr-lang syntax clusterdns does not support`);
}
