import { test } from "node:test";
import assert from "node:assert/strict";
import { tokenize } from "./lexer.ts";
import { ConfigError } from "./errors.ts";

const words = (text: string) => tokenize(text, "Corefile").map((t) => t.text);

test("words split on white space; braces standing alone are words of their own", () => {
  assert.deepEqual(words(".:53 {\n\terrors\n  cache 30 {\n}\n}"), [
    ".:53",
    "{",
    "errors",
    "cache",
    "30",
    "{",
    "}",
    "}",
  ]);
  // Braces inside a word do not split it: env references and templates stay whole.
  assert.deepEqual(words("a{$X} {%Y%} b{"), ["a{$X}", "{%Y%}", "b{"]);
});

test("line numbers and line starts", () => {
  const toks = tokenize("a b\n\n  c {\r\n d\n}", "f");
  assert.deepEqual(
    toks.map((t) => [t.text, t.line, t.lineStart]),
    [
      ["a", 1, true],
      ["b", 1, false],
      ["c", 3, true],
      ["{", 3, false],
      ["d", 4, true],
      ["}", 5, true],
    ],
  );
  assert.ok(toks.every((t) => t.file === "f"));
});

test("comments run from # to the end of the line, also right after a word", () => {
  assert.deepEqual(words("# head\nerrors # trailing\nlog#x y\nready"), ["errors", "log", "ready"]);
  assert.deepEqual(words('a "# not a comment"'), ["a", "# not a comment"]);
});

test("double-quoted strings: escapes, braces, spaces and line breaks", () => {
  const toks = tokenize('x "{" "a \\"b\\" c\\\\d" "\\d+" ""\n"two\nlines" after\nnext', "f");
  assert.deepEqual(
    toks.map((t) => [t.text, t.quoted, t.line, t.lineStart]),
    [
      ["x", false, 1, true],
      ["{", true, 1, false],
      ['a "b" c\\\\d', true, 1, false], // only \" is an escape: CoreDNS keeps \\ as written
      ["\\d+", true, 1, false], // other backslashes are kept, for regular expressions
      ["", true, 1, false],
      ["two\nlines", true, 2, true],
      ["after", false, 3, false], // same line as the closing quote: still an argument
      ["next", false, 4, true],
    ],
  );
});

test("an escaped backslash before the closing quote does not escape the quote", () => {
  assert.deepEqual(words('a "b\\\\" c "d\\\\\\"e"'), ["a", "b\\\\", "c", 'd\\\\"e']);
});

test("backquoted strings are raw and may span lines", () => {
  const toks = tokenize('answer `{{ .Name }} 60 IN A "1.2.3.4" \\n`\nx', "f");
  assert.deepEqual(
    toks.map((t) => [t.text, t.quoted, t.line]),
    [
      ["answer", false, 1],
      ['{{ .Name }} 60 IN A "1.2.3.4" \\n', true, 1],
      ["x", false, 2],
    ],
  );
});

test("an unterminated string is an error at the line it starts on", () => {
  assert.throws(
    () => tokenize('a\nb "open\n\nnever closed', "Corefile"),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.line === 2 &&
      /^Corefile:2 - Error during parsing: unterminated/.test(e.message),
  );
  assert.throws(() => tokenize("a `raw", "f"), ConfigError);
});

test("a byte order mark is skipped; empty input has no words", () => {
  assert.deepEqual(words("\ufeff. {\n}"), [".", "{", "}"]);
  assert.deepEqual(words(""), []);
  assert.deepEqual(words("  # only a comment\n\n"), []);
});
