// `clusterdns -validate -conf FILE`: the checks of a start-up without starting, for the CI of a
// repository of Corefiles. Every block is parsed and set up with every file it names (zone files, hosts
// files, objects files, a named kubeconfig and its certificates), and no port is opened and no API
// asked. Where the API is when nothing names it (a pod's service account) is not checked: the machine
// running the check need not be in the cluster. Each mistake is one line with file:line; exit 0 or 1.

import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { parseBlocks } from "./corefile/parser.ts";
import { checkDirectives, checkKeys } from "./corefile/check.ts";
import type { ServerBlock } from "./corefile/types.ts";
import type { Registry } from "./plugin.ts";
import { Instance } from "./server/instance.ts";

export interface ValidateOptions {
  plugins: Registry;
  notSupported: ReadonlySet<string>;
  /** -dns.port, for keys that name none. */
  defaultPort: number;
}

/** The mistakes of a Corefile, one message each (empty: it would start). Warnings go to `log`. */
export async function validateCorefile(
  source: { text: string; file: string; root: string },
  o: ValidateOptions,
  log: Logger,
): Promise<string[]> {
  let blocks: ServerBlock[];
  try {
    blocks = parseBlocks(source.text, source.file);
  } catch (err) {
    return [(err as Error).message];
  }
  const errors: { line: number; message: string }[] = [];
  const failed = (err: unknown) =>
    errors.push({ line: (err as { line?: number }).line ?? Infinity, message: (err as Error).message });
  // Each block alone first, so one mistake does not hide the others'.
  for (const b of blocks) {
    try {
      checkKeys([b], o.defaultPort);
    } catch (err) {
      failed(err);
      continue;
    }
    // A directive that is not known is reported; the block's other directives are still set up.
    const known = b.directives.filter((d) => {
      try {
        checkDirectives([{ ...b, directives: [d] }], o.plugins, o.notSupported);
        return true;
      } catch (err) {
        failed(err);
        return false;
      }
    });
    try {
      await setUp([{ ...b, directives: known }], source.root, o, log);
    } catch (err) {
      failed(err);
    }
  }
  // In the file's order (an error in an imported file sorts by the line it has there).
  const sorted = () => errors.sort((a, b) => a.line - b.line).map((e) => e.message);
  if (errors.length > 0 || blocks.length < 2) return sorted();
  // Then together: a zone twice on one port, settings blocks share (health, ready, prometheus).
  try {
    checkKeys(blocks, o.defaultPort);
    await setUp(blocks, source.root, o, log);
  } catch (err) {
    failed(err);
  }
  return sorted();
}

function setUp(blocks: ServerBlock[], root: string, o: ValidateOptions, log: Logger): Promise<Instance> {
  return Instance.create({ ...o, blocks, root, log, checkOnly: true });
}

/** Runs the check and prints its result: the mistakes and warnings on stderr, one line each. */
export async function validateMain(
  source: { text: string; file: string; root: string },
  o: ValidateOptions,
): Promise<number> {
  const log = pino(
    { level: "warn", base: undefined },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        const rec = JSON.parse(chunk.toString()) as { msg?: string; plugin?: string; at?: string };
        const where = [rec.at, rec.plugin].filter(Boolean).join(" ");
        process.stderr.write(`clusterdns: warning: ${where ? `${where}: ` : ""}${rec.msg ?? ""}\n`);
        done();
      },
    }),
  );
  const errors = await validateCorefile(source, o, log);
  for (const e of errors) process.stderr.write(`clusterdns: ${e}\n`);
  if (errors.length > 0) return 1;
  process.stdout.write(`clusterdns: ${source.file}: valid\n`);
  return 0;
}
