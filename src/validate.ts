// `clusterdns -validate -conf FILE [-conf FILE]...`: the checks of a start-up without starting, for the
// CI of a repository of Corefiles. FILE is a Corefile, or the coredns ConfigMap as kubectl prints it
// (`-` for stdin), with more ConfigMaps beside it (coredns-custom) laid out as the pod mounts them
// (corefile/layout.ts). Every block is parsed and set up with every file it names (zone files, hosts
// files, objects files, a named kubeconfig and its certificates), and no port is opened and no API
// asked (server/dry-run.ts, the check `migrate coredns` makes too). Where the API is when nothing names
// it (a pod's service account) is not checked: the machine running the check need not be in the
// cluster. Each mistake is one line with file:line; exit 0 or 1.

import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { layOut, type Layout } from "./corefile/layout.ts";
import { readInput } from "./corefile/configmap.ts";
import { parseBlocks } from "./corefile/parser.ts";
import { ConfigErrors, type ConfigWarning } from "./corefile/errors.ts";
import type { ServerBlock } from "./corefile/types.ts";
import type { Registry } from "./setup/registry.ts";
import { dryRun } from "./server/dry-run.ts";

export interface ValidateOptions {
  plugins: Registry;
  notSupported: ReadonlySet<string>;
  /** -dns.port, for keys that name none. */
  defaultPort: number;
}

/** The mistakes of a Corefile, one message each (empty: it would start). Warnings go to `log`. */
export async function validateCorefile(source: Layout, o: ValidateOptions, log: Logger): Promise<string[]> {
  const warn = (w: ConfigWarning) => log.warn({ at: `${w.file}:${w.line}` }, w.message);
  let blocks: ServerBlock[];
  try {
    blocks = parseBlocks(source.text, source.file, { ...source.parse, warn });
  } catch (err) {
    return err instanceof ConfigErrors ? err.all.map((e) => e.message) : [(err as Error).message];
  }
  source.unread(blocks).forEach(warn);
  return (await dryRun(blocks, { ...o, root: source.root, log })).map((m) => m.message);
}

/** Runs the check on the files -conf names (or on a Corefile already read: the built-in demo) and
 * prints its result: the mistakes and warnings on stderr, one line each. */
export async function validateMain(files: string[] | Layout, o: ValidateOptions): Promise<number> {
  let source: Layout;
  try {
    source = Array.isArray(files) ? layOut(files.map(readInput)) : files;
  } catch (err) {
    process.stderr.write(`clusterdns: ${(err as Error).message}\n`);
    return 1;
  }
  const name = Array.isArray(files) ? files.map((f) => (f === "-" ? "stdin" : f)).join(", ") : files.file;
  const log = pino(
    { level: "warn", base: undefined },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        const rec = JSON.parse(chunk.toString()) as { msg?: string; plugin?: string; at?: string };
        const where = [rec.at, rec.plugin].filter(Boolean).join(" ");
        const line = `${where ? `${where}: ` : ""}${rec.msg ?? ""}`;
        process.stderr.write(`clusterdns: warning: ${source.shown(line)}\n`);
        done();
      },
    }),
  );
  try {
    const errors = await validateCorefile(source, o, log);
    for (const e of errors) process.stderr.write(`clusterdns: ${source.shown(e)}\n`);
    if (errors.length > 0) return 1;
    process.stdout.write(`clusterdns: ${name}: valid\n`);
    return 0;
  } finally {
    source.close();
  }
}
