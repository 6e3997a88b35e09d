// `migrate coredns`: an operator's Corefile, line by line, against the compatibility data
// (src/compat/coredns.ts, the source of docs/compatibility.md): each server block key, directive and
// option line is served the same, differently, or not at all.

import { parseKey } from "../corefile/keys.ts";
import type { Directive, ServerBlock } from "../corefile/types.ts";
import { partsFor, pluginCompat, type PluginCompat, type Verdict } from "../compat/coredns.ts";

export interface ReportLine {
  file: string;
  line: number;
  /** Nesting: 0 for a block's keys, 1 for its directives, 2 and more for their options. */
  depth: number;
  text: string;
  verdict: Verdict;
  /** Why it is missing, or how it differs. */
  note?: string;
}

const RANK: Record<Verdict, number> = { same: 0, differs: 1, missing: 2 };
const worst = (a: Verdict, b: Verdict): Verdict => (RANK[b] > RANK[a] ? b : a);

export function reportCorefile(blocks: ServerBlock[]): ReportLine[] {
  const out: ReportLine[] = [];
  for (const b of blocks) {
    const bad = b.keys.map(keyProblem).filter((p) => p !== undefined);
    out.push({
      file: b.file,
      line: b.line,
      depth: 0,
      text: `${b.keys.map((k) => k.text).join(" ")} {`,
      verdict: bad.length > 0 ? "missing" : "same",
      note: bad.length > 0 ? bad.join("; ") : undefined,
    });
    for (const d of b.directives) directive(d, out);
  }
  return out;
}

/** Why clusterdns cannot serve a server block key (a transport it has no listener for), if it cannot. */
function keyProblem(key: ServerBlock["keys"][number]): string | undefined {
  try {
    parseKey(key);
    return undefined;
  } catch (err) {
    return (err as Error).message.replace(/^.* - Error during parsing: /, "");
  }
}

const words = (d: Directive) => [d.name, ...d.args.map((t) => (t.quoted ? JSON.stringify(t.text) : t.text))];

function directive(d: Directive, out: ReportLine[]): void {
  const row = pluginCompat(d.name);
  const text = (x: Directive) => `${words(x).join(" ")}${x.block ? " {" : ""}`;
  if (!row) {
    out.push({
      file: d.file,
      line: d.line,
      depth: 1,
      text: text(d),
      verdict: "missing",
      note: "neither a plugin of CoreDNS (plugin.cfg) nor of clusterdns: an external plugin, or a typo",
    });
    return;
  }
  out.push(judged(row, d, 1, text(d), false));
  const walk = (lines: Directive[] | undefined, depth: number) => {
    for (const o of lines ?? []) {
      // Below a plugin that is missing, its options go with it.
      if (row.verdict === "missing")
        out.push({ file: o.file, line: o.line, depth, text: text(o), verdict: "missing" });
      else out.push(judged(row, o, depth, text(o), true));
      walk(o.block, depth + 1);
    }
  };
  walk(d.block, 2);
}

/** A line of a plugin: the plugin's own verdict on its directive line, else the parts it uses. */
function judged(row: PluginCompat, d: Directive, depth: number, text: string, inBlock: boolean): ReportLine {
  let verdict: Verdict = inBlock ? "same" : row.verdict;
  const notes = !inBlock && row.verdict !== "same" ? [row.note] : [];
  for (const part of partsFor(row, words(d), inBlock)) {
    verdict = worst(verdict, part.verdict);
    if (part.verdict !== "same") notes.push(`${part.what}: ${part.note}`);
  }
  return {
    file: d.file,
    line: d.line,
    depth,
    text,
    verdict,
    note: notes.length > 0 ? notes.join("; ") : undefined,
  };
}

/** The report as printed: `FILE:LINE  VERDICT  TEXT`, the note below a line that is not the same, then
 * a summary; and the exit status (0: all the same). */
export function printReport(lines: ReportLine[]): { text: string; status: number } {
  const where = (l: ReportLine) => `${l.file}:${l.line}`;
  const width = Math.max(...lines.map((l) => where(l).length)) + 2;
  const out: string[] = [];
  for (const l of lines) {
    const lead = `${where(l).padEnd(width)}${l.verdict.padEnd(9)}`;
    out.push(`${lead}${"    ".repeat(l.depth)}${l.text}`);
    if (l.note) out.push(`${" ".repeat(lead.length + 4 * l.depth + 2)}${l.note}`);
  }
  const count = (v: Verdict) => lines.filter((l) => l.verdict === v).length;
  const [same, differs, missing] = [count("same"), count("differs"), count("missing")];
  const n = (k: number) => (k === 1 ? "1 line" : `${k} lines`);
  out.push("");
  if (missing > 0)
    out.push(
      `clusterdns would not start on this Corefile: of its ${n(lines.length)}, ${missing} not served (missing), ${differs} served differently. Change the missing lines; docs/compatibility.md says what to use instead.`,
    );
  else if (differs > 0)
    out.push(
      `clusterdns runs this Corefile: of its ${n(lines.length)}, ${same} served the same, ${differs} differently (above; docs/compatibility.md).`,
    );
  else out.push(`clusterdns serves all ${n(lines.length)} of this Corefile as CoreDNS does.`);
  return { text: `${out.join("\n")}\n`, status: missing + differs > 0 ? 1 : 0 };
}
