// CoreDNS's rewrite and template take Go (RE2) regular expressions. The common ones are also valid
// JavaScript once two spellings are translated: named groups `(?P<name>...)` and a leading `(?i)`.
// Anything else JavaScript rejects is reported at setup.

/** Compiles a Go-syntax pattern; throws a SyntaxError naming what is wrong. */
export function goRegExp(pattern: string): RegExp {
  let src = pattern.replaceAll("(?P<", "(?<");
  let flags = "";
  if (src.startsWith("(?i)")) {
    src = src.slice(4);
    flags = "i";
  }
  return new RegExp(src, flags);
}

/** How many capturing groups a pattern has. */
export function groupCount(re: RegExp): number {
  return new RegExp(`${re.source}|`, re.flags).exec("")!.length - 1;
}
