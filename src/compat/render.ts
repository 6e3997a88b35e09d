// docs/compatibility.md's tables, rendered from compat/coredns.ts. The file holds them between two
// markers; `node src/compat/render.ts` rewrites them there after a change to the data, and a test
// fails while the two differ.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COREDNS_PLUGINS, REMOVED_PLUGINS, type Verdict } from "./coredns.ts";

export const BEGIN = "<!-- compatibility tables: generated from src/compat/coredns.ts -->";
export const END = "<!-- end of the generated tables -->";

const WORDS: Record<Verdict, string> = {
  same: "supported",
  differs: "supported with differences",
  missing: "not supported",
};

const status = (verdict: Verdict, note: string) => (note ? `${WORDS[verdict]}: ${note}` : WORDS[verdict]);

/** The tables, in markdown: one row per plugin, then one per option that has a verdict of its own. */
export function renderTables(): string {
  const lines = ["| plugin | options | status |", "|---|---|---|"];
  for (const p of COREDNS_PLUGINS)
    lines.push(`| \`${p.plugin}\` | ${p.options} | ${status(p.verdict, p.note)} |`);
  lines.push("", "Options of supported plugins that are served differently or not at all:", "");
  lines.push("| plugin | option | status |", "|---|---|---|");
  for (const p of COREDNS_PLUGINS)
    for (const part of p.parts ?? [])
      lines.push(`| \`${p.plugin}\` | ${part.what} | ${status(part.verdict, part.note)} |`);
  const once = COREDNS_PLUGINS.filter((p) => p.twice === "refused").map((p) => `\`${p.plugin}\``);
  lines.push(
    "",
    `Given twice in one server block, these are refused at the second line, as CoreDNS refuses them: ${once.join(", ")}. A \`forward\` whose FROM an earlier \`forward\` of the block already takes (a second \`forward .\`), with no \`except\` or \`next\` there to let queries on, is refused too: it would never run.`,
  );
  lines.push("", "Plugins CoreDNS removed, refused at their line with what to use instead:", "");
  lines.push("| plugin | removed in CoreDNS | instead |", "|---|---|---|");
  for (const r of REMOVED_PLUGINS) lines.push(`| \`${r.plugin}\` | ${r.removedIn} | ${r.instead} |`);
  return lines.join("\n");
}

/** The text between the markers of a document. */
export function generatedPart(doc: string): string | undefined {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) return undefined;
  return doc.slice(start + BEGIN.length, end).trim();
}

if (import.meta.main) {
  const file = join(import.meta.dirname, "..", "..", "docs", "compatibility.md");
  const doc = readFileSync(file, "utf8");
  if (generatedPart(doc) === undefined) throw new Error(`${file}: the markers are missing`);
  const start = doc.indexOf(BEGIN) + BEGIN.length;
  writeFileSync(file, `${doc.slice(0, start)}\n\n${renderTables()}\n\n${doc.slice(doc.indexOf(END))}`);
}
