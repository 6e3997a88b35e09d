// Corefile -> server blocks. The grammar is Caddy's, as CoreDNS reads it:
//
//   (snippet) { ...lines... }          defined at the top level, used with `import snippet`
//   key [key]... {                     keys separated by spaces or commas; a trailing comma continues
//       directive args... [{ lines }]  the line; blocks nest; a line ends at a newline
//   }
//
// A file with one server block may leave out its braces. `import NAME` splices a snippet, or files
// matched by a pattern relative to the importing file, in place of its line, wherever a line may start.
// Imported words keep their own file:line. `{$NAME}` and `{%NAME%}` are replaced from the environment.
// A pattern that matches no file is a warning, as in CoreDNS; a template placeholder is an error.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { checkKeys } from "./check.ts";
import { ConfigError, ConfigErrors, NoServerBlock, type ConfigWarning } from "./errors.ts";
import { tokenize, type Lexeme } from "./lexer.ts";
import { placeholderErrors } from "./placeholders.ts";
import type { Directive, ServerBlock, Token } from "./types.ts";

type Env = Record<string, string | undefined>;

export interface ParseOptions {
  /** Where `{$NAME}` comes from (process.env). */
  env?: Env;
  /** Told what runs but may surprise (an import that matches nothing). */
  warn?: (w: ConfigWarning) => void;
  /** Folder the Corefile stands for: its relative imports start there (the file's own folder). */
  dir?: string;
  /** A folder laid out as another, mounted one: a path under `at` (`/etc/coredns`, in an import or an
   * argument) is read from `dir` instead. How -validate reads a ConfigMap's keys where the pod has them. */
  mount?: { at: string; dir: string };
  /** Told each file an import read, with its text: what a reload compares beside the Corefile. */
  imported?: (file: string, text: string) => void;
}

/** A word in the parser: `via` lists the files and snippets it was imported through, for cycles;
 * `dir`, where its relative imports start when that is not its file's folder. */
interface Tok extends Lexeme {
  via: readonly string[];
  dir?: string;
}

/** Parses a Corefile; also checks its keys (see checkKeys). Whether its directives are known is for
 * the server that sets them up (Instance.create, with the plugin registry). */
export function parseCorefile(text: string, file: string, o: ParseOptions = {}): ServerBlock[] {
  const blocks = parseBlocks(text, file, o);
  checkKeys(blocks);
  return blocks;
}

/** The blocks of a Corefile, keys unchecked: for tools that report on each key themselves. At least
 * one: a Corefile without any is refused (NoServerBlock). */
export function parseBlocks(text: string, file: string, o: ParseOptions = {}): ServerBlock[] {
  const via = [resolve(file)];
  const blocks = new Parser(
    checked(tokenize(text, file)).map((t) => ({ ...t, via, dir: o.dir })),
    o,
  ).parse();
  if (blocks.length === 0) throw new NoServerBlock(file);
  return blocks;
}

/** The words of a file, refused whole when it is an unrendered template. */
function checked(words: Lexeme[]): Lexeme[] {
  const errors = placeholderErrors(words);
  if (errors.length > 0) throw new ConfigErrors(errors);
  return words;
}

/** Reads and parses a Corefile; a file that cannot be read throws the fs error. */
export function loadCorefile(path: string, o: ParseOptions = {}): ServerBlock[] {
  return parseCorefile(readFileSync(path, "utf8"), path, o);
}

const isOpen = (t: Tok) => !t.quoted && t.text === "{";
const isClose = (t: Tok) => !t.quoted && t.text === "}";
const isImport = (t: Tok) => !t.quoted && t.text === "import";
const err = (t: Token, message: string) => new ConfigError(t.file, t.line, message);
const ENV_REF = /\{\$([^{}]+)\}|\{%([^{}%]+)%\}/g;

class Parser {
  readonly #toks: Tok[];
  readonly #env: Env;
  readonly #o: ParseOptions;
  readonly #snippets = new Map<string, Tok[]>();
  #i = 0;

  constructor(toks: Tok[], o: ParseOptions) {
    this.#toks = toks;
    this.#env = o.env ?? process.env;
    this.#o = o;
  }

  parse(): ServerBlock[] {
    const blocks: ServerBlock[] = [];
    for (let t = this.#peek(); t; t = this.#peek()) {
      if (isImport(t)) this.#import();
      else if (!t.quoted && /^\(.+\)$/.test(t.text)) this.#snippet();
      else blocks.push(this.#serverBlock(blocks.length === 0));
    }
    return blocks;
  }

  #peek(): Tok | undefined {
    return this.#toks[this.#i];
  }

  #next(): Tok {
    return this.#toks[this.#i++];
  }

  #serverBlock(first: boolean): ServerBlock {
    const start = this.#peek()!;
    const keys: Token[] = [];
    let more = false; // the last key ended with ',': another follows, maybe on the next line
    let last = start;
    for (let t = this.#peek(); t && !isOpen(t) && (t === start || more || !t.lineStart); t = this.#peek()) {
      if (isClose(t)) throw err(t, "unexpected '}' without a matching '{'");
      last = this.#next();
      const text = this.#expand(t.text);
      more = text.endsWith(",");
      for (const part of text.split(",")) if (part) keys.push({ ...this.#token(t), text: part });
    }
    const open = this.#peek();
    if (more) throw err(open ?? last, "expected another server block key after ','");
    if (keys.length === 0) throw err(start, "a server block needs at least one key (a zone) before '{'");
    let directives: Directive[];
    if (open && isOpen(open)) {
      this.#next();
      directives = this.#lines(open);
    } else if (first) {
      directives = this.#lines(undefined); // a lone server block without braces runs to the end
    } else {
      throw err(last, "expected '{' after the server block keys");
    }
    return { keys, directives, file: start.file, line: start.line };
  }

  /** Directive lines up to the `}` that matches `open`, or to the end of input when there is none. */
  #lines(open: Tok | undefined): Directive[] {
    const out: Directive[] = [];
    for (;;) {
      const t = this.#peek();
      if (!t) {
        if (open) throw err(open, "this '{' is never closed (end of input reached)");
        return out;
      }
      if (isClose(t)) {
        if (!open) throw err(t, "unexpected '}' without a matching '{'");
        this.#next();
        this.#endOfLine();
        return out;
      }
      if (isOpen(t)) throw err(t, "unexpected '{': a block opens on the line of its directive");
      if (isImport(t)) this.#import();
      else out.push(this.#directive());
    }
  }

  #directive(): Directive {
    const head = this.#next();
    const args: Token[] = [];
    let t = this.#peek();
    for (; t && !t.lineStart && !isOpen(t) && !isClose(t); t = this.#peek())
      args.push(this.#token(this.#next()));
    const d: Directive = { name: this.#expand(head.text), args, file: head.file, line: head.line };
    if (t && isOpen(t) && !t.lineStart) {
      this.#next();
      d.block = this.#lines(t);
    }
    return d;
  }

  /** After a `}` only another `}` may follow on the same line. */
  #endOfLine(): void {
    const t = this.#peek();
    if (t && !t.lineStart && !isClose(t)) throw err(t, `unexpected '${t.text}' after '}'`);
  }

  #snippet(): void {
    const t = this.#next();
    const name = t.text.slice(1, -1);
    const open = this.#peek();
    if (!open || !isOpen(open) || open.lineStart) throw err(t, `snippet ${t.text} needs a '{ ... }' body`);
    if (this.#snippets.has(name)) throw err(t, `snippet ${t.text} is defined twice`);
    this.#next();
    const from = this.#i;
    for (let depth = 1; depth > 0;) {
      const b = this.#peek();
      if (!b) throw err(open, "this '{' is never closed (end of input reached)");
      this.#next();
      if (isOpen(b)) depth++;
      else if (isClose(b)) depth--;
    }
    this.#snippets.set(name, this.#toks.slice(from, this.#i - 1));
    this.#endOfLine();
  }

  /** Replaces the `import X` line with the snippet or files it names. */
  #import(): void {
    const at = this.#i;
    const t = this.#next();
    const arg = this.#peek();
    if (!arg || arg.lineStart || isOpen(arg) || isClose(arg))
      throw err(t, "import needs a snippet name or a file pattern");
    this.#next();
    const extra = this.#peek();
    if (extra && !extra.lineStart && !isClose(extra)) throw err(extra, "import takes one argument");
    const what = this.#expand(arg.text);
    const snippet = this.#snippets.get(what);
    let content: Tok[];
    if (snippet) {
      const via = enter(t, `(${what})`);
      content = snippet.map((s) => ({ ...s, via }));
    } else {
      content = importFiles(t, this.#mounted(what), what, this.#o.warn).flatMap((file) =>
        readImport(t, file, what, this.#o.imported),
      );
    }
    if (content.length > 0) content[0] = { ...content[0], lineStart: true };
    this.#toks.splice(at, this.#i - at, ...content);
    this.#i = at;
  }

  #expand(text: string): string {
    return text.includes("{")
      ? text.replace(ENV_REF, (_, a?: string, b?: string) => this.#env[a ?? b!] ?? "")
      : text;
  }

  #token(t: Tok): Token {
    return { text: this.#mounted(this.#expand(t.text)), file: t.file, line: t.line, quoted: t.quoted };
  }

  #mounted(path: string): string {
    const m = this.#o.mount;
    return m && (path === m.at || path.startsWith(`${m.at}/`)) ? m.dir + path.slice(m.at.length) : path;
  }
}

/** The import chain for content imported at `t` from `source`; a source already on it is a cycle. */
function enter(t: Tok, source: string): readonly string[] {
  const via = [...t.via, source];
  if (t.via.includes(source)) throw err(t, `import cycle: ${via.join(" -> ")}`);
  return via;
}

/** The words of an imported file, which must close every brace it opens (so it cannot swallow its
 * importer's lines). */
function readImport(t: Tok, file: string, what: string, imported: ParseOptions["imported"]): Tok[] {
  const via = enter(t, resolve(file));
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === "ENOENT";
    throw err(
      t,
      missing ? `import: no snippet or file named '${what}'` : `import '${what}': ${(e as Error).message}`,
    );
  }
  imported?.(file, text);
  const toks = checked(tokenize(text, file)).map((l) => ({ ...l, via }));
  const open: Tok[] = [];
  for (const b of toks) {
    if (isOpen(b)) open.push(b);
    else if (isClose(b) && !open.pop()) throw err(b, "unexpected '}' without a matching '{'");
  }
  if (open.length > 0) throw err(open[open.length - 1], "this '{' is never closed (end of file reached)");
  return toks;
}

/** Files an import pattern names, relative to the importing file's folder. A plain name must exist
 * (reading it reports a missing one); a pattern with * or ? in its last element may match nothing. */
function importFiles(t: Tok, pattern: string, written: string, warn: ParseOptions["warn"]): string[] {
  const full = isAbsolute(pattern) ? pattern : join(t.dir ?? dirname(t.file), pattern);
  if (!/[*?]/.test(pattern)) return [full];
  if (/[*?]/.test(dirname(pattern)))
    throw err(t, `import '${pattern}': wildcards may appear only in the file name`);
  const glob = basename(full).replace(/[.+^${}()|[\]\\]/g, "\\$&");
  const re = new RegExp(`^${glob.replaceAll("*", ".*").replaceAll("?", ".")}$`);
  let names: string[] = [];
  try {
    names = readdirSync(dirname(full));
  } catch {
    // No folder: no files, as CoreDNS sees it.
  }
  // stat follows symlinks: a mounted ConfigMap's files are links into its ..data folder.
  const files = names
    .filter((n) => re.test(n))
    .sort()
    .map((n) => join(dirname(full), n))
    .filter((f) => statSync(f, { throwIfNoEntry: false })?.isFile());
  if (files.length === 0)
    warn?.({ file: t.file, line: t.line, message: `No files matching import glob pattern: ${written}` });
  return files;
}
