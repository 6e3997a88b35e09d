// `migrate coredns`: an operator's Corefile, line by line. Whether a line runs comes from setting the
// Corefile up as -validate does (server/dry-run.ts): a line that fails is `missing`, with the one line
// -validate prints for it. How a line that runs differs from CoreDNS comes from the compatibility data
// (src/compat/coredns.ts, the source of docs/compatibility.md). An import that matches no file is
// `lost`: whatever the distribution mounts there (coredns-custom) is not in what was checked.

import { pino } from "pino";
import type { Directive, ServerBlock } from "../corefile/types.ts";
import { ConfigErrors, type ConfigWarning } from "../corefile/errors.ts";
import type { Layout } from "../corefile/layout.ts";
import { parseBlocks } from "../corefile/parser.ts";
import { dryRun, type Mistake } from "../server/dry-run.ts";
import { plugins } from "../plugins/index.ts";
import { MISSING_PLUGINS, partsFor, pluginCompat, type PluginCompat } from "../compat/coredns.ts";

export type LineVerdict = "same" | "differs" | "missing" | "lost";

export interface ReportLine {
  file: string;
  line: number;
  /** Nesting: 0 for a block's keys, 1 for its directives, 2 and more for their options. */
  depth: number;
  text: string;
  verdict: LineVerdict;
  /** Why it is missing or lost, or how it differs: one sentence. */
  note?: string;
  /** The mistake that makes it missing, as -validate prints it; none for the lines of a block whose
   * directive is missing (they go with it). */
  error?: string;
}

/** The Corefile of `source`, checked: its report and the ConfigMap keys it reads nothing of, or the mistakes that keep it from being read at all
 * (a syntax error, every template placeholder), as -validate prints them. */
export async function checkCoreDns(
  source: Layout,
  o: { defaultPort?: number } = {},
): Promise<{ lines: ReportLine[]; unread: ConfigWarning[] } | { errors: string[] }> {
  const warnings: ConfigWarning[] = [];
  let blocks: ServerBlock[];
  try {
    blocks = parseBlocks(source.text, source.file, { ...source.parse, warn: (w) => warnings.push(w) });
  } catch (err) {
    if (err instanceof ConfigErrors) return { errors: err.all.map((e) => e.message) };
    if ((err as { code?: string }).code === "CDNS_ERR_CONFIG") return { errors: [(err as Error).message] };
    throw err;
  }
  const mistakes = await dryRun(blocks, {
    plugins,
    notSupported: MISSING_PLUGINS,
    defaultPort: o.defaultPort ?? 53,
    root: source.root,
    log: pino({ level: "silent" }),
  });
  return { lines: reportCorefile(blocks, { mistakes, warnings }), unread: source.unread(blocks) };
}

/** The report of a Corefile's blocks, given what setting them up found and what loading them warned. */
export function reportCorefile(
  blocks: ServerBlock[],
  found: { mistakes: Mistake[]; warnings: ConfigWarning[] },
): ReportLine[] {
  const out: ReportLine[] = [];
  const unclaimed = new Set(found.mistakes);
  const failed = (file: string, line: number) => {
    const m = found.mistakes.find((x) => x.file === file && x.line === line);
    if (m) unclaimed.delete(m);
    return m;
  };
  for (const b of blocks) {
    const m = failed(b.file, b.line);
    out.push({
      file: b.file,
      line: b.line,
      depth: 0,
      text: `${b.keys.map((k) => k.text).join(" ")} {`,
      verdict: m ? "missing" : "same",
      ...(m ? { note: bare(m.message), error: m.message } : {}),
    });
    for (const d of b.directives) directive(d, out, failed);
  }
  // A mistake of no single line (blocks that clash when set up together): its own line.
  for (const m of unclaimed)
    out.push({
      file: m.file ?? "",
      line: m.line ?? 0,
      depth: 0,
      text: "(the Corefile)",
      verdict: "missing",
      note: bare(m.message),
      error: m.message,
    });
  for (const w of found.warnings) {
    const lost: ReportLine = {
      file: w.file,
      line: w.line,
      depth: 1,
      text: `import ${w.message.replace(/^.*: /, "")}`,
      verdict: "lost",
      note: `${w.message}: what is mounted there (coredns-custom on AKS and k3s) would be lost unchecked; give that ConfigMap as another FILE`,
    };
    const at = out.findIndex((l) => l.file === w.file && l.line > w.line);
    out.splice(at < 0 ? out.length : at, 0, lost);
  }
  return out;
}

/** A -validate line without its `file:line - Error during parsing: ` lead. */
const bare = (message: string) => message.replace(/^.*? - (Error during parsing: )?/, "");

const words = (d: Directive) => [d.name, ...d.args.map((t) => (t.quoted ? JSON.stringify(t.text) : t.text))];
const lineText = (x: Directive) => `${words(x).join(" ")}${x.block ? " {" : ""}`;

function directive(
  d: Directive,
  out: ReportLine[],
  failed: (file: string, line: number) => Mistake | undefined,
): void {
  const row = pluginCompat(d.name);
  const m = failed(d.file, d.line);
  out.push(judged(row, d, { depth: 1, inBlock: false, mistake: m }));
  const walk = (lines: Directive[] | undefined, depth: number) => {
    for (const o of lines ?? []) {
      const own = failed(o.file, o.line);
      // Below a directive that does not run, its options go with it.
      if (m && !own) out.push({ file: o.file, line: o.line, depth, text: lineText(o), verdict: "missing" });
      else out.push(judged(row, o, { depth, inBlock: true, mistake: own }));
      walk(o.block, depth + 1);
    }
  };
  walk(d.block, 2);
}

/** A line that runs gets the plugin's verdict on its directive line, else the parts it uses. */
function judged(
  row: PluginCompat | undefined,
  d: Directive,
  o: { depth: number; inBlock: boolean; mistake?: Mistake },
): ReportLine {
  const base = { file: d.file, line: d.line, depth: o.depth, text: lineText(d) };
  if (o.mistake)
    return { ...base, verdict: "missing", note: bare(o.mistake.message), error: o.mistake.message };
  const notes = !o.inBlock && row && row.verdict === "differs" ? [row.note] : [];
  for (const part of row ? partsFor(row, words(d), o.inBlock) : [])
    if (part.verdict === "differs") notes.push(`${part.what}: ${part.note}`);
  return notes.length > 0
    ? { ...base, verdict: "differs", note: notes.join("; ") }
    : { ...base, verdict: "same" };
}

/** The report as printed: `FILE:LINE  VERDICT  TEXT`, the note below a line that is not the same, then
 * a summary; and the exit status: 1 when a line does not run or would be lost, else 0 (with `strict`,
 * 1 on any difference too). */
export function printReport(
  lines: ReportLine[],
  o: { strict?: boolean } = {},
): { text: string; status: number } {
  const where = (l: ReportLine) => `${l.file}:${l.line}`;
  const width = Math.max(...lines.map((l) => where(l).length)) + 2;
  const out: string[] = [];
  for (const l of lines) {
    const lead = `${where(l).padEnd(width)}${l.verdict.padEnd(9)}`;
    out.push(`${lead}${"    ".repeat(l.depth)}${l.text}`);
    if (l.note) out.push(`${" ".repeat(lead.length + 4 * l.depth + 2)}${l.note}`);
  }
  const count = (v: LineVerdict) => lines.filter((l) => l.verdict === v).length;
  const [same, differs, missing, lost] = [count("same"), count("differs"), count("missing"), count("lost")];
  const n = (k: number) => (k === 1 ? "1 line" : `${k} lines`);
  const all = lines.length - lost;
  out.push("");
  if (missing > 0)
    out.push(
      `clusterdns would not start on this Corefile: of its ${n(all)}, ${missing} not served (missing), ${differs} served differently. Change the missing lines; docs/compatibility.md says what to use instead.`,
    );
  else if (differs > 0)
    out.push(
      `clusterdns runs this Corefile: of its ${n(all)}, ${same} served the same, ${differs} differently (the notes above say how).${o.strict ? " --strict: a difference fails." : ""}`,
    );
  else out.push(`clusterdns serves all ${n(all)} of this Corefile as CoreDNS does.`);
  if (lost > 0)
    out.push(
      `But ${lost === 1 ? "an import matches" : `${lost} imports match`} no file: what the distribution mounts there would be lost. Give its ConfigMap (coredns-custom) as another FILE.`,
    );
  const status = missing + lost > 0 || (o.strict && differs > 0) ? 1 : 0;
  return { text: `${out.join("\n")}\n`, status };
}
