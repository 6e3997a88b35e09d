// A Corefile set up as a start-up would, without starting: no port opened, no API asked. The one check
// behind -validate and `migrate coredns`, so the two never disagree on whether a line runs. It reports
// every mistake: a line that fails is left out and the rest set up again, until what is left sets up.

import type { Logger } from "pino";
import { checkKeys, directiveErrors } from "../corefile/check.ts";
import { ConfigError } from "../corefile/errors.ts";
import type { Directive, ServerBlock } from "../corefile/types.ts";
import type { Registry } from "../setup/registry.ts";
import { Instance } from "./instance.ts";

export interface DryRunOptions {
  plugins: Registry;
  notSupported: ReadonlySet<string>;
  /** -dns.port, for keys that name none. */
  defaultPort: number;
  /** Folder relative paths resolve against. */
  root: string;
  /** Where the plugins' warnings go. */
  log: Logger;
}

/** A mistake: where, when it is a ConfigError, and its one line. */
export interface Mistake {
  file?: string;
  line?: number;
  message: string;
}

/** Bounds the set-ups of one block: each leaves a failing line out. */
const MAX_TRIES = 100;

/** The mistakes of a Corefile's blocks, one each, in the order of their lines (empty: it would start). */
export async function dryRun(blocks: ServerBlock[], o: DryRunOptions): Promise<Mistake[]> {
  const found: Mistake[] = [];
  // Each block alone first, so one mistake does not hide the others'.
  for (const b of blocks) {
    try {
      checkKeys([b], o.defaultPort);
    } catch (err) {
      found.push(mistake(err));
      continue;
    }
    // Unknown directives and refused second lines are reported; the block's other lines are set up.
    const refused = directiveErrors([b], o.plugins, o.notSupported);
    found.push(...refused.map(mistake));
    let directives = b.directives.filter((d) => !refused.some((e) => at(d, e)));
    // Directives whose options were left out: an error at their own line then ("no keys", "'to' is
    // required") is what leaving the option out did, not a mistake of the Corefile's.
    const trimmed: Directive[] = [];
    for (let i = 0; i < MAX_TRIES; i++) {
      try {
        await setUp([{ ...b, directives }], o);
        break;
      } catch (err) {
        if (!(err instanceof ConfigError && trimmed.some((d) => at(d, err)))) found.push(mistake(err));
        if (err instanceof ConfigError) trimmed.push(...holders(directives, err));
        const left = err instanceof ConfigError ? without(directives, err) : directives;
        if (left === directives) break; // not a line of the block: nothing to leave out
        directives = left;
      }
    }
  }
  // Then together, when each is fine alone: a zone twice on one port, settings blocks share (health,
  // ready, prometheus).
  if (found.length === 0 && blocks.length > 1) {
    try {
      checkKeys(blocks, o.defaultPort);
      await setUp(blocks, o);
    } catch (err) {
      found.push(mistake(err));
    }
  }
  const unique = found.filter((m, i) => found.findIndex((n) => n.message === m.message) === i);
  return unique.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
}

function setUp(blocks: ServerBlock[], o: DryRunOptions): Promise<Instance> {
  return Instance.create({ ...o, blocks, checkOnly: true });
}

function mistake(err: unknown): Mistake {
  if (err instanceof ConfigError) return { file: err.file, line: err.line, message: err.message };
  return { message: err instanceof Error ? err.message : String(err) };
}

const at = (d: Directive, e: { file: string; line: number }) => d.file === e.file && d.line === e.line;

/** The directives whose blocks hold the line at the error's file:line, outermost first. */
function holders(lines: Directive[], e: ConfigError): Directive[] {
  for (const d of lines) {
    if (!d.block) continue;
    if (d.block.some((x) => at(x, e))) return [d];
    const inner = holders(d.block, e);
    if (inner.length > 0) return [d, ...inner];
  }
  return [];
}

/** The lines without the one at the error's file:line (an option before its directive), or the same
 * array when no line is there. */
function without(lines: Directive[], e: ConfigError): Directive[] {
  for (const [i, d] of lines.entries()) {
    const inner = d.block ? without(d.block, e) : undefined;
    if (inner && inner !== d.block) return lines.map((x, j) => (j === i ? { ...d, block: inner } : x));
  }
  const i = lines.findIndex((d) => at(d, e));
  return i < 0 ? lines : lines.filter((_, j) => j !== i);
}
