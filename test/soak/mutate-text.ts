// Mutations of a line-oriented text (a Corefile, a zone file, a YAML file) for the control-plane part:
// one to three of cutting, repeating or swapping lines, changing a word into another word of the text,
// a number at the edge of a range, a brace, a quote or a few random octets, and cutting the text short.

const ODD_WORDS = [
  "{",
  "}",
  '"',
  "0",
  "-1",
  "65536",
  "4294967296",
  "1e309",
  "0.5",
  "0x10",
  "999999999999999999999",
  "''",
  "::",
  "*",
  ".",
  "..",
  "$ORIGIN",
  "$TTL",
  "import",
  "{$HOME}",
  "(",
  ")",
  ";",
  "#",
  "\\",
  "---",
  "[",
  "]",
  "null",
  "~",
];

export function mutateLines(r: () => number, text: string): string {
  const int = (n: number) => Math.floor(r() * n);
  let lines = text.split("\n");
  for (let k = 0, n = 1 + int(3); k < n; k++) {
    const at = int(lines.length);
    switch (int(7)) {
      case 0:
        lines.splice(at, 1);
        break;
      case 1:
        lines.splice(at, 0, lines[at] ?? "");
        break;
      case 2: {
        const other = int(lines.length);
        [lines[at], lines[other]] = [lines[other], lines[at]];
        break;
      }
      case 3:
      case 4: {
        const words = (lines[at] ?? "").split(/(\s+)/);
        const w = int(words.length);
        const all = text.split(/\s+/).filter(Boolean);
        words[w] = r() < 0.5 ? ODD_WORDS[int(ODD_WORDS.length)] : (all[int(all.length)] ?? "");
        lines[at] = words.join("");
        break;
      }
      case 5:
        lines[at] =
          (lines[at] ?? "") + String.fromCharCode(...Array.from({ length: 1 + int(4) }, () => int(256)));
        break;
      default:
        lines = lines.slice(0, at + 1);
        lines[at] = (lines[at] ?? "").slice(0, int((lines[at] ?? "").length + 1));
    }
  }
  return lines.join("\n");
}
