// Splits Corefile text into words, as Caddy's Caddyfile lexer (which CoreDNS uses) does: words are
// separated by white space, `#` starts a comment outside quotes, "double quotes" and `backquotes`
// (raw) make one word that may span lines. Inside double quotes only \" is an escape: CoreDNS keeps
// every other backslash, so "a\\.b" is the regular expression a\\.b there and here. Braces are
// structure only when they stand alone and unquoted, so `{$NAME}` stays one word.

import { ConfigError } from "./errors.ts";
import type { Token } from "./types.ts";

export interface Lexeme extends Token {
  /** First word of its line: where a directive, a server block's keys or an import may start. */
  lineStart: boolean;
}

const WORD = /[^\s#]+/y;

export function tokenize(text: string, file: string): Lexeme[] {
  const out: Lexeme[] = [];
  let line = 1;
  let lineStart = true;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // byte order mark
  const push = (word: string, at: number, quoted: boolean) => {
    out.push({ text: word, file, line: at, quoted, lineStart });
    lineStart = false;
  };

  while (i < text.length) {
    const c = text[i];
    if (c === "\n") {
      line++;
      lineStart = true;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === '"' || c === "`") {
      const start = line;
      let word = "";
      for (i++; ;) {
        if (i >= text.length) throw new ConfigError(file, start, `unterminated ${c} string`);
        const ch = text[i++];
        if (ch === c) break;
        if (ch === "\n") line++;
        if (ch === "\r" && text[i] === "\n") continue;
        if (ch === "\\" && c === '"' && i < text.length) {
          // The escaped character is taken with its backslash: it cannot close the string.
          const escaped = text[i++];
          if (escaped === "\n") line++;
          word += escaped === '"' ? escaped : ch + escaped;
        } else word += ch;
      }
      push(word, start, true);
    } else {
      WORD.lastIndex = i;
      const word = WORD.exec(text)![0];
      i += word.length;
      push(word, line, false);
    }
  }
  return out;
}
